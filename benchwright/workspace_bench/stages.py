"""What Workspace-Bench's pipeline stages do to one element (``pipelines/workspace_bench.py`` runs them).

- Workspaces: a workspace's files listed safely, each file read once (hashed, typed, its text and references
  extracted), references resolved against its workspace's index, implicit edges per workspace; the extraction
  measured against a synthetic source's planted edges.
- Tasks: a task record (the runner's ``metadata.json`` or a ``tasks.json`` entry) -> its task, rubrics and
  task-graph rows; the Lite choice (the release's rule, and the source's own list when it ships one).
- Rows: each row in ``full``, and again in ``lite`` when its task is a Lite task.
"""
from __future__ import annotations

import json
import posixpath

from benchwright import strict_json
from benchwright.errors import RecordError
from benchwright.hashing import stable_hash64
from benchwright.ranges import check_records
from benchwright.records import SPLIT_COLUMN, Read, Reject
from benchwright.schemas import workspace_bench as schema
from benchwright.workspace_bench.sources import Source, Workspace, is_task_id

FULL, LITE = schema.SPLITS
QUALITY_FILE = "_build/extraction_quality.json"
PLANTED_EDGES = "planted_edges.jsonl"
REFUSED = "refused"  # a ReadTasks item that is a task-list element refused on the driver


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


def write_quality(edges: list, source_url: str, staging: str) -> str:
    """Extraction measured against the source's planted truth (a synthetic source ships it)."""
    import fsspec

    from benchwright.workspace_bench import deps

    fs, path = fsspec.core.url_to_fs(posixpath.join(source_url, PLANTED_EDGES))
    if not fs.exists(path):
        return ""
    with fs.open(path, "r", encoding="utf-8") as f:
        truth = [strict_json.loads(line) for line in f if line.strip()]
    report = deps.extraction_quality(sorted(edges, key=lambda e: (e["workspace"], e["src"], e["edge_id"])), truth)
    out = posixpath.join(staging, QUALITY_FILE)
    fs_out, out_path = fsspec.core.url_to_fs(out)
    fs_out.makedirs(posixpath.dirname(out_path), exist_ok=True)
    with fs_out.open(out_path, "w") as f:
        f.write(json.dumps(report, indent=2, sort_keys=True) + "\n")
    return out

# --------------------------------------------------------------------------- tasks

def task_items(src: Source) -> list[tuple]:
    """The ReadTasks elements of a source, made on the driver: the runner's metadata when present (more fields),
    else the website's tasks.json (a bad element is a task read and quarantined: ReadTasks re-raises its error);
    and each folder of ``tasks/`` that is no task, refused."""
    from benchwright.workspace_bench import release

    if src.task_files:
        items = [(release.RUNNER, url, None) for url in src.task_files]
    elif src.tasks_json:
        items = website_items(src.tasks_json)
    else:
        items = []
    return items + [(REFUSED, locator, reason) for locator, reason in src.not_tasks]


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
    # an integer no column of its rows can hold (an absolute_id of 10^19) refuses the task, not the build
    check_records(schema.CONFIGS, {"tasks": task, "rubrics": rubrics, "task_edges": edges},
                  release.task_locator(record, kind, source_file))
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


def choose_lite(_, personas: list, shipped: dict | None, seed: int, namespace: str):
    """The Lite ids: the shipped list when the source has one, else the release's rule; both kept.
    The rule keeps the release's share (100 of 388 tasks), so a smaller source gets a smaller Lite.
    Each Lite entry is a ``lite_task`` read: a shipped entry that is malformed (refused while the list was
    read) or names no published task is quarantined; the others are the ``lite`` split's tasks."""
    from benchwright.workspace_bench.lite import lite_size, select_lite, shipped_lite

    size = lite_size(len(personas))
    rule = (select_lite([{"absolute_id": i, "persona": p} for i, p in personas], size, seed, namespace=namespace)
            if personas else [])
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


# --------------------------------------------------------------------------- rows and splits

def with_splits(row: dict, task_id, lite: dict):
    """The row in ``full``, and again in ``lite`` when it belongs to a Lite task."""
    yield {**row, SPLIT_COLUMN: FULL}
    if task_id is not None and int(task_id) in lite["lite"]:
        yield {**row, SPLIT_COLUMN: LITE}


def task_row(task: dict, lite: dict) -> dict:
    return {**task, "lite_rule_selected": int(task["absolute_id"]) in lite["rule"]}
