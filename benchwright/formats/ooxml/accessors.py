"""OOXML accessors: one object per location, shared by whatever reads or writes the value there.

A location ("locus") is an element path below a scope element, optionally ending in an attribute:
``w:pPr/w:ind@w:left`` (a paragraph's left indent), ``w:rPr/w:b`` (a run's bold, an on/off
element), ``w:pgMar@w:top`` (below a ``w:sectPr``), or a part and an element for the package
properties (``docProps/core.xml dc:title``).  :func:`accessor` gives the one :class:`Locus` for a
location (memoised), which finds the element, decodes the value as WordprocessingML defines it
(on/off values, hexadecimal colours, numbers, a hanging indent as a negative first-line indent,
a theme font before an explicit one) and writes it in schema order.  This is what python-docx's
``oxml`` element classes do for the elements they model (``CT_PPr.ind``, ``CT_Ind.left``); here the
same holds for any location a registry names, so a reader and a writer locate a value once.
"""
from __future__ import annotations

import re
from functools import lru_cache

from benchwright.formats.ooxml.ns import NS, qn
from benchwright.formats.ooxml.schema_order import get_or_add

_WNS = "{%s}" % NS["w"]
ONOFF_FALSE = {"0", "false", "off"}
_HEX = re.compile(r"^[0-9A-Fa-f]{6}$")
# the justification values Strict OOXML spells differently
JC_ALIASES = {"start": "left", "end": "right"}


def onoff(el) -> bool:
    """An ST_OnOff element's value: on unless ``w:val`` says 0 / false / off."""
    v = el.get(_WNS + "val")
    return v is None or v.lower() not in ONOFF_FALSE


def native_value(name: str, v: str):
    """An attribute value as a Python value: colours upper-case, integers, on/off as booleans."""
    if _HEX.match(v) and name in ("val", "color", "fill"):
        return v.upper()
    if v.lstrip("-").isdigit():
        return int(v)
    if v in ("true", "on"):
        return True
    if v in ("false", "off"):
        return False
    return v


def to_int(v):
    try:
        return int(v)
    except (TypeError, ValueError):
        try:
            return int(float(v))
        except (TypeError, ValueError):
            return v


def ind_values(el) -> dict:
    """A ``w:ind`` element as {"left", "right", "firstLine"}: ``start``/``end`` are the Strict
    names of left/right, and a hanging indent is a negative first-line indent (it wins over
    ``firstLine``, as in Word and python-docx's ``first_line_indent``)."""
    out = {}
    for k, v in el.attrib.items():
        if not k.startswith(_WNS):
            continue
        a = k[len(_WNS):]
        a = {"start": "left", "end": "right"}.get(a, a)
        if a == "hanging":
            out["firstLine"] = -to_int(v)
        elif a == "firstLine":
            if el.get(_WNS + "hanging") is None:
                out["firstLine"] = to_int(v)
        elif a in ("left", "right"):
            out[a] = to_int(v)
    return out


def font_value(el) -> str | None:
    """A ``w:rFonts`` element's font for Latin text: its theme font (``theme:minorHAnsi``) when it
    names one (a theme attribute supersedes the explicit one), else ``w:ascii``."""
    theme = el.get(_WNS + "asciiTheme")
    if theme:
        return "theme:" + theme
    return el.get(_WNS + "ascii") or None


class Locus:
    """The value at one location below a scope element (``w:pPr/w:ind@w:left``)."""

    def __init__(self, locus: str):
        path, _, attr = locus.partition("@")
        self.locus = locus
        self.names = tuple(s for s in path.split("/") if s)      # "w:pPr", "w:ind"
        self.steps = tuple(qn(s) for s in self.names)           # Clark names
        self.tag = self.steps[-1]                               # the element holding the value
        self.local = self.names[-1].split(":", 1)[1]
        self.attr_name = attr or None                           # "w:left"
        self.attr = qn(attr) if attr else None
        self.attr_local = attr.split(":", 1)[1] if attr else None

    def __repr__(self) -> str:
        return f"Locus({self.locus!r})"

    def find(self, base):
        """The element at this location below ``base``, or None."""
        el = base
        for step in self.steps:
            el = el.find(step)
            if el is None:
                return None
        return el

    def decode(self, el):
        """The value this location holds in ``el`` (the element at the end of the path), as
        WordprocessingML defines it; None when it is not set there."""
        if self.attr is None:
            return onoff(el)
        if self.local == "ind":
            return ind_values(el).get(self.attr_local)
        if self.local == "rFonts" and self.attr_local == "ascii":
            return font_value(el)
        v = el.get(self.attr)
        if v is None:
            return None
        if self.local == "jc":
            return JC_ALIASES.get(v, v)
        return native_value(self.attr_local, v)

    def get(self, base):
        """The value at this location below ``base`` (None when absent)."""
        el = self.find(base)
        return None if el is None else self.decode(el)

    def set(self, base, kind: str, value, also: dict | None = None) -> None:
        """Write ``value`` here, creating the path in schema order. ``kind`` "onoff" /
        "onoff_inverse" writes an on/off element (off as ``w:val="0"``); otherwise the attribute
        is set to ``str(value)``, and a None value removes the element. ``also``: attributes
        written with the value (a shading's pattern)."""
        el = base
        for name in self.names:
            el = get_or_add(el, name)
        if kind in ("onoff", "onoff_inverse"):
            on = bool(value) if kind == "onoff" else not bool(value)
            if on:
                el.attrib.pop(qn("w:val"), None)
            else:
                el.set(qn("w:val"), "0")
        elif value is None:
            el.getparent().remove(el)
            return
        else:
            el.set(self.attr or qn("w:val"), str(value))
        for k, v in (also or {}).items():
            el.set(qn(k), str(v))


class PartLocus(Locus):
    """A package-property location: a part and a child of its root (``docProps/core.xml dc:title``);
    the base is the part's root element. The value is the element's text (xsd:all: any order)."""

    def __init__(self, locus: str):
        part, _, name = locus.partition(" ")
        self.locus = locus
        self.part = part
        self.names = (name,)
        self.steps = (qn(name),)
        self.tag = self.steps[0]
        self.local = name.split(":", 1)[1]
        self.attr_name = self.attr = self.attr_local = None

    def decode(self, el):
        return (el.text or "").strip() or None

    def set(self, base, kind: str, value, also: dict | None = None) -> None:
        el = base.find(self.tag)
        if value is None:
            if el is not None:
                base.remove(el)
            return
        if el is None:
            el = base.makeelement(self.tag, nsmap=None)
            base.append(el)
        el.text = str(value)


@lru_cache(maxsize=None)
def accessor(locus: str) -> Locus:
    """The one accessor of a location (``w:rPr/w:b``, ``w:pgMar@w:top``, ``docProps/core.xml dc:title``)."""
    return PartLocus(locus) if " " in locus else Locus(locus)


def set_locus(base, locus: str, kind: str, value, also: dict | None = None) -> None:
    """Set a value at an OOXML locus like ``w:pPr/w:ind@w:left`` below ``base``, in schema order."""
    accessor(locus).set(base, kind, value, also)


__all__ = ["Locus", "PartLocus", "accessor", "set_locus", "onoff", "native_value", "to_int", "ind_values",
           "font_value", "JC_ALIASES", "ONOFF_FALSE"]
