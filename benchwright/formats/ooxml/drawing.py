"""DrawingML in WordprocessingML: pictures (``w:drawing/wp:inline`` or ``wp:anchor``), their size,
wrapping and position, and Word 2010+'s drawn shapes and text boxes (``wps:wsp`` inside
``mc:AlternateContent/mc:Choice Requires="wps"``). python-docx adds an inline picture
(``Run.add_picture``); WordEval's other picture and shape operations use these, and the XML stays
here, as python-docx keeps its own in ``docx.oxml.shape``.

No VML fallback is written for a shape (it is optional in ECMA-376 part 3 and would duplicate the
text box content): consumers that do not know wps (and the XSD gate, which applies markup
compatibility first) skip it; Word and LibreOffice read it."""
from __future__ import annotations

import copy
from xml.sax.saxutils import escape

from docx.oxml.parser import parse_xml

from benchwright.formats.ooxml.ns import NS, qn
from benchwright.formats.ooxml.run import make_run
from benchwright.formats.ooxml.schema_order import get_or_add, insert_child

WPS_URI = "http://schemas.microsoft.com/office/word/2010/wordprocessingShape"
_DML = "{%s}" % NS["a"]
_NSDECL = " ".join(f'xmlns:{p}="{NS[p]}"' for p in ("w", "wp", "a", "wps", "mc"))


# ------------------------------------------------------------------ finding pictures and shapes


def find_runs(body, descr: str | None, text: str | None, box_text) -> list:
    """The runs of ``body`` holding a drawing whose alternative text is ``descr``, or a text box whose
    text (``box_text(txbxContent)``) starts with ``text`` (many real documents give shapes no alt text);
    a run inside a text box is not the shape's own run."""
    found = []
    for r in body.iter(qn("w:r")):
        if r.getparent().tag == qn("w:p") and r.getparent().getparent().tag == qn("w:txbxContent"):
            continue
        for dp in r.iter(qn("wp:docPr")):
            if descr and dp.get("descr") == descr:
                found.append(r)
        if text and r.find(".//" + qn("w:drawing")) is not None:
            box = r.find(".//" + qn("w:drawing") + "//" + qn("w:txbxContent"))
            if box is not None and box_text(box).startswith(text):
                found.append(r)
    return found


def drawing_runs(p) -> list:
    """The runs of paragraph ``p`` that hold a drawing."""
    return [r for r in p.iter(qn("w:r")) if r.find(qn("w:drawing")) is not None]


def shapes(runs: list) -> list:
    """The drawn shapes and text boxes (``wps:wsp``) of ``runs``."""
    return [w for r in runs for w in r.iter(qn("wps:wsp"))]


# ------------------------------------------------------------------ pictures


def set_doc_properties(inline, drawing_id: int, descr: str | None) -> None:
    """A drawing's ``wp:docPr``: its id (unique across every story, for Word) and alternative text."""
    dp = inline.docPr
    dp.set("id", str(drawing_id))
    if descr:
        dp.set("descr", descr)


def resize(r, width: int | None, height: int | None, lock_aspect: bool) -> None:
    """Shape.Width / Height (EMU) of the drawing in run ``r``, the other side scaled with it when the
    aspect ratio is locked."""
    ext = r.find(".//" + qn("wp:extent"))
    cx, cy = int(ext.get("cx")), int(ext.get("cy"))
    if width is not None:
        ncx = int(width)
        ncy = int(round(cy * ncx / cx)) if lock_aspect else cy
    else:
        ncy = int(height)
        ncx = int(round(cx * ncy / cy)) if lock_aspect else cx
    ext.set("cx", str(ncx))
    ext.set("cy", str(ncy))
    for a_ext in r.iter(qn("a:ext")):
        if a_ext.getparent().tag == qn("a:xfrm"):
            a_ext.set("cx", str(ncx))
            a_ext.set("cy", str(ncy))


def set_doc_property(r, attribute: str, value: str) -> None:
    """An attribute of the ``wp:docPr`` of each drawing in run ``r`` (``descr``, ``title``, ``name``)."""
    for dp in r.iter(qn("wp:docPr")):
        dp.set(attribute, value)


_WRAP_XML = {
    "square": '<wp:wrapSquare xmlns:wp="{wp}" wrapText="bothSides"/>',
    "tight": ('<wp:wrapTight xmlns:wp="{wp}" wrapText="bothSides"><wp:wrapPolygon edited="0">'
              '<wp:start x="0" y="0"/><wp:lineTo x="0" y="21600"/><wp:lineTo x="21600" y="21600"/>'
              '<wp:lineTo x="21600" y="0"/><wp:lineTo x="0" y="0"/></wp:wrapPolygon></wp:wrapTight>'),
    "topAndBottom": '<wp:wrapTopAndBottom xmlns:wp="{wp}"/>',
    "none": '<wp:wrapNone xmlns:wp="{wp}"/>',
}
_WRAP_TAGS = ("wrapNone", "wrapSquare", "wrapTight", "wrapThrough", "wrapTopAndBottom")


def to_floating(r, params: dict) -> None:
    """ConvertToShape: the inline drawing of run ``r`` becomes a floating one (``wp:anchor``), offset by
    ``params`` left / top (EMU) from the column and the paragraph, wrapped as ``params['wrap']`` says
    ("behind": no wrapping, behind the text)."""
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


def set_wrap(r, wrap: str) -> None:
    """WrapFormat.Type of the floating drawing in run ``r`` ("behind": no wrapping, behind the text)."""
    anchor = r.find(".//" + qn("wp:anchor"))
    for tag in _WRAP_TAGS:
        old = anchor.find(qn("wp:" + tag))
        if old is not None:
            behind = wrap == "behind"
            old.getparent().replace(old, parse_xml(
                _WRAP_XML["none" if behind else wrap].format(wp=NS["wp"]).encode()))
            anchor.set("behindDoc", "1" if behind else "0")
            break


def set_position(r, offsets: dict) -> None:
    """Shape.Left / Top: the floating drawing's offsets (``{"left": EMU, "top": EMU}``, either)."""
    anchor = r.find(".//" + qn("wp:anchor"))
    for axis, key in (("positionH", "left"), ("positionV", "top")):
        if key in offsets:
            pos = anchor.find(qn("wp:" + axis))
            for c in list(pos):
                pos.remove(c)
            off = parse_xml(f'<wp:posOffset xmlns:wp="{NS["wp"]}">{int(offsets[key])}</wp:posOffset>'.encode())
            pos.append(off)


# ------------------------------------------------------------------ drawn shapes and text boxes


def _esc(text: str) -> str:
    return escape(text, {'"': "&quot;"})


def _solid_fill(color: str) -> str:
    return f'<a:solidFill {_NSDECL}><a:srgbClr val="{color}"/></a:solidFill>'


def shape_run(drawing_id: int, params: dict):
    """A run holding a floating shape (Shapes.AddShape) or, when ``params`` has a ``text``, a text box
    (Shapes.AddTextbox): square wrapping, offset ``left`` / ``top`` (EMU) from the column and the
    paragraph, ``width`` x ``height``, the preset ``geometry``, ``fill``, ``line`` colour and
    ``line_width``, the alternative text ``descr``."""
    cx, cy = int(params["width"]), int(params["height"])
    text = params.get("text")
    name = f"{'Text Box' if text is not None else 'Shape'} {drawing_id}"
    tx_box = ' txBox="1"' if text is not None else ""
    fill = _solid_fill(params["fill"]) if params.get("fill") else f'<a:noFill {_NSDECL}/>' \
        if text is None else _solid_fill("FFFFFF")
    line = params.get("line", "000000")
    txbx = "" if text is None else (
        f'<wps:txbx><w:txbxContent><w:p><w:r><w:t xml:space="preserve">{_esc(text)}</w:t></w:r></w:p>'
        f'</w:txbxContent></wps:txbx>')
    return parse_xml((
        f'<w:r {_NSDECL}><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing>'
        f'<wp:anchor distT="0" distB="0" distL="114300" distR="114300" simplePos="0" '
        f'relativeHeight="{251659264 + drawing_id}" behindDoc="0" locked="0" layoutInCell="1" allowOverlap="1">'
        f'<wp:simplePos x="0" y="0"/>'
        f'<wp:positionH relativeFrom="column"><wp:posOffset>{int(params.get("left", 0))}</wp:posOffset></wp:positionH>'
        f'<wp:positionV relativeFrom="paragraph"><wp:posOffset>{int(params.get("top", 0))}</wp:posOffset>'
        f'</wp:positionV>'
        f'<wp:extent cx="{cx}" cy="{cy}"/><wp:effectExtent l="0" t="0" r="0" b="0"/>'
        f'<wp:wrapSquare wrapText="bothSides"/>'
        f'<wp:docPr id="{drawing_id}" name="{name}" descr="{_esc(params.get("descr") or "")}"/><wp:cNvGraphicFramePr/>'
        f'<a:graphic><a:graphicData uri="{WPS_URI}"><wps:wsp>'
        f'<wps:cNvSpPr{tx_box}/>'
        f'<wps:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="{cx}" cy="{cy}"/></a:xfrm>'
        f'<a:prstGeom prst="{params.get("geometry", "rect")}"><a:avLst/></a:prstGeom>'
        f'{fill}<a:ln w="{int(params.get("line_width", 9525))}">{_solid_fill(line)}</a:ln></wps:spPr>'
        f'{txbx}<wps:bodyPr rot="0" vert="horz" wrap="square" lIns="91440" tIns="45720" rIns="91440" '
        f'bIns="45720" anchor="t" anchorCtr="0"><a:noAutofit/></wps:bodyPr>'
        f'</wps:wsp></a:graphicData></a:graphic></wp:anchor></w:drawing></mc:Choice></mc:AlternateContent></w:r>'
    ).encode())


def _replace_in_order(parent, tags: tuple[str, ...], new, ctype: str) -> None:
    """Remove the children ``tags`` (alternatives of one choice) and insert ``new`` in schema order."""
    for t in tags:
        for old in parent.findall(qn(t)):
            parent.remove(old)
    if new is not None:
        insert_child(parent, new, _DML + ctype)


_FILLS = ("a:noFill", "a:solidFill", "a:gradFill", "a:blipFill", "a:pattFill", "a:grpFill")


def set_fill(wsp, color: str | None) -> None:
    """Shape.Fill.ForeColor.RGB (solid fill) or, without a colour, Shape.Fill.Visible = False (no fill)."""
    sppr = wsp.find(qn("wps:spPr"))
    new = parse_xml(_solid_fill(color).encode()) if color else parse_xml(f'<a:noFill {_NSDECL}/>'.encode())
    _replace_in_order(sppr, _FILLS, new, "CT_ShapeProperties")


def set_line(wsp, weight=None, color: str | None = None, dash: str | None = None) -> None:
    """Shape.Line: Weight (a:ln@w, EMU), ForeColor (a:ln/a:solidFill) and DashStyle (a:prstDash), each
    when given."""
    sppr = wsp.find(qn("wps:spPr"))
    ln = get_or_add(sppr, "a:ln", _DML + "CT_ShapeProperties")
    if weight is not None:
        ln.set("w", str(int(weight)))
    if color:
        _replace_in_order(ln, _FILLS[:4] + ("a:pattFill",), parse_xml(_solid_fill(color).encode()),
                          "CT_LineProperties")
    if dash:
        _replace_in_order(ln, ("a:prstDash", "a:custDash"),
                          parse_xml(f'<a:prstDash {_NSDECL} val="{dash}"/>'.encode()), "CT_LineProperties")


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


def set_effect(wsp, effect: str, params: dict, remove: bool = False) -> None:
    """One effect ("shadow", "glow", "softEdge") of the shape's ``a:effectLst`` (in schema order), added or
    replaced with ``params`` (blur, distance, radius, color); ``remove`` deletes it."""
    sppr = wsp.find(qn("wps:spPr"))
    lst = get_or_add(sppr, "a:effectLst", _DML + "CT_ShapeProperties")
    new = None if remove else parse_xml(_EFFECTS[effect](params).encode())
    _replace_in_order(lst, (_EFFECT_TAGS[effect],), new, "CT_EffectList")


def has_text_frame(wsp) -> bool:
    """Whether the shape is a text box (``wps:txbx`` and ``wps:bodyPr``)."""
    return wsp.find(qn("wps:bodyPr")) is not None and wsp.find(qn("wps:txbx")) is not None


def set_text_frame(wsp, insets: dict, anchor: str | None = None, autosize: bool | None = None) -> None:
    """TextFrame: internal margins (``insets`` of wps:bodyPr lIns / tIns / rIns / bIns, EMU), vertical
    ``anchor``, AutoSize (a:spAutoFit = resize the shape to fit its text; False: a:noAutofit)."""
    body = wsp.find(qn("wps:bodyPr"))
    for side in ("lIns", "tIns", "rIns", "bIns"):
        if side in insets:
            body.set(side, str(int(insets[side])))
    if anchor:
        body.set("anchor", anchor)
    if autosize is not None:
        fit = parse_xml(f'<a:{"spAutoFit" if autosize else "noAutofit"} {_NSDECL}/>'.encode())
        _replace_in_order(body, ("a:noAutofit", "a:normAutofit", "a:spAutoFit"), fit, "CT_TextBodyProperties")


def set_text_box_text(wsp, text: str) -> None:
    """TextFrame.TextRange.Text: the text box keeps its first paragraph (and that paragraph's first
    run formatting) with the new text; further paragraphs are removed."""
    content = wsp.find(".//" + qn("w:txbxContent"))
    paras = content.findall(qn("w:p"))
    first = paras[0]
    runs = first.findall(qn("w:r"))
    rpr = runs[0].find(qn("w:rPr")) if runs else None
    for r in runs:
        first.remove(r)
    first.append(make_run(text, copy.deepcopy(rpr) if rpr is not None else None))
    for extra in paras[1:]:
        content.remove(extra)


__all__ = ["WPS_URI", "find_runs", "drawing_runs", "shapes", "set_doc_properties", "resize", "set_doc_property",
           "to_floating", "set_wrap", "set_position", "shape_run", "set_fill", "set_line", "set_effect",
           "has_text_frame", "set_text_frame", "set_text_box_text"]
