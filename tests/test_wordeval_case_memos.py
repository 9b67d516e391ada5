"""What WordEval's case building remembers between cases never lets one case change another.

A build opens the same base document for every unit tried on it (``docmodel.open_document`` hands out a copy
of one parsed reading), writes the same unchanged parts again and again (``archive.write_zip`` reuses their
deflate streams; ``WordDoc.to_members`` its content types and relationship items) and snapshots them again
(read-only packages share parsed parts: ``package.shared_xml``). Each memo must hand out what a cold process
would make, and nothing handed out may be the object another case edits.
"""
from __future__ import annotations

import io
import zipfile

import pytest

from benchwright.formats.ooxml import archive, package
from benchwright.formats.ooxml.ns import qn
from benchwright.formats.ooxml.package import Package, normalize_members
from benchwright.formats.ooxml.safety import UnsafeDocxError
from benchwright.wordeval import docmodel, oracle
from benchwright.wordeval.basedocs import base_document
from benchwright.wordeval.cases import build_case
from benchwright.wordeval.catalogue import load_catalogue
from benchwright.wordeval.docmodel import WordDoc
from benchwright.wordeval.snapshot import extraction
from benchwright.wordeval.snapshot import parts as snapshot_parts

REAL = "fx-hdr-header-footer"
# units that edit the body, runs, styles, headers, comments, notes, numbering, properties, sections and revisions,
# with and without a precondition recipe (all build on REAL)
UNITS = ("font_bold", "font_reset", "comment_add", "comment_edit", "custom_prop_delete", "footnote_add",
         "footnote_edit", "header_primary_text", "header_unlink", "picture_add", "picture_resize", "para_alignment",
         "tabstops_clear", "page_orientation", "paragraph_style_heading1", "style_delete", "tracked_insert",
         "revisions_accept_all", "prop_title")
# units that add, remove and indent lists (numbering parts), on a document where they build
LIST_DOCUMENT, LIST_UNITS = "fx-par-alignment", ("list_bullets", "list_numbers", "list_remove", "list_indent", "font_bold")


def _forget_memos() -> None:
    """A cold process: every memo case building keeps, emptied."""
    for memo in (docmodel._UNTOUCHED, docmodel._READ_ONCE, docmodel._ITEMS, archive._DEFLATED, package._SHARED_XML,
                 package._FLAGS, oracle._REF_CACHE, extraction._STYLES_CACHE, extraction._NUMBERING_CACHE,
                 snapshot_parts._SETTINGS_CACHE, snapshot_parts._STYLE_RECORDS):
        memo.clear()


def _members(data: bytes) -> dict[str, bytes]:
    zf = zipfile.ZipFile(io.BytesIO(data))
    return {info.filename: zf.read(info) for info in zf.infolist()}


def test_units_built_one_after_another_are_the_units_built_each_in_a_cold_process():
    # if a unit's edits reached a memo (the parsed base document, a shared tree, a remembered stream), the
    # units built after it on the same document would differ from the same units built with nothing remembered
    cat = load_catalogue()
    for document, units in ((REAL, UNITS), (LIST_DOCUMENT, LIST_UNITS)):
        _forget_memos()
        warm = {uid: build_case(uid, 0, document, cat) for uid in units + units[::-1]}
        for uid in units:
            _forget_memos()
            assert build_case(uid, 0, document, cat) == warm[uid], (uid, document)


def test_each_opening_of_a_document_is_its_own_copy():
    base = base_document(REAL)
    _forget_memos()
    docs = [WordDoc(base, "t") for _ in range(3)]     # read, read again (remembered untouched), copied
    untouched, = docmodel._UNTOUCHED.values()
    packages = [d.part.package for d in docs] + [untouched]
    for i, a in enumerate(packages):
        for b in packages[i + 1:]:
            assert a is not b
            parts_b = list(b.parts)
            for part in a.parts:
                assert all(part is not other for other in parts_b)
                assert all(part.rels is not other.rels for other in parts_b)
                if hasattr(part, "element"):
                    assert all(part.element is not getattr(other, "element", None) for other in parts_b)
    # edit every XML part of the first two copies: no later opening sees it
    for d in docs[:2]:
        for part in d.part.package.parts:
            if hasattr(part, "element"):
                part.element.set("edited", "yes")
                for child in list(part.element):
                    part.element.remove(child)
        d.body.append(d.body.makeelement(qn("w:p"), {}))
    for d in docs[2:] + [WordDoc(base, "t"), WordDoc(base, "t")]:
        assert d.to_bytes() == base
    assert all(b"edited=" not in m for m in _members(docs[2].to_bytes()).values())


def test_read_only_packages_share_parsed_parts_and_editable_ones_do_not():
    _forget_memos()
    members = _members(base_document(REAL))
    dated = members["word/document.xml"].replace(b"<w:body>", b"<w:body><w:p><w:ins w:id=\"9\" w:author=\"a\" "
                                                              b"w:date=\"2001-01-01T00:00:00Z\"/></w:p>", 1)
    assert dated != members["word/document.xml"]
    members["word/document.xml"] = dated
    shared = Package(members, read_only=True).xml("word/document.xml")
    assert Package(members, read_only=True).xml("word/document.xml") is shared
    editable = Package(members).xml("word/document.xml")
    assert editable is not shared
    normalize_members(members)                        # edits the dates of its own parse
    assert b"2001-01-01" in package.serialize(Package(members, read_only=True).xml("word/document.xml"))
    assert shared.find(".//" + qn("w:ins")).get(qn("w:date")) == "2001-01-01T00:00:00Z"


def test_write_zip_writes_what_zipfile_writes():
    _forget_memos()
    odd = {"[Content_Types].xml": b"<Types/>", "word/\u00e9t\u00e9.xml": "caf\u00e9", "empty.bin": b"",
           "z/data.bin": bytes(range(256)) * 64}
    for members in [_members(base_document(name)) for name in ("report", REAL, "fx-par-alignment")] + [odd]:
        expected = archive.write_zip_with_zipfile(members)
        assert archive.write_zip(members) == expected
        assert archive.write_zip(members) == expected      # the deflate streams remembered
        if "[Content_Types].xml" in members and "word/document.xml" in members:
            assert Package.from_written(expected, members).members == Package.from_bytes(expected).members
            assert list(Package.from_written(expected, members).members) == list(Package.from_bytes(expected).members)


def test_a_written_archive_is_refused_where_reading_it_back_would_be():
    members = _members(base_document(REAL))
    members["customXml/item9.xml"] = b'<!DOCTYPE x [<!ENTITY e "e">]><x>&e;</x>'
    data = archive.write_zip(members)
    with pytest.raises(UnsafeDocxError) as read:
        Package.from_bytes(data)
    with pytest.raises(UnsafeDocxError) as written:
        Package.from_written(data, members)
    assert read.value.kind == written.value.kind == "doctype"
