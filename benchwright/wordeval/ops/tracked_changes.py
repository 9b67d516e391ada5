"""Operations of the tracked changes units (``catalogue/units/11_tracked_changes.yaml``)."""
from __future__ import annotations

import copy

from benchwright.formats.ooxml.accessors import set_locus
from benchwright.formats.ooxml.elements import w_el
from benchwright.formats.ooxml.ns import FIXED_DATE, qn
from benchwright.formats.ooxml.schema_order import get_or_add, insert_child
from benchwright.wordeval import text as T
from benchwright.wordeval.docmodel import AUTHOR, WordDoc, make_run
from benchwright.wordeval.ops.common import operation, paragraphs_for, runs_for, unwrap


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
                    unwrap(el)
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
                    unwrap(el)
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


def _move_range(wd: WordDoc, kind: str, name: str, rid: int):
    """moveFromRangeStart/End or moveToRangeStart/End (``kind`` = "moveFrom" / "moveTo")."""
    start = _rev_attrs(wd, w_el(f"w:{kind}RangeStart"), rid)
    start.set(qn("w:name"), name)
    end = w_el(f"w:{kind}RangeEnd")
    end.set(qn("w:id"), str(rid))
    return start, end


def _wrap_content(p, wrapper, start, end) -> None:
    """Put every content child of paragraph ``p`` (all but w:pPr) into ``wrapper``, between the
    range marks, and mark the paragraph mark with a copy of the revision."""
    content = [c for c in p if c.tag != qn("w:pPr")]
    for c in content:
        wrapper.append(c)
    p.append(start)
    p.append(wrapper)
    p.append(end)
    mark = copy.deepcopy(wrapper)
    for c in list(mark):
        mark.remove(c)
    mark.set(qn("w:id"), str(int(wrapper.get(qn("w:id"))) + 1))
    rpr = get_or_add(get_or_add(p, "w:pPr"), "w:rPr")
    insert_child(rpr, mark)


@operation("tracked_move")
def tracked_move(wd: WordDoc, target: dict, params: dict) -> None:
    """Range.Relocate with Track Changes on: the target paragraph moves below the next paragraph
    ("down") or above the previous one ("up"); the old place keeps it as w:moveFrom, the new place
    holds it as w:moveTo, each with its named move range and tracked paragraph mark."""
    from benchwright.wordeval.docmodel import PreconditionError
    p = paragraphs_for(wd, target)[0]
    direction = params.get("direction", "down")
    other = p.getnext() if direction == "down" else p.getprevious()
    if other is None or other.tag != qn("w:p") or other.find(".//" + qn("w:sectPr")) is not None \
            or p.find(".//" + qn("w:sectPr")) is not None:
        raise PreconditionError(wd.locator, f"no plain paragraph {direction} of the target to move past")
    if any(el.tag in (qn("w:ins"), qn("w:del"), qn("w:moveFrom"), qn("w:moveTo")) for el in p.iter()):
        raise PreconditionError(wd.locator, "the paragraph already holds tracked changes")
    plain_children = {qn("w:pPr"), qn("w:r"), qn("w:proofErr"), qn("w:bookmarkStart"), qn("w:bookmarkEnd"),
                      qn("w:commentRangeStart"), qn("w:commentRangeEnd")}
    if any(c.tag not in plain_children for c in p):
        # w:moveFrom / w:moveTo hold runs only: hyperlinks, simple fields and content controls
        # would each need their own move marks inside them (not written here)
        raise PreconditionError(wd.locator, "the paragraph holds hyperlinks, fields or content controls")
    moved = copy.deepcopy(p)
    # bookmarks and comment marks stay where they were (Word moves the text, not the marks' ids)
    for el in list(moved.iter(qn("w:bookmarkStart"), qn("w:bookmarkEnd"), qn("w:commentRangeStart"),
                              qn("w:commentRangeEnd"))):
        el.getparent().remove(el)
    name = f"move{wd.next_revision_id()}"
    rid = wd.next_revision_id()
    src_start, src_end = _move_range(wd, "moveFrom", name, rid)
    _wrap_content(p, _rev_attrs(wd, w_el("w:moveFrom"), rid + 1), src_start, src_end)
    if direction == "down":
        other.addnext(moved)
    else:
        other.addprevious(moved)
    dst_start, dst_end = _move_range(wd, "moveTo", name, rid + 3)
    _wrap_content(moved, _rev_attrs(wd, w_el("w:moveTo"), rid + 4), dst_start, dst_end)
