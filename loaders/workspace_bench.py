"""Workspace-Bench loaders: a built config through ``datasets``, and the views the evaluator and the
retrieval baseline need (tasks and rubrics with their labels as names, the files an agent could read,
each task's dependency files).

Everything reads the published Parquet of a build (``<build>/<config>/<split>-*.parquet``), never the
raw source. The ``lite`` split repeats the ``full`` rows of the Lite tasks, so a file or task is the
same row in both.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from benchwright.published import committed_manifest, resolve
from benchwright.schemas import workspace_bench as schema
from benchwright.tables import read_config as _read_config
from benchwright.workspace_bench.release import Endpoints

FULL, LITE = schema.SPLITS


def build_root(build: Path | str) -> Path:
    """The folder of a build's files: the committed build when ``build`` is a published dataset
    folder (its manifest names it), else ``build`` itself (a staging folder, a hand-made build)."""
    return Path(resolve(str(build)) if committed_manifest(str(build)) else build)


def load(build: Path | str, config: str, split: str | None = None, cache_dir: str | None = None):
    """``datasets.load_dataset`` on a built folder (offline; no script, no benchwright code involved)."""
    import datasets  # ~2 s to import: only this helper needs it

    return datasets.load_dataset(str(build_root(build)), config, split=split, cache_dir=cache_dir)


def read_config(build: Path | str, config: str, split: str | None = None, columns=None):
    """One config (optionally one split) as a pyarrow Table (ClassLabels as their integers)."""
    return _read_config(build_root(build), config, schema.CONFIGS[config], split=split, columns=columns)


def frame(build: Path | str, config: str, split: str | None = None, columns=None) -> pd.DataFrame:
    """One config as a DataFrame with every ClassLabel column decoded to its name."""
    features = schema.CONFIGS[config]
    df = read_config(build, config, split, columns).to_pandas()
    for name in df.columns:
        if hasattr(features[name], "int2str"):
            df[name] = [features[name].int2str(int(v)) if v is not None and v == v else None for v in df[name]]
    return df


def tasks_frame(build: Path | str, split: str = FULL) -> pd.DataFrame:
    """The tasks of a split (persona and difficulty as names), ordered by absolute_id."""
    return frame(build, "tasks", split).sort_values("absolute_id", kind="stable").reset_index(drop=True)


def rubrics_frame(build: Path | str, split: str = FULL) -> pd.DataFrame:
    """The rubrics of a split (rubric_type, persona, difficulty as names), ordered by task and index."""
    df = frame(build, "rubrics", split)
    order = df["task_id"].map(lambda t: (0, int(t), t) if str(t).isdigit() else (1, 0, str(t)))
    return df.assign(_order=order).sort_values(["_order", "index"], kind="stable").drop(columns="_order") \
        .reset_index(drop=True)


def task_dependency_files(build: Path | str, split: str = FULL) -> dict[str, set[str]]:
    """{task_id: manifest file names that are an endpoint of the task's file_dep_graph} for every task
    of the split (an empty set for a task whose graph names no manifest file). An endpoint written as a
    stored path resolves to its file's name, as in the build."""
    tasks = read_config(build, "tasks", split, columns=["task_id", "data_manifest"]).to_pylist()
    edges = read_config(build, "task_edges", split, columns=["task_id", "src", "dst", "src_kind", "dst_kind"])
    by_task: dict[str, list[dict]] = {}
    for edge in edges.to_pylist():
        by_task.setdefault(edge["task_id"], []).append(edge)
    out = {}
    for task in tasks:
        names = Endpoints(task["data_manifest"]).manifest
        deps = set()
        for edge in by_task.get(task["task_id"], []):
            for end in ("src", "dst"):
                if edge[f"{end}_kind"] == "manifest" and edge[end] in names:
                    deps.add(names[edge[end]])
        out[task["task_id"]] = deps
    return out


def readable_files(build: Path | str) -> list[dict]:
    """Every scanned file (the ``full`` split holds them all) as {file_id, workspace, path, task_id,
    text_excerpt}: task data files carry their task_id, role workspace files (``filesys/<role>_raw``) None."""
    columns = ["file_id", "workspace", "path", "task_id", "text_excerpt"]
    return read_config(build, "files", FULL, columns=columns).to_pylist()
