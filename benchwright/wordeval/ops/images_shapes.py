"""Operations of the images shapes units (``catalogue/units/13_images_shapes.yaml``)."""
from __future__ import annotations

import copy

from pathlib import Path
from docx.oxml.parser import parse_xml
from docx.shared import Emu

from benchwright.formats.ooxml.ns import NS, qn
from benchwright.wordeval import text as T
from benchwright.wordeval.docmodel import AnchorError, WordDoc
from benchwright.wordeval.ops.common import operation, paragraphs_for


ASSETS = Path(__file__).parent.with_name("assets")


def _picture_runs(wd: WordDoc, target: dict) -> list:
    if "image" in target:
        spec = target["image"]
        found = []
        for r in wd.body.iter(qn("w:r")):
            if r.getparent().tag == qn("w:p") and r.getparent().getparent().tag == qn("w:txbxContent"):
                continue   # a run inside a text box is not the shape's own run
            for dp in r.iter(qn("wp:docPr")):
                if spec.get("descr") and dp.get("descr") == spec["descr"]:
                    found.append(r)
            if spec.get("text") and r.find(".//" + qn("w:drawing")) is not None:
                # a shape by the text it holds (many real documents give shapes no alt text)
                box = r.find(".//" + qn("w:drawing") + "//" + qn("w:txbxContent"))
                if box is not None and "".join(T.paragraph_read_text(p) for p in T.iter_block_paragraphs(box)) \
                        .startswith(spec["text"]):
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


# ------------------------------------------------------------------ drawn shapes and text boxes
# Word 2010+ writes a drawn shape or text box as a WordprocessingShape (wps:wsp) inside
# mc:AlternateContent/mc:Choice Requires="wps": consumers that do not know wps (and the XSD gate,
# which applies markup compatibility first) skip it; Word and LibreOffice read it. No VML fallback
# is written (it is optional in ECMA-376 part 3 and would duplicate the text box content).

WPS_URI = "http://schemas.microsoft.com/office/word/2010/wordprocessingShape"
_DML = "{%s}" % NS["a"]
_NSDECL = " ".join(f'xmlns:{p}="{NS[p]}"' for p in ("w", "wp", "a", "wps", "mc"))


def _esc(text: str) -> str:
    from xml.sax.saxutils import escape
    return escape(text, {'"': "&quot;"})


def _solid_fill(color: str) -> str:
    return f'<a:solidFill {_NSDECL}><a:srgbClr val="{color}"/></a:solidFill>'


@operation("add_shape")
def add_shape(wd: WordDoc, target: dict, params: dict) -> None:
    """Shapes.AddShape / Shapes.AddTextbox: a floating shape anchored to the target paragraph
    (square wrapping, offset from the column and the paragraph), with the preset geometry, fill,
    outline and, for a text box, its text."""
    p = paragraphs_for(wd, target)[-1]
    docpr_id = wd.next_docpr_id()
    cx, cy = int(params["width"]), int(params["height"])
    text = params.get("text")
    name = f"{'Text Box' if text is not None else 'Shape'} {docpr_id}"
    tx_box = ' txBox="1"' if text is not None else ""
    fill = _solid_fill(params["fill"]) if params.get("fill") else f'<a:noFill {_NSDECL}/>' \
        if text is None else _solid_fill("FFFFFF")
    line = params.get("line", "000000")
    txbx = "" if text is None else (
        f'<wps:txbx><w:txbxContent><w:p><w:r><w:t xml:space="preserve">{_esc(text)}</w:t></w:r></w:p>'
        f'</w:txbxContent></wps:txbx>')
    run = parse_xml((
        f'<w:r {_NSDECL}><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing>'
        f'<wp:anchor distT="0" distB="0" distL="114300" distR="114300" simplePos="0" '
        f'relativeHeight="{251659264 + docpr_id}" behindDoc="0" locked="0" layoutInCell="1" allowOverlap="1">'
        f'<wp:simplePos x="0" y="0"/>'
        f'<wp:positionH relativeFrom="column"><wp:posOffset>{int(params.get("left", 0))}</wp:posOffset></wp:positionH>'
        f'<wp:positionV relativeFrom="paragraph"><wp:posOffset>{int(params.get("top", 0))}</wp:posOffset>'
        f'</wp:positionV>'
        f'<wp:extent cx="{cx}" cy="{cy}"/><wp:effectExtent l="0" t="0" r="0" b="0"/>'
        f'<wp:wrapSquare wrapText="bothSides"/>'
        f'<wp:docPr id="{docpr_id}" name="{name}" descr="{_esc(params.get("descr") or "")}"/><wp:cNvGraphicFramePr/>'
        f'<a:graphic><a:graphicData uri="{WPS_URI}"><wps:wsp>'
        f'<wps:cNvSpPr{tx_box}/>'
        f'<wps:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="{cx}" cy="{cy}"/></a:xfrm>'
        f'<a:prstGeom prst="{params.get("geometry", "rect")}"><a:avLst/></a:prstGeom>'
        f'{fill}<a:ln w="{int(params.get("line_width", 9525))}">{_solid_fill(line)}</a:ln></wps:spPr>'
        f'{txbx}<wps:bodyPr rot="0" vert="horz" wrap="square" lIns="91440" tIns="45720" rIns="91440" '
        f'bIns="45720" anchor="t" anchorCtr="0"><a:noAutofit/></wps:bodyPr>'
        f'</wps:wsp></a:graphicData></a:graphic></wp:anchor></w:drawing></mc:Choice></mc:AlternateContent></w:r>'
    ).encode())
    p.append(run)


def _shapes(wd: WordDoc, target: dict) -> list:
    """The wps:wsp elements of the target shapes (found by their alternative text)."""
    found = [w for r in _picture_runs(wd, target) for w in r.iter(qn("wps:wsp"))]
    if not found:
        raise AnchorError(wd.locator, f"no drawn shape or text box at {target!r}")
    return found


def _replace_in_order(parent, tags: tuple[str, ...], new, ctype: str) -> None:
    """Remove the children ``tags`` (alternatives of one choice) and insert ``new`` in schema order."""
    from benchwright.formats.ooxml.schema_order import insert_child
    for t in tags:
        for old in parent.findall(qn(t)):
            parent.remove(old)
    if new is not None:
        insert_child(parent, new, _DML + ctype)


_FILLS = ("a:noFill", "a:solidFill", "a:gradFill", "a:blipFill", "a:pattFill", "a:grpFill")


@operation("set_shape_fill")
def set_shape_fill(wd: WordDoc, target: dict, params: dict) -> None:
    """Shape.Fill.ForeColor.RGB (solid fill) or Shape.Fill.Visible = False (no fill)."""
    for wsp in _shapes(wd, target):
        sppr = wsp.find(qn("wps:spPr"))
        color = params.get("color")
        new = parse_xml(_solid_fill(color).encode()) if color else parse_xml(f'<a:noFill {_NSDECL}/>'.encode())
        _replace_in_order(sppr, _FILLS, new, "CT_ShapeProperties")


@operation("set_shape_line")
def set_shape_line(wd: WordDoc, target: dict, params: dict) -> None:
    """Shape.Line: Weight (a:ln@w, EMU), ForeColor (a:ln/a:solidFill) and DashStyle (a:prstDash)."""
    from benchwright.formats.ooxml.schema_order import get_or_add
    for wsp in _shapes(wd, target):
        sppr = wsp.find(qn("wps:spPr"))
        ln = get_or_add(sppr, "a:ln", _DML + "CT_ShapeProperties")
        if "weight" in params:
            ln.set("w", str(int(params["weight"])))
        if params.get("color"):
            _replace_in_order(ln, _FILLS[:4] + ("a:pattFill",), parse_xml(_solid_fill(params["color"]).encode()),
                              "CT_LineProperties")
        if params.get("dash"):
            _replace_in_order(ln, ("a:prstDash", "a:custDash"),
                              parse_xml(f'<a:prstDash {_NSDECL} val="{params["dash"]}"/>'.encode()),
                              "CT_LineProperties")


_EFFECTS = {
    # Shape.Shadow (ShadowFormat), Shape.Glow (GlowFormat), Shape.SoftEdge (SoftEdgeFormat)
    "shadow": lambda p: (f'<a:outerShdw {_NSDECL} blurRad="{int(p.get("blur", 50800))}" '
                         f'dist="{int(p.get("distance", 38100))}" '
                         f'dir="2700000" algn="tl" rotWithShape="0"><a:srgbClr val="{p.get("color", "000000")}">'
                         f'<a:alpha val="40000"/></a:srgbClr></a:outerShdw>'),
    "glow": lambda p: (f'<a:glow {_NSDECL} rad="{int(p["radius"])}"><a:srgbClr val="{p.get("color", "FFC000")}">'
                       f'<a:alpha val="60000"/></a:srgbClr></a:glow>'),
    "softEdge": lambda p: f'<a:softEdge {_NSDECL} rad="{int(p["radius"])}"/>',
}
_EFFECT_TAGS = {"shadow": "a:outerShdw", "glow": "a:glow", "softEdge": "a:softEdge"}


@operation("set_shape_effect")
def set_shape_effect(wd: WordDoc, target: dict, params: dict) -> None:
    """One effect of the shape's a:effectLst (in schema order), added or replaced; ``remove`` deletes it."""
    from benchwright.formats.ooxml.schema_order import get_or_add
    effect = params["effect"]
    for wsp in _shapes(wd, target):
        sppr = wsp.find(qn("wps:spPr"))
        lst = get_or_add(sppr, "a:effectLst", _DML + "CT_ShapeProperties")
        new = None if params.get("remove") else parse_xml(_EFFECTS[effect](params).encode())
        _replace_in_order(lst, (_EFFECT_TAGS[effect],), new, "CT_EffectList")


@operation("set_text_frame")
def set_text_frame(wd: WordDoc, target: dict, params: dict) -> None:
    """TextFrame: internal margins (wps:bodyPr l/t/r/bIns, EMU), vertical anchor, AutoSize
    (a:spAutoFit = resize the shape to fit its text)."""
    for wsp in _shapes(wd, target):
        body = wsp.find(qn("wps:bodyPr"))
        if body is None or wsp.find(qn("wps:txbx")) is None:
            from benchwright.wordeval.docmodel import PreconditionError
            raise PreconditionError(wd.locator, "the shape has no text frame")
        for side in ("lIns", "tIns", "rIns", "bIns"):
            if side in params:
                body.set(side, str(int(params[side])))
        if params.get("anchor"):
            body.set("anchor", params["anchor"])
        if "autosize" in params:
            fit = parse_xml(f'<a:{"spAutoFit" if params["autosize"] else "noAutofit"} {_NSDECL}/>'.encode())
            _replace_in_order(body, ("a:noAutofit", "a:normAutofit", "a:spAutoFit"), fit, "CT_TextBodyProperties")


@operation("set_text_box_text")
def set_text_box_text(wd: WordDoc, target: dict, params: dict) -> None:
    """TextFrame.TextRange.Text: the text box keeps its first paragraph (and that paragraph's
    first run formatting) with the new text; further paragraphs are removed."""
    from benchwright.wordeval.docmodel import make_run
    for wsp in _shapes(wd, target):
        content = wsp.find(".//" + qn("w:txbxContent"))
        paras = content.findall(qn("w:p"))
        first = paras[0]
        runs = first.findall(qn("w:r"))
        rpr = runs[0].find(qn("w:rPr")) if runs else None
        for r in runs:
            first.remove(r)
        first.append(make_run(params["text"], copy.deepcopy(rpr) if rpr is not None else None))
        for extra in paras[1:]:
            content.remove(extra)
