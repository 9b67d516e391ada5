"""The hostile-input corpus, every registered dataset (``tests/hostile/<ds>.py``, the dataset's hook): ONE build
per dataset of a source holding all its cases at once; each case quarantined with its reason naming the file
and record (or kept unharmed), counts reconciled, no crash, no hang (a timeout per build), bounded memory (the
peak RSS each build added, against its hook's bound; the parsers' own on each bomb, in the hooks' checks);
the sources refused whole named in the error; the hook's own checks; and docs/RELIABILITY.md's table equal to
the corpus."""
from __future__ import annotations

from pathlib import Path

import pytest

from benchwright import registry
from benchwright.errors import BenchwrightError
from tests import hostile
from tests.quality_builds import made_once

RELIABILITY = Path(__file__).resolve().parents[1] / "docs" / "RELIABILITY.md"


def corpus_build(name: str, tmp_path_factory, fixtures: Path) -> hostile.CorpusBuild:
    """Dataset ``name``'s corpus, built once per test run."""
    return made_once(f"hostile-{name}", tmp_path_factory, lambda work: hostile.build_corpus(name, work, fixtures))


@pytest.mark.parametrize("name", registry.names())
def test_every_case_of_the_corpus_is_met(name, tmp_path_factory, fixtures_dir):
    build = corpus_build(name, tmp_path_factory, fixtures_dir)
    assert build.cases and {c.dataset for c in build.cases} == {name}
    hostile.assert_every_case(build.cases, hostile.quarantine_rows(build.built))
    hostile.reconciled_units(build.built)


def test_no_corpus_build_grows_memory_like_a_bomb(tmp_path_factory, fixtures_dir):
    """Peak RSS each corpus build added, every registered dataset, against its hook's bound (one an expanded
    bomb would pass)."""
    peaks = {name: corpus_build(name, tmp_path_factory, fixtures_dir).peak_mb for name in registry.names()}
    print("peak RSS growth per corpus build (MB):", {k: round(v) for k, v in peaks.items()})
    over = {name: peak for name, peak in peaks.items() if not peak < hostile.hook(name).PEAK_LIMIT_MB}
    assert not over, over


@pytest.mark.parametrize("name", [n for n in registry.names() if hasattr(hostile.hook(n), "refusals")])
def test_sources_refused_whole_name_the_file_and_publish_nothing(name, tmp_path):
    problems = []
    for case, run in hostile.hook(name).refusals(tmp_path / "sources"):
        assert case.outcome == hostile.REFUSED, case
        try:
            run(tmp_path / "out")
            problems.append(f"{case}: accepted")
        except BenchwrightError as err:
            if case.locator not in str(err) or case.reason not in str(err):
                problems.append(f"{case}: {err}")
    assert not problems, "\n".join(problems)
    assert not (tmp_path / "out" / name).exists()


@pytest.mark.parametrize("name, check", [pytest.param(n, c, id=f"{n}-{c.removeprefix('check_')}")
                                         for n in registry.names() for c in hostile.checks(n)])
def test_the_datasets_own_checks(name, check, tmp_path, tmp_path_factory, fixtures_dir):
    """``check_<what>`` of the dataset's hook, on its corpus build (a check may make what else it needs)."""
    getattr(hostile.hook(name), check)(corpus_build(name, tmp_path_factory, fixtures_dir), tmp_path, fixtures_dir)


def test_the_reliability_table_is_the_corpus(tmp_path, tmp_path_factory, fixtures_dir):
    builds = {name: corpus_build(name, tmp_path_factory, fixtures_dir) for name in registry.names()}
    corpus = hostile.full_corpus(tmp_path, fixtures_dir, builds)
    assert set(corpus) == set(registry.names())
    text = RELIABILITY.read_text(encoding="utf-8")
    assert hostile.reliability_table(corpus) in text, hostile.reliability_table(corpus)
    total = sum(len(cases) for cases in corpus.values())
    assert f"{total} cases" in text
