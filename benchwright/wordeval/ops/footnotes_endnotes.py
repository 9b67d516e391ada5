"""Operations of the footnotes endnotes units (``catalogue/units/09_footnotes_endnotes.yaml``)."""
from __future__ import annotations

from docx.oxml.parser import parse_xml

from benchwright.formats.ooxml.accessors import set_locus
from benchwright.formats.ooxml.elements import w_el
from benchwright.formats.ooxml.ns import qn
from benchwright.formats.ooxml.schema_order import get_or_add
from benchwright.wordeval.docmodel import W_NS_DECL, WordDoc, make_run
from benchwright.wordeval.ops.common import operation, runs_for, sect_prs


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
    bases = [wd.settings_el()] if where == "settings" else sect_prs(wd, target)
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
