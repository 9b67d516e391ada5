"""Stories, paragraphs and runs: effective paragraph and character properties, fields, list labels."""
from __future__ import annotations

import re

from lxml import etree

from benchwright.wordeval.snapshot.cascade import (
    IGNORED_PPR, IGNORED_RPR, PPR_DEFAULTS, RPR_DEFAULTS, TOGGLES, _TBL_STYLE, _num_pr, finish_props, flatten_props,
    format_number, merge,
)
from benchwright.wordeval.snapshot.common import W_TBL, W_TC, W_TR, _WNS, _val, qn
from benchwright.wordeval.snapshot.records import Para
from benchwright.wordeval.text import (
    DRAWING, ParagraphWalker, Piece, field_type, iter_block_paragraphs, normalize_field_code, plain, view,
)

# Generated lists whose entries end in page numbers, which Word recomputes on every update.
_PAGE_NUMBERED = ("TOC", "TOA", "INDEX")
_PAGE_REF = re.compile(r"(?:\t(?:[ivxlcdm]+|[IVXLCDM]+)|\t?[0-9]+(?:\s*[-\u2013,]\s*[0-9]+)*)$")


def _entries(f, ftype: str) -> list[str]:
    """The entries of a field result that spans paragraphs (a TOC, a bibliography, a citation
    manager's reference list): one per non-empty paragraph, as displayed, nested fields' results
    included.  This is what a user would miss: a deleted or reworded entry fails preservation.
    What an update regenerates is left out: page numbers (TOC, TOA, INDEX); the result's runs,
    formatting and bookmark names, like the result as a whole, stay volatile."""
    out = []
    for line in f.shown_text.split("\n"):
        line = plain(line)
        if ftype in _PAGE_NUMBERED:
            line = _PAGE_REF.sub("", line)
        if line.strip():
            out.append(line.strip())
    return out


class _Paragraphs:
    """The extractor's stories: paragraphs with their effective properties, fields and list labels."""

    # -------------------------------------------------------------- character properties
    def run_props(self, r, p_style: str | None, tbl_style: str | None) -> dict:
        rpr = r.find(qn("w:rPr"))
        rstyle = None
        direct_key = b""
        if rpr is not None:
            rs = rpr.find(qn("w:rStyle"))
            rstyle = _val(rs) if rs is not None else None
            direct_key = etree.tostring(rpr)
        key = (p_style, tbl_style, direct_key)
        cached = self._rpr_cache.get(key)
        if cached is not None:
            return cached
        st = self.styles
        props = dict(st.defaults_rpr)
        levels = []
        if tbl_style:
            levels.append(st.resolved(tbl_style, "rPr"))
        levels.append(st.resolved(p_style, "rPr"))
        if rstyle:
            levels.append(st.resolved(rstyle, "rPr"))
        for lvl in levels:
            for k, v in lvl.items():
                if k in TOGGLES:
                    if v is True:
                        props[k] = not props.get(k, False)
                else:
                    props[k] = v
        direct = flatten_props(rpr, IGNORED_RPR | {"rStyle"})
        props = merge(props, direct)
        if "kern" in props:
            # kerning is on/off for the object model users see (LibreOffice keeps no threshold)
            props["kern"] = bool(props["kern"])
        if "font" in props:
            props["font"] = st.font(props["font"])
        else:
            props["font"] = "Times New Roman"
        props.setdefault("sz", 20)
        out = finish_props(props, RPR_DEFAULTS)
        if rstyle:
            out["style"] = st.name(rstyle)
        self._rpr_cache[key] = out
        return out

    # -------------------------------------------------------------- paragraphs
    def story(self, name: str, container, part: str, tbl_ctx: bool = True) -> list[Para]:
        walker = ParagraphWalker("final")
        paras: list[Para] = []
        pos = 0
        spanned: dict = {}   # w:p -> (pieces, table style, cell) of the paragraphs a field spans
        for p in iter_block_paragraphs(container):
            tbl_style, loc = self._table_context(p) if tbl_ctx else (None, None)
            raw = walker.pieces(p)
            if walker.stack or walker.started_in_result:
                spanned[p] = (raw, tbl_style, loc)
            if walker.started_in_result:
                continue  # inside a multi-paragraph field result: the field's entries hold it
            para = self._paragraph(p, view(raw, "compare"), tbl_style, loc, part)
            para.read = plain("".join(pc.text for pc in view(raw, "read")))
            para.start = pos
            pos += len(para.text) + 1
            paras.append(para)
        self.snap.stories[name] = paras
        flist = []
        for f in walker.fields:
            code = normalize_field_code(f.code)
            rec = {"code": code, "type": field_type(code), "result": f.result_text.strip("\n"),
                   "para": f.story_para, "locked": f.locked}
            if rec["type"] == "TOC" or len(f.paragraphs) > 1:
                rec["entries"] = _entries(f, rec["type"])
            if len(f.paragraphs) > 1:
                rec["layout"] = self._entry_layout(f, rec["type"], spanned, part)
            flist.append(rec)
        if flist:
            self.snap.fields[name] = flist
        return paras

    def _entry_layout(self, f, ftype: str, spanned: dict, part: str) -> list[dict]:
        """How each entry of a multi-paragraph field result is formatted, as an ordinary paragraph
        is: its style, effective paragraph properties, list level and character properties over
        the text it displays (issue 22: a bold bibliography entry or a right-aligned TOC line is a
        change a reader sees).  One record per paragraph that displays something, in order.
        What an update regenerates stays out, as in the entries: the page number at the end of a
        TOC / TOA / INDEX line, how the result is split into runs (segments are merged) and the
        generated names of the bookmarks its hyperlinks point to."""
        out = []
        last = len(f.paragraphs) - 1
        for j, p in enumerate(f.paragraphs):
            kept = spanned.get(p)
            if kept is None:
                continue
            raw, tbl_style, loc = kept
            order = {el: i for i, el in enumerate(p.iter())} if j in (0, last) else None
            lo = order.get(f.begin, -1) if j == 0 else -1
            hi = order.get(f.end, len(order)) if j == last and f.end is not None else None
            pieces, pos = [], 0
            for pc in raw:
                if pc.kind == "placeholder":
                    continue           # what the field displays, as read: results, not placeholders
                if order is not None and not (lo < order.get(pc.run, -1) and (hi is None or order[pc.run] < hi)):
                    continue           # before the field begins in its first paragraph, after it ends in its last
                pieces.append(Piece(pc.run, pc.text, pc.kind, pc.hyperlink, pc.field_link, pc.revision, pos))
                pos += len(pc.text)
            para = self._paragraph(p, pieces, tbl_style, loc, part)
            if not plain(para.text).strip():
                continue
            cut = len(para.text)
            if ftype in _PAGE_NUMBERED:
                m = _PAGE_REF.search(para.text)
                cut = m.start() if m else cut
            chars = {k: [[a, min(b, cut), v] for a, b, v in segs if a < cut] for k, segs in para.chars.items()}
            out.append({"style": para.style, "para": para.para, "num": para.num,
                        "chars": {k: v for k, v in chars.items() if v}})
        return out

    def _table_context(self, p):
        """(table style, "cell(row,col)") of a paragraph from its nearest enclosing cell and table.

        Row and cell positions come from one index per table / row, built on first use
        (``_child_index``): looking them up per paragraph made a table's snapshot quadratic in its rows."""
        tc = None
        for anc in p.iterancestors():
            tag = anc.tag
            if tag == W_TC and tc is None:
                tc = anc
            elif tag == W_TBL:
                style = self._tbl_style.get(anc)
                if style is None:
                    ts = _TBL_STYLE.find(anc)
                    style = self._tbl_style[anc] = (_val(ts) if ts is not None else self.styles.default.get("table"),)
                loc = None
                if tc is not None:
                    tr = tc.getparent()
                    r = self._child_index(anc, W_TR).get(tr, -1)
                    c = self._child_index(tr, W_TC)[tc]
                    loc = f"cell({r + 1},{c + 1})"
                return style[0], loc
        return None, None

    def _child_index(self, parent, tag) -> dict:
        """{child: position among ``parent``'s children with ``tag``}, built once per parent."""
        idx = self._child_idx.get(parent)
        if idx is None:
            idx = self._child_idx[parent] = {x: i for i, x in enumerate(parent.iterchildren(tag))}
        return idx

    def _paragraph(self, p, pieces, tbl_style, loc, part) -> Para:
        st = self.styles
        ppr = p.find(qn("w:pPr"))
        ps = ppr.find(qn("w:pStyle")) if ppr is not None else None
        p_style = _val(ps) if ps is not None else st.default.get("paragraph")
        # numbering
        numpr = _num_pr(ppr) or st.resolved_numpr(p_style)
        num_info: dict = {}
        lvl_ppr: dict = {}
        if numpr and numpr[0] not in (None, "0"):
            aid, lvl = self.numbering.level(numpr[0], numpr[1])
            if lvl is not None:
                lvl_ppr = lvl["pPr"]
                num_info = {"numId": numpr[0], "abstract": aid, "level": numpr[1], "format": lvl["numFmt"],
                            "suff": lvl["suff"]}
                if lvl["numFmt"] != "bullet":
                    num_info["pattern"] = lvl["lvlText"]
        props = dict(st.defaults_ppr)
        if tbl_style:
            props = merge(props, st.resolved(tbl_style, "pPr"))
        props = merge(props, lvl_ppr)
        props = merge(props, st.resolved(p_style, "pPr"))
        props = merge(props, flatten_props(ppr, IGNORED_PPR))
        para_props = finish_props(props, PPR_DEFAULTS)
        # characters
        text_parts = []
        chars: dict[str, list] = {}
        drawings = []
        for pc in pieces:
            text_parts.append(pc.text)
            if pc.run is None:
                continue
            if pc.text == DRAWING:
                drawings.extend(self._drawings(pc.run, part))
            rp = self.run_props(pc.run, p_style, tbl_style)
            link = None
            if pc.hyperlink is not None:
                link = self._hyperlink_target(pc.hyperlink, part)
            elif pc.field_link:
                link = pc.field_link
            end = pc.start + len(pc.text)
            items = dict(rp)
            if link is not None:
                items["link"] = _norm_link(link)
                tip = pc.hyperlink.get(_WNS + "tooltip") if pc.hyperlink is not None else None
                if tip:
                    items["link.tooltip"] = tip
            if pc.revision:
                items["revision"] = pc.revision
            for k, v in items.items():
                segs = chars.setdefault(k, [])
                if segs and segs[-1][1] == pc.start and segs[-1][2] == v:
                    segs[-1][1] = end
                else:
                    segs.append([pc.start, end, v])
        text = "".join(text_parts)
        return Para(text=text, style=st.name(p_style), para=para_props, chars=chars, num=num_info, loc=loc,
                    drawings=drawings, el=p)

    def _hyperlink_target(self, h, part) -> str:
        rid = h.get(qn("r:id"))
        anchor = h.get(_WNS + "anchor")
        target = ""
        if rid:
            rels = self.rels if part == self.main else self.pkg.rel_map(part)
            rel = rels.get(rid)
            target = rel.target if rel is not None else "?missing"
        if anchor:
            target += "#" + anchor
        return target

    def _numbering_labels(self, paras: list[Para]) -> None:
        counters: dict[str, list] = {}
        seen_nums: set[str] = set()
        list_ids: dict[str, int] = {}
        for para in paras:
            n = para.num
            if not n:
                continue
            aid, lvl_idx, nid = n["abstract"], n["level"], n["numId"]
            key = aid if aid is not None else "num:" + nid
            cnt = counters.setdefault(key, [None] * 10)
            if nid not in seen_nums:
                seen_nums.add(nid)
                _, overrides = self.numbering.nums.get(nid, (None, {}))
                for ilvl, ov in overrides.items():
                    if "startOverride" in ov and isinstance(ilvl, int) and 0 <= ilvl < 10:
                        cnt[ilvl] = ov["startOverride"] - 1
            lvl_idx = lvl_idx if isinstance(lvl_idx, int) and 0 <= lvl_idx < 10 else 0
            _, lvl = self.numbering.level(nid, lvl_idx)
            start = lvl["start"] if lvl else 1
            cnt[lvl_idx] = start if cnt[lvl_idx] is None else cnt[lvl_idx] + 1
            for deeper in range(lvl_idx + 1, 10):
                cnt[deeper] = None
            pattern = lvl["lvlText"] if lvl else ""
            if lvl and lvl["numFmt"] == "bullet":
                label = "•"
            else:
                def repl(m):
                    k = int(m.group(1)) - 1
                    _, lv = self.numbering.level(nid, k)
                    val = cnt[k] if cnt[k] is not None else (lv["start"] if lv else 1)
                    return format_number(val, lv["numFmt"] if lv else "decimal")
                label = re.sub(r"%([1-9])", repl, pattern)
            list_ids.setdefault(key, len(list_ids))
            para.num = {"list": list_ids[key], "level": lvl_idx, "format": n["format"], "label": label}
            if n.get("suff", "tab") != "tab":
                para.num["suffix"] = n["suff"]
            if "pattern" in n:
                para.num["pattern"] = n["pattern"]


def _norm_link(link: str) -> str:
    if "#_" in link and link.startswith("#"):
        return "#_hidden"   # links to hidden bookmarks (_Toc...) have generated names
    m = re.match(r"^([a-zA-Z][a-zA-Z0-9+.-]*://[^/?#]+)([?#].*)?$", link)
    if m:
        return m.group(1) + "/" + (m.group(2) or "")   # http://host == http://host/
    return link
