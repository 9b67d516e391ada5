"""Operations of the lists numbering units (``catalogue/units/04_lists_numbering.yaml``)."""
from __future__ import annotations

from docx.oxml.parser import parse_xml

from benchwright.formats.ooxml.accessors import set_locus
from benchwright.formats.ooxml.elements import w_el
from benchwright.formats.ooxml.ns import qn
from benchwright.formats.ooxml.schema_order import get_or_add, insert_child
from benchwright.wordeval import text as T
from benchwright.wordeval.docmodel import AnchorError, W_NS_DECL, WordDoc
from benchwright.wordeval.ops.common import operation, paragraphs_for


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
