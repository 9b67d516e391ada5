"""Quarantining stages: every dataset pipeline's per-record work runs through ``Stage``.

A stage is a generator function ``fn(element)`` that yields records, ``Reject`` rows for sub-records
it refuses, ``Read`` marks for sub-units it read, or raises ``RecordError`` for the whole element.
``Stage`` turns both kinds of failure into quarantine (or filtered) rows and counts everything
(Beam Metrics counters), so finalize can reconcile ``read == written + quarantined + filtered`` per
unit. The stage that reads a unit from the source is marked ``source=True``: every record it yields,
every row it rejects and every element that fails counts as read there, so no pipeline counts
reads by hand. A stage given a ``total`` shows its progress while the pipeline runs
(``benchwright.progress``: Beam's counters are read only at the end).

Every record and quarantine row a stage yields passes through ``benchwright.utf8.encodable`` before
Beam's coder sees it: a string a file put there that UTF-8 cannot encode (a lone surrogate from a JSON
``\\udcff`` escape, a Python literal, a notebook cell) is repaired (U+FFFD) instead of stopping the
build, and counted (``unencodable_strings.<stage>`` in the manifest's counters).

Every quarantine and filtered row is made here (``reject_row``), so one place holds what a row says:
its reason in words, never an exception's type name (``errors.reason_in_words``: an unexpected
exception is described by what it means, ``errors.describe_exception``), and its reason and locator at
most ``errors.MAX_REASON_BYTES`` (a 1 MB value quoted in a reason is cut, saying how much was).
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Iterable

import apache_beam as beam
from apache_beam.metrics import Metrics

from benchwright.errors import RecordError, clipped, describe_exception, reason_in_words
from benchwright.progress import StageReport, attached
from benchwright.records import FILTERED, QUARANTINE, Read, Reject  # noqa: F401 - the names stage functions yield
from benchwright.utf8 import encodable

METRICS_NAMESPACE = "benchwright"


def reject_row(stage: str, reject: Reject) -> dict:
    """The quarantine (or filtered) row of ``reject`` in ``stage``: the one place such a row is made (see
    the module docstring: its reason in words, reason and locator at most 1 KB)."""
    row = {"stage": stage, **dataclasses.asdict(reject)}
    row["reason"] = reason_in_words(row["reason"])
    row["locator"] = clipped(str(row["locator"]))
    return row


def counter(name: str):
    return Metrics.counter(METRICS_NAMESPACE, name)


def read_counter(unit: str):
    """Counts units read from the source; finalize reconciles it against written + rejected."""
    return counter(f"read.{unit}")


class Stage(beam.DoFn):
    """Runs a stage function with quarantine: failures become tagged rows, never lost, never fatal."""

    def __init__(self, name: str, fn: Callable[[Any], Iterable[Any]], unit: str,
                 locate: Callable[[Any], str] = str, source: bool = False, progress: str | None = None,
                 size: Callable[[Any], int] | None = None):
        self._name, self._fn, self._unit, self._locate = name, fn, unit, locate
        self._source = source
        self._progress, self._size = progress, size  # the progress channel; an element's size (a batch's length)

    def setup(self):
        self._in = counter(f"stage.{self._name}.in")
        self._failed = counter(f"stage.{self._name}.failed")
        self._rejected = {k: counter(f"{k}.{self._name}") for k in (QUARANTINE, FILTERED)}
        self._repaired = counter(f"unencodable_strings.{self._name}")
        self._report = StageReport(self._progress, self._name) if self._progress else None

    def process(self, element, *side_inputs):
        self._in.inc()
        try:
            # Materialise first: a generator that fails half-way must not leak half its output; a record
            # Beam's coder could not carry (nested too deeply to walk) fails its element here, too.
            outputs = [out if isinstance(out, (Read, Reject)) else self._encodable(out)
                       for out in self._fn(element, *side_inputs)]
        except RecordError as err:
            self._count(element, 0)
            yield from self._failure(Reject(self._unit, err.locator, err.reason))
            return
        except Exception as err:  # an unexpected failure still names the element; finalize counts it
            self._count(element, 0)
            yield from self._failure(Reject(self._unit, self._locate_safely(element), describe_exception(err)))
            return
        self._count(element, sum(not isinstance(out, (Read, Reject)) for out in outputs))
        for out in outputs:
            if isinstance(out, Read):
                read_counter(out.unit).inc(out.count)
            elif isinstance(out, Reject):
                self._rejected[out.kind].inc(out.count)
                if self._source:
                    read_counter(out.unit).inc(out.count)
                yield beam.pvalue.TaggedOutput(out.kind, self._row(out))
            else:
                if self._source:
                    read_counter(self._unit).inc()
                yield out

    def finish_bundle(self):
        if self._report is not None:
            self._report.end_bundle()

    def _count(self, element, out: int) -> None:
        if self._report is not None:
            self._report.add(self._size(element) if self._size else 1, out)

    def _failure(self, reject: Reject):
        self._failed.inc()
        if self._source:
            read_counter(self._unit).inc()
        yield beam.pvalue.TaggedOutput(QUARANTINE, self._row(reject))

    def _locate_safely(self, element) -> str:
        try:
            return self._locate(element)
        except Exception as err:  # noqa: BLE001 - the element's failure is reported, whatever its shape
            return f"<an element of {self._name} that cannot be named: {describe_exception(err)}>"

    def _row(self, reject: Reject) -> dict:
        return self._encodable(reject_row(self._name, reject))

    def _encodable(self, out):
        """``out`` as Beam's coder and Arrow can encode it (see the module docstring), counted."""
        out, repaired = encodable(out)
        if repaired:
            self._repaired.inc(repaired)
        return out


def create(pipeline, label: str, items, **kwargs):
    """``pipeline | label >> beam.Create(items)`` of values read on the driver (a source's records), each
    made encodable first as a stage's outputs are (see the module docstring: ``beam.Create`` encodes its
    values with Beam's coder as the pipeline is built, so one lone surrogate in a record would stop it
    there); the strings repaired are counted as ``unencodable_strings.<label>``."""
    fixed, repaired = [], 0
    for item in items:
        item, n = encodable(item)
        fixed.append(item)
        repaired += n
    pcoll = pipeline | label >> beam.Create(fixed, **kwargs)
    if repaired:
        name = f"unencodable_strings.{label}"
        _ = (pipeline | f"{label}Repaired" >> beam.Create([repaired])
             | f"Count{label}Repaired" >> beam.Map(lambda n: counter(name).inc(n)))
    return pcoll


def run_stage(pcoll, name: str, fn, unit: str, locate=str, side_inputs=(), source: bool = False,
              total: int | str | None = None, what: str = "", size: Callable[[Any], int] | None = None):
    """``pcoll | Stage`` with outputs (main, quarantine, filtered); side inputs go to ``fn`` after the element.
    ``source=True``: this stage reads ``unit`` from the source (see the module docstring).
    ``total``: show this stage's progress, ``total`` elements of ``what`` (``size(element)`` each, default
    1): a count known when the graph is built, or the name of the stage whose records this one takes."""
    tracker = attached(pcoll.pipeline)  # every stage reports (a tracked one's total may be another's output)
    channel = tracker.channel if tracker is not None else None
    if tracker is not None and total is not None:
        tracker.track(name, total, what)
    return pcoll | name >> beam.ParDo(Stage(name, fn, unit, locate, source, channel, size),
                                      *side_inputs).with_outputs(QUARANTINE, FILTERED, main="main")


def outputs(stages, **main) -> dict:
    """What a composite transform of stages returns from its ``expand``: its main PCollections by name, and the
    quarantine and filtered rows of all its ``stages`` (``run_stage``'s outputs), each kind flattened into one
    PCollection. A dataset's ``expand`` lists such a dict among its stage outputs, as it would a stage's."""
    out = dict(main)
    for kind in (QUARANTINE, FILTERED):
        out[kind] = [stage[kind] for stage in stages] | f"{kind.capitalize()}Rows" >> beam.Flatten()
    return out
