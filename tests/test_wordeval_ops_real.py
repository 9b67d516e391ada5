"""Operations on real documents (python-docx's own test files, MIT) and on documents built here
the way Word writes them: every edit keeps the document valid and whole (issue 8, item 10)."""
from __future__ import annotations

import io

import docx
import pytest

from benchwright.formats.ooxml import gate_docx
from benchwright.formats.ooxml.checks import check_package
from benchwright.formats.ooxml.elements import w_el
from benchwright.formats.ooxml.ns import RT, qn
from benchwright.formats.ooxml.package import Package
from benchwright.formats.ooxml.schema_order import get_or_add
from benchwright.wordeval import ops
from benchwright.wordeval import text as T
from benchwright.wordeval.basedocs import _fix_template
from benchwright.wordeval.cases import CaseBuildError, NotApplicable, build_case, iter_cases
from benchwright.wordeval.catalogue import load_catalogue
from benchwright.wordeval.docmodel import AnchorError, PreconditionError, WordDoc
from benchwright.wordeval.ops.tables import cell_set_text
from benchwright.wordeval.ops.tables_of_contents import _toc_field

REAL_TABLE_FILES = ("tbl-2x2-table.docx", "tbl-cell-access.docx", "tbl-cell-props.docx", "tbl-col-props.docx",
                    "tbl-having-applied-style.docx", "tbl-having-tables.docx", "tbl-on-off-props.docx",
                    "tbl-props.docx", "blk-paras-and-tables.docx")


@pytest.fixture(scope="module")
def real(fixtures_dir):
    folder = fixtures_dir / "docx" / "python-docx"
    return lambda name: (folder / name).read_bytes()


def _new_document():
    d = docx.Document()
    _fix_template(d)            # python-docx's template lacks w:zoom@w:percent, as in the base documents
    return d


def _save(document) -> bytes:
    buf = io.BytesIO()
    document.save(buf)
    return buf.getvalue()


def _sections(data: bytes) -> int:
    return len(docx.Document(io.BytesIO(data)).sections)


# --------------------------------------------------------------------------- TOC


def _toc_document() -> bytes:
    """Five sections; a TOC whose last paragraph carries the first section break (Word's usual
    "TOC on its own page" layout) and a bookmark that starts before the TOC and ends in it."""
    d = _new_document()
    d.add_paragraph("Contents page", style="Title")
    for i in range(1, 6):
        d.add_paragraph(f"Chapter {i}", style="Heading 1")
        d.add_paragraph(f"Body text of chapter {i}.")
        if i < 5:
            d.add_section()
    wd = WordDoc(_save(d))
    ops.apply(wd, "insert_toc", {"paragraph": "Chapter 1"}, {})
    toc = _toc_field(wd)
    title, last = wd.paragraph("Contents page"), toc.paragraphs[-1]
    # the TOC's last paragraph ends section 1: move the first section break onto it (python-docx
    # put it on an empty paragraph of its own)
    carrier = next(p for p in wd.body.iter(qn("w:p")) if p.find(qn("w:pPr") + "/" + qn("w:sectPr")) is not None)
    get_or_add(last, "w:pPr").append(carrier.find(qn("w:pPr") + "/" + qn("w:sectPr")))
    carrier.getparent().remove(carrier)
    title.append(w_el("w:bookmarkStart", id=7, name="front"))
    last.append(w_el("w:bookmarkEnd", id=7))
    data = wd.to_bytes()
    assert gate_docx(data) == [] and _sections(data) == 5
    return data


@pytest.mark.parametrize("op", ["delete_toc", "update_toc"])
def test_toc_delete_and_update_keep_section_breaks_and_bookmarks(op):
    data = _toc_document()
    wd = WordDoc(data)
    ops.apply(wd, op, {}, {})
    out = wd.to_bytes()
    assert _sections(out) == 5                      # the break the TOC's last paragraph carried stays
    assert check_package(Package.from_bytes(out)) == []   # bookmark 7 still has its end
    assert gate_docx(out) == []
    wd = WordDoc(out)
    texts = [T.paragraph_read_text(p) for p in wd.body_paragraphs()]
    entries = [t for t in texts if t.startswith("Chapter ") and "\t" in t]
    assert entries == ([] if op == "delete_toc" else [f"Chapter {i}\t1" for i in range(1, 6)])
    assert wd.body.find(".//" + qn("w:bookmarkEnd")) is not None


# --------------------------------------------------------------------------- page margins


def test_page_margin_on_a_section_without_pgmar_writes_a_complete_pgmar(real):
    wd = WordDoc(real("sct-section-props.docx"))
    sect = wd.doc.sections[1]._sectPr
    sect.remove(sect.find(qn("w:pgMar")))
    spec = load_catalogue().properties["PageSetup.TopMargin"]
    ops.apply(wd, "set_property", {"section": "Section 2 paragraph."},
              {"spec": {**spec, "com": "PageSetup.TopMargin"}, "value": 2160})
    out = wd.to_bytes()
    assert gate_docx(out) == []                     # CT_PageMar: all seven attributes are required
    pgmar = WordDoc(out).doc.sections[1]._sectPr.find(qn("w:pgMar"))
    got = {k.split("}")[1]: v for k, v in pgmar.attrib.items()}
    assert got == {"top": "2160", "right": "1800", "bottom": "1440", "left": "1800", "header": "720",
                   "footer": "720", "gutter": "0"}


# --------------------------------------------------------------------------- pictures


def test_picture_add_takes_a_drawing_id_no_story_uses():
    d = _new_document()
    d.add_paragraph("Body paragraph with a note.")
    wd = WordDoc(_save(d))
    ops.apply(wd, "add_note", {"paragraph": "Body paragraph"}, {"kind": "endnote", "text": "See the figure."})
    # an endnote holding a picture whose drawing id is 1 (what python-docx picks for the body)
    ops.apply(wd, "add_picture", {"paragraph": "Body paragraph"},
              {"image": "python-icon.jpeg", "width": 914400, "descr": "moved"})
    run = next(r for r in wd.body.iter(qn("w:r")) if r.find(qn("w:drawing")) is not None)
    p = run.getparent()
    note_part = wd._related("endnotes")
    image_part = wd.part.related_parts[run.find(".//" + qn("a:blip")).get(qn("r:embed"))]
    run.find(".//" + qn("a:blip")).set(qn("r:embed"), note_part.relate_to(image_part, RT.IMAGE))
    note = [n for n in note_part.element.findall(qn("w:endnote")) if n.get(qn("w:type")) is None][0]
    note.find(qn("w:p")).append(run)
    p.getparent().remove(p)
    assert [dp.get("id") for dp in note.iter(qn("wp:docPr"))] == ["1"]
    data = wd.to_bytes()
    assert gate_docx(data) == []
    wd = WordDoc(data)
    ops.apply(wd, "add_picture", {"paragraph": "Body paragraph"},
              {"image": "monty-truth.png", "width": 914400, "descr": "new"})
    out = wd.to_bytes()
    assert gate_docx(out) == []                     # no "duplicate drawing id"
    ids = [dp.get("id") for root in WordDoc(out)._all_story_roots() for dp in root.iter(qn("wp:docPr"))]
    assert sorted(ids) == ["1", "2"]


# --------------------------------------------------------------------------- tables


def _real_tables(real):
    """Every top-level table of the real files, its first cell relabelled "T<k>" so an anchor
    can name it (most of these tables start with an empty cell)."""
    for name in REAL_TABLE_FILES:
        wd = WordDoc(real(name), name)
        tables = [t for t in wd.body.iter(qn("w:tbl")) if not any(a.tag == qn("w:tbl") for a in t.iterancestors())]
        for k, tbl in enumerate(tables):
            cell_set_text(tbl.find(".//" + qn("w:tc")), f"T{k}")
        data = wd.to_bytes()
        for k, tbl in enumerate(tables):
            yield name, data, f"T{k}", len(tbl.find(qn("w:tblGrid"))), len(tbl.findall(qn("w:tr")))


def test_rows_and_columns_are_added_to_real_tables_of_any_width(real):
    tables = list(_real_tables(real))
    assert len(tables) >= 20 and {cols for *_, cols, _ in tables} == {1, 2, 3, 4}
    for name, data, label, cols, rows in tables:
        where = f"{name}:{label}"
        wd = WordDoc(data, name)
        target = {"table": {"first_cell": label}}
        values = [f"v{i}" for i in range(cols)]
        ops.apply(wd, "add_row", target, {"cells": values + [""] * (4 - cols)})
        ops.apply(wd, "add_column", target, {"cells": ["Notes", "", "", ""], "width": 1440})
        out = wd.to_bytes()
        # no new problem (two of these files already have tables without the required w:tblPr)
        assert set(gate_docx(out)) <= set(gate_docx(data)), where
        tbl = WordDoc(out).table(target["table"])
        trs = tbl.findall(qn("w:tr"))
        assert len(trs) == rows + 1 and len(tbl.find(qn("w:tblGrid"))) == cols + 1, where
        new_row = [T.paragraph_read_text(tc.find(qn("w:p"))) for tc in T.row_cells(trs[-1])]
        assert new_row == values + ["Notes" if rows == 0 else ""], where
        assert T.paragraph_read_text(list(T.row_cells(trs[0]))[-1].find(qn("w:p"))) == "Notes", where
        # more values than the row has cells: the operation's declared precondition, not an IndexError
        with pytest.raises(PreconditionError):
            ops.apply(WordDoc(data, name), "add_row", target, {"cells": values + ["extra"]})


def test_table_convert_to_text_writes_line_breaks_not_newlines():
    d = _new_document()
    d.add_paragraph("Before the table.")
    table = d.add_table(rows=2, cols=2)
    for r in range(2):
        for c in range(2):
            table.cell(r, c).text = f"r{r}c{c}"
    run = table.cell(1, 1).paragraphs[0].add_run()
    run.add_break()
    run.add_text("second line")
    wd = WordDoc(_save(d))
    ops.apply(wd, "convert_table_to_text", {"table": {"first_cell": "r0c0"}}, {"separator": "\t"})
    out = wd.to_bytes()
    assert gate_docx(out) == []                     # no literal newline inside w:t
    p = WordDoc(out).paragraph("r1c0")
    assert T.paragraph_text(p, "read") == "r1c0\tr1c1\nsecond line"
    assert p.find(".//" + qn("w:br")) is not None


# --------------------------------------------------------------------------- built-in styles


@pytest.mark.parametrize("style,kind", [("Heading 1", "paragraph"), ("Quote", "paragraph"), ("Caption", "paragraph"),
                                        ("TOC 1", "paragraph"), ("Table Grid", "table")])
def test_a_builtin_style_the_document_lacks_is_added_as_word_does(real, style, kind):
    data = real("par-alignment.docx")
    wd = WordDoc(data)
    assert wd.style_id(style) is None
    if kind == "table":
        ops.apply(wd, "add_table", {"paragraph": "Left aligned."}, {"cells": [["a", "b"]], "style": style})
    else:
        ops.apply(wd, "apply_paragraph_style", {"paragraph": "Left aligned."}, {"style": style})
    out = wd.to_bytes()
    assert gate_docx(out) == []
    wd = WordDoc(out)
    sid = wd.style_id(style, kind)
    assert sid is not None
    el = next(s for s in wd.styles_el.findall(qn("w:style")) if s.get(qn("w:styleId")) == sid)
    # every style it refers to (based on, next, linked character style) exists
    ids = {s.get(qn("w:styleId")) for s in wd.styles_el.findall(qn("w:style"))}
    for ref in ("w:basedOn", "w:next", "w:link"):
        if el.find(qn(ref)) is not None:
            assert el.find(qn(ref)).get(qn("w:val")) in ids
    # the behaviour comes from the document's own latent-style entry, as Word writes it
    latent = wd.styles_el.find(qn("w:latentStyles"))
    entry = next((x for x in latent.findall(qn("w:lsdException"))
                  if x.get(qn("w:name")).lower() == el.find(qn("w:name")).get(qn("w:val")).lower()), None)
    if entry is not None and entry.get(qn("w:uiPriority")) is not None:
        assert el.find(qn("w:uiPriority")).get(qn("w:val")) == entry.get(qn("w:uiPriority"))
    if kind == "paragraph":
        assert wd.paragraph("Left aligned.").find(qn("w:pPr") + "/" + qn("w:pStyle")).get(qn("w:val")) == sid


def test_a_missing_custom_style_is_a_declared_precondition(real):
    wd = WordDoc(real("par-alignment.docx"))
    with pytest.raises(AnchorError):
        ops.apply(wd, "apply_paragraph_style", {"paragraph": "Left aligned."}, {"style": "Our House Style"})
    # a built-in list style would need its numbering definition too: declared, not attempted
    with pytest.raises(PreconditionError, match="numbering"):
        ops.apply(wd, "apply_paragraph_style", {"paragraph": "Left aligned."}, {"style": "List Bullet"})


# --------------------------------------------------------------------------- build_case


def test_an_operation_bug_is_a_build_error_not_a_skipped_unit(monkeypatch):
    cat = load_catalogue()

    def broken(wd, target, params):
        raise IndexError("tuple index out of range")

    monkeypatch.setitem(ops.OPERATIONS, "add_row", broken)
    with pytest.raises(CaseBuildError) as exc:
        build_case("table_rows_add", 0, "report", cat)
    assert not isinstance(exc.value, NotApplicable)
    assert "'table_rows_add'" in exc.value.reason and "'report'" in exc.value.reason
    assert "IndexError" in exc.value.reason
    errors: list = []
    assert list(iter_cases(cat, seeds=(0,), base_docs=["report"], units=["table_rows_add"], errors=errors)) == []
    assert [e["unit_id"] for e in errors] == ["table_rows_add"] and "IndexError" in errors[0]["reason"]


def test_a_declared_precondition_still_makes_a_unit_not_applicable():
    # memo's table has 3 columns; table_rows_add gives 4 values
    with pytest.raises(NotApplicable) as exc:
        build_case("table_rows_add", 0, "memo")
    assert "PreconditionError" in exc.value.reason and "3 cells" in exc.value.reason

