"""A table of contents in WordprocessingML: its entry paragraphs (a "TOC N" style, the right-aligned
dot-leader tab of the page number) and the replacement of a field whose runs span paragraphs (a TOC)
as Word replaces the field's range. WordEval's table-of-contents operations use these, and the XML
stays here, as python-docx keeps its own in ``docx.oxml``."""
from __future__ import annotations

import copy

from benchwright.formats.ooxml.elements import w_el
from benchwright.formats.ooxml.fields import FieldSpanError
from benchwright.formats.ooxml.ns import qn
from benchwright.formats.ooxml.schema_order import get_or_add, insert_child

_RANGE_MARKS = {qn("w:bookmarkStart"): qn("w:bookmarkEnd"), qn("w:commentRangeStart"): qn("w:commentRangeEnd"),
                qn("w:permStart"): qn("w:permEnd")}
_RANGE_MARKS.update({v: k for k, v in list(_RANGE_MARKS.items())})


def entry_paragraph(style_id: str, page_tab: bool):
    """An empty TOC entry paragraph in style ``style_id``; with ``page_tab``, the right-aligned, dot-leader
    tab for the page number sits on it, as Word writes it."""
    p = w_el("w:p")
    ppr = w_el("w:pPr")
    ppr.append(w_el("w:pStyle", val=style_id))
    if page_tab:
        tabs = w_el("w:tabs")               # after w:pStyle in CT_PPr order
        tabs.append(w_el("w:tab", val="right", leader="dot", pos=9350))
        ppr.append(tabs)
    p.append(ppr)
    return p


def _top_child(p, el):
    while el.getparent() is not p:
        el = el.getparent()
    return el


def field_end(paragraphs: list, begin):
    """The ``end`` fldChar of the complex field beginning at ``begin`` in ``paragraphs`` (it may span them);
    FieldSpanError when it has none."""
    depth, on = 0, False
    for p in paragraphs:
        for fc in p.iter(qn("w:fldChar")):
            on = on or fc is begin
            if not on:
                continue
            t = fc.get(qn("w:fldCharType"))
            depth += 1 if t == "begin" else -1 if t == "end" else 0
            if depth == 0:
                return fc
    raise FieldSpanError("field has no end")


def _remove_empty_sdt(box) -> None:
    sdt = box.getparent()
    sdt.getparent().remove(sdt)


def replace_field_paragraphs(paras: list, begin, new_paras: list) -> None:
    """Replace a multi-paragraph field (a TOC: its paragraphs ``paras``, its begin ``fldChar``) by
    ``new_paras`` as Word replaces the field's range: what precedes the field in its first paragraph and
    follows it in its last stays; the last paragraph's mark stays with its section break (deleting it
    would merge two sections); a bookmark / comment / permission range with one end inside the field
    keeps that end, moved to where the field was."""
    first, last = paras[0], paras[-1]
    begin_top, end_top = _top_child(first, begin), _top_child(last, field_end(paras, begin))
    before = [c for c in begin_top.itersiblings(preceding=True) if c.tag != qn("w:pPr")][::-1]
    after = list(end_top.itersiblings())
    keep = {id(c) for c in before + after}
    removed = [c for p in paras for c in p if c.tag != qn("w:pPr") and id(c) not in keep]
    inside = {(m.tag, m.get(qn("w:id"))) for c in removed for m in c.iter(*_RANGE_MARKS)}
    marks = [m for c in removed for m in c.iter(*_RANGE_MARKS)
             if (_RANGE_MARKS[m.tag], m.get(qn("w:id"))) not in inside]
    last_ppr = last.find(qn("w:pPr"))
    sect = last_ppr.find(qn("w:sectPr")) if last_ppr is not None else None
    if not new_paras and (before or after or marks or sect is not None):
        new_paras = [w_el("w:p")]       # the surviving paragraph mark
        if last_ppr is not None:
            new_paras[0].append(copy.deepcopy(last_ppr))
    elif new_paras and sect is not None:
        insert_child(get_or_add(new_paras[-1], "w:pPr"), copy.deepcopy(sect))
    if new_paras:
        head, tail = new_paras[0], new_paras[-1]
        ppr = head.find(qn("w:pPr"))
        pos = head.index(ppr) + 1 if ppr is not None else 0
        for c in before + marks:
            head.insert(pos, c)
            pos += 1
        for c in after:
            tail.append(c)
    container = first.getparent()
    for q in new_paras:
        first.addprevious(q)
    for p in paras:
        parent = p.getparent()
        parent.remove(p)
        if parent.tag == qn("w:sdtContent") and not len(parent) and parent is not container:
            _remove_empty_sdt(parent)
    if container.tag == qn("w:sdtContent") and not len(container):
        _remove_empty_sdt(container)         # Word's "Table of Contents" content control, now empty


__all__ = ["entry_paragraph", "field_end", "replace_field_paragraphs"]
