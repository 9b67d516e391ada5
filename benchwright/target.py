"""Whether a build may publish at its output: ``--out`` a folder (or nothing yet), and OUT/<dataset> nothing, an
empty folder or a build of that dataset holding only its own files (``--force`` replaces anything else).

Checked before anything is built, and without Beam or datasets: a refused output costs the user no import.
"""
from __future__ import annotations

import json
import os
import posixpath
from pathlib import Path

import fsspec

from benchwright import published
from benchwright.errors import BuildError
from benchwright.files import local_files_under
from benchwright.layout import BUILD_DIR, MANIFEST, described
from benchwright.options import BuildOptions


def check_target(name: str, options: BuildOptions) -> str | None:
    """Refuse an output the build cannot publish at or must not replace: ``--out`` (or a folder above it)
    a file, or OUT/``name`` holding anything but a build of dataset ``name`` and its own files (a user's
    folder, another dataset's build, a build with files its manifest does not list), unless
    ``options.force``. Returns why OUT/<name> is not a build of this dataset (what ``--force`` replaces),
    None when it is one or nothing is there."""
    if published.is_local(options.out):
        out = Path(fsspec.core.url_to_fs(options.out)[1]).absolute()
        for folder in (out, *out.parents):
            if folder.exists():
                if not folder.is_dir():
                    raise BuildError(f"--out {options.out}: {folder} is a file, not a folder; nothing was built")
                break
        target = str(out / name)
        why = _not_a_local_build(Path(target), name)
    else:
        target = published.join(options.out, name)
        why = _not_an_object_build(target, name)
    if why and not options.force:
        raise BuildError(f"{target} {why}, so this build does not replace it and nothing was built: move it "
                         "away, choose another --out, or pass --force to replace it")
    return why


def _not_a_local_build(folder: Path, name: str) -> str | None:
    """Why the local ``folder`` is not a build of ``name`` a new one may replace; None when nothing is
    there, an empty folder (nothing to lose), or a build of it holding only the files its manifest lists
    and its own views (validation report, screenshots)."""
    if folder.is_symlink():
        return f"is a symbolic link (to {os.readlink(folder)}), not a build of {name}"
    if not folder.exists():
        return None
    if not folder.is_dir():
        return f"is a file, not a build of {name}"
    files = [rel for rel, _ in local_files_under(str(folder))]
    if not files:
        return None
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), list):
        return f"is not a build of {name} (no readable {MANIFEST}; it holds {_some(files)})"
    if manifest.get("dataset") != name:
        return f"is a build of {manifest.get('dataset')!r}, not of {name}"
    listed = {f.get("path") for f in manifest["files"] if isinstance(f, dict)}
    unlisted = [rel for rel in files if described(rel) and rel not in listed]
    if unlisted:
        return f"holds files its manifest does not list ({_some(unlisted)})"
    return None


def _not_an_object_build(url: str, name: str) -> str | None:
    """``_not_a_local_build`` on object storage: the dataset URL may hold only what builds write there
    (the root manifest of a build of ``name``, builds/, a build's _staging/ and _failed/ folders)."""
    fs, path = fsspec.core.url_to_fs(url)
    fs.invalidate_cache(path)
    try:
        entries = fs.ls(path, detail=False)
    except FileNotFoundError:
        return None
    foreign = sorted(rel for rel in (posixpath.relpath(e, path) for e in entries)
                     if rel not in (BUILD_DIR, published.BUILDS, published.STAGING, published.FAILED))
    if fs.isdir(posixpath.join(path, BUILD_DIR)):
        foreign += sorted(rel for rel in (posixpath.relpath(e, path) for e in fs.ls(posixpath.join(path, BUILD_DIR),
                                                                                     detail=False))
                          if rel != MANIFEST)
    manifest = published.committed_manifest(url)
    if manifest is not None and manifest.get("dataset") != name:
        return f"is a build of {manifest.get('dataset')!r}, not of {name}"
    if foreign:
        return f"holds objects that are not a build's of {name} ({_some(foreign)})"
    return None


def _some(paths: list[str], shown: int = 3) -> str:
    return ", ".join(paths[:shown]) + (f" and {len(paths) - shown} more" if len(paths) > shown else "")
