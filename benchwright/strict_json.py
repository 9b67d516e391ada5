"""JSON as sources, ground truth and predictions are read: a key given twice is an error (``json``
silently keeps the last value, so a duplicated id would lose a record without a word). Every failure
is a ``ValueError`` whose message says where: malformed text (``json.JSONDecodeError``, with its line),
a repeated key, an integer past Python's digit limit and nesting deeper than the decoder's stack (a
``RecursionError`` inside ``json``) each name their line and column.

``read(path, locator)`` is the one reader of a JSON file the evaluators use: bytes that are not
UTF-8, malformed JSON and the rest are a ``RecordError`` at ``<locator>:<line>``.

A value that parses may still nest deeper than the code that walks it can follow (Beam's coders, ``repr``,
``json.dumps`` recurse too): a record that travels as it was read is checked with :func:`depth_problem`
first (``MAX_DEPTH`` levels; source records nest a few).
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
MAX_DEPTH = 100  # the nesting a record that travels through a pipeline as it was read may have


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
        raise _too_deep(text) from None
    except ValueError as err:  # an integer past the digit limit (int() inside the decoder)
        m = _LONG_DIGITS.search(text)
        if m is None:
            raise
        raise ValueError(f"a number of {len(m.group()):,} digits at {_line_col(text, m.start())} "
                         f"(more than Python converts: {err.args[0].split(':')[0]})") from None


def _too_deep(text: str) -> ValueError:
    pos = _too_deep_position(text)
    where = f" (depth {DEPTH_REPORTED} passed at {_line_col(text, pos)})" if pos is not None else ""
    return ValueError(f"nested deeper than the JSON decoder can follow{where}")


def load(fp):
    return loads(fp.read())


def raw_decode(text: str, start: int = 0):
    """``json.JSONDecoder.raw_decode`` with ``loads``' refusals: (value, end)."""
    try:
        return json.JSONDecoder(object_pairs_hook=unique_keys).raw_decode(text, start)
    except RecursionError:
        raise _too_deep(text) from None


def depth_problem(value, max_depth: int = MAX_DEPTH) -> str | None:
    """Why ``value`` nests lists and objects more than ``max_depth`` levels deep (walked without recursion),
    or None."""
    if type(value) is not dict and type(value) is not list:
        return None
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > max_depth:
            return f"nested more than {max_depth} levels deep"
        for child in (node.values() if type(node) is dict else node):
            if type(child) is dict or type(child) is list:
                stack.append((child, depth + 1))
    return None


# characters a JSON string may hold as they are that ``str.splitlines`` (and many editors) end a line at
_LINE_SEPARATORS = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}
_LINE_SEPARATOR = re.compile("[\u2028\u2029\x85]")


def json_lines(text: str):
    """(1-based line number, line) of every non-blank line of JSON Lines text. A line ends at "\\n" only:
    ``str.splitlines`` also ends one at U+2028, U+2029, U+0085 and a form feed, which a JSON string may hold
    as they are, and would cut a record in two (and number the lines after it wrongly)."""
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            yield number, line


def dumps_line(value, **options) -> str:
    """``value`` as one JSON Lines line (without its newline): UTF-8 text as it is (``ensure_ascii=False``,
    ``sort_keys=True``), but for the line separators a string may hold, escaped, so that a reader that ends
    lines at them (``str.splitlines``) still reads one record per line."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, **options)
    return _LINE_SEPARATOR.sub(lambda m: _LINE_SEPARATORS[m.group()], text)


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
