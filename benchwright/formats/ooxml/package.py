"""A minimal OPC package over safely read members, and deterministic .docx writing.

``Package`` keeps members in a dict (name -> bytes), parses XML parts lazily through the hardened
parser of :mod:`benchwright.formats.ooxml.safety`, resolves relationships and content types, and writes
the archive deterministically: a fixed member order (``[Content_Types].xml`` first, then the
package relationships, the main document and its relationships, then every other member sorted
by name), a fixed timestamp (1980-01-01 00:00:00), fixed attributes and compression level.
"""
from __future__ import annotations

import posixpath
from dataclasses import dataclass

from lxml import etree

from benchwright.formats.ooxml.archive import deflated, member_order, write_zip
from benchwright.formats.ooxml.ns import CT, FIXED_DATE, RT, STRICT_PREFIX, qn
from benchwright.formats.ooxml.safety import (DEFAULT_LIMITS, Limits, UnsafeDocxError, check_written, parse_xml, read_members,
                                              scan_flags)
from benchwright.memo import Memo


def serialize(root: etree._Element) -> bytes:
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True)


# parsed parts of read-only packages by content (the last 256, parts of at most SHARED_PART_BYTES and
# SHARED_XML_BYTES in all): the snapshots of a build's cases read the same theme, settings, headers and
# relationships of a base document again and again
SHARED_PART_BYTES = 1024 * 1024
SHARED_XML_BYTES = 16 * 1024 * 1024
_SHARED_XML: "Memo[etree._Element]" = Memo(256, SHARED_XML_BYTES, lambda key, _: len(key[0]))
_FLAGS: "Memo[list[str]]" = Memo(64)   # a read-only package's flags, by its names and the bytes scan_flags reads


def shared_xml(data: bytes, locator: str = "<xml>", limits: Limits = DEFAULT_LIMITS) -> etree._Element:
    """``parse_xml(data)``, the same tree for the same bytes: for reading only, never to be edited."""
    if len(data) > SHARED_PART_BYTES:
        return parse_xml(data, locator, limits)
    return _SHARED_XML.get((data, limits), lambda: parse_xml(data, locator, limits))


@dataclass(frozen=True)
class Relationship:
    source: str          # part name the relationship belongs to ("" for the package)
    rid: str
    type: str
    target: str          # raw Target attribute
    external: bool

    @property
    def type_tail(self) -> str:
        return self.type.rsplit("/", 1)[-1]

    @property
    def target_part(self) -> str | None:
        """Resolved part name for internal targets."""
        if self.external:
            return None
        return resolve_target(self.source, self.target)


def rels_name(part: str) -> str:
    if not part:
        return "_rels/.rels"
    d, f = posixpath.split(part)
    return posixpath.join(d, "_rels", f + ".rels")


def resolve_target(source: str, target: str) -> str:
    if target.startswith("/"):
        return posixpath.normpath(target.lstrip("/"))
    base = posixpath.dirname(source) if source else ""
    return posixpath.normpath(posixpath.join(base, target))


class Package:
    def __init__(self, members: dict[str, bytes], locator: str = "<docx>", limits: Limits = DEFAULT_LIMITS,
                 read_only: bool = False):
        """``read_only``: the parsed parts are only read, never edited, so a part whose bytes were parsed
        before (in any read-only package) is that same tree (:func:`shared_xml`)."""
        self.members = dict(members)
        self.locator = locator
        self.limits = limits
        self.read_only = read_only
        self._xml: dict[str, etree._Element] = {}
        self._ct: tuple[dict[str, str], dict[str, str]] | None = None
        self._rels: dict[str, tuple[Relationship, ...]] = {}   # by relationship part, until it is set or removed

    # ----------------------------------------------------------------- construction
    @classmethod
    def from_bytes(cls, data: bytes, locator: str = "<docx>", limits: Limits = DEFAULT_LIMITS,
                   read_only: bool = False) -> "Package":
        pkg = cls(read_members(data, locator, limits), locator, limits, read_only)
        if "[Content_Types].xml" not in pkg.members:
            raise UnsafeDocxError(locator, "not_a_docx", "no [Content_Types].xml")
        return pkg

    @classmethod
    def from_written(cls, data: bytes, members: dict[str, bytes], locator: str = "<docx>",
                     limits: Limits = DEFAULT_LIMITS, read_only: bool = False) -> "Package":
        """The package :meth:`from_bytes` reads from ``data``, an archive this process wrote with
        :func:`write_zip` from ``members``: the members as they were written (in archive order, refused
        where reading them back would be) instead of inflated again."""
        written = {name: members[name] for name in member_order(members) if not name.endswith("/")}
        check_written(data, written, lambda name: len(deflated(written[name])[1]), locator, limits)
        pkg = cls(written, locator, limits, read_only)
        if "[Content_Types].xml" not in pkg.members:
            raise UnsafeDocxError(locator, "not_a_docx", "no [Content_Types].xml")
        return pkg

    # ----------------------------------------------------------------- members
    def has(self, name: str) -> bool:
        return name in self.members

    def get(self, name: str) -> bytes:
        if name in self._xml:
            return serialize(self._xml[name])
        return self.members[name]

    def set(self, name: str, data: bytes) -> None:
        if name == "[Content_Types].xml":
            self._ct = None
        self._xml.pop(name, None)
        self._rels.pop(name, None)
        self.members[name] = data

    def remove(self, name: str) -> None:
        self._xml.pop(name, None)
        self._rels.pop(name, None)
        self.members.pop(name, None)

    def xml(self, name: str) -> etree._Element:
        """Parsed root of an XML part (cached; edits are written back by :meth:`to_bytes`)."""
        if name not in self._xml:
            if name not in self.members:
                raise KeyError(name)
            if self.read_only:
                self._xml[name] = shared_xml(self.members[name], f"{self.locator}:{name}", self.limits)
            else:
                self._xml[name] = parse_xml(self.members[name], f"{self.locator}:{name}", self.limits)
        return self._xml[name]

    def flags(self) -> list[str]:
        # scan_flags reads the content types and the relationship parts; of the others only their names
        if not self.read_only:
            return self._scan_flags()
        # parts never edited (each parsed part is a function of its bytes): the flags are a function of the
        # names and of the bytes of the parts scan_flags reads, remembered (the last 64)
        key = (self.locator,) + tuple((n, self.members[n] if n == "[Content_Types].xml" or n.endswith(".rels") else None)
                                      for n in self.members)
        if sum(len(data) for _, data in key[1:] if data is not None) > SHARED_PART_BYTES:
            return self._scan_flags()
        return list(_FLAGS.get(key, self._scan_flags))

    def _scan_flags(self) -> list[str]:
        return scan_flags({n: self.get(n) if n == "[Content_Types].xml" or n.endswith(".rels") else self.members[n]
                           for n in self.members}, self.locator)

    # ----------------------------------------------------------------- content types
    def _content_types(self) -> tuple[dict[str, str], dict[str, str]]:
        if self._ct is not None:
            return self._ct
        root = self.xml("[Content_Types].xml")
        defaults, overrides = {}, {}
        for el in root:
            if el.tag == qn("ct:Default"):
                defaults[(el.get("Extension") or "").lower()] = el.get("ContentType", "")
            elif el.tag == qn("ct:Override"):
                overrides[(el.get("PartName") or "").lstrip("/").lower()] = el.get("ContentType", "")
        self._ct = (defaults, overrides)
        return self._ct

    def content_type(self, part: str) -> str | None:
        defaults, overrides = self._content_types()
        if part.lower() in overrides:
            return overrides[part.lower()]
        ext = part.rsplit(".", 1)[-1].lower() if "." in part else ""
        return defaults.get(ext)

    # ----------------------------------------------------------------- relationships
    def relationships(self, part: str = "") -> list[Relationship]:
        """The relationships of ``part`` ("" for the package's), read once (a snapshot asks for the main
        part's a dozen times); ``set`` or ``remove`` of the relationship part reads them again."""
        name = rels_name(part)
        if name not in self.members:
            return []
        if name not in self._rels:
            self._rels[name] = tuple(
                Relationship(part, el.get("Id", ""), el.get("Type", ""), el.get("Target", ""),
                             el.get("TargetMode") == "External")
                for el in self.xml(name) if el.tag == qn("pr:Relationship"))
        return list(self._rels[name])

    def rel_map(self, part: str) -> dict[str, Relationship]:
        return {r.rid: r for r in self.relationships(part)}

    def related(self, part: str, type_tail: str) -> list[str]:
        return [r.target_part for r in self.relationships(part)
                if r.type_tail == type_tail and not r.external and r.target_part in self.members]

    def main_part(self) -> str:
        """The main document part. ISO/IEC 29500 Strict documents are refused by name: Strict is
        not Transitional with other namespaces (measures carry units, ``start``/``end`` replace
        ``left``/``right``, ...), so a namespace rename would read plausible but wrong values."""
        for rel in self.relationships(""):
            if rel.type_tail == "officeDocument" and not rel.external:
                tp = rel.target_part
                if tp in self.members:
                    tag = self.xml(tp).tag
                    if rel.type.startswith(STRICT_PREFIX) or tag.startswith("{" + STRICT_PREFIX):
                        raise UnsafeDocxError(
                            self.locator, "strict",
                            "ISO/IEC 29500 Strict documents are not supported (namespace "
                            f"{STRICT_PREFIX}...); save the file as a Word Document (Transitional)")
                    if tag != qn("w:document"):
                        raise UnsafeDocxError(self.locator, "not_a_docx",
                                              f"main part {tp} is <{tag}>, not a WordprocessingML w:document")
                    return tp
        raise UnsafeDocxError(self.locator, "not_a_docx", "no main document part (officeDocument relationship)")

    # ----------------------------------------------------------------- writing
    def written_members(self) -> dict[str, bytes]:
        """Every member as :meth:`to_bytes` writes it (parsed parts serialised), in archive order."""
        return {name: serialize(self._xml[name]) if name in self._xml else self.members[name]
                for name in member_order(self.members)}

    def to_bytes(self) -> bytes:
        return write_zip(self.written_members())


# --------------------------------------------------------------------------- normalisation

_DATE_ATTR = qn("w:date")
_DATED_PARTS_PREFIX = ("word/document.xml", "word/footnotes.xml", "word/endnotes.xml", "word/comments.xml",
                       "word/header", "word/footer", "word/styles.xml", "word/numbering.xml")


def normalize_docx(data: bytes, *, fixed_date: str = FIXED_DATE, locator: str = "<docx>") -> bytes:
    """Rewrite a .docx deterministically: fixed zip order/timestamps, fixed dates.

    Dates fixed: ``dcterms:created``/``dcterms:modified`` in core properties, ``w:date`` on
    comments and revisions. ``cp:lastModifiedBy`` and ``cp:revision`` are pinned too.
    """
    return normalize_package(Package.from_bytes(data, locator), fixed_date=fixed_date).to_bytes()


def normalize_members(members: dict[str, bytes], *, fixed_date: str = FIXED_DATE, locator: str = "<docx>") -> bytes:
    """As :func:`normalize_docx` for members already in memory (trusted, e.g. just serialised)."""
    return write_zip(normalized_members(members, fixed_date=fixed_date, locator=locator))


def normalized_members(members: dict[str, bytes], *, fixed_date: str = FIXED_DATE,
                       locator: str = "<docx>") -> dict[str, bytes]:
    """The members :func:`normalize_members` writes, in archive order."""
    return normalize_package(Package(members, locator), fixed_date=fixed_date).written_members()


def normalize_package(pkg: "Package", *, fixed_date: str = FIXED_DATE) -> "Package":
    for name in list(pkg.members):
        if name.startswith(_DATED_PARTS_PREFIX) and name.endswith(".xml"):
            if b"w:date=" not in pkg.members[name]:
                continue
            root = pkg.xml(name)
            for el in root.iter():
                if el.get(_DATE_ATTR) is not None:
                    el.set(_DATE_ATTR, fixed_date)
    core = None
    for rel in pkg.relationships(""):
        if rel.type_tail == "core-properties" and rel.target_part in pkg.members:
            core = rel.target_part
    if core:
        root = pkg.xml(core)
        for tag in ("dcterms:created", "dcterms:modified"):
            el = root.find(qn(tag))
            if el is None:
                el = etree.SubElement(root, qn(tag))
                el.set(qn("xsi:type"), "dcterms:W3CDTF")
            el.text = fixed_date
        for tag, value in (("cp:lastModifiedBy", "benchwright"), ("cp:revision", "1")):
            el = root.find(qn(tag))
            if el is not None:
                el.text = value
    return pkg


__all__ = ["Package", "Relationship", "write_zip", "member_order", "normalize_docx", "normalize_members",
           "normalized_members", "normalize_package", "rels_name", "shared_xml",
           "resolve_target", "serialize", "CT", "RT"]
