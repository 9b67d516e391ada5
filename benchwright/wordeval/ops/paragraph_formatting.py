"""Operations of the paragraph formatting units (``catalogue/units/02_paragraph_formatting.yaml``)."""
from __future__ import annotations

from docx.shared import Twips

from benchwright.formats.ooxml import paragraph as oxml
from benchwright.wordeval.docmodel import AnchorError, WordDoc, make_run
from benchwright.wordeval.ops.common import operation, paragraphs_for


@operation("insert_paragraph_after")
def insert_paragraph_after(wd: WordDoc, target: dict, params: dict) -> None:
    p = paragraphs_for(wd, target)[-1]
    style = params.get("style")
    sid = wd.style(style, "paragraph").style_id if style else None
    oxml.add_paragraph_after(p, make_run(params["text"]), sid)


@operation("delete_paragraph")
def delete_paragraph(wd: WordDoc, target: dict, params: dict) -> None:
    for p in paragraphs_for(wd, target):
        if oxml.ends_section(p):
            raise AnchorError(wd.locator, "refusing to delete a paragraph that ends a section")
        oxml.remove_paragraph(p)


LINE_SPACING_PRESETS = {"single": (240, "auto"), "onehalf": (360, "auto"), "double": (480, "auto"),
                        "exact18": (360, "exact"), "atleast12": (240, "atLeast")}


@operation("set_line_spacing")
def set_line_spacing(wd: WordDoc, target: dict, params: dict) -> None:
    """ParagraphFormat.LineSpacingRule / LineSpacing (w:spacing line + lineRule)."""
    line, rule = LINE_SPACING_PRESETS[params["spacing"]] if "spacing" in params else (params["line"], params["rule"])
    for p in paragraphs_for(wd, target):
        oxml.set_line_spacing(p, line, rule)


@operation("add_tab_stop")
def add_tab_stop(wd: WordDoc, target: dict, params: dict) -> None:
    from docx.enum.text import WD_TAB_ALIGNMENT, WD_TAB_LEADER
    for p in paragraphs_for(wd, target):
        wd.proxy(p).paragraph_format.tab_stops.add_tab_stop(
            Twips(params["position"]), getattr(WD_TAB_ALIGNMENT, params.get("alignment", "LEFT")),
            getattr(WD_TAB_LEADER, params.get("leader", "SPACES")))


@operation("clear_tab_stops")
def clear_tab_stops(wd: WordDoc, target: dict, params: dict) -> None:
    for p in paragraphs_for(wd, target):
        wd.proxy(p).paragraph_format.tab_stops.clear_all()


@operation("clear_tab_stop")
def clear_tab_stop(wd: WordDoc, target: dict, params: dict) -> None:
    """TabStops(position).Clear: only the tab stop at ``position`` (twips) goes."""
    for p in paragraphs_for(wd, target):
        stops = wd.proxy(p).paragraph_format.tab_stops
        found = [i for i, t in enumerate(stops) if t.position == Twips(int(params["position"]))]
        if not found:
            raise AnchorError(wd.locator, f"no tab stop at {params['position']} twips")
        del stops[found[0]]


@operation("set_paragraph_border")
def set_paragraph_border(wd: WordDoc, target: dict, params: dict) -> None:
    sides = params.get("sides", ["top", "left", "bottom", "right"])
    for p in paragraphs_for(wd, target):
        oxml.set_borders(p, sides, params.get("style", "single"), params.get("size", 4), params.get("color", "auto"))
