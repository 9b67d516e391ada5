"""Workspace-Bench-Lite: the release's selection rule.

The released Lite persona counts are the largest-remainder (Hamilton) allocation of the full persona
counts down to 100 tasks; inside each persona stratum the choice is random. Here "random" is a seeded
stable-hash ranking (blake2b of seed and task id), so the choice does not depend on the order of the
task records, the Python version or numpy's generator stream. The allocation, the choice and the
distances are the core's (``benchwright.subsets``), shared with WordEval's lite.

A source may ship its own Lite list (the website's ``tasks-lite.js``, the runner's ``tasks_lite/<id>/``
folders); ``shipped_lite`` keeps its entries that name a task the build publishes and gives the reason
for each of the others (quarantined by the pipeline: the Lite split is short by that task, and says why).
"""
from __future__ import annotations

import math

from benchwright.subsets import select_stratified
from benchwright.workspace_bench.config import LITE_NAMESPACE

LITE_SIZE = 100
RELEASE_TASKS = 388  # the full release, whose Lite is LITE_SIZE tasks


def lite_size(tasks: int) -> int:
    """How many of ``tasks`` the rule puts in Lite: the release's share (100 of 388), rounded up so a
    small source keeps at least one task, never more than 100. The pipeline's rule and the synthetic
    source's shipped Lite list both use it (7 tasks -> 2, 40 -> 11, 388 -> 100)."""
    return min(LITE_SIZE, math.ceil(tasks * LITE_SIZE / RELEASE_TASKS))


def select_lite(tasks: list[dict], size: int = LITE_SIZE, seed: int = 0, stratum: str = "persona",
                namespace: str = LITE_NAMESPACE) -> list[int]:
    """The absolute_ids of a Lite subset chosen by the release's rule, sorted."""
    return select_stratified(tasks, size, seed, namespace, stratum=lambda t: t[stratum],
                             item_id=lambda t: int(t["absolute_id"]))


def shipped_lite(entries: list[tuple[str, int]], published: set[int], in_source: set[int]
                 ) -> tuple[list[int], list[tuple[str, str]]]:
    """(the absolute_ids of the shipped Lite ``entries`` (locator, absolute_id) that name a ``published``
    task, sorted; (locator, reason) for each entry that does not: its task is not in the source at all,
    or is in ``in_source`` but quarantined)."""
    kept, problems = [], []
    for locator, aid in entries:
        if aid in published:
            kept.append(aid)
        elif aid in in_source:
            problems.append((locator, f"Lite task {aid} is quarantined (its task record is refused: see its row)"))
        else:
            problems.append((locator, f"Lite entry names task {aid}, which the source does not have"))
    return sorted(kept), problems
