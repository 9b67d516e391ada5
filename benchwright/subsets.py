"""Stratified subsets of a dataset (Workspace-Bench-Lite, WordEval's lite) and how far one is from
the full set: the same allocation, seeded choice and distances for every dataset.

* ``allocate``: the largest-remainder (Hamilton) allocation of a subset's seats over strata.
* ``select_stratified``: inside each stratum the choice is "random" as a seeded stable-hash ranking
  (blake2b of a namespace, the seed and the item's id), so it depends neither on the order of the
  records, the Python version nor numpy's generator stream.
* ``total_variation`` (per attribute, numeric values over ``quantile_bins``) and ``compare_choices``
  (our rule's choice against a shipped list).
"""
from __future__ import annotations

from collections import Counter
from fractions import Fraction
from typing import Callable, Hashable, Iterable

from benchwright.hashing import stable_hash64


def allocate(counts: dict, size: int) -> dict:
    """Largest-remainder allocation of ``size`` seats proportionally to ``counts`` (exact arithmetic:
    remainders compared as fractions; a tie goes to the larger stratum, then the name)."""
    total = sum(counts.values())
    if not 0 <= size <= total:
        raise ValueError(f"cannot allocate {size} of {total}")
    if total == 0:
        return {k: 0 for k in counts}
    quotas = {k: Fraction(n * size, total) for k, n in counts.items()}
    seats = {k: int(q) for k, q in quotas.items()}
    order = sorted(counts, key=lambda k: (-(quotas[k] - seats[k]), -counts[k], str(k)))
    for k in order[:size - sum(seats.values())]:
        seats[k] += 1
    return seats


def seeded_rank(ids: Iterable, seed: int, namespace: str) -> list:
    """``ids`` in a seeded pseudo-random order that depends only on the ids (not their order)."""
    return sorted(ids, key=lambda i: (stable_hash64(f"{namespace}:{seed}:{i}"), str(i)))


def select_stratified(items: Iterable, size: int, seed: int, namespace: str, stratum: Callable[[object], Hashable],
                      item_id: Callable[[object], object], seats: dict | None = None) -> list:
    """The ids of ``size`` items chosen stratum by stratum: ``allocate`` gives each stratum its seats
    (or ``seats`` when given), ``seeded_rank`` picks inside it. Returns the chosen ids, sorted."""
    groups: dict = {}
    for item in items:
        groups.setdefault(stratum(item), []).append(item_id(item))
    if seats is None:
        seats = allocate({k: len(v) for k, v in groups.items()}, size)
    chosen = []
    for k, ids in groups.items():
        chosen += seeded_rank(ids, seed, namespace)[:seats.get(k, 0)]
    return sorted(chosen)


def total_variation(full: list, subset: list, bins: list[float] | None = None) -> float:
    """Total variation distance between the empirical distributions of a value in the full set and in
    a subset: 0 = identical shares, 1 = disjoint. Numeric values are compared over ``bins`` (upper
    edges, inclusive; the last bin is open); list values count each element (a task's rubric types)."""
    def shares(values):
        flat = [x for v in values for x in (v if isinstance(v, (list, tuple)) else [v])]
        if bins is not None:
            flat = [next((i for i, edge in enumerate(bins) if x <= edge), len(bins)) for x in flat]
        counts = Counter(flat)
        n = sum(counts.values())
        return {k: c / n for k, c in counts.items()} if n else {}

    a, b = shares(full), shares(subset)
    return 0.5 * sum(abs(a.get(k, 0.0) - b.get(k, 0.0)) for k in set(a) | set(b))


def quantile_bins(values: list[float], n: int = 5) -> list[float]:
    """Upper bin edges at the full set's quantiles (distinct), for ``total_variation`` on a count."""
    ordered = sorted(values)
    if not ordered:
        return []
    return sorted({ordered[max(0, (len(ordered) * q) // n - 1)] for q in range(1, n)})


def compare_choices(ours: list, shipped: list) -> dict:
    """How far our rule's choice is from the list a release ships: overlap and Jaccard index."""
    a, b = set(ours), set(shipped)
    return {"ours": len(a), "shipped": len(b), "both": len(a & b), "only_ours": len(a - b),
            "only_shipped": len(b - a), "jaccard": round(len(a & b) / len(a | b), 6) if a | b else 1.0}


def cost_reduction(full: float, subset: float) -> dict:
    """What a subset saves on one measure of evaluation cost (cases, bytes, checks...)."""
    return {"full": full, "lite": subset, "reduction": round(1 - subset / full, 4) if full else None}
