"""WordprocessingML section properties (``w:sectPr``) python-docx's ``Section`` proxy does not model:
a section break inside the body, text columns, line numbering, page borders, and the complete page
margins Word assumes for a section without ``w:pgMar``. WordEval's section operations use the proxy
and these, and the XML stays here, as python-docx keeps its own in ``docx.oxml.section``."""
from __future__ import annotations

import copy

from benchwright.formats.ooxml.elements import border_el, w_el
from benchwright.formats.ooxml.ns import qn
from benchwright.formats.ooxml.schema_order import get_or_add, insert_child

# The page margins Word (and LibreOffice's import) use for a section without w:pgMar.
WORD_DEFAULT_PGMAR = (("top", 1440), ("right", 1800), ("bottom", 1440), ("left", 1800), ("header", 720),
                      ("footer", 720), ("gutter", 0))


def ensure_page_margins(sect_pr) -> None:
    """A section without ``w:pgMar`` gets all seven margins (every attribute of CT_PageMar is
    required; python-docx would write only the one it sets) at the values Word used for it."""
    if sect_pr.find(qn("w:pgMar")) is None:
        insert_child(sect_pr, w_el("w:pgMar", **dict(WORD_DEFAULT_PGMAR)))


def break_section_after(p, later, break_type: str) -> bool:
    """Range.InsertBreak(wdSectionBreak...) at the end of paragraph ``p``, in the section whose properties
    are ``later``: ``p`` gets a copy of them (ending the earlier section) and the section after the break
    starts as ``break_type`` says. False, and no break, when ``p`` already ends a section."""
    earlier = copy.deepcopy(later)
    ppr = get_or_add(p, "w:pPr")
    if ppr.find(qn("w:sectPr")) is not None:
        return False
    insert_child(ppr, earlier)
    typ = get_or_add(later, "w:type")
    typ.set(qn("w:val"), break_type)
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
    return True


def set_columns(sect_pr, num: int, space: int, separator: bool) -> None:
    """PageSetup.TextColumns: ``num`` columns ``space`` twips apart, with a line between them."""
    cols = get_or_add(sect_pr, "w:cols")
    cols.set(qn("w:num"), str(num))
    cols.set(qn("w:space"), str(space))
    if separator:
        cols.set(qn("w:sep"), "1")


def set_line_numbering(sect_pr, count_by: int, restart: str, distance=None) -> None:
    """PageSetup.LineNumbering: every ``count_by`` lines, restarting per ``restart``, ``distance`` twips
    from the text."""
    ln = get_or_add(sect_pr, "w:lnNumType")
    ln.set(qn("w:countBy"), str(count_by))
    ln.set(qn("w:restart"), restart)
    if distance:
        ln.set(qn("w:distance"), str(distance))


def set_page_borders(sect_pr, style: str, size: int, color: str) -> None:
    """Section.Borders: the four page borders (measured from the page edge), replacing any."""
    old = sect_pr.find(qn("w:pgBorders"))
    if old is not None:
        sect_pr.remove(old)
    pb = insert_child(sect_pr, w_el("w:pgBorders", offsetFrom="page"))
    for side in ("top", "left", "bottom", "right"):
        pb.append(border_el("w:" + side, style, size, color, 24))


__all__ = ["WORD_DEFAULT_PGMAR", "ensure_page_margins", "break_section_after", "set_columns", "set_line_numbering",
           "set_page_borders"]
