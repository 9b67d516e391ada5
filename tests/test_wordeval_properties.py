"""Every property of catalogue/properties.yaml is located once: one accessor per location, which
``set_property`` writes with and the snapshot reads with (issue 9, item 5)."""
from __future__ import annotations

import pytest

from benchwright.formats.ooxml.accessors import Locus, accessor, native_value
from benchwright.formats.ooxml.ns import qn
from benchwright.memo import Memo
from benchwright.wordeval.cases import NotApplicable, _resolve_unit, build_case, unit_bases
from benchwright.wordeval.catalogue import load_catalogue
from benchwright.wordeval.docmodel import WordDoc
from benchwright.wordeval.ops.common import scope_objects
from benchwright.wordeval.properties import claims, core_accessors, property_for, registry
from benchwright.wordeval.snapshot import extract_snapshot, extraction, parts
from benchwright.wordeval.snapshot.cascade import _flat_key

# the snapshot key of a property in a flattened container: scope prefix + the location's key
PREFIX = {"run": "chars.", "paragraph": "para.", "table": "tbl.", "row": "row{row}.", "cell": "cell*."}


def _units_by_property() -> dict[str, dict]:
    out = {}
    for u in load_catalogue().units.values():
        if u["operation"] == "set_property":
            out.setdefault(u["params"]["spec"]["value"]["com"], u)
    return out


def test_one_accessor_per_location_and_the_snapshot_claims_it():
    reg = registry()
    assert set(reg) == set(load_catalogue().properties)
    for com, prop in reg.items():
        assert prop.locus is accessor(prop.spec["locus"]), com     # shared by every property there
        if prop.scope == "core":
            assert core_accessors()[prop.locus.tag] is prop.locus
            continue
        child = prop.locus.steps[1] if len(prop.locus.steps) > 1 else prop.locus.steps[0]
        assert prop.locus in claims()[prop.container][child], com
        snap_key = prop.spec["snapshot"]
        if prop.scope in PREFIX:
            if com == "Table.Style":
                assert snap_key == "style"   # the table's style name, resolved from the id the accessor finds
                continue
            assert snap_key == PREFIX[prop.scope] + _flat_key(prop.locus), com
        elif prop.scope == "style" and len(prop.locus.steps) > 1:
            assert snap_key == prop.locus.names[0][2:] + "." + _flat_key(prop.locus), com   # rPr.b, pPr.jc
        else:
            assert snap_key == _flat_key(prop.locus) or (com, snap_key) in {
                ("Style.Priority", "priority"), ("Style.BaseStyle", "basedOn"), ("Style.NextParagraphStyle", "next")}, com


def test_locus_reads_what_it_writes_in_schema_order():
    from lxml import etree
    doc = etree.fromstring('<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
                           '<w:body><w:p><w:pPr><w:jc w:val="start"/></w:pPr></w:p></w:body></w:document>')
    p = doc.find(qn("w:body") + "/" + qn("w:p"))
    ind = accessor("w:pPr/w:ind@w:firstLine")
    assert accessor("w:pPr/w:jc@w:val").get(p) == "left"          # Strict's name for left
    ind.set(p, "twips", 360)
    assert [etree.QName(c).localname for c in p.find(qn("w:pPr"))] == ["ind", "jc"]   # CT_PPr order
    assert ind.get(p) == 360
    p.find(qn("w:pPr") + "/" + qn("w:ind")).set(qn("w:hanging"), "200")
    assert ind.get(p) == -200                                        # hanging wins, as in Word
    bold = accessor("w:rPr/w:b")
    r = etree.SubElement(p, qn("w:r"))
    assert bold.get(r) is None
    bold.set(r, "onoff", False)
    assert bold.get(r) is False and r.find(qn("w:rPr") + "/" + qn("w:b")).get(qn("w:val")) == "0"
    bold.set(r, "onoff_inverse", False)
    assert bold.get(r) is True


def _expected(prop, value, wd):
    kind = prop.kind
    if kind == "onoff":
        return bool(value)
    if kind == "onoff_inverse":
        return not value
    if kind == "style_ref":
        return wd.style_id(value) or value
    if kind == "color":
        return str(value).upper()
    if kind in ("string", "enum"):
        return native_value(prop.locus.attr_local or "val", str(value))   # an enum "2" reads as 2
    return int(value)


@pytest.mark.parametrize("com", sorted(_units_by_property()))
def test_set_property_and_the_snapshot_go_through_the_same_accessor(com, monkeypatch):
    unit = _units_by_property()[com]
    cat = load_catalogue()
    prop = property_for(unit["params"]["spec"]["value"])
    for base in unit_bases(unit, cat):
        try:
            case = build_case(unit, 0, base, cat)
        except NotApplicable:
            continue
        break
    else:
        pytest.skip(f"no base document takes {unit['id']}")
    # the reference holds the value set_property wrote, and the accessor reads it back
    _, _, _, target, native, _, _ = _resolve_unit(unit, 0, base, cat)
    wd = WordDoc(case["reference_docx"])
    if prop.scope == "core":
        els = [wd.doc.core_properties._element]
    else:
        els = [el for el, _ in scope_objects(wd, prop.scope, target)]
    got = {prop.get(el) for el in els}
    want = _expected(prop, native["value"], wd)
    # python-docx writes a default by removing the element (a new-page section start, a style
    # no longer hidden), which is the same value
    assert got == {want} or (got == {None} and (want is False or com == "PageSetup.SectionStart")), (got, want)
    # the snapshot decodes that location with the same accessor object
    seen = set()
    for name in ("decode", "find"):
        orig = getattr(Locus, name)

        def spy(self, el, _orig=orig):
            seen.add(self.locus)
            return _orig(self, el)

        monkeypatch.setattr(Locus, name, spy)
        if prop.scope == "core":
            monkeypatch.setattr(type(prop.locus), name, spy)
    monkeypatch.setattr(extraction, "_STYLES_CACHE", Memo(32))    # styles parsed afresh, not from an earlier case
    monkeypatch.setattr(parts, "_STYLE_RECORDS", Memo(32))
    monkeypatch.setattr(parts, "_SETTINGS_CACHE", Memo(32))       # settings decoded afresh too
    extract_snapshot(case["reference_docx"])
    assert prop.spec["locus"] in seen
