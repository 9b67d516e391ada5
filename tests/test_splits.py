"""The core's group-level split assignment (benchwright.splits), every dataset's split rule."""
from __future__ import annotations

import random

import apache_beam as beam
from apache_beam.testing.util import assert_that, equal_to
from hypothesis import given, settings
from hypothesis import strategies as st

from benchwright import splits
from benchwright.options import BuildOptions

RULE = splits.SplitRule(held_out=(("validation", 0.2),), seed=0)
TWO = splits.SplitRule(held_out=(("validation", 0.15), ("test", 0.15)), seed=3)

group_strata = st.dictionaries(st.text("abcdefgh0123456789", min_size=1, max_size=6),
                               st.sampled_from(["giraffe", "zebra", "rhino", "gazelle"]), max_size=60)


@given(group_strata, st.sampled_from([RULE, TWO]), st.randoms(use_true_random=False))
@settings(max_examples=200, deadline=None)
def test_assignment_depends_on_content_not_order(groups, rule, rnd):
    items = list(groups.items())
    rnd.shuffle(items)
    assert splits.assign(dict(items), rule) == splits.assign(groups, rule)


@given(group_strata, st.sampled_from([RULE, TWO]))
@settings(max_examples=200, deadline=None)
def test_every_split_holds_every_stratum_with_enough_groups(groups, rule):
    out = splits.assign(groups, rule)
    assert set(out) == set(groups)
    for stratum in set(groups.values()):
        members = [g for g, s in groups.items() if s == stratum]
        got = {out[g] for g in members}
        if len(members) < rule.min_groups:
            assert got == {rule.rest}
            continue
        for split, fraction in rule.held_out:
            n = sum(out[g] == split for g in members)
            assert n == max(1, round(fraction * len(members))), (stratum, split, n, len(members))


@given(group_strata, group_strata)
@settings(max_examples=200, deadline=None)
def test_groups_keep_their_previous_split_when_data_grows(old, new):
    first = splits.assign(old, RULE)
    grown = {**new, **old}
    second = splits.assign(grown, RULE, previous=first)
    assert {g: second[g] for g in first} == first


def test_a_previous_assignment_is_honoured_even_against_the_quota():
    groups = {f"v{i}": "zebra" for i in range(10)}
    previous = {g: "validation" for g in groups}  # an older release with another rule
    assert set(splits.assign(groups, RULE, previous).values()) == {"validation"}


def test_majority_stratum_and_the_transform_match_the_pure_rule():
    rnd = random.Random(1)
    pairs = []
    expected_strata = {}
    for i in range(40):
        species = rnd.choice(["elephant", "rhino", "gazelle"])
        expected_strata[f"DJI_{i:04d}"] = species
        pairs += [(f"DJI_{i:04d}", species)] * 3 + [(f"DJI_{i:04d}", "giraffe")]  # a minority label per video
    pairs.append(("DJI_none", None))
    rnd.shuffle(pairs)
    want = splits.assign(expected_strata, RULE)
    options = BuildOptions()
    with beam.Pipeline(runner=options.make_runner(), options=options.pipeline_options()) as p:
        got = p | beam.Create(pairs) | splits.AssignSplits(RULE)
        assert_that(got, equal_to([want]))
    assert splits.split_of(want, "DJI_none", RULE) == "train"


def test_splits_file_round_trips_through_a_url(tmp_path):
    assignment = splits.assign({f"v{i}": "zebra" for i in range(6)}, RULE)
    url = splits.write_splits(assignment, f"file://{tmp_path}", RULE)
    assert url.endswith("_build/splits.json")
    assert splits.read_previous(f"file://{tmp_path}") == assignment
    assert splits.read_previous(str(tmp_path / "nothing-here")) == {}
    assert "stable-hash order" in (tmp_path / "_build" / "splits.json").read_text()
