"""Issue 25.8: a source file changed while the build runs is refused by name, nothing published
(``benchwright.source_watch``): the file's state (size, mtime, ctime, inode; ETag on S3) is listed before
the pipeline, the files are hashed in a forked child beside it, and listed again before publishing; only a
file whose state moved is read again, and a touch is no change. Through the command line (while a template
build runs: a file changed and one added in a local folder, an object rewritten and one added on S3),
and on the watch itself, on a local folder and on S3 (moto)."""
from __future__ import annotations

import os
import time
from pathlib import Path

import fsspec
import pytest

from benchwright import registry, source_watch
from benchwright.errors import BuildError
from benchwright.source_watch import SourceWatch
from tests.test_object_storage import BUCKET, s3_endpoint  # noqa: F401 (fixture)

DATASET = registry.get("wildbox")  # the default source_files: every file under the source


def _source(root: Path) -> Path:
    root.mkdir(parents=True)
    for name in "abcd":
        (root / f"{name}.txt").write_bytes(name.encode() * 1000)
    (root / "sub").mkdir()
    (root / "sub" / "e.txt").write_bytes(b"e" * 10)
    return root


def _refusal(watch: SourceWatch) -> str:
    with pytest.raises(BuildError) as refused:
        watch.check()
    return str(refused.value)


def test_an_untouched_source_is_not_read_again_and_a_touch_is_no_change(tmp_path, monkeypatch):
    root = _source(tmp_path / "src")
    monkeypatch.setattr(source_watch, "RACY_S", 0.0)  # files written a moment ago would be read again
    watch = SourceWatch(DATASET, str(root))
    assert watch.result()["files"] == 5 and watch.result()["bytes"] == 4010
    watch.check()
    assert watch.rehashed == 0  # the second pass stat-ed the files and read none

    watch = SourceWatch(DATASET, str(root))
    watch.result()
    os.utime(root / "a.txt", ns=(1, 1))  # touched
    (root / "b.txt").write_bytes(b"b" * 1000)  # rewritten with the same bytes
    watch.check()
    assert watch.rehashed == 2


def test_a_file_written_in_the_listings_clock_tick_is_read_again(tmp_path):
    root = _source(tmp_path / "src")
    watch = SourceWatch(DATASET, str(root))  # every file was written within RACY_S of the listing
    watch.check()
    assert watch.rehashed == 5


def test_changed_added_and_removed_files_are_named(tmp_path):
    root = _source(tmp_path / "src")
    watch = SourceWatch(DATASET, str(root))
    watch.result()  # hashed before the change
    (root / "c.txt").write_bytes(b"C" * 1000)
    (root / "d.txt").unlink()
    (root / "sub" / "new.txt").write_bytes(b"new")
    said = _refusal(watch)
    assert "c.txt (changed), sub/new.txt (added), d.txt (removed)" in said, said
    assert "nothing was published" in said and str(root) in said
    assert "a.txt" not in said and "b.txt" not in said


def test_a_change_while_the_child_hashes_is_seen_whichever_content_it_hashed(tmp_path):
    root = _source(tmp_path / "src")
    for _ in range(5):  # the child may hash c.txt before or after the change: either way it is named
        watch = SourceWatch(DATASET, str(root))
        content = (root / "c.txt").read_bytes()
        (root / "c.txt").write_bytes(bytes([content[0] ^ 1]) * 1000)
        assert "c.txt (changed)" in _refusal(watch)


def test_a_rewrite_that_restores_size_and_mtime_is_seen_by_its_ctime(tmp_path):
    root = _source(tmp_path / "src")
    st = os.stat(root / "a.txt")
    watch = SourceWatch(DATASET, str(root))
    watch.result()
    time.sleep(0.01)  # a ctime tick apart
    (root / "a.txt").write_bytes(b"z" * 1000)  # `cp -p`: same size, the old mtime put back
    os.utime(root / "a.txt", ns=(st.st_atime_ns, st.st_mtime_ns))
    assert "a.txt (changed)" in _refusal(watch)


def test_a_replaced_file_is_seen_by_its_inode(tmp_path):
    root = _source(tmp_path / "src")
    watch = SourceWatch(DATASET, str(root))
    watch.result()
    (tmp_path / "other").write_bytes(b"d" * 999 + b"x")
    os.replace(tmp_path / "other", root / "d.txt")  # an editor's save: a new file renamed over the old
    assert "d.txt (changed)" in _refusal(watch)


def test_on_s3_a_rewrite_with_the_same_bytes_passes_and_a_change_is_named(s3_endpoint):  # noqa: F811
    fs = fsspec.filesystem("s3")
    root = f"{BUCKET}/watched"
    for name in "abc":
        fs.pipe_file(f"{root}/{name}.txt", name.encode() * 100)
    watch = SourceWatch(DATASET, f"s3://{root}")
    assert watch.result()["files"] == 3
    fs.pipe_file(f"{root}/a.txt", b"a" * 100)  # the same bytes: the same ETag
    watch.check()
    fs.pipe_file(f"{root}/b.txt", b"B" * 100)
    fs.pipe_file(f"{root}/new.txt", b"new")
    said = _refusal(watch)
    assert "b.txt (changed), new.txt (added)" in said and "a.txt" not in said, said


def _build_while_the_source_changes(source: str, out: Path, change, capfd, monkeypatch) -> list[str]:
    """``benchwright build template --source SOURCE --out OUT`` through the CLI's ``main`` in this process (its
    output read at the file descriptors, as a terminal gets it), ``change()`` called once it says it is
    finalizing (the pipeline is done: the source was listed before it ran and no read of the pipeline meets a
    file half changed; the second listing is still to come); returns its error lines. The watch is the core's,
    the same for every dataset: the template's is the cheapest build (its source files: the .jsonl files)."""
    from benchwright import build as building
    from tests.test_cli_usage import benchwright_here

    said_finalizing = []

    def progress(options, message):
        building_progress(options, message)
        if message == "[template] finalizing" and not said_finalizing:
            said_finalizing.append(message)
            change()

    building_progress = building._progress
    monkeypatch.setattr(building, "_progress", progress)
    done = benchwright_here(capfd, "build", "template", "--source", source, "--out", out)
    said = done.stdout + done.stderr
    assert said_finalizing and done.returncode == 2, said
    assert "Traceback" not in said
    assert not (out / "template").exists() and not (out / ".lock-template").exists()
    return [line for line in said.splitlines() if line.startswith("benchwright: error:")]


def _refused(source: str, named: str) -> str:
    return (f"benchwright: error: template: the source {source} changed while it was being built: {named}; what "
            "the build read may not be what its fingerprint says, so nothing was published. Build again once "
            "nothing writes to the source")


def _template_source(root: Path) -> Path:
    registry.part("template", "synth")(str(root), scale="tiny", seed=0)
    return root


def _another_record(jsonl: str) -> str:
    """A file of one record like the first of ``jsonl`` under a new id (a repeated id would be quarantined)."""
    import json

    return json.dumps({**json.loads(jsonl.splitlines()[0]), "id": "r099999"}) + "\n"


def test_a_build_whose_source_changes_while_it_runs_publishes_nothing_and_names_the_files(tmp_path, capfd,
                                                                                          monkeypatch):
    source = _template_source(tmp_path / "raw")
    changed = sorted(source.glob("*.jsonl"))[0]
    added = source / "records-09999.jsonl"

    def change():
        text = changed.read_text()
        changed.write_text(text.replace('"text": "', '"text":  "', 1))  # one byte more
        added.write_text(_another_record(text))

    assert _build_while_the_source_changes(str(source), tmp_path / "out", change, capfd, monkeypatch) == [
        _refused(str(source), f"{changed.name} (changed), {added.name} (added)")]


def test_a_build_whose_s3_source_changes_while_it_runs_publishes_nothing_and_names_the_objects(
        s3_endpoint, tmp_path, capfd, monkeypatch):  # noqa: F811
    local = _template_source(tmp_path / "raw")
    fs = fsspec.filesystem("s3")
    fs.put(str(local), f"{BUCKET}/changing", recursive=True)
    changed = sorted(local.glob("*.jsonl"))[1].name
    text = (local / changed).read_text()
    at = text.index('"text": "') + len('"text": "')  # the first letter of the first record's text
    same_size = (text[:at] + text[at].swapcase() + text[at + 1:]).encode()

    def change():  # one object rewritten with bytes of the same size (a new ETag), one added
        fs.pipe_file(f"{BUCKET}/changing/{changed}", same_size)
        fs.pipe_file(f"{BUCKET}/changing/records-09999.jsonl", _another_record(text).encode())

    source = f"s3://{BUCKET}/changing"
    assert _build_while_the_source_changes(source, tmp_path / "out", change, capfd, monkeypatch) == [
        _refused(source, f"{changed} (changed), records-09999.jsonl (added)")]
