"""Operations of the footnotes endnotes units (``catalogue/units/09_footnotes_endnotes.yaml``)."""
from __future__ import annotations

from benchwright.formats.ooxml import notes as oxml
from benchwright.formats.ooxml.accessors import set_locus
from benchwright.wordeval.docmodel import WordDoc, make_run
from benchwright.wordeval.ops.common import operation, runs_for, sect_prs


@operation("add_note")
def add_note(wd: WordDoc, target: dict, params: dict) -> None:
    kind = params.get("kind", "footnote")
    root = wd.notes_el(kind + "s")
    wd._ensure_note_styles(kind)
    nid = oxml.next_id(root, kind)
    runs = runs_for(wd, target)
    oxml.add(root, kind, nid, runs[-1], params["text"])


def _note_and_refs(wd: WordDoc, kind: str, prefix: str):
    note = wd.note(kind, prefix)
    return note, oxml.references(wd.body, kind, note)


@operation("edit_note_text")
def edit_note_text(wd: WordDoc, target: dict, params: dict) -> None:
    kind = target.get("story", "footnote")
    note, _ = _note_and_refs(wd, kind, target["note"])
    oxml.set_text(note, kind, make_run(" " + params["text"]))


@operation("delete_note")
def delete_note(wd: WordDoc, target: dict, params: dict) -> None:
    kind = target.get("story", "footnote")
    note, refs = _note_and_refs(wd, kind, target["note"])
    oxml.delete(note, refs)


@operation("set_note_option")
def set_note_option(wd: WordDoc, target: dict, params: dict) -> None:
    kind = params.get("kind", "footnote")
    where = params.get("where", "section")
    bases = [wd.settings_el()] if where == "settings" else sect_prs(wd, target)
    for base in bases:
        set_locus(base, f"w:{kind}Pr/w:{params['property']}@w:val", "attr", params["value"])


@operation("convert_notes")
def convert_notes(wd: WordDoc, target: dict, params: dict) -> None:
    """Footnotes.Convert: every footnote becomes an endnote (text and position kept)."""
    fn_root = wd.notes_el("footnotes", create=False)
    if fn_root is None:
        return
    oxml.convert_footnotes(fn_root, wd.notes_el("endnotes"), wd.body)
    wd._ensure_note_styles("endnote")
