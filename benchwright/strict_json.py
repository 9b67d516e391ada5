"""JSON as sources are read: a key given twice is an error (``json`` silently keeps the last value, so a
duplicated id would lose a record without a word), and so is nesting deeper than the parser can follow
(``json`` raises ``RecursionError`` on 100,000 nested brackets, which no reader expects). Every failure is
a ``ValueError``: malformed text (``json.JSONDecodeError``, with its line), an integer past Python's digit
limit, a repeated key, nesting too deep.

A value that parses may still nest deeper than the code that walks it can follow (Beam's coders, ``repr``,
``json.dumps`` recurse too): a record that travels as it was read is checked with :func:`check_depth`
first (``MAX_DEPTH`` levels; source records nest a few levels)."""
from __future__ import annotations

import json

MAX_DEPTH = 100
TOO_DEEP = "nested too deeply (deeper than a JSON parser follows)"


def unique_keys(pairs: list) -> dict:
    """``object_pairs_hook`` refusing a repeated key."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set = set()
        repeated = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise ValueError(f"duplicate key {repeated!r}")
    return out


def loads(text: str | bytes):
    try:
        return json.loads(text, object_pairs_hook=unique_keys)
    except RecursionError:
        raise ValueError(TOO_DEEP) from None


def load(fp):
    return loads(fp.read())


def raw_decode(text: str, start: int = 0):
    """``json.JSONDecoder.raw_decode`` with the same checks: (value, end)."""
    try:
        return json.JSONDecoder(object_pairs_hook=unique_keys).raw_decode(text, start)
    except RecursionError:
        raise ValueError(TOO_DEEP) from None


def check_depth(value, max_depth: int = MAX_DEPTH) -> None:
    """``ValueError`` when ``value`` nests lists and objects more than ``max_depth`` levels deep (walked
    without recursion)."""
    if type(value) is not dict and type(value) is not list:
        return
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > max_depth:
            raise ValueError(f"nested more than {max_depth} levels deep")
        for child in (node.values() if type(node) is dict else node):
            if type(child) is dict or type(child) is list:
                stack.append((child, depth + 1))


def depth_problem(value, max_depth: int = MAX_DEPTH) -> str | None:
    """Why ``value`` nests too deeply to travel as it is (``check_depth``), or None."""
    try:
        check_depth(value, max_depth)
    except ValueError as err:
        return str(err)
    return None
