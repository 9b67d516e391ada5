"""Operations of the headers footers units (``catalogue/units/07_headers_footers.yaml``)."""
from __future__ import annotations

import copy

from benchwright.formats.ooxml.accessors import set_locus
from benchwright.formats.ooxml.ns import qn
from benchwright.wordeval import text as T
from benchwright.wordeval.docmodel import WordDoc, make_run, set_paragraph_text
from benchwright.wordeval.ops.common import field_runs, header_footer, operation, scope_objects


def _story_paragraphs(root) -> list:
    """The paragraphs of a header or footer story outside tables, in order: its own and those in
    block content controls (a real footer may hold all its text in one, as Apache POI's
    Bug54849.docx does; python-docx's ``paragraphs`` sees only the direct ones)."""
    out = []
    for c in root:
        if c.tag == T.W_P:
            out.append(c)
        elif c.tag in (T.W_SDT, T.W_CUSTOMXML):
            content = c.find(T.W_SDTCONTENT) if c.tag == T.W_SDT else c
            if content is not None:
                out.extend(_story_paragraphs(content))
    return out


def _first_paragraph(hf):
    """The story's first paragraph outside tables (one is added to a story that has none)."""
    paras = _story_paragraphs(hf._element)
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
        for extra in _story_paragraphs(hf._element)[1:]:
            parent = extra.getparent()
            parent.remove(extra)
            if parent.tag == T.W_SDTCONTENT and not len(parent):     # a content control left empty
                sdt = parent.getparent()
                sdt.getparent().remove(sdt)


@operation("unlink_header")
def unlink_header(wd: WordDoc, target: dict, params: dict) -> None:
    """HeaderFooter.LinkToPrevious = False (Word copies the inherited content), then new text."""
    kind = params.get("kind", "header")
    sec = wd.section(target.get("section"))
    hf = header_footer(sec, kind, params.get("hf_type", "primary"))
    inherited = [copy.deepcopy(p) for p in hf._element.iter(qn("w:p"))] if hf.is_linked_to_previous else None
    hf.is_linked_to_previous = False
    if inherited:
        root = hf._element
        for c in list(root):
            root.remove(c)
        for p in inherited:
            root.append(p)
    if params.get("text") is not None:
        set_paragraph_text(_first_paragraph(hf), params["text"])


@operation("clear_header")
def clear_header(wd: WordDoc, target: dict, params: dict) -> None:
    sec = wd.section(target.get("section"))
    hf = header_footer(sec, params.get("kind", "header"), params.get("hf_type", "primary"))
    root = hf._element
    first = _first_paragraph(hf)
    for c in list(root):
        if c is not first:
            root.remove(c)
    if first.getparent() is not root:       # it was in a content control, now removed: the story keeps it
        root.append(first)
    for c in list(first):
        if c.tag != qn("w:pPr"):
            first.remove(c)


@operation("add_page_number")
def add_page_number(wd: WordDoc, target: dict, params: dict) -> None:
    """PageNumbers.Add / Fields.Add(PAGE [, NUMPAGES]) into the header or footer."""
    kind = params.get("kind", "footer")
    for _, sec in scope_objects(wd, "section", target):
        hf = header_footer(sec, kind, params.get("hf_type", "primary"))
        hf.is_linked_to_previous = False
        # a footer whose content is all in a table has no paragraph of its own: add one
        p = hf.paragraphs[0]._p if hf.paragraphs else hf.add_paragraph()._p
        for c in list(p):
            if c.tag != qn("w:pPr"):
                p.remove(c)
        if params.get("prefix"):
            p.append(make_run(params["prefix"]))
        for r in field_runs("PAGE", "1"):
            p.append(r)
        if params.get("of_total"):
            p.append(make_run(" of "))
            for r in field_runs("NUMPAGES", "1"):
                p.append(r)
        if params.get("alignment"):
            set_locus(p, "w:pPr/w:jc@w:val", "attr", params["alignment"])
