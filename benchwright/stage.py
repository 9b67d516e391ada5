"""Quarantining stages: every dataset pipeline's per-record work runs through ``Stage``.

A stage is a generator function ``fn(element)`` that yields records, ``Reject`` rows for sub-records
it refuses, or raises ``RecordError`` for the whole element. ``Stage`` turns both kinds of failure
into quarantine (or filtered) rows and counts everything (Beam Metrics counters), so finalize can
reconcile ``read == written + quarantined + filtered`` per unit.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Iterable

import apache_beam as beam
from apache_beam.metrics import Metrics

from benchwright.errors import RecordError

QUARANTINE = "quarantine"
FILTERED = "filtered"
METRICS_NAMESPACE = "benchwright"

@dataclasses.dataclass(frozen=True)
class Reject:
    """A sub-record a stage refuses: ``kind`` is quarantine (bad input) or filtered (a rule, with reason)."""

    unit: str  # what was lost: "segment", "frame", "box", ...
    locator: str
    reason: str
    kind: str = QUARANTINE
    count: int = 1  # how many units this row stands for


def counter(name: str):
    return Metrics.counter(METRICS_NAMESPACE, name)


def read_counter(unit: str):
    """Counts units read from the source; finalize reconciles it against written + rejected."""
    return counter(f"read.{unit}")


class Stage(beam.DoFn):
    """Runs a stage function with quarantine: failures become tagged rows, never lost, never fatal."""

    def __init__(self, name: str, fn: Callable[[Any], Iterable[Any]], unit: str,
                 locate: Callable[[Any], str] = str):
        self._name, self._fn, self._unit, self._locate = name, fn, unit, locate

    def setup(self):
        self._in = counter(f"stage.{self._name}.in")
        self._failed = counter(f"stage.{self._name}.failed")
        self._rejected = {k: counter(f"{k}.{self._name}") for k in (QUARANTINE, FILTERED)}

    def process(self, element, *side_inputs):
        self._in.inc()
        try:
            # Materialise first: a generator that fails half-way must not leak half its output.
            outputs = list(self._fn(element, *side_inputs))
        except RecordError as err:
            self._failed.inc()
            yield beam.pvalue.TaggedOutput(QUARANTINE, self._row(Reject(self._unit, err.locator, err.reason)))
            return
        except Exception as err:  # an unexpected failure still names the element; finalize counts it
            self._failed.inc()
            reason = f"{type(err).__name__}: {err}"
            yield beam.pvalue.TaggedOutput(QUARANTINE, self._row(Reject(self._unit, self._locate(element), reason)))
            return
        for out in outputs:
            if isinstance(out, Reject):
                self._rejected[out.kind].inc(out.count)
                yield beam.pvalue.TaggedOutput(out.kind, self._row(out))
            else:
                yield out

    def _row(self, reject: Reject) -> dict:
        return {"stage": self._name, **dataclasses.asdict(reject)}


def run_stage(pcoll, name: str, fn, unit: str, locate=str, side_inputs=()):
    """``pcoll | Stage`` with outputs (main, quarantine, filtered); side inputs go to ``fn`` after the element."""
    return pcoll | name >> beam.ParDo(Stage(name, fn, unit, locate), *side_inputs).with_outputs(
        QUARANTINE, FILTERED, main="main")
