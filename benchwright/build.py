"""The build machinery every dataset shares: run the pipeline into staging, finalize, validate, publish.

A dataset supplies only its declarative parts (``benchwright.dataset.Dataset``); everything else
happens here, once.
"""
from __future__ import annotations

import contextlib
import ctypes
import datetime
import errno
import fcntl
import json
import logging
import os
import posixpath
import shutil
import tempfile
import time
import uuid
from pathlib import Path

import apache_beam as beam
import fsspec
from apache_beam.metrics.metric import MetricsFilter

from benchwright import __version__, progress, published
from benchwright.card import render_card
from benchwright.croissant import write_croissant
from benchwright.dataset import Dataset
from benchwright.diff import file_diff
from benchwright.errors import BuildError
from benchwright.files import local_files_under
from benchwright.forked import ForkedCall
from benchwright.layout import BUILD_DIR, MANIFEST
from benchwright.manifest import (described, describe_files, fill_empty_shards, fingerprint_source,
                                  package_versions, reconcile, write_json)
from benchwright.memory import release_freed_memory
from benchwright.options import DASK_RUNNER, BuildOptions
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
    writing the manifest last (``benchwright.published``). What is at ``options.out``/<name> is
    replaced only when it is a build of this dataset, or with ``options.force`` (``check_target``).
    Returns the published folder's URL. Progress goes to stderr (``benchwright.progress``) unless
    ``options.progress`` is off."""
    display = progress.Progress("auto" if options.progress else "off").prefixed(f"[{dataset.name}]")
    with progress.use(display):
        return _locked_build(dataset, source, options)


def _locked_build(dataset: Dataset, source: str | None, options: BuildOptions) -> str | None:
    local_out = published.is_local(options.out)
    check_target(dataset, options)  # before anything is made: --out a file, a folder that is not a build
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


def check_target(dataset: Dataset, options: BuildOptions) -> str | None:
    """Refuse an output the build cannot publish at or must not replace: ``--out`` (or a folder above it)
    a file, or OUT/<name> holding anything but a build of this dataset and its own files (a user's
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
        target = str(out / dataset.name)
        why = _not_a_local_build(Path(target), dataset.name)
    else:
        target = published.join(options.out, dataset.name)
        why = _not_an_object_build(target, dataset.name)
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


def _build(dataset: Dataset, source: str | None, options: BuildOptions, local_out: bool, dataset_url: str,
           staging_url: str, sources_dir: Path, confirm_lock=None) -> str | None:
    timings: dict[str, float] = {}
    if local_out:
        published.remove(staging_url)  # a killed earlier build's leftovers (remote staging is per run)
    t0 = time.perf_counter()
    if source is None:
        source = dataset.default_source(str(sources_dir))
        timings["default_source_s"] = round(time.perf_counter() - t0, 3)
    manifest = published.committed_manifest(dataset_url)
    # the build this one replaces (its statistics are the drift baseline); not another dataset's (--force)
    previous = published.committed(dataset_url)[1] if manifest and manifest.get("dataset") == dataset.name else None

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
        counters, execution = run_pipeline(dataset, source, staging_url, previous, options)
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
        finalize(dataset, source, staging, counters, options, timings, previous, fingerprint, execution)
        # checked again: a folder may have been made there while the build ran
        _progress(options, replacing(dataset, dataset_url, staging, check_target(dataset, options)))
        publish(staging, Path(dataset_url))
        _progress(options, f"[{dataset.name}] published {dataset_url}")
        return dataset_url
    try:
        with tempfile.TemporaryDirectory(prefix=f"benchwright-{dataset.name}-") as work:
            # Driver-side steps (exports, card, validation) run on a local copy of the staged build.
            staging = Path(work) / "build"
            mirrored = published.mirror(staging_url, staging)
            try:
                finalize(dataset, source, staging, counters, options, timings, previous, fingerprint, execution)
            except BuildError as err:
                # keep what explains the failure (quarantine, validation report) where the user can read it
                kept = published.join(dataset_url, published.FAILED, staging_url.rstrip("/").rsplit("/", 1)[1])
                fs, path = fsspec.core.url_to_fs(kept)
                if (staging / BUILD_DIR).is_dir():
                    fs.put(str(staging / BUILD_DIR), path + "/", recursive=True)
                raise BuildError(f"{err}\n  (the failed build's {BUILD_DIR}/ is kept at {kept})") from None
            foreign = check_target(dataset, options)
            _progress(options, replacing(dataset, dataset_url, staging, foreign))
            target = published.commit(staging, dataset_url, staging_url, mirrored, confirm_lock)
            if foreign:  # what --force replaces goes once this build is committed
                published.remove_all_but_builds(dataset_url)
    finally:
        published.remove(staging_url)
    _progress(options, f"[{dataset.name}] published {dataset_url} (build {target})")
    return dataset_url


def finalize(dataset: Dataset, source: str, staging: Path, counters: dict, options: BuildOptions,
             timings: dict, previous: str | None = None, fingerprint: ForkedCall | None = None,
             execution: dict | None = None) -> dict:
    """Complete the shard sets, reconcile, export, compute the statistics and the drift against the
    ``previous`` build (its folder URL, None when nothing was published), check the data, render the
    card, write the manifest and validate the local folder ``staging``; raises (publishing nothing)
    when counts or validation fail. ``fingerprint``: the source's, being computed (else computed here).
    ``execution``: where the pipeline ran (``run_pipeline``), recorded in the manifest."""
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

    _progress(options, f"[{dataset.name}] rendering the card")
    t = time.perf_counter()
    render_card(dataset, staging, reconciliation, data_checks)
    timings["card_s"] = round(time.perf_counter() - t, 3)

    manifest = {
        "dataset": dataset.name,
        "benchwright_version": __version__,
        "options": options.describe(),
        "execution": execution or options.execution(None),
        "input": fingerprint,
        "packages": package_versions(),
        "counters": counters,
        "reconciliation": reconciliation,
        "exports": exports,
        "timings": timings,
        "files": [],
        "shards": files,
    }
    manifest["files"] = write_croissant(dataset, staging, manifest)  # croissant.json, then every file's sha256
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
                 options: BuildOptions) -> tuple[dict[str, int], dict]:
    """Runs the dataset's pipeline, writing into ``staging``: (its counters, where it ran: the
    runner and its workers, ``BuildOptions.execution``)."""
    # The stages' running counts (benchwright.progress), when progress is shown: a folder on this machine
    # for a local output, beside the staged files for one on object storage, or on a Dask cluster (whose
    # workers see the staging, not this machine's temp folder); never part of the build.
    channel = None
    if progress.current().mode != "off" and not options.dry_run:
        channel = (tempfile.mkdtemp(prefix=f"benchwright-progress-{dataset.name}-")
                   if published.is_local(staging) and options.runner != DASK_RUNNER
                   else published.join(staging, "_progress"))
    try:
        return _run_pipeline(dataset, source, staging, previous, options, channel)
    finally:
        if channel is not None:
            published.remove(channel)


def _run_pipeline(dataset: Dataset, source: str, staging: str, previous: str | None, options: BuildOptions,
                  channel: str | None) -> tuple[dict[str, int], dict]:
    runner = options.make_runner([source], staging)
    pipeline = beam.Pipeline(runner=runner, options=options.pipeline_options())
    tracker = progress.attach(pipeline, channel) if channel is not None else None
    build_pipeline(dataset, source, staging, previous, pipeline)
    if options.dry_run:
        pipeline.run()
        return {}, options.execution(runner)
    with progress.current().phase("pipeline", *((tracker.poller(), tracker.poll_every) if tracker else ())):
        result = pipeline.run()
        result.wait_until_finish()
    return query_counters(result), options.execution(runner)


def build_pipeline(dataset: Dataset, source: str, staging: str, previous: str | None, pipeline):
    """``pipeline`` with the dataset's transforms and the writers of its configs and rejects applied."""
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
    return pipeline


def query_counters(result) -> dict[str, int]:
    totals: dict[str, int] = {}
    for c in result.metrics().query(MetricsFilter())["counters"]:
        value = c.committed if c.committed is not None else c.attempted
        totals[c.key.metric.name] = totals.get(c.key.metric.name, 0) + int(value or 0)
    return dict(sorted(totals.items()))


def replacing(dataset: Dataset, dataset_url: str, staging: Path, foreign: str | None) -> str | None:
    """The line saying what the finished build at ``staging`` replaces at ``dataset_url``: the previous
    build's date and rows, and what changed (rows, files, input, drift: from the two manifests and the
    new build's drift report, since the old build is gone once this one is published); or what was
    there that is not a build of it (``foreign``, ``check_target``'s reason: --force). None when
    nothing is there."""
    old = published.committed_manifest(dataset_url)
    if old is None or old.get("dataset") != dataset.name:
        return f"[{dataset.name}] replacing {dataset_url}, which {foreign} (--force)" if foreign else None
    new = json.loads((staging / MANIFEST).read_text(encoding="utf-8"))
    fs, path = fsspec.core.url_to_fs(published.join(dataset_url, MANIFEST))
    when = fs.modified(path).astimezone(datetime.timezone.utc)
    old_rows, new_rows = _rows(old), _rows(new)
    files = file_diff(old, new, 0)
    drift = json.loads((staging / DRIFT).read_text(encoding="utf-8"))
    same_input = (old.get("input") or {}).get("sha256") == new["input"]["sha256"]
    drifted = (f"; {drift['exceeded']} of {len(drift['comparisons'])} statistics drifted beyond their limit "
               f"({DRIFT})") if drift["comparisons"] else ""
    return (f"[{dataset.name}] replacing the build of {when:%Y-%m-%d %H:%M} UTC, {old_rows:,} rows"
            + (f", which {foreign} (--force)" if foreign else "")
            + f"; diff: {new_rows:,} rows ({new_rows - old_rows:+,}), files {files['changed']} changed, "
              f"{files['added']} added, {files['removed']} removed, {files['unchanged']} unchanged; input "
              f"{'unchanged' if same_input else 'changed'}{drifted}")


def _rows(manifest: dict) -> int:
    return sum(s.get("rows") or 0 for s in manifest.get("shards", []))


def publish(staging: Path, final: Path) -> None:
    """Swap staging into place atomically: a kill at any point leaves the previous build or the new
    one at ``final``, never neither (the old build ends up in ``staging``, removed afterwards or by
    the next build). The caller checked that what is at ``final`` may be replaced (``check_target``)."""
    if not final.exists() and not final.is_symlink():
        os.rename(staging, final)
        return
    _exchange(staging, final)
    published.fault_point("publish")
    if staging.is_dir() and not staging.is_symlink():
        shutil.rmtree(staging)
    else:  # what --force replaced: a file or a link (never followed)
        staging.unlink()


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


def _progress(options: BuildOptions, message: str | None) -> None:
    if options.progress and message:
        print(message, flush=True)
