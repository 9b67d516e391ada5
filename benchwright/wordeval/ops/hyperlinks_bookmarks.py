"""Operations of the hyperlinks bookmarks units (``catalogue/units/12_hyperlinks_bookmarks.yaml``)."""
from __future__ import annotations

from benchwright.formats.ooxml import hyperlinks as oxml
from benchwright.formats.ooxml.ns import RT
from benchwright.wordeval import text as T
from benchwright.wordeval.docmodel import AnchorError, WordDoc
from benchwright.wordeval.ops.common import operation, runs_for, story_container


def _ensure_hyperlink_style(wd: WordDoc) -> str:
    sid = wd.style_id("Hyperlink", "character")
    if sid:
        return sid
    return wd.ensure_style("Hyperlink", "Hyperlink", "character",
                           rpr='<w:rPr><w:color w:val="0563C1"/><w:u w:val="single"/></w:rPr>')


@operation("add_hyperlink")
def add_hyperlink(wd: WordDoc, target: dict, params: dict) -> None:
    runs = runs_for(wd, target)
    rid = wd.part.relate_to(params["url"], RT.HYPERLINK, is_external=True) if params.get("url") else None
    oxml.wrap_runs(runs, rid, params.get("bookmark"), params.get("tooltip"), _ensure_hyperlink_style(wd))


def _hyperlink(wd: WordDoc, target: dict):
    want = target.get("hyperlink") or target.get("phrase")
    for h in oxml.hyperlinks(story_container(wd, target)):
        txt = "".join(T.run_text(r) for r in oxml.hyperlink_runs(h))
        if txt.strip().startswith(want):
            return h
    raise AnchorError(wd.locator, f"no hyperlink with text {want!r}")


@operation("remove_hyperlink")
def remove_hyperlink(wd: WordDoc, target: dict, params: dict) -> None:
    oxml.remove_link(_hyperlink(wd, target), lambda: _ensure_hyperlink_style(wd))


@operation("set_hyperlink")
def set_hyperlink(wd: WordDoc, target: dict, params: dict) -> None:
    h = _hyperlink(wd, target)
    if "url" in params:
        oxml.set_relationship(h, wd.part.relate_to(params["url"], RT.HYPERLINK, is_external=True))
    if "tooltip" in params:
        oxml.set_tooltip(h, params["tooltip"])
    if "text" in params:
        oxml.set_text(h, params["text"])


@operation("add_bookmark")
def add_bookmark(wd: WordDoc, target: dict, params: dict) -> None:
    runs = runs_for(wd, target)
    oxml.add_bookmark(runs, wd.next_bookmark_id(), params["name"])


@operation("delete_bookmark")
def delete_bookmark(wd: WordDoc, target: dict, params: dict) -> None:
    oxml.delete_bookmark(wd.bookmark(target["bookmark"]))
