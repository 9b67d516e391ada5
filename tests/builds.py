"""The one way a test builds a dataset in its own process: ``build_dataset``. Builds several test files
share are made once per test run instead (``tests/quality_builds.py``); prefer asserting on one of those."""
from __future__ import annotations

from pathlib import Path


def build_dataset(dataset, source: Path | str | None, out: Path | str, **options) -> Path:
    """Build ``dataset`` (a registered name, or a ``Dataset`` a test set up) from ``source`` (None: its
    embedded default) into ``out`` with ``BuildOptions(**options)``, showing no progress; returns the
    published folder ``out/<dataset>``."""
    from benchwright import registry
    from benchwright.build import build
    from benchwright.options import BuildOptions

    if isinstance(dataset, str):
        dataset = registry.get(dataset)
    built = build(dataset, None if source is None else str(source), BuildOptions(out=str(out), progress=False, **options))
    return Path(built)


def damage_published(fs, build: str, manifests: list[str], dataset) -> tuple[list[str], object]:
    """Damage the published build at ``build`` (a path of filesystem ``fs``) four ways at once: a missing shard,
    a file the manifest does not list, a shard whose sha256 the manifest does not give, a row count the files
    do not hold (in every copy of the manifest ``manifests``: on S3 the root one and the build's own). The
    shards are those of the dataset's first config with two or more. Returns (what ``validate`` must name,
    undo)."""
    import json
    import posixpath

    config = next(c for c in dataset.configs if len(fs.glob(f"{build}/{c}/*.parquet")) >= 2)
    counted = dataset.units[0].config
    missing, changed = sorted(fs.glob(f"{build}/{config}/*.parquet"))[:2]
    extra = f"{build}/{config}/notes.txt"
    saved = {p: fs.cat_file(p) for p in (missing, *manifests)}
    fs.rm(missing)
    fs.pipe_file(extra, b"left here by hand\n")
    for path in manifests:
        manifest = json.loads(saved[path])
        listed = next(f for f in manifest["files"] if f["path"] == f"{config}/{posixpath.basename(changed)}")
        listed["sha256"] = "0" * 64
        manifest["counters"][f"written.{counted}"] += 1
        fs.pipe_file(path, json.dumps(manifest).encode())

    def undo():
        fs.rm(extra)
        for path, data in saved.items():
            fs.pipe_file(path, data)

    return [f"{config}/{posixpath.basename(missing)} is listed but missing", f"{config}/notes.txt is not in the manifest",
            f"{config}/{posixpath.basename(changed)}: sha256", f"config {counted!r}: the writer counted"], undo
