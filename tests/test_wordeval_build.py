"""The WordEval Beam build: the run's shared tiny build (and a two-unit catalogue subset) through the real pipeline, gates and all."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchwright.cli import main as cli_main
from benchwright.pipelines.wordeval import WordEval
from tests.builds import build_dataset
from tests.quality_builds import tiny_build
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


LOAD = """
import json, sys, datasets
out = {}
for config in ("atomic", "compositional"):
    d = datasets.load_dataset(sys.argv[1], config, split="test")
    out[config] = {"rows": d.num_rows, "columns": d.column_names, "docx_is_zip": d[0]["input_docx"][:2] == b"PK"}
out["benchwright_imported"] = any(m.startswith("benchwright") for m in sys.modules)
print(json.dumps(out))
"""


def test_load_dataset_without_benchwright(built, tmp_path):
    # both configs in one clean interpreter (the contract tests load every config's rows the same way)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_CACHE": str(tmp_path / "cache"), "PYTHONPATH": ""}
    proc = subprocess.run([sys.executable, "-c", LOAD, str(built)], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    loaded = json.loads(proc.stdout.strip().splitlines()[-1])
    assert not loaded.pop("benchwright_imported")
    assert list(loaded) == ["atomic", "compositional"]
    for config, got in loaded.items():
        assert got["rows"] > 0 and got["docx_is_zip"], config
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
