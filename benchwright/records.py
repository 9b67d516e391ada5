"""What a stage function yields, with no Beam: records (dicts or tables that carry a ``split`` column), ``Reject``
rows for what it refuses and ``Read`` marks for sub-units it read.

Domain code (``benchwright/<ds>/``) makes these; the quarantining stage that runs it (``benchwright.stage``)
counts them and turns them into quarantine and filtered rows.
"""
from __future__ import annotations

import dataclasses

QUARANTINE = "quarantine"
FILTERED = "filtered"
SPLIT_COLUMN = "split"  # the column every table carries into the writer: it picks the file (<config>/<split>-*)


@dataclasses.dataclass(frozen=True)
class Reject:
    """A sub-record a stage refuses: ``kind`` is quarantine (bad input) or filtered (a rule, with reason)."""

    unit: str  # what was lost: "segment", "frame", "box", ...
    locator: str
    reason: str
    kind: str = QUARANTINE
    count: int = 1  # how many units this row stands for


@dataclasses.dataclass(frozen=True)
class Read:
    """Yielded by a stage function: ``count`` units of ``unit`` (e.g. a segment's frames) were read.
    Counted only when the whole element succeeds: a failure counts the element once, as its unit."""

    unit: str
    count: int = 1
