"""Operations of the fields units (``catalogue/units/08_fields.yaml``)."""
from __future__ import annotations

from benchwright.formats.ooxml import fields as oxml
from benchwright.formats.ooxml import run as runs_oxml
from benchwright.formats.ooxml.accessors import set_locus
from benchwright.wordeval.docmodel import AnchorError, WordDoc, make_run
from benchwright.wordeval.ops.common import (
    field_runs, find_fields, operation, paragraphs_for, runs_for, story_container,
)


def _field_span(info) -> list:
    """The field's elements in its paragraph (a field spanning paragraphs is not a target here)."""
    try:
        return oxml.field_span(info.begin, info.simple)
    except oxml.FieldSpanError:
        raise AnchorError("<field>", "field spans paragraphs") from None


@operation("insert_field")
def insert_field(wd: WordDoc, target: dict, params: dict) -> None:
    paras = paragraphs_for(wd, target)
    p = paras[-1]
    rpr = runs_oxml.last_text_properties(p)
    if params.get("prefix"):
        runs_oxml.append_runs(p, [make_run(params["prefix"], rpr)])
    runs_oxml.append_runs(p, field_runs(params["code"], params.get("result", ""), rpr, params.get("locked", False)))


@operation("edit_field_code")
def edit_field_code(wd: WordDoc, target: dict, params: dict) -> None:
    f = find_fields(wd, story_container(wd, target), target.get("field"))[0]
    oxml.set_code(f.begin, [] if f.simple else _field_span(f), f.simple, params["code"])


@operation("unlink_field")
def unlink_field(wd: WordDoc, target: dict, params: dict) -> None:
    for f in find_fields(wd, story_container(wd, target), target.get("field"))[:1]:
        oxml.unlink(f.begin, _field_span(f), f.simple)


@operation("lock_field")
def lock_field(wd: WordDoc, target: dict, params: dict) -> None:
    oxml.lock(find_fields(wd, story_container(wd, target), target.get("field"))[0].begin)


@operation("delete_field")
def delete_field(wd: WordDoc, target: dict, params: dict) -> None:
    f = find_fields(wd, story_container(wd, target), target.get("field"))[0]
    oxml.remove_span(_field_span(f))


@operation("insert_caption")
def insert_caption(wd: WordDoc, target: dict, params: dict) -> None:
    """Range.InsertCaption: "Label N: text" with a SEQ field, in the Caption style."""
    label = params.get("label", "Table")
    sid = wd.style_id("Caption", "paragraph") or wd.ensure_style(
        "Caption", "caption", "paragraph", based_on="Normal", extra="<w:next w:val=\"Normal\"/><w:qFormat/>",
        ppr='<w:pPr><w:spacing w:line="240" w:lineRule="auto"/></w:pPr>',
        rpr='<w:rPr><w:b/><w:bCs/><w:color w:val="4F81BD"/><w:sz w:val="18"/><w:szCs w:val="18"/></w:rPr>')
    p = oxml.styled_paragraph(sid)
    runs_oxml.append_runs(p, [make_run(label + " ")] + field_runs(f"SEQ {label} \\* ARABIC",
                                                                  str(params.get("number", 1)))
                          + [make_run(": " + params["text"])])
    if "table" in target:
        tbl = wd.table(target["table"])
        if params.get("position", "above") == "above":
            runs_oxml.insert_before(tbl, p)
        else:
            runs_oxml.insert_after(tbl, p)
    else:
        runs_oxml.insert_after(paragraphs_for(wd, target)[-1], p)


@operation("insert_cross_reference")
def insert_cross_reference(wd: WordDoc, target: dict, params: dict) -> None:
    p = paragraphs_for(wd, target)[-1]
    wd.bookmark(params["bookmark"])        # an anchor error when the document has no such bookmark
    result = params.get("result") or oxml.bookmarked_text(wd.bookmark(params["bookmark"]))
    if params.get("prefix"):
        runs_oxml.append_runs(p, [make_run(params["prefix"])])
    runs_oxml.append_runs(p, field_runs(f"REF {params['bookmark']} \\h", result))


# content controls


@operation("add_content_control")
def add_content_control(wd: WordDoc, target: dict, params: dict) -> None:
    properties = oxml.sdt_properties(params, oxml.next_sdt_id(wd.body))
    content = runs_for(wd, target) if "phrase" in target else [paragraphs_for(wd, target)[0]]
    oxml.wrap_in_sdt(content, properties)


def _sdt_by_tag(wd: WordDoc, tag: str):
    sdt = oxml.sdt_by_tag(wd.body, tag)
    if sdt is None:
        raise AnchorError(wd.locator, f"no content control tagged {tag!r}")
    return sdt


@operation("set_content_control")
def set_content_control(wd: WordDoc, target: dict, params: dict) -> None:
    pr = oxml.sdt_properties_of(_sdt_by_tag(wd, target["content_control"]))
    set_locus(pr, f"w:{params['property']}@w:val", "attr", params["value"])


@operation("remove_content_control")
def remove_content_control(wd: WordDoc, target: dict, params: dict) -> None:
    oxml.remove_sdt(_sdt_by_tag(wd, target["content_control"]))
