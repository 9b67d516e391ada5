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


# What ``load_in_a_clean_interpreter`` runs: every config of every build, loaded by ``datasets`` alone
LOAD_WITH_DATASETS_ALONE = """
import json, sys
from datasets import ClassLabel, LargeList, List, get_dataset_config_names, load_dataset

def class_names(features, path=""):
    # {column path: names} of every ClassLabel, through structs and lists ("objects[].species")
    out = {}
    for name, feature in features.items():
        where = f"{path}{name}"
        while isinstance(feature, (List, LargeList)):
            feature, where = feature.feature, where + "[]"
        if isinstance(feature, ClassLabel):
            out[where] = feature.names
        elif isinstance(feature, dict):
            out.update(class_names(feature, where + "."))
    return out

def described(value):
    # a first row's value as the tests ask about it: an image's size, the first bytes of a file
    if hasattr(value, "size") and hasattr(value, "mode"):
        return {"image_size": list(value.size)}
    if isinstance(value, bytes):
        return {"bytes": len(value), "head": value[:4].hex()}
    return type(value).__name__

builds = {}
for name, root in json.loads(sys.argv[1]).items():
    builds[name] = {}
    for config in get_dataset_config_names(root):
        loaded = load_dataset(root, config)
        first = next(iter(loaded.values()))
        builds[name][config] = {"splits": {split: d.num_rows for split, d in loaded.items()},
                                "columns": first.column_names, "class_names": class_names(first.features),
                                "first_row": {k: described(v) for k, v in first[0].items()} if first.num_rows else {}}
print(json.dumps({"benchwright_imported": sorted(m for m in sys.modules if m.split(".")[0] == "benchwright"),
                  "builds": builds}))
"""


def load_in_a_clean_interpreter(roots: dict[str, Path | str], work: Path) -> dict:
    """Every config of each build in ``roots`` ({name: published folder}) loaded by ``datasets`` alone, in a fresh
    interpreter isolated from this one: ``python -I`` (no PYTHON* variables, no user site, neither the working
    folder nor the script's on ``sys.path``), an environment of PATH and Hugging Face's offline switches only, its
    HF_HOME (the datasets cache) under ``work``. Returns {name: {config: {"splits": {split: rows}, "columns",
    "class_names": {column path: names}, "first_row": {column: what it holds}}}}; asserts benchwright was never
    imported there."""
    import json
    import subprocess
    import sys

    work.mkdir(parents=True, exist_ok=True)
    env = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "PATH": "/usr/bin:/bin", "HF_HOME": str(work / "hf-home")}
    done = subprocess.run([sys.executable, "-I", "-c", LOAD_WITH_DATASETS_ALONE,
                           json.dumps({name: str(root) for name, root in roots.items()})],
                          capture_output=True, text=True, env=env, cwd=work, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert loaded["benchwright_imported"] == [], loaded["benchwright_imported"]
    return loaded["builds"]
