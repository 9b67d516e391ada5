"""The WordEval Beam build: the run's shared tiny build (and a two-unit catalogue subset) through the real pipeline, gates and all."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchwright.cli import main as cli_main
from benchwright.pipelines.wordeval import WordEval
from tests.builds import build_dataset
from tests.quality_builds import tiny_build, tiny_builds_loaded_with_datasets_alone
from tests.wildbox_helpers import published_hashes

# The planted-gate-failure build: a composition template and the two units it is made of (one of them refused).
BOLD_AND_COLOUR = ("font_bold", "font_color")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> tuple[Path, Path]:
    """(WordEval's tiny source, its build): the run's shared tiny build (``tiny_build``, the contract tests' too),
    made with the default settings, so the LibreOffice gate ran on every file it publishes; read, never changed."""
    return tiny_build("wordeval", tmp_path_factory)


@pytest.fixture(scope="module")
def built(tiny) -> Path:
    return tiny[1]


def test_load_dataset_without_benchwright(tmp_path_factory):
    # both configs in one clean interpreter: the run's one that loads every tiny build (the contract test's too)
    loaded = tiny_builds_loaded_with_datasets_alone(tmp_path_factory)["wordeval"]
    assert list(loaded) == ["atomic", "compositional"]
    for config, got in loaded.items():
        assert next(iter(got["splits"])) == "test" and got["splits"]["test"] > 0, config  # first_row is test's
        assert got["first_row"]["input_docx"]["head"].startswith(b"PK".hex()), config  # a .docx is a zip
        for column in ("case_id", "instruction", "input_docx", "reference_docx", "oracle", "command", "subsystem",
                       "com_object", "properties"):
            assert column in got["columns"], (config, column)
        if config == "compositional":
            assert "template" in got["columns"] and "atomic_case_ids" in got["columns"]


def test_counts_reconcile_and_links_resolve(built):
    manifest = json.loads((built / "_build" / "manifest.json").read_text())
    for unit, e in manifest["reconciliation"]["units"].items():
        assert e["read"] == e["written"] + e["quarantined"] + e["filtered"] and e["written"] > 0, unit
    report = json.loads((built / "_build" / "validation" / "report.json").read_text())
    assert report["passed"]
    assert any(r["check"] == "compositional: atomic_case_ids -> atomic.case_id" and r["ok"] for r in report["results"])


def test_case_folders_evaluate_reference_pass_and_input_fail(built, capsys):
    cases = sorted((built / "exports" / "cases").iterdir())
    assert cases
    for case in cases[:5]:
        assert cli_main(["evaluate", "wordeval", "--case", str(case), "--output", str(case / "reference.docx")]) == 0
        assert json.loads(capsys.readouterr().out)["passed"] is True
        assert cli_main(["evaluate", "wordeval", "--case", str(case), "--output", str(case / "input.docx")]) == 0
        assert json.loads(capsys.readouterr().out)["passed"] is False


def test_two_builds_are_byte_identical(tiny, tmp_path):
    # the shared build ran in_memory; the same source and settings again in two worker processes
    source, built = tiny
    again = build_dataset("wordeval", source, tmp_path / "again", running_mode="multi_processing", num_workers=2)
    assert published_hashes(again) == published_hashes(built)


def test_a_case_failing_a_gate_is_quarantined_not_published(monkeypatch, tmp_path):
    import benchwright.formats.ooxml.gate as gate

    real = gate.gate_docx

    def strict(data, locator="<docx>", **kw):  # a gate that rejects one unit's reference files
        planted = locator.startswith("font_bold--") and locator.endswith("/reference_docx")
        return ["planted: test gate failure"] if planted else real(data, locator, **kw)

    monkeypatch.setattr(gate, "gate_docx", strict)
    subset = WordEval().configured(unit_ids=BOLD_AND_COLOUR, libreoffice_gate="none")
    out = build_dataset(subset, None, tmp_path / "out", max_bad_fraction=1.0)
    assert json.loads((out / "_build" / "manifest.json").read_text())["reconciliation"]["units"][
        "compositional_case"]["written"] > 0       # the template's cases are built on what was published
    rows = [json.loads(line) for f in (out / "_build" / "quarantine").glob("*.jsonl")
            for line in f.read_text().splitlines()]
    assert rows and all("planted" in r["reason"] for r in rows)
    assert {r["locator"].split("--")[0] for r in rows} == {"font_bold"}
    published = json.loads((out / "_build" / "manifest.json").read_text())["reconciliation"]["units"]
    assert published["atomic_case"]["quarantined"] == len([r for r in rows if r["unit"] == "atomic_case"])
    assert not any(p.name.startswith("font_bold--") for p in (out / "exports" / "cases").iterdir())
