"""Workspace-Bench sources, on any fsspec URL: what a source holds and where.

Three shapes:
- the runner's layout: ``tasks/<id>/metadata.json`` + ``tasks/<id>/data/<16 hex>_<name>``,
  ``tasks_lite/<id>/`` and the role workspaces ``filesys/<role>_raw/`` (the ``_standard`` and
  ``_workdir_*`` copies a run makes are not the release and are not read);
- the website release: ``tasks.json`` (``{"full": [...]}``) and ``tasks-lite.js``, with or without
  the runner's folders beside them (the runner's metadata, which has more fields, wins);
- any other folder: one workspace of files a user wants scanned.

A source is a release (``SOURCE_KINDS``: ``release``) only when its root holds one of the release's
own markers (:func:`release_markers`): a ``tasks/<digits>/metadata.json`` or
``tasks_lite/<digits>/metadata.json``, a ``filesys/<role>_raw/`` folder of one of the five roles, a
``tasks.json`` whose object starts with the ``full`` key, or a ``tasks-lite.js`` that assigns
``WORKSPACE_BENCH_LITE_TASKS``. A folder that merely has a top-level ``tasks/`` (an Ansible role's
``tasks/main.yml``, a project's ``tasks/build/``) is a ``folder``. ``benchwright build --source-kind``
(the ``source_kind`` setting, ``benchwright.workspace_bench.config``) overrides the detection. In a release, a ``tasks/`` sub-folder whose name is not a task id is not a
task: it is listed in ``Source.not_tasks`` (the pipeline quarantines it with that reason), never read.
"""
from __future__ import annotations

import dataclasses
import posixpath
import re

import fsspec
from fsspec.implementations.local import LocalFileSystem

from benchwright.errors import SourceError
from benchwright.files import Root
from benchwright.schemas.workspace_bench import ROLES
from benchwright.utf8 import encodable_str
from benchwright.workspace_bench.config import FOLDER, RELEASE, SOURCE_KINDS

TASKS_JSON = "tasks.json"
LITE_JS = "tasks-lite.js"
# the head of a file read to tell a release's task lists from other files of the same name
_MARKER_HEAD_BYTES = 4096
_TASKS_JSON_HEAD = re.compile(r'^\ufeff?\s*\{\s*"full"\s*:')
_LITE_JS_HEAD = re.compile(r"\bWORKSPACE_BENCH_LITE_TASKS\s*=")


@dataclasses.dataclass(frozen=True)
class Workspace:
    name: str                 # "filesys/kaifa_raw", "tasks/12", or the scanned folder's name
    url: str
    task_id: str | None = None
    skip: tuple = ()          # paths inside it that are the release's bookkeeping, not workspace files


@dataclasses.dataclass(frozen=True)
class Source:
    url: str
    shape: str                              # "release" or "folder"
    task_files: tuple = ()                  # tasks/<id>/metadata.json URLs (the runner's layout)
    tasks_json: str | None = None           # the website release's task list
    lite_js: str | None = None              # the website release's Lite list
    lite_folder_ids: tuple = ()             # ids of tasks_lite/<id>/ folders
    workspaces: tuple = ()
    not_tasks: tuple = ()                   # (locator, reason): folders of tasks/ and tasks_lite/ that are not tasks
    markers: tuple = ()                     # what made it a release (release_markers), or ("--source-kind",)


def _join(url: str, *parts: str) -> str:
    return posixpath.join(url.rstrip("/"), *parts)


def _head(fs, path: str) -> str:
    try:
        with fs.open(path, "rb") as f:
            return f.read(_MARKER_HEAD_BYTES).decode("utf-8", "replace")
    except OSError:
        return ""


def release_markers(fs, names: dict[str, str]) -> list[str]:
    """The release markers a source root holds (``names``: its entries' base name -> path), each
    named as found; empty for a plain folder."""
    found = []
    for folder in ("tasks", "tasks_lite"):
        if folder in names and fs.isdir(names[folder]):
            ids = sorted(posixpath.basename(p.rstrip("/")) for p in fs.ls(names[folder], detail=False))
            marked = next((i for i in ids if is_task_id(i) and fs.isfile(_join(names[folder], i, "metadata.json"))), None)
            if marked is not None:
                found.append(f"{folder}/{marked}/metadata.json")
    if "filesys" in names and fs.isdir(names["filesys"]):
        roles = {posixpath.basename(p.rstrip("/")) for p in fs.ls(names["filesys"], detail=False)}
        found += [f"filesys/{r}_raw/" for r in ROLES if f"{r}_raw" in roles]
    if TASKS_JSON in names and fs.isfile(names[TASKS_JSON]) and _TASKS_JSON_HEAD.match(_head(fs, names[TASKS_JSON])):
        found.append(f'{TASKS_JSON} ({{"full": [...]}})')
    if LITE_JS in names and fs.isfile(names[LITE_JS]) and _LITE_JS_HEAD.search(_head(fs, names[LITE_JS])):
        found.append(f"{LITE_JS} (WORKSPACE_BENCH_LITE_TASKS)")
    return found


def open_source(url: str, kind: str | None = None) -> Source:
    """The source at ``url``: a release when its root holds a release marker (or ``kind`` is
    ``release``), else one folder workspace (``kind`` ``folder`` forces it)."""
    if kind is not None and kind not in SOURCE_KINDS:
        raise SourceError(f"unknown source kind {kind!r} (one of {', '.join(SOURCE_KINDS)})")
    fs, root = fsspec.core.url_to_fs(url)
    if not fs.isdir(root):
        raise SourceError(f"{url}: not a folder")
    protocol = url.split("://", 1)[0] + "://" if "://" in url else ""
    as_url = lambda p: protocol + p if protocol else p  # noqa: E731
    names = {posixpath.basename(p.rstrip("/")): p for p in fs.ls(root, detail=False)}
    # a task folder, its metadata.json or a task list that a symlink puts outside the source is not read (its
    # bytes, and the workspace under it, are not the source's); a task list is not even opened to tell the kind
    source = Root(root, "the source", isinstance(fs, LocalFileSystem))
    for name in (TASKS_JSON, LITE_JS):
        problem = source.link_problem(names[name]) if name in names else None
        if problem:
            raise SourceError(f"{url}: {name} {problem}")
    markers = release_markers(fs, names) if kind is None else [f"--source-kind {kind}"]
    if kind == FOLDER or not markers:
        name = encodable_str(posixpath.basename(root.rstrip("/"))) or "workspace"
        return Source(url=url, shape=FOLDER, workspaces=(Workspace(name, url),))

    def task_dirs(folder: str) -> list[str]:
        if folder not in names or not fs.isdir(names[folder]):
            return []
        return sorted((posixpath.basename(p.rstrip("/")) for p in fs.ls(names[folder], detail=False)
                       if fs.isdir(p)), key=_task_order)

    full_dirs, lite_dirs = task_dirs("tasks"), task_dirs("tasks_lite")
    linked_out = {}  # refused like a folder that is no task

    def readable(folder: str, i: str) -> bool:
        for what, path in (("the task folder", _join(names[folder], i)),
                           ("its metadata.json", _join(names[folder], i, "metadata.json"))):
            problem = source.link_problem(path)
            if problem:
                linked_out[(folder, i)] = f"{what} {problem}"
                return False
        return True

    full_ids = [i for i in full_dirs if is_task_id(i) and readable("tasks", i)]
    # a Lite folder is read only when the full task's folder is absent
    lite_ids = [i for i in lite_dirs if is_task_id(i) and (i in full_ids or readable("tasks_lite", i))]
    # (a tasks_lite/ folder that is not a task is a refused Lite entry: ``lite_folder_ids`` keeps it)
    not_tasks = tuple((f"tasks/{i}", "not a task folder: its name is not a task id (the runner names each task's "
                                     "folder by its numeric id); not read") for i in full_dirs if not is_task_id(i))
    not_tasks += tuple((f"{folder}/{i}", reason) for (folder, i), reason in sorted(linked_out.items()))
    task_files = tuple(as_url(_join(names["tasks"], i, "metadata.json")) for i in full_ids)
    task_files += tuple(as_url(_join(names["tasks_lite"], i, "metadata.json")) for i in lite_ids if i not in full_ids)
    workspaces = []
    if "filesys" in names and fs.isdir(names["filesys"]):
        roles = sorted(posixpath.basename(p.rstrip("/")) for p in fs.ls(names["filesys"], detail=False) if fs.isdir(p))
        workspaces += [Workspace(f"filesys/{r}", as_url(_join(names["filesys"], r))) for r in roles if r.endswith("_raw")]
    # a Lite folder is a copy of the full task's folder: scanned only when the full one is absent
    workspaces += [Workspace(f"tasks/{i}", as_url(_join(names["tasks"], i)), i, ("metadata.json",)) for i in full_ids]
    workspaces += [Workspace(f"tasks_lite/{i}", as_url(_join(names["tasks_lite"], i)), i, ("metadata.json",))
                   for i in lite_ids if i not in full_ids]
    return Source(url=url, shape=RELEASE, task_files=task_files,
                  tasks_json=as_url(names[TASKS_JSON]) if TASKS_JSON in names else None,
                  lite_js=as_url(names[LITE_JS]) if LITE_JS in names else None,
                  lite_folder_ids=tuple(lite_dirs), workspaces=tuple(workspaces),
                  not_tasks=not_tasks, markers=tuple(markers))


def is_task_id(name: str) -> bool:
    """A task folder's name: the task's absolute id in ASCII digits (``str.isdigit`` alone takes '²')."""
    return name.isascii() and name.isdigit()


def _task_order(name: str):
    return (0, int(name), name) if is_task_id(name) else (1, 0, name)
