"""The text model shared by the operation library (anchors) and the snapshot extractor.

Works on plain lxml elements (python-docx's custom element classes are lxml elements too).

A paragraph is walked into *pieces* following what Word shows with markup hidden ("final"
view): tracked insertions included, deletions and moved-from text excluded, field codes hidden.
Each piece has a kind:

* ``text``         ordinary run text (also the display text of HYPERLINK fields),
* ``placeholder``  ``\\x13TYPE\\x15`` standing for a whole field (emitted where its result starts),
* ``result``       the (update-dependent) result text of a non-hyperlink field.

Two views are built from the pieces: the *compare* view (text + placeholders) used by the
snapshot, where a DATE field compares equal whatever day it was updated, and the *read* view
(text + results) used for anchors and instructions, i.e. what a person reads on the page.
Footnote/endnote references show as ``\\x02``, drawings as ``\\x01``, tabs ``\\t``, line breaks
``\\n``, page/column breaks ``\\x0c``/``\\x0e``.  The *original* view does the opposite for
revisions (deletions shown, insertions hidden).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterator

from benchwright.formats.ooxml.ns import qn
from benchwright.formats.ooxml.table import row_cells  # a row's cells, as the paragraph walk reads them

W_P = qn("w:p")
W_R = qn("w:r")
W_T = qn("w:t")
W_DELTEXT = qn("w:delText")
W_TAB = qn("w:tab")
W_BR = qn("w:br")
W_CR = qn("w:cr")
W_SYM = qn("w:sym")
W_NBH = qn("w:noBreakHyphen")
W_FLDCHAR = qn("w:fldChar")
W_INSTR = qn("w:instrText")
W_DELINSTR = qn("w:delInstrText")
W_FNREF = qn("w:footnoteReference")
W_ENREF = qn("w:endnoteReference")
W_DRAWING = qn("w:drawing")
W_PICT = qn("w:pict")
W_OBJECT = qn("w:object")
W_INS = qn("w:ins")
W_DEL = qn("w:del")
W_MOVEFROM = qn("w:moveFrom")
W_MOVETO = qn("w:moveTo")
W_FLDSIMPLE = qn("w:fldSimple")
W_HYPERLINK = qn("w:hyperlink")
W_PPR = qn("w:pPr")
W_RPR = qn("w:rPr")
W_TBL = qn("w:tbl")
W_TR = qn("w:tr")
W_TC = qn("w:tc")
W_SDT = qn("w:sdt")
W_SDTCONTENT = qn("w:sdtContent")
W_CUSTOMXML = qn("w:customXml")
MC_AC = qn("mc:AlternateContent")

FIELD_BEGIN = "\x13"
FIELD_END = "\x15"
NOTE_REF = "\x02"
DRAWING = "\x01"
_CONTROL = re.compile("[\x01\x02\x0c\x0e]|\x13[A-Z=]*\x15")
_SKIP_TAGS = {W_PPR, qn("w:bookmarkStart"), qn("w:bookmarkEnd"), qn("w:commentRangeStart"), qn("w:commentRangeEnd"),
              qn("w:proofErr"), qn("w:permStart"), qn("w:permEnd"), qn("w:sdtPr"), qn("w:sdtEndPr"), MC_AC}


def plain(text: str) -> str:
    """Text without control characters (field placeholders, note references, drawings, breaks)."""
    return _CONTROL.sub("", text)


def field_type(code: str) -> str:
    m = re.match(r"\s*([A-Za-z=]+)", code or "")
    return m.group(1).upper() if m else ""


_SWITCH = re.compile(r'(\\[A-Za-z*@#!])(?:\s+("[^"]*"|[^\\\s"]+))?')


def normalize_field_code(code: str) -> str:
    """Canonical field code: upper-case field type, single spaces, switches in sorted order
    (Word and LibreOffice write the same switches in different orders)."""
    code = re.sub(r"\s+", " ", (code or "").strip())
    ftype = field_type(code)
    if code.upper().startswith(ftype):
        code = code[len(ftype):]
    first = code.find("\\")
    head = code if first < 0 else code[:first]
    switches = [] if first < 0 else [m.group(0).strip() for m in _SWITCH.finditer(code[first:])]
    parts = [ftype] + ([head.strip()] if head.strip() else []) + sorted(switches)
    return " ".join(parts)


def hyperlink_field_target(code: str) -> str:
    m = re.search(r'\\l\s+"([^"]*)"', code)
    if m:
        return "#" + m.group(1)
    m = re.search(r'HYPERLINK\s+"([^"]*)"', code, re.I) or re.search(r"HYPERLINK\s+(\S+)", code, re.I)
    return m.group(1) if m else ""


@dataclass
class Piece:
    run: object                 # the w:r element (None for a placeholder)
    text: str
    kind: str = "text"          # text | placeholder | result
    hyperlink: object = None    # enclosing w:hyperlink element
    field_link: str | None = None   # HYPERLINK field target when the text is that field's display
    revision: str | None = None     # "ins" / "del" when inside a tracked change
    start: int = 0              # offset within the view the piece list was made for


@dataclass
class FieldInfo:
    code: str
    story_para: object          # w:p where the field begins
    simple: bool
    begin: object = None        # the begin w:fldChar (or the w:fldSimple element)
    end: object = None          # the end w:fldChar of a complex field (None while open, or never closed)
    locked: bool = False
    paragraphs: list = field(default_factory=list)
    # pieces of text, joined on demand (appending to one string per run is quadratic in a long result):
    result_parts: list = field(default_factory=list)   # its own result, "\n" between paragraphs
    shown_parts: list = field(default_factory=list)    # what it displays: with nested fields' results

    @property
    def result_text(self) -> str:
        return "".join(self.result_parts)

    @property
    def shown_text(self) -> str:
        return "".join(self.shown_parts)


def _run_child_text(c) -> str:
    tag = c.tag
    if tag == W_T or tag == W_DELTEXT:
        return c.text or ""
    if tag == W_TAB:
        return "\t"
    if tag == W_BR:
        t = c.get(qn("w:type"))
        return "\x0c" if t == "page" else "\x0e" if t == "column" else "\n"
    if tag == W_CR:
        return "\n"
    if tag == W_NBH:
        return "-"
    if tag == W_SYM:
        try:
            return chr(int(c.get(qn("w:char")) or "", 16))
        except ValueError:
            return ""
    if tag in (W_FNREF, W_ENREF):
        return NOTE_REF
    if tag in (W_DRAWING, W_PICT, W_OBJECT, MC_AC):
        return DRAWING
    return ""


def run_text(r) -> str:
    return "".join(_run_child_text(c) for c in r)


def _is_on(el, attr: str) -> bool:
    v = el.get(qn(attr))
    return v is not None and v.lower() in ("1", "true", "on")


class ParagraphWalker:
    """Walks the paragraphs of one story in order, tracking complex-field state across them."""

    def __init__(self, view: str = "final"):
        self.view = view
        self.stack: list[dict] = []
        self.fields: list[FieldInfo] = []
        self.started_in_result = False

    def _in_result(self) -> bool:
        return bool(self.stack) and all(f["sep"] for f in self.stack)

    def pieces(self, p) -> list[Piece]:
        out: list[Piece] = []
        self.started_in_result = self._in_result()
        for f in self.stack:
            f["info"].paragraphs.append(p)
            if f["sep"]:
                f["info"].result_parts.append("\n")
                f["info"].shown_parts.append("\n")
        self._walk(p, p, out, None, None)
        return out

    def _shown(self, text: str) -> None:
        """Text in the result of the innermost field is displayed by it and by each enclosing field
        up to the first one still in its code region."""
        for f in reversed(self.stack):
            if not f["sep"]:
                break
            f["info"].shown_parts.append(text)

    def _emit(self, out, run, text, hyperlink, rev, kind="text", link=None):
        if not text:
            return
        if link is None:
            for f in self.stack:
                if f["type"] == "HYPERLINK":
                    link = f["target"]
        out.append(Piece(run, text, kind, hyperlink, link, rev))

    def _walk(self, el, p, out, hyperlink, rev):
        for c in el:
            tag = c.tag
            if not isinstance(tag, str) or tag in _SKIP_TAGS:
                continue
            if tag == W_R:
                self._run(c, p, out, hyperlink, rev)
            elif tag == W_HYPERLINK:
                self._walk(c, p, out, c, rev)
            elif tag in (W_INS, W_MOVETO):
                if self.view != "original":
                    self._walk(c, p, out, hyperlink, "ins")
            elif tag in (W_DEL, W_MOVEFROM):
                if self.view == "original":
                    self._walk(c, p, out, hyperlink, "del")
            elif tag == W_FLDSIMPLE:
                code = c.get(qn("w:instr")) or ""
                info = FieldInfo(code, p, True, begin=c, locked=_is_on(c, "w:fldLock"), paragraphs=[p])
                self.fields.append(info)
                ftype = field_type(code)
                inner: list[Piece] = []
                sub = ParagraphWalker(self.view)
                sub._walk(c, p, inner, hyperlink, rev)
                info.result_parts = [pc.text for pc in inner]
                info.shown_parts = list(info.result_parts)
                self._shown(info.result_text)
                if ftype == "HYPERLINK":
                    target = hyperlink_field_target(code)
                    for pc in inner:
                        self._emit(out, pc.run, pc.text, hyperlink, rev, "text", target)
                else:
                    self._emit(out, None, FIELD_BEGIN + ftype + FIELD_END, hyperlink, rev, "placeholder")
                    for pc in inner:
                        self._emit(out, pc.run, pc.text, hyperlink, rev, "result")
            else:
                # smartTag, customXml, sdt/sdtContent, dir, bdo, ...: transparent containers
                self._walk(c, p, out, hyperlink, rev)

    def _run(self, r, p, out, hyperlink, rev):
        buf: list[str] = []

        def flush():
            if not buf:
                return
            text = "".join(buf)
            buf.clear()
            if self.stack:
                top = self.stack[-1]
                if not top["sep"]:
                    return  # field code region
                top["info"].result_parts.append(text)
                self._shown(text)
                if top["type"] != "HYPERLINK":
                    if all(f["sep"] for f in self.stack):
                        self._emit(out, r, text, hyperlink, rev, "result")
                    return
            self._emit(out, r, text, hyperlink, rev)

        for c in r:
            tag = c.tag
            if tag == W_FLDCHAR:
                flush()
                kind = c.get(qn("w:fldCharType"))
                if kind == "begin":
                    info = FieldInfo("", p, False, begin=c, locked=_is_on(c, "w:fldLock"), paragraphs=[p])
                    self.fields.append(info)
                    self.stack.append({"code": [], "sep": False, "info": info, "type": "", "target": None})
                elif kind == "separate" and self.stack:
                    f = self.stack[-1]
                    f["sep"] = True
                    f["info"].code = "".join(f["code"])
                    f["type"] = field_type(f["info"].code)
                    if f["type"] == "HYPERLINK":
                        f["target"] = hyperlink_field_target(f["info"].code)
                    elif all(g["sep"] for g in self.stack[:-1]):
                        self._emit(out, None, FIELD_BEGIN + f["type"] + FIELD_END, hyperlink, rev, "placeholder")
                elif kind == "end" and self.stack:
                    f = self.stack.pop()
                    f["info"].end = c
                    if not f["sep"]:
                        f["info"].code = "".join(f["code"])
                        f["type"] = field_type(f["info"].code)
                        if all(g["sep"] for g in self.stack):
                            self._emit(out, None, FIELD_BEGIN + f["type"] + FIELD_END, hyperlink, rev,
                                       "placeholder")
            elif tag in (W_INSTR, W_DELINSTR):
                flush()
                if self.stack and (tag == W_INSTR or self.view == "original"):
                    self.stack[-1]["code"].append(c.text or "")
            elif tag == W_RPR:
                continue
            else:
                if tag == W_T and rev == "del":
                    continue
                buf.append(_run_child_text(c))
        flush()


def view(pieces: list[Piece], mode: str = "compare") -> list[Piece]:
    """Pieces of one view with offsets: ``compare`` (text + placeholders) or ``read`` (text + results)."""
    skip = "result" if mode == "compare" else "placeholder"
    out, pos = [], 0
    for pc in pieces:
        if pc.kind == skip:
            continue
        out.append(Piece(pc.run, pc.text, pc.kind, pc.hyperlink, pc.field_link, pc.revision, pos))
        pos += len(pc.text)
    return out


def paragraph_text(p, mode: str = "compare", view_name: str = "final") -> str:
    """Text of one paragraph on its own (fields spanning paragraphs are approximated)."""
    return "".join(pc.text for pc in view(ParagraphWalker(view_name).pieces(p), mode))


def paragraph_read_text(p) -> str:
    """What a reader sees: field results instead of placeholders, no control characters."""
    return plain(paragraph_text(p, "read"))


def iter_block_paragraphs(container) -> Iterator:
    """Paragraphs of a story container in document order, descending into tables, block sdts and
    block-level revision/customXml containers, but not into text boxes (their own stories)."""
    for c in container:
        tag = c.tag
        if tag == W_P:
            yield c
        elif tag == W_TBL:
            for tr in c.iterchildren(W_TR):
                for tc in row_cells(tr):
                    yield from iter_block_paragraphs(tc)
        elif tag == W_SDT:
            content = c.find(W_SDTCONTENT)
            if content is not None:
                yield from iter_block_paragraphs(content)
        elif tag in (W_CUSTOMXML, W_INS, W_DEL, W_MOVETO, W_MOVEFROM):
            yield from iter_block_paragraphs(c)
