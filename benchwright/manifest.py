"""What a build leaves beside its data: the manifest, reconciliation, input fingerprints.

Output layout: ``<root>/<config>/<split>-SSSSS-of-NNNNN.parquet`` plus ``_build/`` (manifest.json,
quarantine/, filtered/, validation/, figures/). ``read == written + quarantined + filtered`` is
checked here for every unit, from the files (and the pipeline's counters when given).
"""
from __future__ import annotations

import hashlib
import json
import os
from importlib.metadata import PackageNotFoundError, version
import posixpath
from pathlib import Path
from typing import TYPE_CHECKING, Any

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq

from benchwright.errors import BuildError
from benchwright.files import local_files_under
from benchwright.hashing import sha256_files
from benchwright.layout import BUILD_DIR, described
from benchwright.stage import FILTERED, QUARANTINE
from benchwright.strict_json import json_lines
from benchwright.writer import parse_shard_name, shard_file_name, write_parquet

if TYPE_CHECKING:
    from benchwright.dataset import Dataset

# Recorded in the manifest so a reader knows exactly what produced the bytes.
VERSIONED_PACKAGES = ("apache-beam", "pyarrow", "datasets", "numpy", "opencv-python-headless", "open3d-cpu",
                      "great-expectations", "python-docx", "lxml", "fsspec")


def fill_empty_shards(dataset: Dataset, staging: Path) -> list[dict]:
    """A shard no row hashed to still exists (empty), so ``-of-N`` file sets are complete."""
    shards = []
    for config, features in dataset.configs.items():
        cdir = staging / config
        found: dict[str, int] = {}
        for f in sorted(cdir.glob("*.parquet")) if cdir.exists() else []:
            _, split, _, num_shards = parse_shard_name(f.as_posix())
            found[split] = num_shards
        for split, n in sorted(found.items()):
            for i in range(n):
                path = staging / shard_file_name(config, split, i, n)
                if not path.exists():
                    write_parquet(features.arrow_schema.empty_table(), str(path))
                shards.append({"config": config, "split": split, "path": shard_file_name(config, split, i, n),
                               "rows": pq.ParquetFile(path).metadata.num_rows})
    return shards


def rows_by_config_split(staging: Path) -> dict[str, dict[str, int]]:
    rows: dict[str, dict[str, int]] = {}
    for f in sorted(staging.glob("*/*.parquet")):
        split = parse_shard_name(f.as_posix())[1]
        cfg = rows.setdefault(f.parent.name, {})
        cfg[split] = cfg.get(split, 0) + pq.ParquetFile(f).metadata.num_rows
    return rows


def read_rejects(root: Path) -> dict[str, list[dict]]:
    out = {}
    for kind in (QUARANTINE, FILTERED):
        rows = []
        for f in sorted((root / BUILD_DIR / kind).glob("*.jsonl")):
            rows.extend(json.loads(line) for _, line in json_lines(f.read_text(encoding="utf-8")))
        out[kind] = rows
    return out


def reconcile(dataset: Dataset, root: Path, counters: dict[str, int] | None, max_bad_fraction: float) -> dict:
    """read == written + quarantined + filtered for every unit, from the files (and counters if given)."""
    written = rows_by_config_split(root)
    rejects = read_rejects(root)
    units = {}
    problems = []
    for unit in dataset.units:
        q = sum(r["count"] for r in rejects[QUARANTINE] if r["unit"] == unit.name)
        f = sum(r["count"] for r in rejects[FILTERED] if r["unit"] == unit.name)
        rows = written.get(unit.config, {})
        # a subset split's rows repeat its parent's: a record is written once (unless the unit is that split's)
        w = rows.get(unit.split, 0) if unit.split else sum(n for s, n in rows.items() if s not in dataset.subset_splits)
        entry = {"written": w, "quarantined": q, "filtered": f}
        if counters is not None:
            read = counters.get(f"read.{unit.name}", 0)
            entry["read"] = read
            if read != w + q + f:
                problems.append(f"unit {unit.name!r}: read {read} != written {w} + quarantined {q} + filtered {f}")
            if counters.get(f"written.{unit.config}", sum(rows.values())) != sum(rows.values()):
                problems.append(f"config {unit.config!r}: the writer counted {counters[f'written.{unit.config}']} "
                                f"rows but the files hold {sum(rows.values())}")
        entry["bad_fraction"] = round(q / max(1, w + q + f), 6)
        units[unit.name] = entry
    # The primary units are what a source is made of; a source may hold only some of them (Workspace-Bench:
    # a plain folder has files but no tasks), but one that yields none of them is a wrong path or layout.
    primary = [u for u in dataset.units if u.primary]
    if primary and all(units[u.name]["written"] + units[u.name]["quarantined"] + units[u.name]["filtered"] == 0
                       for u in primary):
        problems.append(f"{' and '.join(repr(u.name) for u in primary)}: the source yielded nothing; "
                        "check the source path and layout")
    for u in primary:
        entry = units[u.name]
        if entry["bad_fraction"] > max_bad_fraction:
            examples = "; ".join(f"{r['locator']}: {r['reason']}" for r in rejects[QUARANTINE][:3])
            problems.append(f"unit {u.name!r}: {entry['quarantined']} quarantined = {entry['bad_fraction']:.2%} "
                            f"> --max-bad-fraction {max_bad_fraction:.2%} (e.g. {examples})")
    if problems:
        raise BuildError(f"{dataset.name}: counts do not reconcile, nothing published:\n  " + "\n  ".join(problems)
                         + f"\n  (quarantine: {root / BUILD_DIR / QUARANTINE})")
    return {"units": units, "rows": written,
            "quarantined_by_stage": _count_by(rejects[QUARANTINE], "stage"),
            "filtered_by_reason": _count_by(rejects[FILTERED], "reason")}


def _count_by(rows: list[dict], key: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in rows:
        out[r[key]] = out.get(r[key], 0) + r["count"]
    return dict(sorted(out.items()))


def describe_files(root: Path) -> list[dict]:
    """Every published file except the manifest, the validation output and the screenshots (views of
    the build made after it, ``benchwright screenshot``), with sha256, rows, bytes; in path order."""
    found = [(rel, size) for rel, size in local_files_under(str(root)) if described(rel)]
    found.sort(key=lambda item: item[0].split("/"))  # pathlib's order: part by part
    files = []
    for (rel, size), digest in zip(found, sha256_files([os.path.join(root, rel) for rel, _ in found])):
        if isinstance(digest, OSError):
            raise digest
        entry = {"path": rel, "bytes": size, "sha256": digest}
        if rel.endswith(".parquet"):
            try:
                entry["rows"] = pq.ParquetFile(os.path.join(root, rel)).metadata.num_rows
            except (OSError, pa.ArrowException):  # a damaged shard: its sha256 says so, its data checks fail
                entry["rows"] = None
        files.append(entry)
    return files


def fingerprint_source(dataset: Dataset, source: str) -> dict:
    """One sha256 over (relative path, size, sha256) of every source file: a change anywhere shows."""
    return fingerprint_files(source, dataset.source_files(source))[0]


def fingerprint_files(source: str, files: list[str]) -> tuple[dict, list]:
    """``fingerprint_source`` of the listed ``files`` of ``source``, and each file's sha256 (or the
    OSError reading it raised), in the order given."""
    fs, root = fsspec.core.url_to_fs(source)
    if fsspec.core.split_protocol(source)[0] not in (None, "file", "local"):
        # one listing (a request per 1,000 objects on S3) leaves each file's size and ETag in the filesystem's
        # cache, where its open reads them: one GET a file (conditional on that ETag), not a HEAD and a GET
        fs.invalidate_cache(root)
        fs.find(root)
    h = hashlib.sha256()
    unreadable = []
    digests = sha256_files([fs.unstrip_protocol(p) for p in files])
    for path, digest in zip(files, digests):
        rel = posixpath.relpath(path, root)
        if isinstance(digest, OSError):  # the pipeline quarantines it; the fingerprint still says it was there
            digest = f"unreadable: {digest.strerror or digest}"
            unreadable.append(rel)
        h.update(f"{rel}\0{digest}\n".encode("utf-8", "surrogateescape"))  # a name that is not UTF-8 keeps its bytes
    return ({"url": source if "://" in source else os.path.abspath(source), "files": len(files),
             "unreadable": unreadable, "sha256": h.hexdigest()}, digests)


def package_versions() -> dict[str, str]:
    out = {}
    for name in VERSIONED_PACKAGES:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            continue
    return out


def write_json(path: Path, obj: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
