"""Operations of the fields units (``catalogue/units/08_fields.yaml``)."""
from __future__ import annotations

from benchwright.formats.ooxml.accessors import set_locus
from benchwright.formats.ooxml.elements import w_el
from benchwright.formats.ooxml.ns import qn
from benchwright.wordeval.docmodel import AnchorError, WordDoc, make_run
from benchwright.wordeval.ops.common import (
    field_runs, find_fields, operation, paragraphs_for, runs_for, story_container,
)


def _field_span(info) -> list:
    """Sibling runs from the begin fldChar's run through the matching end (same paragraph)."""
    if info.simple:
        return [info.begin]
    r = info.begin.getparent()
    runs, depth, cur = [], 0, r
    while cur is not None:
        runs.append(cur)
        for fc in cur.iter(qn("w:fldChar")):
            t = fc.get(qn("w:fldCharType"))
            depth += 1 if t == "begin" else -1 if t == "end" else 0
        if depth == 0:
            return runs
        cur = cur.getnext()
    raise AnchorError("<field>", "field spans paragraphs")


@operation("insert_field")
def insert_field(wd: WordDoc, target: dict, params: dict) -> None:
    paras = paragraphs_for(wd, target)
    p = paras[-1]
    runs = [r for r in p.iter(qn("w:r")) if r.find(qn("w:t")) is not None]
    rpr = runs[-1].find(qn("w:rPr")) if runs else None
    if params.get("prefix"):
        p.append(make_run(params["prefix"], rpr))
    for r in field_runs(params["code"], params.get("result", ""), rpr, params.get("locked", False)):
        p.append(r)


@operation("edit_field_code")
def edit_field_code(wd: WordDoc, target: dict, params: dict) -> None:
    f = find_fields(wd, story_container(wd, target), target.get("field"))[0]
    if f.simple:
        f.begin.set(qn("w:instr"), f" {params['code']} ")
        return
    instr = [it for r in _field_span(f) for it in r.iter(qn("w:instrText"))]
    instr[0].text = f" {params['code']} "
    for extra in instr[1:]:
        extra.getparent().remove(extra)


@operation("unlink_field")
def unlink_field(wd: WordDoc, target: dict, params: dict) -> None:
    for f in find_fields(wd, story_container(wd, target), target.get("field"))[:1]:
        span = _field_span(f)
        if f.simple:
            parent = f.begin.getparent()
            idx = parent.index(f.begin)
            for i, c in enumerate(list(f.begin)):
                parent.insert(idx + i, c)
            parent.remove(f.begin)
            continue
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


@operation("lock_field")
def lock_field(wd: WordDoc, target: dict, params: dict) -> None:
    f = find_fields(wd, story_container(wd, target), target.get("field"))[0]
    f.begin.set(qn("w:fldLock"), "1")


@operation("delete_field")
def delete_field(wd: WordDoc, target: dict, params: dict) -> None:
    f = find_fields(wd, story_container(wd, target), target.get("field"))[0]
    for r in _field_span(f):
        r.getparent().remove(r)


@operation("insert_caption")
def insert_caption(wd: WordDoc, target: dict, params: dict) -> None:
    """Range.InsertCaption: "Label N: text" with a SEQ field, in the Caption style."""
    label = params.get("label", "Table")
    sid = wd.style_id("Caption", "paragraph") or wd.ensure_style(
        "Caption", "caption", "paragraph", based_on="Normal", extra="<w:next w:val=\"Normal\"/><w:qFormat/>",
        ppr='<w:pPr><w:spacing w:line="240" w:lineRule="auto"/></w:pPr>',
        rpr='<w:rPr><w:b/><w:bCs/><w:color w:val="4F81BD"/><w:sz w:val="18"/><w:szCs w:val="18"/></w:rPr>')
    p = w_el("w:p")
    ppr = w_el("w:pPr")
    ppr.append(w_el("w:pStyle", val=sid))
    p.append(ppr)
    p.append(make_run(label + " "))
    for r in field_runs(f"SEQ {label} \\* ARABIC", str(params.get("number", 1))):
        p.append(r)
    p.append(make_run(": " + params["text"]))
    if "table" in target:
        tbl = wd.table(target["table"])
        if params.get("position", "above") == "above":
            tbl.addprevious(p)
        else:
            tbl.addnext(p)
    else:
        paragraphs_for(wd, target)[-1].addnext(p)


@operation("insert_cross_reference")
def insert_cross_reference(wd: WordDoc, target: dict, params: dict) -> None:
    p = paragraphs_for(wd, target)[-1]
    bm = wd.bookmark(params["bookmark"])
    result = params.get("result") or _bookmark_text(wd, params["bookmark"])
    if params.get("prefix"):
        p.append(make_run(params["prefix"]))
    for r in field_runs(f"REF {params['bookmark']} \\h", result):
        p.append(r)
    _ = bm


def _bookmark_text(wd: WordDoc, name: str) -> str:
    start = wd.bookmark(name)
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


# content controls


def _sdt_pr(wd: WordDoc, params: dict):
    pr = w_el("w:sdtPr")
    if params.get("title"):
        pr.append(w_el("w:alias", val=params["title"]))
    if params.get("tag"):
        pr.append(w_el("w:tag", val=params["tag"]))
    pr.append(w_el("w:id", val=_next_sdt_id(wd)))
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


def _next_sdt_id(wd: WordDoc) -> int:
    mx = 10
    for el in wd.body.iter(qn("w:sdtPr")):
        i = el.find(qn("w:id"))
        if i is not None:
            try:
                mx = max(mx, int(i.get(qn("w:val"))))
            except (TypeError, ValueError):
                pass
    return mx + 1


@operation("add_content_control")
def add_content_control(wd: WordDoc, target: dict, params: dict) -> None:
    sdt = w_el("w:sdt")
    sdt.append(_sdt_pr(wd, params))
    content = w_el("w:sdtContent")
    if "phrase" in target:
        runs = runs_for(wd, target)
        runs[0].addprevious(sdt)
        for r in runs:
            content.append(r)
    else:
        p = paragraphs_for(wd, target)[0]
        p.addprevious(sdt)
        content.append(p)
    sdt.append(content)


def _sdt_by_tag(wd: WordDoc, tag: str):
    for sdt in wd.body.iter(qn("w:sdt")):
        t = sdt.find(qn("w:sdtPr") + "/" + qn("w:tag"))
        if t is not None and t.get(qn("w:val")) == tag:
            return sdt
    raise AnchorError(wd.locator, f"no content control tagged {tag!r}")


@operation("set_content_control")
def set_content_control(wd: WordDoc, target: dict, params: dict) -> None:
    sdt = _sdt_by_tag(wd, target["content_control"])
    pr = sdt.find(qn("w:sdtPr"))
    set_locus(pr, f"w:{params['property']}@w:val", "attr", params["value"])


@operation("remove_content_control")
def remove_content_control(wd: WordDoc, target: dict, params: dict) -> None:
    sdt = _sdt_by_tag(wd, target["content_control"])
    content = sdt.find(qn("w:sdtContent"))
    for c in list(content):
        sdt.addprevious(c)
    sdt.getparent().remove(sdt)
