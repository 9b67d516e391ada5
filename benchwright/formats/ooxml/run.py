"""WordprocessingML run markup (``w:r``, ``w:rPr``, ``w:t``): new runs, a run split at a character,
a paragraph's text replaced, and the run-level edits WordEval's operations make, as python-docx keeps
its run XML in ``docx.oxml.text.run`` (``CT_R``)."""
from __future__ import annotations

import copy
import re

from lxml import etree

from benchwright.formats.ooxml.accessors import set_locus
from benchwright.formats.ooxml.elements import w_el
from benchwright.formats.ooxml.ns import qn
from benchwright.formats.ooxml.schema_order import get_or_add


def _child_text_len(c) -> int:
    if c.tag in (qn("w:t"), qn("w:delText")):
        return len(c.text or "")
    if c.tag in (qn("w:tab"), qn("w:br"), qn("w:cr"), qn("w:noBreakHyphen"), qn("w:sym"), qn("w:footnoteReference"),
                 qn("w:endnoteReference"), qn("w:drawing"), qn("w:pict"), qn("w:object"), qn("mc:AlternateContent")):
        return 1
    return 0


def split_run(r, offset: int):
    """Split run ``r`` at ``offset`` characters of its text; returns (left, right). Formatting is copied."""
    if offset <= 0:
        return None, r
    right = copy.deepcopy(r)
    # left keeps content before offset, right keeps content from offset
    pos = 0
    lchildren = [c for c in r if c.tag != qn("w:rPr")]
    rchildren = [c for c in right if c.tag != qn("w:rPr")]
    for lc, rc in zip(lchildren, rchildren):
        n = _child_text_len(lc)
        if pos + n <= offset:
            right.remove(rc)
        elif pos >= offset:
            r.remove(lc)
        else:
            cut = offset - pos
            text = lc.text or ""
            lc.text = text[:cut]
            rc.text = text[cut:]
            for t in (lc, rc):
                if t.text != t.text.strip() or " " in t.text:
                    t.set(qn("xml:space"), "preserve")
        pos += n
    r.addnext(right)
    return r, right


_RUN_SPECIALS = {"\t": "w:tab", "\n": "w:br", "\r": "w:br", "\x0b": "w:br"}


def make_run(text: str, rpr: etree._Element | None = None):
    """One run with ``text``; tabs become ``w:tab`` and line breaks ``w:br`` (Word never has a
    literal newline inside ``w:t``)."""
    r = w_el("w:r")
    if rpr is not None:
        r.append(copy.deepcopy(rpr))
    text = text.replace("\r\n", "\n")
    for part in re.split("([\t\n\r\x0b])", text):
        if part in _RUN_SPECIALS:
            r.append(w_el(_RUN_SPECIALS[part]))
        elif part:
            t = w_el("w:t")
            t.text = part
            if part != part.strip():
                t.set(qn("xml:space"), "preserve")
            r.append(t)
    return r


def set_paragraph_text(p, text: str) -> None:
    """Replace a paragraph's runs by one run with ``text``, keeping the first run's formatting."""
    first_rpr = None
    for r in p.iter(qn("w:r")):
        rpr = r.find(qn("w:rPr"))
        if rpr is not None:
            first_rpr = copy.deepcopy(rpr)
        break
    for c in list(p):
        if c.tag != qn("w:pPr"):
            p.remove(c)
    p.append(make_run(text, first_rpr))


def run_properties(r):
    """Run ``r``'s ``w:rPr``, or None."""
    return r.find(qn("w:rPr"))


def last_text_properties(p):
    """The run properties of the last run of ``p`` that holds text (what text typed at the end of the
    paragraph takes), or None."""
    text_runs = [r for r in p.iter(qn("w:r")) if r.find(qn("w:t")) is not None]
    return text_runs[-1].find(qn("w:rPr")) if text_runs else None


def set_run_style(r, style_id: str) -> None:
    """``w:rPr/w:rStyle``: the run's character style."""
    rpr = get_or_add(r, "w:rPr")
    set_locus(rpr, "w:rStyle@w:val", "attr", style_id)


def clear_direct_formatting(r) -> None:
    """Font.Reset: every direct run property goes but the character style (an empty ``w:rPr`` too)."""
    rpr = r.find(qn("w:rPr"))
    if rpr is None:
        return
    for c in list(rpr):
        if c.tag != qn("w:rStyle"):
            rpr.remove(c)
    if not len(rpr):
        r.remove(rpr)


def map_text(r, fn) -> None:
    """Each ``w:t`` of run ``r`` becomes ``fn`` of its text (a case change)."""
    for t in r.iter(qn("w:t")):
        t.text = fn(t.text or "")


def replace_text(text_runs: list, text: str) -> None:
    """The runs' text becomes ``text``, held by the first run with its properties; the others go."""
    first = text_runs[0]
    for c in list(first):
        if c.tag != qn("w:rPr"):
            first.remove(c)
    new = make_run(text)
    for c in new:
        first.append(c)
    for r in text_runs[1:]:
        r.getparent().remove(r)


def remove_content(p) -> None:
    """Every child of paragraph ``p`` but its properties (``w:pPr``) goes."""
    for c in list(p):
        if c.tag != qn("w:pPr"):
            p.remove(c)


def append_runs(p, new_runs) -> None:
    """Append ``new_runs`` (runs or other paragraph content) to the end of paragraph ``p``."""
    for r in new_runs:
        p.append(r)


def insert_after(anchor, el) -> None:
    """``el`` right after ``anchor``, its sibling."""
    anchor.addnext(el)


def insert_before(anchor, el) -> None:
    """``el`` right before ``anchor``, its sibling."""
    anchor.addprevious(el)


__all__ = ["split_run", "make_run", "set_paragraph_text", "run_properties", "last_text_properties", "set_run_style",
           "clear_direct_formatting", "map_text", "replace_text", "remove_content", "append_runs", "insert_after",
           "insert_before"]
