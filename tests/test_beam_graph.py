"""benchwright/beam_graph.py: Beam's graph construction with its repeated introspections done once.

- the patch is applied on the installed Beam (2.77.0, whose replaced functions' sources it fingerprints),
  and refused, with a log line and Beam left as it is, on another version or a changed source;
- the cached computations give what upstream's give: the parsed options of every options class for
  several command lines (each instance its own lists), and the argument names and defaults of
  functions, methods and every kind of callable upstream is left to (a function whose defaults change
  after it was read is read again);
- a pipeline with Map, FlatMap, side inputs, a stateful DoFn, tagged outputs and a combiner gives the same
  results, counters and graph (its runner API proto) with and without the patch.
"""
from __future__ import annotations

import functools
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import apache_beam as beam
import pytest
from apache_beam.options import pipeline_options
from apache_beam.transforms import core

from benchwright import beam_graph

REPO = Path(__file__).resolve().parents[1]

# One fresh process: the patch refused (a changed source), the pipeline run as upstream builds it; then the patch
# applied, the same pipeline run again. Printed as JSON: each run's outputs, counters and graph. Every class and
# function of the pipeline is made anew for each run (``run``), so nothing Beam keeps on them carries over.
PIPELINE = r"""
import json, logging, os, sys
import apache_beam as beam
from apache_beam.coders import VarIntCoder
from apache_beam.metrics import Metrics
from apache_beam.metrics.metric import MetricsFilter
from apache_beam.options import pipeline_options
from apache_beam.options.pipeline_options import DebugOptions, PipelineOptions
from apache_beam.transforms import core
from apache_beam.transforms.userstate import BagStateSpec
from apache_beam.runners.portability.fn_api_runner import FnApiRunner
from benchwright import beam_graph

def run(folder):
    os.makedirs(folder)

    class Tagged(beam.DoFn):
        def process(self, x, scale=2):
            Metrics.counter("probe", "seen").inc()
            yield beam.pvalue.TaggedOutput("odd" if x % 2 else "even", x * scale)

    class Running(beam.DoFn):
        SEEN = BagStateSpec("seen", VarIntCoder())
        def process(self, kv, seen=beam.DoFn.StateParam(SEEN)):
            seen.add(kv[1])
            yield kv[0], sorted(seen.read())

    options = PipelineOptions(["--direct_num_workers=1", "--experiments=probe"])
    options.view_as(DebugOptions).add_experiment("second")
    p = beam.Pipeline(runner=FnApiRunner(), options=options)
    numbers = p | beam.Create(range(12))
    tags = numbers | beam.ParDo(Tagged()).with_outputs("odd", "even")
    total = beam.pvalue.AsSingleton(numbers | beam.CombineGlobally(sum))
    shifted = tags.odd | beam.Map(lambda x, t: x + t, t=total)
    words = tags.even | beam.FlatMap(lambda x, n=3: [str(x)] * n)
    running = numbers | beam.Map(lambda x: (x % 3, x)) | beam.ParDo(Running())
    for name, pcoll in (("shifted", shifted), ("words", words), ("running", running)):
        pcoll | f"Show{name}" >> beam.Map(repr) | f"Write{name}" >> beam.io.WriteToText(
            f"{folder}/{name}", num_shards=1, shard_name_template="")
    proto = p.to_runner_api()
    # the graph's shape (the payloads hold pickled functions, whose bytes differ from run to run)
    graph = sorted([t.unique_name, t.spec.urn, sorted(t.inputs.items()), sorted(t.outputs.items()),
                    list(t.subtransforms)] for t in proto.components.transforms.values())
    result = p.run()
    result.wait_until_finish()
    counters = {c.key.metric.name: c.committed for c in result.metrics().query(MetricsFilter())["counters"]}
    out = {name: sorted(open(f"{folder}/{name}").read().splitlines()) for name in ("shifted", "words", "running")}
    return {"out": out, "counters": counters, "graph": graph,
            "experiments": sorted(options.view_as(DebugOptions).experiments)}

logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
# a Beam whose function differs from the fingerprinted source: nothing is replaced (one log line says why)
INIT = "pipeline_options.PipelineOptions.__init__"
digest, beam_graph.UPSTREAM[INIT] = beam_graph.UPSTREAM[INIT], "0" * 16
assert not beam_graph.apply() and not beam_graph.apply() and not beam_graph.applied()
assert pipeline_options.PipelineOptions.__init__ is beam_graph.ORIGINAL[INIT]
assert core.get_function_args_defaults is beam_graph.ORIGINAL["core.get_function_args_defaults"]
upstream = run(sys.argv[1] + "/upstream")
# the installed Beam's own source again: the patch applies
beam_graph.UPSTREAM[INIT] = digest
assert beam_graph.apply() and beam_graph.applied()
assert pipeline_options.PipelineOptions.__init__ is beam_graph._options_init
assert core.get_function_args_defaults is beam_graph.cached_args_defaults
patched = run(sys.argv[1] + "/patched")
print(json.dumps({"upstream": upstream, "patched": patched}))
"""


@pytest.fixture(scope="module")
def probed(tmp_path_factory) -> tuple[dict, str]:
    """(the probe's JSON, its stderr): the pipeline upstream (the patch refused) and patched, in one fresh process."""
    folder = tmp_path_factory.mktemp("probe")
    done = subprocess.run([sys.executable, "-c", PIPELINE, str(folder)], cwd=REPO, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONHASHSEED": "0"})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


def test_the_patch_is_applied_on_the_installed_beam():
    """Fails loudly on a Beam whose replaced functions changed: re-check docs/upstream/fixed-costs.md."""
    assert beam.__version__ == beam_graph.BEAM_VERSION
    assert beam_graph.refused() is None
    assert beam_graph.apply() and beam_graph.applied()
    assert pipeline_options.PipelineOptions.__init__ is beam_graph._options_init
    assert core.get_function_args_defaults is beam_graph.cached_args_defaults


@pytest.mark.parametrize("version, fingerprints, named", [
    ("2.78.0", None, "Beam 2.78.0 is not 2.77.0"),
    (None, {"core.get_function_args_defaults": "0" * 16}, "core.get_function_args_defaults"),
])
def test_another_beam_is_refused(version, fingerprints, named):
    fingerprints = None if fingerprints is None else {
        **{n: beam_graph.fingerprint(n) for n in beam_graph.UPSTREAM}, **fingerprints}
    reason = beam_graph.refused(version, fingerprints)
    assert reason is not None and named in reason


def test_a_changed_source_is_not_patched_and_says_so(probed):
    """In a fresh process whose Beam's function differs from the fingerprinted source: nothing is replaced,
    one log line says why, and a pipeline still runs (as upstream: the probe's first run)."""
    got, told = probed
    told = [line for line in told.splitlines() if line.startswith("benchwright.beam_graph:")]
    assert len(told) == 1 and "PipelineOptions.__init__ differ" in told[0], told
    assert got["upstream"]["counters"] == {"seen": 12}


def test_the_same_pipeline_gives_the_same_results_graph_and_counters(probed):
    upstream, patched = probed[0]["upstream"], probed[0]["patched"]
    assert patched == upstream
    assert upstream["counters"] == {"seen": 12} and upstream["experiments"] == ["probe", "second"]
    assert upstream["out"]["shifted"][0] == "68" and len(upstream["out"]["words"]) == 18  # 2 x 1 + 66 (the sum); 6 evens x 3
    assert "(2, [2, 5, 8, 11])" in upstream["out"]["running"]


OPTION_CLASSES = sorted({c for c in [pipeline_options.PipelineOptions,
                                     *pipeline_options.PipelineOptions.__subclasses__()]}, key=lambda c: c.__name__)
FLAGS = [[], ["--direct_num_workers=2", "--direct_running_mode=multi_processing"],
         ["--experiments=a", "--experiments=b", "--runner=DirectRunner", "--unknown_flag=1"],
         ["--beam_services={\"a\": \"b\"}", "--job_name=x", "--streaming"]]


@pytest.mark.parametrize("flags", FLAGS)
def test_options_parse_as_upstream_and_share_nothing(flags):
    assert beam_graph.apply()
    for cls in OPTION_CLASSES:
        assert vars(beam_graph.parsed_options(cls, flags)) == vars(beam_graph._parse(cls, flags)), cls
        first, second = cls(flags), cls(flags)
        assert first.get_all_options() == second.get_all_options()
    one, two = pipeline_options.PipelineOptions(flags), pipeline_options.PipelineOptions(flags)
    one.view_as(pipeline_options.DebugOptions).add_experiment("only_one")
    assert "only_one" in one.view_as(pipeline_options.DebugOptions).experiments
    assert "only_one" not in (two.view_as(pipeline_options.DebugOptions).experiments or [])


def test_a_bad_flag_is_refused_every_time():
    assert beam_graph.apply()
    for _ in range(2):
        with pytest.raises(SystemExit):
            pipeline_options.DirectOptions(["--direct_num_workers=many"])


class Probe(beam.DoFn):
    def process(self, element, window=beam.DoFn.WindowParam, *rest, key=None):
        yield element

    @staticmethod
    def helper(a, b=2):
        return a + b


def plain(a, b=1, *args, c, d=4, **kwargs):
    return a


@functools.wraps(plain)
def wrapped(*args, **kwargs):
    return plain(*args, **kwargs)


def test_argument_names_and_defaults_are_upstreams():
    original = beam_graph.ORIGINAL["core.get_function_args_defaults"]
    callables = [plain, wrapped, Probe().process, Probe.process, Probe.helper, Probe().start_bundle,
                 lambda x, y=beam.DoFn.KeyParam: x, functools.partial(plain, 1), len, str.upper,
                 beam.Map(lambda x, t=5: x).dofn.process]
    for f in callables:
        for _ in range(2):  # the first call fills the cache, the second reads it
            assert beam_graph.cached_args_defaults(f) == original(f), f

    def later(a, b=1):
        return a
    assert beam_graph.cached_args_defaults(later) == (["a", "b"], [1])
    later.__defaults__ = (7,)
    assert beam_graph.cached_args_defaults(later) == (["a", "b"], [7])
    got = beam_graph.cached_args_defaults(later)
    got[0].append("changed by a caller")
    assert beam_graph.cached_args_defaults(later) == (["a", "b"], [7])


def test_a_refusal_is_logged_once(monkeypatch, caplog):
    monkeypatch.setattr(beam_graph, "_applied", False)
    monkeypatch.setattr(beam_graph.apply, "_told", False, raising=False)
    monkeypatch.setattr(beam_graph, "refused", lambda: "Beam 9.9.9 is not 2.77.0")
    with caplog.at_level(logging.INFO, logger="benchwright.beam_graph"):
        assert not beam_graph.apply() and not beam_graph.apply()
    assert [r.getMessage() for r in caplog.records if "9.9.9" in r.getMessage()] != []
    assert len([r for r in caplog.records if "9.9.9" in r.getMessage()]) == 1
