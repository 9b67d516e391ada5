"""Drift of a build against the previous build published at the same output.

Compared from the two builds' statistics (``benchwright.statistics``), per config and split:

- ``rows``: the relative change of the row count, ``|new - old| / max(old, 1)``;
- ``js``: the Jensen-Shannon distance (base 2, in [0, 1]) between the value distributions of a
  categorical column (ClassLabels, booleans, strings with few values);
- ``wasserstein``: the Wasserstein-1 distance between the two distributions of a numeric column,
  from their quantile functions (``statistics.QUANTILE_LEVELS``), divided by the previous build's
  spread (its 5-95% range, else its full range, else max(1, |median|)), so one limit fits columns of
  any unit.

Each comparison gets the limit of the last ``DriftThreshold`` matching it (the core's defaults, then
the dataset's ``drift_thresholds``). One beyond its limit is reported; it fails the build only when
its threshold is blocking (declared so, or named by ``--drift-blocking``).

Written to ``_build/statistics/drift.json``. A build of the same input with the same options as the
previous build holds the same data, so it carries the previous build's drift over unchanged (the
drift against the last build with another input): rebuilding never changes a build's bytes.
"""
from __future__ import annotations

import dataclasses
import fnmatch

import numpy as np

from benchwright import published
from benchwright.layout import DRIFT
from benchwright.statistics import read_statistics
FORMAT = "benchwright-drift/1"
METRICS = ("rows", "js", "wasserstein")


@dataclasses.dataclass(frozen=True)
class DriftThreshold:
    """``limit`` for the comparisons of ``metric`` whose target matches ``target`` (fnmatch over
    ``config/split/column``, or ``config/split`` for ``rows``)."""

    metric: str
    limit: float
    target: str = "*"
    blocking: bool = False

    def __post_init__(self):
        if self.metric not in METRICS:
            raise ValueError(f"drift metric {self.metric!r}: one of {', '.join(METRICS)}")


DEFAULT_THRESHOLDS = (
    DriftThreshold("rows", 0.25),
    DriftThreshold("js", 0.1),
    DriftThreshold("wasserstein", 0.1),
    # ids name rows; a new video changes their mix without the data drifting (benchwright diff lists them)
    DriftThreshold("js", 1.0, "*_id"),
    DriftThreshold("wasserstein", 1e9, "*_id"),
)


def thresholds(dataset) -> tuple[DriftThreshold, ...]:
    return DEFAULT_THRESHOLDS + tuple(getattr(dataset, "drift_thresholds", ()))


def compute_drift(dataset, new_stats: dict, previous: str | None, options_described: dict,
                  input_sha256: str, blocking_patterns=()) -> dict:
    """The drift document of a build with statistics ``new_stats`` against the build at folder URL
    ``previous`` (None: nothing was published there)."""
    if previous is None:
        return _document(None, "no previous build at this output", [])
    old_manifest = published.committed_manifest(previous)
    about = {"build": published.build_id(old_manifest), "input_sha256": old_manifest.get("input", {}).get("sha256")}
    if about["input_sha256"] == input_sha256 and old_manifest.get("options") == options_described:
        carried = published.read_json_or_none(published.join(previous, DRIFT))
        if carried is not None:
            return carried  # the same input and options: the same data, so the same drift (see above)
    old_stats = read_statistics(previous)
    if old_stats is None:
        return _document(about, "the previous build has no statistics (built before they existed)", [])
    comparisons = compare(old_stats, new_stats, thresholds(dataset), blocking_patterns)
    return _document(about, "the statistics of both builds compared", comparisons)


def _document(previous, note, comparisons) -> dict:
    exceeded = [c for c in comparisons if c["exceeded"]]
    return {"format": FORMAT, "previous": previous, "note": note, "comparisons": comparisons,
            "exceeded": len(exceeded), "blocking_failures": sum(c["blocking"] for c in exceeded)}


def compare(old: dict, new: dict, limits=DEFAULT_THRESHOLDS, blocking_patterns=()) -> list[dict]:
    """Every comparison between two statistics documents, in a fixed order."""
    out = []
    for config in sorted(set(old["configs"]) | set(new["configs"])):
        old_splits = old["configs"].get(config, {}).get("splits", {})
        new_splits = new["configs"].get(config, {}).get("splits", {})
        for split in sorted(set(old_splits) | set(new_splits)):
            a, b = old_splits.get(split), new_splits.get(split)
            rows_a, rows_b = (a or {}).get("rows", 0), (b or {}).get("rows", 0)
            out.append(_comparison(config, split, None, "rows", rows_a, rows_b,
                                   abs(rows_b - rows_a) / max(rows_a, 1), limits, blocking_patterns))
            if not a or not b:
                continue
            for column in sorted(set(a["columns"]) & set(b["columns"])):
                ea, eb = a["columns"][column], b["columns"][column]
                if ea["kind"] == eb["kind"] == "categorical" and ea["values"] and eb["values"]:
                    out.append(_comparison(config, split, column, "js", _top(ea), _top(eb),
                                           js_distance(dict(map(tuple, ea["values"])), dict(map(tuple, eb["values"]))),
                                           limits, blocking_patterns))
                elif ea["kind"] == eb["kind"] == "numeric" and ea["quantiles"] and eb["quantiles"]:
                    out.append(_comparison(config, split, column, "wasserstein", _centre(ea), _centre(eb),
                                           normalised_wasserstein(ea, eb, old["quantile_levels"]),
                                           limits, blocking_patterns))
    return out


def _comparison(config, split, column, metric, old, new, value, limits, blocking_patterns) -> dict:
    target = f"{config}/{split}" + (f"/{column}" if column is not None else "")
    limit = next((t for t in reversed(limits) if t.metric == metric and fnmatch.fnmatchcase(target, t.target)), None)
    value = round(float(value), 6)
    exceeded = limit is not None and value > limit.limit
    blocking = limit is not None and (limit.blocking or any(fnmatch.fnmatchcase(target, p) for p in blocking_patterns))
    return {"target": target, "config": config, "split": split, "column": column, "metric": metric,
            "previous": old, "current": new, "value": value, "limit": None if limit is None else limit.limit,
            "exceeded": exceeded, "blocking": blocking}


def _top(entry: dict) -> str:
    total = sum(c for _, c in entry["values"]) or 1
    return ", ".join(f"{v} {100 * c / total:.0f}%" for v, c in entry["values"][:3])


def _centre(entry: dict) -> str:
    return f"median {entry['quantiles'][len(entry['quantiles']) // 2]:.4g}, mean {entry['mean']:.4g}"


def js_distance(p: dict, q: dict) -> float:
    """Jensen-Shannon distance (base 2) between two count dictionaries over the union of their keys."""
    from scipy.spatial.distance import jensenshannon

    keys = sorted(set(p) | set(q), key=str)
    a = np.array([p.get(k, 0) for k in keys], float)
    b = np.array([q.get(k, 0) for k in keys], float)
    if a.sum() == 0 or b.sum() == 0:
        return 0.0 if a.sum() == b.sum() else 1.0
    return float(jensenshannon(a, b, base=2))


def normalised_wasserstein(old: dict, new: dict, levels) -> float:
    """W1 between two numeric entries from their quantile functions (trapezoid rule over the
    levels), in units of the old entry's spread."""
    levels = np.asarray(levels, float)
    qa, qb = np.asarray(old["quantiles"], float), np.asarray(new["quantiles"], float)
    gap = np.abs(qa - qb)
    w1 = float(np.sum((gap[1:] + gap[:-1]) / 2 * np.diff(levels)))
    return w1 / spread(old, levels)


def spread(entry: dict, levels) -> float:
    q = dict(zip(np.round(np.asarray(levels, float), 4), entry["quantiles"]))
    for width in (q.get(0.95, 0) - q.get(0.05, 0), entry["max"] - entry["min"]):
        if width > 0:
            return float(width)
    return max(1.0, abs(float(entry["quantiles"][len(entry["quantiles"]) // 2])))


def read_drift(root: str) -> dict | None:
    return published.read_json_or_none(published.join(str(root), DRIFT))


def drift_results(drift: dict | None) -> list[dict]:
    """The validation report's rows: one per comparison (failing only where beyond a blocking limit)."""
    if drift is None:
        return [{"check": "drift", "ok": True, "detail": "the build has no drift record"}]
    if not drift["comparisons"]:
        return [{"check": "drift", "ok": True, "detail": drift["note"]}]
    prev = drift["previous"]
    results = [{"check": "drift: previous build", "ok": True,
                "detail": f"build {prev['build']} (input {str(prev['input_sha256'])[:12]}); {drift['note']}; "
                          f"{drift['exceeded']} of {len(drift['comparisons'])} beyond their limit, "
                          f"{drift['blocking_failures']} blocking"}]
    for c in drift["comparisons"]:
        state = ("beyond its blocking limit" if c["blocking"] else "beyond its limit (not blocking)") \
            if c["exceeded"] else "within its limit"
        results.append({"check": f"drift: {c['target']} {c['metric']}", "config": c["config"],
                        "ok": not (c["exceeded"] and c["blocking"]),
                        "warning": bool(c["exceeded"] and not c["blocking"]),
                        "detail": f"{c['value']:.4g} (limit {c['limit']}), {state}; previous {c['previous']}, "
                                  f"now {c['current']}"})
    return results
