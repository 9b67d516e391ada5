"""Helpers the WildBox tests share: a tiny raw source, a build, the tree of published file hashes."""
from __future__ import annotations

import hashlib
from pathlib import Path

from benchwright.build import build
from benchwright.options import BuildOptions
from benchwright.pipelines.wildbox import DATASET
from benchwright.wildbox.synth import write_wildbox_source


def tiny_source(path: Path, seed: int = 0) -> Path:
    write_wildbox_source(path, scale="tiny", seed=seed)
    return path


def build_wildbox(source: Path, out: Path, mode: str = "in_memory", workers: int = 1, **kw) -> Path:
    options = BuildOptions(out=str(out), running_mode=mode, num_workers=workers, progress=False, **kw)
    return Path(build(DATASET, str(source), options))


def published_hashes(root: Path) -> dict[str, str]:
    """sha256 of every published data file (the manifest and validation site describe the run, not the data)."""
    out = {}
    for f in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = f.relative_to(root).as_posix()
        if rel == "_build/manifest.json" or rel.startswith("_build/validation/"):
            continue
        out[rel] = hashlib.sha256(f.read_bytes()).hexdigest()
    return out
