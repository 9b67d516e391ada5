"""The build machinery every dataset shares: run the pipeline into staging, finalize, validate, publish.

A dataset module supplies only its declarative parts (a ``Dataset`` subclass): its configs'
Features, how the source becomes tables (``expand``), its units for reconciliation, its exports,
its card statistics and its great-expectations suites. Everything else happens here, once.
"""
from __future__ import annotations

import dataclasses
import json
import logging
import os
import posixpath
import shutil
import time
from pathlib import Path
from typing import Any

import apache_beam as beam
import fsspec
import pyarrow.parquet as pq
from apache_beam.metrics.metric import MetricsFilter

from benchwright import __version__
from benchwright.errors import BuildError
from benchwright.hashing import sha256_file
from benchwright.options import BuildOptions
from benchwright.pipelines.common import FILTERED, QUARANTINE, WriteConfig, WriteRejects, shard_file_name, write_parquet

log = logging.getLogger(__name__)

BUILD_DIR = "_build"
MANIFEST = f"{BUILD_DIR}/manifest.json"
# Recorded in the manifest so a reader knows exactly what produced the bytes.
VERSIONED_PACKAGES = ("apache-beam", "pyarrow", "datasets", "numpy", "opencv-python-headless", "open3d-cpu",
                      "great-expectations", "python-docx", "lxml", "fsspec")


@dataclasses.dataclass
class Unit:
    """A unit of reconciliation: what is read, and which config's rows count as its written form."""

    name: str
    config: str
    primary: bool = False  # the unit --max-bad-fraction is measured on


class Dataset:
    """One dataset: the declarative parts. Subclasses set the class attributes and override the hooks."""

    name: str = ""
    configs: dict = {}          # config -> datasets.Features
    id_columns: dict = {}       # config -> the column whose stable hash picks the shard
    units: tuple = ()           # Unit(...) per reconciled unit
    license: str = ""
    task_categories: tuple = ()
    tags: tuple = ()
    pretty_name: str = ""
    # The parts the CLI drives, as "module:function" (imported only when used):
    synth: str | None = None      # f(out, scale=, seed=, progress=, **extra) writes a raw source (`benchwright synth`)
    evaluator: str | None = None  # run_cli(argv) -> exit code (`benchwright evaluate <ds> ...`)
    baselines: str | None = None  # run_cli(argv) -> exit code (`benchwright baseline <ds> ...`)

    def default_source(self, workdir: str) -> str:
        """Materialise the embedded default source under ``workdir``; returns its URL."""
        raise NotImplementedError

    def expand(self, pipeline, source: str, staging: str, previous: str | None) -> tuple[dict, list]:
        """Returns ({config: PCollection of pyarrow Tables}, [PCollections of reject rows])."""
        raise NotImplementedError

    def source_files(self, source: str) -> list[str]:
        """The files whose content defines the input (fingerprinted in the manifest)."""
        return list_files(source)

    def export(self, staging: str) -> dict:
        """Write format exports under ``staging/exports``; returns a summary for the manifest."""
        return {}

    def card_context(self, staging: str) -> dict:
        """Statistics and figures for the card (figures written under ``_build/figures``)."""
        return {}

    def validate_tables(self, staging: str, tables_by_config: dict) -> list[dict]:
        """Dataset-specific table checks beyond the great-expectations suites: [{check, ok, detail}]."""
        return []

    def expectation_suites(self) -> dict:
        """{config: [great-expectations expectation configs]} run on the written Parquet."""
        return {}


def build(dataset: Dataset, source: str | None, options: BuildOptions) -> Path | None:
    """Build ``dataset`` from ``source`` (or its embedded default) and publish it under ``options.out``."""
    out = Path(options.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    final = out / dataset.name
    staging = out / f".staging-{dataset.name}"
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    if source is None:
        source = dataset.default_source(str(out / ".sources"))
        timings["default_source_s"] = round(time.perf_counter() - t0, 3)
    previous = str(final) if (final / MANIFEST).exists() else None

    _progress(options, f"[{dataset.name}] running the pipeline ({options.runner}, {options.running_mode})")
    t = time.perf_counter()
    counters = run_pipeline(dataset, source, str(staging), previous, options)
    timings["pipeline_s"] = round(time.perf_counter() - t, 3)
    if options.dry_run:
        shutil.rmtree(staging)
        _progress(options, f"[{dataset.name}] dry run: {options.runner} accepted the pipeline and its options; "
                           "nothing was built or published")
        return None

    _progress(options, f"[{dataset.name}] finalizing")
    t = time.perf_counter()
    files = fill_empty_shards(dataset, staging)
    reconciliation = reconcile(dataset, staging, counters, options.max_bad_fraction)
    exports = dataset.export(str(staging))
    timings["finalize_s"] = round(time.perf_counter() - t, 3)

    from benchwright.cards import render_card

    t = time.perf_counter()
    render_card(dataset, staging, reconciliation)
    timings["card_s"] = round(time.perf_counter() - t, 3)

    manifest = {
        "dataset": dataset.name,
        "benchwright_version": __version__,
        "options": options.describe(),
        "input": fingerprint_source(dataset, source),
        "packages": package_versions(),
        "counters": counters,
        "reconciliation": reconciliation,
        "exports": exports,
        "timings": timings,
        "files": describe_files(staging),
        "shards": files,
    }
    write_json(staging / MANIFEST, manifest)

    _progress(options, f"[{dataset.name}] validating")
    from benchwright.validation.report import validate_build

    t = time.perf_counter()
    report = validate_build(dataset, staging)
    timings["validation_s"] = round(time.perf_counter() - t, 3)
    if not report["passed"]:
        raise BuildError(f"{dataset.name}: validation failed, nothing published; see "
                         f"{staging / BUILD_DIR / 'validation' / 'report.json'}: {report['summary']}")
    publish(staging, final)
    _progress(options, f"[{dataset.name}] published {final}")
    return final


def refresh_card(dataset: Dataset, root: Path) -> Path:
    """Re-render a published dataset's card (e.g. after baseline results were added under ``_build/``)
    and re-list its files in the manifest, so ``benchwright validate`` keeps passing."""
    from benchwright.cards import render_card

    root = Path(root)
    manifest = json.loads((root / MANIFEST).read_text())
    render_card(dataset, root, manifest["reconciliation"])
    manifest["files"] = describe_files(root)
    write_json(root / MANIFEST, manifest)
    return root / "README.md"


def run_pipeline(dataset: Dataset, source: str, staging: str, previous: str | None,
                 options: BuildOptions) -> dict[str, int]:
    runner = options.make_runner()
    pipeline = beam.Pipeline(runner=runner, options=options.pipeline_options())
    tables, rejects = dataset.expand(pipeline, source, staging, previous)
    for config, pcoll in tables.items():
        pcoll | f"Write{_camel(config)}" >> WriteConfig(staging, config, dataset.configs[config],
                                                       dataset.id_columns[config])
    for kind in (QUARANTINE, FILTERED):
        rows = [r[kind] for r in rejects]
        (rows | f"Flatten{_camel(kind)}" >> beam.Flatten(pipeline=pipeline)
         | f"Write{_camel(kind)}" >> WriteRejects(staging, kind))
    result = pipeline.run()
    if options.dry_run:
        return {}
    result.wait_until_finish()
    return query_counters(result)


def query_counters(result) -> dict[str, int]:
    totals: dict[str, int] = {}
    for c in result.metrics().query(MetricsFilter())["counters"]:
        value = c.committed if c.committed is not None else c.attempted
        totals[c.key.metric.name] = totals.get(c.key.metric.name, 0) + int(value or 0)
    return dict(sorted(totals.items()))


def fill_empty_shards(dataset: Dataset, staging: Path) -> list[dict]:
    """A shard no row hashed to still exists (empty), so ``-of-N`` file sets are complete."""
    shards = []
    for config, features in dataset.configs.items():
        cdir = staging / config
        found: dict[str, int] = {}
        for f in sorted(cdir.glob("*.parquet")) if cdir.exists() else []:
            split, rest = f.stem.split("-", 1)
            found[split] = int(rest.rsplit("-of-", 1)[1])
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
        split = f.stem.split("-", 1)[0]
        cfg = rows.setdefault(f.parent.name, {})
        cfg[split] = cfg.get(split, 0) + pq.ParquetFile(f).metadata.num_rows
    return rows


def read_rejects(root: Path) -> dict[str, list[dict]]:
    out = {}
    for kind in (QUARANTINE, FILTERED):
        rows = []
        for f in sorted((root / BUILD_DIR / kind).glob("*.jsonl")):
            rows.extend(json.loads(line) for line in f.read_text().splitlines() if line)
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
        w = sum(written.get(unit.config, {}).values())
        entry = {"written": w, "quarantined": q, "filtered": f}
        if counters is not None:
            read = counters.get(f"read.{unit.name}", 0)
            entry["read"] = read
            if read != w + q + f:
                problems.append(f"unit {unit.name!r}: read {read} != written {w} + quarantined {q} + filtered {f}")
            if counters.get(f"written.{unit.config}", w) != w:
                problems.append(f"config {unit.config!r}: the writer counted {counters[f'written.{unit.config}']} "
                                f"rows but the files hold {w}")
        entry["bad_fraction"] = round(q / max(1, w + q + f), 6)
        units[unit.name] = entry
    primary = [u for u in dataset.units if u.primary]
    for u in primary:
        entry = units[u.name]
        if entry["written"] + entry["quarantined"] + entry["filtered"] == 0:
            problems.append(f"unit {u.name!r}: the source yielded nothing; check the source path and layout")
        elif entry["bad_fraction"] > max_bad_fraction:
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
    """Every published file except the manifest and the validation output, with sha256, rows, bytes."""
    files = []
    for f in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = f.relative_to(root).as_posix()
        if rel == MANIFEST or rel.startswith(f"{BUILD_DIR}/validation/"):
            continue
        entry = {"path": rel, "bytes": f.stat().st_size, "sha256": sha256_file(f)}
        if f.suffix == ".parquet":
            entry["rows"] = pq.ParquetFile(f).metadata.num_rows
        files.append(entry)
    return files


def list_files(source: str) -> list[str]:
    """Regular files under ``source``, sorted; hidden names skipped. Symlinked folders are not
    followed, so a symlink loop cannot make the walk endless."""
    fs, root = fsspec.core.url_to_fs(source)
    entries = fs.find(root, detail=True)
    return sorted(p for p, info in entries.items()
                  if info.get("type") == "file" and not any(part.startswith(".") for part in
                                                            posixpath.relpath(p, root).split("/")))


def fingerprint_source(dataset: Dataset, source: str) -> dict:
    """One sha256 over (relative path, size, sha256) of every source file: a change anywhere shows."""
    import hashlib

    fs, root = fsspec.core.url_to_fs(source)
    h = hashlib.sha256()
    files = dataset.source_files(source)
    unreadable = []
    for path in files:
        rel = posixpath.relpath(path, root)
        try:
            digest = sha256_file(fs.unstrip_protocol(path))
        except OSError as err:  # the pipeline quarantines it; the fingerprint still says it was there
            digest = f"unreadable: {err.strerror or err}"
            unreadable.append(rel)
        h.update(f"{rel}\0{digest}\n".encode())
    return {"url": source if "://" in source else os.path.abspath(source), "files": len(files),
            "unreadable": unreadable, "sha256": h.hexdigest()}


def package_versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

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


def publish(staging: Path, final: Path) -> None:
    """Swap staging into place with renames: a crash leaves the previous build (or nothing) untouched."""
    old = final.with_name(f".old-{final.name}")
    if old.exists():
        shutil.rmtree(old)
    if final.exists():
        os.rename(final, old)
    os.rename(staging, final)
    if old.exists():
        shutil.rmtree(old)


def _camel(name: str) -> str:
    return "".join(p.capitalize() for p in name.split("_"))


def _progress(options: BuildOptions, message: str) -> None:
    if options.progress:
        print(message, flush=True)
