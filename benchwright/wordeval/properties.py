"""The property registry (``catalogue/properties.yaml``) over the shared OOXML accessors.

Each Word property the registry names (``Font.Bold``, ``ParagraphFormat.LeftIndent``,
``PageSetup.TopMargin`` ...) is a :class:`Property`: its scope (the document object it lives on),
its value kind and its location, resolved once to the location's accessor
(:func:`benchwright.formats.ooxml.accessors.accessor`, one per ``locus``).  Both sides go through it,
the way python-docx layers proxies over its ``oxml`` element classes:

* writing: ``ops.set_property`` calls :meth:`Property.write` (python-docx's proxy attribute when the
  registry names one, which writes the same element, else the accessor),
* reading: the snapshot decodes every element a registered location names with that location's
  accessor (:func:`claims`), at every level of the style cascade (document defaults, styles,
  numbering levels, direct formatting), and reads style, table-style and settings values with it.
"""
from __future__ import annotations

import importlib
from functools import lru_cache
from pathlib import Path

from docx.shared import Emu, Pt, RGBColor, Twips

from benchwright import strict_yaml
from benchwright.formats.ooxml.accessors import Locus, accessor
from benchwright.formats.ooxml.ns import qn

# the packaged registry (the catalogue loader reads the same file with the units that use it)
REGISTRY = Path(__file__).with_name("catalogue") / "properties.yaml"
# The element a scope's locations start from (a single-step location such as w:pgMar@w:top lives
# directly below it); "run" and "paragraph" locations start with their property container.
SCOPE_ELEMENT = {"run": "w:r", "paragraph": "w:p", "style": "w:style", "table": "w:tbl", "row": "w:tr",
                 "cell": "w:tc", "section": "w:sectPr", "settings": "w:settings", "core": "cp:coreProperties"}


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


class Property:
    """One registered Word property: ``spec`` is its registry entry."""

    def __init__(self, spec: dict):
        self.spec = spec
        self.scope: str = spec["scope"]
        self.kind: str = spec["kind"]
        self.locus: Locus = accessor(spec["locus"])
        steps = self.locus.steps
        # the property container the location names (w:rPr, w:pPr, w:tblPr, ...) or the scope element
        self.container = steps[0] if len(steps) > 1 else qn(SCOPE_ELEMENT[self.scope])

    def get(self, scope_el):
        """The value set directly on ``scope_el`` (the run, paragraph, style, section ...), None if unset."""
        return self.locus.get(scope_el)

    def write(self, wd, el, proxy, value) -> None:
        """Set the property on one object: ``el`` its element, ``proxy`` its python-docx object."""
        spec, kind = self.spec, self.kind
        if spec.get("python_docx") and proxy is not None and (kind != "enum" or spec.get("docx_enum")):
            obj, attr = _resolve_attr(proxy, spec["python_docx"])
            if kind == "style_ref":
                setattr(obj, attr, wd.style(value) if value is not None else None)
            else:
                setattr(obj, attr, _docx_value(kind, value, spec))
        elif kind == "style_ref":
            self.locus.set(el, "attr", wd.style_id(value) or value)
        else:
            self.locus.set(el, kind, value, spec.get("also"))
        if spec.get("clear_theme_fonts") and el is not None:
            # Word drops the theme-font attributes when a font is chosen explicitly (theme
            # attributes would otherwise win over w:ascii)
            for rfonts in el.iter(qn("w:rFonts")):
                for a in ("w:asciiTheme", "w:hAnsiTheme"):
                    rfonts.attrib.pop(qn(a), None)
                if rfonts.get(qn("w:ascii")):
                    rfonts.set(qn("w:hAnsi"), rfonts.get(qn("w:ascii")))


def property_for(spec: dict) -> Property:
    """The :class:`Property` of a registry entry (as a unit's parameters carry it)."""
    return Property(spec)


@lru_cache(maxsize=1)
def registry() -> dict[str, Property]:
    """Every property of the packaged registry by its Word name (``Font.Bold``)."""
    with open(REGISTRY, encoding="utf-8") as f:
        specs = strict_yaml.load(f)["properties"]
    return {com: Property({**spec, "com": com}) for com, spec in specs.items()}


@lru_cache(maxsize=1)
def claims() -> dict[str, dict[str, tuple[Locus, ...]]]:
    """{container tag: {child tag: the accessors of registered locations in that child}} (Clark
    names): which accessor decodes an element found in a property container (a run's or a style's
    ``w:rPr``, a ``w:sectPr``, ``w:settings`` ...). Several properties sharing a location share one."""
    out: dict[str, dict[str, list[Locus]]] = {}
    for prop in registry().values():
        if prop.scope == "core":
            continue   # the package properties are read in their part (``core_accessors``)
        child = prop.locus.steps[1] if len(prop.locus.steps) > 1 else prop.locus.steps[0]
        found = out.setdefault(prop.container, {}).setdefault(child, [])
        if prop.locus not in found:
            found.append(prop.locus)
    return {c: {t: tuple(v) for t, v in m.items()} for c, m in out.items()}


@lru_cache(maxsize=1)
def core_accessors() -> dict[str, Locus]:
    """{element tag: accessor} of the registered package properties (``dc:title`` ...)."""
    return {p.locus.tag: p.locus for p in registry().values() if p.scope == "core"}


__all__ = ["Property", "property_for", "registry", "claims", "core_accessors", "SCOPE_ELEMENT"]
