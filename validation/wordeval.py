"""WordEval table-level checks and great-expectations suites (the .docx gates run in the pipeline)."""
from __future__ import annotations

import json
from pathlib import Path

from benchwright.schemas import wordeval as schema


def table_checks(root: Path) -> list[dict]:
    """Every oracle parses. (Compositional cases link only to published atomic cases: REFERENCES,
    checked by the core.)"""
    from benchwright.loaders.wordeval import read_config

    atomic = read_config(root, "atomic", ["case_id", "oracle"])
    comp = read_config(root, "compositional", ["case_id", "oracle"])
    bad_oracles = []
    for table in (atomic, comp):
        for cid, oracle in zip(table["case_id"].to_pylist(), table["oracle"].to_pylist()):
            try:
                if not json.loads(oracle).get("targets"):
                    bad_oracles.append(cid)
            except json.JSONDecodeError:
                bad_oracles.append(cid)
    return [
        {"check": "oracles: JSON with targets", "ok": not bad_oracles,
         "detail": f"bad: {bad_oracles[:5]}" if bad_oracles else "all oracles parse and name targets"},
    ]


def _common(config: str) -> list:
    return [
        ("ExpectColumnValuesToNotBeNull", {"column": "instruction"}),
        ("ExpectColumnValueLengthsToBeBetween", {"column": "instruction", "min_value": 10}),
        ("ExpectColumnValuesToNotBeNull", {"column": "command"}),
        ("ExpectColumnValuesToNotBeNull", {"column": "com_object"}),
    ]


EXPECTATIONS = {
    "atomic": _common("atomic") + [
        ("ExpectColumnValuesToBeInSet", {"column": "subsystem", "value_set": list(schema.SUBSYSTEMS)}),
    ],
    "compositional": _common("compositional") + [
        ("ExpectColumnValuesToNotBeNull", {"column": "template"}),
    ],
}
