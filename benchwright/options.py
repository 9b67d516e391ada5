"""Build options: which runner, how many workers, the Beam options passed through, the quality bar.

The default runner is Beam's in-process ``FnApiRunner``. We never let Beam pick the implicit
``DirectRunner``: in Beam 2.77 it first tries to download a Prism binary, and there is no network.
``--runner dask`` (or Beam's DaskRunner by name) is Beam's Dask runner with its defects fixed
(``benchwright.runners.dask``), on the dask.distributed scheduler at ``dask_address``.
Any other runner (Dataflow, Flink, Spark, Portable) gets the pass-through options unchanged.
"""
from __future__ import annotations

import dataclasses
import functools
import threading
from typing import Sequence


DEFAULT_RUNNER = "FnApiRunner"
RUNNING_MODES = ("in_memory", "multi_threading", "multi_processing")
DASK_RUNNER = "DaskRunner"
# names that choose Beam's Dask runner: all of them get the guarded one (benchwright.runners.dask)
DASK_RUNNER_NAMES = ("dask", DASK_RUNNER, "apache_beam.runners.dask.dask_runner.DaskRunner")


@dataclasses.dataclass
class BuildOptions:
    out: str = "./out"
    runner: str = DEFAULT_RUNNER
    # in_memory by default: on the 2-core reference machine a full WildBox build is as fast as with
    # multi_processing and 2 workers, and needs ~3.1 GB instead of 4.0-4.5 GB (benchmarks/wildbox_build.py).
    # Bigger machines: --running-mode multi_processing --workers N.
    running_mode: str = "in_memory"
    num_workers: int = 1
    max_bad_fraction: float = 0.01
    beam_args: Sequence[str] = ()
    progress: bool = True
    # targets (fnmatch over config/split[/column]) whose drift beyond its limit fails the build
    # (benchwright.drift); "*" makes every limit blocking
    drift_blocking: Sequence[str] = ()
    # an S3 build lock whose heartbeat is older than this (seconds) belongs to a dead build and may be
    # taken over (benchwright.published.ObjectLock); not recorded: it does not shape the output
    stale_lock_after: float = 300.0
    # the dask.distributed scheduler (HOST:PORT or tcp://HOST:PORT) the Dask runner builds on; not
    # recorded: where the pipeline runs does not shape the output
    dask_address: str | None = None

    def __post_init__(self):
        if self.runner in DASK_RUNNER_NAMES:
            self.runner = DASK_RUNNER

    def pipeline_options(self):
        """Beam's PipelineOptions (Beam takes ~3 s to import: the CLI's other commands never pay it)."""
        from apache_beam.options.pipeline_options import DirectOptions, PipelineOptions, StandardOptions

        opts = PipelineOptions(list(self.beam_args))
        if self.runner == DEFAULT_RUNNER:
            direct = opts.view_as(DirectOptions)
            direct.direct_running_mode = self.running_mode
            direct.direct_num_workers = self.num_workers
        elif self.runner == DASK_RUNNER:
            from benchwright.runners.dask import DaskOptions

            if self.dask_address:
                opts.view_as(DaskOptions).address = self.dask_address
        else:
            opts.view_as(StandardOptions).runner = self.runner
        return opts

    def make_runner(self, reads: Sequence[str] = (), writes: str | None = None):
        """The runner to build with; ``reads``, ``writes``: the source and the staging folder, which
        the Dask runner's workers must see as this process does (checked before the pipeline runs)."""
        if self.runner == DEFAULT_RUNNER:
            from apache_beam.runners.portability.fn_api_runner import FnApiRunner

            _serialize_buffer_creation()
            _without_timed_flushes()
            return FnApiRunner()
        if self.runner == DASK_RUNNER:
            try:
                import distributed  # noqa: F401 - the runner's client, imported where it connects
                from benchwright.runners.dask import DaskRunner, check_upstream
            except ImportError as err:
                from benchwright.errors import BenchwrightError

                raise BenchwrightError(f"--runner dask needs dask.distributed ({err}): "
                                       "pip install 'benchwright[dask]'") from None

            check_upstream()  # a Beam whose Dask runner changed is refused before anything runs
            return DaskRunner(reads, writes)
        return None  # Beam builds the runner named in the options

    @property
    def dry_run(self) -> bool:
        """``--dry_run=True``: the runner checks the options and the graph, submits nothing."""
        from apache_beam.options.pipeline_options import TestOptions

        value = self.pipeline_options().view_as(TestOptions).dry_run
        return str(value).lower() not in ("false", "0", "none", "")

    def describe(self) -> dict:
        """The options that shape the output (recorded in the manifest); worker count does not."""
        return {"runner": self.runner, "running_mode": self.running_mode,
                "max_bad_fraction": self.max_bad_fraction, "beam_args": list(self.beam_args),
                "drift_blocking": list(self.drift_blocking)}


def _serialize_buffer_creation() -> None:
    """Make FnApiRunner's output-buffer creation atomic (Beam 2.77 race; idempotent).

    With several workers, FnApiRunner runs a stage's bundles in threads, and
    ``BundleContextManager.get_buffer`` creates a PCollection's buffer with an unguarded
    check-then-set. Two bundles finishing together can each create one; the later replaces the
    earlier, and everything the first bundle wrote is silently dropped. A full-scale WildBox build
    lost 461 frames this way (2 of 345 segments), caught by the count reconciliation. A lock
    around the creation removes the race; it changes nothing else.
    """
    from apache_beam.runners.portability.fn_api_runner import execution

    manager = execution.BundleContextManager
    if not getattr(manager.get_buffer, "_benchwright_locked", False):
        manager.get_buffer = locked(manager.get_buffer)


def _without_timed_flushes() -> None:
    """Turn off the data plane's time-based flush (Beam 2.77 race; idempotent).

    FnApiRunner's gRPC data plane (multi_threading's in-process workers, and the runner's side of
    multi_processing) flushes every output stream from a timer thread once a second, while the
    bundle's thread keeps encoding elements into it, unlocked: a flush can cut an element in two or
    drop what was written between its read and its clear. Two full-scale multi_threading WildBox
    builds out of two lost data this way (a segment's boxes; an element decoded as None), caught by
    the count reconciliation. A batch build needs no latency bound: streams flush by size only.
    """
    from apache_beam.runners.portability.fn_api_runner import worker_handlers

    worker_handlers.DATA_BUFFER_TIME_LIMIT_MS = 0


def locked(method):
    """``method`` with calls serialized by one lock (marked, so it is wrapped only once)."""
    lock = threading.Lock()

    @functools.wraps(method)
    def wrapper(*args, **kwargs):
        with lock:
            return method(*args, **kwargs)

    wrapper._benchwright_locked = True
    return wrapper
