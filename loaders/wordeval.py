"""WordEval loaders: case folders for agents that want files, and the card's statistics."""
from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from benchwright.schemas import wordeval as schema

EXPORTS = "exports/cases"


def read_config(root: Path | str, config: str, columns=None):
    files = sorted((Path(root) / config).glob("*.parquet"))
    if not files:
        return schema.FEATURES[config].arrow_schema.empty_table()
    return pq.ParquetDataset(files).read(columns=columns)


def export_cases(root: Path) -> dict:
    """``exports/cases/<case_id>/{input.docx, reference.docx, case.json}`` for every case, streamed."""
    from benchwright.wordeval.build import write_case_dir

    counts = {}
    for config in schema.CONFIGS:
        n = 0
        for f in sorted((root / config).glob("*.parquet")):
            for batch in pq.ParquetFile(f).iter_batches(batch_size=64):
                for case in batch.to_pylist():
                    write_case_dir(case, root / EXPORTS / case["case_id"])
                    n += 1
        counts[config] = n
    return {"case_dirs": counts}


def card_statistics(root: Path) -> dict:
    from benchwright.card import markdown_table

    atomic = read_config(root, "atomic", ["subsystem", "command", "com_object", "properties", "base_document"])
    comp = read_config(root, "compositional", ["template", "atomic_case_ids"])
    rows = {}
    for sub, cmd, obj, props in zip(atomic["subsystem"].to_pylist(), atomic["command"].to_pylist(),
                                    atomic["com_object"].to_pylist(), atomic["properties"].to_pylist()):
        r = rows.setdefault(sub, {"cases": 0, "commands": set(), "objects": set(), "pairs": set()})
        r["cases"] += 1
        r["commands"].add(cmd)
        r["objects"].add(obj)
        r["pairs"].update(props)
    table = [[s, r["cases"], len(r["commands"]), len(r["objects"]), len(r["pairs"])]
             for s, r in sorted(rows.items(), key=lambda kv: schema.SUBSYSTEMS.index(kv[0])
                                if kv[0] in schema.SUBSYSTEMS else 99)]
    totals = {
        "atomic_cases": atomic.num_rows,
        "compositional_cases": comp.num_rows,
        "templates": len(set(comp["template"].to_pylist())),
        "commands": len(set(atomic["command"].to_pylist())),
        "com_objects": len(set(atomic["com_object"].to_pylist())),
        "object_property_pairs": len({p for ps in atomic["properties"].to_pylist() for p in ps}),
        "subsystems": len(rows),
        "base_documents": len(set(atomic["base_document"].to_pylist())),
    }
    return {
        "totals": totals,
        "totals_table": markdown_table(["measure", "count"], [[k.replace("_", " "), v] for k, v in totals.items()]),
        "subsystem_table": markdown_table(["subsystem", "atomic cases", "commands", "COM objects",
                                           "object-property pairs"], table),
    }
