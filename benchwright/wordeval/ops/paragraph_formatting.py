"""Operations of the paragraph formatting units (``catalogue/units/02_paragraph_formatting.yaml``)."""
from __future__ import annotations

import copy

from docx.shared import Twips

from benchwright.formats.ooxml.ns import qn
from benchwright.formats.ooxml.schema_order import get_or_add, insert_child
from benchwright.wordeval.docmodel import AnchorError, WordDoc, make_run, w_el
from benchwright.wordeval.ops.common import border_el, operation, paragraphs_for


@operation("insert_paragraph_after")
def insert_paragraph_after(wd: WordDoc, target: dict, params: dict) -> None:
    p = paragraphs_for(wd, target)[-1]
    new = w_el("w:p")
    style = params.get("style")
    ppr = p.find(qn("w:pPr"))
    if style:
        sid = wd.style(style, "paragraph").style_id
        new_ppr = w_el("w:pPr")
        new_ppr.append(w_el("w:pStyle", val=sid))
        new.append(new_ppr)
    elif ppr is not None:
        new_ppr = copy.deepcopy(ppr)
        for c in list(new_ppr):
            if c.tag in (qn("w:sectPr"), qn("w:pPrChange"), qn("w:rPr"), qn("w:numPr")):
                new_ppr.remove(c)
        if len(new_ppr):
            new.append(new_ppr)
    new.append(make_run(params["text"]))
    p.addnext(new)


@operation("delete_paragraph")
def delete_paragraph(wd: WordDoc, target: dict, params: dict) -> None:
    for p in paragraphs_for(wd, target):
        ppr = p.find(qn("w:pPr"))
        if ppr is not None and ppr.find(qn("w:sectPr")) is not None:
            raise AnchorError(wd.locator, "refusing to delete a paragraph that ends a section")
        p.getparent().remove(p)


LINE_SPACING_PRESETS = {"single": (240, "auto"), "onehalf": (360, "auto"), "double": (480, "auto"),
                        "exact18": (360, "exact"), "atleast12": (240, "atLeast")}


@operation("set_line_spacing")
def set_line_spacing(wd: WordDoc, target: dict, params: dict) -> None:
    """ParagraphFormat.LineSpacingRule / LineSpacing (w:spacing line + lineRule)."""
    line, rule = LINE_SPACING_PRESETS[params["spacing"]] if "spacing" in params else (params["line"], params["rule"])
    for p in paragraphs_for(wd, target):
        sp = get_or_add(get_or_add(p, "w:pPr"), "w:spacing")
        sp.set(qn("w:line"), str(line))
        sp.set(qn("w:lineRule"), rule)


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
        pbdr = get_or_add(get_or_add(p, "w:pPr"), "w:pBdr")
        for side in sides:
            old = pbdr.find(qn("w:" + side))
            if old is not None:
                pbdr.remove(old)
            insert_child(pbdr, border_el("w:" + side, params.get("style", "single"), params.get("size", 4),
                                       params.get("color", "auto")))
