"""Workspace-Bench-Lite: the release's selection rule and how far a subset is from the full set.

The released Lite persona counts are the largest-remainder (Hamilton) allocation of the full persona
counts down to 100 tasks; inside each persona stratum the choice is random. Here "random" is a seeded
stable-hash ranking (blake2b of seed and task id), so the choice does not depend on the order of the
task records, the Python version or numpy's generator stream.
"""
from __future__ import annotations

from collections import Counter
from fractions import Fraction

from benchwright.hashing import stable_hash64

LITE_SIZE = 100


def allocate(counts: dict[str, int], size: int) -> dict[str, int]:
    """Largest-remainder allocation of ``size`` seats proportionally to ``counts`` (exact arithmetic:
    remainders compared as fractions; a tie goes to the larger stratum, then the name)."""
    total = sum(counts.values())
    if not 0 <= size <= total:
        raise ValueError(f"cannot allocate {size} of {total}")
    quotas = {k: Fraction(n * size, total) for k, n in counts.items()}
    seats = {k: int(q) for k, q in quotas.items()}
    order = sorted(counts, key=lambda k: (-(quotas[k] - seats[k]), -counts[k], k))
    for k in order[:size - sum(seats.values())]:
        seats[k] += 1
    return seats


def select_lite(tasks: list[dict], size: int = LITE_SIZE, seed: int = 0, stratum: str = "persona") -> list[int]:
    """The absolute_ids of a Lite subset chosen by the release's rule, sorted."""
    groups: dict[str, list[int]] = {}
    for t in tasks:
        groups.setdefault(t[stratum], []).append(int(t["absolute_id"]))
    seats = allocate({k: len(v) for k, v in groups.items()}, size)
    chosen = []
    for k, ids in groups.items():
        ranked = sorted(ids, key=lambda i: (stable_hash64(f"workspace-bench-lite:{seed}:{i}"), i))
        chosen += ranked[:seats[k]]
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


def compare_choices(ours: list[int], shipped: list[int]) -> dict:
    """How far our rule's choice is from the list a release ships: overlap and Jaccard index."""
    a, b = set(ours), set(shipped)
    return {"ours": len(a), "shipped": len(b), "both": len(a & b), "only_ours": len(a - b),
            "only_shipped": len(b - a), "jaccard": round(len(a & b) / len(a | b), 6) if a | b else 1.0}
