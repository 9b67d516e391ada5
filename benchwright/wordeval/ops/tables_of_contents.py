"""Operations of the tables of contents units (``catalogue/units/15_tables_of_contents.yaml``)."""
from __future__ import annotations

import copy
import re

from benchwright.formats.ooxml.elements import w_el
from benchwright.formats.ooxml.ns import qn
from benchwright.formats.ooxml.schema_order import get_or_add, insert_child
from benchwright.wordeval import text as T
from benchwright.wordeval.docmodel import AnchorError, WordDoc, make_run
from benchwright.wordeval.ops.common import field_runs, find_fields, operation, paragraphs_for


def _heading_level(wd: WordDoc, p) -> int | None:
    ppr = p.find(qn("w:pPr"))
    ps = ppr.find(qn("w:pStyle")) if ppr is not None else None
    if ps is None:
        return None
    sid = ps.get(qn("w:val"))
    for st in wd.styles_el.findall(qn("w:style")):
        if st.get(qn("w:styleId")) == sid:
            name = st.find(qn("w:name")).get(qn("w:val")).lower()
            m = re.fullmatch(r"heading ([1-9])", name)
            return int(m.group(1)) if m else None
    return None


def _toc_entries(wd: WordDoc, switches: str) -> list[tuple[int, str]]:
    m = re.search(r'\\o\s+"(\d)-(\d)"', switches)
    lo, hi = (int(m.group(1)), int(m.group(2))) if m else (1, 3)
    cap = re.search(r'\\c\s+"([^"]+)"', switches)
    out = []
    for p in T.iter_block_paragraphs(wd.body):
        if cap:
            if any(T.field_type(f.code) == "SEQ" and cap.group(1) in f.code for f in find_fields(wd, p, None)):
                out.append((1, T.paragraph_read_text(p)))
            continue
        lvl = _heading_level(wd, p)
        if lvl is not None and lo <= lvl <= hi:
            out.append((lvl, T.paragraph_read_text(p)))
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
        p = w_el("w:p")
        ppr = w_el("w:pPr")
        ppr.append(w_el("w:pStyle", val=sids[min(lvl, 3)]))
        if not no_pages:
            # the right-aligned, dot-leader tab for the page number sits on each TOC paragraph, as Word writes it
            tabs = w_el("w:tabs")               # after w:pStyle in CT_PPr order
            tabs.append(w_el("w:tab", val="right", leader="dot", pos=9350))
            ppr.append(tabs)
        p.append(ppr)
        if i == 0:
            for r in field_runs(code, "")[:3]:
                p.append(r)
        p.append(make_run(text if no_pages else text + "\t1"))
        paras.append(p)
    end = w_el("w:r")
    end.append(w_el("w:fldChar", fldCharType="end"))
    paras[-1].append(end)
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
        p.addprevious(q)


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


_RANGE_MARKS = {qn("w:bookmarkStart"): qn("w:bookmarkEnd"), qn("w:commentRangeStart"): qn("w:commentRangeEnd"),
                qn("w:permStart"): qn("w:permEnd")}
_RANGE_MARKS.update({v: k for k, v in list(_RANGE_MARKS.items())})


def _top_child(p, el):
    while el.getparent() is not p:
        el = el.getparent()
    return el


def _field_end(f):
    """The ``end`` fldChar of a complex field that may span paragraphs."""
    depth, on = 0, False
    for p in f.paragraphs:
        for fc in p.iter(qn("w:fldChar")):
            on = on or fc is f.begin
            if not on:
                continue
            t = fc.get(qn("w:fldCharType"))
            depth += 1 if t == "begin" else -1 if t == "end" else 0
            if depth == 0:
                return fc
    raise AnchorError("<field>", "field has no end")


def _replace_field_paragraphs(wd: WordDoc, f, new_paras: list) -> None:
    """Replace a multi-paragraph field (a TOC) by ``new_paras`` as Word replaces the field's range:
    what precedes the field in its first paragraph and follows it in its last stays; the last
    paragraph's mark stays with its section break (deleting it would merge two sections); a
    bookmark / comment / permission range with one end inside the field keeps that end, moved to
    where the field was."""
    if f.simple:
        raise AnchorError(wd.locator, "a table of contents spans paragraphs")
    paras = f.paragraphs
    first, last = paras[0], paras[-1]
    begin_top, end_top = _top_child(first, f.begin), _top_child(last, _field_end(f))
    before = [c for c in begin_top.itersiblings(preceding=True) if c.tag != qn("w:pPr")][::-1]
    after = list(end_top.itersiblings())
    keep = {id(c) for c in before + after}
    removed = [c for p in paras for c in p if c.tag != qn("w:pPr") and id(c) not in keep]
    inside = {(m.tag, m.get(qn("w:id"))) for c in removed for m in c.iter(*_RANGE_MARKS)}
    marks = [m for c in removed for m in c.iter(*_RANGE_MARKS)
             if (_RANGE_MARKS[m.tag], m.get(qn("w:id"))) not in inside]
    last_ppr = last.find(qn("w:pPr"))
    sect = last_ppr.find(qn("w:sectPr")) if last_ppr is not None else None
    if not new_paras and (before or after or marks or sect is not None):
        new_paras = [w_el("w:p")]       # the surviving paragraph mark
        if last_ppr is not None:
            new_paras[0].append(copy.deepcopy(last_ppr))
    elif new_paras and sect is not None:
        insert_child(get_or_add(new_paras[-1], "w:pPr"), copy.deepcopy(sect))
    if new_paras:
        head, tail = new_paras[0], new_paras[-1]
        ppr = head.find(qn("w:pPr"))
        pos = head.index(ppr) + 1 if ppr is not None else 0
        for c in before + marks:
            head.insert(pos, c)
            pos += 1
        for c in after:
            tail.append(c)
    container = first.getparent()
    for q in new_paras:
        first.addprevious(q)
    for p in paras:
        parent = p.getparent()
        parent.remove(p)
        if parent.tag == qn("w:sdtContent") and not len(parent) and parent is not container:
            sdt = parent.getparent()
            sdt.getparent().remove(sdt)
    if container.tag == qn("w:sdtContent") and not len(container):
        sdt = container.getparent()         # Word's "Table of Contents" content control, now empty
        sdt.getparent().remove(sdt)


@operation("mark_toc_entry")
def mark_toc_entry(wd: WordDoc, target: dict, params: dict) -> None:
    p = paragraphs_for(wd, target)[0]
    for r in field_runs(f'TC "{params["text"]}" \\l {params.get("level", 1)}', ""):
        p.append(r)
