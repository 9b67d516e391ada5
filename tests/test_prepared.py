"""benchwright.prepared: export work made from the source while the pipeline runs, taken by content."""
from __future__ import annotations

import os
import time

from benchwright import prepared
from benchwright.prepared import PREFIX, PreparedExports


class _Writes:
    """A dataset whose preparation keeps one file per input, then one more each 0.1 s, without end."""
    name = "demo"

    def prepare_exports(self, source: str, folder: str) -> None:
        prepared.store(folder, b"input", ".txt", b"made from input")
        n = 0
        while True:
            prepared.store(folder, f"more {n}".encode(), ".txt", b"x")
            n += 1
            time.sleep(0.1)


def test_a_prepared_file_is_taken_once_by_its_inputs_bytes(tmp_path):
    folder = tmp_path / "prepared"
    folder.mkdir()
    prepared.store(str(folder), b"frame bytes", ".png", b"the png")
    assert not prepared.take(str(folder), b"other bytes", ".png", str(tmp_path / "a.png"))
    assert not prepared.take(None, b"frame bytes", ".png", str(tmp_path / "a.png"))
    assert prepared.take(str(folder), b"frame bytes", ".png", str(tmp_path / "a.png"))
    assert (tmp_path / "a.png").read_bytes() == b"the png" and (tmp_path / "a.png").stat().st_nlink == 1
    # moved, not linked: a second frame with the same bytes makes its own file (no two names for one inode)
    assert not prepared.take(str(folder), b"frame bytes", ".png", str(tmp_path / "b.png"))
    assert os.listdir(folder) == []


def test_a_file_being_written_is_not_under_its_key(tmp_path, monkeypatch):
    """A child killed while writing leaves a .part file, never a partial file under the key."""
    written = []
    real_rename = os.rename
    monkeypatch.setattr(os, "rename", lambda a, b: written.append((a, b)))  # killed before the rename
    prepared.store(str(tmp_path), b"frame", ".png", b"png")
    monkeypatch.setattr(os, "rename", real_rename)
    assert len(written) == 1 and ".part-" in written[0][0]
    assert not prepared.take(str(tmp_path), b"frame", ".png", str(tmp_path / "out.png"))


def test_the_child_runs_beside_is_stopped_and_its_folder_removed_with_a_killed_builds(tmp_path):
    stale = tmp_path / f"{PREFIX}demo-killedbuild"
    stale.mkdir()
    (stale / "x.png").write_bytes(b"left by a killed build")
    other = tmp_path / f"{PREFIX}demo2-another"  # another dataset's: not ours to remove
    other.mkdir()
    run = PreparedExports(_Writes(), "source", str(tmp_path))
    assert not stale.exists() and other.exists()
    assert os.path.dirname(run.folder) == str(tmp_path) and os.path.basename(run.folder).startswith(f"{PREFIX}demo-")
    deadline = time.monotonic() + 60
    while len(os.listdir(run.folder)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    run.stop()
    count = len(os.listdir(run.folder))
    time.sleep(0.3)
    assert len(os.listdir(run.folder)) == count >= 2  # stopped: nothing more written
    target = tmp_path / "taken.txt"
    assert prepared.take(run.folder, b"input", ".txt", str(target)) and target.read_bytes() == b"made from input"
    run.close()
    assert not os.path.exists(run.folder)
