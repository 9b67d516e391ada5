"""Workspace-Bench task records as the release ships them, turned into TASKS / RUBRICS / TASK_EDGES rows.

Three places hold task records (all read through fsspec, so any URL works):

- the website's ``tasks.json``: ``{"full": [task, ...]}``;
- the website's ``tasks-lite.js``: ``window.WORKSPACE_BENCH_LITE_TASKS = [task, ...];``, JavaScript
  that is parsed here, never executed: the array literal after the assignment is read as JSON;
- the runner's ``tasks/<id>/metadata.json``: the same fields plus ``id``, ``file_system`` (the role,
  which picks the workspace) and ``target_path`` on each manifest entry.

Locators name the file and the task: ``tasks.json#absolute_id=12`` (a website record),
``tasks/12/metadata.json`` (a runner record), and below them ``.../file_dep_graph[3]``,
``.../rubric_types[4]``, ``.../data_manifest[0]``.

``task_rows`` raises ``RecordError`` for a task that cannot be published (a missing key, an unknown
persona, rubric types not parallel to the rubrics...). A bad ``file_dep_graph`` edge is not fatal:
it comes back as a problem ``{unit: "task_edge", locator, reason}`` and no row, so every edge of the
release is either a row or a problem. A manifest file the pipeline has no bytes for (when it passes
``data_sizes``) is a problem ``{unit: "data_file", ...}``.
"""
from __future__ import annotations

import itertools
import json
import posixpath
import re

import fsspec
import networkx as nx

from benchwright import strict_json
from benchwright.errors import RecordError, SourceError
from benchwright.schemas.workspace_bench import (CAPABILITIES, DIFFICULTIES, PERSONAS, ROLE_OF_PERSONA, ROLES,
                                                  RUBRIC_TYPES)

WEBSITE, RUNNER = "website", "runner"
SOURCE_FORMATS = (WEBSITE, RUNNER)
LITE_JS_VARIABLE = "WORKSPACE_BENCH_LITE_TASKS"
# Keys every task record carries (website and runner alike); the runner adds id and file_system.
REQUIRED_KEYS = ("persona", "task", "task_diff", "output_files", "rubrics", "rubric_types", "file_dep_graph",
                 "data_manifest", "tested_capabilities")
# Simple cycles are enumerated up to this many (their number grows exponentially with dense graphs);
# a task at the bound reports the bound.
MAX_CYCLES = 1000
TASK_EDGE_UNIT, DATA_FILE_UNIT = "task_edge", "data_file"

_RUBRIC_TYPE = re.compile(r"^(basic|outcome|process|results?)(?:\s+(?:evaluation|assessment))?$")


# --------------------------------------------------------------------------------------------- reading


def _name(url: str) -> str:
    return posixpath.basename(url.rstrip("/"))


def _read_text(url: str) -> str:
    try:
        with fsspec.open(url, "r", encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError as exc:
        raise SourceError(f"{url}: not found") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise SourceError(f"{url}: unreadable: {exc}") from exc


def _parse_json(text: str, name: str):
    """JSON, or a SourceError naming the file, line, column and character offset of the fault."""
    try:
        return strict_json.loads(text)
    except json.JSONDecodeError as exc:
        raise SourceError(f"{name}: not JSON at character {exc.pos} (line {exc.lineno}, column {exc.colno}): "
                          f"{exc.msg}") from exc
    except ValueError as exc:  # a repeated key, an integer past Python's digit limit
        raise SourceError(f"{name}: not JSON: {exc}") from exc


def _checked_records(records, name: str, errors: list | None) -> list[dict]:
    """The task objects of a list, each with an integer absolute_id, ids unique; a bad element is a
    RecordError naming the file and its position (raised, or appended to ``errors``)."""
    out, seen = [], set()
    for i, record in enumerate(records):
        try:
            if not isinstance(record, dict):
                raise RecordError(f"{name}#[{i}]", f"a task must be a JSON object, got {type(record).__name__}")
            deep = strict_json.depth_problem(record)  # it travels as its JSON text: json.dumps recurses
            if deep:
                raise RecordError(f"{name}#[{i}]", f"the task is {deep}")
            aid = record.get("absolute_id")
            if isinstance(aid, bool) or not isinstance(aid, int):
                raise RecordError(f"{name}#[{i}]", f"absolute_id missing or not an integer: {aid!r}")
            if aid in seen:
                raise RecordError(f"{name}#absolute_id={aid}", "duplicate absolute_id")
            seen.add(aid)
            out.append(record)
        except RecordError as err:
            if errors is None:
                raise
            errors.append(err)
    return out


def read_tasks_json(url: str, errors: list | None = None) -> list[dict]:
    """The task records of the website's ``tasks.json`` (``{"full": [...]}``), in file order.

    A file that is not JSON or has no ``full`` list is a ``SourceError`` (the whole source is
    unreadable); a bad element is a ``RecordError`` (raised, or appended to ``errors`` and skipped)."""
    name = _name(url)
    data = _parse_json(_read_text(url), name)
    if not isinstance(data, dict) or not isinstance(data.get("full"), list):
        raise SourceError(f"{name}: expected an object with a 'full' list of tasks")
    return _checked_records(data["full"], name, errors)


# `window.X = [` or `var X = [`; the array literal runs from the bracket to the end of the statement.
_LITE_ASSIGNMENT = re.compile(r"(?:\bwindow\s*\.\s*|\b(?:var|let|const)\s+)" + LITE_JS_VARIABLE + r"\s*=\s*(?=\[)")


def read_lite_js(url: str, errors: list | None = None) -> list[dict]:
    """The task records of the website's ``tasks-lite.js`` without executing it: the array literal
    assigned to ``window.WORKSPACE_BENCH_LITE_TASKS`` is decoded as JSON (``raw_decode`` stops at its
    closing bracket; only a ``;``, whitespace and comments may follow). A file in any other shape is a
    ``SourceError`` naming the file and the position."""
    name = _name(url)
    text = _read_text(url)
    match = _LITE_ASSIGNMENT.search(text)
    if match is None:
        raise SourceError(f"{name}: no assignment to window.{LITE_JS_VARIABLE} = [...]")
    start = match.end()
    try:
        records, end = strict_json.raw_decode(text, start)
    except json.JSONDecodeError as exc:  # its line and column count from the start of the file
        raise SourceError(f"{name}: the array assigned to {LITE_JS_VARIABLE} is not JSON at character {exc.pos} "
                          f"(line {exc.lineno}, column {exc.colno}): {exc.msg}") from exc
    except ValueError as exc:  # a repeated key, an integer past Python's digit limit, nesting (as tasks.json)
        raise SourceError(f"{name}: the array assigned to {LITE_JS_VARIABLE} is not JSON: {exc}") from exc
    rest = re.sub(r"//[^\n]*|/\*.*?\*/", "", text[end:], flags=re.S).strip()
    if rest not in ("", ";"):
        line = text.count("\n", 0, end) + 1
        raise SourceError(f"{name}: unexpected code after the task array at character {end} (line {line}): "
                          f"{rest[:40]!r}")
    return _checked_records(records, name, errors)


def read_runner_task(url: str, locator: str | None = None) -> dict:
    """One runner ``tasks/<id>/metadata.json``; ``locator`` defaults to its last three path parts.
    The folder name must be the record's ``id`` (the runner names case folders by ``id``)."""
    parts = url.rstrip("/").split("/")
    locator = locator or "/".join(parts[-3:])
    folder = parts[-2] if len(parts) >= 2 else ""
    try:
        with fsspec.open(url, "r", encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise RecordError(locator, f"unreadable: {exc}") from exc
    try:
        record = strict_json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordError(locator, f"not JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from exc
    except ValueError as exc:  # a repeated key, an integer past Python's digit limit
        raise RecordError(locator, f"not JSON: {exc}") from exc
    if not isinstance(record, dict):
        raise RecordError(locator, f"expected a JSON object, got {type(record).__name__}")
    for key in ("id", "file_system"):
        if key not in record:
            raise RecordError(locator, f"missing key {key!r}")
    if str(record["id"]) != folder:
        raise RecordError(locator, f"id {record['id']!r} is not the folder's name {folder!r}")
    return record


def read_runner_tasks(root_url: str, folder: str = "tasks", errors: list | None = None) -> list[dict]:
    """Every ``<root>/<folder>/<id>/metadata.json``, ordered by id (numeric ids numerically). A file
    that cannot be read or lacks ``id`` / ``file_system`` is a ``RecordError`` naming it (raised, or
    appended to ``errors`` and skipped)."""
    fs, root = fsspec.core.url_to_fs(root_url)
    protocol = root_url.split("://", 1)[0] + "://" if "://" in root_url else ""
    base = posixpath.join(root.rstrip("/"), folder)
    ids = sorted((posixpath.basename(p.rstrip("/")) for p in fs.ls(base, detail=False) if fs.isdir(p))
                 if fs.isdir(base) else [], key=lambda i: (not i.isdigit(), int(i) if i.isdigit() else 0, i))
    records = []
    for task_id in ids:
        url = protocol + posixpath.join(base, task_id, "metadata.json")
        try:
            records.append(read_runner_task(url, f"{folder}/{task_id}/metadata.json"))
        except RecordError as err:
            if errors is None:
                raise
            errors.append(err)
    return records


# --------------------------------------------------------------------------------------------- records


def normalise_rubric_type(label: str, locator: str = "rubric_types") -> str:
    """A release rubric-type label onto RUBRIC_TYPES: "Outcome Evaluation" and the legacy "Process
    Assessment" alike, "Result" and "Results" both to "Result" (case and spacing ignored)."""
    match = _RUBRIC_TYPE.match(" ".join(str(label).split()).lower()) if isinstance(label, str) else None
    if match is None:
        raise RecordError(locator, f"unknown rubric type {label!r} (known: {', '.join(RUBRIC_TYPES)} "
                                   f"+ ' Evaluation' / ' Assessment')")
    word = match.group(1)
    return "Result" if word.startswith("result") else word.capitalize()


def task_locator(record: dict, source_format: str, source_file: str | None = None) -> str:
    """Where a record lives: ``tasks.json#absolute_id=N`` (website) or ``tasks/<id>/metadata.json`` (runner)."""
    get = record.get if isinstance(record, dict) else (lambda key, default=None: default)
    if source_format == RUNNER:
        return source_file or f"tasks/{get('id', get('absolute_id'))}/metadata.json"
    return f"{source_file or 'tasks.json'}#absolute_id={get('absolute_id')}"


def _below(locator: str, part: str) -> str:
    return f"{locator}{'/' if '#' in locator else '#'}{part}"


def _string_list(record: dict, key: str, locator: str) -> list[str]:
    value = record[key]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise RecordError(_below(locator, key), "expected a list of strings")
    return value


def _absolute_id(record: dict, source_format: str, locator: str) -> int:
    aid = record.get("absolute_id")
    if aid is None and source_format == RUNNER:
        aid = record.get("id")
    if isinstance(aid, str) and aid.isdigit():
        aid = int(aid)
    if isinstance(aid, bool) or not isinstance(aid, int):
        raise RecordError(locator, f"absolute_id missing or not an integer: {aid!r}")
    if source_format == RUNNER and "id" in record and str(record["id"]) != str(aid):
        raise RecordError(locator, f"id {record['id']!r} differs from absolute_id {aid}")
    return aid


def _manifest(record: dict, locator: str) -> list[dict]:
    entries = record["data_manifest"]
    if not isinstance(entries, list):
        raise RecordError(_below(locator, "data_manifest"), "expected a list")
    out = []
    first: dict[tuple, int] = {}  # (key, value) -> the entry that gave it first
    for i, entry in enumerate(entries):
        where = _below(locator, f"data_manifest[{i}]")
        if not isinstance(entry, dict):
            raise RecordError(where, "expected an object")
        for key in ("filename", "stored_relpath"):
            if not isinstance(entry.get(key), str) or not entry[key]:
                raise RecordError(where, f"{key} missing or empty")
            # one file listed twice would count twice (file_count, manifest_bytes) and make its graph node ambiguous
            j = first.setdefault((key, entry[key]), i)
            if j != i:
                raise RecordError(where, f"{key} {entry[key]!r} is data_manifest[{j}]'s too: a manifest lists a "
                                         "file once")
        target = entry.get("target_path")
        if target is not None and not isinstance(target, str):
            raise RecordError(where, "target_path is not a string")
        out.append({"filename": entry["filename"], "stored_relpath": entry["stored_relpath"], "target_path": target})
    return out


class Endpoints:
    """Resolves a file_dep_graph endpoint to a node: a manifest file (by file name, or by the stored
    path / stored name a few records use) or a declared output (by path or base name). Keys are
    the full names, never the 16-hex prefix, which several files of one task can share."""

    def __init__(self, manifest: list[dict], outputs: list[str] = ()):
        self.manifest = {}
        for m in manifest:
            for key in (m["filename"], m["stored_relpath"], posixpath.basename(m["stored_relpath"])):
                self.manifest.setdefault(key, m["filename"])
        self.outputs = {}
        for o in outputs:
            for key in (o, posixpath.basename(o.rstrip("/"))):
                self.outputs.setdefault(key, o)

    def resolve(self, name: str) -> tuple[str, str] | None:
        """(node, kind) or None; a name that is both a manifest file and an output is the manifest file
        (the task reads it; writing it back does not make it a new node)."""
        if name in self.manifest:
            return self.manifest[name], "manifest"
        if name in self.outputs:
            return self.outputs[name], "output"
        return None


def graph_statistics(edges: list[tuple[str, str]], manifest_files: list[str]) -> dict:
    """networkx measures of a task's dependency graph (``edges`` as (src, dst) node pairs)."""
    graph = nx.DiGraph(edges)
    acyclic = nx.is_directed_acyclic_graph(graph)
    return {
        "graph_nodes": graph.number_of_nodes(),
        "graph_edges": graph.number_of_edges(),
        "graph_depth": nx.dag_longest_path_length(graph) if acyclic else -1,
        "graph_components": nx.number_weakly_connected_components(graph) if graph.number_of_nodes() else 0,
        "graph_cycles": 0 if acyclic else sum(1 for _ in itertools.islice(nx.simple_cycles(graph), MAX_CYCLES)),
        "isolated_manifest_files": sum(1 for name in manifest_files if name not in graph),
    }


def task_rows(record: dict, source_format: str, data_sizes: dict | None = None,
              source_file: str | None = None) -> tuple[dict, list[dict], list[dict], list[dict]]:
    """One release task -> (TASKS row, RUBRICS rows, TASK_EDGES rows, problems).

    Rows are plain dicts with ClassLabel columns as names (persona, difficulty, rubric_type): the
    pipeline encodes them. ``lite_rule_selected`` is left None: only the pipeline, which sees every
    task, can apply the Lite rule. ``data_sizes`` ({stored_relpath or filename: bytes}) gives
    ``manifest_bytes`` when the pipeline has the task's files; without it ``manifest_bytes`` is 0.
    ``source_file`` names the file in locators (default ``tasks.json`` / ``tasks/<id>/metadata.json``)."""
    if source_format not in SOURCE_FORMATS:
        raise ValueError(f"source_format must be one of {SOURCE_FORMATS}, got {source_format!r}")
    locator = task_locator(record, source_format, source_file)
    if not isinstance(record, dict):
        raise RecordError(locator, "a task must be a JSON object")
    missing = [k for k in REQUIRED_KEYS if k not in record]
    if missing:
        raise RecordError(locator, f"missing keys: {', '.join(missing)}")
    absolute_id = _absolute_id(record, source_format, locator)
    task_id = str(absolute_id)

    persona, difficulty = record["persona"], record["task_diff"]
    if persona not in PERSONAS:
        raise RecordError(_below(locator, "persona"), f"unknown persona {persona!r}")
    if difficulty not in DIFFICULTIES:
        raise RecordError(_below(locator, "task_diff"), f"unknown difficulty {difficulty!r}")
    role = record.get("file_system") or ROLE_OF_PERSONA[persona]
    if role not in ROLES:
        raise RecordError(_below(locator, "file_system"), f"unknown role {role!r} (known: {', '.join(ROLES)})")
    if not isinstance(record["task"], str) or not record["task"].strip():
        raise RecordError(_below(locator, "task"), "the instruction is missing or empty")
    outputs = _string_list(record, "output_files", locator)
    rubrics = _string_list(record, "rubrics", locator)
    labels = _string_list(record, "rubric_types", locator)
    if len(labels) != len(rubrics):
        raise RecordError(_below(locator, "rubric_types"),
                          f"{len(labels)} rubric types for {len(rubrics)} rubrics (the lists are parallel)")
    capabilities = _string_list(record, "tested_capabilities", locator)
    unknown = sorted(set(capabilities) - set(CAPABILITIES))
    if unknown:
        raise RecordError(_below(locator, "tested_capabilities"), f"unknown capabilities {unknown}")
    # collaboration_type is the same list under its older name; a record without it has only the new name
    collaboration = _string_list(record, "collaboration_type", locator) if "collaboration_type" in record \
        else list(capabilities)
    manifest = _manifest(record, locator)
    file_count = record.get("file_count", len(manifest))
    if file_count != len(manifest):
        raise RecordError(_below(locator, "file_count"), f"file_count {file_count!r} but {len(manifest)} manifest entries")
    graph = record["file_dep_graph"]
    if not isinstance(graph, list):
        raise RecordError(_below(locator, "file_dep_graph"), "expected a list of {from, to} edges")

    rubric_rows = [{
        "rubric_id": f"{task_id}/{i}", "task_id": task_id, "index": i, "rubric": text,
        "rubric_type": normalise_rubric_type(label, _below(locator, f"rubric_types[{i}]")),
        "rubric_type_original": label, "persona": persona, "difficulty": difficulty,
    } for i, (text, label) in enumerate(zip(rubrics, labels))]

    edge_rows, problems, resolved = _edge_rows(graph, Endpoints(manifest, outputs), task_id, locator)
    manifest_bytes = _manifest_bytes(manifest, data_sizes, locator, problems)
    task_row = {
        "task_id": task_id, "absolute_id": absolute_id, "persona": persona, "role": role,
        "instruction": record["task"], "difficulty": difficulty, "output_files": outputs,
        "tested_capabilities": capabilities, "collaboration_type": collaboration,
        "rubric_count": len(rubrics), "file_count": len(manifest), "data_manifest": manifest,
        **graph_statistics(resolved, [m["filename"] for m in manifest]),
        "manifest_bytes": manifest_bytes, "lite_rule_selected": None, "source_format": source_format,
    }
    return task_row, rubric_rows, edge_rows, problems


def _edge_rows(graph: list, endpoints: Endpoints, task_id: str,
               locator: str) -> tuple[list[dict], list[dict], list[tuple]]:
    """(TASK_EDGES rows, problems, resolved (from, to) nodes) of a task's ``file_dep_graph``: an edge
    that is not {from, to} file names, or names neither a manifest file nor a declared output, is a
    problem (quarantined), not a row."""
    edge_rows, problems, resolved = [], [], []
    for i, edge in enumerate(graph):
        where = _below(locator, f"file_dep_graph[{i}]")
        if not isinstance(edge, dict) or not all(isinstance(edge.get(k), str) for k in ("from", "to")):
            problems.append({"unit": TASK_EDGE_UNIT, "locator": where, "reason": "an edge must be {from, to} file names"})
            continue
        src, dst = endpoints.resolve(edge["from"]), endpoints.resolve(edge["to"])
        bad = [f"{end} {edge[end]!r}" for end, node in (("from", src), ("to", dst)) if node is None]
        if bad:
            problems.append({"unit": TASK_EDGE_UNIT, "locator": where,
                             "reason": f"{' and '.join(bad)} is neither a manifest file nor a declared output"})
            continue
        resolved.append((src[0], dst[0]))
        edge_rows.append({"task_edge_id": f"{task_id}/{i}", "task_id": task_id, "src": edge["from"],
                          "dst": edge["to"], "src_kind": src[1], "dst_kind": dst[1]})
    return edge_rows, problems, resolved


def _manifest_bytes(manifest: list[dict], data_sizes: dict | None, locator: str, problems: list[dict]) -> int:
    """The bytes of a task's data files (0 without ``data_sizes``); a manifest entry with no data file
    is appended to ``problems``."""
    manifest_bytes = 0
    if data_sizes is not None:
        for i, m in enumerate(manifest):
            size = data_sizes.get(m["stored_relpath"], data_sizes.get(m["filename"]))
            if size is None:
                problems.append({"unit": DATA_FILE_UNIT, "locator": _below(locator, f"data_manifest[{i}]"),
                                 "reason": f"no data file {m['stored_relpath']!r} in the task's folder"})
            else:
                manifest_bytes += int(size)
    return manifest_bytes
