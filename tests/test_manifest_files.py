"""The manifest's file list (``manifest.describe_files``): which files, in which order, with what."""
from __future__ import annotations

import hashlib
import os

import pyarrow as pa
import pyarrow.parquet as pq

from benchwright.layout import BUILD_DIR, MANIFEST, SCREENSHOTS_DIR
from benchwright.manifest import describe_files


def test_describe_files_lists_files_in_path_order_with_links_and_without_the_build_views(tmp_path):
    root = tmp_path / "build"
    files = {"a-c": b"1", "a/b": b"22", "a/z/y": b"333", "b.txt": b"", ".hidden": b"h",
             f"{BUILD_DIR}/card.html": b"<p>", f"{BUILD_DIR}/validation/report.json": b"{}",
             f"{SCREENSHOTS_DIR}/card.png": b"png", MANIFEST: b"{}"}
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    (root / "config").mkdir()
    pq.write_table(pa.table({"x": [1, 2, 3]}), root / "config" / "train-00000-of-00001.parquet")
    os.link(root / "a" / "b", root / "a" / "hard")  # a hard link is a file of its own name
    os.symlink(root / "a-c", root / "link-to-file")  # a link to a file is listed with the file's bytes
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_bytes(b"x")
    os.symlink(outside, root / "linked-folder")  # a linked folder is not entered
    os.symlink(tmp_path / "missing", root / "dangling")  # a dangling link is no file

    got = describe_files(root)
    want = sorted(p for p in root.rglob("*") if p.is_file())  # pathlib's choice and order
    want = [p for p in want if not ((rel := p.relative_to(root).as_posix()) == MANIFEST
                                    or rel.startswith((f"{BUILD_DIR}/validation/", f"{SCREENSHOTS_DIR}/")))]
    assert [e["path"] for e in got] == [p.relative_to(root).as_posix() for p in want]
    assert [e["path"] for e in got][:5] == [".hidden", "_build/card.html", "a/b", "a/hard", "a/z/y"]
    for entry, path in zip(got, want):
        assert entry["bytes"] == path.stat().st_size
        assert entry["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert next(e for e in got if e["path"].endswith(".parquet"))["rows"] == 3
    assert "rows" not in next(e for e in got if e["path"] == "a-c")
