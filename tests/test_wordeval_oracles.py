"""Oracle self-tests for every unit and every composition template, plus evaluator behaviour."""
from __future__ import annotations

import json

import pytest

from benchwright.evaluation.wordeval import evaluate_docx, summarize
from benchwright.wordeval.oracle import resolve_anchor
from benchwright.wordeval.snapshot import align, extract_snapshot
from benchwright.wordeval.cases import build_case
from benchwright.wordeval.catalogue import load_catalogue
from benchwright.wordeval.selftest import char_style_alternative, mutate_untouched, xml_variant


# Parametrised from the catalogue (cheap YAML); the cases are built when the first test runs
# (the session's ``wordeval_cases``), never at collection time. Every unit and template must
# yield a case.
CATALOGUE = load_catalogue()
UNIT_IDS = sorted(CATALOGUE.units)
TEMPLATE_IDS = sorted(CATALOGUE.templates)


def _first_case(cases: dict, unit_id: str) -> dict:
    case = next((c for c in cases["atomic"] if c["unit_id"] == unit_id), None)
    assert case is not None, f"unit {unit_id} built no case"
    return case


def _failed(report):
    return [(c["name"], c.get("reason"), c.get("differences", [])[:3]) for c in report["checks"] if not c["passed"]]


@pytest.mark.parametrize("unit_id", UNIT_IDS)
def test_unit_oracle(unit_id, wordeval_cases):
    case = _first_case(wordeval_cases, unit_id)
    oracle = json.loads(case["oracle"])
    ref = case["reference_docx"]
    # 1. the reference passes
    rep = evaluate_docx(ref, ref, oracle)
    assert rep["passed"], _failed(rep)
    # 2. the unedited input fails, on a target check (not only on preservation)
    rep = evaluate_docx(ref, case["input_docx"], oracle)
    assert not rep["passed"]
    assert any(not c["passed"] for c in rep["checks"] if c["name"].startswith("target")), _failed(rep)
    # 3. mutating an untouched property fails
    rep = evaluate_docx(ref, mutate_untouched(ref, oracle), oracle)
    assert not rep["passed"]
    # 4. equivalent alternatives pass: equivalent XML (split runs, explicit on/off values) ...
    rep = evaluate_docx(ref, xml_variant(ref), oracle)
    assert rep["passed"], _failed(rep)
    # ... and, where the unit asks for an effective character value, the value through a style
    alt = char_style_alternative(case)
    if alt is not None:
        rep = evaluate_docx(ref, alt, oracle)
        assert rep["passed"], _failed(rep)


def test_char_style_alternative_exists_for_effective_units(wordeval_cases):
    with_alt = [u for u in CATALOGUE.units.values() if "char_style" in u["alternatives"]]
    assert len(with_alt) >= 6
    for u in with_alt:
        assert char_style_alternative(_first_case(wordeval_cases, u["id"])) is not None


@pytest.mark.parametrize("template_id", TEMPLATE_IDS)
def test_composition_oracle(template_id, wordeval_cases):
    case = next((c for c in wordeval_cases["compositional"] if c["template"] == template_id), None)
    assert case is not None, f"template {template_id} built no case"
    oracle = json.loads(case["oracle"])
    ref = case["reference_docx"]
    assert evaluate_docx(ref, ref, oracle)["passed"]
    assert not evaluate_docx(ref, case["input_docx"], oracle)["passed"]
    assert not evaluate_docx(ref, mutate_untouched(ref, oracle), oracle)["passed"]
    assert evaluate_docx(ref, xml_variant(ref), oracle)["passed"]
    # doing only the first step of the composition is not enough
    first = build_case(case["atomic_case_ids"][0].split("--")[0], case["seed"], case["base_document"])
    if first["input_docx"] == case["input_docx"]:
        assert not evaluate_docx(ref, first["reference_docx"], oracle)["passed"]


def test_alignment_is_by_content_not_position():
    ref = ["a", "b", "c", "d"]
    out = ["a", "x", "b", "c", "d"]          # an inserted paragraph
    m = align(ref, out)
    assert m == {0: 0, 2: 1, 3: 2, 4: 3}      # zip() would pair "x" with "b" and drop "d"
    m2 = align(ref, ["a", "c", "d"])          # a deleted paragraph
    assert m2 == {0: 0, 1: 2, 2: 3}
    m3 = align(["The quick brown fox", "jumps"], ["The quick brown fox!", "jumps"])
    assert m3 == {0: 0, 1: 1}                 # an edited paragraph still pairs with its reference


def test_extra_paragraph_is_reported_not_shifted():
    from benchwright.wordeval import ops
    from benchwright.wordeval.docmodel import WordDoc
    case = build_case("font_bold", 0, "report")
    oracle = json.loads(case["oracle"])
    wd = WordDoc(case["reference_docx"])
    ops.apply(wd, "insert_paragraph_after", {"paragraph": "Northern sites reported"}, {"text": "An extra paragraph."})
    rep = evaluate_docx(case["reference_docx"], wd.to_bytes(), oracle)
    assert not rep["passed"]
    assert all(c["passed"] for c in rep["checks"] if c["name"].startswith("target"))
    pres = [c for c in rep["checks"] if c["name"] == "preservation"][0]
    keys = [d["key"] for d in pres["differences"]]
    assert any("/X" in k for k in keys)
    # only the inserted paragraph and the counts differ: later paragraphs are not shifted
    assert all("/X" in k or k.endswith(("/count", "/paragraphs")) for k in keys), keys


def test_effective_values_follow_the_style_cascade():
    # bold through a character style on a bold paragraph style toggles off (Word's toggle rule)
    case = build_case("char_style_apply", 0, "report")
    snap = extract_snapshot(case["reference_docx"])
    heading = [p for p in snap.stories["body"] if p.style == "heading 1"][0]
    assert heading.chars["b"][0][2] is True and heading.chars["sz"][0][2] == 28   # from the style
    assert heading.para["outlineLvl"] == 0 and heading.para["keepNext"] is True
    body = [p for p in snap.stories["body"] if p.text.startswith("This report")][0]
    assert body.chars["font"][0][2] == "Cambria"                                   # theme minor font


def test_revision_aware_text():
    case = build_case("tracked_delete", 0, "report")
    oracle = json.loads(case["oracle"])
    snap = extract_snapshot(case["reference_docx"])
    phrase = oracle["target"]["phrase"]
    para = [p for p in snap.stories["body"] if p.read.startswith(oracle["target"]["paragraph"])][0]
    assert phrase not in para.text                       # deleted text is not displayed
    revs = snap.revisions["body"]
    assert revs[0]["type"] == "del" and revs[0]["text"] == phrase


def test_anchor_resolution():
    case = build_case("table_alignment", 0, "report")
    snap = extract_snapshot(case["reference_docx"])
    assert resolve_anchor(snap, {"table": {"caption": "Table 1: Quarterly"}}) == ["tables/T0"]
    assert resolve_anchor(snap, {"paragraph": "Revenue grew"}) == ["body/P3"]
    assert resolve_anchor(snap, {"style": "Heading 1"}) == ["styles/heading 1"]
    assert resolve_anchor(snap, {"paragraph": "No such paragraph"}) == []


def test_summary_groups_reports():
    reports = [
        {"case_id": "a", "passed": True, "subsystem": "tables", "object_properties": ["Table.Style"],
         "checks": [{"name": "readable", "passed": True}, {"name": "preservation", "passed": True}]},
        {"case_id": "b", "passed": False, "subsystem": "tables+styles", "object_properties": ["Table.Style"],
         "checks": [{"name": "readable", "passed": True}, {"name": "target:style", "passed": False}]},
    ]
    s = summarize(reports)
    assert s["per_subsystem"]["tables"] == {"passed": 1, "total": 2, "rate": 0.5}
    assert s["per_subsystem"]["styles"]["total"] == 1
    assert s["per_object_property"]["Table.Style"]["passed"] == 1
    assert s["per_check"]["target"] == {"passed": 0, "total": 1, "rate": 0.0}
    assert s["per_case"]["b"]["failed_checks"] == ["target:style"]


def test_the_cards_shared_snapshots_score_as_fresh_extractions(wordeval_cases):
    # the card scores its own agents' outputs with snapshots kept by content, and replay's output (the reference's
    # bytes) with the reference's own snapshot object: a comparison that changed a snapshot it was given would
    # change every later score against that reference. Each report must equal one made from fresh extractions
    from benchwright.evaluation.wordeval import OutputSnapshots
    from benchwright.wordeval import oracle as oracle_module

    snapshots = OutputSnapshots()
    for unit_id in UNIT_IDS[::6]:   # 45 of the 267 units, spread over the catalogue
        case = _first_case(wordeval_cases, unit_id)
        oracle, ref = json.loads(case["oracle"]), case["reference_docx"]
        outputs = (ref, case["input_docx"], mutate_untouched(ref, oracle), ref, xml_variant(ref))
        fresh = []
        for out in outputs:
            oracle_module._REF_CACHE.clear()
            fresh.append(evaluate_docx(ref, out, oracle))
        oracle_module._REF_CACHE.clear()   # from here one snapshot of the reference serves every comparison
        shared = [evaluate_docx(ref, out, oracle, snapshots=snapshots) for out in outputs]
        for report in fresh + shared:
            report.pop("elapsed_ms")
        assert shared == fresh, unit_id
