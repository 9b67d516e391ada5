"""Custom document properties (``docProps/custom.xml``: ``op:property`` with a ``vt:`` value) and
document variables (``w:settings/w:docVars``), which python-docx does not model (its
``CoreProperties`` covers the core part only). WordEval's document-property operations use these,
and the XML stays here, as python-docx keeps its own in ``docx.oxml``."""
from __future__ import annotations

from docx.oxml.parser import parse_xml

from benchwright.formats.ooxml.elements import w_el
from benchwright.formats.ooxml.ns import NS, qn
from benchwright.formats.ooxml.schema_order import get_or_add

_FMTID = "{D5CDD505-2E9C-101B-9397-08002B2CF9AE}"
# the vt: element of each value type
_VT = {"string": "lpwstr", "number": "i4", "float": "r8", "bool": "bool", "date": "filetime"}


def _vt_value(vtype: str, value) -> str:
    if vtype == "bool":
        return "true" if value else "false"
    return str(value)


def add_custom_property(root, name: str, vtype: str, value) -> None:
    """CustomDocumentProperties.Add: property ``name`` of ``vtype`` ("string", "number", "float", "bool",
    "date") with the next free pid."""
    pids = [int(p.get("pid")) for p in root if p.get("pid")]
    vt = _VT[vtype]
    el = parse_xml(
        (f'<op:property xmlns:op="{NS["op"]}" xmlns:vt="{NS["vt"]}" fmtid="{_FMTID}" '
         f'pid="{max(pids + [1]) + 1}" name="{name}"><vt:{vt}/></op:property>').encode())
    el[0].text = _vt_value(vtype, value)
    root.append(el)


def custom_property(root, name: str):
    """The custom property named ``name`` (``root``: the custom properties part's root, or None), or None."""
    for p in (root if root is not None else []):
        if p.get("name") == name:
            return p
    return None


def set_custom_property(prop, vtype: str, value) -> None:
    """A custom property's value (its ``vt:`` element's text, the type unchanged)."""
    prop[0].text = _vt_value(vtype, value)


def set_document_variable(settings, name: str, value: str | None) -> None:
    """Variables(name).Value: set, added, or (None) deleted; an emptied ``w:docVars`` goes."""
    dv = get_or_add(settings, "w:docVars")
    for v in dv.findall(qn("w:docVar")):
        if v.get(qn("w:name")) == name:
            if value is None:
                dv.remove(v)
            else:
                v.set(qn("w:val"), value)
            break
    else:
        if value is not None:
            dv.append(w_el("w:docVar", name=name, val=value))
    if not len(dv):
        settings.remove(dv)


__all__ = ["add_custom_property", "custom_property", "set_custom_property", "set_document_variable"]
