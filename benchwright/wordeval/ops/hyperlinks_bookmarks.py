"""Operations of the hyperlinks bookmarks units (``catalogue/units/12_hyperlinks_bookmarks.yaml``)."""
from __future__ import annotations

from benchwright.formats.ooxml.accessors import set_locus
from benchwright.formats.ooxml.elements import w_el
from benchwright.formats.ooxml.ns import RT, qn
from benchwright.formats.ooxml.schema_order import get_or_add
from benchwright.wordeval import text as T
from benchwright.wordeval.docmodel import AnchorError, WordDoc, make_run
from benchwright.wordeval.ops.common import operation, runs_for, story_container, unwrap


def _ensure_hyperlink_style(wd: WordDoc) -> str:
    sid = wd.style_id("Hyperlink", "character")
    if sid:
        return sid
    return wd.ensure_style("Hyperlink", "Hyperlink", "character",
                           rpr='<w:rPr><w:color w:val="0563C1"/><w:u w:val="single"/></w:rPr>')


@operation("add_hyperlink")
def add_hyperlink(wd: WordDoc, target: dict, params: dict) -> None:
    runs = runs_for(wd, target)
    h = w_el("w:hyperlink")
    if params.get("url"):
        rid = wd.part.relate_to(params["url"], RT.HYPERLINK, is_external=True)
        h.set(qn("r:id"), rid)
    if params.get("bookmark"):
        h.set(qn("w:anchor"), params["bookmark"])
    if params.get("tooltip"):
        h.set(qn("w:tooltip"), params["tooltip"])
    h.set(qn("w:history"), "1")
    sid = _ensure_hyperlink_style(wd)
    runs[0].addprevious(h)
    for r in runs:
        rpr = get_or_add(r, "w:rPr")
        set_locus(rpr, "w:rStyle@w:val", "attr", sid)
        h.append(r)


def _hyperlink(wd: WordDoc, target: dict):
    want = target.get("hyperlink") or target.get("phrase")
    container = story_container(wd, target)
    for h in container.iter(qn("w:hyperlink")):
        txt = "".join(T.run_text(r) for r in h.iter(qn("w:r")))
        if txt.strip().startswith(want):
            return h
    raise AnchorError(wd.locator, f"no hyperlink with text {want!r}")


@operation("remove_hyperlink")
def remove_hyperlink(wd: WordDoc, target: dict, params: dict) -> None:
    h = _hyperlink(wd, target)
    for r in h.iter(qn("w:r")):
        rpr = r.find(qn("w:rPr"))
        rs = rpr.find(qn("w:rStyle")) if rpr is not None else None
        if rs is not None and rs.get(qn("w:val")) == _ensure_hyperlink_style(wd):
            rpr.remove(rs)
            if not len(rpr):
                r.remove(rpr)
    unwrap(h)


@operation("set_hyperlink")
def set_hyperlink(wd: WordDoc, target: dict, params: dict) -> None:
    h = _hyperlink(wd, target)
    if "url" in params:
        rid = wd.part.relate_to(params["url"], RT.HYPERLINK, is_external=True)
        h.set(qn("r:id"), rid)
        h.attrib.pop(qn("w:anchor"), None)
    if "tooltip" in params:
        h.set(qn("w:tooltip"), params["tooltip"])
    if "text" in params:
        runs = h.findall(qn("w:r"))
        rpr = runs[0].find(qn("w:rPr")) if runs else None
        for r in runs:
            h.remove(r)
        h.append(make_run(params["text"], rpr))


@operation("add_bookmark")
def add_bookmark(wd: WordDoc, target: dict, params: dict) -> None:
    runs = runs_for(wd, target)
    bid = wd.next_bookmark_id()
    runs[0].addprevious(w_el("w:bookmarkStart", id=bid, name=params["name"]))
    runs[-1].addnext(w_el("w:bookmarkEnd", id=bid))


@operation("delete_bookmark")
def delete_bookmark(wd: WordDoc, target: dict, params: dict) -> None:
    start = wd.bookmark(target["bookmark"])
    bid = start.get(qn("w:id"))
    root = start.getroottree().getroot()
    for end in list(root.iter(qn("w:bookmarkEnd"))):
        if end.get(qn("w:id")) == bid:
            end.getparent().remove(end)
    start.getparent().remove(start)
