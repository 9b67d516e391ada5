"""Operations of the sections page setup units (``catalogue/units/06_sections_page_setup.yaml``)."""
from __future__ import annotations

import copy

from docx.shared import Twips

from benchwright.formats.ooxml.elements import border_el, w_el
from benchwright.formats.ooxml.ns import qn
from benchwright.formats.ooxml.schema_order import get_or_add, insert_child
from benchwright.wordeval.docmodel import AnchorError, WordDoc
from benchwright.wordeval.ops.common import operation, paragraphs_for, scope_objects, sect_prs


@operation("set_orientation")
def set_orientation(wd: WordDoc, target: dict, params: dict) -> None:
    from docx.enum.section import WD_ORIENT
    for _, sec in scope_objects(wd, "section", target):
        want = WD_ORIENT.LANDSCAPE if params["orientation"] == "landscape" else WD_ORIENT.PORTRAIT
        if sec.orientation != want:
            w, h = sec.page_width, sec.page_height
            sec.orientation = want
            sec.page_width, sec.page_height = h, w


PAPER_SIZES = {"A4": (11906, 16838), "Letter": (12240, 15840), "Legal": (12240, 20160), "A5": (8391, 11906)}


@operation("set_paper_size")
def set_paper_size(wd: WordDoc, target: dict, params: dict) -> None:
    from docx.enum.section import WD_ORIENT
    for _, sec in scope_objects(wd, "section", target):
        w, h = PAPER_SIZES[params["paper"]] if params.get("paper") else (params["width"], params["height"])
        if sec.orientation == WD_ORIENT.LANDSCAPE:
            w, h = h, w
        sec.page_width, sec.page_height = Twips(w), Twips(h)


@operation("insert_section_break")
def insert_section_break(wd: WordDoc, target: dict, params: dict) -> None:
    """Range.InsertBreak(wdSectionBreak...) at the end of the target paragraph: the paragraph gets
    a copy of its section's properties (ending the earlier section) and the section after the
    break starts as requested."""
    p = paragraphs_for(wd, target)[-1]
    idx = wd.section_index(target["paragraph"])
    sec = wd.doc.sections[idx]
    later = sec._sectPr
    earlier = copy.deepcopy(later)
    ppr = get_or_add(p, "w:pPr")
    old = ppr.find(qn("w:sectPr"))
    if old is not None:
        raise AnchorError(wd.locator, "paragraph already ends a section")
    insert_child(ppr, earlier)
    typ = get_or_add(later, "w:type")
    typ.set(qn("w:val"), params.get("type", "nextPage"))
    # the new section must hold a paragraph: when the break follows the section's last paragraph,
    # Word starts the new section with an empty paragraph
    nxt = p.getnext()
    while nxt is not None and nxt.tag not in (qn("w:p"), qn("w:tbl"), qn("w:sectPr")):
        nxt = nxt.getnext()
    if nxt is None or nxt.tag == qn("w:sectPr"):
        empty = w_el("w:p")
        style = ppr.find(qn("w:pStyle"))
        if style is not None:
            new_ppr = w_el("w:pPr")
            new_ppr.append(copy.deepcopy(style))
            empty.append(new_ppr)
        p.addnext(empty)


@operation("insert_break")
def insert_break(wd: WordDoc, target: dict, params: dict) -> None:
    p = paragraphs_for(wd, target)[-1]
    r = w_el("w:r")
    r.append(w_el("w:br", type=params.get("type", "page")))
    p.append(r)


@operation("set_columns")
def set_columns(wd: WordDoc, target: dict, params: dict) -> None:
    for sp in sect_prs(wd, target):
        cols = get_or_add(sp, "w:cols")
        cols.set(qn("w:num"), str(params["num"]))
        cols.set(qn("w:space"), str(params.get("space", 720)))
        if params.get("separator"):
            cols.set(qn("w:sep"), "1")


@operation("set_line_numbering")
def set_line_numbering(wd: WordDoc, target: dict, params: dict) -> None:
    for sp in sect_prs(wd, target):
        ln = get_or_add(sp, "w:lnNumType")
        ln.set(qn("w:countBy"), str(params.get("count_by", 1)))
        ln.set(qn("w:restart"), params.get("restart", "newPage"))
        if params.get("distance"):
            ln.set(qn("w:distance"), str(params["distance"]))


@operation("set_page_borders")
def set_page_borders(wd: WordDoc, target: dict, params: dict) -> None:
    for sp in sect_prs(wd, target):
        old = sp.find(qn("w:pgBorders"))
        if old is not None:
            sp.remove(old)
        pb = insert_child(sp, w_el("w:pgBorders", offsetFrom="page"))
        for side in ("top", "left", "bottom", "right"):
            pb.append(border_el("w:" + side, params.get("style", "single"), params.get("size", 4),
                              params.get("color", "auto"), 24))
