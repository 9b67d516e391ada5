"""The build machinery every dataset shares: run the pipeline into staging, finalize, validate, publish.

A dataset supplies only its declarative parts (``benchwright.dataset.Dataset``); everything else
happens here, once.
"""
from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import json
import logging
import os
import shutil
import tempfile
import time
import uuid
from pathlib import Path

import apache_beam as beam
import fsspec
from apache_beam.metrics.metric import MetricsFilter

from benchwright import __version__, published
from benchwright.card import render_card
from benchwright.dataset import Dataset
from benchwright.errors import BuildError
from benchwright.forked import ForkedCall
from benchwright.layout import BUILD_DIR, MANIFEST
from benchwright.manifest import (describe_files, fill_empty_shards, fingerprint_source,
                                  package_versions, reconcile, write_json)
from benchwright.memory import release_freed_memory
from benchwright.options import BuildOptions
from benchwright.stage import FILTERED, QUARANTINE
from benchwright.drift import DRIFT, compute_drift
from benchwright.statistics import dump_json, write_statistics
from benchwright.validate import check_data, validate_build
from benchwright.writer import WriteConfig, WriteRejects

log = logging.getLogger(__name__)


def build(dataset: Dataset, source: str | None, options: BuildOptions) -> str | None:
    """Build ``dataset`` from ``source`` (or its embedded default) and publish it at ``options.out``/<name>.

    ``options.out`` is any fsspec URL. On a filesystem the build is staged beside its final place
    and renamed into it; on object storage it is staged under the dataset URL and committed by
    writing the manifest last (``benchwright.published``). Returns the published folder's URL."""
    local_out = published.is_local(options.out)
    if local_out:
        out = Path(fsspec.core.url_to_fs(options.out)[1]).resolve()
        out.mkdir(parents=True, exist_ok=True)
        dataset_url = str(out / dataset.name)
        staging_url = str(out / f".staging-{dataset.name}")
        sources_dir = out / ".sources"
    else:
        dataset_url = published.join(options.out, dataset.name)
        staging_url = published.join(dataset_url, published.STAGING, uuid.uuid4().hex[:12])
        sources_dir = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "benchwright" / "sources"
    if local_out:
        with _output_lock(out, dataset.name):
            return _build(dataset, source, options, local_out, dataset_url, staging_url, sources_dir)
    run = staging_url.rstrip("/").rsplit("/", 1)[1]
    with published.object_lock(options.out, dataset.name, run, options.stale_lock_after,
                               progress=lambda m: _progress(options, m)) as confirm_lock:
        return _build(dataset, source, options, local_out, dataset_url, staging_url, sources_dir, confirm_lock)


def _build(dataset: Dataset, source: str | None, options: BuildOptions, local_out: bool, dataset_url: str,
           staging_url: str, sources_dir: Path, confirm_lock=None) -> str | None:
    timings: dict[str, float] = {}
    if local_out:
        published.remove(staging_url)  # a killed earlier build's leftovers (remote staging is per run)
    t0 = time.perf_counter()
    if source is None:
        source = dataset.default_source(str(sources_dir))
        timings["default_source_s"] = round(time.perf_counter() - t0, 3)
    previous = published.committed(dataset_url)[1] if published.committed_manifest(dataset_url) else None

    _progress(options, f"[{dataset.name}] running the pipeline ({options.runner}, {options.running_mode})")
    # The source's fingerprint is computed meanwhile, on the core the pipeline leaves free.
    fingerprint = None if options.dry_run else ForkedCall(fingerprint_source, dataset, source)
    try:
        return _run_and_publish(dataset, source, options, local_out, dataset_url, staging_url, previous,
                                timings, fingerprint, confirm_lock)
    finally:
        if fingerprint is not None:
            fingerprint.cancel()  # a failed build's (a finished one's result was taken)


def _run_and_publish(dataset: Dataset, source: str, options: BuildOptions, local_out: bool, dataset_url: str,
                     staging_url: str, previous: str | None, timings: dict, fingerprint, confirm_lock):
    t = time.perf_counter()
    try:
        counters = run_pipeline(dataset, source, staging_url, previous, options)
    except BaseException:
        if not local_out:  # a failed build publishes nothing, and leaves nothing behind in the store
            published.remove(staging_url)
        raise
    timings["pipeline_s"] = round(time.perf_counter() - t, 3)
    release_freed_memory()
    published.fault_point("pipeline")
    if options.dry_run:
        published.remove(staging_url)
        _progress(options, f"[{dataset.name}] dry run: {options.runner} accepted the pipeline and its options; "
                           "nothing was built or published")
        return None

    if local_out:
        staging = Path(staging_url)
        staging.mkdir(parents=True, exist_ok=True)
        finalize(dataset, source, staging, counters, options, timings, previous, fingerprint)
        publish(staging, Path(dataset_url))
        _progress(options, f"[{dataset.name}] published {dataset_url}")
        return dataset_url
    try:
        with tempfile.TemporaryDirectory(prefix=f"benchwright-{dataset.name}-") as work:
            # Driver-side steps (exports, card, validation) run on a local copy of the staged build.
            staging = Path(work) / "build"
            mirrored = published.mirror(staging_url, staging)
            try:
                finalize(dataset, source, staging, counters, options, timings, previous, fingerprint)
            except BuildError as err:
                # keep what explains the failure (quarantine, validation report) where the user can read it
                kept = published.join(dataset_url, "_failed", staging_url.rstrip("/").rsplit("/", 1)[1])
                fs, path = fsspec.core.url_to_fs(kept)
                if (staging / BUILD_DIR).is_dir():
                    fs.put(str(staging / BUILD_DIR), path + "/", recursive=True)
                raise BuildError(f"{err}\n  (the failed build's {BUILD_DIR}/ is kept at {kept})") from None
            target = published.commit(staging, dataset_url, staging_url, mirrored, confirm_lock)
    finally:
        published.remove(staging_url)
    _progress(options, f"[{dataset.name}] published {dataset_url} (build {target})")
    return dataset_url


def finalize(dataset: Dataset, source: str, staging: Path, counters: dict, options: BuildOptions,
             timings: dict, previous: str | None = None, fingerprint: ForkedCall | None = None) -> dict:
    """Complete the shard sets, reconcile, export, compute the statistics and the drift against the
    ``previous`` build (its folder URL, None when nothing was published), check the data, render the
    card, write the manifest and validate the local folder ``staging``; raises (publishing nothing)
    when counts or validation fail. ``fingerprint``: the source's, being computed (else computed here)."""
    _progress(options, f"[{dataset.name}] finalizing")
    t = time.perf_counter()
    files = fill_empty_shards(dataset, staging)
    reconciliation = reconcile(dataset, staging, counters, options.max_bad_fraction)
    release_freed_memory()
    timings["finalize_s"] = round(time.perf_counter() - t, 3)

    # The exports (files under exports/, which neither the statistics nor the checks read) are written by
    # a forked child meanwhile, on the other core; the card (WordEval's runs agents on them) waits for them.
    exporting = ForkedCall(_timed_export, dataset, str(staging))
    try:
        t = time.perf_counter()
        fingerprint = fingerprint.result() if fingerprint is not None else fingerprint_source(dataset, source)
        stats = write_statistics(dataset, staging)
        drift = compute_drift(dataset, stats, previous, options.describe(), fingerprint["sha256"],
                              options.drift_blocking)
        dump_json(staging / DRIFT, drift)
        release_freed_memory()
        timings["statistics_s"] = round(time.perf_counter() - t, 3)

        _progress(options, f"[{dataset.name}] validating")
        t = time.perf_counter()
        data_checks = check_data(dataset, staging)
        timings["checks_s"] = round(time.perf_counter() - t, 3)

        t = time.perf_counter()
        exports, timings["exports_s"] = exporting.result()
        timings["exports_wait_s"] = round(time.perf_counter() - t, 3)
    finally:
        exporting.cancel()

    t = time.perf_counter()
    render_card(dataset, staging, reconciliation, data_checks)
    timings["card_s"] = round(time.perf_counter() - t, 3)

    manifest = {
        "dataset": dataset.name,
        "benchwright_version": __version__,
        "options": options.describe(),
        "input": fingerprint,
        "packages": package_versions(),
        "counters": counters,
        "reconciliation": reconciliation,
        "exports": exports,
        "timings": timings,
        "files": describe_files(staging),
        "shards": files,
    }
    write_json(staging / MANIFEST, manifest)
    published.fault_point("finalize")

    report = validate_build(dataset, staging, described=manifest["files"], data=data_checks)
    if not report["passed"]:
        raise BuildError(f"{dataset.name}: validation failed, nothing published; see "
                         f"{staging / BUILD_DIR / 'validation' / 'report.json'}: {report['summary']}")
    return manifest


def _timed_export(dataset: Dataset, staging: str) -> tuple[dict, float]:
    """The dataset's exports and the seconds they took (the child's own time)."""
    t = time.perf_counter()
    exports = dataset.export(staging)
    return exports, round(time.perf_counter() - t, 3)


def refresh_card(dataset: Dataset, root: Path) -> Path:
    """Re-render a published dataset's card (e.g. after baseline results were added under ``_build/``)
    and re-list its files in the manifest, so ``benchwright validate`` keeps passing."""
    root = Path(root)
    manifest = json.loads((root / MANIFEST).read_text())
    render_card(dataset, root, manifest["reconciliation"])
    manifest["files"] = describe_files(root)
    write_json(root / MANIFEST, manifest)
    return root / "README.md"


def run_pipeline(dataset: Dataset, source: str, staging: str, previous: str | None,
                 options: BuildOptions) -> dict[str, int]:
    runner = options.make_runner([source], staging)
    pipeline = beam.Pipeline(runner=runner, options=options.pipeline_options())
    try:
        tables, rejects = dataset.expand(pipeline, source, staging, previous)
    except BaseException:
        # Pipeline() made a local temp folder that only run() removes: a source refused while the
        # graph is built would leave one behind in the system temp folder per failed build.
        shutil.rmtree(pipeline.local_tempdir, ignore_errors=True)
        raise
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


def publish(staging: Path, final: Path) -> None:
    """Swap staging into place atomically: a kill at any point leaves the previous build or the new
    one at ``final``, never neither (the old build ends up in ``staging``, removed afterwards or by
    the next build)."""
    if not final.exists():
        os.rename(staging, final)
        return
    _exchange(staging, final)
    published.fault_point("publish")
    shutil.rmtree(staging)


_RENAME_EXCHANGE = 2  # linux/fs.h


def _exchange(a: Path, b: Path) -> None:
    """Swap two paths in one step (Linux renameat2 RENAME_EXCHANGE; Python has no binding)."""
    libc = ctypes.CDLL(None, use_errno=True)
    at_fdcwd = -100
    if libc.renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), _RENAME_EXCHANGE) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"cannot swap {a} and {b} atomically: {os.strerror(err)}")


@contextlib.contextmanager
def _output_lock(out: Path, name: str):
    """One build at a time per local output: an exclusive flock on ``OUT/.lock-<name>`` (released by
    the kernel when the holder dies, so a killed build leaves no stale lock)."""
    path = out / f"{published.LOCK_PREFIX}{name}"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as err:
            if err.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "?"
            raise BuildError(f"{out / name}: another build of {name} is running on this output "
                             f"(pid {holder} holds {path}); nothing was built") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)


def _camel(name: str) -> str:
    return "".join(p.capitalize() for p in name.split("_"))


def _progress(options: BuildOptions, message: str) -> None:
    if options.progress:
        print(message, flush=True)
