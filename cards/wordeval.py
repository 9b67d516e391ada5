"""The WordEval card: coverage statistics (by subsystem, command, COM object, object-property pair)
and the coverage figure, read columnar from the written Parquet."""
from __future__ import annotations

from pathlib import Path

from benchwright.card import markdown_table, pyplot, save_figure
from benchwright.loaders.wordeval import read_config
from benchwright.schemas import wordeval as schema


def card_statistics(root: Path) -> dict:
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
        "figures": {"coverage": coverage_figure(root, rows)},
        "totals_table": markdown_table(["measure", "count"], [[k.replace("_", " "), v] for k, v in totals.items()]),
        "subsystem_table": markdown_table(["subsystem", "atomic cases", "commands", "COM objects",
                                           "object-property pairs"], table),
    }


def coverage_figure(root: Path, rows: dict) -> str:
    """Atomic cases and object-property pairs per subsystem, in the catalogue's subsystem order."""
    plt = pyplot()
    names = [s for s in schema.SUBSYSTEMS if s in rows] + sorted(set(rows) - set(schema.SUBSYSTEMS))
    fig, ax = plt.subplots(figsize=(8, 0.3 * len(names) + 1.4))
    y = range(len(names))
    ax.barh([i + 0.2 for i in y], [rows[s]["cases"] for s in names], height=0.4, label="atomic cases")
    ax.barh([i - 0.2 for i in y], [len(rows[s]["pairs"]) for s in names], height=0.4,
            label="object-property pairs")
    ax.set_yticks(list(y), [s.replace("_", " ") for s in names])
    ax.invert_yaxis()
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
    ax.set_title("WordEval coverage per subsystem")
    fig.tight_layout()
    return save_figure(fig, root, "coverage")
