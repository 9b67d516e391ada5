"""The routes of the forget examples, from their scores: ModRoute's and the random-switching baseline's.

No torch here (``benchwright.vlm_unlearning.routing`` computes the scores with it): the table checks of a
built dataset (validation/vlm_unlearning.py) recount the routes without importing it.
"""
from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

from benchwright.hashing import stable_hash64


def route_size(n: int, gamma: float) -> int:
    """How many of ``n`` forget examples go to text-only at ``gamma``: gamma * n rounded half up."""
    if not 0.0 <= gamma <= 1.0:
        raise ValueError(f"gamma must be in [0, 1], got {gamma}")
    return int((Decimal(repr(gamma)) * n).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def route(scores: dict[str, float], gamma: float, seed: int | None = None) -> tuple[list[str], list[str]]:
    """ModRoute: the ``route_size(n, gamma)`` highest visual-pressure examples go text-only, the rest
    stay multimodal. Ties are broken by ``example_id`` (so ``seed`` never changes the result; it is
    accepted so ``route`` and ``random_route`` are called alike). Both lists sorted by example_id."""
    del seed
    order = sorted(scores, key=lambda eid: (-scores[eid], eid))
    k = route_size(len(order), gamma)
    return sorted(order[:k]), sorted(order[k:])


def random_route(ids, k: int, seed: int) -> tuple[list[str], list[str]]:
    """The random-switching baseline: ``k`` of ``ids`` go text-only, chosen by a seeded stable hash of
    each id (the same choice whatever the order of ``ids``, on every machine)."""
    ids = sorted(set(ids))
    if not 0 <= k <= len(ids):
        raise ValueError(f"k must be in [0, {len(ids)}], got {k}")
    order = sorted(ids, key=lambda eid: (stable_hash64(f"random-route:{seed}:{eid}"), eid))
    return sorted(order[:k]), sorted(order[k:])
