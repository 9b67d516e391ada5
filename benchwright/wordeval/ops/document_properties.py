"""Operations of the document properties units (``catalogue/units/14_document_properties.yaml``)."""
from __future__ import annotations

from benchwright.formats.ooxml import docprops as oxml
from benchwright.formats.ooxml.elements import detach
from benchwright.wordeval.docmodel import AnchorError, WordDoc
from benchwright.wordeval.ops.common import operation


@operation("add_custom_property")
def add_custom_property(wd: WordDoc, target: dict, params: dict) -> None:
    oxml.add_custom_property(wd.custom_props_el(), params["name"], params.get("type", "string"), params["value"])


def _custom_prop(wd: WordDoc, name: str):
    prop = oxml.custom_property(wd.custom_props_el(create=False), name)
    if prop is None:
        raise AnchorError(wd.locator, f"no custom property {name!r}")
    return prop


@operation("set_custom_property")
def set_custom_property(wd: WordDoc, target: dict, params: dict) -> None:
    oxml.set_custom_property(_custom_prop(wd, target["property"]), params.get("type", "string"), params["value"])


@operation("delete_custom_property")
def delete_custom_property(wd: WordDoc, target: dict, params: dict) -> None:
    detach(_custom_prop(wd, target["property"]))


@operation("set_document_variable")
def set_document_variable(wd: WordDoc, target: dict, params: dict) -> None:
    oxml.set_document_variable(wd.settings_el(), params["name"], params.get("value"))
