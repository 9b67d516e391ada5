"""Drawings: extent, wrap, position, alt text, image hash, text box text and shape properties."""
from __future__ import annotations

import hashlib

from lxml import etree

from benchwright.formats.ooxml.ns import NS
from benchwright.wordeval.snapshot.common import _int, qn
from benchwright.wordeval.snapshot.records import Para
from benchwright.wordeval.text import ParagraphWalker, iter_block_paragraphs, plain, view


class _Drawings:
    """The extractor's drawings: one record per wp:inline / wp:anchor of a run."""

    def _drawings(self, r, part) -> list[dict]:
        out = []
        for d in r.iter(qn("w:drawing")):
            for kind_el in d:
                kind = etree.QName(kind_el).localname
                if kind not in ("inline", "anchor"):
                    continue
                rec: dict = {"kind": kind}
                ext = kind_el.find(qn("wp:extent"))
                if ext is not None:
                    rec["cx"] = _int(ext.get("cx"))
                    rec["cy"] = _int(ext.get("cy"))
                doc_pr = kind_el.find(qn("wp:docPr"))
                if doc_pr is not None:
                    for a in ("descr", "title"):
                        if doc_pr.get(a):
                            rec[a] = doc_pr.get(a)
                    if (doc_pr.get("hidden") or "0").lower() in ("1", "true"):
                        rec["hidden"] = True
                if kind == "anchor":
                    for wrap in ("wrapNone", "wrapSquare", "wrapTight", "wrapThrough", "wrapTopAndBottom"):
                        if kind_el.find(qn("wp:" + wrap)) is not None:
                            rec["wrap"] = wrap[4:]
                    if (kind_el.get("behindDoc") or "0") in ("1", "true"):
                        rec["behindDoc"] = True
                    for axis in ("positionH", "positionV"):
                        pos = kind_el.find(qn("wp:" + axis))
                        if pos is not None:
                            rec[axis + ".relativeFrom"] = pos.get("relativeFrom")
                            off = pos.find(qn("wp:posOffset"))
                            al = pos.find(qn("wp:align"))
                            if off is not None:
                                rec[axis + ".offset"] = _int(off.text)
                            if al is not None:
                                rec[axis + ".align"] = al.text
                blip = kind_el.find(".//" + qn("a:blip"))
                if blip is not None:
                    rid = blip.get(qn("r:embed"))
                    rec["image"] = self._image_hash(part, rid)
                txbx = kind_el.find(".//" + qn("w:txbxContent"))
                if txbx is not None:
                    rec["text"] = "\n".join(plain(x.text) for x in self._sub_story(txbx, part))
                wsp = kind_el.find(".//" + qn("wps:wsp"))
                if wsp is not None:
                    rec.update(_shape_props(wsp))
                out.append(rec)
        return out

    def _sub_story(self, container, part) -> list[Para]:
        walker = ParagraphWalker("final")
        return [self._paragraph(p, view(walker.pieces(p), "compare"), None, None, part)
                for p in iter_block_paragraphs(container)]

    def _image_hash(self, part: str, rid: str | None) -> str | None:
        if not rid:
            return None
        key = (part, rid)
        if key not in self._img_hash:
            rel = self.pkg.rel_map(part).get(rid)
            if rel is None or rel.external or rel.target_part not in self.pkg.members:
                self._img_hash[key] = "missing"
            else:
                self._img_hash[key] = hashlib.sha256(self.pkg.members[rel.target_part]).hexdigest()[:16]
        return self._img_hash[key]


_A = "{%s}" % NS["a"]
# defaults of a:bodyPr (ECMA-376 21.1.2.1.1) and a:ln@w (0: the thinnest line)
_BODY_DEFAULTS = {"lIns": 91440, "tIns": 45720, "rIns": 91440, "bIns": 45720}


def _color(parent) -> str | None:
    """The sRGB colour of a fill/colour parent (a:solidFill, a:glow ...), or its scheme colour name."""
    if parent is None:
        return None
    c = parent.find(_A + "srgbClr")
    if c is not None:
        return (c.get("val") or "").upper()
    c = parent.find(_A + "schemeClr")
    return f"scheme:{c.get('val')}" if c is not None else None


def _shape_props(wsp) -> dict:
    """What Word's Shape / TextFrame / FillFormat / LineFormat / effect objects report for a
    WordprocessingShape: preset geometry, text box flag, rotation, fill, outline, shadow, glow,
    soft edges, text frame margins, vertical anchor and autosize."""
    rec: dict = {}
    nv = wsp.find(qn("wps:cNvSpPr"))
    rec["shape.textbox"] = nv is not None and (nv.get("txBox") or "0") in ("1", "true")
    sppr = wsp.find(qn("wps:spPr"))
    if sppr is not None:
        geom = sppr.find(_A + "prstGeom")
        rec["shape.geometry"] = geom.get("prst") if geom is not None else "custom"
        xfrm = sppr.find(_A + "xfrm")
        rec["shape.rotation"] = _int(xfrm.get("rot")) if xfrm is not None and xfrm.get("rot") else 0
        if sppr.find(_A + "noFill") is not None:
            rec["fill"] = "none"
        elif sppr.find(_A + "solidFill") is not None:
            rec["fill"] = _color(sppr.find(_A + "solidFill"))
        ln = sppr.find(_A + "ln")
        if ln is not None:
            rec["line.weight"] = _int(ln.get("w")) if ln.get("w") else 0
            if ln.find(_A + "noFill") is not None:
                rec["line.color"] = "none"
            elif ln.find(_A + "solidFill") is not None:
                rec["line.color"] = _color(ln.find(_A + "solidFill"))
            dash = ln.find(_A + "prstDash")
            rec["line.dash"] = dash.get("val") if dash is not None else "solid"
        lst = sppr.find(_A + "effectLst")
        if lst is not None:
            sh = lst.find(_A + "outerShdw")
            if sh is not None:
                rec["shadow"] = True
                rec["shadow.blur"] = _int(sh.get("blurRad") or "0")
                rec["shadow.distance"] = _int(sh.get("dist") or "0")
                rec["shadow.color"] = _color(sh)
            gl = lst.find(_A + "glow")
            if gl is not None:
                rec["glow.radius"] = _int(gl.get("rad") or "0")
                rec["glow.color"] = _color(gl)
            se = lst.find(_A + "softEdge")
            if se is not None:
                rec["softEdge.radius"] = _int(se.get("rad") or "0")
    body = wsp.find(qn("wps:bodyPr"))
    if body is not None and wsp.find(qn("wps:txbx")) is not None:
        for k, d in _BODY_DEFAULTS.items():
            rec[f"frame.{k}"] = _int(body.get(k)) if body.get(k) else d
        rec["frame.anchor"] = body.get("anchor") or "t"
        rec["frame.autosize"] = body.find(_A + "spAutoFit") is not None
    return rec
