"""Typed fields of a parsed record (a JSON object of predictions, a judge's verdict): one place that
says what a number, an integer or a string is, and how a wrong one is refused.

JSON gives Python values, and Python is lenient where a metric must not be: ``float("0.5")`` and
``float(True)`` are numbers to numpy, ``bool(float("nan"))`` is True, ``int(2 ** 70)`` overflows only
when numpy meets it. Each check here takes the value, its field name and the record's locator and
returns the typed value or raises ``RecordError(locator, reason)``; the reason quotes the value cut to
``QUOTE_LIMIT`` characters (a 5,000-digit number or a megabyte string makes a short message).
"""
from __future__ import annotations

import math

import numpy as np

from benchwright.errors import RecordError

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
QUOTE_LIMIT = 60


def clip(text: str) -> str:
    """``repr(text)`` cut to ``QUOTE_LIMIT`` characters (a name from a file, in a message)."""
    r = repr(text)
    return r if len(r) <= QUOTE_LIMIT else f"{r[:QUOTE_LIMIT]}... ({len(text):,} characters)"


def quote(value) -> str:
    """``value`` for a message: its repr cut to ``QUOTE_LIMIT`` characters, with its type when that is
    not obvious."""
    if isinstance(value, bool):
        return f"{value!r} (a boolean)"
    if isinstance(value, int) and value.bit_length() > 200:
        return f"an integer of {len(str(abs(value))):,} digits"
    if isinstance(value, str):
        return f"{clip(value)} (a string)"
    text = repr(value)
    if len(text) > QUOTE_LIMIT:
        text = f"{text[:QUOTE_LIMIT]}... ({len(text):,} characters)"
    if isinstance(value, (list, dict)):
        return f"{text} (a {'list' if isinstance(value, list) else 'JSON object'})"
    return text


def integer(value, name: str, where: str, *, lo: int = INT64_MIN, hi: int = INT64_MAX,
            integral_float: bool = False) -> int:
    """A JSON integer in [lo, hi] (int64 by default). A boolean, a string or a float is refused; with
    ``integral_float`` a float holding an integer (``1000.0``, as some writers give ids) is accepted."""
    if isinstance(value, float) and integral_float and math.isfinite(value) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise RecordError(where, f"'{name}' must be an integer, got {quote(value)}")
    value = int(value)
    if not lo <= value <= hi:
        bound = "int64" if (lo, hi) == (INT64_MIN, INT64_MAX) else f"[{lo}, {hi}]"
        raise RecordError(where, f"'{name}' {quote(value)} is outside {bound}")
    return value


def number(value, name: str, where: str, *, finite: bool = True) -> float:
    """A JSON number (integer or float) as a float; a boolean or a string (``"0.5"``) is refused, and
    so is a value a double cannot hold (an integer past 1.8e308) or, with ``finite``, NaN and
    infinities."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise RecordError(where, f"'{name}' must be a number, got {quote(value)}")
    try:
        out = float(value)
    except OverflowError:
        raise RecordError(where, f"'{name}' {quote(value)} is too large for a double") from None
    if finite and not math.isfinite(out):
        raise RecordError(where, f"'{name}' must be finite, got {quote(value)}")
    return out


def string(value, name: str, where: str, *, empty: bool = False) -> str:
    """A JSON string (non-empty unless ``empty``)."""
    if not isinstance(value, str) or (not empty and not value):
        raise RecordError(where, f"'{name}' must be a {'' if empty else 'non-empty '}string, got {quote(value)}")
    return value


def numbers(value, shape: tuple[int, ...], name: str, where: str) -> np.ndarray:
    """Nested JSON lists of finite numbers of exactly ``shape`` (``()``: one number) as a float array."""
    if not shape:
        return np.float64(number(value, name, where))
    if not isinstance(value, list) or len(value) != shape[0]:
        size = f"{len(value)} items" if isinstance(value, list) else quote(value)
        raise RecordError(where, f"'{name}' must be a list of shape {list(shape)}, got {size}")
    return np.array([numbers(v, shape[1:], name, where) for v in value], dtype=float)


def _leaves(values: list, depth: int) -> list:
    for _ in range(depth):
        values = [leaf for v in values for leaf in v]
    return values


def number_column(values: list, shape: tuple[int, ...]) -> np.ndarray | None:
    """The (n, *shape) float array of n records' values of one field when every value is finite numbers
    of ``shape``; None when any is not (then check the records one by one with ``numbers`` for the
    message). The fast path of many records: the leaves' types are checked in one pass (numpy alone
    would take ``"0.5"`` and ``True`` as numbers)."""
    try:
        leaves = _leaves(values, len(shape))
        if not {type(v) for v in leaves} <= {int, float}:
            return None
        out = np.asarray(values, dtype=float)
    except (TypeError, ValueError, OverflowError):  # ragged, not lists, an integer past a double
        return None
    if out.shape != (len(values), *shape) or not np.isfinite(out).all():
        return None
    return out
