"""Strings UTF-8 can encode, whatever a file put in them.

Python strings may hold surrogate code points (U+D800-U+DFFF) that UTF-8 cannot encode: a JSON
``"\\udcff"`` escape, a Python literal ``"\\udcff"`` read through ``ast``, a notebook cell's escaped
text, a file name decoded with ``surrogateescape``. Beam's coders and Arrow's string columns encode
UTF-8 strictly, so one such string stops a whole build (``UnicodeEncodeError`` in the coder, far from
the file that held it). :func:`encodable` is applied to every record a stage yields
(:class:`benchwright.stage.Stage`) and to anything read on the driver before ``beam.Create``:

- a high surrogate followed by a low one is the UTF-16 spelling of one character (``"\\ud83d\\ude00"``
  is U+1F600): the pair becomes that character;
- a lone surrogate is not text: it becomes U+FFFD, the replacement character (Unicode's own
  convention for an ill-formed code unit, what ``bytes.decode(errors="replace")`` writes);
- every other character is kept as it is, so a string that UTF-8 can encode is returned unchanged
  (the same object).
"""
from __future__ import annotations

from typing import Any

from benchwright.errors import RecordError

REPLACEMENT = "\ufffd"


def encodable_str(text: str) -> str:
    """``text`` with surrogate pairs joined and lone surrogates replaced by U+FFFD (see the module)."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        # UTF-16 with surrogatepass writes every code point as its code units; decoding joins the
        # well-formed pairs and replaces each ill-formed unit by U+FFFD
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


_LEAVES = frozenset({int, float, bool, type(None), bytes, complex})
_SEQUENCES = (list, tuple, set, frozenset)


def _is_encodable(value: Any) -> bool:
    """True when no string in ``value`` needs :func:`encodable_str` (one pass, nothing allocated)."""
    kind = type(value)
    if kind is str:
        return encodable_str(value) is value
    if kind in _LEAVES:
        return True
    if isinstance(value, dict):
        for k, v in value.items():
            if not (_is_encodable(k) and _is_encodable(v)):
                return False
        return True
    if isinstance(value, _SEQUENCES):
        for v in value:
            kind = type(v)
            if kind in _LEAVES or (kind is str and v.isascii()):
                continue
            if not _is_encodable(v):
                return False
    return True


def encodable(value: Any) -> tuple[Any, int]:
    """``(value, n)``: ``value`` with every string in it (dict keys too, inside dicts, lists, tuples,
    sets) made encodable by :func:`encodable_str`, and how many strings that changed. A value with
    nothing to change is returned as it is (the same object, checked in one pass that allocates
    nothing); other values (numbers, bytes, arrays, tables) are not looked into."""
    if _is_encodable(value):
        return value, 0
    return _fixed(value)


def _fixed(value: Any) -> tuple[Any, int]:
    if isinstance(value, str):
        fixed = encodable_str(value)
        return fixed, int(fixed is not value)
    if isinstance(value, dict):
        out, changed = {}, 0
        for k, v in value.items():
            (k2, nk), (v2, nv) = _fixed(k), _fixed(v)
            out[k2] = v2
            changed += nk + nv
        return _same_type(value, out), changed
    if isinstance(value, _SEQUENCES):
        items = [_fixed(v) for v in value]
        fixed = [v for v, _ in items]
        changed = sum(n for _, n in items)
        if isinstance(value, tuple) and hasattr(value, "_fields"):  # a namedtuple
            return type(value)(*fixed), changed
        return _same_type(value, fixed), changed
    return value, 0


def _same_type(value, items):
    """``items`` in ``value``'s container type, or the plain one when that type cannot be built from
    its items alone (a defaultdict needs its factory)."""
    plain = dict if isinstance(value, dict) else type(value).__mro__[-2]
    if type(value) is plain:
        return items if plain in (dict, list) else plain(items)
    try:
        return type(value)(items)
    except TypeError:
        return plain(items)


def decode(data: bytes, locator: str) -> str:
    """``data`` as UTF-8 text; bytes that are not UTF-8 (a Latin-1 ``é``) are a ``RecordError`` at
    ``<locator>:<line>`` naming the byte and its column, where ``bytes.decode`` names an offset only."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        column = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
        raise RecordError(f"{locator}:{line}", f"not UTF-8: byte 0x{data[err.start]:02x} at column {column} "
                                               f"({err.reason})") from None
