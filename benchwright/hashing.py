"""Stable hashing: the same key gives the same number on every machine, runner and Python run.

Python's ``hash()`` is salted per process, so shard and split assignment use blake2b instead.
"""
from __future__ import annotations

import errno
import hashlib
import os
import stat
from pathlib import Path

import fsspec

from benchwright.files import map_in_threads


def stable_hash64(key: str) -> int:
    """A 64-bit unsigned integer derived from ``key`` (blake2b, stable across processes). A key holding a
    lone surrogate (a JSON or YAML escape in an id) hashes as its code units (``surrogatepass``): every
    other key's bytes are its UTF-8, so no hash changes, and no id stops the build here."""
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big")


def stable_int_id(key: str, bits: int = 53) -> int:
    """A positive integer id (fits a JSON number exactly) derived from a string key."""
    return stable_hash64(key) >> (64 - bits)


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    path = str(path)
    local = path[len("file://"):] if path.startswith("file://") else path if "://" not in path else None
    if local is not None:
        # a build hashes hundreds of thousands of small local files: through fsspec each costs 9x a
        # plain open, through a buffered file object 2x a raw descriptor
        fd = os.open(local, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO would block the open for ever
        try:
            mode = os.fstat(fd).st_mode
            if not stat.S_ISREG(mode):
                raise OSError(errno.EISDIR if stat.S_ISDIR(mode) else errno.EINVAL,
                              "a folder" if stat.S_ISDIR(mode) else "not a regular file", local)
            os.set_blocking(fd, True)
            while block := os.read(fd, chunk):
                h.update(block)
        finally:
            os.close(fd)
        return h.hexdigest()
    with fsspec.open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def _sha256_or_error(path: str):
    try:
        return sha256_file(path)
    except OSError as err:
        return err


def sha256_files(paths: list) -> list:
    """``sha256_file`` of many files, in order, on a few threads: each a hex digest, or the OSError
    reading that file raised. For local files, one read per inode (a hard link is not read again)."""
    keys = []
    for p in map(str, paths):
        local = p[len("file://"):] if p.startswith("file://") else p if "://" not in p else None
        try:
            st = os.stat(local) if local is not None else None
        except OSError:
            st = None  # sha256_file raises the real error
        keys.append((st.st_dev, st.st_ino) if st is not None else p)
    first = {}
    for p, key in zip(map(str, paths), keys):
        first.setdefault(key, p)
    digests = dict(zip(first, map_in_threads(_sha256_or_error, list(first.values()))))
    return [digests[key] for key in keys]
