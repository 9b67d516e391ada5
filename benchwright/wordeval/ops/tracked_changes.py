"""Operations of the tracked changes units (``catalogue/units/11_tracked_changes.yaml``)."""
from __future__ import annotations

from benchwright.formats.ooxml import revisions as oxml
from benchwright.formats.ooxml.accessors import set_locus
from benchwright.formats.ooxml.run import append_runs, insert_after, last_text_properties, run_properties
from benchwright.wordeval import text as T
from benchwright.wordeval.docmodel import AUTHOR, PreconditionError, WordDoc, make_run
from benchwright.wordeval.ops.common import operation, paragraphs_for, runs_for


@operation("set_track_revisions")
def set_track_revisions(wd: WordDoc, target: dict, params: dict) -> None:
    set_locus(wd.settings_el(), "w:trackRevisions", "onoff", params.get("value", True))


@operation("tracked_insert")
def tracked_insert(wd: WordDoc, target: dict, params: dict) -> None:
    p = paragraphs_for(wd, target)[-1]
    rpr = last_text_properties(p)
    # the id is taken before the phrase's runs are split (a split-off run's format change takes the next)
    ins = oxml.insertion(make_run(params["text"], rpr), wd.next_revision_id(), AUTHOR)
    if "phrase" in target:
        insert_after(runs_for(wd, target)[-1], ins)
    else:
        append_runs(p, [ins])


@operation("tracked_delete")
def tracked_delete(wd: WordDoc, target: dict, params: dict) -> None:
    runs = runs_for(wd, target)
    oxml.delete_runs(runs, wd.next_revision_id(), AUTHOR)


@operation("tracked_replace")
def tracked_replace(wd: WordDoc, target: dict, params: dict) -> None:
    runs = runs_for(wd, target)
    rpr = run_properties(runs[0])
    deleted = oxml.delete_runs(runs, wd.next_revision_id(), AUTHOR)
    insert_after(deleted, oxml.insertion(make_run(params["text"], rpr), wd.next_revision_id(), AUTHOR))


@operation("tracked_format")
def tracked_format(wd: WordDoc, target: dict, params: dict) -> None:
    spec, value = params["spec"], params["value"]
    rid = wd.next_revision_id()
    for r in runs_for(wd, target):
        oxml.set_run_property_tracked(r, rid, AUTHOR, spec["locus"], spec["kind"], value, spec.get("also"))
        rid += 1


@operation("tracked_paragraph_format")
def tracked_paragraph_format(wd: WordDoc, target: dict, params: dict) -> None:
    spec, value = params["spec"], params["value"]
    for p in paragraphs_for(wd, target):
        oxml.set_paragraph_property_tracked(p, wd.next_revision_id(), AUTHOR, spec["locus"], spec["kind"], value,
                                            spec.get("also"))


@operation("tracked_insert_paragraph")
def tracked_insert_paragraph(wd: WordDoc, target: dict, params: dict) -> None:
    p = paragraphs_for(wd, target)[-1]
    insert_after(p, oxml.inserted_paragraph(make_run(params["text"]), wd.next_revision_id(), AUTHOR))


def _resolve_revisions(wd: WordDoc, accept: bool, rtype: str | None = None, text: str | None = None) -> None:
    for root in wd._all_story_roots():
        oxml.resolve(root, accept, rtype, text, T.paragraph_read_text)


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


@operation("tracked_move")
def tracked_move(wd: WordDoc, target: dict, params: dict) -> None:
    """Range.Relocate with Track Changes on: the target paragraph moves below the next paragraph
    ("down") or above the previous one ("up"); the old place keeps it as w:moveFrom, the new place
    holds it as w:moveTo, each with its named move range and tracked paragraph mark."""
    p = paragraphs_for(wd, target)[0]
    direction = params.get("direction", "down")
    other = oxml.move_neighbour(p, direction)
    if other is None:
        raise PreconditionError(wd.locator, f"no plain paragraph {direction} of the target to move past")
    if oxml.holds_revisions(p):
        raise PreconditionError(wd.locator, "the paragraph already holds tracked changes")
    if not oxml.holds_runs_only(p):
        raise PreconditionError(wd.locator, "the paragraph holds hyperlinks, fields or content controls")
    name = f"move{wd.next_revision_id()}"
    oxml.move_paragraph(p, other, direction, name, wd.next_revision_id(), AUTHOR)
