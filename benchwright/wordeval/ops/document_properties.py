"""Operations of the document properties units (``catalogue/units/14_document_properties.yaml``)."""
from __future__ import annotations

from docx.oxml.parser import parse_xml

from benchwright.formats.ooxml.elements import w_el
from benchwright.formats.ooxml.ns import NS, qn
from benchwright.formats.ooxml.schema_order import get_or_add
from benchwright.wordeval.docmodel import AnchorError, WordDoc
from benchwright.wordeval.ops.common import operation


_FMTID = "{D5CDD505-2E9C-101B-9397-08002B2CF9AE}"


_VT = {"string": "lpwstr", "number": "i4", "float": "r8", "bool": "bool", "date": "filetime"}


def _vt_value(vtype: str, value) -> str:
    if vtype == "bool":
        return "true" if value else "false"
    return str(value)


@operation("add_custom_property")
def add_custom_property(wd: WordDoc, target: dict, params: dict) -> None:
    root = wd.custom_props_el()
    pids = [int(p.get("pid")) for p in root if p.get("pid")]
    vt = _VT[params.get("type", "string")]
    el = parse_xml(
        (f'<op:property xmlns:op="{NS["op"]}" xmlns:vt="{NS["vt"]}" fmtid="{_FMTID}" '
         f'pid="{max(pids + [1]) + 1}" name="{params["name"]}"><vt:{vt}/></op:property>').encode())
    el[0].text = _vt_value(params.get("type", "string"), params["value"])
    root.append(el)


def _custom_prop(wd: WordDoc, name: str):
    root = wd.custom_props_el(create=False)
    for p in (root if root is not None else []):
        if p.get("name") == name:
            return p
    raise AnchorError(wd.locator, f"no custom property {name!r}")


@operation("set_custom_property")
def set_custom_property(wd: WordDoc, target: dict, params: dict) -> None:
    p = _custom_prop(wd, target["property"])
    p[0].text = _vt_value(params.get("type", "string"), params["value"])


@operation("delete_custom_property")
def delete_custom_property(wd: WordDoc, target: dict, params: dict) -> None:
    p = _custom_prop(wd, target["property"])
    p.getparent().remove(p)


@operation("set_document_variable")
def set_document_variable(wd: WordDoc, target: dict, params: dict) -> None:
    settings = wd.settings_el()
    dv = get_or_add(settings, "w:docVars")
    for v in dv.findall(qn("w:docVar")):
        if v.get(qn("w:name")) == params["name"]:
            if params.get("value") is None:
                dv.remove(v)
            else:
                v.set(qn("w:val"), params["value"])
            break
    else:
        if params.get("value") is not None:
            dv.append(w_el("w:docVar", name=params["name"], val=params["value"]))
    if not len(dv):
        settings.remove(dv)
