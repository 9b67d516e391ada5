"""Workspace-Bench-Lite: the release's rule reproduced on the release's own published counts (the allocation,
choice and distances are the core's, ``benchwright.subsets``)."""
import json
import random

import pytest

from benchwright.subsets import allocate, compare_choices, quantile_bins, total_variation
from benchwright.workspace_bench.lite import select_lite


@pytest.fixture(scope="module")
def stats(fixtures_dir):
    return json.loads((fixtures_dir / "workspace_bench" / "dataset-stats.json").read_text())


def test_largest_remainder_gives_the_released_lite_persona_counts(stats):
    full = {p["profile"]: p["tasks"] for p in stats["fullDatasetStats"]["profileTasks"]}
    lite = {p["profile"]: p["tasks"] for p in stats["liteDatasetStats"]["profileTasks"]}
    assert sum(full.values()) == 388
    assert allocate(full, 100) == lite == {"Operations Manager": 31, "Logistics Manager": 30, "Researcher": 17,
                                           "Backend Developer": 11, "Product Manager": 11}
    # plain rounding of the quotas would give 31/30/17/11/11 too only by luck; the floors alone give 98
    assert sum(int(n * 100 / 388) for n in full.values()) == 98


def test_allocation_is_exact_and_bounded():
    assert allocate({"a": 1, "b": 1, "c": 1}, 2) == {"a": 1, "b": 1, "c": 0}  # ties: larger stratum, then name
    assert allocate({"a": 5, "b": 0}, 5) == {"a": 5, "b": 0}
    with pytest.raises(ValueError):
        allocate({"a": 3}, 4)


def test_selection_is_stratified_seeded_and_independent_of_record_order(stats):
    full = {p["profile"]: p["tasks"] for p in stats["fullDatasetStats"]["profileTasks"]}
    tasks, next_id = [], 1
    for persona, n in full.items():
        for _ in range(n):
            tasks.append({"absolute_id": next_id, "persona": persona})
            next_id += 1
    chosen = select_lite(tasks, 100, seed=0)
    assert len(chosen) == len(set(chosen)) == 100 and chosen == sorted(chosen)
    persona_of = {t["absolute_id"]: t["persona"] for t in tasks}
    counts = {p: sum(persona_of[i] == p for i in chosen) for p in full}
    assert counts == allocate(full, 100)
    shuffled = tasks[:]
    random.Random(3).shuffle(shuffled)
    assert select_lite(shuffled, 100, seed=0) == chosen
    other = select_lite(tasks, 100, seed=1)
    assert other != chosen and compare_choices(chosen, other)["both"] < 100
    assert compare_choices(chosen, chosen) == {"ours": 100, "shipped": 100, "both": 100, "only_ours": 0,
                                               "only_shipped": 0, "jaccard": 1.0}


def test_total_variation_of_the_released_difficulty_mix(stats):
    full = {d["level"]: d["tasks"] for d in stats["fullDatasetStats"]["difficultyLevels"]}
    lite = {d["level"]: d["tasks"] for d in stats["liteDatasetStats"]["difficultyLevels"]}
    expand = lambda c: [k for k, n in c.items() for _ in range(n)]  # noqa: E731
    # by hand: |54/388-15/100| + |206/388-54/100| + |128/388-31/100| over 2
    by_hand = 0.5 * (abs(54 / 388 - 0.15) + abs(206 / 388 - 0.54) + abs(128 / 388 - 0.31))
    assert total_variation(expand(full), expand(lite)) == pytest.approx(by_hand, abs=1e-12)
    assert total_variation(["a", "b"], ["c"]) == 1.0
    assert total_variation([["x", "y"], ["x"]], [["x"], ["y", "x"]]) == 0.0  # list values count elements


def test_numeric_attributes_are_binned_at_the_full_sets_quantiles():
    full = list(range(1, 101))
    bins = quantile_bins(full, 4)
    assert bins == [25, 50, 75]  # four bins of 25 values each
    assert total_variation(full, full[:25], bins) == pytest.approx(0.75)


@pytest.mark.parametrize("scale", ["tiny", "default", "full"])
def test_the_synthetic_sources_lite_list_is_the_builds_rule(scale):
    """The synthetic source ships the Lite list the pipeline's rule chooses over its tasks (the
    release's share, rounded up). Before the fix the default source shipped 10 where the rule picks
    ceil(40 * 100 / 388) = 11, so a build of the embedded default disagreed with its own Lite list."""
    import math

    from benchwright.workspace_bench.lite import lite_size
    from benchwright.workspace_bench.synth import plan_source

    plan = plan_source(scale)
    expected = min(100, math.ceil(len(plan.tasks) * 100 / 388))
    assert lite_size(len(plan.tasks)) == expected == {"tiny": 2, "default": 11, "full": 100}[scale]
    assert plan.lite_ids == select_lite([t.record() for t in plan.tasks], expected, seed=plan.seed)
