"""WordprocessingML fields and content controls: complex fields (``w:fldChar`` begin / separate / end
around ``w:instrText``), simple fields (``w:fldSimple``) and structured document tags (``w:sdt``).
WordEval's field, header and table-of-contents operations build and edit fields through these, as
python-docx keeps its XML in ``docx.oxml``; python-docx has no field or content-control API."""
from __future__ import annotations

import copy

from benchwright.formats.ooxml.elements import w_el
from benchwright.formats.ooxml.ns import qn
from benchwright.formats.ooxml.run import make_run


class FieldSpanError(ValueError):
    """A complex field's runs do not end in the paragraph where it begins."""


def field_runs(code: str, result: str, rpr=None, locked: bool = False) -> list:
    """The runs of a complex field: begin (locked: ``w:fldLock``), `` code `` as ``w:instrText``,
    separate, the result's run when there is one, end; each with a copy of ``rpr``."""
    runs = []
    r = w_el("w:r")
    fc = w_el("w:fldChar", fldCharType="begin")
    if locked:
        fc.set(qn("w:fldLock"), "1")
    r.append(fc)
    runs.append(r)
    r = w_el("w:r")
    it = w_el("w:instrText")
    it.text = f" {code} "
    it.set(qn("xml:space"), "preserve")
    r.append(it)
    runs.append(r)
    r = w_el("w:r")
    r.append(w_el("w:fldChar", fldCharType="separate"))
    runs.append(r)
    if result:
        runs.append(make_run(result))
    r = w_el("w:r")
    r.append(w_el("w:fldChar", fldCharType="end"))
    runs.append(r)
    if rpr is not None:
        for r in runs:
            r.insert(0, copy.deepcopy(rpr))
    return runs


def end_run() -> object:
    """A run holding only a field's end ``w:fldChar`` (closing a field whose runs span paragraphs)."""
    end = w_el("w:r")
    end.append(w_el("w:fldChar", fldCharType="end"))
    return end


def field_span(begin, simple: bool) -> list:
    """A field's elements in its paragraph: the ``w:fldSimple`` itself, or the sibling runs from the run of
    the begin ``w:fldChar`` through the matching end; FieldSpanError when it does not end there."""
    if simple:
        return [begin]
    r = begin.getparent()
    runs, depth, cur = [], 0, r
    while cur is not None:
        runs.append(cur)
        for fc in cur.iter(qn("w:fldChar")):
            t = fc.get(qn("w:fldCharType"))
            depth += 1 if t == "begin" else -1 if t == "end" else 0
        if depth == 0:
            return runs
        cur = cur.getnext()
    raise FieldSpanError("field spans paragraphs")


def set_code(begin, span: list, simple: bool, code: str) -> None:
    """The field's code becomes `` code ``: a simple field's ``w:instr``, or the first ``w:instrText``
    of the span (the others go)."""
    if simple:
        begin.set(qn("w:instr"), f" {code} ")
        return
    instr = [it for r in span for it in r.iter(qn("w:instrText"))]
    instr[0].text = f" {code} "
    for extra in instr[1:]:
        extra.getparent().remove(extra)


def unlink(begin, span: list, simple: bool) -> None:
    """Field.Unlink: the field becomes its result (a simple field's children; a complex field's runs
    after its separator, without the field characters and code)."""
    if simple:
        parent = begin.getparent()
        idx = parent.index(begin)
        for i, c in enumerate(list(begin)):
            parent.insert(idx + i, c)
        parent.remove(begin)
        return
    state = "code"
    for r in span:
        keep = False
        for c in list(r):
            if c.tag == qn("w:fldChar"):
                t = c.get(qn("w:fldCharType"))
                state = "result" if t == "separate" else state
                r.remove(c)
            elif c.tag == qn("w:instrText"):
                r.remove(c)
            elif c.tag != qn("w:rPr") and state == "result":
                keep = True
        if not keep:
            r.getparent().remove(r)


def lock(begin) -> None:
    """Field.Locked: ``w:fldLock`` on the begin ``w:fldChar`` (or the ``w:fldSimple``)."""
    begin.set(qn("w:fldLock"), "1")


def remove_span(span: list) -> None:
    """Take the field's elements out of their paragraph."""
    for r in span:
        r.getparent().remove(r)


def styled_paragraph(style_id: str):
    """A new paragraph with the paragraph style ``style_id`` and no content yet."""
    p = w_el("w:p")
    ppr = w_el("w:pPr")
    ppr.append(w_el("w:pStyle", val=style_id))
    p.append(ppr)
    return p


def bookmarked_text(start) -> str:
    """The text (``w:t``) between bookmark start ``start`` and its end, in the start's parent."""
    bid = start.get(qn("w:id"))
    out, on = [], False
    for el in start.getparent().iter():
        if el is start:
            on = True
        elif el.tag == qn("w:bookmarkEnd") and el.get(qn("w:id")) == bid:
            break
        elif on and el.tag == qn("w:t"):
            out.append(el.text or "")
    return "".join(out)


# ------------------------------------------------------------------ content controls (w:sdt)


def sdt_properties(params: dict, sdt_id: int):
    """``w:sdtPr`` of a new content control: title, tag, id, lock and its type (plain text, date
    with its format, drop-down list with its items)."""
    pr = w_el("w:sdtPr")
    if params.get("title"):
        pr.append(w_el("w:alias", val=params["title"]))
    if params.get("tag"):
        pr.append(w_el("w:tag", val=params["tag"]))
    pr.append(w_el("w:id", val=sdt_id))
    if params.get("lock"):
        pr.append(w_el("w:lock", val=params["lock"]))
    kind = params.get("type", "text")
    if kind == "text":
        pr.append(w_el("w:text"))
    elif kind == "date":
        d = w_el("w:date")
        d.append(w_el("w:dateFormat", val=params.get("format", "d MMMM yyyy")))
        d.append(w_el("w:lid", val="en-US"))
        d.append(w_el("w:storeMappedDataAs", val="dateTime"))
        d.append(w_el("w:calendar", val="gregorian"))
        pr.append(d)
    elif kind == "dropDownList":
        dd = w_el("w:dropDownList")
        for item in params.get("items", []):
            dd.append(w_el("w:listItem", displayText=item, value=item))
        pr.append(dd)
    return pr


def next_sdt_id(body) -> int:
    """One more than the largest content-control id in ``body`` (at least 11)."""
    mx = 10
    for el in body.iter(qn("w:sdtPr")):
        i = el.find(qn("w:id"))
        if i is not None:
            try:
                mx = max(mx, int(i.get(qn("w:val"))))
            except (TypeError, ValueError):
                pass
    return mx + 1


def wrap_in_sdt(content: list, properties) -> None:
    """A content control with ``properties`` around ``content`` (runs of one paragraph, or paragraphs),
    in their place."""
    sdt = w_el("w:sdt")
    sdt.append(properties)
    box = w_el("w:sdtContent")
    content[0].addprevious(sdt)
    for c in content:
        box.append(c)
    sdt.append(box)


def sdt_by_tag(body, tag: str):
    """The first content control in ``body`` whose ``w:tag`` is ``tag``, or None."""
    for sdt in body.iter(qn("w:sdt")):
        t = sdt.find(qn("w:sdtPr") + "/" + qn("w:tag"))
        if t is not None and t.get(qn("w:val")) == tag:
            return sdt
    return None


def sdt_properties_of(sdt):
    """A content control's ``w:sdtPr``."""
    return sdt.find(qn("w:sdtPr"))


def remove_sdt(sdt) -> None:
    """ContentControl.Delete(False): the control goes, its content stays in its place."""
    content = sdt.find(qn("w:sdtContent"))
    for c in list(content):
        sdt.addprevious(c)
    sdt.getparent().remove(sdt)


__all__ = ["FieldSpanError", "field_runs", "end_run", "field_span", "set_code", "unlink", "lock", "remove_span",
           "styled_paragraph", "bookmarked_text", "sdt_properties", "next_sdt_id", "wrap_in_sdt", "sdt_by_tag",
           "sdt_properties_of", "remove_sdt"]
