"""WordEval's baseline agents bound the oracle from both sides, scored by the evaluator."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from benchwright import registry
from benchwright.baselines.wordeval import run_agent


@pytest.fixture(scope="module")
def built(wordeval_text_build) -> Path:
    return wordeval_text_build   # the tiny build the harness and Lite tests use too (built once)


@pytest.mark.parametrize("agent, pass_rate", [("null", 0.0), ("replay", 1.0)])
def test_null_fails_and_replay_passes_every_case(built, agent, pass_rate, tmp_path):
    """Through the CLI, as a user runs it: a summary table of one screen (issue 23: about 1,680 lines of
    JSON for 124 cases), every case's report in OUT/evaluation.json; `evaluate --outputs` prints the same."""
    cli = [sys.executable, "-m", "benchwright.cli"]
    done = subprocess.run(cli + ["baseline", "wordeval", "--data", str(built), "--agent", agent, "--out",
                                 str(tmp_path / agent), "--evaluate"], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    cases = sum(1 for _ in built.glob("exports/cases/*/case.json"))
    full = json.loads((tmp_path / agent / "evaluation.json").read_text())
    assert full["summary"]["n_cases"] == cases > 0 and full["summary"]["pass_rate"] == pass_rate
    reports = full["reports"]
    assert all(r["passed"] is (pass_rate == 1.0) for r in reports)
    if agent == "null":  # the input fails on its target, not only on preservation
        assert all(any(c["name"].startswith("target") and not c["passed"] for c in r["checks"]) for r in reports)
    passed = int(pass_rate * cases)
    shown = done.stdout
    assert f"wordeval baseline {agent}: {passed} of {cases} cases passed" in shown
    assert re.search(rf"^\| all +\| +{passed} \| +{cases} \| +{100 * pass_rate:.1f}% \|$", shown, re.MULTILINE), shown
    assert "{" not in shown and len(shown.splitlines()) < 40, shown
    assert f"{tmp_path / agent / 'evaluation.json'}" in shown
    assert f"[wordeval] agent {agent} done in" in done.stderr  # progress, on stderr
    if agent == "null":  # the batch evaluator prints the same table and writes the report to --out
        again = subprocess.run(cli + ["evaluate", "wordeval", "--outputs", str(tmp_path / agent), "--cases-root",
                                      str(built / "exports" / "cases"), "--out", str(tmp_path / "r.json")],
                               capture_output=True, text=True, timeout=900)
        assert again.returncode == 0, again.stderr[-2000:]
        tables = shown[shown.index("+--"):shown.index("failed:")]  # after the title, which names the agent
        assert tables in again.stdout and f"WordEval: 0 of {cases} cases passed" in again.stdout
        assert json.loads((tmp_path / "r.json").read_text())["summary"] == full["summary"]


def test_one_config_only(built, tmp_path):
    n = run_agent(built, "replay", tmp_path, ("compositional",))
    assert n == len(list(tmp_path.glob("*.docx"))) > 0
    assert all(p.stem.startswith("comp_") for p in tmp_path.glob("*.docx"))


def test_a_broken_catalogue_source_is_refused_by_name(tmp_path):
    from benchwright.errors import SourceError
    from benchwright.wordeval.sources import read_catalogue

    with pytest.raises(SourceError, match="not a WordEval catalogue"):
        read_catalogue(str(tmp_path))
    source = tmp_path / "catalogue"
    registry.part("wordeval", "synth")(str(source), scale="tiny")
    (source / "units" / "01_character_formatting.yaml").write_text("units: [ {id: x\n")
    with pytest.raises(SourceError, match=r"malformed catalogue YAML \(line"):
        read_catalogue(str(source))


def test_libreoffices_resaves_are_made_meanwhile_in_order_and_stopped_with_the_card():
    # the card starts LibreOffice's re-saves before the other agents run and reads them last: they must be made
    # without being read, come out in their order, a failure among them must reach the card, and a card that
    # stops early must stop them (no soffice left working, their temporary files removed)
    import threading

    from benchwright.baselines.wordeval import _made_meanwhile

    started, release = threading.Event(), threading.Event()

    def resaves():
        started.set()
        release.wait(30)
        yield from (("case-1", b"one", None), ("case-2", None, "LibreOffice could not re-save the input"))

    with _made_meanwhile(resaves()) as read:
        assert started.wait(30)          # running before anything is read
        release.set()
        assert list(read) == [("case-1", b"one", None), ("case-2", None, "LibreOffice could not re-save the input")]

    def failing():
        yield ("case-1", b"one", None)
        raise RuntimeError("soffice (LibreOffice) is not installed")

    with _made_meanwhile(failing()) as read:
        assert next(read) == ("case-1", b"one", None)
        with pytest.raises(RuntimeError, match="soffice"):
            next(read)

    made, closed = [], threading.Event()

    def endless():
        try:
            while True:
                made.append(len(made))
                yield made[-1]
        finally:
            closed.set()

    with pytest.raises(ValueError, match="an earlier agent failed"):
        with _made_meanwhile(endless(), ahead=4):
            raise ValueError("an earlier agent failed")
    assert closed.is_set() and len(made) <= 6      # stopped at once, at most the queue and one item ahead
    assert not [t for t in threading.enumerate() if t.name == "benchwright-meanwhile"]
