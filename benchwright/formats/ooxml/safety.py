"""Safe reading of untrusted .docx bytes.

A .docx is a zip of XML parts. Before anything is parsed the archive is checked: member count,
per-member and total uncompressed size (enforced while decompressing, not trusted from the
header), compression ratio, and member names (absolute, ``..``, backslashes, duplicates, also
case-insensitively since OPC part names are case-insensitive). Encrypted members and encrypted
(OLE compound file) documents are rejected. XML is parsed with entities off, no network, no
DTD loading and no huge trees; any DOCTYPE is rejected outright, in every XML member of the
archive (``.xml`` / ``.rels``, custom XML data included), parsed by us or not: a consumer that
parses it later (Word reads ``customXml/`` items) must never meet one.

Macros (``vbaProject``), ``altChunk`` imports, OLE embeddings and ActiveX controls are not
executed by anything here; :func:`scan_flags` reports them so a caller can refuse the file.
"""
from __future__ import annotations

import io
import re
import zipfile
import zlib
from dataclasses import dataclass

from lxml import etree

from benchwright.errors import RecordError


class UnsafeDocxError(RecordError):
    """The file is not an acceptable .docx. ``kind`` is a short machine-readable reason class."""

    def __init__(self, locator: str, kind: str, reason: str):
        super().__init__(locator, f"{kind}: {reason}")
        self.kind = kind


@dataclass(frozen=True)
class Limits:
    max_input_bytes: int = 64 * 1024 * 1024          # the .docx file itself
    max_members: int = 1000
    max_member_bytes: int = 32 * 1024 * 1024         # one uncompressed member
    max_total_bytes: int = 160 * 1024 * 1024         # all uncompressed members
    max_ratio: float = 200.0                         # uncompressed / compressed
    ratio_min_bytes: int = 1024 * 1024               # ratio is checked above this size
    max_xml_bytes: int = 24 * 1024 * 1024            # one XML part handed to the parser


DEFAULT_LIMITS = Limits()

_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_DRIVE = re.compile(r"^[A-Za-z]:")


def check_member_name(name: str, locator: str) -> str:
    if not name or "\x00" in name:
        raise UnsafeDocxError(locator, "bad_member_name", f"empty or NUL in member name {name!r}")
    if name.startswith(("/", "\\")) or _DRIVE.match(name):
        raise UnsafeDocxError(locator, "absolute_path", f"absolute member name {name!r}")
    if "\\" in name:
        raise UnsafeDocxError(locator, "bad_member_name", f"backslash in member name {name!r}")
    parts = name.split("/")
    if any(p in ("..", ".") for p in parts):
        raise UnsafeDocxError(locator, "path_traversal", f"'..' or '.' segment in member name {name!r}")
    if any(p == "" for p in parts[:-1]):
        raise UnsafeDocxError(locator, "bad_member_name", f"empty path segment in {name!r}")
    return name


def read_members(data: bytes, locator: str = "<docx>", limits: Limits = DEFAULT_LIMITS) -> dict[str, bytes]:
    """Return the archive's members (name -> bytes, archive order), enforcing every limit.

    Directory entries are skipped. Raises :class:`UnsafeDocxError` (a ``RecordError``).
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise UnsafeDocxError(locator, "not_bytes", f"expected bytes, got {type(data).__name__}")
    data = bytes(data)
    if len(data) > limits.max_input_bytes:
        raise UnsafeDocxError(locator, "too_large", f"file is {len(data)} bytes > {limits.max_input_bytes}")
    if data[:8] == _OLE_MAGIC:
        raise UnsafeDocxError(locator, "encrypted",
                              "OLE compound file: an encrypted (password-protected) or legacy binary .doc, not a .docx")
    if not zipfile.is_zipfile(io.BytesIO(data)):
        raise UnsafeDocxError(locator, "not_a_zip", "not a zip archive")
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        infos = zf.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError) as exc:
        raise UnsafeDocxError(locator, "not_a_zip", f"unreadable zip: {exc}") from None
    _check_declared([(i.filename, i.file_size, i.compress_size, bool(i.flag_bits & 0x1)) for i in infos],
                    locator, limits)
    members: dict[str, bytes] = {}
    total = 0
    for info in infos:
        if info.is_dir():
            continue
        try:
            with zf.open(info) as fh:
                # Read at most limit + 1 bytes: a lying header cannot make us inflate more.
                buf = fh.read(limits.max_member_bytes + 1)
        except RuntimeError as exc:  # encrypted without the flag, etc.
            raise UnsafeDocxError(locator, "encrypted", f"{info.filename!r}: {exc}") from None
        except (zipfile.BadZipFile, zlib.error, OSError, ValueError, NotImplementedError, EOFError) as exc:
            # zlib.error: a corrupt deflate stream (not a subclass of any of the others)
            raise UnsafeDocxError(locator, "corrupt_member", f"{info.filename!r}: {exc}") from None
        if len(buf) > limits.max_member_bytes:
            raise UnsafeDocxError(locator, "member_too_large",
                                  f"{info.filename!r} inflates beyond {limits.max_member_bytes} bytes")
        if len(buf) >= limits.ratio_min_bytes and info.compress_size > 0 and len(buf) / info.compress_size > limits.max_ratio:
            raise UnsafeDocxError(locator, "zip_bomb", f"{info.filename!r} inflates {len(buf) / info.compress_size:.0f}x")
        total += len(buf)
        if total > limits.max_total_bytes:
            raise UnsafeDocxError(locator, "too_large", f"uncompressed total exceeds {limits.max_total_bytes} bytes")
        if _is_xml_member(info.filename) and has_doctype(buf):
            raise UnsafeDocxError(locator, "doctype",
                                  f"{info.filename!r}: DOCTYPE/ENTITY declarations are not allowed in OOXML parts")
        members[info.filename] = buf
    return members


def _check_declared(entries: list[tuple[str, int, int, bool]], locator: str, limits: Limits) -> None:
    """Refuse an archive by what it declares of its members, (name, uncompressed size, compressed size,
    encrypted) each in archive order: their count, names, encryption, sizes and compression ratios."""
    if len(entries) > limits.max_members:
        raise UnsafeDocxError(locator, "too_many_members", f"{len(entries)} members > {limits.max_members}")
    seen: set[str] = set()
    declared_total = 0
    for name, size, compressed, encrypted in entries:
        check_member_name(name, locator)
        key = name.lower()
        if key in seen:
            raise UnsafeDocxError(locator, "duplicate_member", f"duplicate member {name!r}")
        seen.add(key)
        if encrypted:
            raise UnsafeDocxError(locator, "encrypted", f"encrypted member {name!r}")
        if size >= limits.ratio_min_bytes and compressed > 0:
            ratio = size / compressed
            if ratio > limits.max_ratio:
                raise UnsafeDocxError(locator, "zip_bomb",
                                      f"{name!r} compression ratio {ratio:.0f} > {limits.max_ratio:.0f}")
        if size > limits.max_member_bytes:
            raise UnsafeDocxError(locator, "member_too_large",
                                  f"{name!r} declares {size} bytes > {limits.max_member_bytes}")
        declared_total += size
        if declared_total > limits.max_total_bytes:
            raise UnsafeDocxError(locator, "too_large", f"declared uncompressed total > {limits.max_total_bytes}")


def check_written(data: bytes, members: dict[str, bytes], compressed_size, locator: str = "<docx>",
                  limits: Limits = DEFAULT_LIMITS) -> None:
    """Refuse an archive this process wrote (``data``, from ``members`` in archive order) where
    :func:`read_members` would refuse it, without inflating it again: the file's size, what the archive
    declares (``compressed_size(name)``: the member's deflated size) and DOCTYPE declarations. (Encryption
    and zip damage cannot occur in an archive written here.)"""
    if len(data) > limits.max_input_bytes:
        raise UnsafeDocxError(locator, "too_large", f"file is {len(data)} bytes > {limits.max_input_bytes}")
    # the deflated size only where the ratio is checked (0: not checked, as for a stored member)
    _check_declared([(name, len(buf), compressed_size(name) if len(buf) >= limits.ratio_min_bytes else 0, False)
                     for name, buf in members.items()], locator, limits)
    for name, buf in members.items():
        if _is_xml_member(name) and has_doctype(buf):
            raise UnsafeDocxError(locator, "doctype",
                                  f"{name!r}: DOCTYPE/ENTITY declarations are not allowed in OOXML parts")


def _is_xml_member(name: str) -> bool:
    return name.lower().endswith((".xml", ".rels"))


# --------------------------------------------------------------------------- XML

def _parser() -> etree.XMLParser:
    return etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, dtd_validation=False,
                           huge_tree=False, remove_blank_text=False, collect_ids=False)


_PARSER = _parser()
_DOCTYPE_PATTERNS = (b"<!DOCTYPE", b"<!ENTITY", "<!DOCTYPE".encode("utf-16-le"), "<!DOCTYPE".encode("utf-16-be"),
                     "<!ENTITY".encode("utf-16-le"), "<!ENTITY".encode("utf-16-be"))


def has_doctype(data: bytes) -> bool:
    """A DOCTYPE or ENTITY declaration (UTF-8 or UTF-16) anywhere in the bytes."""
    return any(pat in data for pat in _DOCTYPE_PATTERNS)


def parse_xml(data: bytes, locator: str = "<xml>", limits: Limits = DEFAULT_LIMITS) -> etree._Element:
    """Parse one XML part safely; any DOCTYPE or entity declaration is rejected."""
    if len(data) > limits.max_xml_bytes:
        raise UnsafeDocxError(locator, "member_too_large", f"XML part of {len(data)} bytes > {limits.max_xml_bytes}")
    if has_doctype(data):
        raise UnsafeDocxError(locator, "doctype", "DOCTYPE/ENTITY declarations are not allowed in OOXML parts")
    try:
        root = etree.fromstring(data, parser=_PARSER)
    except etree.XMLSyntaxError as exc:
        raise UnsafeDocxError(locator, "bad_xml", str(exc)) from None
    docinfo = root.getroottree().docinfo
    if docinfo.doctype or docinfo.internalDTD is not None:
        raise UnsafeDocxError(locator, "doctype", "DOCTYPE is not allowed in OOXML parts")
    for _ in root.iter(etree.Entity):
        raise UnsafeDocxError(locator, "doctype", "entity reference in OOXML part")
    return root


# --------------------------------------------------------------------------- flags

_MACRO_CT = ("macroEnabled", "vbaProject", "ms-office.vbaProject", "ms-office.activeX", "oleObject")


def scan_flags(members: dict[str, bytes], locator: str = "<docx>") -> list[str]:
    """Flags for active or external content (nothing is executed; the caller decides)."""
    flags: list[str] = []
    for name in members:
        low = name.lower()
        if low.endswith("vbaproject.bin") or low.endswith("vbadata.xml"):
            flags.append(f"macro: {name}")
        elif low.startswith("word/activex/"):
            flags.append(f"activex: {name}")
        elif low.startswith("word/embeddings/") and low.endswith(".bin"):
            flags.append(f"ole_object: {name}")
    ct = members.get("[Content_Types].xml")
    if ct is not None:
        try:
            root = parse_xml(ct, f"{locator}:[Content_Types].xml")
            for el in root:
                ctype = el.get("ContentType", "")
                if any(m in ctype for m in _MACRO_CT):
                    flags.append(f"macro_content_type: {el.get('PartName') or el.get('Extension')}: {ctype}")
        except UnsafeDocxError as exc:
            flags.append(f"bad_content_types: {exc.reason}")
    for name, data in members.items():
        if not name.endswith(".rels"):
            continue
        try:
            root = parse_xml(data, f"{locator}:{name}")
        except UnsafeDocxError as exc:
            flags.append(f"bad_relationships: {name}: {exc.reason}")
            continue
        for rel in root:
            rtype = rel.get("Type", "")
            tail = rtype.rsplit("/", 1)[-1]
            if tail == "aFChunk":
                flags.append(f"alt_chunk: {name}#{rel.get('Id')}")
            elif tail == "oleObject":
                flags.append(f"ole_object: {name}#{rel.get('Id')}")
            elif tail == "package":
                flags.append(f"embedded_package: {name}#{rel.get('Id')} -> {rel.get('Target')}")
            elif tail in ("vbaProject", "wordVbaData"):
                flags.append(f"macro: {name}#{rel.get('Id')}")
            elif tail == "keyMapCustomizations":
                # key bindings (word/customizations.xml): code runs only through a VBA project,
                # which is flagged on its own; Word writes this part for plain .docx files too
                flags.append(f"key_customizations: {name}#{rel.get('Id')}")
            elif tail in ("control", "activeXControlBinary"):
                flags.append(f"activex: {name}#{rel.get('Id')}")
            elif rel.get("TargetMode") == "External" and tail not in ("hyperlink",):
                flags.append(f"external_relationship: {name}#{rel.get('Id')} {tail} -> {rel.get('Target')}")
    return sorted(set(flags))


# External relationships other than hyperlinks (attached templates, linked images) are only
# reported: nothing here ever follows them.
BLOCKING_FLAG_PREFIXES = ("macro", "activex", "ole_object", "alt_chunk", "bad_")


def blocking_flags(flags: list[str]) -> list[str]:
    return [f for f in flags if f.startswith(BLOCKING_FLAG_PREFIXES)]
