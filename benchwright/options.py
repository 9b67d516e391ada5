"""Build options: which runner, how many workers, the Beam options passed through, the quality bar.

The default runner is Beam's in-process ``FnApiRunner``. We never let Beam pick the implicit
``DirectRunner``: in Beam 2.77 it first tries to download a Prism binary, and there is no network.
``--runner dask`` (or Beam's DaskRunner by name) is Beam's Dask runner with its defects fixed
(``benchwright.runners.dask``), on the dask.distributed scheduler at ``dask_address``.
Any other runner (Dataflow, Flink, Spark, Portable) gets the pass-through options unchanged.
"""
from __future__ import annotations

import argparse
import dataclasses
import functools
import importlib
import os
import threading
from typing import Sequence


DEFAULT_RUNNER = "FnApiRunner"
RUNNING_MODES = ("in_memory", "multi_threading", "multi_processing")
DASK_RUNNER = "DaskRunner"
# names that choose Beam's Dask runner: all of them get the guarded one (benchwright.runners.dask)
DASK_RUNNER_NAMES = ("dask", DASK_RUNNER, "apache_beam.runners.dask.dask_runner.DaskRunner")
# Beam options that benchwright's own options set (``pipeline_options``; the direct ones for the default
# runner only): given to Beam as well, they would be overridden without a word.
_OWN_BEAM_OPTIONS = {"--runner": "--runner", "--direct_running_mode": "--running-mode",
                     "--direct_num_workers": "--workers"}


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
    # replace OUT/<dataset> even when it is not a build of this dataset (benchwright.build.check_target);
    # not recorded: it does not shape the output
    force: bool = False
    # an S3 build lock whose heartbeat is older than this (seconds) belongs to a dead build and may be
    # taken over (benchwright.published.ObjectLock); not recorded: it does not shape the output
    stale_lock_after: float = 300.0
    # decode every image for the statistics and the image check (else each one's header only: its format and
    # size; `benchwright validate` decodes every image whatever the build did)
    decode_images: bool = False
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

    def execution(self, runner) -> dict:
        """Where the pipeline ran (the manifest's ``execution``; the output does not depend on it): the
        runner and its workers. ``runner``: the one ``make_runner`` made and the pipeline ran on (the
        Dask runner knows its cluster once it has run), or None."""
        if self.runner == DEFAULT_RUNNER:  # Beam's direct_num_workers: 0 is one per core
            return {"runner": self.runner, "running_mode": self.running_mode,
                    "workers": self.num_workers or os.cpu_count()}
        return {"runner": self.runner, **(getattr(runner, "cluster", None) or {})}

    def describe(self) -> dict:
        """The options that shape the output (recorded in the manifest); worker count does not."""
        return {"runner": self.runner, "running_mode": self.running_mode,
                "max_bad_fraction": self.max_bad_fraction, "beam_args": list(self.beam_args),
                "drift_blocking": list(self.drift_blocking), "decode_images": self.decode_images}


def beam_parser(runner: str = DEFAULT_RUNNER) -> argparse.ArgumentParser:
    """A parser of every option Beam's ``PipelineOptions`` knows now: each registered options class and the
    named runner's (its module is imported first, as Beam would to make it). Built as Beam's
    ``PipelineOptions.get_all_options`` builds its own, whole option names only. (A dataset's own settings are
    its ``Config``'s, not Beam options: ``benchwright.dataset``.)"""
    from apache_beam.options.pipeline_options import PipelineOptions, _BeamArgumentParser

    _import_runner(runner)
    parser = _BeamArgumentParser(allow_abbrev=False, exit_on_error=False, add_help=False)
    classes: dict[str, type] = {}
    for cls in PipelineOptions.__subclasses__():  # the first of classes defined twice, as Beam does
        classes.setdefault(str(cls), cls)
    for cls in classes.values():
        cls._add_argparse_args(parser)
    return parser


def overridden_beam_option(tokens: Sequence[str], runner: str = DEFAULT_RUNNER) -> tuple[str, str] | None:
    """(Beam option, benchwright's option that sets it) for the first of ``tokens`` that ``pipeline_options``
    would override with ``runner``; None when there is none."""
    for token in tokens:
        name = token.split("=", 1)[0]
        own = _OWN_BEAM_OPTIONS.get(name)
        if own and (name == "--runner" or runner == DEFAULT_RUNNER):
            return name, own
    return None


def not_beam_options(tokens: Sequence[str], runner: str = DEFAULT_RUNNER) -> list[str]:
    """The arguments of ``tokens`` that Beam's ``PipelineOptions`` does not know (``beam_parser``).
    Raises ``argparse.ArgumentError`` for an option Beam knows given a wrong value ("expected one argument")."""
    return beam_parser(runner).parse_known_args(list(tokens))[1]


def _import_runner(runner: str) -> None:
    """Import the module of the runner Beam would make for ``runner`` (a known runner's class name, with
    or without "Runner", or a dotted class path), so its options class is registered; a runner that
    cannot be imported is left for Beam to report when the pipeline is made."""
    from apache_beam.options.pipeline_options import StandardOptions

    known = {path.rsplit(".", 1)[1].lower(): path for path in StandardOptions.ALL_KNOWN_RUNNERS}
    known["dask"] = known["daskrunner"] = DASK_RUNNER_NAMES[-1]  # not among Beam's known runners
    path = known.get(runner.lower(), known.get(runner.lower() + "runner", runner))
    if "." in path:
        try:
            importlib.import_module(path.rsplit(".", 1)[0])
        except ImportError:
            pass


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
