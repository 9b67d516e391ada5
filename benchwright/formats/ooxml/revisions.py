"""WordprocessingML revisions (tracked changes): ``w:ins`` / ``w:del`` around runs, a paragraph mark's
``w:rPr/w:ins``, ``w:rPrChange`` / ``w:pPrChange`` holding the properties before a change, and a move's
``w:moveFrom`` / ``w:moveTo`` with their named ranges; and accepting or rejecting them. WordEval's
tracked-changes operations make and resolve revisions through these (python-docx has no revision API),
and the XML stays here, as python-docx keeps its own in ``docx.oxml``. Ids are the caller's: a
revision id is unique across the document's stories."""
from __future__ import annotations

import copy

from benchwright.formats.ooxml.accessors import set_locus
from benchwright.formats.ooxml.elements import unwrap, w_el
from benchwright.formats.ooxml.ns import FIXED_DATE, qn
from benchwright.formats.ooxml.schema_order import get_or_add, insert_child

RUN_REVISION_TAGS = (qn("w:ins"), qn("w:del"), qn("w:moveFrom"), qn("w:moveTo"))
# what a paragraph moved with Track Changes may hold: w:moveFrom / w:moveTo hold runs only, so hyperlinks,
# simple fields and content controls would each need their own move marks inside them (not written here)
MOVABLE_CHILDREN = {qn("w:pPr"), qn("w:r"), qn("w:proofErr"), qn("w:bookmarkStart"), qn("w:bookmarkEnd"),
                    qn("w:commentRangeStart"), qn("w:commentRangeEnd")}
_RANGE_MARKS = (qn("w:bookmarkStart"), qn("w:bookmarkEnd"), qn("w:commentRangeStart"), qn("w:commentRangeEnd"))


def revision(tag: str, rid: int, author: str):
    """A new revision element (``w:ins``, ``w:del``, ``w:rPrChange`` ...) with its id, author and the fixed date."""
    el = w_el(tag)
    el.set(qn("w:id"), str(rid))
    el.set(qn("w:author"), author)
    el.set(qn("w:date"), FIXED_DATE)
    return el


def insertion(run, rid: int, author: str):
    """A ``w:ins`` holding ``run`` (inserted text), not yet in a paragraph."""
    ins = revision("w:ins", rid, author)
    ins.append(run)
    return ins


def _to_deleted(r) -> None:
    for t in r.iter(qn("w:t")):
        t.tag = qn("w:delText")
    for t in r.iter(qn("w:instrText")):
        t.tag = qn("w:delInstrText")


def delete_runs(runs: list, rid: int, author: str):
    """Tracked deletion: ``runs`` (siblings) move into a ``w:del`` in their place, their text as
    ``w:delText`` / ``w:delInstrText``; returns the ``w:del``."""
    d = revision("w:del", rid, author)
    runs[0].addprevious(d)
    for r in runs:
        _to_deleted(r)
        d.append(r)
    return d


def set_run_property_tracked(r, rid: int, author: str, locus: str, kind: str, value, also=None) -> None:
    """Set a run property (an accessor locus below the run) with the run's properties before the change
    recorded in a ``w:rPrChange``."""
    _set_property_tracked(r, "w:rPr", "w:rPrChange", ("w:rPrChange",), rid, author, locus, kind, value, also)


def set_paragraph_property_tracked(p, rid: int, author: str, locus: str, kind: str, value, also=None) -> None:
    """Set a paragraph property with the paragraph's properties before the change (less its mark's run
    properties and section) recorded in a ``w:pPrChange``."""
    _set_property_tracked(p, "w:pPr", "w:pPrChange", ("w:rPr", "w:sectPr", "w:pPrChange"), rid, author, locus, kind,
                          value, also)


def _set_property_tracked(element, properties: str, change_tag: str, not_recorded: tuple[str, ...], rid: int,
                          author: str, locus: str, kind: str, value, also) -> None:
    """Set a property of ``element`` (a run or a paragraph) and record its ``properties`` before the change,
    less the children ``not_recorded``, in a ``change_tag`` revision inside them."""
    props = get_or_add(element, properties)
    skipped = {qn(tag) for tag in not_recorded}
    old = [copy.deepcopy(c) for c in props if c.tag not in skipped]
    change = revision(change_tag, rid, author)
    inner = w_el(properties)
    for c in old:
        inner.append(c)
    change.append(inner)
    set_locus(element, locus, kind, value, also)
    insert_child(props, change)


def inserted_paragraph(run, rid: int, author: str):
    """A new paragraph inserted with Track Changes: its mark inserted (revision ``rid``) and its text
    ``run`` in a ``w:ins`` (``rid + 1``)."""
    new = w_el("w:p")
    ppr = w_el("w:pPr")
    rpr = w_el("w:rPr")
    rpr.append(revision("w:ins", rid, author))
    ppr.append(rpr)
    new.append(ppr)
    new.append(insertion(run, rid + 1, author))
    return new


# ------------------------------------------------------------------ accepting and rejecting


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


def _resolve_paragraph_marks(root, accept: bool, rtype, text, paragraph_text) -> None:
    """Inserted paragraph marks (whole inserted paragraphs): accepted, the mark's ``w:ins`` goes; rejected,
    the paragraph goes."""
    for mark in list(root.iter(qn("w:ins"))):
        parent = mark.getparent()
        if parent is None or parent.tag != qn("w:rPr") or parent.getparent().tag != qn("w:pPr"):
            continue
        p = parent.getparent().getparent()
        if text is not None and text not in paragraph_text(p):
            continue
        if rtype not in (None, "insert"):
            continue
        if accept:
            parent.remove(mark)
            if not len(parent):
                parent.getparent().remove(parent)
        else:
            p.getparent().remove(p)


def _restore_deleted(el) -> None:
    for t in el.iter(qn("w:delText")):
        t.tag = qn("w:t")
    for t in el.iter(qn("w:delInstrText")):
        t.tag = qn("w:instrText")
    unwrap(el)


def _resolve_run_properties_change(el, accept: bool) -> None:
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


def _resolve_paragraph_properties_change(el, accept: bool) -> None:
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


def resolve(root, accept: bool, rtype: str | None, text: str | None, paragraph_text) -> None:
    """Accept (or reject) the revisions of one story ``root``: every one, or those of type ``rtype``
    ("insert", "delete", "format", "paragraph") whose text holds ``text``. ``paragraph_text(p)`` is the
    text a reader sees in a paragraph (an inserted paragraph is matched by it)."""
    _resolve_paragraph_marks(root, accept, rtype, text, paragraph_text)
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
                _restore_deleted(el)
        elif tag == qn("w:rPrChange"):
            _resolve_run_properties_change(el, accept)
        elif tag == qn("w:pPrChange"):
            _resolve_paragraph_properties_change(el, accept)


# ------------------------------------------------------------------ moves


def move_neighbour(p, direction: str):
    """The paragraph a paragraph moved ``direction`` ("down" / "up") moves past: the next (previous) sibling
    when it is a paragraph and neither ends a section; else None."""
    other = p.getnext() if direction == "down" else p.getprevious()
    if other is None or other.tag != qn("w:p") or other.find(".//" + qn("w:sectPr")) is not None \
            or p.find(".//" + qn("w:sectPr")) is not None:
        return None
    return other


def holds_revisions(p) -> bool:
    """Whether paragraph ``p`` holds an insertion, deletion or move."""
    return any(el.tag in RUN_REVISION_TAGS for el in p.iter())


def holds_runs_only(p) -> bool:
    """Whether ``p`` holds only what a tracked move wraps (runs, proofing and range marks)."""
    return all(c.tag in MOVABLE_CHILDREN for c in p)


def _move_range(kind: str, name: str, rid: int, author: str):
    """moveFromRangeStart/End or moveToRangeStart/End (``kind`` = "moveFrom" / "moveTo")."""
    start = revision(f"w:{kind}RangeStart", rid, author)
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


def move_paragraph(p, other, direction: str, name: str, rid: int, author: str) -> None:
    """Range.Relocate with Track Changes on: ``p`` moves below ``other`` ("down") or above it ("up"); the
    old place keeps it as ``w:moveFrom``, the new place holds it as ``w:moveTo``, each with its range named
    ``name`` and tracked paragraph mark (revision ids ``rid`` to ``rid + 5``)."""
    moved = copy.deepcopy(p)
    # bookmarks and comment marks stay where they were (Word moves the text, not the marks' ids)
    for el in list(moved.iter(*_RANGE_MARKS)):
        el.getparent().remove(el)
    src_start, src_end = _move_range("moveFrom", name, rid, author)
    _wrap_content(p, revision("w:moveFrom", rid + 1, author), src_start, src_end)
    if direction == "down":
        other.addnext(moved)
    else:
        other.addprevious(moved)
    dst_start, dst_end = _move_range("moveTo", name, rid + 3, author)
    _wrap_content(moved, revision("w:moveTo", rid + 4, author), dst_start, dst_end)


__all__ = ["revision", "insertion", "delete_runs", "set_run_property_tracked", "set_paragraph_property_tracked",
           "inserted_paragraph", "resolve", "move_neighbour", "holds_revisions", "holds_runs_only",
           "move_paragraph", "RUN_REVISION_TAGS", "MOVABLE_CHILDREN"]
