"""Operations of the character formatting units (``catalogue/units/01_character_formatting.yaml``)."""
from __future__ import annotations

import re

from benchwright.formats.ooxml import run as oxml
from benchwright.formats.ooxml.accessors import set_locus
from benchwright.formats.ooxml.styles import style_element
from benchwright.wordeval.docmodel import WordDoc, make_run
from benchwright.wordeval.ops.common import operation, paragraphs_for, runs_for


@operation("char_style_equivalent")
def char_style_equivalent(wd: WordDoc, target: dict, params: dict) -> None:
    """Equivalent alternative for a direct character property: a new character style carrying
    the property, applied to the range (the effective value is the same)."""
    spec, value = params["spec"], params["value"]
    sid = "WeAlt" + re.sub(r"\W", "", spec["com"])
    wd.ensure_style(sid, "WE Alt " + spec["com"], "character")
    set_locus(style_element(wd.styles_el, sid), spec["locus"], spec["kind"], value, spec.get("also"))
    for r in runs_for(wd, target):
        oxml.set_run_style(r, sid)


@operation("font_reset")
def font_reset(wd: WordDoc, target: dict, params: dict) -> None:
    for r in runs_for(wd, target):
        oxml.clear_direct_formatting(r)


@operation("change_case")
def change_case(wd: WordDoc, target: dict, params: dict) -> None:
    fn = {"upper": str.upper, "lower": str.lower, "title": str.title}[params["case"]]
    for r in runs_for(wd, target):
        oxml.map_text(r, fn)


@operation("replace_text")
def replace_text(wd: WordDoc, target: dict, params: dict) -> None:
    oxml.replace_text(runs_for(wd, target), params["text"])


@operation("insert_text_after")
def insert_text_after(wd: WordDoc, target: dict, params: dict) -> None:
    for p in paragraphs_for(wd, target):
        oxml.append_runs(p, [make_run(params["text"], oxml.last_text_properties(p))])
