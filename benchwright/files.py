"""Listing a source: every location is an fsspec URL (a plain path is a local one)."""
from __future__ import annotations

import os
import posixpath
import stat
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import fsspec

from benchwright.errors import BenchwrightError
from benchwright.fields import clip

FILE_THREADS = 4  # file reads, writes and hashing release the GIL: a few threads overlap them


# written beside a generated source when it is whole (``Dataset.default_source``): not input
SOURCE_COMPLETE_MARKER = ".complete"
# the hub client's bookkeeping in a folder it downloaded into (``local_dir``): rewritten without any
# change of the data, so not input
HUB_DOWNLOAD_CACHE = ".cache/huggingface/"


def synthetic_source_folder(out_dir, scale: str, scales) -> Path:
    """The folder a synthetic source of ``scale`` (one of ``scales``) is written to: refused unless absent or empty."""
    if scale not in scales:
        raise BenchwrightError(f"unknown scale {scale!r}; one of {', '.join(scales)}")
    out = Path(out_dir)
    if out.exists() and any(out.iterdir()):
        raise BenchwrightError(f"{out} is not empty")
    return out


def list_files(source: str) -> list[str]:
    """Regular files under ``source``, sorted, hidden ones included (a reader may read them: a
    workspace's ``.env`` is input), but for the marker of a whole generated source and the hub
    client's download bookkeeping. Links to files are listed (the pipelines read through them);
    symlinked folders are not followed, so a symlink loop cannot make the walk endless. A local
    folder that cannot be read is listed as itself: reading it fails, so the fingerprint names it
    unreadable, as it does an unreadable file."""
    fs, root = fsspec.core.url_to_fs(source)
    if fsspec.core.split_protocol(source)[0] in (None, "file", "local"):
        # fsspec's find stats and resolves every local file: 3 s for a release's 286k files
        rels = (rel for rel, _ in local_files_under(root))
    else:
        rels = (posixpath.relpath(p, root) for p, info in fs.find(root, detail=True).items()
                if info.get("type") == "file")
    return sorted(posixpath.join(root, rel) for rel in rels
                  if rel != SOURCE_COMPLETE_MARKER and not rel.startswith(HUB_DOWNLOAD_CACHE))


def local_files_under(root: str) -> list[tuple[str, int]]:
    """(relative posix path, size) of every file under the local folder ``root``, links to files
    included, linked folders not entered (``Path.rglob`` + ``is_file``'s choice); one directory scan
    per folder, no pathlib objects (a build publishes hundreds of thousands of files). A folder below
    ``root`` that cannot be read is given as an entry of its own (size 0): nothing is skipped unseen."""
    out, stack = [], [("", root)]
    while stack:
        rel_dir, folder = stack.pop()
        try:
            scan = os.scandir(folder)
        except OSError:
            if not rel_dir:
                raise
            out.append((rel_dir.rstrip("/"), 0))
            continue
        with scan as entries:
            for entry in entries:
                rel = f"{rel_dir}{entry.name}"
                if entry.is_dir(follow_symlinks=False):
                    stack.append((rel + "/", entry.path))
                    continue
                try:
                    if entry.is_file():
                        out.append((rel, entry.stat().st_size))
                except OSError:  # a link to itself: listed, so that reading it fails where it is named
                    out.append((rel, 0))
    return out


NAME_MAX_BYTES = 255  # one path component, on every common file system (ext4, XFS, APFS; NTFS: 255 UTF-16 units)


def name_problem(name) -> str | None:
    """Why ``name``, a file name or relative path a record gives (or an id that becomes one), cannot name a
    file on any file system, or None: it is not text, it holds a NUL byte (no system call takes one: Python
    raises ``ValueError``, far from the record) or a lone surrogate (no UTF-8 name spells one), or one of
    its parts is longer than ``NAME_MAX_BYTES`` bytes of UTF-8 (``OSError: File name too long``, when it is
    first written or read)."""
    if not isinstance(name, str):
        return f"is not text ({type(name).__name__})"
    if "\0" in name:
        return f"holds a NUL byte (at character {name.index(chr(0))})"
    if not name.isascii():
        try:
            name.encode("utf-8")
        except UnicodeEncodeError as err:  # a lone surrogate a JSON or YAML escape wrote (``"\\ud800"``)
            return f"holds a lone surrogate (at character {err.start}), which no file name encodes"
    if len(name) * 4 > NAME_MAX_BYTES:  # only a long name can have a part that long
        for part in name.split("/"):
            size = len(part.encode("utf-8", "surrogateescape"))
            if size > NAME_MAX_BYTES:
                return f"has a name of {size:,} bytes (a file name is at most {NAME_MAX_BYTES})"
    return None


def resolves_outside(url: str, root: str) -> bool:
    """Whether the local file at ``url`` lies, once the symlinks of its path are resolved (at any level),
    outside the folder ``root`` resolves to: its bytes are not the source's, and a build does not read
    them. One exception: a source inside a Hugging Face cache snapshot, whose every file is a link into
    its repository's ``blobs`` folder, may read that folder. Object storage has no links: False for
    any other protocol."""
    return outside_of(root)(url)


def outside_of(root: str):
    """``resolves_outside(url, root)`` as a function of ``url``, the root's side resolved once (a
    segment asks it for each of its thousands of frames)."""
    root_path = fsspec.core.split_protocol(root)[1]
    allowed = tuple(a.rstrip(os.sep) + os.sep for a in [os.path.realpath(root_path)] + [
        b for b in [hf_cache_blobs(root_path)] if b])

    folders: dict[str, str] = {}  # a folder's real path, resolved once: its files share it

    def outside(url: str) -> bool:
        protocol, path = fsspec.core.split_protocol(url)
        if protocol not in (None, "file", "local"):
            return False
        folder, name = os.path.split(path)
        try:  # the shortcut holds for an existing file that is no link, named by an ordinary name
            plain = name not in ("", os.curdir, os.pardir) and not stat.S_ISLNK(os.lstat(path).st_mode)
        except OSError:  # missing or unreachable (a `..` after a missing part...): realpath's own answer
            plain = False
        if plain:
            if folder not in folders:
                folders[folder] = os.path.realpath(folder)
            real = os.path.join(folders[folder], name)
        else:
            real = os.path.realpath(path)
        return not (real + os.sep).startswith(allowed)

    return outside


def hf_cache_blobs(folder: str) -> str | None:
    """The real path of the ``blobs`` folder of the Hugging Face cache repository whose snapshot holds
    ``folder`` (``<cache>/datasets--org--name/snapshots/<revision>/...``), else None."""
    for path in dict.fromkeys((os.path.abspath(folder), os.path.realpath(folder))):  # also through a link to it
        parts = path.split(os.sep)
        for i in range(len(parts) - 2, 0, -1):
            if parts[i] == "snapshots" and parts[i - 1].startswith(("datasets--", "models--", "spaces--")):
                blobs = os.sep.join(parts[:i] + ["blobs"])
                if os.path.isdir(blobs):
                    return os.path.realpath(blobs)
    return None


class OutsideRoot(BenchwrightError, ValueError):
    """A name that cannot be used as a path below its ``Root``; the message says why, in words."""


class Root:
    """The folder that names given by records are resolved below, for reading and for writing alike: every
    name that becomes a path (an id that becomes a folder, a file path in a JSON, a folder name) goes
    through ``join`` (or ``problem``), so one rule decides what stays inside.

    ``join`` refuses (``OutsideRoot``) a name no file can have (``name_problem``: not text, a NUL byte, a
    part longer than ``NAME_MAX_BYTES``), an empty or absolute path, one whose ``..`` parts climb above
    the root, and, for a local root, one that reaches a place outside it through a symlink at any level
    (``outside_of``: its bytes are not the root's, and a write through it would land elsewhere).
    ``single=True``: the name must be one file or folder name (a case id that becomes
    ``exports/cases/<case_id>``: no ``/``, not ``.`` or ``..``). ``what`` names the root in messages
    ("the segment folder", "the source", "exports/cases")."""

    def __init__(self, url, what: str = "its folder", local: bool | None = None):
        self.url = str(url)
        self.what = what
        # ``local``: whether ``url`` is on a local disk (None: told by its protocol; a path fsspec stripped of
        # its protocol needs telling)
        self.local = fsspec.core.split_protocol(self.url)[0] in (None, "file", "local") if local is None else local
        self._outside = None

    def lexical_problem(self, name, single: bool = False, room: int = 0) -> str | None:
        """Why ``name`` cannot be a path below the root, by its text alone (no file system call), or None.
        ``room``: bytes a tool appends to the (single) name to name its own files after it (``<id>.json``)."""
        problem = name_problem(name)
        if problem:
            return problem
        if single:
            if name in ("", ".", ".."):
                return "is not a file or folder name"
            if "/" in name:
                return "is not one file or folder name (it holds '/')"
            size = len(name.encode("utf-8", "surrogateescape"))
            if size + room > NAME_MAX_BYTES:
                return (f"is {size:,} bytes long: the files named after it need {room} bytes more, and a file name "
                        f"is at most {NAME_MAX_BYTES}")
            return None
        if not name:
            return "is empty"
        if name.startswith("/"):
            return f"is an absolute path (a path here is relative to {self.what})"
        norm = posixpath.normpath(name)
        if norm == ".." or norm.startswith("../"):
            return f"leaves {self.what} (its '..' parts climb above it)"
        if norm == ".":
            return f"names {self.what} itself, not a file in it"
        return None

    def path(self, name: str) -> str:
        """``name`` below the root (``name`` already passed ``lexical_problem``), normalised."""
        return posixpath.join(self.url, posixpath.normpath(name))

    def link_problem(self, path: str) -> str | None:
        """Why the local ``path`` (below the root) is not the root's: a symlink at some level of it resolves
        outside the root; None on object storage, which has no links."""
        if not self.local:
            return None
        if self._outside is None:  # the root's real path, resolved once, when a link is first asked about
            self._outside = outside_of(self.url)
        if self._outside(path):
            return f"is reached through a symlink to a place outside {self.what} (not followed)"
        return None

    def problem(self, name, single: bool = False, links: bool = True, room: int = 0) -> str | None:
        """``join``'s refusal as text (None: ``join`` returns the path)."""
        problem = self.lexical_problem(name, single, room)
        if problem is None and links:
            problem = self.link_problem(self.path(name))
        return problem

    def join(self, name, field: str = "name", single: bool = False, links: bool = True, room: int = 0) -> str:
        """The path of ``name`` below the root; ``OutsideRoot`` ("<field> <name> <why>") when it is refused."""
        problem = self.problem(name, single, links, room)
        if problem:
            raise OutsideRoot(f"{field} {clip(name)} {problem}")
        return self.path(name)


def file_version(info: dict) -> str:
    """A file's identity for as long as it is not rewritten, from its fsspec ``info``: its size and
    modification time (local) or ETag / last-modified time (object storage)."""
    stamp = info.get("mtime") or info.get("ETag") or info.get("LastModified") or ""
    return f"{info.get('size')}-{stamp}"


def map_in_threads(work, items: list, threads: int = FILE_THREADS) -> list:
    """``[work(item) for item in items]`` on a few threads, each taking one contiguous run of the
    items (a future per item costs more than reading or writing a small file)."""
    if not items:
        return []
    step = -(-len(items) // threads)
    runs = [items[lo:lo + step] for lo in range(0, len(items), step)]
    with ThreadPoolExecutor(threads) as pool:
        return [out for run in pool.map(lambda run: [work(item) for item in run], runs) for out in run]
