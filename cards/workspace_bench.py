"""The Workspace-Bench card: the release's distributions, how well Lite keeps them (total variation
distance per attribute) and what it saves, extraction statistics (and quality against the planted
truth when the source ships it), file types, and the figures; read columnar from the written Parquet."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from benchwright.card import markdown_table, pyplot, save_figure
from benchwright.schemas import workspace_bench as schema
from benchwright.tables import read_config
from benchwright.subsets import compare_choices, quantile_bins, total_variation

FULL, LITE = schema.SPLITS
QUALITY_FILE = "_build/extraction_quality.json"


def _read(root: Path, config: str, split: str, columns: list[str]) -> dict[str, list]:
    return read_config(root, config, schema.CONFIGS[config], split, columns).to_pydict()


def _names(values: list[int], feature) -> list[str]:
    return [feature.int2str(v) for v in values]


def lite_statistics(root: Path) -> dict:
    """Per-attribute total variation distance between Lite and full, the evaluation cost Lite saves,
    and how far the release's rule's own choice is from the Lite list the build publishes."""
    cols = ["task_id", "persona", "difficulty", "tested_capabilities", "file_count", "graph_edges", "rubric_count",
            "manifest_bytes", "lite_rule_selected"]
    full, lite = _read(root, "tasks", FULL, cols), _read(root, "tasks", LITE, cols)
    rubric_types = {}
    for split in (FULL, LITE):
        r = _read(root, "rubrics", split, ["task_id", "rubric_type"])
        per_task: dict[str, list[str]] = {}
        for t, k in zip(r["task_id"], _names(r["rubric_type"], schema.RUBRICS["rubric_type"])):
            per_task.setdefault(t, []).append(k)
        rubric_types[split] = [per_task.get(t, []) for t in (full if split == FULL else lite)["task_id"]]
    attributes = {
        "persona": (full["persona"], lite["persona"], None),
        "difficulty": (full["difficulty"], lite["difficulty"], None),
        "capability": (full["tested_capabilities"], lite["tested_capabilities"], None),
        "file count": (full["file_count"], lite["file_count"], quantile_bins(full["file_count"])),
        "graph size (edges)": (full["graph_edges"], lite["graph_edges"], quantile_bins(full["graph_edges"])),
        "rubric types": (rubric_types[FULL], rubric_types[LITE], None),
    }
    tvd = {name: round(total_variation(a, b, bins), 4) if b else None for name, (a, b, bins) in attributes.items()}
    rule_ids = [t for t, sel in zip(full["task_id"], full["lite_rule_selected"]) if sel]
    rule = {"persona": [p for p, sel in zip(full["persona"], full["lite_rule_selected"]) if sel]}
    cost = {}
    for name, column in (("tasks", None), ("rubrics", "rubric_count"), ("files", "file_count"),
                         ("bytes", "manifest_bytes")):
        a = len(full["task_id"]) if column is None else sum(full[column])
        b = len(lite["task_id"]) if column is None else sum(lite[column])
        cost[name] = {"full": a, "lite": b, "reduction": round(1 - b / a, 4) if a else None}
    return {
        "tvd": tvd,
        "cost": cost,
        "rule_vs_lite": compare_choices([int(t) for t in rule_ids], [int(t) for t in lite["task_id"]]),
        "rule_persona_tvd": round(total_variation(full["persona"], rule["persona"]), 4) if rule["persona"] else None,
    }


def card_statistics(root: Path) -> dict:
    tasks = _read(root, "tasks", FULL, ["persona", "difficulty"])
    files = _read(root, "files", FULL, ["workspace", "task_id", "size", "file_type", "file_type_source", "link_target"])
    edges = _read(root, "edges", FULL, ["edge_type", "kind", "resolution"])
    lite = lite_statistics(root)
    persona_f = schema.TASKS["persona"]
    lite_tasks = _read(root, "tasks", LITE, ["persona", "difficulty"])
    persona_rows = [[p, Counter(_names(tasks["persona"], persona_f))[p],
                     Counter(_names(lite_tasks["persona"], persona_f))[p]] for p in schema.PERSONAS]
    diff_f = schema.TASKS["difficulty"]
    difficulty_rows = [[d, Counter(_names(tasks["difficulty"], diff_f))[d],
                        Counter(_names(lite_tasks["difficulty"], diff_f))[d]] for d in schema.DIFFICULTIES]
    in_tasks = [t is not None for t in files["task_id"]]
    type_counts = Counter(files["file_type"])
    edge_type_f, kind_f, res_f = schema.EDGES["edge_type"], schema.EDGES["kind"], schema.EDGES["resolution"]
    edge_counts = Counter(zip(_names(edges["edge_type"], edge_type_f), _names(edges["kind"], kind_f)))
    resolutions = _names(edges["resolution"], res_f)
    resolution_counts = Counter(resolutions)
    # an import of a module the workspace does not hold (the standard library, a package) stays unresolved
    resolved_counts = Counter(t for t, r in zip(_names(edges["edge_type"], edge_type_f), resolutions)
                              if r in ("relative", "bare_name"))
    quality_path = root / QUALITY_FILE
    quality = json.loads(quality_path.read_text()) if quality_path.exists() else None
    totals = {
        "tasks": len(tasks["persona"]),
        "lite tasks": len(lite_tasks["persona"]),
        "task data files": sum(in_tasks),
        "workspace files": len(in_tasks) - sum(in_tasks),
        "bytes scanned": sum(files["size"]),
        "file types": len(type_counts),
        "typed by magika": sum(s == "magika" for s in files["file_type_source"]),
        "symbolic links (link_target: the target's bytes, not a copy)": sum(t is not None for t in files["link_target"]),
        "explicit edges": sum(n for (_, k), n in edge_counts.items() if k == "explicit"),
        "implicit edges": sum(n for (_, k), n in edge_counts.items() if k == "implicit"),
    }
    return {
        "totals_table": markdown_table(["measure", "count"], [[k, v] for k, v in totals.items()]),
        "persona_table": markdown_table(["persona", "full", "lite"], persona_rows),
        "difficulty_table": markdown_table(["difficulty", "full", "lite"], difficulty_rows),
        "tvd_table": markdown_table(["attribute", "total variation distance (Lite vs full)"],
                                    [[k, "n/a" if v is None else f"{v:.4f}"] for k, v in lite["tvd"].items()]),
        "cost_table": markdown_table(["an agent reads", "full", "lite", "reduction"],
                                     [[k, v["full"], v["lite"], "n/a" if v["reduction"] is None else
                                       f"{v['reduction']:.1%}"] for k, v in lite["cost"].items()]),
        "rule_vs_lite": lite["rule_vs_lite"],
        "rule_persona_tvd": lite["rule_persona_tvd"],
        "file_type_table": markdown_table(["file type", "files"], type_counts.most_common(25)),
        "edge_table": markdown_table(["edge type", "kind", "edges", "resolved to a workspace file"],
                                     [[t, k, n, resolved_counts[t]] for (t, k), n in sorted(edge_counts.items())]),
        "resolution_table": markdown_table(["resolution", "edges"],
                                           [[r, resolution_counts[r]] for r in schema.RESOLUTIONS]),
        "quality": quality,
        "quality_table": _quality_table(quality) if quality else "",
        "quality_file_type_table": markdown_table(
            ["file type", "precision", "recall", "planted", "extracted"],
            [[k, v["precision"], v["recall"], v["truth"], v["predicted"]]
             for k, v in sorted(quality["explicit"]["by_file_type"].items())]) if quality else "",
        "figures": {"lite": lite_figure(root, persona_rows, difficulty_rows, lite["tvd"]),
                    "file_types": file_type_figure(root, type_counts)},
    }


def _quality_table(quality: dict) -> str:
    """Explicit edges against the planted truth, per edge type and overall; implicit ones beside them."""
    explicit, implicit = quality["explicit"], quality["implicit"]
    rows = [[k, v["precision"], v["recall"], v["truth"], v["predicted"]]
            for k, v in sorted(explicit["by_edge_type"].items()) if v["truth"] or v["predicted"]]
    rows.append(["all explicit", explicit["precision"], explicit["recall"], explicit["truth"], explicit["predicted"]])
    rows.append(["implicit (all rules)", implicit["precision"], implicit["recall"], implicit["truth"],
                 implicit["predicted"]])
    return markdown_table(["edge type", "precision", "recall", "planted", "extracted"], rows)


def lite_figure(root: Path, persona_rows, difficulty_rows, tvd: dict) -> str:
    """Persona and difficulty shares, full against Lite, and the distance per attribute."""
    plt = pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    for ax, rows, title in ((axes[0], persona_rows, "persona"), (axes[1], difficulty_rows, "difficulty")):
        full_n, lite_n = sum(r[1] for r in rows) or 1, sum(r[2] for r in rows) or 1
        x = range(len(rows))
        ax.bar([i - 0.2 for i in x], [r[1] / full_n for r in rows], width=0.4, label="full")
        ax.bar([i + 0.2 for i in x], [r[2] / lite_n for r in rows], width=0.4, label="lite")
        ax.set_xticks(list(x), [r[0].replace(" ", "\n") for r in rows], fontsize=7)
        ax.set_ylabel("share of tasks")
        ax.set_title(title)
        ax.legend(frameon=False, fontsize=7)
    names = [k for k, v in tvd.items() if v is not None]
    axes[2].barh(range(len(names)), [tvd[k] for k in names])
    axes[2].set_yticks(range(len(names)), names, fontsize=8)
    axes[2].invert_yaxis()
    axes[2].set_xlabel("total variation distance")
    axes[2].set_title("Lite vs full")
    fig.tight_layout()
    return save_figure(fig, root, "lite")


def file_type_figure(root: Path, type_counts: Counter) -> str:
    plt = pyplot()
    top = type_counts.most_common(30)
    fig, ax = plt.subplots(figsize=(8, 0.22 * len(top) + 1.2))
    ax.barh(range(len(top)), [n for _, n in top])
    ax.set_yticks(range(len(top)), [t for t, _ in top], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("files")
    ax.set_title("File types (magika, the extension breaking ties)")
    fig.tight_layout()
    return save_figure(fig, root, "file_types")


def responsible_ai(dataset, root: Path, source: str) -> dict:
    """The Croissant file's Responsible-AI facts (``Dataset.responsible_ai``): the release's records and
    workspaces as given, the rule-extracted dependencies, the personas, and this build's distributions."""
    from benchwright.croissant import counts_text, value_counts

    personas = value_counts(dataset, root, "tasks", "persona")
    difficulty = value_counts(dataset, root, "tasks", "difficulty")
    edges = value_counts(dataset, root, "edges", "kind")
    types = value_counts(dataset, root, "files", "file_type")
    top_types = dict(list(types.items())[:8])
    return {
        "dataCollection": (
            "Workspace-Bench task records (the website's tasks.json / tasks-lite.js or the runner's "
            "tasks/<id>/metadata.json) and the workspaces they use (filesys/<role>_raw/, tasks/<id>/data/), or any "
            "folder scanned as one workspace. The build scans every file (type by magika, text extraction, "
            "sha256), extracts dependencies between files and measures each task's own file_dep_graph; it "
            "executes nothing it reads."),
        "dataCollectionType": ["Secondary Data analysis (the release's task records and workspaces)",
                               "Software Collection (file scanning and dependency extraction)"],
        "dataAnnotationProtocol": [
            "Tasks, rubrics (yes/no checks a judge answers), difficulty, tested capabilities and each task's "
            "file_dep_graph are the release's, as given; rubric types are normalised to Basic / Outcome / Process "
            "/ Result with the original label kept.",
            "File dependencies are machine annotations: explicit edges found by rule in the files (imports, "
            "includes, links, embedded images, workbook links and formulas, path literals) with their evidence, "
            "implicit edges inferred by rule (version chains, derived files, shared entities) with a confidence."],
        "annotationsPerItem": "Per task: the release's rubrics (one judge verdict each when scored); per edge: "
                              "one rule's finding.",
        "machineAnnotationTools": ["magika (file content types)", "benchwright's dependency extractors and "
                                   "implicit-edge rules", "networkx (task graph measures)"],
        "dataAnnotationAnalysis": (
            f"Edges by kind in this build: {counts_text(edges)}. When the source ships its planted dependencies "
            "(the synthetic generator's planted_edges.jsonl), the card reports the extraction's precision and "
            "recall against them; implicit edges are inferred and not scored."),
        "dataBiases": [
            f"Tasks per persona in this build: {counts_text(personas)}; per difficulty: {counts_text(difficulty)}.",
            f"File types (most frequent): {counts_text(top_types)}.",
            "Five office personas only (operations, logistics, research, backend development, product "
            "management); Lite keeps the full set's persona shares by the release's rule."],
        "dataLimitations": [
            "Implicit dependencies are inferred by rules and can be wrong; explicit ones can be unresolved or "
            "ambiguous (resolution, candidates).",
            "Scores need a judge model answering the rubrics; the release's scoring is the pooled rubric pass rate.",
            "Text excerpts are cut at 4,000 characters."],
        "dataUseCases": [
            "Evaluating agents on tasks over realistic workspaces (`benchwright evaluate workspace_bench`: the "
            "release's pooled rubric pass rate), on the full set or on Lite.",
            "Retrieval of a task's dependency files (`benchwright baseline workspace_bench`)."],
        "personalSensitiveInformation": [
            "Workspaces stand for five worker personas (Operations Manager, Logistics Manager, Researcher, Backend "
            "Developer, Product Manager): `persona` names a role, not a person. The embedded default's workspaces, "
            "people and companies are synthetic.",
            "A real workspace's files may hold personal or confidential data (names, e-mail addresses, business "
            "figures): the build types and extracts text but does not detect or remove personal information."],
    }
