"""List labels are computed arithmetically and bounded; invalid numbering values refuse the
document by name (issue 11)."""
from __future__ import annotations

import io

import pytest

from benchwright.errors import RecordError
from benchwright.evaluation.wordeval import evaluate_docx
from benchwright.wordeval.snapshot import extract_snapshot, format_number, snapshot_dict
from tests.work import lines_executed

ORACLE = {"targets": [], "allowed_side_effects": []}


def _roman(n: int) -> str:
    """Reference: thousands as repeated m, then the classic subtractive numerals."""
    out = "m" * (n // 1000)
    n %= 1000
    for v, s in ((900, "cm"), (500, "d"), (400, "cd"), (100, "c"), (90, "xc"), (50, "l"), (40, "xl"), (10, "x"),
                 (9, "ix"), (5, "v"), (4, "iv"), (1, "i")):
        while n >= v:
            out, n = out + s, n - v
    return out


def test_labels_of_ordinary_values():
    assert [format_number(n, "lowerRoman") for n in (1, 4, 9, 14, 40, 90, 400, 1994, 3999)] == \
        ["i", "iv", "ix", "xiv", "xl", "xc", "cd", "mcmxciv", "mmmcmxcix"]
    assert all(format_number(n, "upperRoman") == _roman(n).upper() for n in range(1, 8001))
    assert [format_number(n, "lowerLetter") for n in (1, 26, 27, 52, 53)] == ["a", "z", "aa", "zz", "aaa"]
    assert format_number(28, "upperLetter") == "BB"
    assert format_number(7, "decimalZero") == "07" and format_number(12, "decimal") == "12"


@pytest.mark.parametrize("fmt", ["lowerLetter", "upperRoman"])
def test_huge_values_cost_constant_work_and_stay_exact(fmt):
    big = 2_000_000_000
    label = format_number(big, fmt)
    assert len(label) < 40, len(label)                        # was 76,923,077 letters / 2,000,000 m's
    assert lines_executed(format_number, big, fmt) < 200              # was a step per 1000 (roman)
    # distinct values keep distinct labels, equal ones equal labels
    assert len({format_number(big + k, fmt) for k in (0, 1, 26, 1000)}) == 4
    assert format_number(big, fmt) == label
    assert format_number(big, "decimal") == "2000000000"


def _list_doc(start: str, fmt: str = "lowerLetter", n_items: int = 3, override: str | None = None) -> bytes:
    """A .docx whose paragraphs are items of one list (numId 99) with the given w:start and format."""
    import docx
    from lxml import etree

    from benchwright.formats.ooxml.ns import qn
    from benchwright.formats.ooxml.package import Package

    d = docx.Document()
    for i in range(n_items):
        p = d.add_paragraph(f"Item {i}")
        numpr = etree.SubElement(p._p.get_or_add_pPr(), qn("w:numPr"))
        etree.SubElement(numpr, qn("w:ilvl")).set(qn("w:val"), "0")
        etree.SubElement(numpr, qn("w:numId")).set(qn("w:val"), "99")
    buf = io.BytesIO()
    d.save(buf)
    pkg = Package.from_bytes(buf.getvalue())
    root = pkg.xml("word/numbering.xml")
    w = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    root.insert(0, etree.fromstring(
        f'<w:abstractNum {w} w:abstractNumId="99"><w:lvl w:ilvl="0"><w:start w:val="{start}"/>'
        f'<w:numFmt w:val="{fmt}"/><w:lvlText w:val="%1)"/></w:lvl></w:abstractNum>'))
    ov = "" if override is None else \
        f'<w:lvlOverride w:ilvl="0"><w:startOverride w:val="{override}"/></w:lvlOverride>'
    root.append(etree.fromstring(f'<w:num {w} w:numId="99"><w:abstractNumId w:val="99"/>{ov}</w:num>'))
    return pkg.to_bytes()


@pytest.mark.parametrize("fmt", ["lowerLetter", "lowerRoman", "decimal"])
def test_a_huge_start_snapshots_and_evaluates(fmt):
    data = _list_doc("2000000000", fmt)
    snap = extract_snapshot(data)
    labels = [p.num["label"] for p in snap.stories["body"] if p.num]
    assert labels == [format_number(2_000_000_000 + k, fmt) + ")" for k in range(3)]
    assert max(len(x) for x in labels) < 40
    assert evaluate_docx(data, data, ORACLE)["passed"]
    # a different start is a different label: still detected
    other = _list_doc("2000000001", fmt)
    rep = evaluate_docx(data, other, ORACLE)
    diffs = [d["key"] for c in rep["checks"] if c["name"] == "preservation" for d in c["differences"]]
    assert not rep["passed"] and "body/P0/num.label" in diffs


@pytest.mark.parametrize("start,override", [("abc", None), ("1.5", None), ("", None), ("1", "x7")])
def test_an_invalid_start_refuses_the_document_by_name(start, override):
    data = _list_doc(start, override=override)
    with pytest.raises(RecordError) as exc:
        extract_snapshot(data)
    what = "w:startOverride" if override else "w:start"
    assert what in exc.value.reason and "not an integer" in exc.value.reason
    assert "numbering.xml" in exc.value.locator
    rep = evaluate_docx(_list_doc("1"), data, ORACLE)
    assert not rep["passed"] and what in rep["rejected"] and "TypeError" not in rep["rejected"]


def test_signed_and_padded_starts_are_integers():
    snap = extract_snapshot(_list_doc(" +3 ", "decimal"))
    assert [p.num["label"] for p in snap.stories["body"] if p.num] == ["3)", "4)", "5)"]
    snap = extract_snapshot(_list_doc("5", "decimal", override="-1"))
    assert [p.num["label"] for p in snap.stories["body"] if p.num] == ["-1)", "0)", "1)"]
    assert snapshot_dict(snap)["body/P2/num.label"] == "1)"
