"""Template's checks of the written tables, and its great-expectations suites beyond the ones the core derives
from the Features (ids unique and non-null, ClassLabels in range, declared splits only).

SLOT: what the data must satisfy that its types do not say.
"""
from __future__ import annotations

from pathlib import Path

import pyarrow.compute as pc


def table_checks(root: Path) -> list[dict]:
    """Every record's ``num_words`` is its text's count of words, and no id is in two splits."""
    from benchwright.loaders.template import load

    table = load(root, columns=["id", "text", "num_words"])
    counted = [len(t.split()) for t in table.column("text").to_pylist()]
    wrong = [i for i, n, c in zip(table.column("id").to_pylist(), table.column("num_words").to_pylist(), counted)
             if n != c]
    ids = table.column("id")
    repeated = len(ids) - len(pc.unique(ids))
    return [{"check": "records: num_words counts the text's words", "ok": not wrong,
             "detail": f"{table.num_rows:,} records" + (f"; differ: {wrong[:3]}" if wrong else "")},
            {"check": "records: no id in two splits", "ok": not repeated,
             "detail": f"{repeated:,} ids repeated" if repeated else f"{len(ids):,} ids"}]


EXPECTATIONS = {
    "records": [
        ("ExpectColumnValueLengthsToBeBetween", {"column": "text", "min_value": 1}),
        ("ExpectColumnValuesToBeBetween", {"column": "num_words", "min_value": 0}),
    ],
}
