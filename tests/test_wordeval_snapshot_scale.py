"""Snapshot, alignment and gate work grows (near) linearly with the document (issue 8).

Work is counted, not timed: the number of Python lines executed (``sys.settrace``) is the same on
every run for the same input, so doubling the input must roughly double it (a quadratic step
quadruples it). Wall-clock numbers on a large document are in ``benchmarks/wordeval.py --large``.
"""
from __future__ import annotations


import pytest

from benchwright.benchmarks.wordeval import edit_every_paragraph, large_document, merge_first_column
from benchwright.formats.ooxml.gate import python_docx_reload
from benchwright.evaluation.wordeval import evaluate_docx
from benchwright.wordeval.snapshot import PAIR_WINDOW, align, extract_snapshot
from tests.work import lines_executed

ORACLE = {"targets": [], "allowed_side_effects": []}


def _growth(fn, small, large) -> float:
    fn(small)   # warm caches (styles, names) so both counts measure the same work
    return lines_executed(fn, large) / lines_executed(fn, small)


def test_table_snapshot_work_is_linear_in_rows():
    docs = {rows: large_document(n_paragraphs=2, n_rows=rows) for rows in (60, 240)}
    growth = _growth(lambda rows: extract_snapshot(docs[rows]), 60, 240)
    assert growth < 6, growth          # 4x the rows: ~4x the work (was ~13x: every row listed per paragraph)


def test_table_positions_are_right():
    snap = extract_snapshot(large_document(n_paragraphs=3, n_rows=40, n_cols=3))
    cells = [p for p in snap.stories["body"] if p.loc]
    assert len(cells) == 120
    assert [p.loc for p in cells[:4]] == ["cell(1,1)", "cell(1,2)", "cell(1,3)", "cell(2,1)"]
    assert cells[-1].loc == "cell(40,3)" and cells[-1].text.startswith("r39 c2 ")


def _edited(texts):
    return [t + "*" for t in texts]


def _texts(n):
    return [f"{i}. " + " ".join(["river survey station sample growth"[i % 7:], "northern report", str(i * 7919)])
            for i in range(n)]


@pytest.mark.parametrize("similarity", [None, "callable"])
def test_every_item_edited_pairs_in_order_with_bounded_work(similarity):
    ref = _texts(400)
    calls = []

    def counting(a, b):
        from benchwright.wordeval.snapshot.alignment import _ratio
        calls.append(1)
        return _ratio(a, b)

    m = align(ref, _edited(ref), counting if similarity else None)
    assert m == {j: j for j in range(400)}
    if similarity:
        assert len(calls) <= 400 * PAIR_WINDOW   # was every remaining item for each: ~80,000
    growth = _growth(lambda n: align(_texts(n), _edited(_texts(n)), counting if similarity else None), 200, 800)
    assert growth < 6, growth                    # 4x the items: ~4x the work (was ~16x)


def test_alternating_changes_anchor_with_linear_work():
    def pair(n):
        ref = _texts(n)
        out = [t + "*" if i % 2 else t for i, t in enumerate(ref)]   # every other item edited
        return ref, out

    ref, out = pair(300)
    assert align(ref, out) == {j: j for j in range(300)}
    growth = _growth(lambda n: align(*pair(n)), 200, 800)
    assert growth < 6, growth   # difflib's longest-block recursion took ~16x here


def test_alignment_pairs_by_content():
    ref = ["Intro", "", "Alpha paragraph text", "", "Beta paragraph text", "", "Gamma paragraph text"]
    # a deleted paragraph, an edited one, an inserted one; the empty paragraphs stay paired in order
    out = ["Intro", "", "", "Beta paragraph text!", "A brand new line of text", "", "Gamma paragraph text"]
    m = align(ref, out)
    assert m[0] == 0 and m[3] == 4 and m[6] == 6 and 4 not in m
    assert m[1] == 1 and m[2] == 3 and m[5] == 5
    # an edit far from any equal item still pairs with the most similar candidate, the nearest of equals
    assert align(["x one", "same text", "same text"], ["same text!"]) == {0: 1}
    # nothing similar: nothing paired
    assert align(["completely different"], ["zz"]) == {}


def test_large_document_evaluates_and_pairs_every_edited_paragraph():
    ref = large_document(n_paragraphs=120, n_rows=80)
    assert evaluate_docx(ref, ref, ORACLE)["passed"]
    rep = evaluate_docx(ref, edit_every_paragraph(ref), ORACLE)
    pres = [c for c in rep["checks"] if c["name"] == "preservation"][0]
    assert not rep["passed"] and rep["rejected"] is None
    keys = [d["key"] for d in pres["differences"]]
    # edited paragraphs are reported as text changes of their reference paragraph, not as extra ones
    assert keys and all("/X" not in k for k in keys), keys
    assert "body/P0/text" in keys


def _paragraphs_with(n: int, inner_xml) -> bytes:
    """n body paragraphs, each holding ``inner_xml`` (a str formatted with the paragraph's index, or
    a function of it) before its text."""
    import io

    import docx
    from lxml import etree

    d = docx.Document()
    w = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    for i in range(n):
        p = d.add_paragraph(f"Paragraph {i} text")
        inner = inner_xml(i) if callable(inner_xml) else inner_xml.format(i=i)
        for el in etree.fromstring(f"<x {w}>{inner}</x>"):
            p._p.insert(0, el)
    buf = io.BytesIO()
    d.save(buf)
    return buf.getvalue()


def test_open_bookmarks_cost_linear_work():
    # every paragraph opens a bookmark that never closes, and one bookmark spans the whole body
    docs = {n: _paragraphs_with(n, '<w:bookmarkStart w:id="{i}" w:name="open{i}"/>') for n in (50, 400)}
    growth = _growth(lambda n: extract_snapshot(docs[n]), 50, 400)
    assert growth < 9, growth   # 8x the paragraphs; each open bookmark's text grew by every later one: ~14x
    # covered text is still the text between start and end, across paragraphs
    spanning = _paragraphs_with(3, lambda i: {0: '<w:bookmarkStart w:id="90" w:name="all"/>',
                                              2: '<w:bookmarkEnd w:id="90"/>'}.get(i, ""))
    assert extract_snapshot(spanning).bookmarks["all"] == {"para": 0, "text": "Paragraph 0 text\nParagraph 1 text\n"}


def test_fields_flatten_with_linear_work():
    from benchwright.wordeval.snapshot import snapshot_dict
    snaps = {n: extract_snapshot(_paragraphs_with(n, '<w:fldSimple w:instr=" PAGE "><w:r><w:t>{i}</w:t></w:r>'
                                                     '</w:fldSimple>')) for n in (50, 400)}
    assert len(snaps[50].fields["body"]) == 50
    flat = snapshot_dict(snaps[50])
    assert flat["fields/body/F7/para"] == "body/P7" and flat["fields/body/F7/code"] == "PAGE"
    growth = _growth(lambda n: snapshot_dict(snaps[n]), 50, 400)
    assert growth < 9, growth   # 8x the fields; each looked its paragraph up in the whole story: ~11x


@pytest.mark.parametrize("exc", [TimeoutError, MemoryError])
def test_worker_limits_are_not_reported_as_unreadable(monkeypatch, exc):
    # the worker turns these into "timed out after ...s" / "exceeded ... MiB"; evaluate_docx used to
    # swallow them as "unreadable: TimeoutError", blaming the document for the evaluator's limit
    from benchwright.evaluation import wordeval as ev

    def limited(*args, **kwargs):
        raise exc("limit")

    monkeypatch.setattr(ev, "extract_snapshot", limited)
    with pytest.raises(exc):
        ev.evaluate_docx(b"ref", b"out", ORACLE)


def test_gate_walks_a_vertically_merged_column_with_linear_work():
    # python-docx's row.cells follows a merged cell up the table one row at a time (4.3 s for a
    # 300-row merge, 60 s to gate a real 6,577-row document); the gate walks each w:tc once
    docs = {rows: merge_first_column(large_document(n_paragraphs=2, n_rows=rows)) for rows in (60, 240)}
    assert python_docx_reload(docs[60]) == []
    growth = _growth(lambda rows: python_docx_reload(docs[rows]), 60, 240)
    assert growth < 6, growth      # 4x the rows: ~4x the work (was ~13x)


def test_gate_still_refuses_a_merge_python_docx_cannot_follow():
    import io

    import docx

    from benchwright.formats.ooxml.ns import qn

    d = docx.Document()
    t = d.add_table(rows=2, cols=2)
    # a continued merge in the top row: python-docx's row.cells raises, the gate reports it
    t._tbl.tr_lst[0].tc_lst[0].get_or_add_tcPr().append(t._tbl.makeelement(qn("w:vMerge"), {}))
    buf = io.BytesIO()
    d.save(buf)
    with pytest.raises(ValueError):
        [c for row in docx.Document(io.BytesIO(buf.getvalue())).tables[0].rows for c in row.cells]
    assert python_docx_reload(buf.getvalue()) == ["python-docx: ValueError: no tr above topmost tr in w:tbl"]
