"""Operations of the tables of contents units (``catalogue/units/15_tables_of_contents.yaml``)."""
from __future__ import annotations

import re

from benchwright.formats.ooxml import toc as oxml
from benchwright.formats.ooxml.fields import FieldSpanError, end_run
from benchwright.formats.ooxml.run import append_runs, insert_before
from benchwright.formats.ooxml.styles import paragraph_style_id, style_element, style_name
from benchwright.wordeval import text as T
from benchwright.wordeval.docmodel import AnchorError, WordDoc, make_run
from benchwright.wordeval.ops.common import field_runs, find_fields, operation, paragraphs_for


def _heading_level(wd: WordDoc, p) -> int | None:
    sid = paragraph_style_id(p)
    if sid is None:
        return None
    st = style_element(wd.styles_el, sid)
    if st is None:
        return None
    m = re.fullmatch(r"heading ([1-9])", style_name(st).lower())
    return int(m.group(1)) if m else None


def _toc_entries(wd: WordDoc, switches: str) -> list[tuple[int, str]]:
    m = re.search(r'\\o\s+"(\d)-(\d)"', switches)
    lo, hi = (int(m.group(1)), int(m.group(2))) if m else (1, 3)
    cap = re.search(r'\\c\s+"([^"]+)"', switches)
    out = []
    for p in T.iter_block_paragraphs(wd.body):
        if cap:
            if any(T.field_type(f.code) == "SEQ" and cap.group(1) in f.code for f in find_fields(wd, p, None)):
                out += [(1, T.paragraph_read_text(p))]
            continue
        lvl = _heading_level(wd, p)
        if lvl is not None and lo <= lvl <= hi:
            out += [(lvl, T.paragraph_read_text(p))]
    return out


def _toc_paragraphs(wd: WordDoc, code: str) -> list:
    # Word's built-in "toc N" styles (added when the document lacks them)
    sids = {lvl: wd.style(f"TOC {lvl}", "paragraph").style_id for lvl in range(1, 4)}
    entries = _toc_entries(wd, code)
    no_pages = "\\n" in code
    paras = []
    if not entries:
        entries = [(1, "No table of contents entries found.")]
    for i, (lvl, text) in enumerate(entries):
        p = oxml.entry_paragraph(sids[min(lvl, 3)], page_tab=not no_pages)
        if i == 0:
            append_runs(p, field_runs(code, "")[:3])
        append_runs(p, [make_run(text if no_pages else text + "\t1")])
        paras += [p]
    append_runs(paras[-1], [end_run()])
    return paras


def _toc_field(wd: WordDoc, ftype_filter: str = "TOC"):
    walker = T.ParagraphWalker()
    for p in T.iter_block_paragraphs(wd.body):
        walker.pieces(p)
    for f in walker.fields:
        if T.field_type(f.code) == ftype_filter and (ftype_filter != "TOC" or "\\c" not in f.code):
            return f
    raise AnchorError(wd.locator, "no table of contents")


@operation("insert_toc")
def insert_toc(wd: WordDoc, target: dict, params: dict) -> None:
    p = paragraphs_for(wd, target)[0]
    code = params.get("code", 'TOC \\o "1-3" \\h \\z \\u')
    for q in _toc_paragraphs(wd, code):
        insert_before(p, q)


@operation("update_toc")
def update_toc(wd: WordDoc, target: dict, params: dict) -> None:
    f = _toc_field(wd, "TOC")
    code = params.get("code") or T.normalize_field_code(f.code)
    if params.get("set_levels"):
        code = re.sub(r'\\o\s+"\d-\d"', f'\\\\o "{params["set_levels"]}"', code)
    if params.get("remove_switch"):
        code = code.replace(" " + params["remove_switch"], "")
    if params.get("add_switch") and params["add_switch"] not in code:
        code = code + " " + params["add_switch"]
    _replace_field_paragraphs(wd, f, _toc_paragraphs(wd, code))


@operation("delete_toc")
def delete_toc(wd: WordDoc, target: dict, params: dict) -> None:
    _replace_field_paragraphs(wd, _toc_field(wd, "TOC"), [])


def _replace_field_paragraphs(wd: WordDoc, f, new_paras: list) -> None:
    """Replace a multi-paragraph field (a TOC) by ``new_paras`` as Word replaces the field's range
    (:func:`benchwright.formats.ooxml.toc.replace_field_paragraphs`)."""
    if f.simple:
        raise AnchorError(wd.locator, "a table of contents spans paragraphs")
    try:
        oxml.replace_field_paragraphs(f.paragraphs, f.begin, new_paras)
    except FieldSpanError as exc:
        raise AnchorError("<field>", str(exc)) from None


@operation("mark_toc_entry")
def mark_toc_entry(wd: WordDoc, target: dict, params: dict) -> None:
    p = paragraphs_for(wd, target)[0]
    append_runs(p, field_runs(f'TC "{params["text"]}" \\l {params.get("level", 1)}', ""))
