"""Listing a source: every location is an fsspec URL (a plain path is a local one)."""
from __future__ import annotations

import posixpath

import fsspec


def list_files(source: str) -> list[str]:
    """Regular files under ``source``, sorted; hidden names skipped. Symlinked folders are not
    followed, so a symlink loop cannot make the walk endless."""
    fs, root = fsspec.core.url_to_fs(source)
    entries = fs.find(root, detail=True)
    return sorted(p for p, info in entries.items()
                  if info.get("type") == "file" and not any(part.startswith(".") for part in
                                                            posixpath.relpath(p, root).split("/")))
