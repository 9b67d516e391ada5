"""Scanning a workspace: list its files safely, then describe each file from its bytes.

Two pure steps a Beam pipeline can run anywhere (nothing global but a lazily created magika instance):

- :func:`list_workspace` walks a workspace folder on any fsspec URL and returns its regular files
  (paths relative to the root, '/'-separated, sorted) and the problems it met, each ``{path, reason}``.
  On a local folder the walk never leaves the workspace: a symlink is resolved only to decide what it
  is. A link to a regular file inside the workspace is listed **at the link's own path** (that is
  where a user of the workspace finds it), with ``link_target`` = the workspace path of the file it
  points to, and its bytes are read from that target (``url``); a link pointing outside the
  workspace, a dangling link, a link loop and a link to a directory (never descended: its files are
  listed under their real paths) are problems. So are unreadable directories and files, names that
  are not valid UTF-8, anything that is not a regular file (fifo, socket, device: opening one could
  block), paths deeper than the bound and files over the size bound.
- :func:`scan_file` describes one file from its bytes: size, sha256, magika's content type, the
  extension, the type the extractors use (:func:`decide_file_type`), the encoding, line and word
  counts and the text as a reader sees it (:mod:`benchwright.workspace_bench.extract_text`). A zip
  archive (Office files are zips) that would expand past the bounds raises ``RecordError`` from its
  central directory, before a byte is decompressed.

Nothing here executes, imports or opens a workspace file in any way but reading its bytes.
"""
from __future__ import annotations

import errno
import hashlib
import json
import os
import posixpath
import stat
from importlib import resources
from typing import Any

import fsspec
from fsspec.implementations.local import LocalFileSystem

from benchwright.errors import RecordError
from benchwright.schemas.workspace_bench import TEXT_EXCERPT_CHARS
from benchwright.workspace_bench.extract_archive import DEFAULT_LIMITS, Limits, check_archive, is_zip
from benchwright.workspace_bench.extract_text import extract_text
from benchwright.workspace_bench.implicit import text_features

__all__ = ["DEFAULT_LIMITS", "Limits", "list_workspace", "read_entry", "scan_file", "decide_file_type"]



# Below this score a text label that disagrees with a text extension loses to the extension.
TEXT_DISAGREEMENT_SCORE = 0.9
# magika's labels that say nothing specific about a file: the extension may break the tie.
GENERIC_LABELS = frozenset({"txt", "unknown", "empty", "undefined"})
# A label magika gives to the container of a more specific format: an .xlsx is a zip, a notebook is JSON.
_CONTAINER_OF = {
    "zip": frozenset({"docx", "xlsx", "pptx", "odt", "ods", "odp", "epub", "jar", "apk", "xpi", "nupkg", "xlsb"}),
    "json": frozenset({"ipynb", "jsonl"}),
    "xml": frozenset({"svg", "rdf", "html"}),
    "javascript": frozenset({"typescript", "jsx", "tsx", "json"}),
    "html": frozenset({"markdown"}),
}
# Extensions several magika types claim, and common ones its knowledge base does not list.
_EXTENSION_PREFERENCE = {"ts": "typescript", "tsv": "tsv", "txt": "txt", "pl": "perl", "m": "matlab",
                         "plist": "appleplist", "s": "asm", "o": "object", "dll": "pebin", "exe": "pebin",
                         "pdb": "pdb", "pub": "pem", "gpg": "pgp", "dm": "dm", "stl": "stltext", "3ds": "3ds"}
_EXTENSION_EXTRA = {"cfg": "ini", "conf": "ini", "properties": "ini", "log": "txt", "text": "txt",
                    "bash": "shell", "zsh": "shell", "jsonc": "json", "geojson": "json", "mdx": "markdown",
                    "rmd": "markdown", "r": "r", "yml": "yaml"}


# --------------------------------------------------------------------------- listing

def list_workspace(url: str, limits: Limits = DEFAULT_LIMITS) -> tuple[list[dict], list[dict]]:
    """Every regular file under the workspace folder ``url`` and the problems met on the way.

    Returns ``(entries, problems)``. An entry is ``{path, size, url, link_target}``: ``path``
    relative to the root ('/'-separated), ``url`` what to read (the file itself or, for a link, its
    target inside the workspace), ``link_target`` the workspace path a link points to (else None).
    A problem is ``{path, reason}``; the pipeline quarantines it. Both lists are sorted by path.
    """
    fs, root = fsspec.core.url_to_fs(url)
    if isinstance(fs, LocalFileSystem):
        entries, problems = _list_local(root, limits)
    else:
        entries, problems = _list_fsspec(fs, root, limits)
    if len(entries) > limits.max_files:
        problems += [{"path": e["path"], "reason": f"workspace has more than {limits.max_files} files"}
                     for e in entries[limits.max_files:]]
        entries = entries[:limits.max_files]
    return entries, sorted(problems, key=lambda p: p["path"])


def _list_fsspec(fs, root: str, limits: Limits) -> tuple[list[dict], list[dict]]:
    """Object storage has no links, modes or undecodable names: only the size and depth bounds apply."""
    root = root.rstrip("/")
    entries, problems = [], []
    for full, info in sorted(fs.find(root, detail=True).items()):
        if info.get("type") != "file":
            continue
        rel = posixpath.relpath(full, root)
        size = int(info.get("size") or 0)
        reason = _bound_problem(rel, size, limits)
        if reason:
            problems.append({"path": rel, "reason": reason})
        else:
            entries.append({"path": rel, "size": size, "url": fs.unstrip_protocol(full), "link_target": None})
    return entries, problems


def _bound_problem(rel: str, size: int, limits: Limits) -> str | None:
    if rel.count("/") > limits.max_path_depth:
        return f"path is deeper than {limits.max_path_depth} folders"
    if size > limits.max_file_bytes:
        return f"file is {size} bytes, over the {limits.max_file_bytes}-byte bound"
    return None


def _check_readable(path: bytes) -> None:
    """Open for reading and close at once (raises OSError when the file cannot be read). Only ever
    called on a regular file: opening a fifo could block."""
    os.close(os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)))


def _list_local(root: str, limits: Limits) -> tuple[list[dict], list[dict]]:
    root_real = os.path.realpath(root)
    root_b = os.fsencode(root_real)
    entries: list[dict] = []
    problems: list[dict] = []
    stack: list[tuple[str, bytes]] = [("", root_b)]
    while stack:
        rel_dir, dir_b = stack.pop()
        try:
            with os.scandir(dir_b) as it:
                children = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            problems.append({"path": rel_dir or ".", "reason": f"unreadable directory: {exc.strerror or exc}"})
            continue
        subdirs = []
        for child in children:
            try:
                name = child.name.decode("utf-8")
            except UnicodeDecodeError:
                shown = posixpath.join(rel_dir, child.name.decode("utf-8", "backslashreplace"))
                problems.append({"path": shown, "reason": "name is not valid UTF-8 (not listed, not descended)"})
                continue
            rel = posixpath.join(rel_dir, name) if rel_dir else name
            if rel.count("/") > limits.max_path_depth:
                problems.append({"path": rel, "reason": f"path is deeper than {limits.max_path_depth} folders"})
                continue
            try:
                if child.is_symlink():
                    entry, problem = _local_link(child.path, rel, root_real, limits)
                elif child.is_dir(follow_symlinks=False):
                    if rel.count("/") + 1 > limits.max_path_depth:
                        problems.append({"path": rel, "reason": f"path is deeper than {limits.max_path_depth} "
                                                                "folders (not descended)"})
                    else:
                        subdirs.append((rel, child.path))
                    continue
                else:
                    entry, problem = _local_file(child.path, rel, child.stat(follow_symlinks=False), limits)
            except OSError as exc:
                entry, problem = None, {"path": rel, "reason": f"unreadable: {exc.strerror or exc}"}
            if entry:
                entries.append(entry)
            if problem:
                problems.append(problem)
        stack.extend(reversed(subdirs))
    entries.sort(key=lambda e: e["path"])
    return entries, problems


def _local_file(path_b: bytes, rel: str, st: os.stat_result, limits: Limits, url: bytes | None = None,
                link_target: str | None = None) -> tuple[dict | None, dict | None]:
    if not stat.S_ISREG(st.st_mode):
        return None, {"path": rel, "reason": f"not a regular file ({_kind(st.st_mode)})"}
    reason = _bound_problem(rel, st.st_size, limits)
    if reason:
        return None, {"path": rel, "reason": reason}
    try:
        _check_readable(url or path_b)
    except OSError as exc:
        return None, {"path": rel, "reason": f"unreadable file: {exc.strerror or exc}"}
    return {"path": rel, "size": st.st_size, "url": os.fsdecode(url or path_b), "link_target": link_target}, None


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "fifo"), (stat.S_ISSOCK, "socket"), (stat.S_ISCHR, "character device"),
                       (stat.S_ISBLK, "block device"), (stat.S_ISDIR, "directory")):
        if test(mode):
            return name
    return "special file"


def _local_link(path_b: bytes, rel: str, root_real: str, limits: Limits) -> tuple[dict | None, dict | None]:
    written = os.fsdecode(os.readlink(path_b))
    try:
        real = os.path.realpath(os.fsdecode(path_b), strict=True)
    except FileNotFoundError:
        return None, {"path": rel, "reason": f"dangling symlink -> {written}"}
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return None, {"path": rel, "reason": f"symlink loop -> {written}"}
        raise
    if real != root_real and not real.startswith(root_real + os.sep):
        return None, {"path": rel, "reason": f"symlink points outside the workspace -> {written} (not followed)"}
    st = os.stat(real)
    target = posixpath.relpath(real, root_real).replace(os.sep, "/") if real != root_real else "."
    if stat.S_ISDIR(st.st_mode):
        link_dir = os.path.realpath(os.path.dirname(os.fsdecode(path_b)))
        if link_dir == real or link_dir.startswith(real + os.sep):
            return None, {"path": rel, "reason": f"symlink loop: points to its own ancestor folder {target}"}
        return None, {"path": rel, "reason": f"symlink to the folder {target} (not followed: its files are "
                                            "listed under their own paths)"}
    return _local_file(path_b, rel, st, limits, url=os.fsencode(real), link_target=target)


def read_entry(entry: dict, limits: Limits = DEFAULT_LIMITS) -> bytes:
    """The bytes of a listed file, never more than the size bound (a file that grew raises)."""
    with fsspec.open(entry["url"], "rb") as fh:
        data = fh.read(limits.max_file_bytes + 1)
    if len(data) > limits.max_file_bytes:
        raise RecordError(entry["path"], f"file grew past the {limits.max_file_bytes}-byte bound while read")
    return data


# --------------------------------------------------------------------------- types

_MAGIKA = None
_KB: dict[str, dict] | None = None
_EXT_TYPES: dict[str, str] | None = None


_MAGIKA_CACHE: dict[str, tuple[str, float, bool]] = {}
MAGIKA_CACHE_SIZE = 100_000


def magika_instance():
    """One magika per process, created on first use (its ONNX session is not picklable). Its model
    runs on one thread without spinning: a pipeline gets its parallelism from workers, and on a
    shared 2-core machine one thread per sample measured faster than two (benchmarks/workspace_bench_scan)."""
    global _MAGIKA
    if _MAGIKA is None:
        import onnxruntime
        from magika import Magika

        magika = Magika()
        if hasattr(magika, "_onnx_session") and hasattr(magika, "_model_path"):
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = options.inter_op_num_threads = 1
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            magika._onnx_session = onnxruntime.InferenceSession(
                str(magika._model_path), options, providers=["CPUExecutionProvider"])
        _MAGIKA = magika
    return _MAGIKA


def content_types() -> dict[str, dict]:
    """magika's knowledge base of content types (label -> is_text, extensions, group, ...), read from
    the JSON file its wheel ships."""
    global _KB
    if _KB is None:
        _KB = json.loads(resources.files("magika").joinpath("config/content_types_kb.min.json").read_text())
    return _KB


def extension_types() -> dict[str, str]:
    """Extension (lower case, no dot) -> magika label, from magika's knowledge base; extensions several
    labels claim go to the common one, and a few common extensions it does not list are added."""
    global _EXT_TYPES
    if _EXT_TYPES is None:
        claims: dict[str, list[str]] = {}
        for label, info in content_types().items():
            for ext in info.get("extensions") or ():
                claims.setdefault(ext.lower(), []).append(label)
        table = {ext: (_EXTENSION_PREFERENCE.get(ext) or sorted(labels)[0]) for ext, labels in claims.items()}
        _EXT_TYPES = {**table, **_EXTENSION_EXTRA}
    return _EXT_TYPES


# File extensions magika has no type for, common in workspaces: a string ending in one may name a file.
_OTHER_FILE_EXTENSIONS = frozenset({"db", "feather", "arrow", "vcf", "mmd", "dot", "graphql", "env", "bin", "mat",
                                    "rds", "rdata", "orc", "avro", "safetensors", "ckpt", "dat", "ndjson", "bak",
                                    "lock", "sav", "dta", "shp", "kml", "gpx", "tfrecord", "msg"})


def path_extensions() -> frozenset[str]:
    """Extensions that make a string look like a file name: magika's and a few data formats'."""
    return frozenset(extension_types()) | _OTHER_FILE_EXTENSIONS


def is_text_type(file_type: str) -> bool:
    return bool(content_types().get(file_type, {}).get("is_text"))


def extension_of(path: str) -> str:
    return posixpath.splitext(posixpath.basename(path))[1][1:].lower()


def decide_file_type(magika_label: str, low_confidence: bool, extension: str, score: float = 1.0) -> tuple[str, str]:
    """The type the extractors use, and which source gave it ("magika" or "extension").

    Magika's content-based label wins, except that the extension's type is taken when
    - magika's label is generic (txt, unknown, empty) or below its confidence threshold, and the
      extension's type is text exactly when magika's is (a binary blob named .py stays unknown);
    - both are text types and magika is not sure (score below ``TEXT_DISAGREEMENT_SCORE``): sibling
      text formats look alike in a file's head (an .ini with a ``[section]`` and ``key = value``
      lines reads as TOML at 0.53), and the extension is what the file's author declared;
    - magika's label is the container of the extension's type (zip for .docx/.xlsx/.pptx, json for
      .ipynb, javascript for .ts/.tsx, xml for .svg).
    """
    ext_type = extension_types().get(extension)
    if ext_type is None or ext_type == magika_label:
        return magika_label, "magika"
    if magika_label in GENERIC_LABELS or low_confidence:
        if magika_label in ("txt", "empty") or is_text_type(ext_type) == is_text_type(magika_label):
            return ext_type, "extension"
        return magika_label, "magika"
    if score < TEXT_DISAGREEMENT_SCORE and is_text_type(ext_type) and is_text_type(magika_label):
        return ext_type, "extension"
    if ext_type in _CONTAINER_OF.get(magika_label, ()):
        return ext_type, "extension"
    return magika_label, "magika"


def identify(data: bytes, sha256: str | None = None) -> tuple[str, float, bool]:
    """magika's (label, score, low_confidence) for the bytes (it reads only their head and tail).
    Identical files (task data folders repeat workspace files) are identified once per process."""
    if sha256 is not None and sha256 in _MAGIKA_CACHE:
        return _MAGIKA_CACHE[sha256]
    prediction = magika_instance().identify_bytes(data).prediction
    low = str(getattr(prediction.overwrite_reason, "value", prediction.overwrite_reason)) == "low_confidence"
    result = str(prediction.output.label), float(prediction.score), low
    if sha256 is not None:
        if len(_MAGIKA_CACHE) >= MAGIKA_CACHE_SIZE:
            _MAGIKA_CACHE.clear()
        _MAGIKA_CACHE[sha256] = result
    return result


# --------------------------------------------------------------------------- one file

def scan_file(data: bytes, path: str, limits: Limits = DEFAULT_LIMITS) -> dict[str, Any]:
    """Describe one file from its bytes: the ``files`` row's own columns (the pipeline adds
    ``file_id``, ``workspace`` and ``task_id``), ``text_error`` (why the text could not be extracted;
    None when it could, the row keeps an empty excerpt), and ``numbers`` / ``entities``, what
    :func:`~benchwright.workspace_bench.implicit.implicit_edges` compares (from the whole text, not
    only the excerpt). The extra keys are not columns of the ``files`` config.

    Raises ``RecordError(path, reason)`` for a file over the size bound and for a zip archive that
    would expand past the bounds.
    """
    if len(data) > limits.max_file_bytes:
        raise RecordError(path, f"file is {len(data)} bytes, over the {limits.max_file_bytes}-byte bound")
    extension = extension_of(path)
    digest = hashlib.sha256(data).hexdigest()
    label, score, low = identify(data, digest)
    file_type, source = decide_file_type(label, low, extension, score)
    if is_zip(data):
        check_archive(data, path, limits).close()
    text, encoding, text_error = extract_text(data, file_type, is_text_type(file_type), path, limits)
    return {
        "path": path,
        "size": len(data),
        "sha256": digest,
        "magika_label": label,
        "magika_score": score,
        "extension": extension,
        "file_type": file_type,
        "file_type_source": source,
        "is_text": is_text_type(file_type) and encoding is not None,
        "encoding": encoding,
        "line_count": text.count("\n") + (1 if text and not text.endswith("\n") else 0),
        "word_count": len(text.split()),
        "text_excerpt": text[:TEXT_EXCERPT_CHARS],
        "text_error": text_error,
        **text_features(text[:limits.max_extracted_chars], file_type),
    }
