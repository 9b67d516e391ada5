"""WordEval at the release's scale: compositional cases and templates, COM objects, the missing
areas covered, real documents carrying at least 70% of the cases, the plan saying why a unit is
not planned on a base document, the shipped real documents (source, licence, sha256, gates) and
the card's coverage tables."""
from __future__ import annotations

import hashlib
import re
from collections import Counter
from pathlib import Path

import pytest

from benchwright.wordeval.basedocs import BASEDOC_DIR, base_document, basedocs_spec
from benchwright.wordeval.catalogue import load_catalogue


@pytest.fixture(scope="module")
def built(wordeval_cases):
    return wordeval_cases


def _real(name: str) -> bool:
    return "file" in basedocs_spec()[name]


def test_compositional_scale_and_links(built):
    atomic_ids = {c["case_id"] for c in built["atomic"]}
    comps = built["compositional"]
    assert built["errors"] == []
    assert len(comps) >= 96
    assert len({c["template"] for c in comps}) >= 27
    cat = load_catalogue()
    for c in comps:
        steps = [s["unit"] for s in cat.templates[c["template"]]["steps"]]
        # linked to one published atomic case of each of its units
        assert len(c["atomic_case_ids"]) == len(steps), c["case_id"]
        assert set(c["atomic_case_ids"]) <= atomic_ids, c["case_id"]
        assert [a.split("--")[0] for a in c["atomic_case_ids"]] == steps, c["case_id"]


def test_com_objects_and_missing_areas(built):
    atomic = built["atomic"]
    assert len({c["com_object"] for c in atomic}) >= 65
    objects = {c["com_object"] for c in atomic}
    assert {"TextFrame", "FillFormat", "LineFormat", "ShadowFormat", "GlowFormat", "SoftEdgeFormat", "Cells",
            "TabStop"} <= objects
    commands = {c["command"] for c in atomic}
    # text boxes and drawn shapes, comment replies, tracked moves, cell splitting
    assert {"Shapes.AddTextbox", "Shapes.AddShape", "Comment.Replies.Add", "Comment.Done",
            "Range.Relocate(wdRelocateDown) [TrackRevisions]", "Cell.Split", "Cells.Split"} <= commands


def test_real_documents_carry_seventy_percent_of_the_cases(built):
    cases = built["atomic"] + built["compositional"]
    real = sum(_real(c["base_document"]) for c in cases)
    assert real / len(cases) >= 0.70, (real, len(cases))
    # the compositions too, not only the atomic cases
    comps = built["compositional"]
    assert sum(_real(c["base_document"]) for c in comps) / len(comps) >= 0.70
    # and the new real documents are used, not only python-docx's fixtures
    bases = Counter(c["base_document"] for c in cases)
    assert len([b for b in bases if b.startswith(("d4j-", "poi-"))]) >= 12


def test_the_plan_says_why_a_unit_is_not_planned(built):
    not_planned = built["not_planned"]
    assert not_planned and all(r["reason"] for r in not_planned)
    planned = {(c["unit_id"], c["base_document"], c["seed"]) for c in built["atomic"]}
    for r in not_planned:
        if "unit_id" in r:
            assert (r["unit_id"], r["base_document"], r["seed"]) not in planned
    reasons = [r["reason"] for r in not_planned]
    # a role the document lacks, an operation's precondition, an edit with no effect, a seed duplicate
    assert any("has no role 'table'" in x for x in reasons)
    assert any(x.startswith("PreconditionError") or x.startswith("AnchorError") for x in reasons)
    assert any(x.startswith("the same input and reference as seed") for x in reasons)
    # a table unit asking for a cell the real table does not have is not planned there, with the reason
    mine = [r for r in not_planned if r.get("unit_id") == "cell_merge" and r["base_document"] == "d4j-invoice"]
    assert mine and all("no cell 3" in r["reason"] for r in mine)


_README = BASEDOC_DIR / "README.md"


def _readme_rows() -> dict[str, dict]:
    rows = {}
    for line in _README.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 6 and cells[0].endswith(".docx"):
            rows[cells[0]] = dict(zip(("file", "repo", "path", "commit", "licence", "sha256"), cells))
    return rows


def test_every_real_document_is_recorded_with_source_and_licence():
    rows = _readme_rows()
    shipped = sorted(p.name for p in BASEDOC_DIR.glob("*.docx"))
    assert sorted(rows) == shipped
    for name, row in rows.items():
        assert hashlib.sha256((BASEDOC_DIR / name).read_bytes()).hexdigest() == row["sha256"], name
        assert re.fullmatch(r"[0-9a-f]{40}.*", row["commit"]), name
        if row["licence"].startswith("Apache-2.0"):
            assert (BASEDOC_DIR / "LICENSE-apache-2.0").is_file()
            notice = "NOTICE-apache-poi" if row["repo"] == "apache/poi" else "NOTICE-docx4j"
            assert notice in row["licence"] and (BASEDOC_DIR / notice).is_file()
        else:
            assert row["licence"].startswith("MIT") and (BASEDOC_DIR / "LICENSE-python-docx").is_file()
    for name, spec in basedocs_spec().items():
        if "file" in spec:
            assert spec["file"] in rows, name
            if "source" in spec:   # the catalogue names the same source as the README
                assert spec["source"]["repo"] == rows[spec["file"]]["repo"]
                assert spec["source"]["path"] == rows[spec["file"]]["path"]
                assert spec["source"]["commit"] == rows[spec["file"]]["commit"]


def test_real_documents_pass_the_gates_and_open_in_libreoffice():
    from benchwright.formats.ooxml import libreoffice
    from benchwright.formats.ooxml.gate import gate_docx

    docs = {name: base_document(name) for name, spec in basedocs_spec().items() if "file" in spec}
    assert len(docs) >= 23
    for name, data in docs.items():
        assert gate_docx(data, name) == [], name
    if not libreoffice.available():
        pytest.skip("LibreOffice is not installed")
    assert {k: v for k, v in libreoffice.libreoffice_gate(docs).items() if v} == {}


def test_card_coverage_tables(built, tmp_path):
    """The card's tables from a written atomic/compositional pair of Parquet files."""
    import datasets

    from benchwright.cards.wordeval import card_statistics
    from benchwright.schemas.wordeval import ATOMIC, COMPOSITIONAL

    for config, rows, features in (("atomic", built["atomic"], ATOMIC),
                                   ("compositional", built["compositional"], COMPOSITIONAL)):
        (tmp_path / config).mkdir()
        slim = [{k: r[k] for k in features} | {"input_docx": b"", "reference_docx": b""} for r in rows]
        path = tmp_path / config / "test-00000-of-00001.parquet"
        datasets.Dataset.from_list(slim, features=features).to_parquet(path)
    stats = card_statistics(tmp_path)
    assert stats["totals"]["com_objects"] >= 65 and stats["totals"]["templates"] >= 27
    assert stats["real_documents"]["all"]["share"] >= 0.70
    assert "| TextFrame |" in stats["com_object_table"]
    n_pairs = len({p for c in built["atomic"] for p in c["properties"]})
    assert stats["pair_table"].count("\n") == n_pairs + 1     # header, rule, one row per pair
    assert "| TextFrame.MarginLeft |" in stats["pair_table"]
    assert Path(stats["figures"]["coverage"]).suffix in (".png", ".svg")
