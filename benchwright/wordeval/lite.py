"""WordEval-Lite: a quarter of the cases that keeps the distribution over atomic/compositional,
subsystems and base documents, chosen and measured as Workspace-Bench-Lite is (``benchwright.subsets``).

The seats are allocated level by level with the largest-remainder rule: to each config (each config
with cases gets at least one), inside a config to each subsystem ("a+b" for a composition), inside
a subsystem to each base document; the cases of a stratum are then picked by a seeded stable-hash
ranking. Ties between equal remainders of base documents are broken by a seeded hash, not by name,
so no base document is favoured across subsystems. The choice depends only on the cases, never on
their order.
"""
from __future__ import annotations

import json
import math
from collections import defaultdict
from fractions import Fraction

from benchwright.hashing import stable_hash64
from benchwright.subsets import allocate, cost_reduction, seeded_rank, total_variation

LITE_SHARE = Fraction(1, 4)
LITE_SEED = 0
NAMESPACE = "wordeval-lite"
# The attributes Lite keeps (and the card reports the distance of), with how to read each from a case.
ATTRIBUTES = {
    "config (atomic / compositional)": lambda c: c["config"],
    "subsystem": lambda c: c["subsystem"].split("+"),
    "base document": lambda c: c["base_document"],
    "object-property pair": lambda c: list(c.get("properties") or []),
}


def lite_size(n: int, share: Fraction = LITE_SHARE) -> int:
    return min(n, math.ceil(n * share))


def choose_lite(cases: list[dict], seed: int = LITE_SEED, share: Fraction = LITE_SHARE) -> frozenset[str]:
    """The case ids of Lite among ``cases`` (dicts with ``case_id``, ``config``, ``subsystem`` and
    ``base_document``)."""
    tree: dict = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for c in cases:
        tree[c["config"]][c["subsystem"]][c["base_document"]].append(c["case_id"])
    count = lambda node: sum(count(v) for v in node.values()) if isinstance(node, dict) else len(node)  # noqa: E731
    configs = {k: count(v) for k, v in tree.items()}
    seats = allocate(configs, lite_size(sum(configs.values()), share))
    chosen: list[str] = []
    for config, subsystems in tree.items():
        n = max(1, seats[config])          # every config keeps a lite split
        for subsystem, k in allocate({s: count(v) for s, v in subsystems.items()}, n).items():
            bases = subsystems[subsystem]
            # the tie-break key: a seeded hash of the base document, then its name
            keyed = {(f"{stable_hash64(f'{NAMESPACE}:{seed}:{subsystem}:{b}'):020d}", b): ids
                     for b, ids in bases.items()}
            for key, m in allocate({key: len(ids) for key, ids in keyed.items()}, k).items():
                chosen += seeded_rank(keyed[key], seed, NAMESPACE)[:m]
    return frozenset(chosen)


def oracle_checks(oracle: str) -> int:
    """The checks the evaluator runs for a case: readable, one per target, preservation."""
    return len(json.loads(oracle).get("targets", [])) + 2


def lite_statistics(full: list[dict], lite: list[dict]) -> dict:
    """Per-attribute total variation distance between Lite and the full test set, and what Lite
    saves: cases, files and bytes an agent reads and writes, oracle checks (each case dict has the
    attributes above and ``bytes``: input plus reference, ``checks``: the oracle's checks)."""
    tvd = {name: round(total_variation([get(c) for c in full], [get(c) for c in lite]), 4) if lite else None
           for name, get in ATTRIBUTES.items()}
    cost = {
        "cases": cost_reduction(len(full), len(lite)),
        "files (input + reference)": cost_reduction(2 * len(full), 2 * len(lite)),
        "bytes (input + reference)": cost_reduction(sum(c["bytes"] for c in full), sum(c["bytes"] for c in lite)),
        "oracle checks": cost_reduction(sum(c["checks"] for c in full), sum(c["checks"] for c in lite)),
    }
    return {"tvd": tvd, "cost": cost}
