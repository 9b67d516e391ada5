"""The document's parts that refer to the stories' paragraphs: tables, sections, headers and
footers, notes, comments, bookmarks, revisions, styles, content controls, properties, settings."""
from __future__ import annotations

import copy
from typing import Any

from lxml import etree

from benchwright.formats.ooxml.accessors import onoff
from benchwright.formats.ooxml.ns import NS
from benchwright.formats.ooxml.package import SHARED_PART_BYTES
from benchwright.memo import Memo
from benchwright.wordeval.properties import claims, core_accessors
from benchwright.wordeval.snapshot.cascade import (
    IGNORED_PPR, IGNORED_RPR, PPR_DEFAULTS, RPR_DEFAULTS, _ONOFF_TAGS, _TBL_STYLE, finish_props, flatten_props, merge,
)
from benchwright.wordeval.snapshot.common import _WNS, _int, _val, qn
from benchwright.wordeval.text import ParagraphWalker, iter_block_paragraphs, plain, view

SETTINGS_WHITELIST = ("evenAndOddHeaders", "trackRevisions", "mirrorMargins", "gutterAtTop", "defaultTabStop",
                      "autoHyphenation", "documentProtection", "footnotePr", "endnotePr", "bookFoldPrinting",
                      "printTwoOnOne")
CORE_FIELDS = ("title", "subject", "creator", "keywords", "description", "category", "contentStatus", "language",
               "identifier", "version", "lastModifiedBy", "revision", "created", "modified", "lastPrinted")


# a Styles (one per styles part content: extraction's memo) -> its styles as the snapshot records them (the last 32)
_STYLE_RECORDS: "Memo[dict]" = Memo(32)


class _DocumentParts:
    """The extractor's passes over the document's parts, run after the body story is read."""

    def _tables(self, body) -> None:
        text_of = {para.el: para for para in self.snap.stories["body"]}   # cell text as the story read it
        for tbl in body.iter(qn("w:tbl")):
            tblpr = tbl.find(qn("w:tblPr"))
            ts = _TBL_STYLE.find(tbl)
            sid = _val(ts) if ts is not None else self.styles.default.get("table")
            props = merge(self.styles.resolved(sid, "tblPr"), flatten_props(tblpr, {"tblStyle"}))
            rec = {"style": self.styles.name(sid) if ts is not None else None,
                   "tbl": finish_props(props, {"jc": "left", "tblInd.w": 0}),
                   "grid": [_int(g.get(_WNS + "w")) for g in tbl.findall(qn("w:tblGrid") + "/" + qn("w:gridCol"))],
                   "rows": [], "cells": [], "nested": any(a.tag == qn("w:tbl") for a in tbl.iterancestors())}
            texts = []
            for tr in tbl.findall(qn("w:tr")):
                rec["rows"].append(finish_props(flatten_props(tr.find(qn("w:trPr"))), {}))
                row_cells, row_text = [], []
                for tc in tr.findall(qn("w:tc")):
                    row_cells.append(finish_props(flatten_props(tc.find(qn("w:tcPr")), {"cnfStyle"}),
                                                  {"vAlign": "top", "gridSpan": 1}))
                    row_text.append("\n".join(plain(text_of[p].text if p in text_of else self._plain_p(p))
                                               for p in iter_block_paragraphs(tc)))
                rec["cells"].append(row_cells)
                texts.append(row_text)
            rec["text"] = texts
            rec["caption"] = self._caption_before(tbl)
            self.snap.tables.append(rec)

    def _plain_p(self, p, mode: str = "compare") -> str:
        return "".join(pc.text for pc in view(ParagraphWalker("final").pieces(p), mode))

    def _caption_before(self, tbl) -> str | None:
        prev = tbl.getprevious()
        while prev is not None and prev.tag != qn("w:p"):
            prev = prev.getprevious()
        if prev is None:
            return None
        return plain(self._plain_p(prev, "read")).strip() or None

    def _sections(self, body) -> None:
        sect_prs = []
        for p in body.iter(qn("w:p")):
            ppr = p.find(qn("w:pPr"))
            if ppr is not None and ppr.find(qn("w:sectPr")) is not None:
                sect_prs.append((ppr.find(qn("w:sectPr")), p))
        final = body.find(qn("w:sectPr"))
        sect_prs.append((final, None))
        body_paras = self.snap.stories["body"]
        para_index = {id(pr.el): i for i, pr in enumerate(body_paras)}
        prev_refs: dict[tuple[str, str], str | None] = {}
        first_para_idx = 0
        for si, (sp, last_p) in enumerate(sect_prs):
            props = flatten_props(sp, {"headerReference", "footerReference", "sectPrChange", "docGrid", "paperSrc",
                                       "printerSettings"}) if sp is not None else {}
            props = finish_props(props, {"pgSz.orient": "portrait", "type": "nextPage", "vAlign": "top",
                                         "cols.num": 1, "cols.space": 720, "pgMar.gutter": 0, "cols.equalWidth": True,
                                         "textDirection": "lrTb", "pgNumType.fmt": "decimal",
                                         "footnotePr.numFmt": "decimal", "endnotePr.numFmt": "lowerRoman",
                                         "footnotePr.pos": "pageBottom", "endnotePr.pos": "docEnd",
                                         "pgBorders.display": "allPages"})
            if si == 0:
                props.pop("type", None)   # how the first section starts is immaterial
            rec = {"props": props}
            end_idx = para_index.get(id(last_p), len(body_paras) - 1) if last_p is not None else len(body_paras) - 1
            rec["first_text"] = plain(body_paras[first_para_idx].text)[:80] if first_para_idx < len(body_paras) else ""
            rec["n_paras"] = max(0, end_idx - first_para_idx + 1)
            first_para_idx = end_idx + 1
            refs = {}
            if sp is not None:
                for tag in ("headerReference", "footerReference"):
                    for ref in sp.findall(qn("w:" + tag)):
                        refs[(tag[:6], ref.get(_WNS + "type") or "default")] = ref.get(qn("r:id"))
            rec["hf"] = {}
            for kind in ("header", "footer"):
                for typ in ("default", "first", "even"):
                    rid = refs.get((kind, typ))
                    linked = rid is None
                    if linked:
                        part = prev_refs.get((kind, typ))
                    else:
                        rel = self.rels.get(rid)
                        part = rel.target_part if rel is not None and rel.target_part in self.pkg.members else None
                        prev_refs[(kind, typ)] = part
                    rec["hf"][f"{kind}.{typ}"] = {"linked": linked and si > 0, "part": part}
            self.snap.sections.append(rec)

    def _header_stories(self) -> None:
        """Effective header/footer stories per section and type. A header that contains nothing
        but empty paragraphs is treated as absent (Word shows nothing either way)."""
        for si, sec in enumerate(self.snap.sections):
            for hf, info in sec["hf"].items():
                part = info["part"]
                if part is None:
                    continue
                kind, typ = hf.split(".")
                name = f"{kind}/S{si}/{typ}"
                paras = self.story(name, self.pkg.xml(part), part)
                if all(not p.text for p in paras) and not self.snap.fields.get(name):
                    del self.snap.stories[name]
                    info["part"] = None

    def _notes(self, body) -> None:
        for kind in ("footnote", "endnote"):
            parts = self.pkg.related(self.main, kind + "s")
            notes = {}
            if parts:
                for n in self.pkg.xml(parts[0]).findall(qn("w:" + kind)):
                    if (n.get(_WNS + "type") or "normal") == "normal":
                        notes[n.get(_WNS + "id")] = n
            out = []
            body_paras = self.snap.stories["body"]
            for pi, para in enumerate(body_paras):
                for ref in para.el.iter(qn(f"w:{kind}Reference")):
                    nid = ref.get(_WNS + "id")
                    if nid in notes:
                        name = f"{kind}/N{len(out)}"
                        self.story(name, notes[nid], parts[0], tbl_ctx=False)
                        out.append({"story": name, "para": pi})
            if out:
                self.snap.notes[kind] = out

    def _comments(self) -> None:
        parts = self.pkg.related(self.main, "comments")
        if not parts:
            return
        comments = {c.get(_WNS + "id"): c for c in self.pkg.xml(parts[0]).findall(qn("w:comment"))}
        order = []
        for para in self.snap.stories["body"]:
            for el in para.el.iter(qn("w:commentRangeStart"), qn("w:commentReference")):
                cid = el.get(_WNS + "id")
                if cid in comments and cid not in order:
                    order.append(cid)
        for cid in comments:
            if cid not in order:
                order.append(cid)   # orphan comments are recorded too
        self._comment_order = order
        # replies and resolved state (Word 2013+): commentsExtended, keyed by the w14:paraId of
        # each comment's last paragraph
        extended: dict[str, tuple[str | None, bool]] = {}
        for ex_part in self.pkg.related(self.main, "commentsExtended"):
            for ex in self.pkg.xml(ex_part).iter(qn("w15:commentEx")):
                w15 = "{%s}" % NS["w15"]
                extended[ex.get(w15 + "paraId")] = (ex.get(w15 + "paraIdParent"),
                                                    (ex.get(w15 + "done") or "0") in ("1", "true"))
        para_of = {}
        for i, cid in enumerate(order):
            last = comments[cid].findall(qn("w:p"))
            if last and last[-1].get(qn("w14:paraId")):
                para_of[last[-1].get(qn("w14:paraId"))] = i
        for i, cid in enumerate(order):
            c = comments[cid]
            name = f"comment/C{i}"
            paras = self.story(name, c, parts[0], tbl_ctx=False)
            rec = {"story": name, "id": cid, "text": "\n".join(plain(p.text) for p in paras),
                   "author": c.get(_WNS + "author"), "initials": c.get(_WNS + "initials")}
            last = c.findall(qn("w:p"))
            ex = extended.get(last[-1].get(qn("w14:paraId"))) if last else None
            if ex is not None:
                parent = para_of.get(ex[0]) if ex[0] else None
                rec["parent"] = f"comment/C{parent}" if parent is not None else None
                rec["done"] = ex[1]
            self.snap.comments.append(rec)

    def _markers(self) -> None:
        """Bookmarks and comment anchors: covered text and the paragraph where they start.

        Covered text is a slice of the story text between the start and end offsets (a marker
        left open used to grow a string per paragraph: quadratic with many open markers)."""
        paras = self.snap.stories["body"]
        story_text = "".join(p.text + "\n" for p in paras)
        open_bm: dict[str, tuple] = {}
        open_c: dict[str, tuple] = {}
        bookmarks: dict[str, dict] = {}
        c_anchor: dict[str, dict] = {}
        for pi, para in enumerate(paras):
            # positions of the markers inside this paragraph
            for pos, kind, ident, name in _marker_events(para.el, ParagraphWalker("final")):
                at = para.start + pos
                if kind == "bookmarkStart":
                    open_bm[ident] = (name, pi, at)
                elif kind == "bookmarkEnd" and ident in open_bm:
                    name, start_pi, start = open_bm.pop(ident)
                    bookmarks.setdefault(name, {"para": start_pi, "text": plain(story_text[start:at])})
                elif kind == "commentRangeStart":
                    open_c[ident] = (pi, at)
                elif kind == "commentRangeEnd" and ident in open_c:
                    start_pi, start = open_c.pop(ident)
                    c_anchor[ident] = {"para": start_pi, "text": story_text[start:at]}
        for name, rec in bookmarks.items():
            if name.startswith("_"):
                continue   # hidden bookmarks (_Toc, _Ref, _GoBack): Word generates their names
            self.snap.bookmarks[name] = rec
        for c in self.snap.comments:
            a = c_anchor.get(c["id"])
            c["anchor"] = plain(a["text"]).strip() if a else ""
            c["para"] = a["para"] if a else None

    def _revisions(self) -> None:
        for sname, paras in self.snap.stories.items():
            out = []
            for pi, para in enumerate(paras):
                p = para.el
                for el in p.iter(qn("w:ins"), qn("w:del"), qn("w:moveFrom"), qn("w:moveTo"), qn("w:rPrChange"),
                                 qn("w:pPrChange")):
                    kind = etree.QName(el).localname
                    parent = el.getparent()
                    rec = {"type": kind, "para": pi, "author": el.get(_WNS + "author")}
                    if kind in ("ins", "del") and parent is not None and parent.tag == qn("w:rPr"):
                        rec["type"] = "para_" + kind    # paragraph mark revision
                    elif kind in ("ins", "del", "moveFrom", "moveTo"):
                        txt = []
                        for r in el.iter(qn("w:r")):
                            for c in r:
                                if c.tag in (qn("w:t"), qn("w:delText")):
                                    txt.append(c.text or "")
                                elif c.tag == qn("w:tab"):
                                    txt.append("\t")
                        rec["text"] = "".join(txt)
                    elif kind == "rPrChange":
                        rec["old"] = finish_props(flatten_props(el.find(qn("w:rPr")), IGNORED_RPR), RPR_DEFAULTS)
                        r = parent.getparent() if parent is not None else None
                        rec["text"] = plain(_run_plain(r)) if r is not None and r.tag == qn("w:r") else ""
                    elif kind == "pPrChange":
                        rec["old"] = finish_props(flatten_props(el.find(qn("w:pPr")), IGNORED_PPR), PPR_DEFAULTS)
                    prev = out[-1] if out else None
                    if prev is not None and prev["type"] == rec["type"] and prev["para"] == rec["para"] and \
                            prev.get("old") == rec.get("old") and "text" in rec and "text" in prev and \
                            prev.get("_end") is not None and _adjacent(prev["_end"], el):
                        prev["text"] += rec["text"]   # one change split over several elements/runs
                        prev["_end"] = el
                        continue
                    rec["_end"] = el
                    out.append(rec)
            for rec in out:
                rec.pop("_end", None)
            if out:
                self.snap.revisions[sname] = out

    def _styles(self) -> None:
        st = self.styles
        used = set()
        for paras in self.snap.stories.values():
            for p in paras:
                if p.style:
                    used.add(p.style)
                for seg in p.chars.get("style", []):
                    used.add(seg[2])
        for t in self.snap.tables:
            if t["style"]:
                used.add(t["style"])
        for name, out in _STYLE_RECORDS.get(st, lambda: _style_records(st)).items():
            rec = dict(out)
            rec["used"] = name in used
            self.snap.styles[name] = rec

    def _sdts(self) -> None:
        body = self.pkg.xml(self.main).find(qn("w:body"))
        for sdt in body.iter(qn("w:sdt")):
            pr = sdt.find(qn("w:sdtPr"))
            if pr is None or pr.find(qn("w:docPartObj")) is not None:
                continue   # building-block wrappers (e.g. Word's TOC container) are transparent
            rec = {}
            for tag in ("alias", "tag"):
                el = pr.find(qn("w:" + tag))
                if el is not None:
                    rec[tag] = _val(el)
            lock = pr.find(qn("w:lock"))
            if lock is not None:
                rec["lock"] = _val(lock)
            kind = "richText"
            for k in ("text", "date", "dropDownList", "comboBox", "picture", "richText", "docPartList", "group",
                      "citation", "bibliography", "equation"):
                if pr.find(qn("w:" + k)) is not None:
                    kind = k
            rec["type"] = kind
            content = sdt.find(qn("w:sdtContent"))
            rec["text"] = plain("".join(pc.text for pc in view(ParagraphWalker("final").pieces(content)))) \
                if content is not None and content.find(qn("w:p")) is None else \
                "\n".join(plain(self._plain_p(p)) for p in iter_block_paragraphs(content)) if content is not None else ""
            self.snap.sdts.append(rec)

    def _props(self) -> None:
        props = self.snap.props
        for rel in self.pkg.relationships(""):
            if rel.type_tail == "core-properties" and rel.target_part in self.pkg.members:
                root = self.pkg.xml(rel.target_part)
                registered = core_accessors()
                for el in root:
                    if not isinstance(el.tag, str):
                        continue
                    name = etree.QName(el).localname
                    if el.tag in registered:
                        value = registered[el.tag].decode(el)   # the registry's accessor (dc:title ...)
                        if value:
                            props["core." + name] = value
                    elif name in CORE_FIELDS and (el.text or "").strip():
                        props["core." + name] = el.text.strip()
            elif rel.type_tail == "custom-properties" and rel.target_part in self.pkg.members:
                root = self.pkg.xml(rel.target_part)
                for prop in root:
                    name = prop.get("name")
                    if name is None or not len(prop):
                        continue
                    v = prop[0]
                    vtype = etree.QName(v).localname
                    text = (v.text or "").strip()
                    if vtype in ("i4", "i8", "int", "i2", "i1", "ui1", "ui2", "ui4", "ui8", "uint", "r4", "r8",
                                 "decimal"):
                        try:
                            value: Any = float(text)
                            value = int(value) if value.is_integer() else value
                        except ValueError:
                            value = text
                        vtype = "number"
                    elif vtype == "bool":
                        value = text.lower() in ("1", "true")
                    else:
                        value = text
                    props["custom." + name] = {"type": vtype, "value": value}

    def _settings(self) -> None:
        parts = self.pkg.related(self.main, "settings")
        if not parts:
            return
        if self.pkg.read_only and len(self.pkg.members[parts[0]]) <= SHARED_PART_BYTES:
            # a function of the part's bytes: read once per content (the last 32), each snapshot its own copy
            entries = copy.deepcopy(_SETTINGS_CACHE.get(self.pkg.members[parts[0]],
                                                         lambda: _settings_entries(self.pkg.xml(parts[0]))))
        else:
            entries = _settings_entries(self.pkg.xml(parts[0]))
        for where, k, v in entries:
            (self.snap.settings if where == "settings" else self.snap.props)[k] = v


_SETTINGS_CACHE: "Memo[list[tuple[str, str, Any]]]" = Memo(32)


def _settings_entries(root) -> list[tuple[str, str, Any]]:
    """("settings" | "props", key, value) of a settings part, in the order the snapshot records them."""
    out = []
    registered = claims().get(root.tag, {})
    for name in SETTINGS_WHITELIST:
        el = root.find(qn("w:" + name))
        if el is None:
            continue
        if name in _ONOFF_TAGS:
            locs = registered.get(el.tag)
            # a registered setting (evenAndOddHeaders ...) is decoded by its accessor
            if locs[0].decode(el) if locs else onoff(el):
                out.append(("settings", name, True))
        else:
            flat = finish_props(flatten_props(_wrap(el)), {"footnotePr.numFmt": "decimal",
                                                           "endnotePr.numFmt": "lowerRoman",
                                                           "footnotePr.pos": "pageBottom",
                                                           "endnotePr.pos": "docEnd"})
            for k, v in flat.items():
                if k.startswith(("footnotePr.footnote", "endnotePr.endnote")):
                    continue   # separator note references
                out.append(("settings", k, v))
    dv = root.find(qn("w:docVars"))
    if dv is not None:
        for var in dv.findall(qn("w:docVar")):
            out.append(("props", "var." + (var.get(_WNS + "name") or ""), var.get(_WNS + "val")))
    return out


def _adjacent(prev_el, el) -> bool:
    """True when ``el`` follows ``prev_el`` with only run-level noise between them (the same
    revision split across runs or elements)."""
    a = prev_el if prev_el.tag != qn("w:rPrChange") else prev_el.getparent().getparent()
    b = el if el.tag != qn("w:rPrChange") else el.getparent().getparent()
    if a is None or b is None:
        return False
    nxt = a.getnext()
    while nxt is not None and nxt.tag in (qn("w:proofErr"), qn("w:bookmarkStart"), qn("w:bookmarkEnd")):
        nxt = nxt.getnext()
    return nxt is b


def _wrap(el):
    holder = etree.Element("holder")
    holder.append(_copy(el))
    return holder


def _copy(el):
    import copy
    return copy.deepcopy(el)


def _run_plain(r) -> str:
    out = []
    for c in r:
        if c.tag == qn("w:t"):
            out.append(c.text or "")
    return "".join(out)


def _marker_events(p, walker) -> list[tuple[int, str, str, str | None]]:
    """(position in display text, kind, id, name) for bookmark/comment markers in paragraph ``p``."""
    events = []
    marker_tags = {qn("w:bookmarkStart"): "bookmarkStart", qn("w:bookmarkEnd"): "bookmarkEnd",
                   qn("w:commentRangeStart"): "commentRangeStart", qn("w:commentRangeEnd"): "commentRangeEnd"}
    markers = [el for el in p.iter(*marker_tags) if not any(a.tag == qn("w:del") for a in el.iterancestors())]
    if not markers:
        return events
    pieces = view(walker.pieces(p), "compare")
    # position of a marker = end of the last piece whose run precedes it in document order
    order = {el: i for i, el in enumerate(p.iter())}
    for m in markers:
        mpos = order[m]
        pos = 0
        for pc in pieces:
            anchor_el = pc.run
            if anchor_el is None:
                continue
            if order.get(anchor_el, -1) < mpos:
                pos = pc.start + len(pc.text)
        events.append((pos, marker_tags[m.tag], m.get(_WNS + "id"), m.get(_WNS + "name")))
    events.sort(key=lambda e: (e[0], 0 if e[1].endswith("End") else 1))
    return events


def _style_records(st) -> dict[str, dict]:
    """Every style of ``st`` as the snapshot records it (without ``used``, which depends on the document)."""
    recs = {}
    for sid, rec in st.by_id.items():
        out = {"type": rec["type"], "basedOn": st.name(rec["basedOn"]), "next": st.name(rec["next"]),
               "custom": rec["custom"], "qFormat": rec["qFormat"], "hidden": rec["hidden"],
               "semiHidden": rec["semiHidden"]}
        if rec["priority"] is not None:
            out["priority"] = rec["priority"]
        rpr = merge(st.defaults_rpr, st.resolved(sid, "rPr"))
        if "kern" in rpr:
            rpr["kern"] = bool(rpr["kern"])
        if "font" in rpr:
            rpr["font"] = st.font(rpr["font"])
        out["rPr"] = finish_props(rpr, RPR_DEFAULTS)
        if rec["type"] in ("paragraph", "table"):
            out["pPr"] = finish_props(merge(st.defaults_ppr, st.resolved(sid, "pPr")), PPR_DEFAULTS)
        if rec["type"] == "table":
            out["tblPr"] = finish_props(st.resolved(sid, "tblPr"), {})
        recs[rec["name"]] = out
    return recs
