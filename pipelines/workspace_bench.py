"""Workspace-Bench: tasks, rubrics and workspaces -> tasks / rubrics / files / edges / task_edges.

Read top to bottom:
- Tasks: each task record (the runner's ``metadata.json`` or a ``tasks.json`` entry) -> its TASKS
  row, RUBRICS rows and TASK_EDGES rows (``release.task_rows``; an edge whose endpoint resolves to no
  manifest file or output is quarantined, the task kept). Lite: the release's rule over every task
  read (a global step), and the shipped Lite list when the source has one (each entry a ``lite_task``:
  one that is malformed or names no published task is quarantined naming its place in the list).
- Workspaces: each workspace is listed safely (``scan.list_workspace``: links out of it, loops,
  unreadable or undecodable names and oversized files quarantined) -> every file read once: hashed,
  typed by magika, text extracted, explicit references extracted -> references resolved against the
  workspace's listing (a side input) -> EDGES; implicit edges per workspace (a group by workspace).
- ``lite`` rows repeat the ``full`` rows of Lite tasks (``subset_splits``): the tasks, their rubrics
  and graphs, and the files and edges of their data folders.
"""
from __future__ import annotations

import json
import posixpath

import apache_beam as beam
import pyarrow as pa
from apache_beam.options.pipeline_options import PipelineOptions

from benchwright.dataset import Dataset, Unit
from benchwright.errors import RecordError
from benchwright.hashing import stable_hash64
from benchwright.pipelines.workspace_bench_sources import SOURCE_KINDS, Source, Workspace, is_task_id, open_source
from benchwright.schemas import workspace_bench as schema
from benchwright.stage import Read, Reject, run_stage
from benchwright.writer import SPLIT_COLUMN, rows_to_table, with_split

FULL, LITE = schema.SPLITS
LITE_SEED = 0
QUALITY_FILE = "_build/extraction_quality.json"
PLANTED_EDGES = "planted_edges.jsonl"
REFUSED = "refused"  # a ReadTasks item that is a task-list element refused on the driver


class WorkspaceBenchOptions(PipelineOptions):
    """The dataset's own build options, parsed by Beam with the rest (recorded in the manifest)."""

    @classmethod
    def _add_argparse_args(cls, parser):
        parser.add_argument("--source-kind", dest="source_kind", default=None,
                            help=f"workspace_bench: read --source as a {' or a '.join(SOURCE_KINDS)} (default: a "
                                 "release when it holds the release's own markers, else one folder workspace)")


# --------------------------------------------------------------------------- tasks

def read_task(item, data_sizes: dict):
    """One task record -> a bundle {task, rubrics, task_edges}; its bad graph edges are quarantined."""
    from benchwright.workspace_bench import release

    kind, where, record = item
    if kind == REFUSED:  # a task-list element refused while the list was read: its reason
        raise RecordError(where, record)
    if kind == release.RUNNER:
        record = release.read_runner_task(where)  # its locator: tasks/<id>/metadata.json or tasks_lite/...
    else:  # a website record travels as its JSON text (see ``website_items``)
        record = json.loads(record)
    sizes = data_sizes.get(str(record.get("id", record.get("absolute_id"))))
    source_file = "/".join(where.rstrip("/").split("/")[-3:]) if kind == release.RUNNER else where
    task, rubrics, edges, problems = release.task_rows(record, kind, sizes, source_file=source_file)
    yield Read("rubric", len(rubrics))
    yield Read("task_edge", len(edges))
    for p in problems:
        yield Reject(p.get("unit", "task_edge"), p["locator"], p["reason"])
    yield {"task": task, "rubrics": rubrics, "task_edges": edges}


def website_items(tasks_json: str) -> list[tuple]:
    """The ReadTasks elements of a website ``tasks.json``, read on the driver: each task record as its
    JSON text (ASCII: a string the file escaped as a lone surrogate reaches Beam's coder as the escape,
    and ReadTasks, a stage, makes it encodable and counts it), and each element refused while the list
    was read as (REFUSED, locator, reason)."""
    from benchwright.workspace_bench import release

    refused: list = []
    items = [(release.WEBSITE, "tasks.json", json.dumps(r)) for r in release.read_tasks_json(tasks_json, refused)]
    return items + [(REFUSED, err.locator, err.reason) for err in refused]


def choose_lite(_, personas: list, shipped: dict | None, seed: int):
    """The Lite ids: the shipped list when the source has one, else the release's rule; both kept.
    The rule keeps the release's share (100 of 388 tasks), so a smaller source gets a smaller Lite.
    Each Lite entry is a ``lite_task`` read: a shipped entry that is malformed (refused while the list was
    read) or names no published task is quarantined; the others are the ``lite`` split's tasks."""
    from benchwright.workspace_bench.lite import lite_size, select_lite, shipped_lite

    size = lite_size(len(personas))
    rule = select_lite([{"absolute_id": i, "persona": p} for i, p in personas], size, seed) if personas else []
    lite = rule
    if shipped is not None:
        lite, problems = shipped_lite(shipped["entries"], {i for i, _ in personas}, shipped["in_source"])
        for locator, reason in shipped["refused"] + problems:
            yield Reject("lite_task", locator, reason)
    yield Read("lite_task", len(rule) if shipped is None else len(shipped["entries"]) + len(shipped["refused"]))
    yield {"rule": frozenset(rule), "lite": frozenset(lite), "shipped": shipped is not None}


def shipped_lite_list(src: Source, items: list) -> dict | None:
    """The source's own Lite list, read on the driver: {entries: [(locator, absolute_id)], refused:
    [(locator, reason)] (an element that is not a task object with an integer absolute_id, a repeated id),
    in_source: the ids of the source's task records}; None without one. A Lite file that cannot be read
    as a whole refuses the build (``SourceError`` naming it): which tasks are Lite is then unknown, and
    the rule's choice in its place would publish a Lite that is not the release's."""
    from benchwright.workspace_bench import release

    if src.lite_js:
        errors: list = []
        name = posixpath.basename(src.lite_js)
        entries = [(f"{name}#absolute_id={r['absolute_id']}", r["absolute_id"])
                   for r in release.read_lite_js(src.lite_js, errors)]
        refused = [(err.locator, err.reason) for err in errors]
    elif src.lite_folder_ids:
        entries = [(f"tasks_lite/{i}", int(i)) for i in src.lite_folder_ids if is_task_id(i)]
        refused = [(f"tasks_lite/{i}", "folder name is not a task id") for i in src.lite_folder_ids if not is_task_id(i)]
    else:
        return None
    in_source = {json.loads(r)["absolute_id"] for kind, _, r in items if kind == release.WEBSITE}
    in_source |= {int(url.rstrip("/").split("/")[-2]) for url in src.task_files}
    return {"entries": entries, "refused": refused, "in_source": in_source}


# --------------------------------------------------------------------------- workspaces

def list_files(ws: Workspace, limits):
    """A workspace's files (each counted as read) and the problems met listing it (quarantined)."""
    from benchwright.workspace_bench.scan import list_workspace

    entries, problems = list_workspace(ws.url, limits)
    for p in problems:
        yield Reject("file", f"{ws.name}/{p['path']}", p["reason"])
    for e in entries:
        if e["path"] not in ws.skip:
            yield {**e, "workspace": ws.name, "task_id": ws.task_id}


def scan_one(entry: dict, limits):
    """Read one file once: its FILES row, the references written in it, and what the implicit rules
    compare (numbers and names from its whole text, not only the excerpt). A file that does not parse
    as its type is kept; its references are lost, and that is quarantined under its own unit."""
    from benchwright.workspace_bench.deps import describe_file

    locator = f"{entry['workspace']}/{entry['path']}"
    try:
        described, refs, unparsable = describe_file(entry, limits)
    except RecordError as err:  # the scanner names the file in its workspace; the quarantine names both
        raise RecordError(locator if err.locator == entry["path"] else f"{entry['workspace']}/{err.locator}",
                          err.reason) from err
    if unparsable is not None:
        yield Reject("file_references", locator, unparsable)
    row = {k: described.get(k) for k in schema.FILES if k in described}
    row.update(file_id=locator, workspace=entry["workspace"], path=entry["path"], task_id=entry["task_id"],
               link_target=entry.get("link_target"))
    yield {"row": row, "refs": refs,
           "implicit": {k: described[k] for k in ("numbers", "entities") if k in described}}


def resolve_edges(scanned: dict, indexes: dict):
    from benchwright.workspace_bench import deps

    row = scanned["row"]
    for edge in deps.resolve(scanned["refs"], row["path"], indexes[row["workspace"]]):
        yield _edge_row(row["workspace"], row["task_id"], edge)


def implicit_edges(keyed):
    """One workspace's implicit edges, from its files' rows (names and text excerpts)."""
    from benchwright.workspace_bench.implicit import implicit_edges as infer

    (workspace, task_id), rows = keyed
    for edge in infer(sorted(rows, key=lambda r: r["path"])):
        yield _edge_row(workspace, task_id, edge)


def _edge_row(workspace: str, task_id, edge: dict) -> dict:
    key = "\x1f".join(str(x) for x in (workspace, edge["src"], edge.get("dst"), edge["reference"],
                                       edge["edge_type"], edge["evidence"]))
    return {**{k: edge.get(k) for k in schema.EDGES}, "workspace": workspace,
            "edge_id": f"{stable_hash64(key):016x}", "task_id": task_id}


def workspace_index(keyed):
    """One workspace's index of its scanned files: by path, name and content (an embedded picture
    with no recorded name is found by its bytes)."""
    from benchwright.workspace_bench import deps

    workspace, files = keyed
    return workspace, deps.WorkspaceIndex(sorted(p for p, _ in files), dict(files), posixpath.basename(workspace))


# --------------------------------------------------------------------------- rows and splits

def with_splits(row: dict, task_id, lite: dict):
    """The row in ``full``, and again in ``lite`` when it belongs to a Lite task."""
    yield {**row, SPLIT_COLUMN: FULL}
    if task_id is not None and int(task_id) in lite["lite"]:
        yield {**row, SPLIT_COLUMN: LITE}


def task_row(task: dict, lite: dict) -> dict:
    return {**task, "lite_rule_selected": int(task["absolute_id"]) in lite["rule"]}


def to_table(rows: list[dict], config: str) -> pa.Table:
    features = schema.FEATURES[config]
    return rows_to_table([{k: r.get(k) for k in features} | {SPLIT_COLUMN: r[SPLIT_COLUMN]} for r in rows],
                         with_split(features))


def write_quality(edges: list, source_url: str, staging: str) -> str:
    """Extraction measured against the source's planted truth (a synthetic source ships it)."""
    import fsspec

    from benchwright.workspace_bench import deps

    fs, path = fsspec.core.url_to_fs(posixpath.join(source_url, PLANTED_EDGES))
    if not fs.exists(path):
        return ""
    with fs.open(path, "r", encoding="utf-8") as f:
        truth = [json.loads(line) for line in f if line.strip()]
    report = deps.extraction_quality(sorted(edges, key=lambda e: (e["workspace"], e["src"], e["edge_id"])), truth)
    out = posixpath.join(staging, QUALITY_FILE)
    fs_out, out_path = fsspec.core.url_to_fs(out)
    fs_out.makedirs(posixpath.dirname(out_path), exist_ok=True)
    with fs_out.open(out_path, "w") as f:
        f.write(json.dumps(report, indent=2, sort_keys=True) + "\n")
    return out


class WorkspaceBench(Dataset):
    name = "workspace_bench"
    pretty_name = "Workspace-Bench: workspaces, file dependency graphs, tasks and rubrics"
    configs = schema.FEATURES
    id_columns = {"tasks": "task_id", "rubrics": "rubric_id", "files": "file_id", "edges": "edge_id",
                  "task_edges": "task_edge_id"}
    splits = schema.SPLITS
    subset_splits = {LITE: FULL}
    optional_keys = {"files": ("task_id",)}  # a role workspace's file belongs to no task
    optional_configs = tuple(schema.FEATURES)  # a website release has no files, a folder no tasks
    units = (Unit("task", "tasks", primary=True), Unit("rubric", "rubrics"), Unit("task_edge", "task_edges"),
             Unit("file", "files", primary=True), Unit("lite_task", "tasks", split=LITE))
    license = "cc-by-4.0"
    description = ("Workspaces of heterogeneous files for five worker personas, the dependencies between their "
                   "files (explicit with evidence, implicit by rule), and tasks over them judged by yes/no rubrics, "
                   "with each task's own dependency graph; lite is the Workspace-Bench-Lite subset.")
    task_categories = ("question-answering", "text-retrieval")
    tags = ("agents", "workspaces", "file-dependencies", "evaluation", "rubrics")
    synth = "benchwright.workspace_bench.synth:write_source"
    evaluator = "benchwright.evaluation.workspace_bench:run_cli"
    baselines = "benchwright.baselines.workspace_bench:run_cli"
    references = {"rubrics": {"task_id": "tasks"}, "task_edges": {"task_id": "tasks"}}  # of published tasks
    lite_seed = LITE_SEED

    def expand(self, pipeline, source, staging, previous):
        from benchwright.workspace_bench import release
        from benchwright.workspace_bench.scan import DEFAULT_LIMITS

        src: Source = open_source(source, pipeline.options.view_as(WorkspaceBenchOptions).source_kind)
        limits = DEFAULT_LIMITS

        # Workspaces: list, read each file once, resolve references against the workspace's listing.
        listed = run_stage(pipeline | "ListWorkspaces" >> beam.Create(src.workspaces, reshuffle=False),
                           "ListFiles", lambda ws: list_files(ws, limits), unit="file",
                           locate=lambda ws: ws.name, source=True, total=len(src.workspaces), what="workspaces")
        entries = listed.main
        scanned = run_stage(entries | "SpreadFiles" >> beam.Reshuffle(), "ScanFiles",
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
             | "ExtractionQuality" >> beam.Map(write_quality, source, staging))

        # Tasks: the runner's metadata when present (more fields), else the website's tasks.json.
        if src.task_files:
            items = [(release.RUNNER, url, None) for url in src.task_files]
        elif src.tasks_json:  # a bad element is a task read and quarantined (ReadTasks re-raises its error)
            items = website_items(src.tasks_json)
        else:
            items = []
        items += [(REFUSED, locator, reason) for locator, reason in src.not_tasks]
        shipped = shipped_lite_list(src, items)
        data_sizes = (entries | "DataFileSizes" >> beam.Map(lambda e: (e["task_id"], (e["path"], e["size"])))
                      | "OnlyTaskFiles" >> beam.Filter(lambda kv: kv[0] is not None)
                      | "GroupSizes" >> beam.GroupByKey() | "SizeDict" >> beam.MapTuple(lambda t, s: (t, dict(s))))
        tasks = run_stage(pipeline | "ListTasks" >> beam.Create(items, reshuffle=False)
                          | "SpreadTasks" >> beam.Reshuffle(), "ReadTasks", read_task, unit="task",
                          locate=lambda item: item[1], side_inputs=[beam.pvalue.AsDict(data_sizes)], source=True,
                          total=len(items), what="tasks")
        bundles = tasks.main
        personas = bundles | "Personas" >> beam.Map(lambda b: (int(b["task"]["absolute_id"]), b["task"]["persona"]))
        chosen = run_stage(pipeline | "LiteSeed" >> beam.Create([None]), "ChooseLite", choose_lite, unit="lite_task",
                           locate=lambda _: "the Lite list",
                           side_inputs=[beam.pvalue.AsList(personas), shipped, self.lite_seed])
        lite = beam.pvalue.AsSingleton(chosen.main)

        rows = {
            "tasks": bundles | "TaskRows" >> beam.FlatMap(
                lambda b, lt: with_splits(task_row(b["task"], lt), b["task"]["task_id"], lt), lite),
            "rubrics": bundles | "RubricRows" >> beam.FlatMap(
                lambda b, lt: [r for x in b["rubrics"] for r in with_splits(x, b["task"]["task_id"], lt)], lite),
            "task_edges": bundles | "TaskEdgeRows" >> beam.FlatMap(
                lambda b, lt: [r for x in b["task_edges"] for r in with_splits(x, b["task"]["task_id"], lt)], lite),
            "files": scanned.main | "FileRows" >> beam.FlatMap(
                lambda s, lt: with_splits(s["row"], s["row"]["task_id"], lt), lite),
            "edges": edges | "EdgeRows" >> beam.FlatMap(lambda e, lt: with_splits(e, e["task_id"], lt), lite),
        }
        tables = {config: (pcoll | f"Batch{config}" >> beam.BatchElements(min_batch_size=100, max_batch_size=2000)
                           | f"{config}Table" >> beam.Map(to_table, config))
                  for config, pcoll in rows.items()}
        return tables, [listed, scanned, explicit, implicit, tasks, chosen]

    def responsible_ai(self, staging: str, source: str) -> dict:
        from pathlib import Path

        from benchwright.cards.workspace_bench import responsible_ai

        return responsible_ai(self, Path(staging), source)

    def card_context(self, staging: str) -> dict:
        from pathlib import Path

        from benchwright.baselines.workspace_bench import retrieval_table
        from benchwright.card import markdown_table
        from benchwright.cards.workspace_bench import card_statistics

        # the retrieval baseline runs on the build itself: the card shows its recall
        rows = []
        for split in self.splits:
            result = retrieval_table(staging, split)
            rows += [[split, name, result["tasks_evaluated"]] + [r[f"{m}@{k}"] for k in (5, 10)
                                                                  for m in ("recall", "pooled_recall")]
                     for name, r in result["rankers"].items()]
        table = markdown_table(["split", "ranker", "tasks", "recall@5", "pooled recall@5", "recall@10",
                                "pooled recall@10"], [[v if v is not None else "n/a" for v in r] for r in rows])
        return {**card_statistics(Path(staging)), "retrieval_table": table}

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
