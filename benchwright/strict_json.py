"""JSON as sources are read: a key given twice is an error (``json`` silently keeps the last value, so a
duplicated id would lose a record without a word). Every failure is a ``ValueError``: malformed text
(``json.JSONDecodeError``, with its line), an integer past Python's digit limit, a repeated key."""
from __future__ import annotations

import json


def unique_keys(pairs: list) -> dict:
    """``object_pairs_hook`` refusing a repeated key."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set = set()
        repeated = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise ValueError(f"duplicate key {repeated!r}")
    return out


def loads(text: str | bytes):
    return json.loads(text, object_pairs_hook=unique_keys)


def load(fp):
    return json.load(fp, object_pairs_hook=unique_keys)
