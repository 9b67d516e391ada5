"""benchwright.prepared: export conversions made from the source while the pipeline runs, taken by content."""
from __future__ import annotations

import os
import time

import pytest

from benchwright import prepared
from benchwright.errors import RecordError
from benchwright.prepared import PREFIX, Conversion, Prepared, PreparedExports


def _upper(data: bytes) -> bytes | None:
    return None if data.startswith(b"bad") else data.upper()


UPPER = Conversion("upper.txt", applies=lambda path: path.endswith(".txt"), make=_upper, refused="not convertible")


class _Demo:
    """A dataset whose export converts its .txt files (upper case); ``slow``: 0.1 s a file."""
    name = "demo"

    def __init__(self, slow: bool = False):
        self.slow = slow

    def export_conversions(self):
        if not self.slow:
            return (UPPER,)
        return (Conversion("upper.txt", applies=UPPER.applies, make=lambda d: time.sleep(0.1) or d.upper(),
                           refused="not convertible"),)

    def source_files(self, source: str) -> list[str]:
        return sorted(os.path.join(source, n) for n in os.listdir(source))


def test_the_files_a_conversion_applies_to_are_prepared_and_taken_once_by_their_bytes(tmp_path):
    source, folder = tmp_path / "source", tmp_path / "prepared"
    source.mkdir()
    folder.mkdir()
    for name, data in {"a.txt": b"frame a", "b.txt": b"bad bytes", "c.jpg": b"not converted"}.items():
        (source / name).write_bytes(data)
    prepared.prepare(_Demo(), str(source), str(folder))
    assert os.listdir(folder) == [prepared.content_key(UPPER, b"frame a")]  # b does not convert, c is not wanted

    made = Prepared(str(folder))
    (tmp_path / "again.txt").write_bytes(b"frame a")  # another file with the same bytes
    made.write(UPPER, str(source / "a.txt"), str(tmp_path / "out-a"))
    assert (tmp_path / "out-a").read_bytes() == b"FRAME A" and (tmp_path / "out-a").stat().st_nlink == 1
    assert os.listdir(folder) == []  # moved, not linked: no two published names for one inode
    made.write(UPPER, str(tmp_path / "again.txt"), str(tmp_path / "out-again"))  # made now: the same bytes
    assert (tmp_path / "out-again").read_bytes() == b"FRAME A"
    Prepared().write(UPPER, str(source / "a.txt"), str(tmp_path / "out-nothing-prepared"))
    assert (tmp_path / "out-nothing-prepared").read_bytes() == b"FRAME A"
    with pytest.raises(RecordError, match="b.txt.*not convertible"):
        made.write(UPPER, str(source / "b.txt"), str(tmp_path / "out-b"))


def test_a_prepared_file_made_from_other_bytes_is_never_taken(tmp_path):
    """A source file changed after the preparation read it: its new bytes have another key."""
    folder = tmp_path / "prepared"
    folder.mkdir()
    prepared.store(str(folder), prepared.content_key(UPPER, b"old bytes"), b"OLD BYTES")
    (tmp_path / "frame.txt").write_bytes(b"new bytes")
    Prepared(str(folder)).write(UPPER, str(tmp_path / "frame.txt"), str(tmp_path / "out"))
    assert (tmp_path / "out").read_bytes() == b"NEW BYTES" and len(os.listdir(folder)) == 1


def test_a_file_being_written_is_not_under_its_key(tmp_path, monkeypatch):
    """A child killed while writing leaves a .part file, never a partial file under the key."""
    written = []
    real_rename = os.rename
    monkeypatch.setattr(os, "rename", lambda a, b: written.append((a, b)))  # killed before the rename
    prepared.store(str(tmp_path), prepared.content_key(UPPER, b"frame"), b"FRAME")
    monkeypatch.setattr(os, "rename", real_rename)
    assert len(written) == 1 and ".part-" in written[0][0]
    (tmp_path / "frame.txt").write_bytes(b"frame")
    Prepared(str(tmp_path)).write(UPPER, str(tmp_path / "frame.txt"), str(tmp_path / "out"))
    assert len(os.listdir(tmp_path)) == 3  # the .part file is still there: not taken for the key


def test_the_child_runs_beside_is_stopped_and_its_folder_removed_with_a_killed_builds(tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    for n in range(600):  # a minute of work at 0.1 s a file: stopped long before
        (source / f"{n:04d}.txt").write_bytes(f"frame {n}".encode())
    stale = tmp_path / f"{PREFIX}demo-killedbuild"
    stale.mkdir()
    (stale / "x.png").write_bytes(b"left by a killed build")
    other = tmp_path / f"{PREFIX}demo2-another"  # another dataset's: not ours to remove
    other.mkdir()
    run = PreparedExports(_Demo(slow=True), str(source), str(tmp_path))
    folder = run.prepared.folder
    assert not stale.exists() and other.exists()
    assert os.path.dirname(folder) == str(tmp_path) and os.path.basename(folder).startswith(f"{PREFIX}demo-")
    deadline = time.monotonic() + 60
    while len(os.listdir(folder)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    run.stop()
    count = len([n for n in os.listdir(folder) if ".part-" not in n])
    time.sleep(0.3)
    assert len([n for n in os.listdir(folder) if ".part-" not in n]) == count >= 2  # stopped: nothing more
    assert count < 600
    run.prepared.write(UPPER, str(source / "0000.txt"), str(tmp_path / "taken"))
    assert (tmp_path / "taken").read_bytes() == b"FRAME 0" and len(os.listdir(folder)) < count + 1
    run.close()
    assert not os.path.exists(folder)
