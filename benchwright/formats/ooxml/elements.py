"""New WordprocessingML elements, made as python-docx makes its own (``docx.oxml.parser.OxmlElement``),
so an element added to a document serialises as one python-docx added."""
from __future__ import annotations

from lxml import etree

from benchwright.formats.ooxml.ns import qn


def w_el(tag: str, **attrs) -> etree._Element:
    """New WordprocessingML element: ``w_el("w:ind", left="720")`` (attributes in the w namespace)."""
    from docx.oxml.parser import OxmlElement
    el = OxmlElement(tag)
    for k, v in attrs.items():
        if v is None:
            continue
        el.set(qn(k) if ":" in k else qn("w:" + k), str(v))
    return el


def border_el(tag: str, style: str, size: int, color: str, space: int = 1):
    """A border edge (``w:top``, ``w:left`` ... of a ``w:pBdr``, ``w:pgBorders`` or ``w:tblBorders``):
    line style, width in eighths of a point, space in points, colour."""
    return w_el(tag, val=style, sz=size, space=space, color=color)





def detach(el) -> None:
    """Take ``el`` out of its parent (a paragraph, table, run, mark ... deleted)."""
    el.getparent().remove(el)


def unwrap(el) -> None:
    """Replace ``el`` by its children, in place (a hyperlink, insertion or simple field dissolved)."""
    parent = el.getparent()
    idx = parent.index(el)
    for i, c in enumerate(list(el)):
        parent.insert(idx + i, c)
    parent.remove(el)
__all__ = ["w_el", "border_el", "detach", "unwrap"]
