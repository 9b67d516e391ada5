"""The generic ``set_property`` operation: one Word property described by the catalogue's
property registry (``catalogue/properties.yaml``), set on every object the target resolves to."""
from __future__ import annotations

import importlib

from docx.shared import Emu, Pt, RGBColor, Twips

from benchwright.formats.ooxml.ns import qn
from benchwright.formats.ooxml.schema_order import insert_child
from benchwright.wordeval.docmodel import WordDoc, w_el
from benchwright.wordeval.ops.common import operation, scope_objects, set_locus


def _resolve_attr(obj, path: str):
    parts = path.split(".")
    for p in parts[:-1]:
        obj = getattr(obj, p)
    return obj, parts[-1]


def _docx_value(kind: str, value, spec: dict):
    if value is None:
        return None
    if kind == "twips":
        return Twips(int(value))
    if kind == "half_points":
        return Pt(value / 2)
    if kind == "emu":
        return Emu(int(value))
    if kind == "color":
        return RGBColor.from_string(value)
    if kind == "enum":
        mod, _, cls = spec["docx_enum"].rpartition(".")
        enum_cls = getattr(importlib.import_module(mod), cls)
        return getattr(enum_cls, spec["docx_values"][value])
    if kind == "onoff_inverse":
        return not value
    return value


# The page margins Word (and LibreOffice's import) use for a section without w:pgMar.
WORD_DEFAULT_PGMAR = (("top", 1440), ("right", 1800), ("bottom", 1440), ("left", 1800), ("header", 720),
                      ("footer", 720), ("gutter", 0))


def ensure_pgmar(sect_pr) -> None:
    """A section without ``w:pgMar`` gets all seven margins (every attribute of CT_PageMar is
    required; python-docx would write only the one it sets) at the values Word used for it."""
    if sect_pr.find(qn("w:pgMar")) is None:
        insert_child(sect_pr, w_el("w:pgMar", **dict(WORD_DEFAULT_PGMAR)))


@operation("set_property")
def set_property(wd: WordDoc, target: dict, params: dict) -> None:
    """Generic: set one Word property (described by ``params['spec']``) to ``params['value']``."""
    spec = params["spec"]
    value = params["value"]
    kind = spec["kind"]
    for el, proxy in scope_objects(wd, spec["scope"], target):
        if spec["scope"] == "section" and spec.get("locus", "").startswith("w:pgMar"):
            ensure_pgmar(el)
        if spec.get("python_docx") and proxy is not None and (kind != "enum" or spec.get("docx_enum")):
            obj, attr = _resolve_attr(proxy, spec["python_docx"])
            if kind == "style_ref":
                setattr(obj, attr, wd.style(value) if value is not None else None)
            else:
                setattr(obj, attr, _docx_value(kind, value, spec))
        elif kind == "style_ref":
            set_locus(el, spec["locus"], "attr", wd.style_id(value) or value)
        else:
            set_locus(el, spec["locus"], kind, value, spec.get("also"))
        if spec.get("clear_theme_fonts") and el is not None:
            # Word drops the theme-font attributes when a font is chosen explicitly (theme
            # attributes would otherwise win over w:ascii)
            for rfonts in el.iter(qn("w:rFonts")):
                for a in ("w:asciiTheme", "w:hAnsiTheme"):
                    rfonts.attrib.pop(qn(a), None)
                if rfonts.get(qn("w:ascii")):
                    rfonts.set(qn("w:hAnsi"), rfonts.get(qn("w:ascii")))
