"""The source as a build read it: a file changed, added or removed while the build ran is refused by
name, before anything is published.

Before anything reads the source, the build lists it and records each file's state: on a local disk its
size, mtime, ctime, inode and device (``os.stat``: a rewrite changes the ctime even when it restores the
mtime, a replacement by rename changes the inode); on object storage its size and ETag (or version /
modification time, whatever the store lists). A forked child (``benchwright.forked``) hashes every file
beside the pipeline for the manifest's input fingerprint, then records the states again: a file whose
state moved while it was hashed has no trusted digest. Once the build is finalised the parent lists and
records the states a second time. That pass reads no file: only a file whose state differs, or whose
ctime is within ``RACY_S`` of the first listing (a write in the same clock tick as the listing leaves the
state as it was: git's "racy" files), is hashed again, and it changed unless its digest equals the
child's trusted one (a touch is no change). A change that restores the same bytes between the two
passes is not seen, nor a write that keeps size, mtime, ctime and inode (nothing on Linux can), nor a
write in the listing's clock tick (a few ms) after the pipeline read the file and before the child did.

Cost at WildBox's default scale (7,423 files, 150.5 MB): docs/SCALING.md ("Source changes").
"""
from __future__ import annotations

import logging
import os
import posixpath
import time
from dataclasses import dataclass

import fsspec

from benchwright.errors import BuildError
from benchwright.files import map_in_threads
from benchwright.forked import ForkedCall
from benchwright.hashing import sha256_files
from benchwright.manifest import fingerprint_files, fingerprint_source

log = logging.getLogger(__name__)

RACY_S = 2.0  # a file written this close to the first listing is hashed again (coarse timestamps: FAT's 2 s)
NAMED = 5  # files named in the refusal; the rest counted


def _is_local(source: str) -> bool:
    return fsspec.core.split_protocol(source)[0] in (None, "file", "local")


def file_states(source: str, files: list[str]) -> list[tuple | None]:
    """The state of each listed file of ``source`` (None: it cannot be stat-ed or is no longer listed)."""
    if _is_local(source):
        def one(path: str):
            try:
                st = os.stat(path)  # through a link: the pipelines read what it points to
            except OSError:
                return None
            return st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev

        return map_in_threads(one, files)
    fs, root = fsspec.core.url_to_fs(source)
    fs.invalidate_cache(root)  # s3fs answers from listings it cached before
    listed = fs.find(root, detail=True)
    return [_remote_state(listed.get(p)) for p in files]


def _remote_state(info: dict | None) -> tuple | None:
    if info is None:
        return None
    version = next((str(info[k]) for k in ("ETag", "etag", "md5Hash", "generation", "version_id", "VersionId")
                    if info.get(k)), None)
    if version is None:  # a store that lists no content tag: the modification time
        version = str(info.get("LastModified") or info.get("mtime") or info.get("updated") or "")
    return info.get("size"), version


@dataclass(frozen=True)
class SourceState:
    """Every listed file of a source and its state, listed at ``taken_ns`` (wall clock)."""
    source: str
    files: dict[str, tuple | None]
    taken_ns: int

    @classmethod
    def of(cls, dataset, source: str) -> "SourceState":
        taken = time.time_ns()
        files = dataset.source_files(source)
        return cls(source, dict(zip(files, file_states(source, files))), taken)

    @property
    def bytes(self) -> int:
        return sum(s[0] or 0 for s in self.files.values() if s is not None)

    def racy(self, state: tuple | None) -> bool:
        return state is not None and len(state) == 5 and state[2] >= self.taken_ns - int(RACY_S * 1e9)


def _fingerprint_as_listed(state: SourceState) -> tuple[dict, list]:
    """(the input fingerprint of the listed files, each file's sha256 when its state did not move while it
    was hashed, else None). Runs in the forked child."""
    files = list(state.files)
    fingerprint, digests = fingerprint_files(state.source, files)
    after = file_states(state.source, files)
    trusted = [d if isinstance(d, str) and s is not None and s == state.files[p] else None
               for p, d, s in zip(files, digests, after)]
    return fingerprint, trusted


def _fingerprint_unlisted(dataset, source: str) -> tuple[dict, list]:
    return fingerprint_source(dataset, source), []


class SourceWatch:
    """The source's fingerprint, computed in a forked child while the build goes on, and the check that
    the source did not change meanwhile. ``result()``: the fingerprint (the manifest's ``input``);
    ``check()``: raise naming what changed; ``cancel()``: stop the child."""

    def __init__(self, dataset, source: str):
        self.dataset, self.source = dataset, source
        t = time.perf_counter()
        try:
            self.state: SourceState | None = SourceState.of(dataset, source)
        except OSError:  # a source that cannot be listed: the pipeline refuses it, naming it
            self.state = None
        self.listed_s = round(time.perf_counter() - t, 3)
        self._child = ForkedCall(_fingerprint_as_listed, self.state) if self.state is not None else \
            ForkedCall(_fingerprint_unlisted, dataset, source)
        self._fingerprint: dict | None = None
        self._digests: dict[str, str | None] = {}
        self.check_s: float | None = None
        self.rehashed = 0

    def result(self) -> dict:
        if self._fingerprint is None:
            fingerprint, digests = self._child.result()
            if self.state is not None:
                self._digests = dict(zip(self.state.files, digests))
                fingerprint = dict(fingerprint, bytes=self.state.bytes)
            self._fingerprint = fingerprint
        return self._fingerprint

    def cancel(self) -> None:
        self._child.cancel()

    def check(self) -> None:
        """Raise ``BuildError`` when a source file changed, appeared or went since the first listing."""
        self.result()
        if self.state is None:
            return  # it could not be listed, yet the build read it: nothing to compare with
        t = time.perf_counter()
        before = self.state.files
        files = self.dataset.source_files(self.source)
        now = dict(zip(files, file_states(self.source, files)))
        added = sorted(set(now) - set(before))
        removed = sorted(set(before) - set(now))
        suspects = [p for p, s in before.items() if p in now and (now[p] != s or self.state.racy(now[p]))]
        changed = []
        if suspects:
            fs = fsspec.core.url_to_fs(self.source)[0]
            again = sha256_files([fs.unstrip_protocol(p) for p in suspects])
            changed = [p for p, d in zip(suspects, again)
                       if self._digests.get(p) is None or not isinstance(d, str) or d != self._digests[p]]
        self.rehashed = len(suspects)
        self.check_s = round(time.perf_counter() - t, 3)
        if added or removed or changed:
            raise BuildError(self._refusal(changed, added, removed))

    def _refusal(self, changed: list[str], added: list[str], removed: list[str]) -> str:
        root = fsspec.core.url_to_fs(self.source)[1]
        named = [(p, "changed") for p in changed] + [(p, "added") for p in added] + [(p, "removed") for p in removed]
        said = ", ".join(f"{posixpath.relpath(p, root)} ({what})" for p, what in named[:NAMED])
        more = f" and {len(named) - NAMED} more" if len(named) > NAMED else ""
        return (f"{self.dataset.name}: the source {self.source} changed while it was being built: {said}{more}; "
                "what the build read may not be what its fingerprint says, so nothing was published. Build "
                "again once nothing writes to the source")
