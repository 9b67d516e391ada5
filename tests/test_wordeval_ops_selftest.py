"""The oracle self-test's untouched-state mutation really changes the document, also when it falls
back to page setup (issue 8, item 11: the fallback added 1440 EMU, about 2 twips, below the
20-twip tolerance, so 112 of 672 real documents showed no change)."""
from __future__ import annotations

import json

import pytest

from benchwright.evaluation.wordeval import evaluate_docx
from benchwright.wordeval.snapshot import extract_snapshot
from benchwright.wordeval import text as T
from benchwright.wordeval.cases import build_case
from benchwright.wordeval.docmodel import WordDoc
from benchwright.wordeval.selftest import mutate_untouched


def _every_paragraph_targeted(case: dict) -> dict:
    """The case's oracle with every body paragraph named as a target: no paragraph is left to
    mutate, so the mutation must fall back to page setup."""
    oracle = json.loads(case["oracle"])
    texts = [T.paragraph_read_text(p).strip() for p in WordDoc(case["reference_docx"]).body_paragraphs()]
    oracle["target"] = {**oracle["target"], "paragraphs": [t for t in texts if t]}
    return oracle


@pytest.mark.parametrize("unit,key", [("page_top_margin", "pgSz.h"), ("page_height", "pgMar.left")])
def test_page_setup_fallback_changes_an_untouched_measure_by_an_inch(unit, key):
    # a real document (python-docx's sct-section-props.docx, MIT); page_height targets pgSz.h
    # itself, so the fallback must pick another measure
    case = build_case(unit, 0, "fx-sct-section-props")
    oracle = _every_paragraph_targeted(case)
    ref = case["reference_docx"]
    mutated = mutate_untouched(ref, oracle)
    before, after = extract_snapshot(ref).sections[0]["props"], extract_snapshot(mutated).sections[0]["props"]
    assert after[key] - before[key] == 1440
    assert {k: v for k, v in after.items() if k != key} == {k: v for k, v in before.items() if k != key}
    rep = evaluate_docx(ref, mutated, oracle)
    assert rep["passed"] is False


def test_page_setup_fallback_on_a_document_without_sectpr():
    """A body without w:sectPr is valid (the application's default page setup applies); the fallback
    raised IndexError there (issue 22, item 18). It now states a page one inch taller than Letter."""
    from benchwright.formats.ooxml.ns import qn

    case = build_case("font_bold", 0, "fx-par-alignment")
    wd = WordDoc(case["reference_docx"])
    body = wd.doc.element.body
    body.remove(body.find(qn("w:sectPr")))
    ref = wd.to_bytes()
    assert len(WordDoc(ref).doc.sections) == 0
    oracle = _every_paragraph_targeted({**case, "reference_docx": ref})
    mutated = mutate_untouched(ref, oracle)
    assert extract_snapshot(mutated).sections[0]["props"]["pgSz.h"] == 15840 + 1440
    assert evaluate_docx(ref, ref, oracle)["passed"] is True
    assert evaluate_docx(ref, mutated, oracle)["passed"] is False
