"""WordprocessingML styles markup python-docx's ``Styles`` / ``BaseStyle`` proxies do not reach: a
paragraph's style id, a style's name by id, and the references to a style from every story and from
the other styles (``w:pStyle``, ``w:rStyle``, ``w:basedOn``, ``w:next``), which Word removes with the
style. The XML stays here, as python-docx keeps its own in ``docx.oxml.styles``."""
from __future__ import annotations

from benchwright.formats.ooxml.ns import qn


def paragraph_style_id(p) -> str | None:
    """The style id paragraph ``p`` names (``w:pPr/w:pStyle``), or None."""
    ppr = p.find(qn("w:pPr"))
    ps = ppr.find(qn("w:pStyle")) if ppr is not None else None
    return None if ps is None else ps.get(qn("w:val"))


def style_element(styles_el, style_id: str):
    """The first ``w:style`` of the styles part with ``style_id``, or None."""
    for st in styles_el.findall(qn("w:style")):
        if st.get(qn("w:styleId")) == style_id:
            return st
    return None


def style_name(st) -> str:
    """A style's name (``w:name``)."""
    return st.find(qn("w:name")).get(qn("w:val"))


def remove_references(roots, style_id: str) -> None:
    """Every ``w:pStyle`` / ``w:rStyle`` naming ``style_id`` in ``roots`` (stories and the styles part)
    goes, then every ``w:basedOn`` / ``w:next`` naming it (each root in turn)."""
    for root in roots:
        for el in list(root.iter(qn("w:pStyle"), qn("w:rStyle"))):
            if el.get(qn("w:val")) == style_id and el.getparent() is not None:
                el.getparent().remove(el)
        for el in list(root.iter(qn("w:basedOn"), qn("w:next"))):
            if el.get(qn("w:val")) == style_id and el.getparent() is not None:
                el.getparent().remove(el)


__all__ = ["paragraph_style_id", "style_element", "style_name", "remove_references"]
