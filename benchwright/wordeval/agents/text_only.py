"""The ``text-only`` agent: makes the planned edit's textual change and nothing else.

It knows what the text should read afterwards (the planned edit applied, as ``replay`` does) but
edits like a plain-text tool: every paragraph whose text changed is rewritten as one run (the first
run's formatting kept, the other runs' formatting, fields, links and bookmarks in it lost); a
paragraph the edit added has its text appended to the paragraph before it, a paragraph the edit
removed is emptied (paragraphs, tables, sections and parts are never added or removed). No
formatting is ever applied. So it passes where the text is the whole point and fails where
formatting or structure is, which is what it is for.
"""
from __future__ import annotations

import copy
import sys
from pathlib import Path

from benchwright.formats.ooxml.ns import qn
from benchwright.formats.ooxml.package import Package
from benchwright.wordeval.agents.common import main, planned_edit
from benchwright.wordeval.snapshot import align
from benchwright.wordeval.text import W_PPR, W_R, W_RPR, W_T, iter_block_paragraphs, paragraph_read_text

# The stories whose paragraphs are compared: the body and the parts related to it.
STORY_PARTS = ("header", "footer", "footnotes", "endnotes", "comments")


def _story_paragraphs(pkg: Package, part: str) -> list:
    root = pkg.xml(part)
    body = root.find(qn("w:body"))
    if body is not None:
        return list(iter_block_paragraphs(body))
    if root.tag in (qn("w:hdr"), qn("w:ftr")):
        return list(iter_block_paragraphs(root))
    return [p for story in root for p in iter_block_paragraphs(story)]   # notes, comments: one story each


def _story_parts(pkg: Package) -> list[str]:
    main_part = pkg.main_part()
    return [main_part] + [p for tail in STORY_PARTS for p in pkg.related(main_part, tail)]


def _rewrite(p, text: str) -> None:
    """Replace everything in the paragraph but its properties by one run holding ``text``."""
    first = next((r for r in p.iter(W_R) if r.find(W_T) is not None), None)
    rpr = first.find(W_RPR) if first is not None else None
    for child in list(p):
        if child.tag != W_PPR:
            p.remove(child)
    if not text:
        return
    run = p.makeelement(W_R, {})
    if rpr is not None:
        run.append(copy.deepcopy(rpr))
    t = p.makeelement(W_T, {"{http://www.w3.org/XML/1998/namespace}space": "preserve"})
    t.text = text
    run.append(t)
    p.append(run)


def _pair_gaps(pairs: dict[int, int], n_input: int, n_edited: int) -> dict[int, int]:
    """Between two paired paragraphs, as many unpaired input as edited paragraphs are paired in
    order: a rewritten paragraph (a cell's "42" that now reads "n/a") is replaced, as a diff would,
    not emptied with its new text moved elsewhere."""
    out = dict(pairs)
    bounds = [(-1, -1)] + sorted(pairs.items()) + [(n_input, n_edited)]
    for (i0, j0), (i1, j1) in zip(bounds, bounds[1:]):
        if i1 - i0 == j1 - j0 > 1:
            out.update({i0 + k: j0 + k for k in range(1, i1 - i0)})
    return out


def transfer_text(input_docx: bytes, edited_docx: bytes) -> bytes:
    """``input_docx`` with the paragraph texts of ``edited_docx`` written in as plain runs; paragraphs
    are paired by content (the snapshot's alignment), story by story."""
    src, edited = Package.from_bytes(input_docx, "input.docx"), Package.from_bytes(edited_docx, "edited.docx")
    edited_parts = set(_story_parts(edited))
    for part in _story_parts(src):
        if part not in edited_parts:
            continue
        have = _story_paragraphs(src, part)
        want = [paragraph_read_text(p) for p in _story_paragraphs(edited, part)]
        texts = [paragraph_read_text(p) for p in have]
        pairs = _pair_gaps(align(want, texts), len(texts), len(want))   # input index -> edited index
        new = {i: want[j] for i, j in pairs.items()}
        for i in range(len(have)):
            new.setdefault(i, "")               # removed by the edit: emptied, the paragraph stays
        paired_edited = sorted(pairs.values())
        inverse = {j: i for i, j in pairs.items()}
        for j in range(len(want)):
            if j in inverse or not want[j]:
                continue
            # added by the edit: its text goes to the paragraph before it (the first one if none)
            before = [inverse[k] for k in paired_edited if k < j]
            i = max(before) if before else 0
            if have:
                new[i] = (new[i] + " " + want[j]).strip() if new[i] else want[j]
        for i, p in enumerate(have):
            if new[i] != texts[i] and p.getparent() is not None:
                _rewrite(p, new[i])
    return src.to_bytes()


def edit(input_docx: bytes, instruction: str, plan: dict | None) -> bytes:
    if plan is None:
        raise ValueError("text-only needs the case's plan (--plan) to know the text it should write")
    return transfer_text(input_docx, planned_edit(input_docx, plan))


def cli(argv=None) -> int:
    """The agent's command line (``argv`` without the program): its exit status."""
    return main(edit, __doc__.split("\n\n")[0], needs_plan=True, argv=argv, prog=Path(__file__).name)


if __name__ == "__main__":
    sys.exit(cli())
