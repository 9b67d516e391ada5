"""Operations of the lists numbering units (``catalogue/units/04_lists_numbering.yaml``)."""
from __future__ import annotations

from benchwright.formats.ooxml import numbering as oxml
from benchwright.formats.ooxml.accessors import set_locus
from benchwright.wordeval import text as T
from benchwright.wordeval.docmodel import AnchorError, WordDoc
from benchwright.wordeval.ops.common import operation, paragraphs_for


@operation("apply_list")
def apply_list(wd: WordDoc, target: dict, params: dict) -> None:
    nid = oxml.add_list(wd.numbering_el(), params.get("kind", "number"))
    for p in paragraphs_for(wd, target):
        oxml.set_membership(p, nid, 0)


@operation("list_indent")
def list_indent(wd: WordDoc, target: dict, params: dict) -> None:
    step = int(params.get("step", 1))
    for p in paragraphs_for(wd, target):
        nid, ilvl = oxml.membership(p)
        if nid is None:
            raise AnchorError(wd.locator, "paragraph is not in a list")
        oxml.set_membership(p, nid, max(0, min(8, ilvl + step)))


@operation("remove_numbers")
def remove_numbers(wd: WordDoc, target: dict, params: dict) -> None:
    for p in paragraphs_for(wd, target):
        oxml.remove_membership(p)


def _abstract_for(wd: WordDoc, p):
    nid, ilvl = oxml.membership(p)
    numbering = wd.numbering_el(create=False)
    if nid is None or numbering is None:
        raise AnchorError(wd.locator, "paragraph is not in a list")
    found = oxml.abstract_for(numbering, nid)
    if found is None:
        raise AnchorError(wd.locator, f"numbering {nid} not defined")
    abstract, num = found
    return abstract, ilvl, num


@operation("set_list_level")
def set_list_level(wd: WordDoc, target: dict, params: dict) -> None:
    """ListLevel properties of the list template the target paragraph uses (affects the whole list)."""
    p = paragraphs_for(wd, target)[0]
    abstract, ilvl, _ = _abstract_for(wd, p)
    lvl = oxml.level(abstract, params.get("level", ilvl))
    prop, value = params["property"], params["value"]
    if prop == "ind":
        oxml.set_level_indent(lvl, value, params.get("hanging", 360))
    else:
        set_locus(lvl, f"w:{prop}@w:val", "attr", value)


@operation("restart_numbering")
def restart_numbering(wd: WordDoc, target: dict, params: dict) -> None:
    """Restart numbering at the target paragraph: a new list instance (w:num) with a start
    override, used by the target and the following paragraphs of the same list."""
    p = paragraphs_for(wd, target)[0]
    abstract, ilvl, num = _abstract_for(wd, p)
    old = oxml.num_id(num)
    nid = oxml.add_restart(wd.numbering_el(), abstract, ilvl, params.get("start", 1))
    seen = False
    for q in T.iter_block_paragraphs(wd.body):
        if q is p:
            seen = True
        if seen and oxml.membership(q)[0] == old:
            oxml.set_membership(q, nid, oxml.membership(q)[1])
