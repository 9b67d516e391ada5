"""Operations of the headers footers units (``catalogue/units/07_headers_footers.yaml``)."""
from __future__ import annotations

from benchwright.formats.ooxml import story as oxml
from benchwright.formats.ooxml.accessors import set_locus
from benchwright.formats.ooxml.run import append_runs, remove_content
from benchwright.wordeval.docmodel import WordDoc, make_run, set_paragraph_text
from benchwright.wordeval.ops.common import field_runs, header_footer, operation, scope_objects


def _first_paragraph(hf):
    """The story's first paragraph outside tables (one is added to a story that has none)."""
    paras = oxml.story_paragraphs(hf._element)
    return paras[0] if paras else hf.add_paragraph()._p


@operation("set_header_text")
def set_header_text(wd: WordDoc, target: dict, params: dict) -> None:
    kind = params.get("kind", "header")
    hf_type = params.get("hf_type", "primary")
    for _, sec in scope_objects(wd, "section", target):
        if hf_type == "first":
            sec.different_first_page_header_footer = True
        if hf_type == "even":
            wd.doc.settings.odd_and_even_pages_header_footer = True
        hf = header_footer(sec, kind, hf_type)
        hf.is_linked_to_previous = False
        p = _first_paragraph(hf)
        set_paragraph_text(p, params["text"])
        if params.get("alignment"):
            set_locus(p, "w:pPr/w:jc@w:val", "attr", params["alignment"])
        for extra in oxml.story_paragraphs(hf._element)[1:]:
            oxml.remove_paragraph(extra)


@operation("unlink_header")
def unlink_header(wd: WordDoc, target: dict, params: dict) -> None:
    """HeaderFooter.LinkToPrevious = False (Word copies the inherited content), then new text."""
    kind = params.get("kind", "header")
    sec = wd.section(target.get("section"))
    hf = header_footer(sec, kind, params.get("hf_type", "primary"))
    inherited = oxml.copied_paragraphs(hf._element) if hf.is_linked_to_previous else None
    hf.is_linked_to_previous = False
    if inherited:
        oxml.replace_content(hf._element, inherited)
    if params.get("text") is not None:
        set_paragraph_text(_first_paragraph(hf), params["text"])


@operation("clear_header")
def clear_header(wd: WordDoc, target: dict, params: dict) -> None:
    sec = wd.section(target.get("section"))
    hf = header_footer(sec, params.get("kind", "header"), params.get("hf_type", "primary"))
    oxml.clear_to(hf._element, _first_paragraph(hf))


@operation("add_page_number")
def add_page_number(wd: WordDoc, target: dict, params: dict) -> None:
    """PageNumbers.Add / Fields.Add(PAGE [, NUMPAGES]) into the header or footer."""
    kind = params.get("kind", "footer")
    for _, sec in scope_objects(wd, "section", target):
        hf = header_footer(sec, kind, params.get("hf_type", "primary"))
        hf.is_linked_to_previous = False
        # a footer whose content is all in a table has no paragraph of its own: add one
        p = hf.paragraphs[0]._p if hf.paragraphs else hf.add_paragraph()._p
        remove_content(p)
        if params.get("prefix"):
            append_runs(p, [make_run(params["prefix"])])
        append_runs(p, field_runs("PAGE", "1"))
        if params.get("of_total"):
            append_runs(p, [make_run(" of ")] + field_runs("NUMPAGES", "1"))
        if params.get("alignment"):
            set_locus(p, "w:pPr/w:jc@w:val", "attr", params["alignment"])
