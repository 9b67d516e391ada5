"""The new WordEval areas on real OOXML and a real client: text boxes and drawn shapes, comment
replies and resolved comments, tracked moves, cell splitting. Each operation writes the structure
Word writes, LibreOffice reads it back, and the oracle fails an output that looks similar but is
not the edit (a wrong colour, an unlinked reply, a delete + insert instead of a move, a merged
instead of a split cell)."""
from __future__ import annotations

import io
import json
import zipfile

import pytest

from benchwright.evaluation.wordeval import evaluate_docx
from benchwright.formats.ooxml import libreoffice
from benchwright.formats.ooxml.ns import NS, qn
from benchwright.wordeval import ops
from benchwright.wordeval.cases import build_case
from benchwright.wordeval.docmodel import WordDoc


def _xml(data: bytes, part: str = "word/document.xml") -> str:
    return zipfile.ZipFile(io.BytesIO(data)).read(part).decode("utf-8")


def _odt(data: bytes) -> str:
    """content.xml + styles.xml of LibreOffice's conversion of ``data`` to ODT (what LibreOffice read)."""
    if not libreoffice.available():
        pytest.skip("LibreOffice is not installed")
    out, message = libreoffice.convert_many({"doc": data}, "odt")["doc"]
    assert out is not None, message
    zf = zipfile.ZipFile(io.BytesIO(out))
    return zf.read("content.xml").decode("utf-8") + zf.read("styles.xml").decode("utf-8")


def test_text_box_is_a_wordprocessing_shape_libreoffice_reads():
    case = build_case("textbox_add", 0, "d4j-toc")
    xml = _xml(case["reference_docx"])
    assert 'mc:Choice Requires="wps"' in xml and 'txBox="1"' in xml and "<w:txbxContent>" in xml
    texts = ("Key figure: 12% growth", "Note: figures are provisional", "See the appendix")
    wanted = [t for t in texts if t in case["instruction"]]
    assert len(wanted) == 1 and wanted[0] in xml
    odt = _odt(case["reference_docx"])
    assert "draw:custom-shape" in odt and wanted[0] in odt


def test_shape_fill_oracle_fails_another_colour():
    case = build_case("shape_fill_color", 0, "d4j-toc")
    oracle, ref = json.loads(case["oracle"]), case["reference_docx"]
    assert evaluate_docx(ref, ref, oracle)["passed"]
    wd = WordDoc(case["input_docx"])
    ops.apply(wd, "set_shape_fill", {"image": {"descr": "Panel"}}, {"color": "00FF00"})
    assert not evaluate_docx(ref, wd.to_bytes(), oracle)["passed"]
    # LibreOffice shows the reference's fill colour
    fill = [c for c in ("FFC000", "5B9BD5", "C00000") if f'<a:srgbClr val="{c}"/>' in _xml(ref)]
    assert len(fill) == 1 and f'draw:fill-color="#{fill[0].lower()}"' in _odt(ref)


def test_shape_in_a_real_document_is_found_by_its_text():
    case = build_case("shape_fill_real", 0, "d4j-wps-shape")
    assert "the shape that contains the text \"Funky chicken\"" in case["instruction"]
    assert '<a:srgbClr val="' in _xml(case["reference_docx"])


def test_comment_reply_is_linked_to_its_parent():
    from benchwright.wordeval.snapshot import extract_snapshot

    case = build_case("comment_reply", 0, "d4j-toc")
    ref, oracle = case["reference_docx"], json.loads(case["oracle"])
    assert "w15:paraIdParent" in _xml(ref, "word/commentsExtended.xml")
    comments = _xml(ref, "word/comments.xml")
    assert comments.count("<w:comment ") == 2 and 'mc:Ignorable="w14"' in comments
    assert evaluate_docx(ref, ref, oracle)["passed"]
    snap = extract_snapshot(ref)
    reply = snap.comments[1]
    assert reply["parent"] == "comment/C0" and reply["anchor"] == snap.comments[0]["anchor"]
    # a second top-level comment with the reply's text on the same phrase is not a reply
    parent = extract_snapshot(case["input_docx"]).comments[0]
    para = extract_snapshot(case["input_docx"]).stories["body"][parent["para"]].text
    wd = WordDoc(case["input_docx"])
    ops.apply(wd, "add_comment", {"paragraph": para[:25], "phrase": parent["anchor"]}, {"text": reply["text"]})
    assert not evaluate_docx(ref, wd.to_bytes(), oracle)["passed"]


def test_resolved_comment_is_done_and_reopening_clears_it():
    done = build_case("comment_resolve", 0, "d4j-toc")
    assert 'w15:done="1"' in _xml(done["reference_docx"], "word/commentsExtended.xml")
    reopen = build_case("comment_reopen", 0, "d4j-toc")
    assert 'w15:done="1"' in _xml(reopen["input_docx"], "word/commentsExtended.xml")
    assert 'w15:done="0"' in _xml(reopen["reference_docx"], "word/commentsExtended.xml")
    assert not evaluate_docx(done["reference_docx"], done["input_docx"], json.loads(done["oracle"]))["passed"]


def test_tracked_move_is_not_a_delete_and_insert():
    import re

    from benchwright.wordeval import text as T

    case = build_case("tracked_move_down", 0, "d4j-toc")
    ref, oracle = case["reference_docx"], json.loads(case["oracle"])
    xml = _xml(ref)
    names = set(re.findall(r'<w:moveFromRangeStart [^>]*w:name="([^"]+)"', xml))
    assert names and names == set(re.findall(r'<w:moveToRangeStart [^>]*w:name="([^"]+)"', xml))
    assert evaluate_docx(ref, ref, oracle)["passed"]
    # the same visible result through a tracked deletion plus a tracked insertion fails the oracle
    wd = WordDoc(case["input_docx"])
    para = oracle["target"]["paragraph"]
    p = ops.paragraphs_for(wd, {"paragraph": para})[0]
    full, following = T.paragraph_read_text(p).strip(), T.paragraph_read_text(p.getnext()).strip()
    ops.apply(wd, "tracked_delete", {"paragraph": para, "phrase": full}, {})
    ops.apply(wd, "tracked_insert_paragraph", {"paragraph": following}, {"text": full})
    assert not evaluate_docx(ref, wd.to_bytes(), oracle)["passed"]
    # LibreOffice reads the move as tracked changes
    assert "text:changed-region" in _odt(ref)


def test_cell_split_keeps_the_table_width_and_layout():
    import docx
    case = build_case("cell_split", 0, "report")
    before = docx.Document(io.BytesIO(case["input_docx"])).tables[0]
    after = docx.Document(io.BytesIO(case["reference_docx"])).tables[0]
    n = int(case["instruction"].split(" into ")[1].split()[0]) if " into " in case["instruction"] else 2
    grid = lambda t: [int(g.get(qn("w:w"))) for g in t._tbl.tblGrid.findall(qn("w:gridCol"))]   # noqa: E731
    assert sum(grid(after)) == sum(grid(before)) and len(grid(after)) == len(grid(before)) + n - 1
    rows_b = [len(r._tr.findall(qn("w:tc"))) for r in before.rows]
    rows_a = [len(r._tr.findall(qn("w:tc"))) for r in after.rows]
    assert rows_a[1] == rows_b[1] + n - 1 and rows_a[0] == rows_b[0] and rows_a[2:] == rows_b[2:]
    # merging two cells instead (same column count change in one row) is not the split
    wd = WordDoc(case["input_docx"])
    oracle = json.loads(case["oracle"])
    ops.apply(wd, "add_column", {"table": oracle["target"]["table"]}, {"width": 720, "cells": ["", "", "", ""]})
    assert not evaluate_docx(case["reference_docx"], wd.to_bytes(), oracle)["passed"]


def test_new_parts_and_namespaces_are_declared():
    case = build_case("comment_reply_real", 0, "d4j-invoice")
    ct = _xml(case["reference_docx"], "[Content_Types].xml")
    assert "commentsExtended+xml" in ct
    rels = _xml(case["reference_docx"], "word/_rels/document.xml.rels")
    assert "relationships/commentsExtended" in rels
    assert NS["w14"] in _xml(case["reference_docx"], "word/comments.xml")
