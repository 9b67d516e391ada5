"""WordprocessingML paragraph markup (``w:p``, ``w:pPr``) for what python-docx's ``Paragraph`` and
``ParagraphFormat`` proxies do not do: the paragraph operations (``wordeval/ops/paragraph_formatting.py``)
use those proxies and these functions, and the XML stays here, as python-docx keeps its own in
``docx.oxml.text`` (``CT_P``, ``CT_PPr``)."""
from __future__ import annotations

import copy

from benchwright.formats.ooxml.accessors import set_locus
from benchwright.formats.ooxml.elements import border_el, w_el
from benchwright.formats.ooxml.ns import qn
from benchwright.formats.ooxml.schema_order import get_or_add, insert_child

# What a paragraph added after another does not take from its properties: the section break it ends,
# a tracked change of them, its paragraph mark's run properties and its list membership.
NOT_INHERITED = tuple(qn(t) for t in ("w:sectPr", "w:pPrChange", "w:rPr", "w:numPr"))


def ends_section(p) -> bool:
    """Whether paragraph ``p`` ends a section (its properties hold a ``w:sectPr``)."""
    ppr = p.find(qn("w:pPr"))
    return ppr is not None and ppr.find(qn("w:sectPr")) is not None


def add_paragraph_after(p, run, style_id: str | None = None):
    """A new paragraph holding ``run`` right after ``p``: with the paragraph style ``style_id`` alone,
    or else with ``p``'s paragraph properties less what it does not pass on (``NOT_INHERITED``)."""
    new = w_el("w:p")
    ppr = p.find(qn("w:pPr"))
    if style_id:
        new_ppr = w_el("w:pPr")
        new_ppr.append(w_el("w:pStyle", val=style_id))
        new.append(new_ppr)
    elif ppr is not None:
        new_ppr = copy.deepcopy(ppr)
        for c in list(new_ppr):
            if c.tag in NOT_INHERITED:
                new_ppr.remove(c)
        if len(new_ppr):
            new.append(new_ppr)
    new.append(run)
    p.addnext(new)
    return new


def remove_paragraph(p) -> None:
    """Take paragraph ``p`` out of its story."""
    p.getparent().remove(p)


def set_line_spacing(p, line: int, rule: str) -> None:
    """``w:pPr/w:spacing``'s line (twips, or 240ths of a line with rule "auto") and lineRule."""
    set_locus(p, "w:pPr/w:spacing@w:line", "int", line, also={"w:lineRule": rule})


def set_borders(p, sides, style: str, size: int, color: str) -> None:
    """Replace the ``sides`` (top, left, bottom, right, between, bar) of ``p``'s ``w:pBdr``, in schema order."""
    pbdr = get_or_add(get_or_add(p, "w:pPr"), "w:pBdr")
    for side in sides:
        old = pbdr.find(qn("w:" + side))
        if old is not None:
            pbdr.remove(old)
        insert_child(pbdr, border_el("w:" + side, style, size, color))


__all__ = ["NOT_INHERITED", "ends_section", "add_paragraph_after", "remove_paragraph", "set_line_spacing",
           "set_borders"]
