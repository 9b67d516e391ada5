"""Operations of the character formatting units (``catalogue/units/01_character_formatting.yaml``)."""
from __future__ import annotations

import re

from benchwright.formats.ooxml.accessors import set_locus
from benchwright.formats.ooxml.ns import qn
from benchwright.formats.ooxml.schema_order import get_or_add
from benchwright.wordeval.docmodel import WordDoc, make_run
from benchwright.wordeval.ops.common import operation, paragraphs_for, runs_for


@operation("char_style_equivalent")
def char_style_equivalent(wd: WordDoc, target: dict, params: dict) -> None:
    """Equivalent alternative for a direct character property: a new character style carrying
    the property, applied to the range (the effective value is the same)."""
    spec, value = params["spec"], params["value"]
    sid = "WeAlt" + re.sub(r"\W", "", spec["com"])
    wd.ensure_style(sid, "WE Alt " + spec["com"], "character")
    st_el = [s for s in wd.styles_el.findall(qn("w:style")) if s.get(qn("w:styleId")) == sid][0]
    loc = spec["locus"]
    set_locus(st_el, loc, spec["kind"], value, spec.get("also"))
    for r in runs_for(wd, target):
        rpr = get_or_add(r, "w:rPr")
        set_locus(rpr, "w:rStyle@w:val", "attr", sid)


@operation("font_reset")
def font_reset(wd: WordDoc, target: dict, params: dict) -> None:
    for r in runs_for(wd, target):
        rpr = r.find(qn("w:rPr"))
        if rpr is None:
            continue
        for c in list(rpr):
            if c.tag != qn("w:rStyle"):
                rpr.remove(c)
        if not len(rpr):
            r.remove(rpr)


@operation("change_case")
def change_case(wd: WordDoc, target: dict, params: dict) -> None:
    fn = {"upper": str.upper, "lower": str.lower, "title": str.title}[params["case"]]
    for r in runs_for(wd, target):
        for t in r.iter(qn("w:t")):
            t.text = fn(t.text or "")


@operation("replace_text")
def replace_text(wd: WordDoc, target: dict, params: dict) -> None:
    runs = runs_for(wd, target)
    first = runs[0]
    for c in list(first):
        if c.tag != qn("w:rPr"):
            first.remove(c)
    new = make_run(params["text"])
    for c in new:
        first.append(c)
    for r in runs[1:]:
        r.getparent().remove(r)


@operation("insert_text_after")
def insert_text_after(wd: WordDoc, target: dict, params: dict) -> None:
    for p in paragraphs_for(wd, target):
        runs = [r for r in p.iter(qn("w:r")) if r.find(qn("w:t")) is not None]
        rpr = runs[-1].find(qn("w:rPr")) if runs else None
        p.append(make_run(params["text"], rpr))
