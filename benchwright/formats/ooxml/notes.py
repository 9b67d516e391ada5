"""WordprocessingML footnotes and endnotes: the notes parts (``w:footnotes/w:footnote``,
``w:endnotes/w:endnote``) and the references to them in the body (``w:footnoteReference``).
python-docx has no notes API; WordEval's note operations use these, and the XML stays here, as
python-docx keeps its own in ``docx.oxml``."""
from __future__ import annotations

from docx.oxml.parser import parse_xml
from lxml import etree

from benchwright.formats.ooxml.elements import w_el
from benchwright.formats.ooxml.ns import W_NS_DECL, qn


def _style_names(kind: str) -> tuple[str, str]:
    """(reference style, text style) of a note kind."""
    return ("FootnoteReference", "FootnoteText") if kind == "footnote" else ("EndnoteReference", "EndnoteText")


def next_id(root, kind: str) -> int:
    """One more than the largest id of the part's notes of ``kind`` (1 when it has none)."""
    return max([int(n.get(qn("w:id"))) for n in root.findall(qn("w:" + kind))] + [0]) + 1


def add(root, kind: str, nid: int, after_run, text: str) -> None:
    """References.Add: a reference run to note ``nid`` right after ``after_run``, and the note (its
    reference mark, then `` text``) at the end of the notes part ``root``."""
    ref_style, text_style = _style_names(kind)
    ref = w_el("w:r")
    rpr = w_el("w:rPr")
    rpr.append(w_el("w:rStyle", val=ref_style))
    ref.append(rpr)
    ref.append(w_el(f"w:{kind}Reference", id=nid))
    after_run.addnext(ref)
    note = parse_xml(
        f'<w:{kind} {W_NS_DECL} w:id="{nid}"><w:p><w:pPr><w:pStyle w:val="{text_style}"/></w:pPr>'
        f'<w:r><w:rPr><w:rStyle w:val="{ref_style}"/></w:rPr><w:{kind}Ref/></w:r>'
        f'<w:r><w:t xml:space="preserve"> </w:t></w:r></w:p></w:{kind}>'.encode())
    note.findall(".//" + qn("w:t"))[-1].text = " " + text
    root.append(note)


def references(body, kind: str, note) -> list:
    """The body's references (``w:footnoteReference`` / ``w:endnoteReference``) to ``note``."""
    nid = note.get(qn("w:id"))
    return [r for r in body.iter(qn(f"w:{kind}Reference")) if r.get(qn("w:id")) == nid]


def set_text(note, kind: str, run) -> None:
    """The note's first paragraph keeps its reference mark and holds ``run``; its other paragraphs go."""
    p = note.find(qn("w:p"))
    for r in list(p.findall(qn("w:r"))):
        if r.find(qn(f"w:{kind}Ref")) is None:
            p.remove(r)
    p.append(run)
    for extra in note.findall(qn("w:p"))[1:]:
        note.remove(extra)


def delete(note, refs: list) -> None:
    """Footnote.Delete: the references (a run left empty with them) and the note."""
    for ref in refs:
        r = ref.getparent()
        r.remove(ref)
        if not [c for c in r if c.tag != qn("w:rPr")]:
            r.getparent().remove(r)
    note.getparent().remove(note)


def convert_footnotes(fn_root, en_root, body) -> None:
    """Footnotes.Convert: every normal footnote becomes an endnote (numbered after the endnotes there are,
    its text, styles and body references kept)."""
    next_en = next_id(en_root, "endnote")
    mapping = {}
    for fn in list(fn_root.findall(qn("w:footnote"))):
        if (fn.get(qn("w:type")) or "normal") != "normal":
            continue
        en = parse_xml(etree.tostring(fn).replace(b"w:footnote", b"w:endnote")
                       .replace(b'"FootnoteText"', b'"EndnoteText"')
                       .replace(b'"FootnoteReference"', b'"EndnoteReference"'))
        mapping[fn.get(qn("w:id"))] = str(next_en)
        en.set(qn("w:id"), str(next_en))
        for ref in en.iter(qn("w:footnoteRef")):
            ref.tag = qn("w:endnoteRef")
        en_root.append(en)
        fn_root.remove(fn)
        next_en += 1
    for ref in list(body.iter(qn("w:footnoteReference"))):
        if ref.get(qn("w:id")) in mapping:
            ref.tag = qn("w:endnoteReference")
            ref.set(qn("w:id"), mapping[ref.get(qn("w:id"))])
            rs = ref.getparent().find(qn("w:rPr") + "/" + qn("w:rStyle"))
            if rs is not None:
                rs.set(qn("w:val"), "EndnoteReference")


__all__ = ["next_id", "add", "references", "set_text", "delete", "convert_footnotes"]
