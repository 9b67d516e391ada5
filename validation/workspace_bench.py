"""Workspace-Bench table checks (joins between configs) and great-expectations suites."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

from benchwright.schemas import workspace_bench as schema
from benchwright.tables import read_config

FULL = schema.SPLITS[0]


def _read(root: Path, config: str, columns: list[str]) -> dict[str, list]:
    return read_config(root, config, schema.CONFIGS[config], FULL, columns).to_pydict()


def _check(name: str, bad: list, ok_detail: str) -> dict:
    return {"check": name, "ok": not bad, "detail": ok_detail if not bad else f"{len(bad):,} e.g. {bad[:3]}"}


def table_checks(root: Path) -> list[dict]:
    """Rubrics come in the counts the tasks state; a task's data files are in its folder; a link has its
    target's bytes; every edge starts at a published file and a resolved one ends at one. (Rubrics and task edges of published
    tasks: REFERENCES, checked by the core.)"""
    tasks = _read(root, "tasks", ["task_id", "rubric_count"])
    rubrics = _read(root, "rubrics", ["task_id"])
    files = _read(root, "files", ["workspace", "path", "task_id", "link_target", "sha256"])
    edges = _read(root, "edges", ["workspace", "src", "dst", "resolution"])
    task_ids = set(tasks["task_id"])
    per_task = Counter(rubrics["task_id"])
    paths = set(zip(files["workspace"], files["path"]))
    resolved = {schema.RESOLUTIONS.index(r) for r in ("relative", "bare_name")}
    sha256 = dict(zip(zip(files["workspace"], files["path"]), files["sha256"]))
    links = [(w, p, t, h) for w, p, t, h in zip(files["workspace"], files["path"], files["link_target"], files["sha256"])
             if t is not None]
    return [
        _check("rubrics: rubric_count per task", [t for t, n in zip(tasks["task_id"], tasks["rubric_count"])
                                                  if per_task.get(t, 0) != n],
               f"{len(rubrics['task_id']):,} rubrics in {len(task_ids):,} tasks"),
        # a quarantined task's folder is still scanned: its files keep their task_id
        _check("files: a task's data files are in its folder",
               [f"{w}/{p}" for w, p, t in zip(files["workspace"], files["path"], files["task_id"])
                if t is not None and w not in (f"tasks/{t}", f"tasks_lite/{t}")],
               f"{sum(t is not None for t in files['task_id']):,} task data files"),
        # a link's row is its target's bytes; a target the build left out (past the file-count bound, the
        # release's metadata.json) is counted, not checked
        _check("files: a link has its target's bytes",
               [f"{w}/{p} -> {t}" for w, p, t, h in links if (w, t) in sha256 and sha256[(w, t)] != h],
               f"{len(links):,} links, {sum((w, t) not in sha256 for w, _, t, _ in links):,} to a file not published"),
        _check("edges: from a published file",
               [f"{w}/{s}" for w, s in zip(edges["workspace"], edges["src"]) if (w, s) not in paths],
               f"{len(edges['src']):,} edges"),
        _check("edges: a resolved edge ends at a published file",
               [f"{w}/{s} -> {d}" for w, s, d, r in zip(edges["workspace"], edges["src"], edges["dst"],
                                                         edges["resolution"])
                if r in resolved and (w, d) not in paths], "all"),
    ]


EXPECTATIONS = {
    "tasks": [
        ("ExpectColumnValueLengthsToBeBetween", {"column": "instruction", "min_value": 10}),
        ("ExpectColumnValuesToBeBetween", {"column": "rubric_count", "min_value": 1}),
        ("ExpectColumnValuesToBeBetween", {"column": "file_count", "min_value": 0}),
        ("ExpectColumnValuesToBeInSet", {"column": "role", "value_set": list(schema.ROLES)}),
        ("ExpectColumnValuesToBeBetween", {"column": "graph_depth", "min_value": -1}),
    ],
    "rubrics": [
        ("ExpectColumnValuesToNotBeNull", {"column": "rubric"}),
        ("ExpectColumnValuesToNotBeNull", {"column": "rubric_type_original"}),
        ("ExpectColumnValuesToBeBetween", {"column": "index", "min_value": 0}),
    ],
    "files": [
        ("ExpectColumnValueLengthsToEqual", {"column": "sha256", "value": 64}),
        ("ExpectColumnValuesToBeBetween", {"column": "size", "min_value": 0}),
        ("ExpectColumnValuesToNotBeNull", {"column": "file_type"}),
        ("ExpectColumnValuesToBeInSet", {"column": "file_type_source", "value_set": ["magika", "extension"]}),
        ("ExpectColumnValueLengthsToBeBetween", {"column": "text_excerpt", "max_value": schema.TEXT_EXCERPT_CHARS}),
    ],
    "edges": [
        ("ExpectColumnValuesToBeBetween", {"column": "confidence", "min_value": 0.0, "max_value": 1.0}),
        ("ExpectColumnValuesToNotBeNull", {"column": "evidence"}),
        ("ExpectColumnValuesToNotBeNull", {"column": "rule"}),
    ],
    "task_edges": [
        ("ExpectColumnValuesToBeInSet", {"column": "src_kind", "value_set": ["manifest", "output"]}),
        ("ExpectColumnValuesToBeInSet", {"column": "dst_kind", "value_set": ["manifest", "output"]}),
    ],
}
