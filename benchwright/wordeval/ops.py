"""The operation library: Word commands applied deterministically to a :class:`WordDoc`.

Two layers, as in python-docx: :mod:`benchwright.formats.ooxml.schema_order` knows the XML and where
children go; the functions here are named after what Word does.

* ``set_property`` is the one generic mechanism behind the many formatting commands
  (``Font.Bold``, ``ParagraphFormat.LeftIndent``, ``PageSetup.TopMargin``, ``Cell.VerticalAlignment``
  ...).  The catalogue's property registry says, per Word property, which object it lives on
  (``scope``), where it lives in OOXML (``locus``, e.g. ``w:pPr/w:ind@w:left``), its value kind and,
  when python-docx models it, the python-docx attribute (``python_docx``) - which is then used.
* Everything else is a distinct operation because Word really does something different:
  footnotes, comments, tracked changes, fields, TOC, bookmarks, hyperlinks, pictures, lists,
  section breaks, content controls, custom properties ...

Every operation has the signature ``op(wd, target, params) -> None`` where ``target`` is a
resolved anchor dict and ``params`` holds OOXML-native values (twips, half-points, EMU, OOXML
enumeration strings).  Ids are sequential, dates fixed (``FIXED_DATE``), author fixed.
"""
from __future__ import annotations

import copy
import importlib
import re
from pathlib import Path
from typing import Callable

from docx.oxml.parser import parse_xml
from docx.shared import Emu, Pt, RGBColor, Twips

from benchwright.formats.ooxml.ns import FIXED_DATE, NS, RT, qn
from benchwright.formats.ooxml.schema_order import get_or_add, insert_child
from benchwright.wordeval import text as T
from benchwright.wordeval.docmodel import (
    AUTHOR, AUTHOR_INITIALS, AnchorError, PreconditionError, W_NS_DECL, WordDoc, make_run, set_paragraph_text, w_el,
)

ASSETS = Path(__file__).with_name("assets")
OPERATIONS: dict[str, Callable] = {}


def operation(name: str):
    def deco(fn):
        OPERATIONS[name] = fn
        fn.op_name = name
        return fn
    return deco


def apply(wd: WordDoc, op: str, target: dict, params: dict) -> None:
    if op not in OPERATIONS:
        raise KeyError(f"unknown operation {op!r}")
    OPERATIONS[op](wd, target or {}, params or {})


# ============================================================================ helpers


def _story_container(wd: WordDoc, target: dict):
    """Container element of the story an anchor points into (body by default)."""
    story = target.get("story", "body")
    if story == "body":
        return wd.body
    if story in ("header", "footer"):
        sec = wd.section(target.get("section"))
        hf = _hf(sec, story, target.get("hf_type", "primary"))
        return hf._element
    if story in ("footnote", "endnote"):
        return wd.note(story, target["note"])
    if story == "comment":
        return wd.comment(target["comment"])
    raise AnchorError(wd.locator, f"unknown story {story!r}")


def paragraphs_for(wd: WordDoc, target: dict) -> list:
    container = _story_container(wd, target)
    if "paragraphs" in target:
        return [wd.paragraph(p, container) for p in target["paragraphs"]]
    if "paragraph" in target:
        return [wd.paragraph(target["paragraph"], container)]
    if "table" in target:
        return [p for tc in _cells_for(wd, target) for p in tc.iter(qn("w:p"))]
    raise AnchorError(wd.locator, f"target {target!r} names no paragraph")


def runs_for(wd: WordDoc, target: dict) -> list:
    container = _story_container(wd, target)
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


def _cells_for(wd: WordDoc, target: dict) -> list:
    tbl = wd.table(target["table"])
    rows = tbl.findall(qn("w:tr"))
    if "cell" in target:
        r, c = target["cell"]
        return [list(T.row_cells(rows[r - 1]))[c - 1]]
    if "row" in target:
        return list(T.row_cells(rows[target["row"] - 1]))
    if "column" in target:
        return [list(T.row_cells(tr))[target["column"] - 1] for tr in rows]
    return [tc for tr in rows for tc in T.row_cells(tr)]


def _hf(section, kind: str, hf_type: str):
    if kind == "header":
        return {"primary": section.header, "first": section.first_page_header,
                "even": section.even_page_header}[hf_type]
    return {"primary": section.footer, "first": section.first_page_footer, "even": section.even_page_footer}[hf_type]


def _sect_prs(wd: WordDoc, target: dict) -> list:
    if target.get("all_sections"):
        return [s._sectPr for s in wd.doc.sections]
    return [wd.section(target.get("section"))._sectPr]


def _resolve_attr(obj, path: str):
    parts = path.split(".")
    for p in parts[:-1]:
        obj = getattr(obj, p)
    return obj, parts[-1]


def _docx_value(kind: str, value, spec: dict):
    if value is None:
        return None
    if kind == "twips":
        return Twips(int(value))
    if kind == "half_points":
        return Pt(value / 2)
    if kind == "emu":
        return Emu(int(value))
    if kind == "color":
        return RGBColor.from_string(value)
    if kind == "enum":
        mod, _, cls = spec["docx_enum"].rpartition(".")
        enum_cls = getattr(importlib.import_module(mod), cls)
        return getattr(enum_cls, spec["docx_values"][value])
    if kind == "onoff_inverse":
        return not value
    return value


def set_locus(base, locus: str, kind: str, value, also: dict | None = None) -> None:
    """Set a value at an OOXML locus like ``w:pPr/w:ind@w:left`` below ``base``, in schema order."""
    path, _, attr = locus.partition("@")
    el = base
    for seg in path.split("/"):
        if seg:
            el = get_or_add(el, seg)
    if kind in ("onoff", "onoff_inverse"):
        on = bool(value) if kind == "onoff" else not bool(value)
        if on:
            el.attrib.pop(qn("w:val"), None)
        else:
            el.set(qn("w:val"), "0")
    elif value is None:
        el.getparent().remove(el)
        return
    else:
        el.set(qn(attr or "w:val"), str(value))
    for k, v in (also or {}).items():
        el.set(qn(k), str(v))


def _objects(wd: WordDoc, scope: str, target: dict) -> list[tuple]:
    """(xml element, python-docx proxy or None) pairs the property is set on."""
    from docx.text.run import Run
    if scope == "run":
        out = []
        for r in runs_for(wd, target):
            out.append((r, Run(r, wd.proxy(r.getparent()))))
        return out
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
        return [(tbl.findall(qn("w:tr"))[r - 1], proxy.rows[r - 1]) for r in rows]
    if scope == "cell":
        from docx.table import _Cell
        tproxy = wd.table_proxy(wd.table(target["table"]))
        return [(tc, _Cell(tc, tproxy)) for tc in _cells_for(wd, target)]
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


# The page margins Word (and LibreOffice's import) use for a section without w:pgMar.
WORD_DEFAULT_PGMAR = (("top", 1440), ("right", 1800), ("bottom", 1440), ("left", 1800), ("header", 720),
                      ("footer", 720), ("gutter", 0))


def _ensure_pgmar(sect_pr) -> None:
    """A section without ``w:pgMar`` gets all seven margins (every attribute of CT_PageMar is
    required; python-docx would write only the one it sets) at the values Word used for it."""
    if sect_pr.find(qn("w:pgMar")) is None:
        insert_child(sect_pr, w_el("w:pgMar", **dict(WORD_DEFAULT_PGMAR)))


@operation("set_property")
def set_property(wd: WordDoc, target: dict, params: dict) -> None:
    """Generic: set one Word property (described by ``params['spec']``) to ``params['value']``."""
    spec = params["spec"]
    value = params["value"]
    kind = spec["kind"]
    for el, proxy in _objects(wd, spec["scope"], target):
        if spec["scope"] == "section" and spec.get("locus", "").startswith("w:pgMar"):
            _ensure_pgmar(el)
        if spec.get("python_docx") and proxy is not None and (kind != "enum" or spec.get("docx_enum")):
            obj, attr = _resolve_attr(proxy, spec["python_docx"])
            if kind == "style_ref":
                setattr(obj, attr, wd.style(value) if value is not None else None)
            else:
                setattr(obj, attr, _docx_value(kind, value, spec))
        elif kind == "style_ref":
            set_locus(el, spec["locus"], "attr", wd.style_id(value) or value)
        else:
            set_locus(el, spec["locus"], kind, value, spec.get("also"))
        if spec.get("clear_theme_fonts") and el is not None:
            # Word drops the theme-font attributes when a font is chosen explicitly (theme
            # attributes would otherwise win over w:ascii)
            for rfonts in el.iter(qn("w:rFonts")):
                for a in ("w:asciiTheme", "w:hAnsiTheme"):
                    rfonts.attrib.pop(qn(a), None)
                if rfonts.get(qn("w:ascii")):
                    rfonts.set(qn("w:hAnsi"), rfonts.get(qn("w:ascii")))


# ============================================================================ characters


@operation("apply_char_style")
def apply_char_style(wd: WordDoc, target: dict, params: dict) -> None:
    from docx.text.run import Run
    for r in runs_for(wd, target):
        Run(r, wd.proxy(r.getparent())).style = params["style"]


@operation("char_style_equivalent")
def char_style_equivalent(wd: WordDoc, target: dict, params: dict) -> None:
    """Equivalent alternative for a direct character property: a new character style carrying
    the property, applied to the range (the effective value is the same)."""
    spec, value = params["spec"], params["value"]
    sid = "WeAlt" + re.sub(r"\W", "", spec["com"])
    wd.ensure_style(sid, "WE Alt " + spec["com"], "character")
    st_el = [s for s in wd.styles_el.findall(qn("w:style")) if s.get(qn("w:styleId")) == sid][0]
    loc = spec["locus"]
    set_locus(st_el, loc, spec["kind"], value, spec.get("also"))
    for r in runs_for(wd, target):
        rpr = get_or_add(r, "w:rPr")
        set_locus(rpr, "w:rStyle@w:val", "attr", sid)


@operation("font_reset")
def font_reset(wd: WordDoc, target: dict, params: dict) -> None:
    for r in runs_for(wd, target):
        rpr = r.find(qn("w:rPr"))
        if rpr is None:
            continue
        for c in list(rpr):
            if c.tag != qn("w:rStyle"):
                rpr.remove(c)
        if not len(rpr):
            r.remove(rpr)


@operation("change_case")
def change_case(wd: WordDoc, target: dict, params: dict) -> None:
    fn = {"upper": str.upper, "lower": str.lower, "title": str.title}[params["case"]]
    for r in runs_for(wd, target):
        for t in r.iter(qn("w:t")):
            t.text = fn(t.text or "")


@operation("replace_text")
def replace_text(wd: WordDoc, target: dict, params: dict) -> None:
    runs = runs_for(wd, target)
    first = runs[0]
    for c in list(first):
        if c.tag != qn("w:rPr"):
            first.remove(c)
    new = make_run(params["text"])
    for c in new:
        first.append(c)
    for r in runs[1:]:
        r.getparent().remove(r)


@operation("insert_text_after")
def insert_text_after(wd: WordDoc, target: dict, params: dict) -> None:
    for p in paragraphs_for(wd, target):
        runs = [r for r in p.iter(qn("w:r")) if r.find(qn("w:t")) is not None]
        rpr = runs[-1].find(qn("w:rPr")) if runs else None
        p.append(make_run(params["text"], rpr))


# ============================================================================ paragraphs


@operation("insert_paragraph_after")
def insert_paragraph_after(wd: WordDoc, target: dict, params: dict) -> None:
    p = paragraphs_for(wd, target)[-1]
    new = w_el("w:p")
    style = params.get("style")
    ppr = p.find(qn("w:pPr"))
    if style:
        sid = wd.style(style, "paragraph").style_id
        new_ppr = w_el("w:pPr")
        new_ppr.append(w_el("w:pStyle", val=sid))
        new.append(new_ppr)
    elif ppr is not None:
        new_ppr = copy.deepcopy(ppr)
        for c in list(new_ppr):
            if c.tag in (qn("w:sectPr"), qn("w:pPrChange"), qn("w:rPr"), qn("w:numPr")):
                new_ppr.remove(c)
        if len(new_ppr):
            new.append(new_ppr)
    new.append(make_run(params["text"]))
    p.addnext(new)


@operation("delete_paragraph")
def delete_paragraph(wd: WordDoc, target: dict, params: dict) -> None:
    for p in paragraphs_for(wd, target):
        ppr = p.find(qn("w:pPr"))
        if ppr is not None and ppr.find(qn("w:sectPr")) is not None:
            raise AnchorError(wd.locator, "refusing to delete a paragraph that ends a section")
        p.getparent().remove(p)


LINE_SPACING_PRESETS = {"single": (240, "auto"), "onehalf": (360, "auto"), "double": (480, "auto"),
                        "exact18": (360, "exact"), "atleast12": (240, "atLeast")}


@operation("set_line_spacing")
def set_line_spacing(wd: WordDoc, target: dict, params: dict) -> None:
    """ParagraphFormat.LineSpacingRule / LineSpacing (w:spacing line + lineRule)."""
    line, rule = LINE_SPACING_PRESETS[params["spacing"]] if "spacing" in params else (params["line"], params["rule"])
    for p in paragraphs_for(wd, target):
        sp = get_or_add(get_or_add(p, "w:pPr"), "w:spacing")
        sp.set(qn("w:line"), str(line))
        sp.set(qn("w:lineRule"), rule)


@operation("add_tab_stop")
def add_tab_stop(wd: WordDoc, target: dict, params: dict) -> None:
    from docx.enum.text import WD_TAB_ALIGNMENT, WD_TAB_LEADER
    for p in paragraphs_for(wd, target):
        wd.proxy(p).paragraph_format.tab_stops.add_tab_stop(
            Twips(params["position"]), getattr(WD_TAB_ALIGNMENT, params.get("alignment", "LEFT")),
            getattr(WD_TAB_LEADER, params.get("leader", "SPACES")))


@operation("clear_tab_stops")
def clear_tab_stops(wd: WordDoc, target: dict, params: dict) -> None:
    for p in paragraphs_for(wd, target):
        wd.proxy(p).paragraph_format.tab_stops.clear_all()


def _border(tag: str, style: str, size: int, color: str, space: int = 1):
    return w_el(tag, val=style, sz=size, space=space, color=color)


@operation("set_paragraph_border")
def set_paragraph_border(wd: WordDoc, target: dict, params: dict) -> None:
    sides = params.get("sides", ["top", "left", "bottom", "right"])
    for p in paragraphs_for(wd, target):
        pbdr = get_or_add(get_or_add(p, "w:pPr"), "w:pBdr")
        for side in sides:
            old = pbdr.find(qn("w:" + side))
            if old is not None:
                pbdr.remove(old)
            insert_child(pbdr, _border("w:" + side, params.get("style", "single"), params.get("size", 4),
                                       params.get("color", "auto")))


# ============================================================================ styles


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
    from docx.text.run import Run
    st = _add_style(wd, params["name"], "character", params)
    for r in runs_for(wd, target) if target else []:
        Run(r, wd.proxy(r.getparent())).style = st


@operation("delete_style")
def delete_style(wd: WordDoc, target: dict, params: dict) -> None:
    st = wd.style(target["style"], create=False)
    sid = st.style_id
    for root in wd._all_story_roots() + [wd.styles_el]:
        for el in list(root.iter(qn("w:pStyle"), qn("w:rStyle"))):
            if el.get(qn("w:val")) == sid and el.getparent() is not None:
                el.getparent().remove(el)
        for el in list(root.iter(qn("w:basedOn"), qn("w:next"))):
            if el.get(qn("w:val")) == sid and el.getparent() is not None:
                el.getparent().remove(el)
    st.element.getparent().remove(st.element)


# ============================================================================ lists

_BULLETS = ["\u2022", "o", "\u25aa"]
_NUM_FMTS = [("decimal", "%1."), ("lowerLetter", "%2."), ("lowerRoman", "%3.")]


def _abstract_xml(aid: int, kind: str) -> str:
    lvls = []
    for i in range(9):
        left, hang = 720 * (i + 1), 360
        if kind == "bullet":
            fmt, text = "bullet", _BULLETS[i % 3]
        elif kind == "outline":
            fmt, text = "decimal", ".".join(f"%{k + 1}" for k in range(i + 1)) + "."
            left, hang = 432 + 144 * i + (360 if i else 0), 432 + 144 * i
        else:
            fmt, lt = _NUM_FMTS[i % 3]
            text = lt.replace("%" + lt[1], f"%{i + 1}")
        lvls.append(
            f'<w:lvl w:ilvl="{i}"><w:start w:val="1"/><w:numFmt w:val="{fmt}"/><w:lvlText w:val="{text}"/>'
            f'<w:lvlJc w:val="left"/><w:pPr><w:ind w:left="{left}" w:hanging="{hang}"/></w:pPr></w:lvl>')
    return (f'<w:abstractNum {W_NS_DECL} w:abstractNumId="{aid}"><w:multiLevelType w:val='
            f'"{"multilevel" if kind == "outline" else "hybridMultilevel"}"/>' + "".join(lvls) + "</w:abstractNum>")


def _new_list(wd: WordDoc, kind: str) -> str:
    numbering = wd.numbering_el()
    aids = [int(a.get(qn("w:abstractNumId"))) for a in numbering.findall(qn("w:abstractNum"))]
    nids = [int(n.get(qn("w:numId"))) for n in numbering.findall(qn("w:num"))]
    aid = max(aids, default=-1) + 1
    nid = max(nids, default=0) + 1
    abstract = parse_xml(_abstract_xml(aid, kind).encode())
    last_abs = numbering.findall(qn("w:abstractNum"))
    if last_abs:
        last_abs[-1].addnext(abstract)
    else:
        numbering.insert(0, abstract)
    num = parse_xml(f'<w:num {W_NS_DECL} w:numId="{nid}"><w:abstractNumId w:val="{aid}"/></w:num>'.encode())
    insert_child(numbering, num)
    return str(nid)


def _set_numpr(p, num_id: str, ilvl: int) -> None:
    numpr = get_or_add(get_or_add(p, "w:pPr"), "w:numPr")
    for c in list(numpr):
        numpr.remove(c)
    numpr.append(w_el("w:ilvl", val=ilvl))
    numpr.append(w_el("w:numId", val=num_id))


def _numpr(p):
    ppr = p.find(qn("w:pPr"))
    np_ = ppr.find(qn("w:numPr")) if ppr is not None else None
    if np_ is None:
        return None, 0
    nid = np_.find(qn("w:numId"))
    ilvl = np_.find(qn("w:ilvl"))
    return (nid.get(qn("w:val")) if nid is not None else None,
            int(ilvl.get(qn("w:val"))) if ilvl is not None else 0)


@operation("apply_list")
def apply_list(wd: WordDoc, target: dict, params: dict) -> None:
    nid = _new_list(wd, params.get("kind", "number"))
    for p in paragraphs_for(wd, target):
        _set_numpr(p, nid, 0)


@operation("list_indent")
def list_indent(wd: WordDoc, target: dict, params: dict) -> None:
    step = int(params.get("step", 1))
    for p in paragraphs_for(wd, target):
        nid, ilvl = _numpr(p)
        if nid is None:
            raise AnchorError(wd.locator, "paragraph is not in a list")
        _set_numpr(p, nid, max(0, min(8, ilvl + step)))


@operation("remove_numbers")
def remove_numbers(wd: WordDoc, target: dict, params: dict) -> None:
    for p in paragraphs_for(wd, target):
        ppr = p.find(qn("w:pPr"))
        np_ = ppr.find(qn("w:numPr")) if ppr is not None else None
        if np_ is not None:
            ppr.remove(np_)


def _abstract_for(wd: WordDoc, p):
    nid, ilvl = _numpr(p)
    numbering = wd.numbering_el(create=False)
    if nid is None or numbering is None:
        raise AnchorError(wd.locator, "paragraph is not in a list")
    for num in numbering.findall(qn("w:num")):
        if num.get(qn("w:numId")) == nid:
            aid = num.find(qn("w:abstractNumId")).get(qn("w:val"))
            for a in numbering.findall(qn("w:abstractNum")):
                if a.get(qn("w:abstractNumId")) == aid:
                    return a, ilvl, num
    raise AnchorError(wd.locator, f"numbering {nid} not defined")


@operation("set_list_level")
def set_list_level(wd: WordDoc, target: dict, params: dict) -> None:
    """ListLevel properties of the list template the target paragraph uses (affects the whole list)."""
    p = paragraphs_for(wd, target)[0]
    abstract, ilvl, _ = _abstract_for(wd, p)
    lvl = [x for x in abstract.findall(qn("w:lvl")) if x.get(qn("w:ilvl")) == str(params.get("level", ilvl))][0]
    prop, value = params["property"], params["value"]
    if prop == "ind":
        ind = get_or_add(get_or_add(lvl, "w:pPr"), "w:ind")
        ind.set(qn("w:left"), str(value))
        ind.set(qn("w:hanging"), str(params.get("hanging", 360)))
    else:
        set_locus(lvl, f"w:{prop}@w:val", "attr", value)


@operation("restart_numbering")
def restart_numbering(wd: WordDoc, target: dict, params: dict) -> None:
    """Restart numbering at the target paragraph: a new list instance (w:num) with a start
    override, used by the target and the following paragraphs of the same list."""
    p = paragraphs_for(wd, target)[0]
    abstract, ilvl, num = _abstract_for(wd, p)
    numbering = wd.numbering_el()
    old = num.get(qn("w:numId"))
    nid = str(max(int(n.get(qn("w:numId"))) for n in numbering.findall(qn("w:num"))) + 1)
    new = parse_xml(
        f'<w:num {W_NS_DECL} w:numId="{nid}"><w:abstractNumId w:val="{abstract.get(qn("w:abstractNumId"))}"/>'
        f'<w:lvlOverride w:ilvl="{ilvl}"><w:startOverride w:val="{params.get("start", 1)}"/></w:lvlOverride>'
        f'</w:num>'.encode())
    insert_child(numbering, new)
    seen = False
    for q in T.iter_block_paragraphs(wd.body):
        if q is p:
            seen = True
        if seen and _numpr(q)[0] == old:
            _set_numpr(q, nid, _numpr(q)[1])


# ============================================================================ tables


def _cell_set_text(tc, text: str) -> None:
    paras = tc.findall(qn("w:p"))
    if not paras:
        p = w_el("w:p")
        tc.append(p)
        paras = [p]
    set_paragraph_text(paras[0], text)
    for extra in paras[1:]:
        tc.remove(extra)


@operation("add_table")
def add_table(wd: WordDoc, target: dict, params: dict) -> None:
    rows = params["cells"]
    n_cols = max(len(r) for r in rows)
    table = wd.doc.add_table(rows=len(rows), cols=n_cols)
    if params.get("style"):
        table.style = wd.style(params["style"], "table")
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            _cell_set_text(table.cell(r, c)._tc, text)
    p = paragraphs_for(wd, target)[-1]
    p.addnext(table._tbl)


def _fit_values(wd: WordDoc, values: list, n: int, what: str) -> list:
    """The unit's cell values for ``n`` new cells: missing values leave cells empty; values beyond
    the ``n`` cells must be empty (the declared precondition: the table is big enough)."""
    values = list(values or [])
    if any(str(v) for v in values[n:]):
        raise PreconditionError(wd.locator, f"the new {what} has {n} cells but the unit gives {len(values)} values")
    return values[:n]


@operation("add_row")
def add_row(wd: WordDoc, target: dict, params: dict) -> None:
    """Rows.Add: a row with one cell per grid column (any table width); the unit's values fill
    its cells from the left."""
    tbl = wd.table(target["table"])
    proxy = wd.table_proxy(tbl)
    n_rows = len(tbl.findall(qn("w:tr")))
    before = params.get("before")
    if before and not 1 <= before <= n_rows:
        raise PreconditionError(wd.locator, f"the table has {n_rows} rows, no row {before} to insert before")
    row = proxy.add_row()
    cells = list(T.row_cells(row._tr))
    for tc, text in zip(cells, _fit_values(wd, params.get("cells"), len(cells), "row")):
        _cell_set_text(tc, text)
    if before:
        tbl.findall(qn("w:tr"))[before - 1].addprevious(row._tr)


@operation("add_column")
def add_column(wd: WordDoc, target: dict, params: dict) -> None:
    """Columns.Add: one new cell at the end of every row (any number of rows); the unit's values
    fill them from the top."""
    tbl = wd.table(target["table"])
    proxy = wd.table_proxy(tbl)
    proxy.add_column(Twips(params.get("width", 1440)))
    cells = [list(T.row_cells(tr))[-1] for tr in tbl.findall(qn("w:tr"))]
    for tc, text in zip(cells, _fit_values(wd, params.get("cells"), len(cells), "column")):
        _cell_set_text(tc, text)


@operation("delete_row")
def delete_row(wd: WordDoc, target: dict, params: dict) -> None:
    tbl = wd.table(target["table"])
    tr = tbl.findall(qn("w:tr"))[target["row"] - 1]
    tbl.remove(tr)


@operation("delete_column")
def delete_column(wd: WordDoc, target: dict, params: dict) -> None:
    tbl = wd.table(target["table"])
    c = target["column"] - 1
    for tr in tbl.findall(qn("w:tr")):
        cells = list(T.row_cells(tr))
        cells[c].getparent().remove(cells[c])
    grid = tbl.find(qn("w:tblGrid"))
    cols = grid.findall(qn("w:gridCol"))
    grid.remove(cols[c])


@operation("merge_cells")
def merge_cells(wd: WordDoc, target: dict, params: dict) -> None:
    proxy = wd.table_proxy(wd.table(target["table"]))
    (r1, c1), (r2, c2) = params["from"], params["to"]
    proxy.cell(r1 - 1, c1 - 1).merge(proxy.cell(r2 - 1, c2 - 1))


@operation("set_cell_text")
def set_cell_text(wd: WordDoc, target: dict, params: dict) -> None:
    for tc in _cells_for(wd, target):
        _cell_set_text(tc, params["text"])


def _set_twips(el, value) -> None:
    """A table measure (tblW, tblInd, tcW, cell margin) in twentieths of a point (w:type dxa)."""
    el.set(qn("w:w"), str(value))
    el.set(qn("w:type"), "dxa")


@operation("set_table_width")
def set_table_width(wd: WordDoc, target: dict, params: dict) -> None:
    tbl = wd.table(target["table"])
    _set_twips(get_or_add(get_or_add(tbl, "w:tblPr"), "w:tblW"), params["width"])


@operation("set_table_indent")
def set_table_indent(wd: WordDoc, target: dict, params: dict) -> None:
    tbl = wd.table(target["table"])
    _set_twips(get_or_add(get_or_add(tbl, "w:tblPr"), "w:tblInd"), params["indent"])


@operation("set_column_width")
def set_column_width(wd: WordDoc, target: dict, params: dict) -> None:
    tbl = wd.table(target["table"])
    c = target["column"] - 1
    gc = tbl.find(qn("w:tblGrid")).findall(qn("w:gridCol"))[c]
    gc.set(qn("w:w"), str(params["width"]))
    for tr in tbl.findall(qn("w:tr")):
        tc = list(T.row_cells(tr))[c]
        _set_twips(get_or_add(get_or_add(tc, "w:tcPr"), "w:tcW"), params["width"])


@operation("set_row_height")
def set_row_height(wd: WordDoc, target: dict, params: dict) -> None:
    from docx.enum.table import WD_ROW_HEIGHT_RULE
    for _, row in _objects(wd, "row", target):
        row.height = Twips(params["height"])
        row.height_rule = getattr(WD_ROW_HEIGHT_RULE, params.get("rule", "AT_LEAST"))


@operation("set_table_borders")
def set_table_borders(wd: WordDoc, target: dict, params: dict) -> None:
    tbl = wd.table(target["table"])
    borders = get_or_add(get_or_add(tbl, "w:tblPr"), "w:tblBorders")
    for c in list(borders):
        borders.remove(c)
    for side in ("top", "left", "bottom", "right", "insideH", "insideV"):
        insert_child(borders, _border("w:" + side, params.get("style", "single"), params.get("size", 4),
                                      params.get("color", "auto"), 0))


@operation("set_cell_margins")
def set_cell_margins(wd: WordDoc, target: dict, params: dict) -> None:
    tbl = wd.table(target["table"])
    mar = get_or_add(get_or_add(tbl, "w:tblPr"), "w:tblCellMar")
    for side in params.get("sides", ["left", "right"]):
        _set_twips(get_or_add(mar, "w:" + side), params["margin"])


@operation("set_table_look")
def set_table_look(wd: WordDoc, target: dict, params: dict) -> None:
    tbl = wd.table(target["table"])
    look = get_or_add(get_or_add(tbl, "w:tblPr"), "w:tblLook")
    bits = {"firstRow": 0x20, "lastRow": 0x40, "firstColumn": 0x80, "lastColumn": 0x100, "noHBand": 0x200,
            "noVBand": 0x400}
    cur = {}
    v = look.get(qn("w:val"))
    n = int(v, 16) if v and re.fullmatch(r"[0-9A-Fa-f]{4}", v) else 0x04A0
    for k, b in bits.items():
        a = look.get(qn("w:" + k))
        cur[k] = (a in ("1", "true")) if a is not None else bool(n & b)
    cur.update(params["flags"])
    n = sum(b for k, b in bits.items() if cur[k])
    look.set(qn("w:val"), f"{n:04X}")
    for k in bits:
        look.set(qn("w:" + k), "1" if cur[k] else "0")


@operation("delete_table")
def delete_table(wd: WordDoc, target: dict, params: dict) -> None:
    tbl = wd.table(target["table"])
    tbl.getparent().remove(tbl)


@operation("convert_table_to_text")
def convert_table_to_text(wd: WordDoc, target: dict, params: dict) -> None:
    tbl = wd.table(target["table"])
    sep = params.get("separator", "\t")
    anchor = tbl
    for tr in tbl.findall(qn("w:tr")):
        texts = [" ".join(T.paragraph_read_text(p) for p in tc.iter(qn("w:p"))) for tc in T.row_cells(tr)]
        p = w_el("w:p")
        p.append(make_run(sep.join(texts)))
        anchor.addnext(p)
        anchor = p
    tbl.getparent().remove(tbl)


# ============================================================================ sections


@operation("set_orientation")
def set_orientation(wd: WordDoc, target: dict, params: dict) -> None:
    from docx.enum.section import WD_ORIENT
    for _, sec in _objects(wd, "section", target):
        want = WD_ORIENT.LANDSCAPE if params["orientation"] == "landscape" else WD_ORIENT.PORTRAIT
        if sec.orientation != want:
            w, h = sec.page_width, sec.page_height
            sec.orientation = want
            sec.page_width, sec.page_height = h, w


PAPER_SIZES = {"A4": (11906, 16838), "Letter": (12240, 15840), "Legal": (12240, 20160), "A5": (8391, 11906)}


@operation("set_paper_size")
def set_paper_size(wd: WordDoc, target: dict, params: dict) -> None:
    from docx.enum.section import WD_ORIENT
    for _, sec in _objects(wd, "section", target):
        w, h = PAPER_SIZES[params["paper"]] if params.get("paper") else (params["width"], params["height"])
        if sec.orientation == WD_ORIENT.LANDSCAPE:
            w, h = h, w
        sec.page_width, sec.page_height = Twips(w), Twips(h)


@operation("insert_section_break")
def insert_section_break(wd: WordDoc, target: dict, params: dict) -> None:
    """Range.InsertBreak(wdSectionBreak...) at the end of the target paragraph: the paragraph gets
    a copy of its section's properties (ending the earlier section) and the section after the
    break starts as requested."""
    p = paragraphs_for(wd, target)[-1]
    idx = wd.section_index(target["paragraph"])
    sec = wd.doc.sections[idx]
    later = sec._sectPr
    earlier = copy.deepcopy(later)
    ppr = get_or_add(p, "w:pPr")
    old = ppr.find(qn("w:sectPr"))
    if old is not None:
        raise AnchorError(wd.locator, "paragraph already ends a section")
    insert_child(ppr, earlier)
    typ = get_or_add(later, "w:type")
    typ.set(qn("w:val"), params.get("type", "nextPage"))
    # the new section must hold a paragraph: when the break follows the section's last paragraph,
    # Word starts the new section with an empty paragraph
    nxt = p.getnext()
    while nxt is not None and nxt.tag not in (qn("w:p"), qn("w:tbl"), qn("w:sectPr")):
        nxt = nxt.getnext()
    if nxt is None or nxt.tag == qn("w:sectPr"):
        empty = w_el("w:p")
        style = ppr.find(qn("w:pStyle"))
        if style is not None:
            new_ppr = w_el("w:pPr")
            new_ppr.append(copy.deepcopy(style))
            empty.append(new_ppr)
        p.addnext(empty)


@operation("insert_break")
def insert_break(wd: WordDoc, target: dict, params: dict) -> None:
    p = paragraphs_for(wd, target)[-1]
    r = w_el("w:r")
    r.append(w_el("w:br", type=params.get("type", "page")))
    p.append(r)


@operation("set_columns")
def set_columns(wd: WordDoc, target: dict, params: dict) -> None:
    for sp in _sect_prs(wd, target):
        cols = get_or_add(sp, "w:cols")
        cols.set(qn("w:num"), str(params["num"]))
        cols.set(qn("w:space"), str(params.get("space", 720)))
        if params.get("separator"):
            cols.set(qn("w:sep"), "1")


@operation("set_line_numbering")
def set_line_numbering(wd: WordDoc, target: dict, params: dict) -> None:
    for sp in _sect_prs(wd, target):
        ln = get_or_add(sp, "w:lnNumType")
        ln.set(qn("w:countBy"), str(params.get("count_by", 1)))
        ln.set(qn("w:restart"), params.get("restart", "newPage"))
        if params.get("distance"):
            ln.set(qn("w:distance"), str(params["distance"]))


@operation("set_page_borders")
def set_page_borders(wd: WordDoc, target: dict, params: dict) -> None:
    for sp in _sect_prs(wd, target):
        old = sp.find(qn("w:pgBorders"))
        if old is not None:
            sp.remove(old)
        pb = insert_child(sp, w_el("w:pgBorders", offsetFrom="page"))
        for side in ("top", "left", "bottom", "right"):
            pb.append(_border("w:" + side, params.get("style", "single"), params.get("size", 4),
                              params.get("color", "auto"), 24))


# ============================================================================ headers / footers


def _field_runs(code: str, result: str, rpr=None, locked: bool = False) -> list:
    runs = []
    r = w_el("w:r")
    fc = w_el("w:fldChar", fldCharType="begin")
    if locked:
        fc.set(qn("w:fldLock"), "1")
    r.append(fc)
    runs.append(r)
    r = w_el("w:r")
    it = w_el("w:instrText")
    it.text = f" {code} "
    it.set(qn("xml:space"), "preserve")
    r.append(it)
    runs.append(r)
    r = w_el("w:r")
    r.append(w_el("w:fldChar", fldCharType="separate"))
    runs.append(r)
    if result:
        runs.append(make_run(result))
    r = w_el("w:r")
    r.append(w_el("w:fldChar", fldCharType="end"))
    runs.append(r)
    if rpr is not None:
        for r in runs:
            r.insert(0, copy.deepcopy(rpr))
    return runs


@operation("set_header_text")
def set_header_text(wd: WordDoc, target: dict, params: dict) -> None:
    kind = params.get("kind", "header")
    hf_type = params.get("hf_type", "primary")
    for _, sec in _objects(wd, "section", target):
        if hf_type == "first":
            sec.different_first_page_header_footer = True
        if hf_type == "even":
            wd.doc.settings.odd_and_even_pages_header_footer = True
        hf = _hf(sec, kind, hf_type)
        hf.is_linked_to_previous = False
        p = hf.paragraphs[0]
        set_paragraph_text(p._p, params["text"])
        if params.get("alignment"):
            set_locus(p._p, "w:pPr/w:jc@w:val", "attr", params["alignment"])
        for extra in hf.paragraphs[1:]:
            extra._p.getparent().remove(extra._p)


@operation("unlink_header")
def unlink_header(wd: WordDoc, target: dict, params: dict) -> None:
    """HeaderFooter.LinkToPrevious = False (Word copies the inherited content), then new text."""
    kind = params.get("kind", "header")
    sec = wd.section(target.get("section"))
    hf = _hf(sec, kind, params.get("hf_type", "primary"))
    inherited = [copy.deepcopy(p) for p in hf._element.iter(qn("w:p"))] if hf.is_linked_to_previous else None
    hf.is_linked_to_previous = False
    if inherited:
        root = hf._element
        for c in list(root):
            root.remove(c)
        for p in inherited:
            root.append(p)
    if params.get("text") is not None:
        set_paragraph_text(hf.paragraphs[0]._p, params["text"])


@operation("clear_header")
def clear_header(wd: WordDoc, target: dict, params: dict) -> None:
    sec = wd.section(target.get("section"))
    hf = _hf(sec, params.get("kind", "header"), params.get("hf_type", "primary"))
    root = hf._element
    paras = root.findall(qn("w:p"))
    for c in list(root):
        if c is not paras[0]:
            root.remove(c)
    for c in list(paras[0]):
        if c.tag != qn("w:pPr"):
            paras[0].remove(c)


@operation("add_page_number")
def add_page_number(wd: WordDoc, target: dict, params: dict) -> None:
    """PageNumbers.Add / Fields.Add(PAGE [, NUMPAGES]) into the header or footer."""
    kind = params.get("kind", "footer")
    for _, sec in _objects(wd, "section", target):
        hf = _hf(sec, kind, params.get("hf_type", "primary"))
        hf.is_linked_to_previous = False
        p = hf.paragraphs[0]._p
        for c in list(p):
            if c.tag != qn("w:pPr"):
                p.remove(c)
        if params.get("prefix"):
            p.append(make_run(params["prefix"]))
        for r in _field_runs("PAGE", "1"):
            p.append(r)
        if params.get("of_total"):
            p.append(make_run(" of "))
            for r in _field_runs("NUMPAGES", "1"):
                p.append(r)
        if params.get("alignment"):
            set_locus(p, "w:pPr/w:jc@w:val", "attr", params["alignment"])


# ============================================================================ fields


def _find_fields(wd: WordDoc, container, ftype: str | None) -> list:
    walker = T.ParagraphWalker()
    for p in T.iter_block_paragraphs(container):
        walker.pieces(p)
    return [f for f in walker.fields if ftype is None or T.field_type(f.code) == ftype.upper()]


def _field_span(info) -> list:
    """Sibling runs from the begin fldChar's run through the matching end (same paragraph)."""
    if info.simple:
        return [info.begin]
    r = info.begin.getparent()
    runs, depth, cur = [], 0, r
    while cur is not None:
        runs.append(cur)
        for fc in cur.iter(qn("w:fldChar")):
            t = fc.get(qn("w:fldCharType"))
            depth += 1 if t == "begin" else -1 if t == "end" else 0
        if depth == 0:
            return runs
        cur = cur.getnext()
    raise AnchorError("<field>", "field spans paragraphs")


@operation("insert_field")
def insert_field(wd: WordDoc, target: dict, params: dict) -> None:
    paras = paragraphs_for(wd, target)
    p = paras[-1]
    runs = [r for r in p.iter(qn("w:r")) if r.find(qn("w:t")) is not None]
    rpr = runs[-1].find(qn("w:rPr")) if runs else None
    if params.get("prefix"):
        p.append(make_run(params["prefix"], rpr))
    for r in _field_runs(params["code"], params.get("result", ""), rpr, params.get("locked", False)):
        p.append(r)


@operation("edit_field_code")
def edit_field_code(wd: WordDoc, target: dict, params: dict) -> None:
    f = _find_fields(wd, _story_container(wd, target), target.get("field"))[0]
    if f.simple:
        f.begin.set(qn("w:instr"), f" {params['code']} ")
        return
    instr = [it for r in _field_span(f) for it in r.iter(qn("w:instrText"))]
    instr[0].text = f" {params['code']} "
    for extra in instr[1:]:
        extra.getparent().remove(extra)


@operation("unlink_field")
def unlink_field(wd: WordDoc, target: dict, params: dict) -> None:
    for f in _find_fields(wd, _story_container(wd, target), target.get("field"))[:1]:
        span = _field_span(f)
        if f.simple:
            parent = f.begin.getparent()
            idx = parent.index(f.begin)
            for i, c in enumerate(list(f.begin)):
                parent.insert(idx + i, c)
            parent.remove(f.begin)
            continue
        state = "code"
        for r in span:
            keep = False
            for c in list(r):
                if c.tag == qn("w:fldChar"):
                    t = c.get(qn("w:fldCharType"))
                    state = "result" if t == "separate" else state
                    r.remove(c)
                elif c.tag == qn("w:instrText"):
                    r.remove(c)
                elif c.tag != qn("w:rPr") and state == "result":
                    keep = True
            if not keep:
                r.getparent().remove(r)


@operation("lock_field")
def lock_field(wd: WordDoc, target: dict, params: dict) -> None:
    f = _find_fields(wd, _story_container(wd, target), target.get("field"))[0]
    f.begin.set(qn("w:fldLock"), "1")


@operation("delete_field")
def delete_field(wd: WordDoc, target: dict, params: dict) -> None:
    f = _find_fields(wd, _story_container(wd, target), target.get("field"))[0]
    for r in _field_span(f):
        r.getparent().remove(r)


@operation("insert_caption")
def insert_caption(wd: WordDoc, target: dict, params: dict) -> None:
    """Range.InsertCaption: "Label N: text" with a SEQ field, in the Caption style."""
    label = params.get("label", "Table")
    sid = wd.style_id("Caption", "paragraph") or wd.ensure_style(
        "Caption", "caption", "paragraph", based_on="Normal", extra="<w:next w:val=\"Normal\"/><w:qFormat/>",
        ppr='<w:pPr><w:spacing w:line="240" w:lineRule="auto"/></w:pPr>',
        rpr='<w:rPr><w:b/><w:bCs/><w:color w:val="4F81BD"/><w:sz w:val="18"/><w:szCs w:val="18"/></w:rPr>')
    p = w_el("w:p")
    ppr = w_el("w:pPr")
    ppr.append(w_el("w:pStyle", val=sid))
    p.append(ppr)
    p.append(make_run(label + " "))
    for r in _field_runs(f"SEQ {label} \\* ARABIC", str(params.get("number", 1))):
        p.append(r)
    p.append(make_run(": " + params["text"]))
    if "table" in target:
        tbl = wd.table(target["table"])
        if params.get("position", "above") == "above":
            tbl.addprevious(p)
        else:
            tbl.addnext(p)
    else:
        paragraphs_for(wd, target)[-1].addnext(p)


@operation("insert_cross_reference")
def insert_cross_reference(wd: WordDoc, target: dict, params: dict) -> None:
    p = paragraphs_for(wd, target)[-1]
    bm = wd.bookmark(params["bookmark"])
    result = params.get("result") or _bookmark_text(wd, params["bookmark"])
    if params.get("prefix"):
        p.append(make_run(params["prefix"]))
    for r in _field_runs(f"REF {params['bookmark']} \\h", result):
        p.append(r)
    _ = bm


def _bookmark_text(wd: WordDoc, name: str) -> str:
    start = wd.bookmark(name)
    bid = start.get(qn("w:id"))
    out, on = [], False
    for el in start.getparent().iter():
        if el is start:
            on = True
        elif el.tag == qn("w:bookmarkEnd") and el.get(qn("w:id")) == bid:
            break
        elif on and el.tag == qn("w:t"):
            out.append(el.text or "")
    return "".join(out)


# content controls


def _sdt_pr(wd: WordDoc, params: dict):
    pr = w_el("w:sdtPr")
    if params.get("title"):
        pr.append(w_el("w:alias", val=params["title"]))
    if params.get("tag"):
        pr.append(w_el("w:tag", val=params["tag"]))
    pr.append(w_el("w:id", val=_next_sdt_id(wd)))
    if params.get("lock"):
        pr.append(w_el("w:lock", val=params["lock"]))
    kind = params.get("type", "text")
    if kind == "text":
        pr.append(w_el("w:text"))
    elif kind == "date":
        d = w_el("w:date")
        d.append(w_el("w:dateFormat", val=params.get("format", "d MMMM yyyy")))
        d.append(w_el("w:lid", val="en-US"))
        d.append(w_el("w:storeMappedDataAs", val="dateTime"))
        d.append(w_el("w:calendar", val="gregorian"))
        pr.append(d)
    elif kind == "dropDownList":
        dd = w_el("w:dropDownList")
        for item in params.get("items", []):
            dd.append(w_el("w:listItem", displayText=item, value=item))
        pr.append(dd)
    return pr


def _next_sdt_id(wd: WordDoc) -> int:
    mx = 10
    for el in wd.body.iter(qn("w:sdtPr")):
        i = el.find(qn("w:id"))
        if i is not None:
            try:
                mx = max(mx, int(i.get(qn("w:val"))))
            except (TypeError, ValueError):
                pass
    return mx + 1


@operation("add_content_control")
def add_content_control(wd: WordDoc, target: dict, params: dict) -> None:
    sdt = w_el("w:sdt")
    sdt.append(_sdt_pr(wd, params))
    content = w_el("w:sdtContent")
    if "phrase" in target:
        runs = runs_for(wd, target)
        runs[0].addprevious(sdt)
        for r in runs:
            content.append(r)
    else:
        p = paragraphs_for(wd, target)[0]
        p.addprevious(sdt)
        content.append(p)
    sdt.append(content)


def _sdt_by_tag(wd: WordDoc, tag: str):
    for sdt in wd.body.iter(qn("w:sdt")):
        t = sdt.find(qn("w:sdtPr") + "/" + qn("w:tag"))
        if t is not None and t.get(qn("w:val")) == tag:
            return sdt
    raise AnchorError(wd.locator, f"no content control tagged {tag!r}")


@operation("set_content_control")
def set_content_control(wd: WordDoc, target: dict, params: dict) -> None:
    sdt = _sdt_by_tag(wd, target["content_control"])
    pr = sdt.find(qn("w:sdtPr"))
    set_locus(pr, f"w:{params['property']}@w:val", "attr", params["value"])


@operation("remove_content_control")
def remove_content_control(wd: WordDoc, target: dict, params: dict) -> None:
    sdt = _sdt_by_tag(wd, target["content_control"])
    content = sdt.find(qn("w:sdtContent"))
    for c in list(content):
        sdt.addprevious(c)
    sdt.getparent().remove(sdt)


# ============================================================================ notes


@operation("add_note")
def add_note(wd: WordDoc, target: dict, params: dict) -> None:
    kind = params.get("kind", "footnote")
    root = wd.notes_el(kind + "s")
    wd._ensure_note_styles(kind)
    nid = max([int(n.get(qn("w:id"))) for n in root.findall(qn("w:" + kind))] + [0]) + 1
    ref_style = "FootnoteReference" if kind == "footnote" else "EndnoteReference"
    text_style = "FootnoteText" if kind == "footnote" else "EndnoteText"
    runs = runs_for(wd, target)
    ref = w_el("w:r")
    rpr = w_el("w:rPr")
    rpr.append(w_el("w:rStyle", val=ref_style))
    ref.append(rpr)
    ref.append(w_el(f"w:{kind}Reference", id=nid))
    runs[-1].addnext(ref)
    note = parse_xml(
        f'<w:{kind} {W_NS_DECL} w:id="{nid}"><w:p><w:pPr><w:pStyle w:val="{text_style}"/></w:pPr>'
        f'<w:r><w:rPr><w:rStyle w:val="{ref_style}"/></w:rPr><w:{kind}Ref/></w:r>'
        f'<w:r><w:t xml:space="preserve"> </w:t></w:r></w:p></w:{kind}>'.encode())
    note.findall(".//" + qn("w:t"))[-1].text = " " + params["text"]
    root.append(note)


def _note_and_refs(wd: WordDoc, kind: str, prefix: str):
    note = wd.note(kind, prefix)
    nid = note.get(qn("w:id"))
    refs = [r for r in wd.body.iter(qn(f"w:{kind}Reference")) if r.get(qn("w:id")) == nid]
    return note, refs


@operation("edit_note_text")
def edit_note_text(wd: WordDoc, target: dict, params: dict) -> None:
    kind = target.get("story", "footnote")
    note, _ = _note_and_refs(wd, kind, target["note"])
    p = note.find(qn("w:p"))
    for r in list(p.findall(qn("w:r"))):
        if r.find(qn(f"w:{kind}Ref")) is None:
            p.remove(r)
    p.append(make_run(" " + params["text"]))
    for extra in note.findall(qn("w:p"))[1:]:
        note.remove(extra)


@operation("delete_note")
def delete_note(wd: WordDoc, target: dict, params: dict) -> None:
    kind = target.get("story", "footnote")
    note, refs = _note_and_refs(wd, kind, target["note"])
    for ref in refs:
        r = ref.getparent()
        r.remove(ref)
        if not [c for c in r if c.tag != qn("w:rPr")]:
            r.getparent().remove(r)
    note.getparent().remove(note)


@operation("set_note_option")
def set_note_option(wd: WordDoc, target: dict, params: dict) -> None:
    kind = params.get("kind", "footnote")
    where = params.get("where", "section")
    bases = [wd.settings_el()] if where == "settings" else _sect_prs(wd, target)
    for base in bases:
        pr = get_or_add(base, f"w:{kind}Pr")
        set_locus(pr, f"w:{params['property']}@w:val", "attr", params["value"])


@operation("convert_notes")
def convert_notes(wd: WordDoc, target: dict, params: dict) -> None:
    """Footnotes.Convert: every footnote becomes an endnote (text and position kept)."""
    fn_root = wd.notes_el("footnotes", create=False)
    if fn_root is None:
        return
    en_root = wd.notes_el("endnotes")
    next_id = max([int(n.get(qn("w:id"))) for n in en_root.findall(qn("w:endnote"))] + [0]) + 1
    mapping = {}
    for fn in list(fn_root.findall(qn("w:footnote"))):
        if (fn.get(qn("w:type")) or "normal") != "normal":
            continue
        en = parse_xml(etree_tostring(fn).replace(b"w:footnote", b"w:endnote")
                       .replace(b'"FootnoteText"', b'"EndnoteText"')
                       .replace(b'"FootnoteReference"', b'"EndnoteReference"'))
        mapping[fn.get(qn("w:id"))] = str(next_id)
        en.set(qn("w:id"), str(next_id))
        for ref in en.iter(qn("w:footnoteRef")):
            ref.tag = qn("w:endnoteRef")
        en_root.append(en)
        fn_root.remove(fn)
        next_id += 1
    for ref in list(wd.body.iter(qn("w:footnoteReference"))):
        if ref.get(qn("w:id")) in mapping:
            ref.tag = qn("w:endnoteReference")
            ref.set(qn("w:id"), mapping[ref.get(qn("w:id"))])
            rs = ref.getparent().find(qn("w:rPr") + "/" + qn("w:rStyle"))
            if rs is not None:
                rs.set(qn("w:val"), "EndnoteReference")
    wd._ensure_note_styles("endnote")


def etree_tostring(el) -> bytes:
    from lxml import etree
    return etree.tostring(el)


# ============================================================================ comments


@operation("add_comment")
def add_comment(wd: WordDoc, target: dict, params: dict) -> None:
    from docx.text.run import Run
    runs = runs_for(wd, target)
    proxies = [Run(r, wd.proxy(r.getparent())) for r in runs]
    wd.doc.add_comment(proxies, text=params["text"], author=params.get("author", AUTHOR),
                       initials=params.get("initials", AUTHOR_INITIALS))


def _remove_comment_marks(wd: WordDoc, cid: str) -> None:
    for root in wd._all_story_roots():
        for el in list(root.iter(qn("w:commentRangeStart"), qn("w:commentRangeEnd"), qn("w:commentReference"))):
            if el.get(qn("w:id")) != cid:
                continue
            parent = el.getparent()
            parent.remove(el)
            if parent.tag == qn("w:r") and not [c for c in parent if c.tag != qn("w:rPr")]:
                parent.getparent().remove(parent)


@operation("delete_comment")
def delete_comment(wd: WordDoc, target: dict, params: dict) -> None:
    c = wd.comment(target["comment"])
    _remove_comment_marks(wd, c.get(qn("w:id")))
    c.getparent().remove(c)


@operation("delete_all_comments")
def delete_all_comments(wd: WordDoc, target: dict, params: dict) -> None:
    for c in list(wd.comments_el().findall(qn("w:comment"))):
        _remove_comment_marks(wd, c.get(qn("w:id")))
        c.getparent().remove(c)


@operation("edit_comment")
def edit_comment(wd: WordDoc, target: dict, params: dict) -> None:
    c = wd.comment(target["comment"])
    paras = c.findall(qn("w:p"))
    p = paras[0]
    for r in list(p.findall(qn("w:r"))):
        if r.find(qn("w:annotationRef")) is None:
            p.remove(r)
    p.append(make_run(params["text"]))
    for extra in paras[1:]:
        c.remove(extra)


@operation("set_comment_attr")
def set_comment_attr(wd: WordDoc, target: dict, params: dict) -> None:
    c = wd.comment(target["comment"])
    c.set(qn("w:" + params["attribute"]), params["value"])


# ============================================================================ revisions


def _rev_attrs(wd: WordDoc, el, rid: int | None = None):
    el.set(qn("w:id"), str(rid if rid is not None else wd.next_revision_id()))
    el.set(qn("w:author"), AUTHOR)
    el.set(qn("w:date"), FIXED_DATE)
    return el


@operation("set_track_revisions")
def set_track_revisions(wd: WordDoc, target: dict, params: dict) -> None:
    set_locus(wd.settings_el(), "w:trackRevisions", "onoff", params.get("value", True))


@operation("tracked_insert")
def tracked_insert(wd: WordDoc, target: dict, params: dict) -> None:
    p = paragraphs_for(wd, target)[-1]
    runs = [r for r in p.iter(qn("w:r")) if r.find(qn("w:t")) is not None]
    rpr = runs[-1].find(qn("w:rPr")) if runs else None
    ins = _rev_attrs(wd, w_el("w:ins"))
    ins.append(make_run(params["text"], rpr))
    if "phrase" in target:
        runs_for(wd, target)[-1].addnext(ins)
    else:
        p.append(ins)


def _to_deleted(r) -> None:
    for t in r.iter(qn("w:t")):
        t.tag = qn("w:delText")
    for t in r.iter(qn("w:instrText")):
        t.tag = qn("w:delInstrText")


@operation("tracked_delete")
def tracked_delete(wd: WordDoc, target: dict, params: dict) -> None:
    runs = runs_for(wd, target)
    d = _rev_attrs(wd, w_el("w:del"))
    runs[0].addprevious(d)
    for r in runs:
        _to_deleted(r)
        d.append(r)


@operation("tracked_replace")
def tracked_replace(wd: WordDoc, target: dict, params: dict) -> None:
    runs = runs_for(wd, target)
    rpr = runs[0].find(qn("w:rPr"))
    d = _rev_attrs(wd, w_el("w:del"))
    runs[0].addprevious(d)
    for r in runs:
        _to_deleted(r)
        d.append(r)
    ins = _rev_attrs(wd, w_el("w:ins"))
    ins.append(make_run(params["text"], rpr))
    d.addnext(ins)


@operation("tracked_format")
def tracked_format(wd: WordDoc, target: dict, params: dict) -> None:
    spec, value = params["spec"], params["value"]
    rid = wd.next_revision_id()
    for r in runs_for(wd, target):
        rpr = get_or_add(r, "w:rPr")
        old = [copy.deepcopy(c) for c in rpr if c.tag != qn("w:rPrChange")]
        change = _rev_attrs(wd, w_el("w:rPrChange"), rid)
        inner = w_el("w:rPr")
        for c in old:
            inner.append(c)
        change.append(inner)
        rid += 1
        set_locus(r, spec["locus"], spec["kind"], value, spec.get("also"))
        insert_child(rpr, change)


@operation("tracked_paragraph_format")
def tracked_paragraph_format(wd: WordDoc, target: dict, params: dict) -> None:
    spec, value = params["spec"], params["value"]
    for p in paragraphs_for(wd, target):
        ppr = get_or_add(p, "w:pPr")
        old = [copy.deepcopy(c) for c in ppr if c.tag not in (qn("w:rPr"), qn("w:sectPr"), qn("w:pPrChange"))]
        change = _rev_attrs(wd, w_el("w:pPrChange"))
        inner = w_el("w:pPr")
        for c in old:
            inner.append(c)
        change.append(inner)
        set_locus(p, spec["locus"], spec["kind"], value, spec.get("also"))
        insert_child(ppr, change)


@operation("tracked_insert_paragraph")
def tracked_insert_paragraph(wd: WordDoc, target: dict, params: dict) -> None:
    p = paragraphs_for(wd, target)[-1]
    rid = wd.next_revision_id()
    new = w_el("w:p")
    ppr = w_el("w:pPr")
    rpr = w_el("w:rPr")
    rpr.append(_rev_attrs(wd, w_el("w:ins"), rid))
    ppr.append(rpr)
    new.append(ppr)
    ins = _rev_attrs(wd, w_el("w:ins"), rid + 1)
    ins.append(make_run(params["text"]))
    new.append(ins)
    p.addnext(new)


def _unwrap(el) -> None:
    parent = el.getparent()
    idx = parent.index(el)
    for i, c in enumerate(list(el)):
        parent.insert(idx + i, c)
    parent.remove(el)


def _revision_matches(el, rtype: str | None, text: str | None) -> bool:
    kind = {"ins": "insert", "del": "delete", "rPrChange": "format", "pPrChange": "paragraph"}.get(
        el.tag.rsplit("}", 1)[-1], "")
    if rtype and kind != rtype:
        return False
    if text is None:
        return True
    body = "".join((t.text or "") for t in el.iter(qn("w:t"), qn("w:delText")))
    if el.tag == qn("w:rPrChange"):
        r = el.getparent().getparent()
        body = "".join((t.text or "") for t in r.iter(qn("w:t")))
    return text in body


def _resolve_revisions(wd: WordDoc, accept: bool, rtype: str | None = None, text: str | None = None) -> None:
    for root in wd._all_story_roots():
        # paragraph-mark insertions first (whole inserted paragraphs)
        for mark in list(root.iter(qn("w:ins"))):
            parent = mark.getparent()
            if parent is None or parent.tag != qn("w:rPr") or parent.getparent().tag != qn("w:pPr"):
                continue
            p = parent.getparent().getparent()
            if text is not None and text not in T.paragraph_read_text(p):
                continue
            if rtype not in (None, "insert"):
                continue
            if accept:
                parent.remove(mark)
                if not len(parent):
                    parent.getparent().remove(parent)
            else:
                p.getparent().remove(p)
        for el in list(root.iter(qn("w:ins"), qn("w:del"), qn("w:rPrChange"), qn("w:pPrChange"))):
            if el.getparent() is None or not _revision_matches(el, rtype, text):
                continue
            if el.tag in (qn("w:ins"), qn("w:del")) and el.getparent().tag == qn("w:rPr"):
                continue  # paragraph-mark revisions handled above
            tag = el.tag
            if tag == qn("w:ins"):
                if accept:
                    _unwrap(el)
                else:
                    el.getparent().remove(el)
            elif tag == qn("w:del"):
                if accept:
                    el.getparent().remove(el)
                else:
                    for t in el.iter(qn("w:delText")):
                        t.tag = qn("w:t")
                    for t in el.iter(qn("w:delInstrText")):
                        t.tag = qn("w:instrText")
                    _unwrap(el)
            elif tag == qn("w:rPrChange"):
                rpr = el.getparent()
                if not accept:
                    old = el.find(qn("w:rPr"))
                    for c in list(rpr):
                        rpr.remove(c)
                    for c in list(old) if old is not None else []:
                        rpr.append(c)
                else:
                    rpr.remove(el)
                if not len(rpr):
                    rpr.getparent().remove(rpr)
            elif tag == qn("w:pPrChange"):
                ppr = el.getparent()
                if not accept:
                    old = el.find(qn("w:pPr"))
                    keep = [c for c in ppr if c.tag in (qn("w:rPr"), qn("w:sectPr"))]
                    for c in list(ppr):
                        ppr.remove(c)
                    for c in list(old) if old is not None else []:
                        ppr.append(c)
                    for c in keep:
                        insert_child(ppr, c)
                else:
                    ppr.remove(el)


@operation("accept_all_revisions")
def accept_all_revisions(wd: WordDoc, target: dict, params: dict) -> None:
    _resolve_revisions(wd, True)


@operation("reject_all_revisions")
def reject_all_revisions(wd: WordDoc, target: dict, params: dict) -> None:
    _resolve_revisions(wd, False)


@operation("accept_revision")
def accept_revision(wd: WordDoc, target: dict, params: dict) -> None:
    rev = target["revision"]
    _resolve_revisions(wd, True, rev.get("type"), rev.get("text"))


@operation("reject_revision")
def reject_revision(wd: WordDoc, target: dict, params: dict) -> None:
    rev = target["revision"]
    _resolve_revisions(wd, False, rev.get("type"), rev.get("text"))


# ============================================================================ hyperlinks / bookmarks


def _ensure_hyperlink_style(wd: WordDoc) -> str:
    sid = wd.style_id("Hyperlink", "character")
    if sid:
        return sid
    return wd.ensure_style("Hyperlink", "Hyperlink", "character",
                           rpr='<w:rPr><w:color w:val="0563C1"/><w:u w:val="single"/></w:rPr>')


@operation("add_hyperlink")
def add_hyperlink(wd: WordDoc, target: dict, params: dict) -> None:
    runs = runs_for(wd, target)
    h = w_el("w:hyperlink")
    if params.get("url"):
        rid = wd.part.relate_to(params["url"], RT.HYPERLINK, is_external=True)
        h.set(qn("r:id"), rid)
    if params.get("bookmark"):
        h.set(qn("w:anchor"), params["bookmark"])
    if params.get("tooltip"):
        h.set(qn("w:tooltip"), params["tooltip"])
    h.set(qn("w:history"), "1")
    sid = _ensure_hyperlink_style(wd)
    runs[0].addprevious(h)
    for r in runs:
        rpr = get_or_add(r, "w:rPr")
        set_locus(rpr, "w:rStyle@w:val", "attr", sid)
        h.append(r)


def _hyperlink(wd: WordDoc, target: dict):
    want = target.get("hyperlink") or target.get("phrase")
    container = _story_container(wd, target)
    for h in container.iter(qn("w:hyperlink")):
        txt = "".join(T.run_text(r) for r in h.iter(qn("w:r")))
        if txt.strip().startswith(want):
            return h
    raise AnchorError(wd.locator, f"no hyperlink with text {want!r}")


@operation("remove_hyperlink")
def remove_hyperlink(wd: WordDoc, target: dict, params: dict) -> None:
    h = _hyperlink(wd, target)
    for r in h.iter(qn("w:r")):
        rpr = r.find(qn("w:rPr"))
        rs = rpr.find(qn("w:rStyle")) if rpr is not None else None
        if rs is not None and rs.get(qn("w:val")) == _ensure_hyperlink_style(wd):
            rpr.remove(rs)
            if not len(rpr):
                r.remove(rpr)
    _unwrap(h)


@operation("set_hyperlink")
def set_hyperlink(wd: WordDoc, target: dict, params: dict) -> None:
    h = _hyperlink(wd, target)
    if "url" in params:
        rid = wd.part.relate_to(params["url"], RT.HYPERLINK, is_external=True)
        h.set(qn("r:id"), rid)
        h.attrib.pop(qn("w:anchor"), None)
    if "tooltip" in params:
        h.set(qn("w:tooltip"), params["tooltip"])
    if "text" in params:
        runs = h.findall(qn("w:r"))
        rpr = runs[0].find(qn("w:rPr")) if runs else None
        for r in runs:
            h.remove(r)
        h.append(make_run(params["text"], rpr))


@operation("add_bookmark")
def add_bookmark(wd: WordDoc, target: dict, params: dict) -> None:
    runs = runs_for(wd, target)
    bid = wd.next_bookmark_id()
    runs[0].addprevious(w_el("w:bookmarkStart", id=bid, name=params["name"]))
    runs[-1].addnext(w_el("w:bookmarkEnd", id=bid))


@operation("delete_bookmark")
def delete_bookmark(wd: WordDoc, target: dict, params: dict) -> None:
    start = wd.bookmark(target["bookmark"])
    bid = start.get(qn("w:id"))
    root = start.getroottree().getroot()
    for end in list(root.iter(qn("w:bookmarkEnd"))):
        if end.get(qn("w:id")) == bid:
            end.getparent().remove(end)
    start.getparent().remove(start)


# ============================================================================ pictures and shapes


def _picture_runs(wd: WordDoc, target: dict) -> list:
    if "image" in target:
        spec = target["image"]
        found = []
        for r in wd.body.iter(qn("w:r")):
            for dp in r.iter(qn("wp:docPr")):
                if spec.get("descr") and dp.get("descr") == spec["descr"]:
                    found.append(r)
        if found:
            return found
        raise AnchorError(wd.locator, f"no picture with {spec!r}")
    runs = []
    for p in paragraphs_for(wd, target):
        runs += [r for r in p.iter(qn("w:r")) if r.find(qn("w:drawing")) is not None]
    if not runs:
        raise AnchorError(wd.locator, "no picture in target paragraph")
    return runs


@operation("add_picture")
def add_picture(wd: WordDoc, target: dict, params: dict) -> None:
    anchor_p = paragraphs_for(wd, target)[-1]
    # python-docx numbers the drawing from the ids of the main document part only; drawing ids
    # are unique across every story (headers, footnotes, endnotes, comments) for Word
    docpr_id = wd.next_docpr_id()
    new = wd.doc.add_paragraph()
    anchor_p.addnext(new._p)
    run = new.add_run()
    shape = run.add_picture(str(ASSETS / params["image"]), width=Emu(params["width"]))
    dp = shape._inline.docPr
    dp.set("id", str(docpr_id))
    if params.get("descr"):
        dp.set("descr", params["descr"])
    if params.get("floating"):
        _to_anchor(wd, run._r, params)


@operation("resize_picture")
def resize_picture(wd: WordDoc, target: dict, params: dict) -> None:
    for r in _picture_runs(wd, target):
        ext = r.find(".//" + qn("wp:extent"))
        cx, cy = int(ext.get("cx")), int(ext.get("cy"))
        if "width" in params:
            ncx = int(params["width"])
            ncy = int(round(cy * ncx / cx)) if params.get("lock_aspect", True) else cy
        else:
            ncy = int(params["height"])
            ncx = int(round(cx * ncy / cy)) if params.get("lock_aspect", True) else cx
        ext.set("cx", str(ncx))
        ext.set("cy", str(ncy))
        for a_ext in r.iter(qn("a:ext")):
            if a_ext.getparent().tag == qn("a:xfrm"):
                a_ext.set("cx", str(ncx))
                a_ext.set("cy", str(ncy))


@operation("set_picture_attr")
def set_picture_attr(wd: WordDoc, target: dict, params: dict) -> None:
    for r in _picture_runs(wd, target):
        for dp in r.iter(qn("wp:docPr")):
            dp.set(params["attribute"], params["value"])


@operation("delete_picture")
def delete_picture(wd: WordDoc, target: dict, params: dict) -> None:
    for r in _picture_runs(wd, target):
        r.getparent().remove(r)


_WRAP_XML = {
    "square": '<wp:wrapSquare xmlns:wp="{wp}" wrapText="bothSides"/>',
    "tight": ('<wp:wrapTight xmlns:wp="{wp}" wrapText="bothSides"><wp:wrapPolygon edited="0">'
              '<wp:start x="0" y="0"/><wp:lineTo x="0" y="21600"/><wp:lineTo x="21600" y="21600"/>'
              '<wp:lineTo x="21600" y="0"/><wp:lineTo x="0" y="0"/></wp:wrapPolygon></wp:wrapTight>'),
    "topAndBottom": '<wp:wrapTopAndBottom xmlns:wp="{wp}"/>',
    "none": '<wp:wrapNone xmlns:wp="{wp}"/>',
}


def _to_anchor(wd: WordDoc, r, params: dict) -> None:
    inline = r.find(".//" + qn("wp:inline"))
    if inline is None:
        return
    wp = NS["wp"]
    behind = params.get("wrap") == "behind"
    anchor = parse_xml(
        (f'<wp:anchor xmlns:wp="{wp}" distT="0" distB="0" distL="114300" distR="114300" simplePos="0" '
         f'relativeHeight="251659264" behindDoc="{1 if behind else 0}" locked="0" layoutInCell="1" '
         f'allowOverlap="1"><wp:simplePos x="0" y="0"/>'
         f'<wp:positionH relativeFrom="column"><wp:posOffset>{int(params.get("left", 0))}</wp:posOffset>'
         f'</wp:positionH><wp:positionV relativeFrom="paragraph"><wp:posOffset>{int(params.get("top", 0))}'
         f'</wp:posOffset></wp:positionV></wp:anchor>').encode())
    anchor.append(copy.deepcopy(inline.find(qn("wp:extent"))))
    eff = inline.find(qn("wp:effectExtent"))
    anchor.append(copy.deepcopy(eff) if eff is not None else
                  parse_xml(f'<wp:effectExtent xmlns:wp="{wp}" l="0" t="0" r="0" b="0"/>'.encode()))
    anchor.append(parse_xml(_WRAP_XML["none" if behind else params.get("wrap", "square")].format(wp=wp).encode()))
    for tag in ("wp:docPr", "wp:cNvGraphicFramePr"):
        el = inline.find(qn(tag))
        if el is not None:
            anchor.append(copy.deepcopy(el))
    anchor.append(copy.deepcopy(inline.find(qn("a:graphic"))))
    inline.getparent().replace(inline, anchor)


@operation("convert_to_floating")
def convert_to_floating(wd: WordDoc, target: dict, params: dict) -> None:
    for r in _picture_runs(wd, target):
        _to_anchor(wd, r, params)


@operation("set_wrap")
def set_wrap(wd: WordDoc, target: dict, params: dict) -> None:
    wp = NS["wp"]
    for r in _picture_runs(wd, target):
        anchor = r.find(".//" + qn("wp:anchor"))
        for tag in ("wrapNone", "wrapSquare", "wrapTight", "wrapThrough", "wrapTopAndBottom"):
            old = anchor.find(qn("wp:" + tag))
            if old is not None:
                behind = params["wrap"] == "behind"
                old.getparent().replace(old, parse_xml(
                    _WRAP_XML["none" if behind else params["wrap"]].format(wp=wp).encode()))
                anchor.set("behindDoc", "1" if behind else "0")
                break


@operation("set_shape_position")
def set_shape_position(wd: WordDoc, target: dict, params: dict) -> None:
    for r in _picture_runs(wd, target):
        anchor = r.find(".//" + qn("wp:anchor"))
        for axis, key in (("positionH", "left"), ("positionV", "top")):
            if key in params:
                pos = anchor.find(qn("wp:" + axis))
                for c in list(pos):
                    pos.remove(c)
                off = parse_xml(f'<wp:posOffset xmlns:wp="{NS["wp"]}">{int(params[key])}</wp:posOffset>'.encode())
                pos.append(off)


# ============================================================================ document properties


@operation("set_core_property")
def set_core_property(wd: WordDoc, target: dict, params: dict) -> None:
    setattr(wd.doc.core_properties, params["name"], params["value"])


_FMTID = "{D5CDD505-2E9C-101B-9397-08002B2CF9AE}"
_VT = {"string": "lpwstr", "number": "i4", "float": "r8", "bool": "bool", "date": "filetime"}


def _vt_value(vtype: str, value) -> str:
    if vtype == "bool":
        return "true" if value else "false"
    return str(value)


@operation("add_custom_property")
def add_custom_property(wd: WordDoc, target: dict, params: dict) -> None:
    root = wd.custom_props_el()
    pids = [int(p.get("pid")) for p in root if p.get("pid")]
    vt = _VT[params.get("type", "string")]
    el = parse_xml(
        (f'<op:property xmlns:op="{NS["op"]}" xmlns:vt="{NS["vt"]}" fmtid="{_FMTID}" '
         f'pid="{max(pids + [1]) + 1}" name="{params["name"]}"><vt:{vt}/></op:property>').encode())
    el[0].text = _vt_value(params.get("type", "string"), params["value"])
    root.append(el)


def _custom_prop(wd: WordDoc, name: str):
    root = wd.custom_props_el(create=False)
    for p in (root if root is not None else []):
        if p.get("name") == name:
            return p
    raise AnchorError(wd.locator, f"no custom property {name!r}")


@operation("set_custom_property")
def set_custom_property(wd: WordDoc, target: dict, params: dict) -> None:
    p = _custom_prop(wd, target["property"])
    p[0].text = _vt_value(params.get("type", "string"), params["value"])


@operation("delete_custom_property")
def delete_custom_property(wd: WordDoc, target: dict, params: dict) -> None:
    p = _custom_prop(wd, target["property"])
    p.getparent().remove(p)


@operation("set_document_variable")
def set_document_variable(wd: WordDoc, target: dict, params: dict) -> None:
    settings = wd.settings_el()
    dv = get_or_add(settings, "w:docVars")
    for v in dv.findall(qn("w:docVar")):
        if v.get(qn("w:name")) == params["name"]:
            if params.get("value") is None:
                dv.remove(v)
            else:
                v.set(qn("w:val"), params["value"])
            break
    else:
        if params.get("value") is not None:
            dv.append(w_el("w:docVar", name=params["name"], val=params["value"]))
    if not len(dv):
        settings.remove(dv)


# ============================================================================ tables of contents


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
            if any(T.field_type(f.code) == "SEQ" and cap.group(1) in f.code for f in _find_fields(wd, p, None)):
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
            for r in _field_runs(code, "")[:3]:
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
    for r in _field_runs(f'TC "{params["text"]}" \\l {params.get("level", 1)}', ""):
        p.append(r)


__all__ = ["OPERATIONS", "apply", "operation", "set_locus", "runs_for", "paragraphs_for"]
