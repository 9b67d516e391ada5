"""Stable group-level splits, for every dataset.

Rows are split by a group key (a video, a workspace, a base document...), never row by row, so no
group leaks across splits. Each stratum (a species, a persona...) gets its share of every held-out
split. Groups keep the split a previous release gave them; new groups fill the quotas in
stable-hash order, so adding data never moves what was already published. The assignment is a
pipeline result: ``AssignSplits`` yields it as one dict, and ``WriteSplits`` writes it through
fsspec under the build's staging URL (``_build/splits.json``), never to a worker's local disk.
"""
from __future__ import annotations

import dataclasses
import json
import posixpath
from collections import Counter

import apache_beam as beam
import fsspec

from benchwright.hashing import stable_hash64

SPLITS_FILE = "_build/splits.json"


@dataclasses.dataclass(frozen=True)
class SplitRule:
    """``held_out``: (split, fraction) pairs filled in that order; every other group goes to ``rest``.
    A stratum with fewer than ``min_groups`` groups stays whole in ``rest``; otherwise each held-out
    split gets ``max(1, round(fraction * n))`` of its groups, so every split holds the stratum."""

    held_out: tuple[tuple[str, float], ...] = (("validation", 0.2),)
    rest: str = "train"
    seed: int = 0
    min_groups: int = 2
    group: str = "group"  # what a group is, for the record (e.g. "video")
    stratum: str = "stratum"  # what a stratum is, for the record (e.g. "species")

    def describe(self) -> str:
        shares = ", ".join(f"{f:.0%} {s}" for s, f in self.held_out)
        return (f"{self.group}-level, stratified by {self.stratum}: {shares}, the rest {self.rest}; new "
                f"{self.group}s in stable-hash order (seed {self.seed}); earlier assignments are kept")


def assign(group_strata: dict[str, str], rule: SplitRule, previous: dict[str, str] | None = None) -> dict[str, str]:
    """{group: stratum} -> {group: split}. Pure and order-free: the result depends only on the
    mapping's content, the rule and the previous assignment."""
    previous = previous or {}
    out = {g: previous[g] for g in group_strata if g in previous}
    for stratum in sorted(set(group_strata.values())):
        groups = sorted((g for g, s in group_strata.items() if s == stratum),
                        key=lambda g: (stable_hash64(f"{rule.seed}:{g}"), g))
        enough = len(groups) >= rule.min_groups
        for split, fraction in rule.held_out:
            quota = max(1, round(fraction * len(groups))) if enough else 0
            have = sum(out.get(g) == split for g in groups)
            for g in groups:
                if have >= quota:
                    break
                if g not in out:
                    out[g] = split
                    have += 1
        for g in groups:
            out.setdefault(g, rule.rest)
    return dict(sorted(out.items()))


def majority(strata: list[str]) -> str | None:
    """The most frequent stratum of a group (ties: the smallest name); None when there is none."""
    counts = Counter(s for s in strata if s)
    return min(counts, key=lambda s: (-counts[s], s)) if counts else None


class AssignSplits(beam.PTransform):
    """PCollection of (group, stratum) pairs (any number per group) -> a single {group: split} dict.

    A group's stratum is its majority stratum; groups without one are left out (their rows go to
    ``rule.rest`` through ``split_of``)."""

    def __init__(self, rule: SplitRule, previous: dict[str, str] | None = None):
        super().__init__()
        self._rule, self._previous = rule, dict(previous or {})

    def expand(self, pairs):
        rule, previous = self._rule, self._previous
        return (
            pairs
            | "ByGroup" >> beam.GroupByKey()
            | "MajorityStratum" >> beam.Map(lambda kv: (kv[0], majority(list(kv[1]))))
            | "Groups" >> beam.combiners.ToDict()
            | "Assign" >> beam.Map(lambda gs: assign({g: s for g, s in gs.items() if s}, rule, previous))
        )


def split_of(assignment: dict[str, str], group: str, rule: SplitRule) -> str:
    return assignment.get(group, rule.rest)


class WriteSplits(beam.PTransform):
    """Writes the assignment to ``<root>/_build/splits.json`` (fsspec), with the rule that made it."""

    def __init__(self, root: str, rule: SplitRule):
        super().__init__()
        self._root, self._rule = root, rule

    def expand(self, assignment):
        return assignment | "WriteSplitsJson" >> beam.Map(write_splits, self._root, self._rule)


def write_splits(assignment: dict[str, str], root: str, rule: SplitRule) -> str:
    url = posixpath.join(root, SPLITS_FILE)
    fs, path = fsspec.core.url_to_fs(url)
    fs.makedirs(posixpath.dirname(path), exist_ok=True)
    body = {"rule": rule.describe(), "groups": dict(sorted(assignment.items()))}
    with fs.open(path, "w") as f:
        f.write(json.dumps(body, indent=2, sort_keys=True) + "\n")
    return url


def read_previous(previous: str | None) -> dict[str, str]:
    """The assignment a previous build published at ``previous`` (a URL), or {} when there is none.
    Reads the older ``videos`` key too (WildBox builds before the core rule)."""
    if not previous:
        return {}
    fs, path = fsspec.core.url_to_fs(posixpath.join(previous, SPLITS_FILE))
    if not fs.exists(path):
        return {}
    with fs.open(path, "r") as f:
        body = json.load(f)
    return body.get("groups", body.get("videos", {}))
