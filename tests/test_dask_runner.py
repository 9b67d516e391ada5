"""A real distributed engine: Beam's Dask runner, with benchwright's guard (benchwright/runners/dask.py),
on a dask.distributed cluster of two worker processes started here (scheduler and workers on
127.0.0.1, one cluster for this file: ``make test`` runs a file in one pytest-xdist worker).

- the primitives probe: one pipeline with every primitive the builds use, each branch writing what it
  saw; it passes on the guarded runner and fails on Beam's own on each of the four defects;
- every dataset's tiny source built on the cluster, two to the local S3 server and two to a local
  folder, byte-identical to the in-process build, with the same counts;
- a worker SIGKILLed in the middle of a build (WildBox, to S3; by a worker plugin, as the first worker to start
  its third bundle starts it): dask reruns what it lost and the build
  publishes the same bytes with the same counts (its tasks are deterministic, their files are written whole under
  the same names, and the counters travel with the results that replace the lost ones);
- the guard's own checks: it matches the installed Beam, and a changed Beam is refused.
"""
from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import time
from pathlib import Path

import apache_beam as beam
import fsspec
import pytest
from apache_beam.metrics import Metrics
from apache_beam.metrics.metric import MetricsFilter
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.transforms.window import GlobalWindow
from apache_beam.utils.timestamp import MIN_TIMESTAMP
from apache_beam.utils.windowed_value import WindowedValue

from benchwright import published, registry
from benchwright.build import build
from benchwright.cli import main as cli_main
from benchwright.options import BuildOptions
from benchwright.runners import dask as guard
from tests.quality_builds import tiny_build
from tests.test_object_storage import BUCKET, _remote_hashes, s3_endpoint  # noqa: F401 (fixture)
from tests.wildbox_helpers import published_hashes

distributed = pytest.importorskip("distributed")

N = 40  # the probe's elements: 0..39, 20 even (main output), 20 odd (tagged "odd")


# What the builds' tasks import (Beam; by dataset HF datasets, open3d and OpenCV, magika and onnxruntime,
# torch and WordLlama, rapidfuzz): each spawned worker imported them itself, and the worker the kill test's
# nanny starts again too (about 10 CPU-s a worker). Workers forked from one forkserver that imported them
# once share them. A name that fails to import is skipped by the forkserver (only slower).
WORKER_PRELOAD = ["apache_beam", "benchwright.runners.dask", "benchwright.registry", "datasets", "pyarrow.parquet",
                  "pandas", "s3fs", "open3d", "cv2", "magika", "onnxruntime", "networkx", "pypdf", "docx",
                  "torch", "skimage", "wordllama", "rapidfuzz"]


@contextlib.contextmanager
def forked_workers(preload: list[str]):
    """Worker processes forked from a forkserver that has imported ``preload``, not spawned afresh; on
    exit the forkserver is stopped and waited for, so its CPU and its workers' is charged to this file."""
    import multiprocessing
    import multiprocessing.forkserver

    import dask
    from distributed.utils import get_mp_context

    # (the profiler that sampled each worker's stack every 10 ms: off in every local cluster, LOCAL_CLUSTER_CONFIG)
    with dask.config.set({"distributed.worker.multiprocessing-method": "forkserver"}):
        # a forkserver an earlier test file in this worker started (test_faults') has neither this preload nor
        # the S3 server's environment (a worker forked from it could not read the store): a fresh one
        multiprocessing.forkserver._forkserver._stop()
        get_mp_context()  # distributed's own preload (distributed and its dependencies), then ours
        multiprocessing.get_context("forkserver").set_forkserver_preload(
            [*multiprocessing.forkserver._forkserver._preload_modules, *preload])
        try:
            yield
        finally:
            multiprocessing.forkserver._forkserver._stop()


@pytest.fixture(scope="module")
def cluster(s3_endpoint):  # noqa: F811 - the S3 server's environment first: the workers inherit it
    with forked_workers(WORKER_PRELOAD), guard.local_cluster(2) as address:
        client = distributed.Client(address)
        try:
            yield client
        finally:
            client.close()
            # a client left open (Beam's own DaskRunner never closes its one) would keep reconnecting
            # to the closed cluster and log CommClosedError tracebacks at exit
            while True:
                try:
                    distributed.default_client().close()
                except ValueError:  # no client left
                    break


# ---------------------------------------------------------------------------------------------
# The primitives probe


class SplitByParity(beam.DoFn):
    """Evens to the main output, odds to "odd"; each bundle's size to "bundles" from finish_bundle."""

    def setup(self):
        self.split = Metrics.counter("probe", "split")

    def start_bundle(self):
        self.size = 0

    def process(self, x):
        self.split.inc()
        self.size += 1
        yield beam.pvalue.TaggedOutput("odd", x) if x % 2 else x

    def finish_bundle(self):
        yield beam.pvalue.TaggedOutput("bundles", WindowedValue(self.size, MIN_TIMESTAMP, [GlobalWindow()]))


class Record(beam.DoFn):
    """Appends each element (as JSON, with this process's pid) to ``folder/name.jsonl``; passes it on."""

    def __init__(self, folder: str, name: str):
        self.path = os.path.join(folder, f"{name}.jsonl")

    def process(self, element, *side):
        line = json.dumps({"pid": os.getpid(), "element": element, "side": [sorted(s) for s in side]}) + "\n"
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            os.write(fd, line.encode())  # one write per line: whole lines from every process
        finally:
            os.close(fd)
        yield element


def _mod3_key(x):
    return f"k{x % 3}"


def probe_pipeline(p, folder: str) -> None:
    """Applied in an order that leaves upstream's one computed bag (the last) the most telling:
    the main output, read with a side input taken from the "odd" output."""
    out = (p | beam.Create(range(N)) | beam.Reshuffle()
           | "Split" >> beam.ParDo(SplitByParity()).with_outputs("odd", "bundles", main="main"))
    evens, odds = out.main, out.odd
    keyed = evens | "Key" >> beam.Map(lambda x: (_mod3_key(x), x))
    keyed | "Group" >> beam.GroupByKey() | "Groups" >> beam.ParDo(Record(folder, "groups"))
    keyed | "Sum" >> beam.CombinePerKey(sum) | "Sums" >> beam.ParDo(Record(folder, "sums"))
    ((evens, odds) | beam.Flatten() | beam.combiners.Count.Globally()
     | "Flattened" >> beam.ParDo(Record(folder, "flattened")))
    out.bundles | "Bundles" >> beam.ParDo(Record(folder, "bundles"))
    side = odds | "SideRuns" >> beam.ParDo(Record(folder, "side_runs"))
    evens | "Main" >> beam.ParDo(Record(folder, "main"), beam.pvalue.AsList(side))


def read_records(folder: Path, name: str) -> list[dict]:
    path = folder / f"{name}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def run_probe(runner, address: str, folder: Path) -> dict[str, bool]:
    """Every check of the probe: True when that branch ran and gave the right result."""
    options = PipelineOptions([f"--dask_client_address={address}", "--dask_npartitions=2"])
    p = beam.Pipeline(runner=runner, options=options)
    probe_pipeline(p, str(folder))
    result = p.run()
    result.wait_until_finish()
    try:
        counters = {c.key.metric.name: c.committed for c in result.metrics().query(MetricsFilter())["counters"]}
    except NotImplementedError:
        counters = None
    if hasattr(result, "client"):
        result.client.close()
    main, side_runs = read_records(folder, "main"), read_records(folder, "side_runs")
    groups = {r["element"][0]: sorted(r["element"][1]) for r in read_records(folder, "groups")}
    expected_groups = {_mod3_key(k): [x for x in range(0, N, 2) if x % 3 == k] for k in range(3)}
    names = ("main", "side_runs", "groups", "sums", "flattened", "bundles")
    return {
        "several sinks": all((folder / f"{n}.jsonl").exists() for n in names),
        "tagged outputs": sorted(r["element"] for r in main) == list(range(0, N, 2)),
        "side input from a tagged output": bool(main) and all(r["side"] == [list(range(1, N, 2))] for r in main),
        "side input computed once": sorted(r["element"] for r in side_runs) == list(range(1, N, 2)),
        "counters": counters == {"split": N},
        "GroupByKey on string keys": len(read_records(folder, "groups")) == 3 and groups == expected_groups,
        "CombinePerKey": sorted(tuple(r["element"]) for r in read_records(folder, "sums"))
        == sorted((k, sum(v)) for k, v in expected_groups.items()),
        "Flatten": [r["element"] for r in read_records(folder, "flattened")] == [N],
        "finish-bundle outputs": sum(r["element"] for r in read_records(folder, "bundles")) == N,
        # 2 partitions from Create, spread over PARTITIONS_PER_THREAD per worker thread (which worker
        # runs each is dask's choice: tasks this small are not worth moving to the idle one)
        "Reshuffle": len(read_records(folder, "bundles")) == guard.PARTITIONS_PER_THREAD * 2,
    }


def test_the_primitives_probe_passes_on_the_guarded_runner(cluster, tmp_path):
    checks = run_probe(guard.DaskRunner(), cluster.scheduler.address, tmp_path)
    assert [name for name, ok in checks.items() if not ok] == []


def test_the_probe_catches_each_defect_of_beams_own_dask_runner(cluster, tmp_path):
    from apache_beam.runners.dask.dask_runner import DaskRunner

    failed = {name for name, ok in run_probe(DaskRunner(), cluster.scheduler.address, tmp_path).items() if not ok}
    # A: outputs mixed (odds and the side input's evens reach the main output's reader); B: one sink
    # computed; C: no metrics. (D, below: which runs of a side input dask shares is a matter of timing.)
    assert {"tagged outputs", "side input from a tagged output", "several sinks", "counters"} <= failed


def side_input_pipeline():
    from apache_beam.runners.dask.overrides import dask_overrides

    p = beam.Pipeline()
    side = p | "Side" >> beam.Create(range(3)) | "Runs" >> beam.Map(str)
    main = p | "Main" >> beam.Create(range(4))
    uses = [main | f"Use{i}" >> beam.Map(lambda x, s: x, beam.pvalue.AsList(side)) for i in (1, 2)]
    uses | beam.Flatten() | "Sink" >> beam.Map(str)
    p.replace_all(dask_overrides())
    return p


def keys(bag) -> set:
    return set(bag.__dask_graph__().keys())


def test_a_side_input_is_one_task_its_readers_depend_on():
    """D: upstream's reading tasks hold the side input's bag and compute it themselves (a compute
    outside the graph, once per reading task unless dask happens to share it); here its values are
    one task (``materialise``) in the graph, which every reading task depends on."""
    from apache_beam.runners.dask.dask_runner import DaskRunner

    def nodes(p):
        found = {}
        p.visit(type("Labels", (beam.pipeline.PipelineVisitor,), {
            "visit_transform": lambda self, node: found.setdefault(node.full_label, node)})())
        return found

    p = side_input_pipeline()
    upstream = DaskRunner.to_dask_bag_visitor()
    p.visit(upstream)
    at = nodes(p)
    side, readers = upstream.bags[at["Runs"]], [upstream.bags[at[f"Use{i}"]] for i in (1, 2)]
    assert all(not keys(side) & keys(reader) for reader in readers)

    p = side_input_pipeline()
    guarded = guard.BagVisitor({}, 1)
    p.visit(guarded)
    at = nodes(p)
    side = guarded.bags[at["Runs"].outputs[None]]
    readers = [guarded.bags[at[f"Use{i}"].outputs[None]] for i in (1, 2)]
    materialised = {k for reader in readers for k in keys(reader) if str(k).startswith("materialise")}
    assert len(materialised) == 1 and all(keys(side) <= keys(reader) for reader in readers)


class FailsOnThree(beam.DoFn):
    def process(self, x):
        if x == 3:
            raise ValueError("element 3 is bad")
        time.sleep(0.5)  # the other bundles are still running when it fails
        yield x


def test_a_failing_bundle_fails_the_pipeline_and_nothing_is_left_running(cluster):
    p = beam.Pipeline(runner=guard.DaskRunner(), options=PipelineOptions(
        [f"--dask_client_address={cluster.scheduler.address}"]))
    p | beam.Create(range(8)) | beam.Reshuffle() | beam.ParDo(FailsOnThree()) | beam.Map(str)
    with pytest.raises(ValueError, match="element 3 is bad"):
        p.run().wait_until_finish()
    assert not any(cluster.run(guard._executing).values())


def test_the_local_clusters_workers_run_with_its_slower_housekeeping(cluster):
    """``local_cluster``'s config reaches each worker process through its nanny (the profiler off, the ticks
    and monitors slower: an idle cluster costs a fifth of the CPU)."""
    import dask

    seen = cluster.run(lambda: {k: dask.config.get(k) for k in guard.LOCAL_CLUSTER_CONFIG})
    assert len(seen) == 2 and all(v == guard.LOCAL_CLUSTER_CONFIG for v in seen.values()), seen


# ---------------------------------------------------------------------------------------------
# The guard's own checks (no cluster)


def test_the_guard_matches_the_installed_beams_dask_runner():
    """Fails loudly on a Beam whose Dask runner changed: re-check docs/upstream/beam-dask-runner.md."""
    assert guard.changed_upstream() == [], (
        f"Beam {beam.__version__}'s Dask runner is not the one benchwright/runners/dask.py fixes")


def test_a_changed_upstream_is_refused_before_anything_runs(monkeypatch):
    monkeypatch.setitem(guard.UPSTREAM, "transform_evaluator.apply_dofn_to_bundle", "0" * 16)
    with pytest.raises(guard.UpstreamChanged, match="apply_dofn_to_bundle"):
        BuildOptions(runner="dask").make_runner()


@pytest.mark.parametrize("transform, refused", [
    (beam.WindowInto(beam.window.FixedWindows(10)), "windows into"),
    (beam.Map(lambda x, t=beam.DoFn.TimestampParam: (x, t)), "TimestampParam"),
])
def test_windows_and_timestamps_are_refused(transform, refused):
    from apache_beam.runners.dask.overrides import dask_overrides

    p = beam.Pipeline()
    p | beam.Create([1, 2]) | transform | beam.Map(str)
    p.replace_all(dask_overrides())
    with pytest.raises(NotImplementedError, match=refused):
        p.visit(guard.BagVisitor({}, 1))


def _record(logger: str, message: str, exc: BaseException | None = None) -> logging.LogRecord:
    return logging.getLogger(logger).makeRecord(logger, logging.ERROR, __file__, 0, message, None,
                                                (type(exc), exc, None) if exc else None)


def test_closing_connections_are_quiet_and_real_errors_are_not():
    """``make test`` ended with ~35 lines of CommClosedError and CancelledError tracebacks, logged
    by distributed's modules through its stderr handler and by asyncio while a cluster closed."""
    import asyncio

    from distributed.comm.core import CommClosedError

    for name in ("distributed.core", "distributed.comm.tcp", "distributed.worker", "distributed.client",
                 "distributed.batched", "tornado.application"):
        logger = logging.getLogger(name)  # where each record is made (and filtered)
        assert not logger.filter(_record(name, "Exception while handling op", CommClosedError("Stream is closed")))
        assert logger.filter(_record(name, "Exception while handling op", ValueError("a real error")))
    assert not logging.getLogger("distributed.worker").filter(_record(
        "distributed.worker", "Async instruction for <Task cancelled> ended with CancelledError"))
    never_retrieved = _record("asyncio", "Future exception was never retrieved", asyncio.CancelledError())
    assert not logging.getLogger("asyncio").filter(never_retrieved)
    assert logging.getLogger("asyncio").filter(_record("asyncio", "Task exception", OSError("disk full")))
    note = _record("apache_beam.runners.dask.transform_evaluator",
                   "The new default partition size is 128, it used to be 1 in previous DaskRunner versions.")
    assert not logging.getLogger(note.name).filter(note)


def test_every_dask_runner_name_gets_the_guarded_runner():
    for name in ("dask", "DaskRunner", "apache_beam.runners.dask.dask_runner.DaskRunner"):
        options = BuildOptions(runner=name, dask_address="127.0.0.1:1")
        assert type(options.make_runner()) is guard.DaskRunner
        assert options.pipeline_options().view_as(guard.DaskOptions).address == "127.0.0.1:1"


def test_the_cli_names_the_cluster_a_dask_build_needs(capsys):
    assert cli_main(["build", "wordeval", "--runner", "dask"]) == 2
    assert "--dask-address" in capsys.readouterr().err
    assert cli_main(["build", "wordeval", "--dask-local", "2"]) == 2
    assert "--runner dask" in capsys.readouterr().err


def test_workers_that_do_not_see_the_builds_storage_are_named_before_anything_runs(cluster, tmp_path):
    from benchwright.errors import BuildError

    guard.check_workers_share(cluster, [str(tmp_path)], str(tmp_path / "out" / ".staging"))  # one file system
    # memory:// is each process's own: what the driver writes there, no worker sees (as another host's disk)
    with pytest.raises(BuildError, match=r"(?s)tcp://.*cannot read memory://out/\.benchwright-worker-check-"):
        guard.check_workers_share(cluster, [], "memory://out/.staging")
    with pytest.raises(BuildError, match="cannot find the source .*missing"):
        guard.check_workers_share(cluster, [str(tmp_path / "missing")], str(tmp_path / "out" / ".staging"))


# ---------------------------------------------------------------------------------------------
# Every dataset on the cluster


# Each dataset is built on the cluster once (a build costs 10-20 CPU-s; make test has a 10-minute budget):
# WildBox to the S3 server with a worker killed (the last test), one more to S3, two to a local folder.
TARGETS = {"wordeval": "folder", "workspace_bench": "s3", "vlm_unlearning": "folder"}


def test_every_dataset_is_built_on_the_cluster():
    # every published dataset (the template's code is the core's: its stages hold nothing a cluster treats apart)
    assert set(TARGETS) | {"wildbox"} == set(registry.published())


def built_on_s3(url: str) -> tuple[dict, dict]:
    """(hashes of the published files, manifest) of a build committed at ``url`` on the S3 server."""
    return (_remote_hashes(published.resolve(url)),
            json.loads(fsspec.filesystem("s3").cat_file(f"{url}/_build/manifest.json")))


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_the_tiny_source_builds_on_the_cluster_byte_identical(name, cluster, tmp_path_factory, tmp_path):
    source, local = tiny_build(name, tmp_path_factory)  # the in-process build
    address = cluster.scheduler.address
    if TARGETS[name] == "folder":  # through the command line
        assert cli_main(["build", name, "--source", str(source), "--out", str(tmp_path), "--runner", "dask",
                         "--dask-address", address]) == 0
        built = tmp_path / name
        hashes, manifest = published_hashes(built), json.loads((built / "_build" / "manifest.json").read_text())
    else:
        hashes, manifest = built_on_s3(build(registry.get(name), str(source), BuildOptions(
            out=f"s3://{BUCKET}/dask", progress=False, runner="dask", dask_address=address)))
    assert hashes == published_hashes(local)  # the card among them: it does not name the runner
    assert_same_counts(manifest, local)
    assert manifest["options"]["runner"] == "DaskRunner"
    assert_ran_on_the_cluster(manifest, address, local)


def assert_ran_on_the_cluster(manifest: dict, address: str, reference_build: Path) -> None:
    """The manifest names where the pipeline ran (the card only points to it): the cluster's 2 worker
    processes of a thread each here, the in-process runner there."""
    assert manifest["execution"] == {"runner": "DaskRunner", "scheduler": address, "workers": 2, "threads": 2}
    reference = json.loads((reference_build / "_build" / "manifest.json").read_text())
    assert reference["execution"] == {"runner": "FnApiRunner", "running_mode": "in_memory", "workers": 1}


def assert_same_counts(manifest: dict, reference_build: Path) -> None:
    """The reconciled counts (read, written, quarantined, filtered per unit) of a build equal the
    in-process build's, and so does every counter but a stage's ``in`` (BatchElements batches within a
    bundle, and the Dask runner's bundles are its partitions: WordEval's LibreOffice gate gets 6 batches
    there, 1 in process)."""
    reference = json.loads((reference_build / "_build" / "manifest.json").read_text())
    assert manifest["reconciliation"] == reference["reconciliation"]

    def per_record(counters):
        return {k: v for k, v in counters.items() if not (k.startswith("stage.") and k.endswith(".in"))}

    assert per_record(manifest["counters"]) == per_record(reference["counters"])


# ---------------------------------------------------------------------------------------------
# A worker killed in the middle of a build


class KillAWorkerAtItsThirdBundle(distributed.WorkerPlugin):
    """SIGKILLs the worker process that is the first to start its third of the pipeline's bundles, as it starts
    it (the results of the two it ran, unless already fetched, are lost with it): the first to create ``marker``
    (where it writes its address and pid) dies; every other worker, and the one its nanny starts again (the
    scheduler gives it the cluster's plugins too), finds the marker made and goes on."""

    def __init__(self, marker: str):
        self.marker = marker

    def setup(self, worker):
        self.address, self.bundles = worker.address, 0

    def transition(self, key, start, finish, **kwargs):
        if finish != "executing" or "run_bundle" not in str(key):
            return
        self.bundles += 1
        if self.bundles < 3:
            return
        try:
            fd = os.open(self.marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
        except FileExistsError:
            return
        os.write(fd, json.dumps([self.address, os.getpid()]).encode())
        os.close(fd)
        os.kill(os.getpid(), signal.SIGKILL)


def test_a_worker_killed_during_a_build_is_replaced_and_the_build_publishes_the_same_bytes(
        cluster, tmp_path_factory, tmp_path):
    source, local = tiny_build("wildbox", tmp_path_factory)
    marker = tmp_path / "killed.json"
    cluster.register_plugin(KillAWorkerAtItsThirdBundle(str(marker)), name="kill-a-worker")
    try:
        url = build(registry.get("wildbox"), str(source), BuildOptions(
            out=f"s3://{BUCKET}/killed", progress=False, runner="dask", dask_address=cluster.scheduler.address))
    finally:
        cluster.unregister_worker_plugin("kill-a-worker")
    assert marker.exists(), "no worker was killed while the pipeline ran"
    worker, pid = json.loads(marker.read_text())
    assert not Path(f"/proc/{pid}").exists() or "State:\tZ" in Path(f"/proc/{pid}/status").read_text()
    assert worker not in cluster.scheduler_info()["workers"]
    hashes, manifest = built_on_s3(url)
    assert hashes == published_hashes(local)
    assert_same_counts(manifest, local)  # each bundle's counts once: the rerun's in place of the lost
    assert_ran_on_the_cluster(manifest, cluster.scheduler.address, local)  # 2 workers when it started
    # the nanny started a new worker process, and the cluster kept the nanny while it did (on a loaded
    # machine that took over dask's 15 s, and the cluster closed it: local_cluster's LOST_WORKER_TIMEOUT)
    cluster.wait_for_workers(2, timeout=120)
