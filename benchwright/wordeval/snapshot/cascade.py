"""The style cascade: property containers flattened to {key: value}, then styles, theme fonts and
numbering, which the extractor merges in Word's order."""
from __future__ import annotations

import re

from benchwright.errors import RecordError
from benchwright.formats.ooxml.accessors import (
    JC_ALIASES, ONOFF_FALSE, accessor, font_value, ind_values, native_value, onoff,
)
from benchwright.formats.ooxml.ns import NS
from benchwright.formats.ooxml.package import Package
from benchwright.wordeval.properties import claims
from benchwright.wordeval.snapshot.common import _WNS, _int, _val, qn

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
# The table style a table names, and the style references and flags a style carries: located by
# the same accessors the operations write them with (catalogue/properties.yaml's loci).
_TBL_STYLE = accessor("w:tblPr/w:tblStyle@w:val")
_BASED_ON, _NEXT = accessor("w:basedOn@w:val"), accessor("w:next@w:val")
_PRIORITY, _QFORMAT, _SEMI_HIDDEN = accessor("w:uiPriority@w:val"), accessor("w:qFormat"), accessor("w:semiHidden")


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
