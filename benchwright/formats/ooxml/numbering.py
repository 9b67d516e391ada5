"""WordprocessingML numbering: the numbering part's list templates (``w:abstractNum`` with its nine
``w:lvl``) and list instances (``w:num``), and a paragraph's list membership (``w:pPr/w:numPr``).
python-docx has no list API; WordEval's list operations use these, and the XML stays here, as
python-docx keeps its own in ``docx.oxml.numbering``."""
from __future__ import annotations

from docx.oxml.parser import parse_xml

from benchwright.formats.ooxml.elements import w_el
from benchwright.formats.ooxml.ns import W_NS_DECL, qn
from benchwright.formats.ooxml.schema_order import get_or_add, insert_child

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


def add_list(numbering, kind: str) -> str:
    """ListTemplates.Add: a new list template of ``kind`` ("bullet", "number", "outline") and a list
    instance of it in the numbering part; returns the instance's numId."""
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


def set_membership(p, num_id: str, ilvl: int) -> None:
    """Paragraph ``p`` is in list ``num_id`` at level ``ilvl`` (``w:numPr``)."""
    numpr = get_or_add(get_or_add(p, "w:pPr"), "w:numPr")
    for c in list(numpr):
        numpr.remove(c)
    numpr.append(w_el("w:ilvl", val=ilvl))
    numpr.append(w_el("w:numId", val=num_id))


def membership(p) -> tuple[str | None, int]:
    """(numId, level) of paragraph ``p``'s own list membership; (None, 0) outside a list."""
    ppr = p.find(qn("w:pPr"))
    np_ = ppr.find(qn("w:numPr")) if ppr is not None else None
    if np_ is None:
        return None, 0
    nid = np_.find(qn("w:numId"))
    ilvl = np_.find(qn("w:ilvl"))
    return (nid.get(qn("w:val")) if nid is not None else None,
            int(ilvl.get(qn("w:val"))) if ilvl is not None else 0)


def remove_membership(p) -> None:
    """Paragraph ``p`` leaves its list (its ``w:numPr`` goes)."""
    ppr = p.find(qn("w:pPr"))
    np_ = ppr.find(qn("w:numPr")) if ppr is not None else None
    if np_ is not None:
        ppr.remove(np_)


def abstract_for(numbering, nid: str):
    """(list template, list instance) of list instance ``nid``, or None when it is not defined."""
    for num in numbering.findall(qn("w:num")):
        if num.get(qn("w:numId")) == nid:
            aid = num.find(qn("w:abstractNumId")).get(qn("w:val"))
            for a in numbering.findall(qn("w:abstractNum")):
                if a.get(qn("w:abstractNumId")) == aid:
                    return a, num
    return None


def level(abstract, ilvl) -> object:
    """The list template's ``w:lvl`` of level ``ilvl``."""
    return [x for x in abstract.findall(qn("w:lvl")) if x.get(qn("w:ilvl")) == str(ilvl)][0]


def set_level_indent(lvl, left, hanging) -> None:
    """ListLevel.TextPosition / hanging indent: the level's ``w:pPr/w:ind`` left and hanging, in twips."""
    ind = get_or_add(get_or_add(lvl, "w:pPr"), "w:ind")
    ind.set(qn("w:left"), str(left))
    ind.set(qn("w:hanging"), str(hanging))


def num_id(num) -> str:
    """A list instance's numId."""
    return num.get(qn("w:numId"))


def add_restart(numbering, abstract, ilvl: int, start) -> str:
    """A new list instance of ``abstract`` whose level ``ilvl`` starts again at ``start``; returns its numId."""
    nid = str(max(int(n.get(qn("w:numId"))) for n in numbering.findall(qn("w:num"))) + 1)
    new = parse_xml(
        f'<w:num {W_NS_DECL} w:numId="{nid}"><w:abstractNumId w:val="{abstract.get(qn("w:abstractNumId"))}"/>'
        f'<w:lvlOverride w:ilvl="{ilvl}"><w:startOverride w:val="{start}"/></w:lvlOverride>'
        f'</w:num>'.encode())
    insert_child(numbering, new)
    return nid


__all__ = ["add_list", "set_membership", "membership", "remove_membership", "abstract_for", "level",
           "set_level_indent", "num_id", "add_restart"]
