"""The build machinery every dataset shares: run the pipeline into staging, finalize, validate, publish.

A dataset supplies only its declarative parts (``benchwright.dataset.Dataset``); everything else
happens here, once.
"""
from __future__ import annotations

import contextlib
import ctypes
import datetime
import json
import logging
import os
import shutil
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import apache_beam as beam
import fsspec
from apache_beam.metrics.metric import MetricsFilter

from benchwright import __version__, beam_graph, output_faults, progress, published
from benchwright.card import card_baselines, render_card
from benchwright.croissant import write_croissant
from benchwright.dataset import Dataset
from benchwright.diff import file_diff
from benchwright.errors import BuildError
from benchwright.files import SOURCE_COMPLETE_MARKER
from benchwright.forked import ForkedCall, HeldCall
from benchwright.layout import BUILD_DIR, MANIFEST
from benchwright.manifest import (describe_files, fill_empty_shards, fingerprint_source,
                                  package_versions, reconcile, write_json)
from benchwright.memory import freeze_long_lived, release_freed_memory
from benchwright.options import DASK_RUNNER, BuildOptions
from benchwright.prepared import Prepared, PreparedExports
from benchwright.source_watch import SourceWatch
from benchwright.stage import FILTERED, QUARANTINE
from benchwright.target import check_target
from benchwright.drift import DRIFT, compute_drift
from benchwright.statistics import dump_json, write_statistics
from benchwright.validate import check_data, check_files, prepare_expectations, validate_build
from benchwright.writer import WriteConfig, WriteRejects

log = logging.getLogger(__name__)
# the builds started in this process: the first one's data checks import great-expectations in their child,
# the next ones find it imported (prepare_expectations)
_builds_started: list[str] = []


def build(dataset: Dataset, source: str | None, options: BuildOptions) -> str | None:
    """Build ``dataset`` from ``source`` (or its embedded default) and publish it at ``options.out``/<name>.

    ``options.out`` is any fsspec URL. On a filesystem the build is staged beside its final place
    and renamed into it; on object storage it is staged under the dataset URL and committed by
    writing the manifest last (``benchwright.published``). What is at ``options.out``/<name> is
    replaced only when it is a build of this dataset, or with ``options.force`` (``check_target``).
    Returns the published folder's URL. Progress goes to stderr (``benchwright.progress``) unless
    ``options.progress`` is off."""
    if _builds_started:  # a later build in this process: great-expectations imported once, here, not per child
        prepare_expectations()
    _builds_started.append(dataset.name)
    freeze_long_lived()  # the modules and earlier builds' survivors: no collection of this build visits them
    display = progress.Progress("auto" if options.progress else "off").prefixed(f"[{dataset.name}]")
    with progress.use(display):
        return _locked_build(dataset, source, options)


def _locked_build(dataset: Dataset, source: str | None, options: BuildOptions) -> str | None:
    local_out = published.is_local(options.out)
    check_target(dataset.name, options)  # before anything is made: --out a file, a folder that is not a build
    if local_out:
        out = Path(fsspec.core.url_to_fs(options.out)[1]).resolve()
        dataset_url = str(out / dataset.name)
        staging_url = str(out / f".staging-{dataset.name}")
        sources_dir = out / ".sources"
    else:
        dataset_url = published.join(options.out, dataset.name)
        staging_url = published.join(dataset_url, published.STAGING, uuid.uuid4().hex[:12])
        sources_dir = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "benchwright" / "sources"
    written = _Written(dataset, source, options, local_out, dataset_url, staging_url, sources_dir)
    # a full disk, a read-only output: one line (the build's own faults: below), not Beam's traceback
    with written.told(), output_faults.quiet_beam_write_faults():
        if local_out:
            written.made = [f for f in (out, *out.parents) if not f.exists()]  # removed again on a fault
            out.mkdir(parents=True, exist_ok=True)
            with published.local_lock(out, dataset.name) as left:
                with written.told(clean_up=True):  # under the lock: the staging is this build's
                    return _build(dataset, source, options, local_out, dataset_url, staging_url, sources_dir,
                                  written=written, left=left)
        run = staging_url.rstrip("/").rsplit("/", 1)[1]
        with published.object_lock(options.out, dataset.name, run, options.stale_lock_after,
                                   progress=lambda m: _progress(options, m)) as confirm_lock:
            with written.told(clean_up=True):
                return _build(dataset, source, options, local_out, dataset_url, staging_url, sources_dir,
                              confirm_lock, written=written)


class _Written:
    """Where a build writes, and what it has written: what the line for a full disk or a read-only output
    (``benchwright.output_faults``) needs, and what such a build removes before it says it."""

    def __init__(self, dataset: Dataset, source: str | None, options: BuildOptions, local_out: bool,
                 dataset_url: str, staging_url: str, sources_dir: Path):
        self.dataset, self.options, self.local_out = dataset, options, local_out
        # a fault naming a file of the given source is one of reading it (the pipeline's to tell)
        self.source = (fsspec.core.url_to_fs(source)[1] if source is not None and published.is_local(source)
                       else None)
        self.made: list[Path] = []  # the output's folders this build made (none made yet)
        self._said: str | None = None  # the line told, once a fault was
        self.dataset_url, self.staging_url, self.sources_dir = dataset_url, staging_url, sources_dir
        out = str(Path(dataset_url).parent) if local_out else None
        self.places = [output_faults.Place(out, options.out if local_out else dataset_url),
                       output_faults.Place(str(sources_dir), f"{sources_dir} (the embedded default sources)"),
                       output_faults.Place(tempfile.gettempdir(), f"{tempfile.gettempdir()} (the temporary "
                                                                  "folder: set TMPDIR to move it)")]
        if not local_out:  # object storage: its refusals name no file
            self.places.append(output_faults.Place(None, dataset_url))
        self.beside: Beside | None = None  # the source's watch (its sizes, once listed), the prepared exports

    @property
    def watch(self) -> SourceWatch | None:
        return self.beside.fingerprint if self.beside is not None else None

    @contextlib.contextmanager
    def told(self, clean_up: bool = False):
        """A write fault raised inside becomes ``BuildError`` with its one line; ``clean_up``: this build
        holds the output's lock, so what it staged is removed first. The outermost (no ``clean_up``: the
        lock is released) also removes the output's folders this build made, once they are empty."""
        try:
            yield
        except BaseException as err:
            line = self._said if isinstance(err, BuildError) and str(err) == self._said else self._line(err, clean_up)
            if line is None:
                raise
            self._said = line
            if not clean_up:
                for folder in self.made:  # deepest first; only if empty (another build may be using it)
                    with contextlib.suppress(OSError):
                        folder.rmdir()
            raise BuildError(line) from None

    def _line(self, err: BaseException, clean_up: bool) -> str | None:
        """The line telling the write fault ``err`` is or holds, None when it is none of this build's."""
        fault = output_faults.write_fault(err)
        place = fault is not None and output_faults.fault_place(fault, self.places, reading=self.source)
        if not place:
            return None
        written, _ = self._remove_staged() if clean_up else (0, 0)
        needed = None
        if output_faults.no_space(fault):
            previous = published.committed_manifest(self.dataset_url)
            needed = output_faults.estimate(
                written=written, input_bytes=self.watch and self.watch.state and self.watch.state.bytes,
                previous=previous if previous and previous.get("dataset") == self.dataset.name else None,
                ratio=self.dataset.output_per_input_byte, fixed=self.dataset.output_fixed_bytes, block=place.block(),
                dataset=self.dataset.name)
        return output_faults.fault_line(fault, place, needed=needed, removed=written)

    def _remove_staged(self) -> tuple[int, int]:
        """Remove what this build staged and a default source it had not finished; (bytes, files) removed."""
        # the exports' files prepared beside the staged build (benchwright.prepared) were this build's too
        removed = list(self.beside.removed) if self.beside is not None else [0, 0]
        for path in (self.staging_url if self.local_out else None,
                     _incomplete_default(self.sources_dir, self.dataset.name)):
            if path is not None and os.path.lexists(path):
                used, files = output_faults.disk_usage(str(path))
                removed[0] += used
                removed[1] += files
                shutil.rmtree(path, ignore_errors=True)
        return removed[0], removed[1]


def _incomplete_default(sources_dir: Path, name: str) -> Path | None:
    """The embedded default source of ``name`` when a build stopped while writing it (no marker)."""
    folder = Path(sources_dir) / f"{name}-default"
    return folder if folder.is_dir() and not (folder / SOURCE_COMPLETE_MARKER).exists() else None


def _build(dataset: Dataset, source: str | None, options: BuildOptions, local_out: bool, dataset_url: str,
           staging_url: str, sources_dir: Path, confirm_lock=None, written: _Written | None = None,
           left: published.LocalLockRecord | None = None) -> str | None:
    timings: dict[str, float] = {}
    if local_out:  # what a killed or failed earlier build left (remote staging is per run: its lock's takeover)
        _progress(options, _clean_up_local(dataset.name, Path(staging_url), left))
    t0 = time.perf_counter()
    if source is None:
        stopped = _incomplete_default(sources_dir, dataset.name)
        if stopped is not None:
            size = output_faults.megabytes(output_faults.disk_usage(str(stopped))[0])
            _progress(options, f"[{dataset.name}] writing the embedded default source again: a build stopped "
                               f"while writing it ({stopped}, {size})")
        source = dataset.default_source(str(sources_dir))
        timings["default_source_s"] = round(time.perf_counter() - t0, 3)
    manifest = published.committed_manifest(dataset_url)
    # the build this one replaces (its statistics are the drift baseline); not another dataset's (--force)
    previous = published.committed(dataset_url)[1] if manifest and manifest.get("dataset") == dataset.name else None

    # The source is listed before anything reads it, fingerprinted meanwhile on the core the pipeline leaves
    # free, and listed again before publishing: a change meanwhile is refused (benchwright.source_watch).
    beside = None if options.dry_run else Beside.start(dataset, source, str(Path(staging_url).parent) if local_out
                                                       else None)
    if written is not None and beside is not None:
        written.beside = beside
    _progress(options, f"[{dataset.name}] running the pipeline ({options.runner}, {options.running_mode})")
    try:
        return _run_and_publish(dataset, source, options, local_out, dataset_url, staging_url, previous,
                                timings, confirm_lock, beside)
    finally:
        if beside is not None:
            beside.close()  # a failed build's children (a finished one's results were taken)


@dataclass
class Beside:
    """What a build computes in forked children (``benchwright.forked``) while its pipeline runs, on the core
    the pipeline leaves free (the in-process runner holds the GIL): the source's ``fingerprint`` and its watch
    (``SourceWatch``); the data ``checks`` that read only the written files (``validate.check_files``), whose
    child imports great-expectations meanwhile and checks the files once they are complete; and, at low
    priority, the ``exports``' conversions of source files (``benchwright.prepared``; None: the dataset declares none)."""
    fingerprint: SourceWatch
    checks: HeldCall
    exports: PreparedExports | None

    @classmethod
    def start(cls, dataset: Dataset, source: str, beside_output: str | None) -> Beside:
        return cls(fingerprint=SourceWatch(dataset, source),
                   checks=HeldCall(_timed_check_files, dataset, warm_up=prepare_expectations),
                   exports=PreparedExports(dataset, source, beside_output) if dataset.export_conversions() else None)

    # what close() removed of the prepared exports (bytes, files): a full disk's line counts it as written
    removed: tuple[int, int] = (0, 0)

    def close(self) -> None:
        self.fingerprint.cancel()
        self.checks.cancel()
        if self.exports is not None:
            self.exports.stop()
            self.removed = output_faults.disk_usage(self.exports.prepared.folder)
            self.exports.close()


def _clean_up_local(name: str, staging: Path, left: published.LocalLockRecord | None) -> str | None:
    """Remove what an earlier build left at a local output: its staging folder (a failed build's, kept for
    its quarantine and validation report, or a killed build's); ``left``: what a killed build left in the
    lock file this build now holds. Returns the line saying so, None when nothing was left."""
    removed = ""
    if staging.is_dir() and not staging.is_symlink():
        used, files = output_faults.disk_usage(str(staging))
        shutil.rmtree(staging)
        removed = f"{staging} ({files:,} files, {output_faults.megabytes(used)})"
    elif os.path.lexists(staging):
        staging.unlink()
        removed = str(staging)
    if left is not None:  # its pid is still in the lock file: it never reached its end (killed, or its machine)
        return (f"[{name}] cleaned up after a build that was killed ({left.describe()}): "
                + (f"removed its staging folder {removed}" if removed else "it had staged nothing")
                + f"; its lock file {left.path} is this build's now")
    if removed:
        return f"[{name}] removed {removed}, left by an earlier build that failed or was stopped"
    return None


def _run_and_publish(dataset: Dataset, source: str, options: BuildOptions, local_out: bool, dataset_url: str,
                     staging_url: str, previous: str | None, timings: dict, confirm_lock, beside: Beside | None):
    t = time.perf_counter()
    try:
        counters, execution = run_pipeline(dataset, source, staging_url, previous, options)
    except BaseException:
        if not local_out:  # a failed build publishes nothing, and leaves nothing behind in the store
            published.remove(staging_url)
        raise
    timings["pipeline_s"] = round(time.perf_counter() - t, 3)
    if beside is not None and beside.exports is not None:
        beside.exports.stop()  # the cores are the exports' now: they make what it had not
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
        finalize(dataset, source, staging, counters, options, timings, previous, beside, execution)
        # checked again: a folder may have been made there while the build ran
        _progress(options, replacing(dataset, dataset_url, staging, check_target(dataset.name, options)))
        publish(staging, Path(dataset_url))
        _progress(options, f"[{dataset.name}] published {dataset_url}")
        return dataset_url
    try:
        with tempfile.TemporaryDirectory(prefix=f"benchwright-{dataset.name}-") as work:
            # Driver-side steps (exports, card, validation) run on a local copy of the staged build.
            staging = Path(work) / "build"
            mirrored = published.mirror(staging_url, staging)
            try:
                finalize(dataset, source, staging, counters, options, timings, previous, beside, execution)
            except BuildError as err:
                # keep what explains the failure (quarantine, validation report) where the user can read it
                kept = published.join(dataset_url, published.FAILED, staging_url.rstrip("/").rsplit("/", 1)[1])
                fs, path = fsspec.core.url_to_fs(kept)
                if (staging / BUILD_DIR).is_dir():
                    fs.put(str(staging / BUILD_DIR), path + "/", recursive=True)
                raise BuildError(f"{err}\n  (the failed build's {BUILD_DIR}/ is kept at {kept})") from None
            foreign = check_target(dataset.name, options)
            _progress(options, replacing(dataset, dataset_url, staging, foreign))
            target = published.commit(staging, dataset_url, staging_url, mirrored, confirm_lock)
            if foreign:  # what --force replaces goes once this build is committed
                published.remove_all_but_builds(dataset_url)
    finally:
        published.remove(staging_url)
    _progress(options, f"[{dataset.name}] published {dataset_url} (build {target})")
    return dataset_url


def finalize(dataset: Dataset, source: str, staging: Path, counters: dict, options: BuildOptions,
             timings: dict, previous: str | None = None, beside: Beside | None = None,
             execution: dict | None = None) -> dict:
    """Complete the shard sets, reconcile, export, compute the statistics and the drift against the
    ``previous`` build (its folder URL, None when nothing was published), check the data, render the
    card, write the manifest and validate the local folder ``staging``; raises (publishing nothing)
    when counts or validation fail, or the source changed meanwhile. ``beside``: what was started beside the
    pipeline (else all of it is computed here). ``execution``: where the pipeline ran (``run_pipeline``),
    recorded in the manifest."""
    _progress(options, f"[{dataset.name}] finalizing")
    t = time.perf_counter()
    files = fill_empty_shards(dataset, staging)
    reconciliation = reconcile(dataset, staging, counters, options.max_bad_fraction)
    release_freed_memory()
    timings["finalize_s"] = round(time.perf_counter() - t, 3)

    # The data files are complete: the checks' child checks them. The exports (files under exports/, which
    # neither the statistics nor the checks read) are written by another forked child meanwhile; the card
    # (WordEval's runs agents on them) waits for them. Then that child computes the card's part that works on
    # the tables (Dataset.card_baselines_beside).
    if beside is not None:
        beside.checks.start(str(staging))
    prepared = beside.exports.prepared if beside is not None and beside.exports is not None else Prepared()
    exporting = ForkedCall(_export_and_card_part, dataset, str(staging), prepared)
    try:
        t = time.perf_counter()
        watch = beside.fingerprint if beside is not None else None
        fingerprint = watch.result() if watch is not None else fingerprint_source(dataset, source)
        stats = write_statistics(dataset, staging, options.decode_images)
        drift = compute_drift(dataset, stats, previous, described_options(dataset, options), fingerprint["sha256"],
                              options.drift_blocking)
        dump_json(staging / DRIFT, drift)
        release_freed_memory()
        timings["statistics_s"] = round(time.perf_counter() - t, 3)

        _progress(options, f"[{dataset.name}] validating")
        t = time.perf_counter()
        on_files, timings["checks_s"] = (beside.checks.result() if beside is not None
                                         else _timed_check_files(dataset, staging))
        data_checks = check_data(dataset, staging, files=on_files)
        timings["checks_wait_s"] = round(time.perf_counter() - t, 3)

        t = time.perf_counter()
        exports, timings["exports_s"], card_part, timings["card_beside_checks_s"] = exporting.result()
        timings["exports_wait_s"] = round(time.perf_counter() - t, 3)
    finally:
        exporting.cancel()

    _progress(options, f"[{dataset.name}] rendering the card")
    t = time.perf_counter()
    render_card(dataset, staging, reconciliation, data_checks, beside=card_part)
    timings["card_s"] = round(time.perf_counter() - t, 3)

    manifest = {
        "dataset": dataset.name,
        "benchwright_version": __version__,
        "configs": list(dataset.configs),  # in declared order, empty ones too (benchwright info lists them)
        "options": described_options(dataset, options),
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
    if watch is not None:  # the source as it was listed, or nothing is published (after the last read of it)
        watch.check()
        timings.update(source_listing_s=watch.listed_s, source_check_s=watch.check_s)
    write_json(staging / MANIFEST, manifest)
    published.fault_point("finalize")

    report = validate_build(dataset, staging, described=manifest["files"], data=data_checks)
    if not report["passed"]:
        raise BuildError(f"{dataset.name}: validation failed, nothing published; see "
                         f"{staging / BUILD_DIR / 'validation' / 'report.json'}: {report['summary']}")
    return manifest


def described_options(dataset: Dataset, options: BuildOptions) -> dict:
    """What shapes the output, as the manifest records it: the build's options and the dataset's settings."""
    return {**options.describe(), "settings": dataset.settings.recorded()}


def _timed_export(dataset: Dataset, staging: str, prepared: Prepared) -> tuple[dict, float]:
    """The dataset's exports and the seconds they took (the child's own time)."""
    t = time.perf_counter()
    exports = dataset.export(staging, prepared=prepared)
    return exports, round(time.perf_counter() - t, 3)


def _timed_check_files(dataset: Dataset, staging: str) -> tuple[dict, float]:
    """``validate.check_files`` of the build at ``staging`` and the seconds it took (the child's own time)."""
    t = time.perf_counter()
    files = check_files(dataset, staging)
    return files, round(time.perf_counter() - t, 3)


def _export_and_card_part(dataset: Dataset, staging: str, prepared: Prepared) -> tuple[dict, float, dict, float]:
    """``_timed_export``, then the card's ``card_baselines_beside`` part and the seconds it took (the
    child's own time)."""
    exports, export_s = _timed_export(dataset, staging, prepared)
    t = time.perf_counter()
    card_part = card_baselines(dataset, staging, beside=True)
    return exports, export_s, card_part, round(time.perf_counter() - t, 3)


def refresh_card(dataset: Dataset, root: Path) -> Path:
    """Re-render a published dataset's card (e.g. after baseline results were added under ``_build/``), with the
    settings it was built with, and re-list its files in the manifest, so ``benchwright validate`` keeps passing."""
    root = Path(root)
    manifest = json.loads((root / MANIFEST).read_text())
    render_card(dataset.as_built(manifest), root, manifest["reconciliation"])
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
    beam_graph.apply()  # the graph's repeated introspections done once (Beam 2.77.0 only)
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


def _camel(name: str) -> str:
    return "".join(p.capitalize() for p in name.split("_"))


def _progress(options: BuildOptions, message: str | None) -> None:
    if options.progress and message:
        print(message, flush=True)
