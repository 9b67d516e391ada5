"""Operations of the styles units (``catalogue/units/03_styles.yaml``)."""
from __future__ import annotations

from docx.shared import Pt, RGBColor, Twips

from benchwright.formats.ooxml.styles import remove_references
from benchwright.wordeval.docmodel import WordDoc
from benchwright.wordeval.ops.common import operation, paragraphs_for, runs_for


@operation("apply_char_style")
def apply_char_style(wd: WordDoc, target: dict, params: dict) -> None:
    """Range.Style = a character style; a built-in one the document lacks (Strong, Emphasis, ...) is
    added first, as Word does and as :func:`apply_paragraph_style` does for paragraph styles."""
    st = wd.style(params["style"], "character")
    for r in runs_for(wd, target):
        wd.run_proxy(r).style = st


@operation("apply_paragraph_style")
def apply_paragraph_style(wd: WordDoc, target: dict, params: dict) -> None:
    for p in paragraphs_for(wd, target):
        wd.proxy(p).style = wd.style(params["style"], "paragraph")


def _add_style(wd: WordDoc, name: str, kind: str, params: dict):
    from docx.enum.style import WD_STYLE_TYPE
    wtype = {"paragraph": WD_STYLE_TYPE.PARAGRAPH, "character": WD_STYLE_TYPE.CHARACTER}[kind]
    st = wd.doc.styles.add_style(name, wtype)
    if params.get("based_on"):
        st.base_style = wd.style(params["based_on"])
    st.quick_style = True
    f = st.font
    if params.get("bold") is not None:
        f.bold = params["bold"]
    if params.get("italic") is not None:
        f.italic = params["italic"]
    if params.get("color"):
        f.color.rgb = RGBColor.from_string(params["color"])
    if params.get("size"):
        f.size = Pt(params["size"] / 2)
    if kind == "paragraph":
        pf = st.paragraph_format
        if params.get("left_indent") is not None:
            pf.left_indent = Twips(params["left_indent"])
        if params.get("space_after") is not None:
            pf.space_after = Twips(params["space_after"])
    return st


@operation("add_paragraph_style")
def add_paragraph_style(wd: WordDoc, target: dict, params: dict) -> None:
    st = _add_style(wd, params["name"], "paragraph", params)
    for p in paragraphs_for(wd, target) if target else []:
        wd.proxy(p).style = st


@operation("add_character_style")
def add_character_style(wd: WordDoc, target: dict, params: dict) -> None:
    st = _add_style(wd, params["name"], "character", params)
    for r in runs_for(wd, target) if target else []:
        wd.run_proxy(r).style = st


@operation("delete_style")
def delete_style(wd: WordDoc, target: dict, params: dict) -> None:
    st = wd.style(target["style"], create=False)
    sid = st.style_id
    remove_references(wd._all_story_roots() + [wd.styles_el], sid)
    st.delete()
