"""Workspace-Bench-Lite: the release's selection rule.

The released Lite persona counts are the largest-remainder (Hamilton) allocation of the full persona
counts down to 100 tasks; inside each persona stratum the choice is random. Here "random" is a seeded
stable-hash ranking (blake2b of seed and task id), so the choice does not depend on the order of the
task records, the Python version or numpy's generator stream. The allocation, the choice and the
distances are the core's (``benchwright.subsets``), shared with WordEval's lite.
"""
from __future__ import annotations

from benchwright.subsets import select_stratified

LITE_SIZE = 100


def select_lite(tasks: list[dict], size: int = LITE_SIZE, seed: int = 0, stratum: str = "persona") -> list[int]:
    """The absolute_ids of a Lite subset chosen by the release's rule, sorted."""
    return select_stratified(tasks, size, seed, "workspace-bench-lite", stratum=lambda t: t[stratum],
                             item_id=lambda t: int(t["absolute_id"]))
