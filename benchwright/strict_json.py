"""JSON as sources, ground truth and predictions are read: a key given twice is an error (``json``
silently keeps the last value, so a duplicated id would lose a record without a word). Every failure
is a ``ValueError`` whose message says where: malformed text (``json.JSONDecodeError``, with its line),
a repeated key, an integer past Python's digit limit and nesting deeper than the decoder's stack (a
``RecursionError`` inside ``json``) each name their line and column.

``read(path, locator)`` is the one reader of a JSON file the evaluators use: bytes that are not
UTF-8, malformed JSON and the rest are a ``RecordError`` at ``<locator>:<line>``.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from benchwright.errors import RecordError, SourceError
from benchwright.utf8 import decode

# a run of digits longer than Python converts to an int (sys.get_int_max_str_digits, 4,300 by default)
_LONG_DIGITS = re.compile(r"\d{%d,}" % (getattr(sys, "get_int_max_str_digits", lambda: 4300)() + 1))
# strings (skipped) and brackets: the nesting depth at every bracket
_STRING_OR_BRACKET = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.S)
DEPTH_REPORTED = 256  # where a file too deep for the decoder is said to pass the limit


class RepeatedKey(ValueError):
    def __init__(self, key):
        super().__init__(f"duplicate key {_short(key)} (a plain JSON reader would keep its last value silently)")
        self.key = key


def _short(text: str, limit: int = 80) -> str:
    r = repr(text)
    return r if len(r) <= limit else f"{r[:limit]}... ({len(text):,} characters)"


def unique_keys(pairs: list) -> dict:
    """``object_pairs_hook`` refusing a repeated key."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set = set()
        raise RepeatedKey(next(k for k, _ in pairs if k in seen or seen.add(k)))
    return out


def _line_col(text: str, pos: int) -> str:
    line = text.count("\n", 0, pos) + 1
    return f"line {line} column {pos - text.rfind(chr(10), 0, pos)}"


def _repeated_key_position(text: str) -> int | None:
    """Where the first object holding a repeated key starts, by parsing again with ``json``'s pure-Python
    scanner, whose object parser is given the position (only on this error path: it is slow)."""
    decoder = json.JSONDecoder(object_pairs_hook=unique_keys)
    starts: list[int] = []
    parse_object = decoder.parse_object

    def tracked(s_and_end, *args):
        starts.append(s_and_end[1] - 1)
        result = parse_object(s_and_end, *args)
        starts.pop()
        return result

    decoder.parse_object = tracked
    decoder.scan_once = json.scanner.py_make_scanner(decoder)
    try:
        decoder.decode(text)
    except RepeatedKey:
        return starts[-1] if starts else None
    except (ValueError, RecursionError):
        return None
    return None


def _too_deep_position(text: str) -> int | None:
    depth = 0
    for m in _STRING_OR_BRACKET.finditer(text):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > DEPTH_REPORTED:
                return m.start()
        elif c in "]}":
            depth -= 1
    return None


def loads(text: str | bytes):
    """``json.loads`` refusing repeated keys; every failure a ``ValueError`` naming its line."""
    if isinstance(text, (bytes, bytearray)):  # as json.loads decodes them
        text = bytes(text).decode(json.detect_encoding(text), "surrogatepass")
    try:
        return json.loads(text, object_pairs_hook=unique_keys)
    except json.JSONDecodeError:
        raise
    except RepeatedKey as err:
        pos = _repeated_key_position(text)
        where = f" in the object at {_line_col(text, pos)}" if pos is not None else ""
        raise ValueError(f"{err}{where}") from None
    except RecursionError:
        pos = _too_deep_position(text)
        where = f" (depth {DEPTH_REPORTED} passed at {_line_col(text, pos)})" if pos is not None else ""
        raise ValueError(f"nested deeper than the JSON decoder can follow{where}") from None
    except ValueError as err:  # an integer past the digit limit (int() inside the decoder)
        m = _LONG_DIGITS.search(text)
        if m is None:
            raise
        raise ValueError(f"a number of {len(m.group()):,} digits at {_line_col(text, m.start())} "
                         f"(more than Python converts: {err.args[0].split(':')[0]})") from None


def load(fp):
    return loads(fp.read())


def read(path, locator: str | None = None):
    """The JSON document of a local file, strictly (``loads``). A file that cannot be opened is a
    ``SourceError``; bytes that are not UTF-8 or text that is not strict JSON a ``RecordError`` at
    ``<locator>:<line>`` (``locator`` defaults to the path)."""
    path = Path(path)
    locator = str(path) if locator is None else locator
    try:
        data = path.read_bytes()
    except OSError as err:
        raise SourceError(f"{locator}: cannot read: {err.strerror or err}") from None
    text = decode(data, locator)
    try:
        return loads(text)
    except json.JSONDecodeError as err:
        raise RecordError(f"{locator}:{err.lineno}", f"not valid JSON: {err.msg} (column {err.colno})") from None
    except ValueError as err:
        line = re.search(r"\bline (\d+)\b", str(err))
        raise RecordError(f"{locator}:{line.group(1)}" if line else locator, f"not valid JSON: {err}") from None
