"""WordEval's baseline agents bound the oracle from both sides, scored by the evaluator."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchwright import registry
from benchwright.baselines.wordeval import run_agent
from benchwright.cli import main as cli_main


@pytest.fixture(scope="module")
def built(wordeval_text_build) -> Path:
    return wordeval_text_build   # the tiny build the harness and Lite tests use too (built once)


@pytest.mark.parametrize("agent, pass_rate", [("null", 0.0), ("replay", 1.0)])
def test_null_fails_and_replay_passes_every_case(built, agent, pass_rate, tmp_path, capsys):
    assert cli_main(["baseline", "wordeval", "--data", str(built), "--agent", agent, "--out", str(tmp_path / agent),
                     "--evaluate", "--report", str(tmp_path / "report.json")]) == 0
    result = json.loads(capsys.readouterr().out)
    cases = sum(1 for _ in built.glob("exports/cases/*/case.json"))
    assert result["cases"] == result["summary"]["n_cases"] == cases > 0
    assert result["summary"]["pass_rate"] == pass_rate
    reports = json.loads((tmp_path / "report.json").read_text())["reports"]
    assert all(r["passed"] is (pass_rate == 1.0) for r in reports)
    if agent == "null":  # the input fails on its target, not only on preservation
        assert all(any(c["name"].startswith("target") and not c["passed"] for c in r["checks"]) for r in reports)


def test_one_config_only(built, tmp_path):
    n = run_agent(built, "replay", tmp_path, ("compositional",))
    assert n == len(list(tmp_path.glob("*.docx"))) > 0
    assert all(p.stem.startswith("comp_") for p in tmp_path.glob("*.docx"))


def test_a_broken_catalogue_source_is_refused_by_name(tmp_path):
    from benchwright.errors import SourceError
    from benchwright.pipelines.wordeval_sources import read_catalogue

    with pytest.raises(SourceError, match="not a WordEval catalogue"):
        read_catalogue(str(tmp_path))
    source = tmp_path / "catalogue"
    registry.part("wordeval", "synth")(str(source), scale="tiny")
    (source / "units" / "01_character_formatting.yaml").write_text("units: [ {id: x\n")
    with pytest.raises(SourceError, match=r"malformed catalogue YAML \(line"):
        read_catalogue(str(source))
