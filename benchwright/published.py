"""Where a published build lives, on a local disk or on object storage, and how it is committed.

On a filesystem a build is staged beside the output and swapped into place with renames.

Object stores (S3 and the like) have no rename, so there a dataset URL holds

    <url>/builds/<build_id>/...          complete builds, each in the local layout (README.md,
                                          <config>/<split>-*.parquet, exports/, _build/...)
    <url>/_build/manifest.json            the committed build's manifest plus ``published_at``:
                                          written last, it is the commit

A build is written under ``_staging/<run>/`` first (the pipeline's workers write there), finalised
and validated, then copied to ``builds/<build_id>/`` (the id is a hash of the files' sha256 list,
so the same input gives the same id), and committed by writing the root manifest. A reader or
``validate`` resolves the root manifest first, so it sees the previous build or the new one, never
a mixture; the previously committed build is kept for readers still on it, older ones removed.
The endpoint comes from the standard ``AWS_ENDPOINT_URL`` variable (read by botocore, as the AWS
tools do); credentials from the usual AWS variables or files.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import posixpath
import signal
from pathlib import Path

import fsspec
from fsspec.implementations.local import LocalFileSystem

from benchwright.errors import BenchwrightError
from benchwright.layout import MANIFEST

log = logging.getLogger(__name__)

BUILDS = "builds"
STAGING = "_staging"


FAULT_ENV = "BENCHWRIGHT_FAULT"


def fault_point(phase: str) -> None:
    """Test hook: when ``BENCHWRIGHT_FAULT`` names ``phase`` ("pipeline", "finalize", "publish"), the
    build kills itself with SIGKILL here, so tests can show what a crash at that point leaves behind."""
    if os.environ.get(FAULT_ENV) == phase:
        os.kill(os.getpid(), signal.SIGKILL)


def is_local(url: str) -> bool:
    return isinstance(fsspec.core.url_to_fs(url)[0], LocalFileSystem)


def join(url: str, *parts: str) -> str:
    return posixpath.join(url.rstrip("/"), *parts)


def read_json(url: str) -> dict:
    with fsspec.open(url, "r", encoding="utf-8") as f:
        return json.load(f)


def exists(url: str) -> bool:
    fs, path = fsspec.core.url_to_fs(url)
    return fs.exists(path)


def committed_manifest(url: str) -> dict | None:
    """The manifest at a dataset URL (local folder or object-store root), or None when nothing is published."""
    try:
        return read_json(join(url, MANIFEST))
    except FileNotFoundError:
        return None


def committed(url: str) -> tuple[dict, str]:
    """(manifest, folder of the committed build) at dataset URL ``url``, from ONE read of the root
    manifest, so a commit landing meanwhile cannot mix two builds (the folder is the URL itself on a
    filesystem)."""
    manifest = committed_manifest(url)
    if manifest is None:
        raise BenchwrightError(f"{url}: no {MANIFEST}; is this a built dataset?")
    where = manifest.get("published_at")
    return manifest, (join(url, where) if where else url)


def resolve(url: str) -> str:
    """The folder of the committed build at dataset URL ``url``."""
    return committed(url)[1]


def data_files(url: str, config: str) -> dict[str, list[str]]:
    """{split: [shard URLs]} of a config of the committed build, for
    ``datasets.load_dataset("parquet", data_files=..., storage_options=...)`` on object storage."""
    manifest, root = committed(url)
    out: dict[str, list[str]] = {}
    for shard in manifest["shards"]:
        if shard["config"] == config:
            out.setdefault(shard["split"], []).append(join(root, shard["path"]))
    if not out:
        raise BenchwrightError(f"{url}: no config {config!r}; configs: "
                               f"{sorted({s['config'] for s in manifest['shards']})}")
    return {s: sorted(v) for s, v in out.items()}


def build_id(manifest: dict) -> str:
    """A content id: the same files (paths and sha256) give the same id."""
    h = hashlib.sha256()
    for f in manifest["files"]:
        h.update(f"{f['path']}\0{f['sha256']}\n".encode())
    return h.hexdigest()[:16]


def mirror(url: str, local: Path) -> dict[str, tuple[int, int]]:
    """Copy every file under ``url`` into the local folder ``local`` (same relative paths); returns
    {relative path: (size, mtime_ns)} of the copies as made, so a later step can tell which of them
    it left untouched."""
    fs, root = fsspec.core.url_to_fs(url)
    local.mkdir(parents=True, exist_ok=True)
    if fs.exists(root):
        fs.get(root.rstrip("/") + "/", str(local) + "/", recursive=True)
    return {p.relative_to(local).as_posix(): _stat(p) for p in local.rglob("*") if p.is_file()}


def _stat(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_size, st.st_mtime_ns


def commit(local: Path, dataset_url: str, staging_url: str, mirrored: dict[str, tuple[int, int]]) -> str:
    """Publish the finalised local build ``local`` at object-store ``dataset_url``; returns the build URL.

    ``mirrored``: what ``mirror`` copied from ``staging_url``. A file still as mirrored is copied
    inside the store (no transfer through this machine); a file made or changed here is uploaded.
    The build's own manifest goes last inside its folder, then the root manifest commits it. A build
    with the same files already in the store (the id is their content) is committed as it is,
    never rewritten under its readers."""
    fs, _ = fsspec.core.url_to_fs(dataset_url)
    manifest = json.loads((local / MANIFEST).read_text())
    bid = build_id(manifest)
    target = join(dataset_url, BUILDS, bid)
    previous = committed_manifest(dataset_url)
    existing = committed_manifest(target)
    if existing is None:
        _, staging_path = fsspec.core.url_to_fs(staging_url)
        copies, uploads = [], []
        for f in sorted(p for p in local.rglob("*") if p.is_file()):
            rel = f.relative_to(local).as_posix()
            if rel == MANIFEST:
                continue
            dest = fsspec.core.url_to_fs(join(target, rel))[1]
            if mirrored.get(rel) == _stat(f):
                copies.append((posixpath.join(staging_path, rel), dest))
            else:
                uploads.append((str(f), dest))
        if copies:  # lists: s3fs runs them concurrently
            fs.copy([c[0] for c in copies], [c[1] for c in copies])
        if uploads:
            fs.put([u[0] for u in uploads], [u[1] for u in uploads])
        fs.put_file(str(local / MANIFEST), fsspec.core.url_to_fs(join(target, MANIFEST))[1])
        existing = manifest
    fault_point("publish")  # the build is in the store, not yet committed
    root = dict(existing, published_at=f"{BUILDS}/{bid}")
    with fsspec.open(join(dataset_url, MANIFEST), "w", encoding="utf-8") as f:
        f.write(json.dumps(root, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    keep = {bid, posixpath.basename(previous["published_at"])} if previous and previous.get("published_at") else {bid}
    try:
        _remove_builds_except(dataset_url, keep)
    except OSError as err:  # the build is committed; a leftover folder is only space
        log.warning("%s: could not remove an older build: %s", dataset_url, err)
    return target


def _remove_builds_except(dataset_url: str, keep: set[str]) -> None:
    fs, builds = fsspec.core.url_to_fs(join(dataset_url, BUILDS))
    if not fs.exists(builds):
        return
    for path in fs.ls(builds, detail=False):
        # a folder without its manifest may be another build still uploading: never touched here
        # (a crashed upload's folder stays too; concurrent publishers are issue 13's)
        if posixpath.basename(path.rstrip("/")) not in keep and fs.exists(posixpath.join(path, MANIFEST)):
            fs.rm(path, recursive=True)


def remove(url: str) -> None:
    fs, path = fsspec.core.url_to_fs(url)
    if fs.exists(path):
        fs.rm(path, recursive=True)
