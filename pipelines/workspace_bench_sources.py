"""Workspace-Bench sources, on any fsspec URL: what a source holds and where.

Three shapes, told apart by what the root holds:
- the runner's layout: ``tasks/<id>/metadata.json`` + ``tasks/<id>/data/<16 hex>_<name>``,
  ``tasks_lite/<id>/`` and the role workspaces ``filesys/<role>_raw/`` (the ``_standard`` and
  ``_workdir_*`` copies a run makes are not the release and are not read);
- the website release: ``tasks.json`` (``{"full": [...]}``) and ``tasks-lite.js``, with or without
  the runner's folders beside them (the runner's metadata, which has more fields, wins);
- any other folder: one workspace of files a user wants scanned.
"""
from __future__ import annotations

import dataclasses
import posixpath

import fsspec

from benchwright.errors import SourceError

TASKS_JSON = "tasks.json"
LITE_JS = "tasks-lite.js"


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


def _join(url: str, *parts: str) -> str:
    return posixpath.join(url.rstrip("/"), *parts)


def open_source(url: str) -> Source:
    fs, root = fsspec.core.url_to_fs(url)
    if not fs.isdir(root):
        raise SourceError(f"{url}: not a folder")
    protocol = url.split("://", 1)[0] + "://" if "://" in url else ""
    as_url = lambda p: protocol + p if protocol else p  # noqa: E731
    names = {posixpath.basename(p.rstrip("/")): p for p in fs.ls(root, detail=False)}
    release = any(n in names for n in ("tasks", "tasks_lite", "filesys", TASKS_JSON, LITE_JS))
    if not release:
        return Source(url=url, shape="folder",
                      workspaces=(Workspace(posixpath.basename(root.rstrip("/")) or "workspace", url),))

    def task_dirs(folder: str) -> list[str]:
        if folder not in names or not fs.isdir(names[folder]):
            return []
        return sorted((posixpath.basename(p.rstrip("/")) for p in fs.ls(names[folder], detail=False)
                       if fs.isdir(p)), key=_task_order)

    full_ids, lite_ids = task_dirs("tasks"), task_dirs("tasks_lite")
    task_files = tuple(as_url(_join(names["tasks"], i, "metadata.json")) for i in full_ids)
    task_files += tuple(as_url(_join(names["tasks_lite"], i, "metadata.json")) for i in lite_ids if i not in full_ids)
    workspaces = []
    if "filesys" in names:
        roles = sorted(posixpath.basename(p.rstrip("/")) for p in fs.ls(names["filesys"], detail=False) if fs.isdir(p))
        workspaces += [Workspace(f"filesys/{r}", as_url(_join(names["filesys"], r))) for r in roles if r.endswith("_raw")]
    # a Lite folder is a copy of the full task's folder: scanned only when the full one is absent
    workspaces += [Workspace(f"tasks/{i}", as_url(_join(names["tasks"], i)), i, ("metadata.json",)) for i in full_ids]
    workspaces += [Workspace(f"tasks_lite/{i}", as_url(_join(names["tasks_lite"], i)), i, ("metadata.json",))
                   for i in lite_ids if i not in full_ids]
    return Source(url=url, shape="release", task_files=task_files,
                  tasks_json=as_url(names[TASKS_JSON]) if TASKS_JSON in names else None,
                  lite_js=as_url(names[LITE_JS]) if LITE_JS in names else None,
                  lite_folder_ids=tuple(lite_ids), workspaces=tuple(workspaces))


def _task_order(name: str):
    return (0, int(name), name) if name.isdigit() else (1, 0, name)
