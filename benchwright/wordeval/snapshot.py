"""WordEval snapshot extractor: a canonical, Word-object-model-like view of a .docx.

``extract_snapshot(bytes) -> Snapshot`` reads the package safely (bounded zip, hardened XML) and
records, per story (body, headers/footers per section, footnotes, endnotes, comments, text
boxes), every paragraph with

* display text (revision-aware "final" view; fields as placeholders, see ``wordeval.text``),
* its paragraph style name and *effective* paragraph properties after the cascade
  docDefaults -> table style -> numbering level -> paragraph style -> direct formatting,
* effective character properties per character range (run-length encoded over the text, so
  run boundaries do not matter), after docDefaults -> table style -> paragraph style ->
  character style -> direct formatting, with the toggle properties (bold, italic, caps, ...)
  XOR-ed across the style levels as Word does, hyperlinks as a character property,
* list membership and the computed list label (ListString),
* drawings (inline/floating, extent in EMU, alt text, wrap, position, image hash),

plus tables, sections (page setup, columns, line numbering, borders, header/footer links),
fields, notes, comments, revisions, bookmarks, styles (resolved), content controls, document
properties and a whitelist of settings.  Units stay in OOXML's native integers: twips,
half-points, eighths of a point, EMU.  Volatile parts (rsids, paraIds, drawing ids, proofErr,
lastRenderedPageBreak, dates, app.xml, hidden bookmarks' names) are never recorded.

A property the registry (``catalogue/properties.yaml``) names is decoded, at every level of the
cascade, by its location's accessor (``benchwright.wordeval.properties``), the one the operations
write it with; what the cascade then computes (toggles, inheritance, theme fonts, style names) is
the snapshot's own.

``flatten(snapshot, alignment)`` turns it into ``{key: value}`` with keys such as
``body/P12/para.ind.left`` or ``sections/S1/pgMar.top`` where the indices are the *reference*
document's, after aligning by content (``align_snapshots``).
"""
from __future__ import annotations

import bisect
import functools
import hashlib
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from lxml import etree
from rapidfuzz import process
from rapidfuzz.distance import Indel

from benchwright.errors import RecordError
from benchwright.formats.ooxml.accessors import (
    JC_ALIASES, ONOFF_FALSE, accessor, font_value, ind_values, native_value, onoff, to_int,
)
from benchwright.formats.ooxml.ns import NS, qn as _qn
from benchwright.formats.ooxml.package import Package
from benchwright.wordeval.properties import claims, core_accessors
from benchwright.wordeval.text import (
    DRAWING, FIELD_BEGIN, FIELD_END, ParagraphWalker, Piece, field_type, iter_block_paragraphs, normalize_field_code,
    plain, view,
)

W = NS["w"]
_WNS = "{%s}" % W
# qn() is called per element on hot paths; the same few dozen names are resolved millions of times
qn = functools.lru_cache(maxsize=None)(_qn)
W_TBL, W_TR, W_TC = qn("w:tbl"), qn("w:tr"), qn("w:tc")

# --------------------------------------------------------------------------------------------
# property flattening

TOGGLES = ("b", "i", "caps", "smallCaps", "strike", "dstrike", "outline", "shadow", "emboss", "imprint", "vanish")

# rPr / pPr children that carry nothing Word's object model exposes for these units
# (complex-script and East Asian variants, proofing, layout-compatibility flags).
IGNORED_RPR = {"bCs", "iCs", "szCs", "lang", "noProof", "webHidden", "snapToGrid", "rtl", "cs", "eastAsianLayout",
               "specVanish", "oMath", "fitText", "em", "rPrChange", "ins", "del", "moveFrom", "moveTo"}
IGNORED_PPR = {"kinsoku", "wordWrap", "overflowPunct", "topLinePunct", "autoSpaceDE", "autoSpaceDN", "adjustRightInd",
               "snapToGrid", "textAlignment", "textboxTightWrap", "bidi", "divId", "cnfStyle", "mirrorIndents",
               "suppressOverlap", "textDirection", "rPr", "sectPr", "pPrChange", "numPr", "pStyle",
               "suppressAutoHyphens"}
IGNORED_ATTRS = {"startChars", "endChars", "leftChars", "rightChars", "hangingChars", "firstLineChars",
                 "beforeLines", "afterLines", "themeColor", "themeShade", "themeTint", "themeFill", "themeFillShade",
                 "themeFillTint", "hint", "eastAsia", "eastAsiaTheme", "cs", "cstheme", "hAnsi", "hAnsiTheme"}

PPR_DEFAULTS = {"jc": "left", "ind.left": 0, "ind.right": 0, "ind.firstLine": 0, "spacing.before": 0,
                "spacing.after": 0, "spacing.line": 240, "spacing.lineRule": "auto", "outlineLvl": 9,
                "widowControl": False, "shd.val": "clear", "shd.fill": "auto", "shd.color": "auto"}
RPR_DEFAULTS = {"u": "none", "vertAlign": "baseline", "color": "auto", "highlight": "none", "position": 0,
                "spacing": 0, "w": 100, "kern": 0, "shd.val": "clear", "shd.fill": "auto", "shd.color": "auto",
                "u.color": "auto"}
_int = to_int
# The table style a table names, and the style references and flags a style carries: located by
# the same accessors the operations write them with (catalogue/properties.yaml's loci).
_TBL_STYLE = accessor("w:tblPr/w:tblStyle@w:val")
_BASED_ON, _NEXT = accessor("w:basedOn@w:val"), accessor("w:next@w:val")
_PRIORITY, _QFORMAT, _SEMI_HIDDEN = accessor("w:uiPriority@w:val"), accessor("w:qFormat"), accessor("w:semiHidden")


def _val(el, name="val"):
    return el.get(_WNS + name)


def _attrs(el, prefix: str, out: dict, skip=()) -> None:
    for k, v in el.attrib.items():
        if not k.startswith(_WNS):
            continue
        name = k[len(_WNS):]
        if name.startswith("rsid") or name in IGNORED_ATTRS or name in skip:
            continue
        key = prefix if name == "val" else f"{prefix}.{name}"
        out[key] = native_value(name, v)


def _flat_key(loc) -> str:
    """The key a registered location's value has in a flattened container (``ind.left``, ``b``, ``font``)."""
    if loc.local == "rFonts":
        return "font"
    if loc.attr_local is None or loc.attr_local == "val":
        return loc.local
    return f"{loc.local}.{loc.attr_local}"


def _decode_registered(el, locs, out: dict) -> bool:
    """Record the values the registered locations ``locs`` hold in ``el`` through their accessors;
    True when that is everything the element records (on/off elements, fonts, justification and
    indents are decoded whole by their accessors), False when its other attributes remain."""
    for loc in locs:
        v = loc.decode(el)
        if v is not None:
            out[_flat_key(loc)] = v
    name = locs[0].local
    if name == "ind":
        return {"left", "right", "firstLine"} <= {loc.attr_local for loc in locs}
    return locs[0].attr is None or name in ("rFonts", "jc")


def _is_onoff(local: str) -> bool:
    return local in _ONOFF_TAGS


_ONOFF_TAGS = set(TOGGLES) | {
    "keepNext", "keepLines", "pageBreakBefore", "widowControl", "suppressLineNumbers", "contextualSpacing",
    "noWrap", "tcFitText", "hideMark", "cantSplit", "tblHeader", "titlePg", "bidi", "rtlGutter", "formProt",
    "noEndnote", "webHidden", "snapToGrid", "noProof", "specVanish", "evenAndOddHeaders", "mirrorMargins",
    "trackRevisions", "gutterAtTop", "autoHyphenation", "updateFields", "semiHidden", "unhideWhenUsed", "qFormat",
    "locked", "hidden", "personal", "personalCompose", "personalReply", "autoRedefine"}


def flatten_props(container, ignored: set[str] = frozenset()) -> dict:
    """Flatten a property container (rPr, pPr, tblPr, trPr, tcPr, sectPr ...) to {key: value}.

    An element a registered property's location names (``w:b``, ``w:ind``, ``w:pgMar`` ...) is
    decoded by that location's accessor, the one the operations write it with; everything else
    generically (the preservation check compares it all)."""
    out: dict = {}
    if container is None:
        return out
    registered = claims().get(container.tag)
    for el in container:
        if not isinstance(el.tag, str) or not el.tag.startswith(_WNS):
            continue
        name = el.tag[len(_WNS):]
        if name in ignored:
            continue
        skip = ()
        locs = registered.get(el.tag) if registered else None
        if locs:
            if _decode_registered(el, locs, out):
                continue
            skip = {loc.attr_local for loc in locs}
        if _is_onoff(name):
            out[name] = onoff(el)
            continue
        if name == "rFonts":
            font = font_value(el)
            if font:
                out["font"] = font
            continue
        if name == "ind":
            out.update({"ind." + k: v for k, v in ind_values(el).items()})
            continue
        if name == "jc":
            v = _val(el)
            out["jc"] = JC_ALIASES.get(v, v)
            continue
        if name == "tabs":
            tabs = {}
            for t in el:
                if t.tag == _WNS + "tab" and t.get(_WNS + "val") != "num":   # "num": list-number tab
                    tabs[_int(t.get(_WNS + "pos"))] = (t.get(_WNS + "val"), t.get(_WNS + "leader") or "none")
            out["tabs"] = tabs   # merged specially in cascade
            continue
        if name == "numPr":
            continue
        if name == "tblLook":
            out.update(_tbl_look(el))
            continue
        if len(el):
            for child in el:
                if isinstance(child.tag, str) and child.tag.startswith(_WNS):
                    cname = child.tag[len(_WNS):]
                    if len(child):
                        continue
                    _attrs(child, f"{name}.{cname}", out)
            _attrs(el, name, out, skip)
            continue
        _attrs(el, name, out, skip)
        if name not in out and not any(k.startswith(name + ".") for k in out):
            out[name] = True
    return out


def _tbl_look(el) -> dict:
    out = {}
    v = _val(el)
    bits = {"firstRow": 0x20, "lastRow": 0x40, "firstColumn": 0x80, "lastColumn": 0x100, "noHBand": 0x200,
            "noVBand": 0x400}
    if v and re.fullmatch(r"[0-9A-Fa-f]{4}", v):
        n = int(v, 16)
        for k, b in bits.items():
            out["tblLook." + k] = bool(n & b)
    for k in bits:
        a = el.get(_WNS + k)
        if a is not None:
            out["tblLook." + k] = a.lower() not in ONOFF_FALSE
    return out


def merge(base: dict, over: dict) -> dict:
    out = dict(base)
    for k, v in over.items():
        if k == "tabs":
            tabs = dict(out.get("tabs") or {})
            for pos, spec in v.items():
                if spec[0] == "clear":
                    tabs.pop(pos, None)
                else:
                    tabs[pos] = spec
            out["tabs"] = tabs
        else:
            out[k] = v
    return out


def finish_props(props: dict, defaults: dict) -> dict:
    out = {}
    for k, v in props.items():
        if k == "tabs":
            if v:
                out["tabs"] = [[pos, spec[0], spec[1]] for pos, spec in sorted(v.items())]
            continue
        if v is False or v is None:
            continue
        if k in defaults and defaults[k] == v:
            continue
        out[k] = v
    return out


# --------------------------------------------------------------------------------------------
# styles, theme, numbering


class Styles:
    def __init__(self, root, theme_fonts: dict[str, str]):
        self.theme_fonts = theme_fonts
        self.by_id: dict[str, dict] = {}
        self.default: dict[str, str] = {}
        self.defaults_rpr: dict = {}
        self.defaults_ppr: dict = {}
        self._chain_cache: dict[str, list[dict]] = {}
        self._resolved: dict[tuple, dict] = {}
        if root is None:
            return
        dd = root.find(qn("w:docDefaults"))
        if dd is not None:
            rpr = dd.find(qn("w:rPrDefault") + "/" + qn("w:rPr"))
            ppr = dd.find(qn("w:pPrDefault") + "/" + qn("w:pPr"))
            self.defaults_rpr = flatten_props(rpr, IGNORED_RPR)
            self.defaults_ppr = flatten_props(ppr, IGNORED_PPR)
        for st in root.findall(qn("w:style")):
            sid = st.get(_WNS + "styleId")
            if sid is None:
                continue
            name_el = st.find(qn("w:name"))
            rec = {
                "id": sid,
                "type": st.get(_WNS + "type") or "paragraph",
                # Word treats style names case-insensitively ("heading 1" is shown as "Heading 1")
                "name": (_val(name_el) if name_el is not None else sid).lower(),
                "basedOn": _raw(_BASED_ON, st),
                "next": _raw(_NEXT, st),
                "custom": (st.get(_WNS + "customStyle") or "0").lower() in ("1", "true", "on"),
                "qFormat": bool(_QFORMAT.get(st)),
                "hidden": st.find(qn("w:hidden")) is not None and onoff(st.find(qn("w:hidden"))),
                "semiHidden": bool(_SEMI_HIDDEN.get(st)),
                "priority": _int(_raw(_PRIORITY, st)) if _raw(_PRIORITY, st) else None,
                "rPr": flatten_props(st.find(qn("w:rPr")), IGNORED_RPR),
                "pPr": flatten_props(st.find(qn("w:pPr")), IGNORED_PPR),
                "numPr": _num_pr(st.find(qn("w:pPr"))),
                "tblPr": flatten_props(st.find(qn("w:tblPr"))),
                "trPr": flatten_props(st.find(qn("w:trPr"))),
                "tcPr": flatten_props(st.find(qn("w:tcPr"))),
            }
            self.by_id[sid] = rec
            if (st.get(_WNS + "default") or "0").lower() in ("1", "true", "on"):
                self.default.setdefault(rec["type"], sid)

    def chain(self, sid: str | None) -> list[dict]:
        """Styles from the root ancestor down to ``sid`` (cycle-safe, bounded)."""
        if sid is None or sid not in self.by_id:
            return []
        if sid in self._chain_cache:
            return self._chain_cache[sid]
        out, seen, cur = [], set(), sid
        while cur and cur in self.by_id and cur not in seen and len(out) < 32:
            seen.add(cur)
            out.append(self.by_id[cur])
            cur = self.by_id[cur]["basedOn"]
        out.reverse()
        self._chain_cache[sid] = out
        return out

    def resolved(self, sid: str | None, kind: str) -> dict:
        key = (sid, kind)
        if key not in self._resolved:
            props: dict = {}
            for st in self.chain(sid):
                props = merge(props, st[kind])
            self._resolved[key] = props
        return self._resolved[key]

    def resolved_numpr(self, sid: str | None):
        res = None
        for st in self.chain(sid):
            if st["numPr"] is not None:
                res = st["numPr"]
        return res

    def name(self, sid: str | None) -> str | None:
        if sid is None:
            return None
        rec = self.by_id.get(sid)
        return rec["name"] if rec else sid.lower()   # a dangling reference: Word falls back to defaults

    def font(self, value):
        if isinstance(value, str) and value.startswith("theme:"):
            theme = value[6:]
            return self.theme_fonts.get("major" if theme.startswith("major") else "minor", value)
        return value


def _child_val(el, local_name):
    c = el.find(qn("w:" + local_name))
    return _val(c) if c is not None else None


def _raw(loc, base) -> str | None:
    """The attribute a location names, as written (a style id is a name, never a number)."""
    el = loc.find(base)
    return el.get(loc.attr) if el is not None else None


def _num_pr(ppr):
    if ppr is None:
        return None
    np_ = ppr.find(qn("w:numPr"))
    if np_ is None:
        return None
    ilvl = _child_val(np_, "ilvl")
    num = _child_val(np_, "numId")
    return (num, _int(ilvl) if ilvl is not None else 0)


def theme_fonts(pkg: Package, main: str) -> dict[str, str]:
    out = {}
    for part in pkg.related(main, "theme"):
        root = pkg.xml(part)
        for kind in ("major", "minor"):
            el = root.find(f".//{{{NS['a']}}}{kind}Font/{{{NS['a']}}}latin")
            if el is not None and el.get("typeface"):
                out[kind] = el.get("typeface")
    return out


class Numbering:
    def __init__(self, root, locator: str = "numbering.xml"):
        self.abstract: dict[str, dict[int, dict]] = {}
        self.nums: dict[str, tuple[str, dict[int, dict]]] = {}
        if root is None:
            return
        for an in root.findall(qn("w:abstractNum")):
            aid = an.get(_WNS + "abstractNumId")
            where = f"{locator}#abstractNumId={aid}"
            self.abstract[aid] = {_int(lvl.get(_WNS + "ilvl")): self._level(lvl, where)
                                  for lvl in an.findall(qn("w:lvl"))}
            link = an.find(qn("w:numStyleLink"))
            if link is not None:
                self.abstract[aid]["_styleLink"] = _val(link)
        for num in root.findall(qn("w:num")):
            nid = num.get(_WNS + "numId")
            aid = _child_val(num, "abstractNumId")
            overrides = {}
            for ov in num.findall(qn("w:lvlOverride")):
                ilvl = _int(ov.get(_WNS + "ilvl"))
                where = f"{locator}#numId={nid},ilvl={ilvl}"
                rec = {}
                so = ov.find(qn("w:startOverride"))
                if so is not None:
                    rec["startOverride"] = _decimal(_val(so), where, "w:startOverride")
                lvl = ov.find(qn("w:lvl"))
                if lvl is not None:
                    rec["lvl"] = self._level(lvl, where)
                overrides[ilvl] = rec
            self.nums[nid] = (aid, overrides)

    @staticmethod
    def _level(lvl, where: str) -> dict:
        start = _child_val(lvl, "start")
        return {
            "start": 1 if start is None else _decimal(start, f"{where},ilvl={lvl.get(_WNS + 'ilvl')}", "w:start"),
            "numFmt": _child_val(lvl, "numFmt") or "decimal",
            "lvlText": _child_val(lvl, "lvlText") or "",
            "lvlRestart": _int(_child_val(lvl, "lvlRestart")) if _child_val(lvl, "lvlRestart") else None,
            "pPr": flatten_props(lvl.find(qn("w:pPr")), IGNORED_PPR),
            "rPr": flatten_props(lvl.find(qn("w:rPr")), IGNORED_RPR),
            "suff": _child_val(lvl, "suff") or "tab",
        }

    def level(self, num_id: str, ilvl: int) -> tuple[str | None, dict | None]:
        if num_id not in self.nums:
            return None, None
        aid, overrides = self.nums[num_id]
        lvl = (self.abstract.get(aid) or {}).get(ilvl)
        ov = overrides.get(ilvl, {})
        if "lvl" in ov:
            lvl = ov["lvl"]
        return aid, lvl


def _decimal(value: str | None, locator: str, what: str) -> int:
    """A numbering value (ST_DecimalNumber, an integer). Anything else refuses the document by
    name: which value Word would count from is not documented, so no label could be trusted."""
    v = (value or "").strip()
    if re.fullmatch(r"[+-]?[0-9]+", v):
        try:
            return int(v)
        except ValueError:   # more digits than Python converts (sys.get_int_max_str_digits)
            pass
    raise RecordError(locator, f"{what} value {value!r} is not an integer (ST_DecimalNumber)")


_ROMAN = [(900, "cm"), (500, "d"), (400, "cd"), (100, "c"), (90, "xc"), (50, "l"), (40, "xl"),
          (10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i")]
# Letter and roman labels repeat a symbol as often as the value demands (lowerLetter 27 -> "aa",
# lowerRoman 4000 -> "mmmm", thousands as repeated "m" as the numerals have no larger symbol);
# a run longer than _MAX_RUN is written "<symbol>*<count>", so a huge w:start (2,000,000,000 in
# lowerLetter is 76,923,077 letters) costs a few bytes, in constant time, and still compares exactly.
_MAX_RUN = 32


def _repeat(symbol: str, count: int) -> str:
    return symbol * count if count <= _MAX_RUN else f"{symbol}*{count}"


def format_number(n: int, fmt: str) -> str:
    """Word's list label for value ``n`` in number format ``fmt``, computed arithmetically."""
    if fmt in ("decimal", "decimalZero"):
        return f"{n:02d}" if fmt == "decimalZero" and n < 10 else str(n)
    if fmt in ("lowerLetter", "upperLetter"):
        n = max(n, 1)
        s = _repeat(chr(ord("a") + (n - 1) % 26), (n - 1) // 26 + 1)
        return s.upper() if fmt == "upperLetter" else s
    if fmt in ("lowerRoman", "upperRoman"):
        thousands, m = divmod(max(n, 1), 1000)
        out = _repeat("m", thousands)
        for v, sym in _ROMAN:   # m < 1000: at most a dozen steps
            k, m = divmod(m, v)
            out += sym * k
        return out.upper() if fmt == "upperRoman" else out
    if fmt == "bullet":
        return "•"
    if fmt == "none":
        return ""
    return str(n)


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


# --------------------------------------------------------------------------------------------
# snapshot records


@dataclass
class Para:
    text: str
    style: str | None
    para: dict
    chars: dict
    num: dict
    loc: str | None = None
    drawings: list = field(default_factory=list)
    el: Any = None          # the w:p element (not serialised)
    read: str = ""          # read view (field results, no control characters): anchors match this
    start: int = 0          # offset of this paragraph in its story text


@dataclass
class Snapshot:
    stories: dict[str, list[Para]] = field(default_factory=dict)
    tables: list[dict] = field(default_factory=list)
    sections: list[dict] = field(default_factory=list)
    fields: dict[str, list[dict]] = field(default_factory=dict)
    notes: dict[str, list[dict]] = field(default_factory=dict)     # "footnote"/"endnote" -> [{story, ref}]
    comments: list[dict] = field(default_factory=list)
    revisions: dict[str, list[dict]] = field(default_factory=dict)
    bookmarks: dict[str, dict] = field(default_factory=dict)
    styles: dict[str, dict] = field(default_factory=dict)
    sdts: list[dict] = field(default_factory=list)
    props: dict[str, Any] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------------------------
# extraction

SETTINGS_WHITELIST = ("evenAndOddHeaders", "trackRevisions", "mirrorMargins", "gutterAtTop", "defaultTabStop",
                      "autoHyphenation", "documentProtection", "footnotePr", "endnotePr", "bookFoldPrinting",
                      "printTwoOnOne")
CORE_FIELDS = ("title", "subject", "creator", "keywords", "description", "category", "contentStatus", "language",
               "identifier", "version", "lastModifiedBy", "revision", "created", "modified", "lastPrinted")


_STYLES_CACHE: dict = {}
_STYLE_RECORDS_CACHE: dict = {}


class _Extractor:
    def __init__(self, pkg: Package):
        self.pkg = pkg
        self.main = pkg.main_part()
        self.rels = pkg.rel_map(self.main)
        sparts = pkg.related(self.main, "styles")
        tf = theme_fonts(pkg, self.main)
        skey = (hashlib.sha1(pkg.get(sparts[0])).hexdigest() if sparts else None, tuple(sorted(tf.items())))
        cached = _STYLES_CACHE.get(skey)
        if cached is None:
            cached = Styles(pkg.xml(sparts[0]) if sparts else None, tf)
            _STYLES_CACHE[skey] = cached
            while len(_STYLES_CACHE) > 32:
                _STYLES_CACHE.pop(next(iter(_STYLES_CACHE)))
        self.styles = cached
        nparts = pkg.related(self.main, "numbering")
        self.numbering = Numbering(pkg.xml(nparts[0]) if nparts else None,
                                   f"{pkg.locator}:{nparts[0]}" if nparts else pkg.locator)
        self.snap = Snapshot()
        self._rpr_cache: dict = {}
        # keyed by lxml elements: the keys keep their proxies alive, so a lookup finds the same object
        self._tbl_style: dict = {}
        self._child_idx: dict = {}
        self._img_hash: dict[tuple, str] = {}

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

    # -------------------------------------------------------------- drawings
    def _drawings(self, r, part) -> list[dict]:
        out = []
        for d in r.iter(qn("w:drawing")):
            for kind_el in d:
                kind = etree.QName(kind_el).localname
                if kind not in ("inline", "anchor"):
                    continue
                rec: dict = {"kind": kind}
                ext = kind_el.find(qn("wp:extent"))
                if ext is not None:
                    rec["cx"] = _int(ext.get("cx"))
                    rec["cy"] = _int(ext.get("cy"))
                doc_pr = kind_el.find(qn("wp:docPr"))
                if doc_pr is not None:
                    for a in ("descr", "title"):
                        if doc_pr.get(a):
                            rec[a] = doc_pr.get(a)
                    if (doc_pr.get("hidden") or "0").lower() in ("1", "true"):
                        rec["hidden"] = True
                if kind == "anchor":
                    for wrap in ("wrapNone", "wrapSquare", "wrapTight", "wrapThrough", "wrapTopAndBottom"):
                        if kind_el.find(qn("wp:" + wrap)) is not None:
                            rec["wrap"] = wrap[4:]
                    if (kind_el.get("behindDoc") or "0") in ("1", "true"):
                        rec["behindDoc"] = True
                    for axis in ("positionH", "positionV"):
                        pos = kind_el.find(qn("wp:" + axis))
                        if pos is not None:
                            rec[axis + ".relativeFrom"] = pos.get("relativeFrom")
                            off = pos.find(qn("wp:posOffset"))
                            al = pos.find(qn("wp:align"))
                            if off is not None:
                                rec[axis + ".offset"] = _int(off.text)
                            if al is not None:
                                rec[axis + ".align"] = al.text
                blip = kind_el.find(".//" + qn("a:blip"))
                if blip is not None:
                    rid = blip.get(qn("r:embed"))
                    rec["image"] = self._image_hash(part, rid)
                txbx = kind_el.find(".//" + qn("w:txbxContent"))
                if txbx is not None:
                    rec["text"] = "\n".join(plain(x.text) for x in self._sub_story(txbx, part))
                wsp = kind_el.find(".//" + qn("wps:wsp"))
                if wsp is not None:
                    rec.update(_shape_props(wsp))
                out.append(rec)
        return out

    def _sub_story(self, container, part) -> list[Para]:
        walker = ParagraphWalker("final")
        return [self._paragraph(p, view(walker.pieces(p), "compare"), None, None, part)
                for p in iter_block_paragraphs(container)]

    def _image_hash(self, part: str, rid: str | None) -> str | None:
        if not rid:
            return None
        key = (part, rid)
        if key not in self._img_hash:
            rel = self.pkg.rel_map(part).get(rid)
            if rel is None or rel.external or rel.target_part not in self.pkg.members:
                self._img_hash[key] = "missing"
            else:
                self._img_hash[key] = hashlib.sha256(self.pkg.members[rel.target_part]).hexdigest()[:16]
        return self._img_hash[key]

    # -------------------------------------------------------------- whole document
    def run(self) -> Snapshot:
        pkg, snap = self.pkg, self.snap
        doc = pkg.xml(self.main)
        body = doc.find(qn("w:body"))
        if body is None:
            raise ValueError("document has no w:body")
        body_paras = self.story("body", body, self.main)
        self._numbering_labels(body_paras)
        self._tables(body)
        self._sections(body)
        self._header_stories()
        self._notes(body)
        self._comments()
        self._markers()
        self._revisions()
        self._styles()
        self._sdts()
        self._props()
        self._settings()
        snap.flags = pkg.flags()
        return snap

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
        records = _STYLE_RECORDS_CACHE.get(id(st))
        if records is None or records[0] is not st:
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
            records = (st, recs)
            _STYLE_RECORDS_CACHE[id(st)] = records
            while len(_STYLE_RECORDS_CACHE) > 32:
                _STYLE_RECORDS_CACHE.pop(next(iter(_STYLE_RECORDS_CACHE)))
        for name, out in records[1].items():
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
        root = self.pkg.xml(parts[0])
        registered = claims().get(root.tag, {})
        for name in SETTINGS_WHITELIST:
            el = root.find(qn("w:" + name))
            if el is None:
                continue
            if name in _ONOFF_TAGS:
                locs = registered.get(el.tag)
                # a registered setting (evenAndOddHeaders ...) is decoded by its accessor
                if locs[0].decode(el) if locs else onoff(el):
                    self.snap.settings[name] = True
            else:
                flat = finish_props(flatten_props(_wrap(el)), {"footnotePr.numFmt": "decimal",
                                                               "endnotePr.numFmt": "lowerRoman",
                                                               "footnotePr.pos": "pageBottom",
                                                               "endnotePr.pos": "docEnd"})
                for k, v in flat.items():
                    if k.startswith(("footnotePr.footnote", "endnotePr.endnote")):
                        continue   # separator note references
                    self.snap.settings[k] = v
        dv = root.find(qn("w:docVars"))
        if dv is not None:
            for var in dv.findall(qn("w:docVar")):
                self.snap.props["var." + (var.get(_WNS + "name") or "")] = var.get(_WNS + "val")


_A = "{%s}" % NS["a"]
# defaults of a:bodyPr (ECMA-376 21.1.2.1.1) and a:ln@w (0: the thinnest line)
_BODY_DEFAULTS = {"lIns": 91440, "tIns": 45720, "rIns": 91440, "bIns": 45720}


def _color(parent) -> str | None:
    """The sRGB colour of a fill/colour parent (a:solidFill, a:glow ...), or its scheme colour name."""
    if parent is None:
        return None
    c = parent.find(_A + "srgbClr")
    if c is not None:
        return (c.get("val") or "").upper()
    c = parent.find(_A + "schemeClr")
    return f"scheme:{c.get('val')}" if c is not None else None


def _shape_props(wsp) -> dict:
    """What Word's Shape / TextFrame / FillFormat / LineFormat / effect objects report for a
    WordprocessingShape: preset geometry, text box flag, rotation, fill, outline, shadow, glow,
    soft edges, text frame margins, vertical anchor and autosize."""
    rec: dict = {}
    nv = wsp.find(qn("wps:cNvSpPr"))
    rec["shape.textbox"] = nv is not None and (nv.get("txBox") or "0") in ("1", "true")
    sppr = wsp.find(qn("wps:spPr"))
    if sppr is not None:
        geom = sppr.find(_A + "prstGeom")
        rec["shape.geometry"] = geom.get("prst") if geom is not None else "custom"
        xfrm = sppr.find(_A + "xfrm")
        rec["shape.rotation"] = _int(xfrm.get("rot")) if xfrm is not None and xfrm.get("rot") else 0
        if sppr.find(_A + "noFill") is not None:
            rec["fill"] = "none"
        elif sppr.find(_A + "solidFill") is not None:
            rec["fill"] = _color(sppr.find(_A + "solidFill"))
        ln = sppr.find(_A + "ln")
        if ln is not None:
            rec["line.weight"] = _int(ln.get("w")) if ln.get("w") else 0
            if ln.find(_A + "noFill") is not None:
                rec["line.color"] = "none"
            elif ln.find(_A + "solidFill") is not None:
                rec["line.color"] = _color(ln.find(_A + "solidFill"))
            dash = ln.find(_A + "prstDash")
            rec["line.dash"] = dash.get("val") if dash is not None else "solid"
        lst = sppr.find(_A + "effectLst")
        if lst is not None:
            sh = lst.find(_A + "outerShdw")
            if sh is not None:
                rec["shadow"] = True
                rec["shadow.blur"] = _int(sh.get("blurRad") or "0")
                rec["shadow.distance"] = _int(sh.get("dist") or "0")
                rec["shadow.color"] = _color(sh)
            gl = lst.find(_A + "glow")
            if gl is not None:
                rec["glow.radius"] = _int(gl.get("rad") or "0")
                rec["glow.color"] = _color(gl)
            se = lst.find(_A + "softEdge")
            if se is not None:
                rec["softEdge.radius"] = _int(se.get("rad") or "0")
    body = wsp.find(qn("wps:bodyPr"))
    if body is not None and wsp.find(qn("wps:txbx")) is not None:
        for k, d in _BODY_DEFAULTS.items():
            rec[f"frame.{k}"] = _int(body.get(k)) if body.get(k) else d
        rec["frame.anchor"] = body.get("anchor") or "t"
        rec["frame.autosize"] = body.find(_A + "spAutoFit") is not None
    return rec


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


def _norm_link(link: str) -> str:
    if "#_" in link and link.startswith("#"):
        return "#_hidden"   # links to hidden bookmarks (_Toc...) have generated names
    m = re.match(r"^([a-zA-Z][a-zA-Z0-9+.-]*://[^/?#]+)([?#].*)?$", link)
    if m:
        return m.group(1) + "/" + (m.group(2) or "")   # http://host == http://host/
    return link


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


def extract_snapshot(data: bytes | Package, locator: str = "<docx>") -> Snapshot:
    """Snapshot of a .docx (bytes are read through the safe reader)."""
    pkg = data if isinstance(data, Package) else Package.from_bytes(data, locator)
    return _Extractor(pkg).run()


# --------------------------------------------------------------------------------------------
# alignment by content


# An edited item is paired with a reference item at most this many positions past the previous
# pair of its block (beyond that it shows as inserted, the far reference item as deleted): bounds
# the similarity work to O(n * window) when every item changed.
PAIR_WINDOW = 50
# Anchoring stops refining after this many items scanned per input item (adversarial repetition);
# what is left unanchored is paired by similarity like any other changed block.
ANCHOR_WORK = 16


def align(ref_keys: list, out_keys: list, similarity=None) -> dict[int, int]:
    """Map output indices to reference indices by content, never by position alone.

    Equal items are anchored first (``_anchors``: common prefix and suffix, then items unique on
    both sides in order, recursively between them, as patience diff does); inside each block
    left between anchors, items are paired greedily in order with the most similar reference item
    within ``PAIR_WINDOW`` (the nearest of equally similar ones) when similar enough (ratio >= 0.5,
    ``_ratio`` unless ``similarity`` is given), so an edited paragraph still pairs
    with its reference and its differences are reported as property changes.  Near-linear:
    difflib's SequenceMatcher recursion is quadratic when short equal runs alternate with changes,
    and pairing every changed item against every other was quadratic in the document.
    """
    anchors = _anchors(ref_keys, out_keys)
    mapping = {j: i for i, j in anchors}
    ref_s = [x if isinstance(x, str) else str(x) for x in ref_keys] if similarity is None else ref_keys
    ref_len = [len(x) for x in ref_s] if similarity is None else None
    prev_i = prev_j = -1
    for i, j in anchors + [(len(ref_keys), len(out_keys))]:
        i1, i2, j1, j2 = prev_i + 1, i, prev_j + 1, j
        prev_i, prev_j = i, j
        used_i = i1
        for jj in range(j1, j2 if i2 > i1 else j1):
            hi = min(i2, used_i + PAIR_WINDOW)
            if hi <= used_i:
                break   # every reference item of the block is paired
            q = out_keys[jj]
            if similarity is None and len(q) + max(ref_len[used_i:hi]) <= _CHAR_LIMIT:
                # all candidates compared by characters: one call, the first best wins
                hit = process.extractOne(q, ref_s[used_i:hi], scorer=Indel.normalized_similarity, score_cutoff=0.5)
                best = used_i + hit[2] if hit is not None else None
            else:
                best, best_r = None, 0.5
                for ii in range(used_i, hi):
                    r = similarity(ref_keys[ii], q) if similarity else _ratio(ref_s[ii], q, best_r)
                    if r > best_r or (best is None and r >= best_r):
                        best, best_r = ii, r
                        if r >= 0.999:
                            break
            if best is not None:
                mapping[jj] = best
                used_i = best + 1
    return mapping


def _anchors(a: list, b: list) -> list[tuple[int, int]]:
    """Sorted (i, j) pairs with ``a[i] == b[j]``, increasing in both: a common subsequence."""
    pairs: list[tuple[int, int]] = []
    budget = ANCHOR_WORK * (len(a) + len(b) + 1)
    stack = [(0, len(a), 0, len(b))]
    while stack:
        alo, ahi, blo, bhi = stack.pop()
        while alo < ahi and blo < bhi and a[alo] == b[blo]:
            pairs.append((alo, blo))
            alo, blo = alo + 1, blo + 1
        while alo < ahi and blo < bhi and a[ahi - 1] == b[bhi - 1]:
            ahi, bhi = ahi - 1, bhi - 1
            pairs.append((ahi, bhi))
        budget -= (ahi - alo) + (bhi - blo)
        if alo == ahi or blo == bhi or budget < 0:
            continue
        count_a, count_b = Counter(a[alo:ahi]), Counter(b[blo:bhi])
        pos_a = {x: i for i, x in enumerate(a[alo:ahi], alo) if count_a[x] == 1}
        unique = [(pos_a[x], j) for j, x in enumerate(b[blo:bhi], blo) if count_b[x] == 1 and x in pos_a]
        for i, j in _increasing(unique):
            pairs.append((i, j))
            stack.append((alo, i, blo, j))
            alo, blo = i + 1, j + 1
        if unique:
            stack.append((alo, ahi, blo, bhi))
    pairs.sort()
    return pairs


def _increasing(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Longest run of ``pairs`` (sorted by j) whose i increase too (patience sorting, O(k log k))."""
    tails: list[int] = []      # smallest last i of an increasing run of each length
    tail_at: list[int] = []    # index in pairs of that last element
    back: list[int] = []
    for k, (i, _) in enumerate(pairs):
        n = bisect.bisect_left(tails, i)
        if n == len(tails):
            tails.append(i)
            tail_at.append(k)
        else:
            tails[n], tail_at[n] = i, k
        back.append(tail_at[n - 1] if n else -1)
    out = []
    k = tail_at[-1] if tail_at else -1
    while k >= 0:
        out.append(pairs[k])
        k = back[k]
    return out[::-1]


# Similarity cost bounds: texts are compared by characters up to _CHAR_LIMIT characters (both
# together), by words up to _WORD_LIMIT words, beyond that by their multisets of words (linear).
_CHAR_LIMIT = 10_000
_WORD_LIMIT = 40_000
_TOKEN = re.compile(r"\w+|[^\w\s]")


def _ratio(a, b, cutoff: float = 0.0) -> float:
    """Similarity in [0, 1], 0 below ``cutoff``: 2 * LCS / (len(a) + len(b)) (rapidfuzz's Indel,
    bit-parallel; difflib's ratio is quadratic in the text length), over characters, or over
    words for long texts; for huge ones the same formula over word multisets (an upper bound)."""
    if a == b:
        return 1.0
    a, b = str(a), str(b)
    if len(a) + len(b) > _CHAR_LIMIT:
        ids: dict[str, int] = {}   # words as ints: equal words equal, whatever str hashing does
        a = [ids.setdefault(w, len(ids)) for w in _TOKEN.findall(a)]
        b = [ids.setdefault(w, len(ids)) for w in _TOKEN.findall(b)]
        if len(a) + len(b) > _WORD_LIMIT:
            r = 2 * sum((Counter(a) & Counter(b)).values()) / (len(a) + len(b))
            return r if r >= cutoff else 0.0
    return Indel.normalized_similarity(a, b, score_cutoff=cutoff)


@dataclass
class Alignment:
    sections: dict[int, int]
    stories: dict[str, str]                 # output story name -> reference story name
    paragraphs: dict[str, dict[int, int]]   # per output story: output index -> reference index
    tables: dict[int, int]
    comments: dict[int, int]
    notes: dict[str, dict[int, int]]


def identity_alignment(snap: Snapshot) -> Alignment:
    return Alignment(
        sections={i: i for i in range(len(snap.sections))},
        stories={s: s for s in snap.stories},
        paragraphs={s: {i: i for i in range(len(ps))} for s, ps in snap.stories.items()},
        tables={i: i for i in range(len(snap.tables))},
        comments={i: i for i in range(len(snap.comments))},
        notes={k: {i: i for i in range(len(v))} for k, v in snap.notes.items()},
    )


def align_snapshots(ref: Snapshot, out: Snapshot) -> Alignment:
    """Align ``out`` to ``ref`` by content: sections, stories, paragraphs, tables, notes, comments."""
    sec_map = align([s["first_text"] for s in ref.sections], [s["first_text"] for s in out.sections])
    # sections without a content match (e.g. empty first paragraphs) pair by position when free
    free_ref = [i for i in range(len(ref.sections)) if i not in sec_map.values()]
    for j in range(len(out.sections)):
        if j not in sec_map and j in free_ref:
            sec_map[j] = j
            free_ref.remove(j)
    stories = {}
    for s in out.stories:
        if s.startswith(("header/", "footer/")):
            kind, sec, typ = s.split("/")
            j = int(sec[1:])
            stories[s] = f"{kind}/S{sec_map[j]}/{typ}" if j in sec_map else f"{kind}/XS{j}/{typ}"
    # notes: align by text of each note
    notes_map: dict[str, dict[int, int]] = {}
    for kind in set(ref.notes) | set(out.notes):
        rl = ref.notes.get(kind, [])
        ol = out.notes.get(kind, [])
        rt = ["\n".join(p.text for p in ref.stories[n["story"]]) for n in rl]
        ot = ["\n".join(p.text for p in out.stories[n["story"]]) for n in ol]
        m = align(rt, ot)
        notes_map[kind] = m
        for j, n in enumerate(ol):
            stories[n["story"]] = rl[m[j]]["story"] if j in m else n["story"].replace("/N", "/XN")
    cmap = align([(c["anchor"], c["text"]) for c in ref.comments], [(c["anchor"], c["text"]) for c in out.comments],
                 similarity=lambda a, b: _ratio(a[0], b[0]) * 0.5 + _ratio(a[1], b[1]) * 0.5)
    for j, c in enumerate(out.comments):
        stories[c["story"]] = ref.comments[cmap[j]]["story"] if j in cmap else c["story"].replace("/C", "/XC")
    for s in out.stories:
        stories.setdefault(s, s)
    paragraphs = {}
    for s, paras in out.stories.items():
        rs = stories[s]
        ref_paras = ref.stories.get(rs, [])
        paragraphs[s] = align([p.text for p in ref_paras], [p.text for p in paras])
    tmap = align([_table_sig(t) for t in ref.tables], [_table_sig(t) for t in out.tables])
    return Alignment(sec_map, stories, paragraphs, tmap, cmap, notes_map)


def _table_sig(t: dict) -> str:
    return "|".join("\t".join(row) for row in t["text"])


# --------------------------------------------------------------------------------------------
# flattening to {key: value}


def flatten(snap: Snapshot, al: Alignment) -> dict[str, Any]:
    out: dict[str, Any] = {}
    pkey: dict[str, dict[int, str]] = {}   # story -> paragraph index -> key

    for s, paras in snap.stories.items():
        rs = al.stories.get(s, s)
        m = al.paragraphs.get(s, {})
        keys = {}
        for i, p in enumerate(paras):
            k = f"{rs}/P{m[i]}" if i in m else f"{rs}/X{i}"
            keys[i] = k
            out[k + "/text"] = p.text
            if p.style is not None:
                out[k + "/style"] = p.style
            if p.loc:
                out[k + "/loc"] = p.loc
            for pk, pv in p.para.items():
                out[f"{k}/para.{pk}"] = pv
            for ck, segs in p.chars.items():
                out[f"{k}/chars.{ck}"] = segs   # [[start, end, value], ...], never mutated
            for nk, nv in p.num.items():
                out[f"{k}/num.{nk}"] = nv
            for di, d in enumerate(p.drawings):
                for dk, dv in d.items():
                    out[f"{k}/draw{di}.{dk}"] = dv
        pkey[s] = keys
        out[f"{rs}/count"] = len(paras)

    for j, t in enumerate(snap.tables):
        k = f"tables/T{al.tables[j]}" if j in al.tables else f"tables/X{j}"
        out[k + "/rows"] = len(t["rows"])
        out[k + "/cols"] = max((len(r) for r in t["cells"]), default=0)
        out[k + "/grid"] = t["grid"]
        out[k + "/text"] = t["text"]
        if t["style"]:
            out[k + "/style"] = t["style"]
        if t["caption"]:
            out[k + "/caption"] = t["caption"]
        for pk, pv in t["tbl"].items():
            out[f"{k}/tbl.{pk}"] = pv
        for ri, row in enumerate(t["rows"]):
            for pk, pv in row.items():
                out[f"{k}/row{ri + 1}.{pk}"] = pv
        for ri, row in enumerate(t["cells"]):
            for ci, cell in enumerate(row):
                for pk, pv in cell.items():
                    out[f"{k}/cell{ri + 1}.{ci + 1}.{pk}"] = pv
    out["tables/count"] = len(snap.tables)

    for j, sec in enumerate(snap.sections):
        k = f"sections/S{al.sections[j]}" if j in al.sections else f"sections/XS{j}"
        for pk, pv in sec["props"].items():
            out[f"{k}/{pk}"] = pv
        out[f"{k}/paragraphs"] = sec["n_paras"]
        for hf, info in sec["hf"].items():
            out[f"{k}/{hf}.linked"] = info["linked"]
            out[f"{k}/{hf}.exists"] = info["part"] is not None
    out["sections/count"] = len(snap.sections)

    el_index: dict[str, dict] = {}   # story -> {w:p element: paragraph index}
    for s, flist in snap.fields.items():
        rs = al.stories.get(s, s)
        for i, f in enumerate(flist):
            k = f"fields/{rs}/F{i}"
            out[k + "/code"] = f["code"]
            out[k + "/result"] = f["result"]
            if f.get("locked"):
                out[k + "/locked"] = True
            if "entries" in f:
                out[k + "/entries"] = f["entries"]
            for n, e in enumerate(f.get("layout", ())):
                ek = f"{k}/E{n}"
                if e["style"] is not None:
                    out[ek + "/style"] = e["style"]
                for pk, pv in e["para"].items():
                    out[f"{ek}/para.{pk}"] = pv
                for nk, nv in e["num"].items():
                    out[f"{ek}/num.{nk}"] = nv
                for ck, segs in e["chars"].items():
                    out[f"{ek}/chars.{ck}"] = segs
            if s not in el_index:
                el_index[s] = {p.el: i for i, p in enumerate(snap.stories.get(s, []))}
            out[k + "/para"] = pkey.get(s, {}).get(el_index[s].get(f["para"]))

    for kind, notes in snap.notes.items():
        for j, n in enumerate(notes):
            rs = al.stories.get(n["story"], n["story"])
            out[f"{rs}/ref"] = pkey["body"].get(n["para"])
        out[f"{kind}/count"] = len(notes)

    for j, c in enumerate(snap.comments):
        rs = al.stories.get(c["story"], c["story"])
        out[f"{rs}/anchor"] = c["anchor"]
        out[f"{rs}/author"] = c["author"]
        out[f"{rs}/initials"] = c["initials"]
        out[f"{rs}/para"] = pkey["body"].get(c["para"]) if c["para"] is not None else None
        if c.get("parent"):
            out[f"{rs}/parent"] = al.stories.get(c["parent"], c["parent"])
        if c.get("done"):
            out[f"{rs}/done"] = True
    out["comment/count"] = len(snap.comments)

    for s, revs in snap.revisions.items():
        rs = al.stories.get(s, s)
        for i, r in enumerate(revs):
            k = f"revisions/{rs}/R{i}"
            for rk, rv in r.items():
                if rk == "para":
                    rv = pkey.get(s, {}).get(rv)
                out[f"{k}/{rk}"] = rv
    out["revisions/count"] = sum(len(v) for v in snap.revisions.values())

    for name, b in snap.bookmarks.items():
        out[f"bookmarks/{name}/text"] = b["text"]
        out[f"bookmarks/{name}/para"] = pkey["body"].get(b["para"])

    for name, st in snap.styles.items():
        for sk, sv in st.items():
            if isinstance(sv, dict):
                for pk, pv in sv.items():
                    out[f"styles/{name}/{sk}.{pk}"] = pv
            elif sv is not None and sv is not False:
                out[f"styles/{name}/{sk}"] = sv

    for i, sdt in enumerate(snap.sdts):
        for sk, sv in sdt.items():
            out[f"sdts/D{i}/{sk}"] = sv
    out["sdts/count"] = len(snap.sdts)
    for pk, pv in snap.props.items():
        out[f"props/{pk}"] = pv
    for sk, sv in snap.settings.items():
        out[f"settings/{sk}"] = sv
    return out


def snapshot_dict(snap: Snapshot) -> dict[str, Any]:
    """Reference-indexed flat dict of a snapshot on its own (identity alignment)."""
    return flatten(snap, identity_alignment(snap))


__all__ = ["extract_snapshot", "Snapshot", "Para", "align", "align_snapshots", "flatten", "snapshot_dict",
           "identity_alignment", "format_number", "FIELD_BEGIN", "FIELD_END"]
