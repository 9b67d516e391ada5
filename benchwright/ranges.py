"""The integer ranges a config's ``datasets.Features`` allow, and a record's values checked against them.

The Features are the single source of truth for a column's type. An integer from a source that does not fit
it (a track id of 3,000,000,000 in an ``int32`` column, an ``absolute_id`` of 10^19 where ``int64`` is
declared) stops Arrow (``ArrowInvalid``) or numpy (``OverflowError``) far from the record, and with it every
other record of the batch or segment. Checked where a record is made, it is one quarantined record whose
reason names the column, the value and the range (``RecordError``).

Paths name columns as the statistics do: ``a`` a column, ``a.b`` field b of a struct, ``a[]`` a list's
elements (``objects[].track_id``).
"""
from __future__ import annotations

import numpy as np
from datasets import ClassLabel, LargeList, List, Value

from benchwright.errors import RecordError
from benchwright.fields import quote

_INTEGER_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
_RANGES: dict[int, tuple[object, dict]] = {}  # id(features) -> (features, ranges): Features do not hash


def _integer_dtype(feature) -> str | None:
    if isinstance(feature, ClassLabel):
        return "int64"  # its storage: a label id (a name is checked against the names elsewhere)
    if isinstance(feature, Value) and feature.dtype in _INTEGER_DTYPES:
        return feature.dtype
    return None


def _walk(feature, path: str, out: dict) -> None:
    dtype = _integer_dtype(feature)
    if dtype is not None:
        info = np.iinfo(dtype)
        out[path] = (int(info.min), int(info.max), dtype)
    elif isinstance(feature, (List, LargeList)):
        _walk(feature.feature, f"{path}[]", out)
    elif isinstance(feature, dict):
        for name, sub in feature.items():
            _walk(sub, f"{path}.{name}" if path else name, out)


def integer_ranges(features) -> dict[str, tuple[int, int, str]]:
    """{path: (lowest, highest, dtype)} of every integer a record of ``features`` holds (ClassLabel ids too)."""
    cached = _RANGES.get(id(features))
    if cached is None or cached[0] is not features:
        ranges: dict = {}
        _walk(dict(features), "", ranges)
        cached = _RANGES[id(features)] = (features, ranges)
    return cached[1]


def fits(value, low: int, high: int) -> bool:
    """True unless ``value`` is an integer (not a bool) outside [low, high]."""
    return not (isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
                and not low <= int(value) <= high)


def _problems(feature, value, path: str, ranges: dict, out: list) -> None:
    if value is None:
        return
    bounds = ranges.get(path)
    if bounds is not None:
        if not fits(value, bounds[0], bounds[1]):
            out.append(out_of_range(path, value, bounds))
    elif isinstance(feature, (List, LargeList)) and isinstance(value, (list, tuple)):
        if any(p.startswith(f"{path}[]") for p in ranges):
            for item in value:
                _problems(feature.feature, item, f"{path}[]", ranges, out)
    elif isinstance(feature, dict) and isinstance(value, dict):
        for name, sub in feature.items():
            if name in value:
                _problems(sub, value[name], f"{path}.{name}" if path else name, ranges, out)


def out_of_range(path: str, value, bounds: tuple) -> str:
    low, high, dtype = bounds
    return f"{path} = {quote(int(value))} does not fit the column's {dtype} ({low:,} to {high:,})"


def record_problems(features, record: dict) -> list[str]:
    """Why ``record`` (a row of ``features``: a dict of column values) holds an integer its Features cannot."""
    ranges = integer_ranges(features)
    if not ranges:
        return []
    out: list[str] = []
    _problems(dict(features), record, "", ranges, out)
    return out


def check_records(features_by_config: dict, records_by_config: dict, locator: str) -> None:
    """``RecordError`` at ``locator`` naming every integer out of its column's range, over the rows one
    source record makes: {config: row or [rows]} checked against {config: Features}."""
    problems = []
    for config, rows in records_by_config.items():
        for row in (rows if isinstance(rows, list) else [rows]):
            problems += [f"{config}.{p}" for p in record_problems(features_by_config[config], row)]
    if problems:
        raise RecordError(locator, "; ".join(dict.fromkeys(problems)))


def check_value(features, path: str, value, locator: str) -> None:
    """``RecordError`` when ``value``, the source's value of column ``path`` of ``features``, does not fit it
    (for a value checked before its row exists: a frame index as a segment is read)."""
    bounds = integer_ranges(features)[path]
    if not fits(value, bounds[0], bounds[1]):
        raise RecordError(locator, out_of_range(path, value, bounds))
