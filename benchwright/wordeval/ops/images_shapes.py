"""Operations of the images shapes units (``catalogue/units/13_images_shapes.yaml``)."""
from __future__ import annotations

import copy

from pathlib import Path
from docx.oxml.parser import parse_xml
from docx.shared import Emu

from benchwright.formats.ooxml.ns import NS, qn
from benchwright.wordeval.docmodel import AnchorError, WordDoc
from benchwright.wordeval.ops.common import operation, paragraphs_for


ASSETS = Path(__file__).parent.with_name("assets")


def _picture_runs(wd: WordDoc, target: dict) -> list:
    if "image" in target:
        spec = target["image"]
        found = []
        for r in wd.body.iter(qn("w:r")):
            for dp in r.iter(qn("wp:docPr")):
                if spec.get("descr") and dp.get("descr") == spec["descr"]:
                    found.append(r)
        if found:
            return found
        raise AnchorError(wd.locator, f"no picture with {spec!r}")
    runs = []
    for p in paragraphs_for(wd, target):
        runs += [r for r in p.iter(qn("w:r")) if r.find(qn("w:drawing")) is not None]
    if not runs:
        raise AnchorError(wd.locator, "no picture in target paragraph")
    return runs


@operation("add_picture")
def add_picture(wd: WordDoc, target: dict, params: dict) -> None:
    anchor_p = paragraphs_for(wd, target)[-1]
    # python-docx numbers the drawing from the ids of the main document part only; drawing ids
    # are unique across every story (headers, footnotes, endnotes, comments) for Word
    docpr_id = wd.next_docpr_id()
    new = wd.doc.add_paragraph()
    anchor_p.addnext(new._p)
    run = new.add_run()
    shape = run.add_picture(str(ASSETS / params["image"]), width=Emu(params["width"]))
    dp = shape._inline.docPr
    dp.set("id", str(docpr_id))
    if params.get("descr"):
        dp.set("descr", params["descr"])
    if params.get("floating"):
        _to_anchor(wd, run._r, params)


@operation("resize_picture")
def resize_picture(wd: WordDoc, target: dict, params: dict) -> None:
    for r in _picture_runs(wd, target):
        ext = r.find(".//" + qn("wp:extent"))
        cx, cy = int(ext.get("cx")), int(ext.get("cy"))
        if "width" in params:
            ncx = int(params["width"])
            ncy = int(round(cy * ncx / cx)) if params.get("lock_aspect", True) else cy
        else:
            ncy = int(params["height"])
            ncx = int(round(cx * ncy / cy)) if params.get("lock_aspect", True) else cx
        ext.set("cx", str(ncx))
        ext.set("cy", str(ncy))
        for a_ext in r.iter(qn("a:ext")):
            if a_ext.getparent().tag == qn("a:xfrm"):
                a_ext.set("cx", str(ncx))
                a_ext.set("cy", str(ncy))


@operation("set_picture_attr")
def set_picture_attr(wd: WordDoc, target: dict, params: dict) -> None:
    for r in _picture_runs(wd, target):
        for dp in r.iter(qn("wp:docPr")):
            dp.set(params["attribute"], params["value"])


@operation("delete_picture")
def delete_picture(wd: WordDoc, target: dict, params: dict) -> None:
    for r in _picture_runs(wd, target):
        r.getparent().remove(r)


_WRAP_XML = {
    "square": '<wp:wrapSquare xmlns:wp="{wp}" wrapText="bothSides"/>',
    "tight": ('<wp:wrapTight xmlns:wp="{wp}" wrapText="bothSides"><wp:wrapPolygon edited="0">'
              '<wp:start x="0" y="0"/><wp:lineTo x="0" y="21600"/><wp:lineTo x="21600" y="21600"/>'
              '<wp:lineTo x="21600" y="0"/><wp:lineTo x="0" y="0"/></wp:wrapPolygon></wp:wrapTight>'),
    "topAndBottom": '<wp:wrapTopAndBottom xmlns:wp="{wp}"/>',
    "none": '<wp:wrapNone xmlns:wp="{wp}"/>',
}


def _to_anchor(wd: WordDoc, r, params: dict) -> None:
    inline = r.find(".//" + qn("wp:inline"))
    if inline is None:
        return
    wp = NS["wp"]
    behind = params.get("wrap") == "behind"
    anchor = parse_xml(
        (f'<wp:anchor xmlns:wp="{wp}" distT="0" distB="0" distL="114300" distR="114300" simplePos="0" '
         f'relativeHeight="251659264" behindDoc="{1 if behind else 0}" locked="0" layoutInCell="1" '
         f'allowOverlap="1"><wp:simplePos x="0" y="0"/>'
         f'<wp:positionH relativeFrom="column"><wp:posOffset>{int(params.get("left", 0))}</wp:posOffset>'
         f'</wp:positionH><wp:positionV relativeFrom="paragraph"><wp:posOffset>{int(params.get("top", 0))}'
         f'</wp:posOffset></wp:positionV></wp:anchor>').encode())
    anchor.append(copy.deepcopy(inline.find(qn("wp:extent"))))
    eff = inline.find(qn("wp:effectExtent"))
    anchor.append(copy.deepcopy(eff) if eff is not None else
                  parse_xml(f'<wp:effectExtent xmlns:wp="{wp}" l="0" t="0" r="0" b="0"/>'.encode()))
    anchor.append(parse_xml(_WRAP_XML["none" if behind else params.get("wrap", "square")].format(wp=wp).encode()))
    for tag in ("wp:docPr", "wp:cNvGraphicFramePr"):
        el = inline.find(qn(tag))
        if el is not None:
            anchor.append(copy.deepcopy(el))
    anchor.append(copy.deepcopy(inline.find(qn("a:graphic"))))
    inline.getparent().replace(inline, anchor)


@operation("convert_to_floating")
def convert_to_floating(wd: WordDoc, target: dict, params: dict) -> None:
    for r in _picture_runs(wd, target):
        _to_anchor(wd, r, params)


@operation("set_wrap")
def set_wrap(wd: WordDoc, target: dict, params: dict) -> None:
    wp = NS["wp"]
    for r in _picture_runs(wd, target):
        anchor = r.find(".//" + qn("wp:anchor"))
        for tag in ("wrapNone", "wrapSquare", "wrapTight", "wrapThrough", "wrapTopAndBottom"):
            old = anchor.find(qn("wp:" + tag))
            if old is not None:
                behind = params["wrap"] == "behind"
                old.getparent().replace(old, parse_xml(
                    _WRAP_XML["none" if behind else params["wrap"]].format(wp=wp).encode()))
                anchor.set("behindDoc", "1" if behind else "0")
                break


@operation("set_shape_position")
def set_shape_position(wd: WordDoc, target: dict, params: dict) -> None:
    for r in _picture_runs(wd, target):
        anchor = r.find(".//" + qn("wp:anchor"))
        for axis, key in (("positionH", "left"), ("positionV", "top")):
            if key in params:
                pos = anchor.find(qn("wp:" + axis))
                for c in list(pos):
                    pos.remove(c)
                off = parse_xml(f'<wp:posOffset xmlns:wp="{NS["wp"]}">{int(params[key])}</wp:posOffset>'.encode())
                pos.append(off)
