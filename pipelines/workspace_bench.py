"""Workspace-Bench: tasks, rubrics and workspaces -> tasks / rubrics / files / edges / task_edges.

Read top to bottom (the stages' work: ``benchwright.workspace_bench.stages``):
- Workspaces: each workspace is listed safely (``scan.list_workspace``: links out of it, loops,
  unreadable or undecodable names and oversized files quarantined) -> every file read once: hashed,
  typed by magika, text extracted, explicit references extracted -> references resolved against the
  workspace's listing (a side input) -> EDGES; implicit edges per workspace (a group by workspace).
- Tasks: each task record (the runner's ``metadata.json`` or a ``tasks.json`` entry) -> its TASKS
  row, RUBRICS rows and TASK_EDGES rows (``release.task_rows``; an edge whose endpoint resolves to no
  manifest file or output is quarantined, the task kept). Lite: the release's rule over every task
  read (a global step), and the shipped Lite list when the source has one (each entry a ``lite_task``:
  one that is malformed or names no published task is quarantined naming its place in the list).
- ``lite`` rows repeat the ``full`` rows of Lite tasks (``subset_splits``): the tasks, their rubrics
  and graphs, and the files and edges of their data folders.
"""
from __future__ import annotations

import json

import apache_beam as beam

from benchwright.dataset import Dataset, Unit
from benchwright.schemas import workspace_bench as schema
from benchwright.stage import outputs, run_stage
from benchwright.workspace_bench.config import Config
from benchwright.workspace_bench.sources import Source, open_source
from benchwright.workspace_bench.stages import (LITE, choose_lite, implicit_edges, list_files, read_task,
                                                resolve_edges, scan_one, shipped_lite_list, task_items, task_row,
                                                with_splits, workspace_index, write_quality)
from benchwright.writer import ToTables


class Workspaces(beam.PTransform):
    """The source's workspaces -> their files (the FILES rows of each file read once), their listed entries and
    the edges between their files (explicit, resolved against the workspace's index; implicit, per workspace)."""

    def __init__(self, src: Source, staging: str):
        super().__init__()
        self.src, self.staging = src, staging

    def expand(self, pipeline):
        from benchwright.workspace_bench.scan import DEFAULT_LIMITS as limits

        workspaces = self.src.workspaces
        listed = run_stage(pipeline | "ListWorkspaces" >> beam.Create(workspaces, reshuffle=False),
                           "ListFiles", lambda ws: list_files(ws, limits), unit="file",
                           locate=lambda ws: ws.name, source=True, total=len(workspaces), what="workspaces")
        scanned = run_stage(listed.main | "SpreadFiles" >> beam.Reshuffle(), "ScanFiles",
                            lambda e: scan_one(e, limits), unit="file",
                            locate=lambda e: f"{e['workspace']}/{e['path']}", total="ListFiles", what="files")
        indexes = (scanned.main | "PathByWorkspace" >> beam.Map(
                       lambda s: (s["row"]["workspace"], (s["row"]["path"], s["row"]["sha256"])))
                   | "GroupPaths" >> beam.GroupByKey() | "Index" >> beam.Map(workspace_index))
        # a failure past the scan loses edges, not the file (already a row): its own quarantine unit
        explicit = run_stage(scanned.main, "ResolveReferences", resolve_edges, unit="file_edges",
                             locate=lambda s: s["row"]["file_id"], side_inputs=[beam.pvalue.AsDict(indexes)])
        implicit = run_stage(
            scanned.main | "RowsByWorkspace" >> beam.Map(lambda s: ((s["row"]["workspace"], s["row"]["task_id"]),
                                                                     {**s["row"], **s["implicit"]}))
            | "GroupRows" >> beam.GroupByKey(),
            "ImplicitEdges", implicit_edges, unit="workspace_edges", locate=lambda kv: kv[0][0])
        edges = ((explicit.main, implicit.main) | "AllEdges" >> beam.Flatten())
        _ = (edges | "EdgesForQuality" >> beam.combiners.ToList()
             | "ExtractionQuality" >> beam.Map(write_quality, self.src.url, self.staging))
        return outputs([listed, scanned, explicit, implicit], entries=listed.main, files=scanned.main, edges=edges)


class Tasks(beam.PTransform):
    """The workspaces' listed entries (each task's data file sizes) -> every task's bundle of rows {task, rubrics,
    task_edges} and the Lite choice {rule, lite, shipped} (one element)."""

    def __init__(self, src: Source, lite_seed: int, lite_namespace: str):
        super().__init__()
        self.src, self.lite_seed, self.lite_namespace = src, lite_seed, lite_namespace

    def expand(self, entries):
        pipeline = entries.pipeline
        items = task_items(self.src)
        shipped = shipped_lite_list(self.src, items)
        data_sizes = (entries | "DataFileSizes" >> beam.Map(lambda e: (e["task_id"], (e["path"], e["size"])))
                      | "OnlyTaskFiles" >> beam.Filter(lambda kv: kv[0] is not None)
                      | "GroupSizes" >> beam.GroupByKey() | "SizeDict" >> beam.MapTuple(lambda t, s: (t, dict(s))))
        tasks = run_stage(pipeline | "ListTasks" >> beam.Create(items, reshuffle=False)
                          | "SpreadTasks" >> beam.Reshuffle(), "ReadTasks", read_task, unit="task",
                          locate=lambda item: item[1], side_inputs=[beam.pvalue.AsDict(data_sizes)], source=True,
                          total=len(items), what="tasks")
        personas = tasks.main | "Personas" >> beam.Map(lambda b: (int(b["task"]["absolute_id"]), b["task"]["persona"]))
        chosen = run_stage(pipeline | "LiteSeed" >> beam.Create([None]), "ChooseLite", choose_lite, unit="lite_task",
                           locate=lambda _: "the Lite list",
                           side_inputs=[beam.pvalue.AsList(personas), shipped, self.lite_seed, self.lite_namespace])
        return outputs([tasks, chosen], bundles=tasks.main, lite=chosen.main)


class WorkspaceBench(Dataset):
    name = "workspace_bench"
    Config = Config
    pretty_name = "Workspace-Bench: workspaces, file dependency graphs, tasks and rubrics"
    configs = schema.CONFIGS
    id_columns = schema.ID_COLUMNS
    splits = schema.SPLITS
    subset_splits = schema.SUBSET_SPLITS
    optional_keys = {"files": ("task_id",)}  # a role workspace's file belongs to no task
    optional_configs = tuple(schema.CONFIGS)  # a website release has no files, a folder no tasks
    units = (Unit("task", "tasks", primary=True), Unit("rubric", "rubrics"), Unit("task_edge", "task_edges"),
             Unit("file", "files", primary=True), Unit("lite_task", "tasks", split=LITE))
    license = "cc-by-4.0"
    description = ("Workspaces of heterogeneous files for five worker personas, the dependencies between their "
                   "files (explicit with evidence, implicit by rule), and tasks over them judged by yes/no rubrics, "
                   "with each task's own dependency graph; lite is the Workspace-Bench-Lite subset.")
    task_categories = ("question-answering", "text-retrieval")
    tags = ("agents", "workspaces", "file-dependencies", "evaluation", "rubrics")
    # size on disk (benchwright.output_faults): tiny 1.2 MB of input -> 0.62 MB, default 14.8 MB -> 0.95 MB
    # (2026-12-02): the card and report are most of it, the workspace files are read, not copied
    output_per_input_byte, output_fixed_bytes = 0.0242, 588_000
    synth = "benchwright.workspace_bench.synth:write_source"
    evaluator = "benchwright.evaluation.workspace_bench:run_cli"
    baselines = "benchwright.baselines.workspace_bench:run_cli"
    # the retrieval baseline, run on the build itself when its card is made: the card shows its recall
    card_baselines = "benchwright.baselines.workspace_bench:card_tables"
    references = {"rubrics": {"task_id": "tasks"}, "task_edges": {"task_id": "tasks"}}  # of published tasks

    def expand(self, pipeline, source, staging, previous):
        settings = self.settings
        src = open_source(source, settings.source_kind)
        workspaces = pipeline | "Workspaces" >> Workspaces(src, staging)
        tasks = workspaces["entries"] | "Tasks" >> Tasks(src, settings.lite_seed, settings.lite_namespace)
        lite = beam.pvalue.AsSingleton(tasks["lite"])
        rows = {
            "tasks": tasks["bundles"] | "TaskRows" >> beam.FlatMap(
                lambda b, lt: with_splits(task_row(b["task"], lt), b["task"]["task_id"], lt), lite),
            "rubrics": tasks["bundles"] | "RubricRows" >> beam.FlatMap(
                lambda b, lt: [r for x in b["rubrics"] for r in with_splits(x, b["task"]["task_id"], lt)], lite),
            "task_edges": tasks["bundles"] | "TaskEdgeRows" >> beam.FlatMap(
                lambda b, lt: [r for x in b["task_edges"] for r in with_splits(x, b["task"]["task_id"], lt)], lite),
            "files": workspaces["files"] | "FileRows" >> beam.FlatMap(
                lambda s, lt: with_splits(s["row"], s["row"]["task_id"], lt), lite),
            "edges": workspaces["edges"] | "EdgeRows" >> beam.FlatMap(lambda e, lt: with_splits(e, e["task_id"], lt),
                                                                      lite),
        }
        tables = {config: pcoll | f"{config}Tables" >> ToTables(schema.CONFIGS[config], 100, 2000)
                  for config, pcoll in rows.items()}
        return tables, [workspaces, tasks]

    def responsible_ai(self, staging: str, source: str) -> dict:
        from pathlib import Path

        from benchwright.cards.workspace_bench import responsible_ai

        return responsible_ai(self, Path(staging), source)

    def card_context(self, staging: str) -> dict:
        from pathlib import Path

        from benchwright.cards.workspace_bench import card_statistics

        return card_statistics(Path(staging))

    def expectation_suites(self) -> dict:
        from benchwright.validation.workspace_bench import EXPECTATIONS

        return EXPECTATIONS

    def validate_tables(self, staging: str) -> list[dict]:
        from pathlib import Path

        from benchwright.validation.workspace_bench import table_checks

        return table_checks(Path(staging))

    def plant_bad_record(self, source: str) -> str:
        """A task whose rubric types are not parallel to its rubrics: the whole task is quarantined."""
        from pathlib import Path

        tasks = sorted((Path(source) / "tasks").glob("*/metadata.json"), key=lambda p: int(p.parent.name))
        path = tasks[0]
        record = json.loads(path.read_text(encoding="utf-8"))
        record["rubric_types"] = record["rubric_types"][:-1]
        path.write_text(json.dumps(record, indent=2, ensure_ascii=False), encoding="utf-8")
        return f"tasks/{path.parent.name}/metadata.json"


DATASET = WorkspaceBench()
