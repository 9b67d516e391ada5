"""Stable hashing: the same key gives the same number on every machine, runner and Python run.

Python's ``hash()`` is salted per process, so shard and split assignment use blake2b instead.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import fsspec


def stable_hash64(key: str) -> int:
    """A 64-bit unsigned integer derived from ``key`` (blake2b, stable across processes)."""
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest(), "big")


def stable_int_id(key: str, bits: int = 53) -> int:
    """A positive integer id (fits a JSON number exactly) derived from a string key."""
    return stable_hash64(key) >> (64 - bits)


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with fsspec.open(str(path), "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()
