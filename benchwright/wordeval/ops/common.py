"""Shared by every subsystem's operations: the ``operation`` marker, anchors resolved to the
elements an operation edits (paragraphs, runs, cells, sections, scopes) and the fields of a story;
``field_runs`` and ``unwrap`` (:mod:`benchwright.formats.ooxml.fields`, :mod:`~benchwright.formats.ooxml.elements`)
are named here for the subsystems that share them."""
from __future__ import annotations

from benchwright.formats.ooxml import table as table_oxml
from benchwright.formats.ooxml.elements import unwrap
from benchwright.formats.ooxml.fields import field_runs
from benchwright.wordeval import text as T
from benchwright.wordeval.docmodel import AnchorError, PreconditionError, WordDoc


def operation(name: str):
    """Mark ``fn`` as the Word command ``name``; the package collects marked functions into
    ``OPERATIONS``. Every operation is ``op(wd, target, params) -> None``."""
    def deco(fn):
        fn.op_name = name
        return fn
    return deco


def story_container(wd: WordDoc, target: dict):
    """Container element of the story an anchor points into (body by default)."""
    story = target.get("story", "body")
    if story == "body":
        return wd.body
    if story in ("header", "footer"):
        sec = wd.section(target.get("section"))
        hf = header_footer(sec, story, target.get("hf_type", "primary"))
        return hf._element
    if story in ("footnote", "endnote"):
        return wd.note(story, target["note"])
    if story == "comment":
        return wd.comment(target["comment"])
    raise AnchorError(wd.locator, f"unknown story {story!r}")


def paragraphs_for(wd: WordDoc, target: dict) -> list:
    container = story_container(wd, target)
    if "paragraphs" in target:
        return [wd.paragraph(p, container) for p in target["paragraphs"]]
    if "paragraph" in target:
        return [wd.paragraph(target["paragraph"], container)]
    if "table" in target:
        return [p for tc in cells_for(wd, target) for p in table_oxml.cell_paragraphs(tc)]
    raise AnchorError(wd.locator, f"target {target!r} names no paragraph")


def runs_for(wd: WordDoc, target: dict) -> list:
    container = story_container(wd, target)
    if "table" in target and "paragraph" not in target:
        runs = []
        for p in paragraphs_for(wd, target):
            runs.extend(_all_text_runs(wd, p))
        return runs
    paras = paragraphs_for(wd, target)
    if len(paras) > 1 or "phrase" not in target:
        runs = []
        for p in paras:
            runs.extend(_all_text_runs(wd, p))
        return runs
    p = wd.paragraph(target["paragraph"], container)
    start, end = wd.text_range(p, target.get("phrase"), target.get("occurrence", 1))
    return wd.isolate(p, start, end)


def _all_text_runs(wd: WordDoc, p) -> list:
    txt = T.paragraph_text(p, "read")
    if not txt:
        return []
    return wd.isolate(p, 0, len(txt))


def cells_for(wd: WordDoc, target: dict) -> list:
    tbl = wd.table(target["table"])
    rows = table_oxml.rows(tbl)

    def cells(r: int) -> list:
        # a table smaller than the unit asks for is a precondition that does not hold, not a bug
        if not 1 <= r <= len(rows):
            raise PreconditionError(wd.locator, f"the table has {len(rows)} rows, no row {r}")
        return list(T.row_cells(rows[r - 1]))

    def cell(r: int, c: int):
        found = cells(r)
        if not 1 <= c <= len(found):
            raise PreconditionError(wd.locator, f"row {r} of the table has {len(found)} cells, no cell {c}")
        return found[c - 1]

    if "cell" in target:
        return [cell(*target["cell"])]
    if "row" in target:
        return cells(target["row"])
    if "column" in target:
        return [cell(r, target["column"]) for r in range(1, len(rows) + 1)]
    return [tc for tr in rows for tc in T.row_cells(tr)]


def header_footer(section, kind: str, hf_type: str):
    if kind == "header":
        return {"primary": section.header, "first": section.first_page_header,
                "even": section.even_page_header}[hf_type]
    return {"primary": section.footer, "first": section.first_page_footer, "even": section.even_page_footer}[hf_type]


def sect_prs(wd: WordDoc, target: dict) -> list:
    if target.get("all_sections"):
        return [s._sectPr for s in wd.doc.sections]
    return [wd.section(target.get("section"))._sectPr]


def scope_objects(wd: WordDoc, scope: str, target: dict) -> list[tuple]:
    """(xml element, python-docx proxy or None) pairs the property is set on."""
    if scope == "run":
        return [(r, wd.run_proxy(r)) for r in runs_for(wd, target)]
    if scope == "paragraph":
        return [(p, wd.proxy(p)) for p in paragraphs_for(wd, target)]
    if scope in ("style", "style_paragraph"):
        st = wd.style(target["style"])          # a latent built-in style is materialised, as Word does
        return [(st.element, st)]
    if scope == "table":
        tbl = wd.table(target["table"])
        return [(tbl, wd.table_proxy(tbl))]
    if scope == "row":
        tbl = wd.table(target["table"])
        proxy = wd.table_proxy(tbl)
        rows = target.get("rows") or [target["row"]]
        trs = table_oxml.rows(tbl)
        if max(rows) > len(trs):
            raise PreconditionError(wd.locator, f"the table has {len(trs)} rows, no row {max(rows)}")
        return [(trs[r - 1], proxy.rows[r - 1]) for r in rows]
    if scope == "cell":
        from docx.table import _Cell
        tproxy = wd.table_proxy(wd.table(target["table"]))
        return [(tc, _Cell(tc, tproxy)) for tc in cells_for(wd, target)]
    if scope == "section":
        if target.get("all_sections"):
            return [(s._sectPr, s) for s in wd.doc.sections]
        sec = wd.section(target.get("section"))
        return [(sec._sectPr, sec)]
    if scope == "settings":
        return [(wd.settings_el(), wd.doc.settings)]
    if scope == "core":
        return [(None, wd.doc.core_properties)]
    raise ValueError(f"unknown scope {scope!r}")


def find_fields(wd: WordDoc, container, ftype: str | None) -> list:
    walker = T.ParagraphWalker()
    for p in T.iter_block_paragraphs(container):
        walker.pieces(p)
    return [f for f in walker.fields if ftype is None or T.field_type(f.code) == ftype.upper()]


__all__ = ["operation", "story_container", "paragraphs_for", "runs_for", "cells_for", "header_footer", "sect_prs",
           "scope_objects", "field_runs", "find_fields", "unwrap"]
