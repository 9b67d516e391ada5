"""Beam's Dask runner on a dask.distributed cluster, made correct: a guarded, version-checked subclass.

Beam 2.77.0's ``apache_beam.runners.dask`` translates a pipeline into dask bags, with four defects
(each with its smallest pipeline in docs/upstream/beam-dask-runner.md):

A. Tagged outputs are mixed: every receiver of a ParDo appends to one shared list and the tag is
   dropped (``transform_evaluator.apply_dofn_to_bundle``), that list is read before ``finish_bundle``
   runs (its outputs are lost), and the visitor keys bags by the producing transform, so every output
   of a multi-output ParDo, and every side input taken from one, gets all of them.
B. Only the last sink runs: ``DaskRunner.run_pipeline`` computes ``list(bags.values())[-1]``.
C. No metrics: ``DaskRunnerResult.metrics()`` raises NotImplementedError, and counters incremented in
   the workers go nowhere (no metrics container is current there).
D. Side inputs are recomputed: ``DaskBagWindowedIterator`` calls ``list(bag)`` inside every consuming
   task, a nested compute that reruns the side input's whole upstream for every bundle.

Also ``Reshuffle`` does nothing (so a ``Create`` of a few hundred units stays one partition, on one
worker), and ``WindowInto`` (a ParDo subclass that has no translation) is silently skipped.

``DaskRunner`` below is Beam's with the parts that carry the defects replaced, each by the smallest
correct change and named in its docstring: a bundle returns (tag, value) pairs and its metric
updates; each output PCollection is a filter-and-pluck of its ParDo's bag; every PCollection nothing
consumes is computed, in one graph, reduced to a count per partition; the metric updates are gathered
from the bundles' results, each bundle's once (a retried task's results replace the lost ones, so
nothing is counted twice); a side input is materialised once, as a task the consuming bundles depend
on; ``Reshuffle`` repartitions; non-global windows and element timestamps are refused. Everything
else (the overrides, Create, Flatten, GroupByKey, the DoFn invoker) is Beam's.

What it relies on and replaces is fingerprinted (``UPSTREAM``): a Beam whose Dask runner differs is
refused (``check_upstream``) and fails the guard's tests (tests/test_dask_runner.py), never patched
blindly. The task graph names this module's functions, so every worker imports it: install
benchwright on the workers (README, "Building on a Dask cluster").
"""
from __future__ import annotations

import collections
import contextlib
import dataclasses
import hashlib
import inspect
import logging
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Sequence

import apache_beam as beam
import dask
import fsspec
from apache_beam import pvalue
from apache_beam.internal import pickler
from apache_beam.metrics.execution import MetricsContainer
from apache_beam.pipeline import PipelineVisitor
from apache_beam.runners.common import DoFnContext, DoFnInvoker, DoFnSignature, Receiver, _OutputHandler
from apache_beam.runners.dask import dask_runner as upstream
from apache_beam.runners.dask import overrides
from apache_beam.runners.dask import transform_evaluator as upstream_ops
from apache_beam.runners.direct.direct_metrics import DirectMetrics
from apache_beam.runners.runner import PipelineState
from apache_beam.runners.worker import statesampler
from apache_beam.transforms.sideinputs import SideInputMap
from apache_beam.utils.counters import CounterFactory

log = logging.getLogger(__name__)
DaskOptions = upstream.DaskOptions

BEAM_VERSION = "2.77.0"  # the release whose Dask runner this module was written against
# sha256 (first 16 hex digits) of the source of what this module replaces or relies on, in Beam 2.77.0
UPSTREAM = {
    "dask_runner.DaskOptions": "f3916bd18dc4e730",
    "dask_runner.DaskRunnerResult": "13ef89cdd21b900a",
    "dask_runner.DaskRunner": "6408cb0d328ef22c",
    "transform_evaluator.get_windowed_value": "6574820307150a00",
    "transform_evaluator.DaskBagWindowedIterator": "d284c61e392f5991",
    "transform_evaluator.TaggingReceiver": "1c0fac3711448fd2",
    "transform_evaluator.OneReceiver": "8eee1e689bb56b61",
    "transform_evaluator.Create": "90b42da5845bb0b0",
    "transform_evaluator.apply_dofn_to_bundle": "126692b449cf1594",
    "transform_evaluator.ParDo": "2e84515c997d43d1",
    "transform_evaluator.GroupByKey": "134f73713f4c508b",
    "transform_evaluator.Flatten": "7155f18823ff3460",
    "overrides._Reshuffle": "326b867f3e0a2de4",
    "overrides._GroupByKey": "a0e10b5a8aea0fb2",
    "overrides._GroupAlsoByWindow": "6ea9b6aaeed38432",
    "overrides.dask_overrides": "9237f69bebf4317f",
}
# the transform classes upstream translates, and how (a changed table is a changed runner)
UPSTREAM_TRANSLATIONS = {"_Create": "Create", "ParDo": "ParDo", "_GroupByKeyOnly": "GroupByKey",
                         "_Flatten": "Flatten"}
_MODULES = {"dask_runner": upstream, "transform_evaluator": upstream_ops, "overrides": overrides}

# the tag a bundle's metric updates travel under beside its outputs: a tuple never equals an output
# tag (Beam's tags are str, the main output's None)
METRICS = ("benchwright", "metric-updates")
# Reshuffle spreads its input over this many partitions per worker thread (unless --dask_npartitions
# asks for more). Each partition adds tasks to every step downstream, and to each GroupByKey's shuffle
# quadratically: a tiny WildBox pipeline on 2 workers is 2,835 tasks with 4 (16.3 CPU-s of scheduler
# and workers), 1,131 with 2 (9.5 CPU-s). With 2, dask's work stealing still moves a waiting partition
# to an idle worker; a slow last partition is half a thread's share.
PARTITIONS_PER_THREAD = 2
# how long a local cluster waits for a lost worker's nanny to bring it back before closing the nanny
LOST_WORKER_TIMEOUT = "10 minutes"
# A local cluster's housekeeping, slower than distributed's defaults: an idle cluster of 2 workers used 2.5
# CPU-s each 30 s (an event-loop tick every 20 ms in each process, the memory monitor every 100 ms, system
# metrics every 500 ms), 0.46 CPU-s with these; the statistical profiler (a stack sample every 10 ms on a
# busy worker) feeds only a dashboard, which a local cluster does not start.
LOCAL_CLUSTER_CONFIG = {
    "distributed.deploy.lost-worker-timeout": LOST_WORKER_TIMEOUT,
    "distributed.admin.tick.interval": "1s",  # only what says an event loop was blocked
    "distributed.admin.system-monitor.interval": "2s",
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.worker.profile.enabled": False,
}


# Where a cluster's shutdown is noisy: distributed's and tornado's loggers (each module's own, such as
# distributed.core or distributed.comm.tcp) and asyncio's (a connection's future nobody awaits any
# more, logged when it is collected).
QUIETED_LOGGERS = ("distributed", "tornado", "asyncio")


class ClosedConnectionNoise(logging.Filter):
    """Drops what a cluster's closing connections log: a CommClosedError, tornado StreamClosedError
    or CancelledError traceback (each comm a client, worker or nanny still held when the scheduler
    went away: ``make test`` ended with ~35 such lines), and lines naming them. What a lost worker
    means for a build is said elsewhere, and kept: the scheduler's warning naming the lost tasks,
    and the build's own error."""

    NAMES = ("CommClosedError", "StreamClosedError", "CancelledError")

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if exc is not None and type(exc).__name__ in self.NAMES:
            return False
        message = record.getMessage() if record.args else str(record.msg)
        return not any(name in message for name in self.NAMES)


class PartitionSizeNote(logging.Filter):
    """Drops upstream's note, logged for every Create, that the default partition size "used to be 1
    in previous DaskRunner versions" (about upstream's history, nothing a build can act on)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "new default partition size" not in str(record.msg)


def quiet_closed_connections() -> None:
    """Installs ``ClosedConnectionNoise`` on every logger of ``QUIETED_LOGGERS`` made so far (importing
    distributed makes its modules') and on their handlers, once per process. A logger's filter sees
    only the records made there, not its children's: distributed's stderr handler, on "distributed",
    writes its modules' records unless the root logger already had a handler when distributed was
    imported (under pytest), and then they go up to the root's (at exit, Python's last-resort stderr)."""
    noise = ClosedConnectionNoise()
    names = [name for name, logger in logging.root.manager.loggerDict.items()
             if isinstance(logger, logging.Logger) and name.split(".", 1)[0] in QUIETED_LOGGERS]
    for name in {*names, *QUIETED_LOGGERS}:
        logger = logging.getLogger(name)
        for target in (logger, *logger.handlers):
            if not any(isinstance(f, ClosedConnectionNoise) for f in target.filters):
                target.addFilter(noise)
    upstream_log = logging.getLogger(upstream_ops.__name__)
    if not any(isinstance(f, PartitionSizeNote) for f in upstream_log.filters):
        upstream_log.addFilter(PartitionSizeNote())


class UpstreamChanged(RuntimeError):
    """The installed Beam's Dask runner is not the one this guard fixes."""


def fingerprint(name: str) -> str:
    module, attr = name.split(".", 1)
    return hashlib.sha256(inspect.getsource(getattr(_MODULES[module], attr)).encode()).hexdigest()[:16]


def changed_upstream() -> list[str]:
    """What differs from the Beam 2.77.0 Dask runner this module fixes (empty: the guard applies)."""
    changed = [name for name, digest in UPSTREAM.items() if fingerprint(name) != digest]
    translations = {k.__name__: v.__name__ for k, v in upstream_ops.TRANSLATIONS.items()}
    if translations != UPSTREAM_TRANSLATIONS:
        changed.append("transform_evaluator.TRANSLATIONS")
    return changed


def check_upstream() -> None:
    """Refuses to run on a Beam whose Dask runner differs from the one the fixes were written for."""
    changed = changed_upstream()
    if changed:
        raise UpstreamChanged(
            f"Beam {beam.__version__}'s Dask runner differs from Beam {BEAM_VERSION}'s, which "
            f"benchwright.runners.dask fixes ({', '.join(changed)} changed): re-check each defect of "
            "docs/upstream/beam-dask-runner.md against it and update the guard before building on it")
    if beam.__version__ != BEAM_VERSION:
        log.info("Beam %s's Dask runner is Beam %s's (same source): the guard applies", beam.__version__,
                 BEAM_VERSION)


# ---------------------------------------------------------------------------------------------
# What runs in the workers


@dataclasses.dataclass(frozen=True)
class Bundle:
    """What a task needs to run one partition of a ParDo as a bundle (in the graph once per ParDo)."""

    step: str  # the transform's full label: the metrics' step
    label: str
    fn: bytes  # the DoFn, pickled: each bundle unpickles its own instance (tasks may share a worker)
    args: tuple
    kwargs: dict
    window_fn: Any
    side_views: tuple  # (view class, view options) of each side input, in order


class _TaggingReceiver(Receiver):
    def __init__(self, tag, outputs: list):
        self.tag, self.outputs = tag, outputs

    def receive(self, windowed_value):
        self.outputs.append((self.tag, windowed_value.value))


class _Receivers(dict):
    """tag -> a receiver appending (tag, value) to the bundle's one output list."""

    def __init__(self, outputs: list):
        super().__init__()
        self.outputs = outputs

    def __missing__(self, tag):
        receiver = self[tag] = _TaggingReceiver(tag, self.outputs)
        return receiver


def run_bundle(items, bundle: Bundle, *side_values) -> list:
    """Replaces ``transform_evaluator.apply_dofn_to_bundle`` (defects A, C, D).

    Upstream's receivers append every output, main or tagged, to one list and it returns the bare
    values, read before ``finish_bundle``. Here each output is a (tag, value) pair, collected until
    after ``finish_bundle``; the bundle runs in a metrics container of its own (made current through
    Beam's state sampler, as Beam's direct runner does), whose updates are the last pair, under
    ``METRICS``; and ``side_values`` are the side inputs' materialised values (dask computes them once
    and hands them to every bundle), not bags computed again inside the task."""
    outputs: list = []
    receivers = _Receivers(outputs)
    container = MetricsContainer(bundle.step)
    sampler = statesampler.StateSampler(bundle.step, CounterFactory())
    previous = statesampler.get_current_tracker()
    statesampler.set_current_tracker(sampler)
    try:
        with sampler.scoped_state(bundle.step, "process", metrics_container=container):
            side_inputs = [SideInputMap(view, options, [upstream_ops.get_windowed_value(v, None) for v in values])
                           for (view, options), values in zip(bundle.side_views, side_values)]
            handler = _OutputHandler(window_fn=bundle.window_fn, main_receivers=receivers[None],
                                     tagged_receivers=receivers, per_element_output_counter=None,
                                     output_batch_converter=None, process_yields_batches=False,
                                     process_batch_yields_elements=False)
            signature = _take_dofn(bundle)
            new = signature is None
            if new:
                signature = DoFnSignature(pickler.loads(bundle.fn))
            invoker = DoFnInvoker.create_invoker(
                signature, handler, context=DoFnContext(bundle.label, state=None),
                side_inputs=side_inputs, input_args=list(bundle.args), input_kwargs=dict(bundle.kwargs),
                user_state_context=None, bundle_finalizer_param=beam.DoFn.BundleFinalizerParam())
            if new:
                invoker.invoke_setup()
            invoker.invoke_start_bundle()
            for item in items:
                invoker.invoke_process(upstream_ops.get_windowed_value(item, bundle.window_fn))
            invoker.invoke_finish_bundle()
            _keep_dofn(bundle, signature)  # only after a bundle that succeeded
    finally:
        statesampler.set_current_tracker(previous)
    outputs.append((METRICS, container.get_cumulative()))
    return outputs


_THREAD = threading.local()
KEPT_DOFNS = 256  # DoFn instances a worker thread keeps (a long-lived cluster runs many pipelines)


def _take_dofn(bundle: Bundle):
    """This worker thread's set-up instance of ``bundle``'s DoFn (its signature), or None: made, set up
    and kept (``_keep_dofn``) by the first bundle. Beam's own workers keep a DoFn instance for many
    bundles; upstream unpickled, inspected, set up and tore down one per partition (~20 ms each,
    hundreds per build). Taken out while a bundle runs: one that fails is not reused."""
    kept = getattr(_THREAD, "dofns", None)
    return kept.pop((bundle.step, bundle.fn), None) if kept is not None else None


def _keep_dofn(bundle: Bundle, signature) -> None:
    kept = getattr(_THREAD, "dofns", None)
    if kept is None:
        kept = _THREAD.dofns = collections.OrderedDict()
    kept[(bundle.step, bundle.fn)] = signature
    while len(kept) > KEPT_DOFNS:  # the least recently used goes, torn down
        kept.popitem(last=False)[1].teardown_lifecycle_method.method_value()


def output_of(pairs, tag) -> list:
    """The values of one output of a ParDo bundle (its (tag, value) pairs)."""
    return [value for t, value in pairs if t == tag]


def metric_updates(pairs) -> list:
    return output_of(pairs, METRICS)


def materialise(*partitions) -> list:
    """A side input's values: its bag's partitions, in order, as one list."""
    return [value for partition in partitions for value in partition]


def count(partition) -> list:
    """A sink's partition reduced to its length: computing it runs everything upstream, and nothing
    but the count reaches the driver."""
    return [sum(1 for _ in partition)]


# ---------------------------------------------------------------------------------------------
# The translation (in the driver)


class ParDo(upstream_ops.ParDo):
    def apply(self, input_bag, side_inputs=None):
        """Replaces ``transform_evaluator.ParDo.apply`` (defects A, D): the bag of a ParDo is its
        bundles' (tag, value) pairs (``run_bundle``); ``side_inputs`` are delayed values (one task
        each, see ``BagVisitor.side_value``), passed so that dask resolves them before the bundle."""
        transform = self.transform
        args, kwargs = transform.raw_side_inputs
        main_input = next(iter(self.applied.main_inputs.values()))
        window_fn = main_input.windowing.windowfn if hasattr(main_input, "windowing") else None
        bundle = Bundle(step=self.applied.full_label, label=transform.label, fn=pickler.dumps(transform.fn),
                        args=tuple(args), kwargs=dict(kwargs), window_fn=window_fn,
                        side_views=tuple((type(si), si._view_options()) for si in transform.side_inputs))
        return input_bag.map_partitions(run_bundle, bundle, *(side_inputs or ()))


def group_key(item):
    return item[0]


def grouped_values(item):
    key, values = item
    return key, [upstream_ops.defenestrate(value[1]) for value in values]


class GroupByKey(upstream_ops.GroupByKey):
    def apply(self, input_bag, side_inputs=None):
        """Replaces ``transform_evaluator.GroupByKey.apply``: the same grouping, with dask's task-based
        shuffle named. Upstream leaves the choice to dask, which picks it on a cluster too, but imports
        dask.dataframe to decide (1-2 s on the driver); and a dask config saying "disk" would make the
        shuffle in each host's own local files."""
        return input_bag.groupby(group_key, shuffle="tasks").map(grouped_values)


class Reshuffle(upstream_ops.DaskBagOp):
    """``Reshuffle`` (upstream: no translation, a no-op): the input spread over ``npartitions``
    partitions, so its elements reach every worker (a bag's partition runs on one worker)."""

    def __init__(self, applied, bag_kwargs=None, npartitions: int = 1):
        super().__init__(applied, bag_kwargs or {})
        self.npartitions = npartitions

    def apply(self, input_bag, side_inputs=None):
        if input_bag.npartitions >= self.npartitions:
            return input_bag
        return input_bag.repartition(npartitions=self.npartitions)


class Identity(upstream_ops.NoOp):
    """A transform whose work is already done: ``_GroupAlsoByWindow`` (the GroupByKey translation
    strips the windows) and ``WindowInto`` into the global window."""


class BagVisitor(PipelineVisitor):
    """Replaces ``DaskRunner.to_dask_bag_visitor``'s visitor (defects A, D; Reshuffle, WindowInto).

    Upstream keys bags by the producing transform, so every output of a ParDo, and a side input from
    any of them, is the same bag. Here bags are keyed by PCollection: a ParDo's outputs are each a
    filter-and-pluck (``output_of``) of its bag of pairs, kept in ``bundles`` for their metric updates.
    A side input is one delayed value per PCollection (``side_value``). A transform with no
    translation is refused, where upstream passed its input through unchanged."""

    def __init__(self, bag_kwargs: dict, reshuffle_partitions: int):
        self.bag_kwargs = bag_kwargs
        self.reshuffle_partitions = reshuffle_partitions
        self.bags: dict = {}  # PCollection -> its bag
        self.consumed: set = set()  # PCollections some transform reads (as main or side input)
        self.bundles: list = []  # each ParDo's bag of (tag, value) pairs
        self._side_values: dict = {}

    def visit_transform(self, node) -> None:
        refuse_windows_and_timestamps(node)
        transform = node.transform
        inputs = [self.bags[pc] if isinstance(pc, pvalue.PCollection) else None for pc in node.inputs]
        self.consumed.update(pc for pc in node.inputs if isinstance(pc, pvalue.PCollection))
        self.consumed.update(si.pvalue for si in node.side_inputs)
        if isinstance(transform, overrides._Flatten):
            bag = upstream_ops.Flatten(node, bag_kwargs=self.bag_kwargs).apply(inputs)
        elif isinstance(transform, overrides._Create):
            bag = upstream_ops.Create(node, bag_kwargs=self.bag_kwargs).apply(None)
        elif isinstance(transform, overrides._GroupByKeyOnly):
            bag = GroupByKey(node, bag_kwargs=self.bag_kwargs).apply(inputs[0])
        elif isinstance(transform, overrides._Reshuffle):
            bag = Reshuffle(node, self.bag_kwargs, self.reshuffle_partitions).apply(inputs[0])
        elif isinstance(transform, (overrides._GroupAlsoByWindow, beam.WindowInto)):
            bag = Identity(node).apply(inputs[0])
        elif isinstance(transform, beam.ParDo):
            pairs = ParDo(node, bag_kwargs=self.bag_kwargs).apply(
                inputs[0], [self.side_value(si.pvalue) for si in node.side_inputs])
            self.bundles.append(pairs)
            for tag, pcoll in node.outputs.items():
                self.bags[pcoll] = pairs.map_partitions(output_of, tag)
            return
        else:
            raise NotImplementedError(f"{node.full_label}: {type(transform).__name__} has no translation on the "
                                      f"Dask runner (benchwright.runners.dask)")
        for pcoll in node.outputs.values():
            self.bags[pcoll] = bag

    def side_value(self, pcoll):
        """The materialised values of ``pcoll`` as one task (made once, whoever reads it)."""
        if pcoll not in self._side_values:
            parts = self.bags[pcoll].to_delayed(optimize_graph=False)
            self._side_values[pcoll] = dask.delayed(materialise, pure=True)(*parts)
        return self._side_values[pcoll]

    def sinks(self) -> list:
        """Every PCollection nothing consumes, reduced to a count per partition."""
        return [bag.map_partitions(count) for pcoll, bag in self.bags.items() if pcoll not in self.consumed]


def refuse_windows_and_timestamps(node) -> None:
    """The translation carries neither windows nor timestamps between steps (every element is in the
    global window at time 0): a pipeline that windows, triggers or reads element timestamps is
    refused, where upstream ignored ``WindowInto`` and gave a ``TimestampParam`` 0."""
    transform = node.transform
    if isinstance(transform, beam.WindowInto) and not transform.windowing.is_default():
        raise NotImplementedError(f"{node.full_label}: the Dask runner runs the global window only "
                                  f"(default trigger); this pipeline windows into {transform.windowing}")
    # GroupByKey's own ReifyWindows reads them to pair each value with its window, which the grouping strips
    if isinstance(transform, beam.ParDo) and not isinstance(transform.fn, beam.GroupByKey.ReifyWindows):
        if beam.DoFn.TimestampParam in transform.fn.get_function_arguments("process")[1]:
            raise NotImplementedError(f"{node.full_label}: the Dask runner does not carry element timestamps; "
                                      "this DoFn reads them (DoFn.TimestampParam)")


@dataclasses.dataclass
class DaskRunnerResult(upstream.DaskRunnerResult):
    """Upstream's result, with the bundles' metric updates (defect C)."""

    metric_futures: Sequence = ()
    _metrics: DirectMetrics | None = dataclasses.field(default=None, init=False)

    def wait_until_finish(self, duration=None) -> str:
        """Replaces ``DaskRunnerResult.wait_until_finish``: waits for the sinks (each a list of counts)
        and gathers the bundles' metric updates, each bundle's once; on failure cancels what is left,
        and closes the client either way."""
        import dask.distributed as ddist

        metric_keys = {f.key for f in self.metric_futures}
        metrics = DirectMetrics()
        try:
            timeout = duration / 1000 if duration is not None else None
            for future, result in ddist.as_completed([*self.futures, *self.metric_futures], timeout=timeout,
                                                     with_results=True):
                if future.key in metric_keys:
                    for updates in result:
                        metrics.commit_logical(None, updates)
                        metrics.commit_physical(None, updates)
            self._metrics = metrics
            self._state = PipelineState.DONE
        except BaseException:
            self._state = PipelineState.FAILED
            self.client.cancel([*self.futures, *self.metric_futures], force=True)
            _wait_for_running_tasks(self.client)
            raise
        finally:
            self.client.close()
        return self._state

    def metrics(self):
        """Replaces ``DaskRunnerResult.metrics`` (upstream: NotImplementedError): the counters,
        distributions and gauges the bundles returned beside their outputs."""
        if self._metrics is None:
            raise RuntimeError("the metrics are known once the pipeline has finished (wait_until_finish)")
        return self._metrics


def _executing(dask_worker) -> int:
    return len(dask_worker.state.executing)


def _wait_for_running_tasks(client, timeout: float = 60.0) -> None:
    """After a failure, until no worker runs a task (up to ``timeout`` s): dask cannot stop a running
    task, and one still writing into the staged build after the build has removed it would leave files
    there. (A cluster busy with other work only delays this by ``timeout``.)"""
    deadline = time.monotonic() + timeout
    try:
        while any(client.run(_executing).values()) and time.monotonic() < deadline:
            time.sleep(0.2)
    except Exception as err:  # noqa: BLE001 - the pipeline's own failure is the one to report
        log.warning("could not wait for the cluster's running tasks: %s", err)


class DaskRunner(upstream.DaskRunner):
    """Beam's DaskRunner with defects A-D fixed (see the module docstring). ``reads`` and ``writes``:
    the URLs the pipeline reads and the folder it writes into, which every worker must see as the
    driver does (``check_workers_share``)."""

    def __init__(self, reads: Sequence[str] = (), writes: str | None = None):
        super().__init__()
        self.reads, self.writes = tuple(reads), writes
        self.cluster: dict | None = None  # the cluster the pipeline ran on (the build's manifest)

    def run_pipeline(self, pipeline, options):
        """Replaces ``DaskRunner.run_pipeline`` (defect B): computes every PCollection nothing consumes
        and every ParDo's metric updates, in one graph, instead of the last bag only (which upstream
        also gathered whole to the driver)."""
        check_upstream()
        import dask.distributed as ddist

        dask_options = options.view_as(upstream.DaskOptions).get_all_options(drop_default=True, current_only=True)
        bag_kwargs = upstream.DaskOptions._extract_bag_kwargs(dask_options)
        client = ddist.Client(**dask_options)
        try:
            if self.writes is not None:
                check_workers_share(client, self.reads, self.writes)
            nthreads = client.nthreads()
            threads = sum(nthreads.values())
            self.cluster = {"scheduler": client.scheduler.address, "workers": len(nthreads), "threads": threads}
            spread = max(bag_kwargs.get("npartitions") or 0, PARTITIONS_PER_THREAD * max(1, threads))
            sinks, metrics = translate(pipeline, bag_kwargs, spread)
            # one graph: computations submitted apart would be optimised (fused, renamed) apart, and
            # the steps they share computed twice
            futures = client.compute([*sinks, *metrics])
        except BaseException:
            client.close()
            raise
        return DaskRunnerResult(client, futures[:len(sinks)], futures[len(sinks):])


def translate(pipeline, bag_kwargs: dict, spread: int) -> tuple[list, list]:
    """``pipeline`` as dask collections: (every PCollection nothing consumes, as counts per partition;
    every ParDo's metric updates, per partition). ``spread``: the partitions a Reshuffle makes."""
    pipeline.replace_all(overrides.dask_overrides())
    visitor = BagVisitor(bag_kwargs, spread)
    pipeline.visit(visitor)
    return visitor.sinks(), [pairs.map_partitions(metric_updates) for pairs in visitor.bundles]


def graph_tasks(pipeline, spread: int, bag_kwargs: dict | None = None) -> int:
    """How many tasks ``pipeline`` is on a cluster whose Reshuffles spread over ``spread`` partitions
    (2 per worker thread): the graph the scheduler receives, after dask's optimisation (what the
    scheduler holds, and what a bigger cluster multiplies). Nothing runs."""
    sinks, metrics = translate(pipeline, bag_kwargs or {}, spread)
    return len(dask.base.collections_to_expr([*sinks, *metrics], optimize_graph=True).optimize().__dask_graph__())


def check_workers_share(client, reads: Sequence[str], writes: str) -> None:
    """Every worker of ``client``'s cluster reads what the driver wrote in ``writes``' folder and finds
    each of ``reads``: the workers read the source and write the pipeline's files themselves, and the
    driver then reads those files. A worker on another host with its own disk, or started without the
    object store's endpoint or credentials, is named here, before anything runs."""
    import benchwright
    from benchwright.errors import BuildError

    folder = writes.rstrip("/").rsplit("/", 1)[0]
    token = uuid.uuid4().hex
    marker = f"{folder}/.benchwright-worker-check-{token}"
    fs, folder_path = fsspec.core.url_to_fs(folder)
    fs.makedirs(folder_path, exist_ok=True)
    fs.pipe_file(f"{folder_path}/{marker.rsplit('/', 1)[1]}", token.encode())
    # a default shipped in the package (WordEval's catalogue) is each worker's own installed copy
    package = Path(benchwright.__file__).resolve().parent
    reads = [url for url in reads if "://" in url or not Path(url).resolve().is_relative_to(package)]
    try:
        seen = client.run(_sees, marker, token, reads)
    finally:
        fs.rm_file(f"{folder_path}/{marker.rsplit('/', 1)[1]}")
    problems = {worker: problem for worker, problem in seen.items() if problem}
    if problems:
        raise BuildError(
            "the Dask cluster's workers must see the source and the output as this machine does "
            "(one object store with its endpoint and credentials in each worker's environment, or "
            "one shared file system; README, \"Building on a Dask cluster\"):\n  "
            + "\n  ".join(f"{worker}: {problem}" for worker, problem in sorted(problems.items())))


def _sees(marker: str, token: str, reads: list) -> str | None:
    """On a worker: what it cannot see of the build's storage, or None."""
    try:
        fs, path = fsspec.core.url_to_fs(marker)
        if fs.cat_file(path) != token.encode():
            return f"{marker} holds something else here"
    except Exception as err:  # noqa: BLE001 - any failure to read it is the answer
        return f"cannot read {marker}, written by the driver: {type(err).__name__}: {err}"
    for url in reads:
        try:
            fs, path = fsspec.core.url_to_fs(url)
            if not fs.exists(path):
                return f"cannot find the source {url}"
        except Exception as err:  # noqa: BLE001
            return f"cannot read the source {url}: {type(err).__name__}: {err}"
    return None


@contextlib.contextmanager
def local_cluster(n_workers: int):
    """A dask.distributed cluster of ``n_workers`` processes on 127.0.0.1, one thread each (a build's
    Python work holds the GIL: processes, not threads, use the cores), closed on exit; yields the
    scheduler's address. The workers inherit this process's environment (the object store's endpoint
    and credentials).

    A worker process that dies (killed, out of memory) is restarted by its nanny; but the cluster also
    closes the nanny of a worker the scheduler lost, unless one of that name is back within
    ``distributed.deploy.lost-worker-timeout`` (15 s by default): on a loaded machine a new worker
    process takes longer to start, and the cluster was left a worker short for good. It is raised
    for the cluster's life, with slower housekeeping (``LOCAL_CLUSTER_CONFIG``): the workers' nannies pass it on."""
    import distributed

    with dask.config.set(LOCAL_CLUSTER_CONFIG):
        cluster = distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                                           host="127.0.0.1", dashboard_address=None)
        try:
            yield cluster.scheduler_address
        finally:
            cluster.close()


try:  # distributed configures its loggers when imported: the driver's and every worker's
    import distributed  # noqa: F401
except ImportError:  # options.make_runner says what to install
    pass
else:
    quiet_closed_connections()
