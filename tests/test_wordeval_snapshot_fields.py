"""Paragraphs inside a multi-paragraph field result are seen by preservation: a deleted or reworded
bibliography / TOC entry fails (issue 9), so does a formatting change a reader sees there, a bold entry
or a right-aligned paragraph (issue 22), as on an ordinary paragraph; a refreshed field (new page
numbers, other run splitting) passes."""
from __future__ import annotations

import io

import pytest

from benchwright.evaluation.wordeval import evaluate_docx
from benchwright.wordeval.snapshot import extract_snapshot, snapshot_dict

ORACLE = {"targets": [], "allowed_side_effects": []}
W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'


def _r(text: str, bold: bool = False) -> str:
    rpr = "<w:rPr><w:b/></w:rPr>" if bold else ""
    return f'<w:r>{rpr}<w:t xml:space="preserve">{text}</w:t></w:r>'


def _fld(kind: str) -> str:
    return f'<w:r><w:fldChar w:fldCharType="{kind}"/></w:r>'


def _code(code: str) -> str:
    return f'<w:r><w:instrText xml:space="preserve"> {code} </w:instrText></w:r>'


def _toc_entry(text: str, page: str, bookmark: str, split: bool = False, bold: bool = False,
               bold_page: bool = False) -> str:
    runs = _r(text[:4], bold) + _r(text[4:], bold) if split else _r(text, bold)
    pageref = _code("PAGEREF " + bookmark + " \\h")
    return f"{runs}<w:r><w:tab/></w:r>{_fld('begin')}{pageref}{_fld('separate')}{_r(page, bold_page)}{_fld('end')}"


def _ppr(jc: str | None) -> str:
    return f'<w:pPr><w:jc w:val="{jc}"/></w:pPr>' if jc else ""


def _document(toc=(("Introduction", "3"), ("Methods", "5"), ("Results", "8")),
              bib=("Adams, D. (1979). The Hitchhiker's Guide. Pan Books.",
                   "Brown, A. (2001). Citations in Practice. 2nd ed.",
                   "Chen, L. (2015). Reference Managers Compared, 12-19."),
              bib_code="ADDIN ZOTERO_BIBL {\"uncited\":[]} CSL_BIBLIOGRAPHY", split: bool = False,
              sdt: bool = False, bold_bib: int | None = None, bold_toc: int | None = None,
              jc_bib: dict | None = None, bold_pages: bool = False) -> bytes:
    """Title, a three-entry TOC (PAGEREF page numbers), body text, a bibliography field whose
    result is one paragraph per entry, a closing paragraph. ``split``: each entry's text in two runs
    (as an update may write it); ``bold_bib`` / ``bold_toc``: that entry in bold; ``jc_bib``:
    {entry index: alignment}; ``bold_pages``: the TOC's page numbers in bold."""
    import docx
    from lxml import etree

    from benchwright.formats.ooxml.ns import qn
    from benchwright.formats.ooxml.package import Package

    paras = ["<w:p>" + _r("Report title") + "</w:p>"]
    for k, (text, page) in enumerate(toc):
        head = _fld("begin") + _code('TOC \\o "1-3" \\h') + _fld("separate") if k == 0 else ""
        tail = _fld("end") if k == len(toc) - 1 else ""
        paras.append("<w:p>" + head + _toc_entry(text, page, f"_Toc{k}", split, k == bold_toc, bold_pages) + tail + "</w:p>")
    paras += ["<w:p>" + _r("Introduction") + "</w:p>", "<w:p>" + _r("Body text.") + "</w:p>"]
    bib_paras = []
    for k, entry in enumerate(bib):
        head = _fld("begin") + _code(bib_code) + _fld("separate") if k == 0 else ""
        tail = _fld("end") if k == len(bib) - 1 else ""
        bold = k == bold_bib
        runs = _r(entry[:10], bold) + _r(entry[10:], bold) if split else _r(entry, bold)
        bib_paras.append(f"<w:p>{_ppr((jc_bib or {}).get(k))}{head}{runs}{tail}</w:p>")
    if sdt:   # Word's own bibliography sits in a building-block content control
        bib_paras = ['<w:sdt><w:sdtPr><w:docPartObj><w:docPartGallery w:val="Bibliographies"/></w:docPartObj>'
                     "</w:sdtPr><w:sdtContent>" + "".join(bib_paras) + "</w:sdtContent></w:sdt>"]
    paras += bib_paras + ["<w:p>" + _r("After the bibliography.") + "</w:p>"]
    d = docx.Document()
    buf = io.BytesIO()
    d.save(buf)
    pkg = Package.from_bytes(buf.getvalue())
    body = pkg.xml("word/document.xml").find(qn("w:body"))
    sect = body.find(qn("w:sectPr"))
    for el in list(body):
        if el is not sect:
            body.remove(el)
    for xml in paras:
        sect.addprevious(etree.fromstring(xml.replace("<w:p>", f"<w:p {W}>", 1) if xml.startswith("<w:p>")
                                          else xml.replace("<w:sdt>", f"<w:sdt {W}>", 1)))
    return pkg.to_bytes()


BIB = ("Adams, D. (1979). The Hitchhiker's Guide. Pan Books.",
       "Brown, A. (2001). Citations in Practice. 2nd ed.",
       "Chen, L. (2015). Reference Managers Compared, 12-19.")
CODES = {"citation manager": ("ADDIN ZOTERO_BIBL {\"uncited\":[]} CSL_BIBLIOGRAPHY", False),
         "Word": ("BIBLIOGRAPHY", True)}


def _preservation_keys(rep) -> list[str]:
    return [d["key"] for c in rep["checks"] if c["name"] == "preservation" for d in c["differences"]]


@pytest.mark.parametrize("kind", CODES)
def test_entries_are_recorded_as_displayed(kind):
    code, sdt = CODES[kind]
    snap = extract_snapshot(_document(bib_code=code, sdt=sdt))
    fields = {f["type"]: f for f in snap.fields["body"]}
    assert fields["TOC"]["entries"] == ["Introduction", "Methods", "Results"]   # page numbers left out
    assert fields[code.split()[0]]["entries"] == list(BIB)                        # page ranges kept: text
    assert [p.text for p in snap.stories["body"]][-1] == "After the bibliography."


@pytest.mark.parametrize("kind", CODES)
def test_a_deleted_or_reworded_bibliography_entry_fails_preservation(kind):
    code, sdt = CODES[kind]
    ref = _document(bib_code=code, sdt=sdt)
    assert evaluate_docx(ref, ref, ORACLE)["passed"]
    deleted = _document(bib=(BIB[0], BIB[2]), bib_code=code, sdt=sdt)
    rep = evaluate_docx(ref, deleted, ORACLE)
    assert not rep["passed"]
    assert any(k.endswith("/entries") for k in _preservation_keys(rep)), _preservation_keys(rep)
    reworded = _document(bib=(BIB[0], BIB[1].replace("2001", "2002"), BIB[2]), bib_code=code, sdt=sdt)
    assert not evaluate_docx(ref, reworded, ORACLE)["passed"]


def test_a_deleted_toc_entry_fails_preservation():
    ref = _document()
    rep = evaluate_docx(ref, _document(toc=(("Introduction", "3"), ("Results", "8"))), ORACLE)
    assert not rep["passed"] and any(k.endswith("/entries") for k in _preservation_keys(rep))


@pytest.mark.parametrize("kind", CODES)
def test_a_refreshed_field_passes(kind):
    code, sdt = CODES[kind]
    ref = _document(bib_code=code, sdt=sdt)
    # an update: every page number moved, the result's runs split differently
    refreshed = _document(toc=(("Introduction", "4"), ("Methods", "6"), ("Results", "11")), bib_code=code,
                          sdt=sdt, split=True)
    rep = evaluate_docx(ref, refreshed, ORACLE)
    assert rep["passed"], _preservation_keys(rep)
    # roman page numbers too
    roman = _document(toc=(("Introduction", "iii"), ("Methods", "v"), ("Results", "viii")), bib_code=code, sdt=sdt)
    assert evaluate_docx(ref, roman, ORACLE)["passed"]


@pytest.mark.parametrize("kind", CODES)
def test_formatting_inside_the_field_result_fails_preservation(kind):
    """The same edits fail on an entry as on an ordinary paragraph (issue 22: they passed)."""
    code, sdt = CODES[kind]
    ref = _document(bib_code=code, sdt=sdt)
    edits = {"bold bibliography entry": (dict(bold_bib=1), "/E1/chars.b"),
             "right-aligned last bibliography paragraph": (dict(jc_bib={2: "right"}), "/E2/para.jc"),
             "bold TOC entry": (dict(bold_toc=0), "/E0/chars.b"),
             "bold first bibliography entry": (dict(bold_bib=0), "/E0/chars.b")}
    for name, (edit, key) in edits.items():
        rep = evaluate_docx(ref, _document(bib_code=code, sdt=sdt, **edit), ORACLE)
        keys = _preservation_keys(rep)
        assert not rep["passed"] and any(k.endswith(key) for k in keys), (name, keys)
    # a page number in bold is part of what an update rewrites: not compared
    assert evaluate_docx(ref, _document(bib_code=code, sdt=sdt, bold_pages=True), ORACLE)["passed"]


def test_toc_entries_keep_their_own_numbers():
    snap = extract_snapshot(_document(toc=(("Chapter 2\tPart II", "7"), ("Appendix", "ix"))))
    flat = snapshot_dict(snap)
    toc = [k for k, v in flat.items() if k.endswith("/code") and v.startswith("TOC")][0]
    assert flat[toc.replace("/code", "/entries")] == ["Chapter 2\tPart II", "Appendix"]


def test_formatting_of_a_real_word_toc_entry_is_compared():
    """docx4j's toc.docx (a TOC Word wrote: hyperlinked entries, PAGEREF page numbers, TOC 1 style):
    a bold entry and a right-aligned last entry fail, an equivalent rewrite of its XML passes."""
    from benchwright.formats.ooxml.accessors import set_locus
    from benchwright.formats.ooxml.ns import qn
    from benchwright.wordeval.basedocs import base_document
    from benchwright.wordeval.docmodel import WordDoc
    from benchwright.wordeval.ops.tables_of_contents import _toc_field
    from benchwright.wordeval.selftest import xml_variant

    ref = base_document("d4j-toc")
    assert evaluate_docx(ref, xml_variant(ref), ORACLE)["passed"]

    def edited(edit) -> bytes:
        wd = WordDoc(ref)
        edit(_toc_field(wd).paragraphs)
        return wd.to_bytes()

    def bold_third(paras):
        for r in paras[2].iter(qn("w:r")):
            if r.find(qn("w:t")) is not None:
                set_locus(r, "w:rPr/w:b", "onoff", True)

    # the last entry ("Article 11"); the field ends in an empty paragraph after it
    for edit, key in ((bold_third, "/E2/chars.b"),
                      (lambda paras: set_locus(paras[-2], "w:pPr/w:jc@w:val", "attr", "right"), "/E10/para.jc")):
        rep = evaluate_docx(ref, edited(edit), ORACLE)
        assert not rep["passed"] and any(k.endswith(key) for k in _preservation_keys(rep)), _preservation_keys(rep)


def test_formatting_of_a_toc_libreoffice_wrote_is_compared():
    """A TOC as LibreOffice writes it (the toc_insert reference re-saved by LibreOffice, which
    rebuilds the field in its own markup): the re-save still passes the unit's oracle, and a bold
    entry in LibreOffice's TOC fails preservation against it."""
    import json

    from benchwright.formats.ooxml import libreoffice
    from benchwright.formats.ooxml.accessors import set_locus
    from benchwright.formats.ooxml.ns import qn
    from benchwright.wordeval.cases import build_case
    from benchwright.wordeval.docmodel import WordDoc
    from benchwright.wordeval.ops.tables_of_contents import _toc_field
    from benchwright.wordeval.selftest import LIBREOFFICE_LOSSY

    if not libreoffice.available():
        pytest.skip("LibreOffice (soffice) is not installed")
    case = build_case("toc_insert", 0, "report")
    resaved = libreoffice.resave_docx({"toc": case["reference_docx"]})["toc"]
    assert resaved is not None and resaved != case["reference_docx"]
    oracle = json.loads(case["oracle"])
    rep = evaluate_docx(case["reference_docx"], resaved, oracle, extra_allowed=LIBREOFFICE_LOSSY)
    assert rep["passed"], _preservation_keys(rep)
    wd = WordDoc(resaved)
    entry = [p for p in _toc_field(wd).paragraphs if any(t.text for t in p.iter(qn("w:t")))][1]
    for r in entry.iter(qn("w:r")):
        if r.find(qn("w:t")) is not None:
            set_locus(r, "w:rPr/w:b", "onoff", True)
    rep = evaluate_docx(resaved, wd.to_bytes(), ORACLE)
    assert not rep["passed"] and any(k.endswith("/E1/chars.b") for k in _preservation_keys(rep)), \
        _preservation_keys(rep)
