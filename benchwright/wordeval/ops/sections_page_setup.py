"""Operations of the sections page setup units (``catalogue/units/06_sections_page_setup.yaml``)."""
from __future__ import annotations

from docx.shared import Twips

from benchwright.formats.ooxml import section as oxml
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
    if not oxml.break_section_after(p, sec._sectPr, params.get("type", "nextPage")):
        raise AnchorError(wd.locator, "paragraph already ends a section")


@operation("insert_break")
def insert_break(wd: WordDoc, target: dict, params: dict) -> None:
    """Range.InsertBreak(wdPageBreak / wdColumnBreak): a run holding the break at the end of the paragraph."""
    from docx.enum.text import WD_BREAK
    p = paragraphs_for(wd, target)[-1]
    # w:br's type: python-docx writes none for a text-wrapping break (the default)
    kind = {"page": WD_BREAK.PAGE, "column": WD_BREAK.COLUMN, "textWrapping": WD_BREAK.LINE}[params.get("type", "page")]
    wd.proxy(p).add_run().add_break(kind)


@operation("set_columns")
def set_columns(wd: WordDoc, target: dict, params: dict) -> None:
    for sp in sect_prs(wd, target):
        oxml.set_columns(sp, params["num"], params.get("space", 720), bool(params.get("separator")))


@operation("set_line_numbering")
def set_line_numbering(wd: WordDoc, target: dict, params: dict) -> None:
    for sp in sect_prs(wd, target):
        oxml.set_line_numbering(sp, params.get("count_by", 1), params.get("restart", "newPage"), params.get("distance"))


@operation("set_page_borders")
def set_page_borders(wd: WordDoc, target: dict, params: dict) -> None:
    for sp in sect_prs(wd, target):
        oxml.set_page_borders(sp, params.get("style", "single"), params.get("size", 4), params.get("color", "auto"))
