"""The bounds of a scan and safe access to zip archives (Office files are zips).

Shared by the scanner (text extraction) and the dependency extractors (OPC relationship parts):
an archive is opened only after its central directory passes :func:`check_archive`, members are
read through :func:`read_member` (bounded), and XML through the project's hardened OOXML parser
(no DTD, no entities, no network).
"""
from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass

from lxml import etree

from benchwright.errors import RecordError
from benchwright.formats.ooxml.safety import UnsafeDocxError, parse_xml

_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08")


class ZipBomb(RecordError):
    """An archive whose central directory promises more than the bounds allow: refused unread."""

    def __init__(self, locator: str, reason: str):
        super().__init__(locator, f"zip bomb: {reason}")


@dataclass(frozen=True)
class Limits:
    """Bounds that keep one hostile file or folder from taking the scan down."""

    max_file_bytes: int = 64 * 1024 * 1024           # a file over this is a problem, never read
    max_path_depth: int = 32                         # folders below the workspace root
    max_files: int = 200_000                         # files listed per workspace; the rest are problems
    max_archive_members: int = 10_000                # zip central-directory entries
    max_archive_expanded_bytes: int = 512 * 1024 * 1024   # declared uncompressed total
    max_archive_ratio: float = 200.0                 # uncompressed / compressed, whole archive or one member
    archive_ratio_min_bytes: int = 1024 * 1024       # the ratio is checked once a member or the total is this big
    max_member_bytes: int = 64 * 1024 * 1024         # one member an extractor decompresses
    max_extracted_chars: int = 2_000_000             # text extraction stops here (counts cover this text)


DEFAULT_LIMITS = Limits()



def is_zip(data: bytes) -> bool:
    return data[:4] in _ZIP_MAGIC


def check_archive(data: bytes, locator: str, limits: Limits = DEFAULT_LIMITS) -> zipfile.ZipFile:
    """Open a zip after checking its central directory: member count, declared expanded size (total
    and per member), compression ratio and overlapping members (a zip bomb that reuses one
    compressed stream for many entries). Nothing is decompressed here, and later reads stay within
    these checks because Python's zipfile never inflates a member past its declared size."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        infos = zf.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError, NotImplementedError) as exc:
        raise RecordError(locator, f"unreadable zip archive: {exc}") from None
    if len(infos) > limits.max_archive_members:
        raise ZipBomb(locator, f"{len(infos)} members, over the {limits.max_archive_members} bound")
    expanded = sum(i.file_size for i in infos)
    compressed = sum(i.compress_size for i in infos)
    if expanded > limits.max_archive_expanded_bytes:
        raise ZipBomb(locator, f"members expand to {expanded} bytes, over the "
                                   f"{limits.max_archive_expanded_bytes}-byte bound")
    for info in infos:
        if info.file_size >= limits.archive_ratio_min_bytes and \
                info.file_size > limits.max_archive_ratio * max(info.compress_size, 1):
            raise ZipBomb(locator, f"member {info.filename!r} expands "
                                       f"{info.file_size / max(info.compress_size, 1):.0f}x")
    if expanded >= limits.archive_ratio_min_bytes and expanded > limits.max_archive_ratio * max(compressed, 1):
        raise ZipBomb(locator, f"the archive expands {expanded / max(compressed, 1):.0f}x")
    offsets = sorted((i.header_offset, i.compress_size) for i in infos)
    for (off, size), (next_off, _) in zip(offsets, offsets[1:]):
        if off + size > next_off:
            raise ZipBomb(locator, "overlapping members (one compressed stream read by several entries)")
    return zf


def read_member(zf: zipfile.ZipFile, name: str, locator: str, limits: Limits = DEFAULT_LIMITS) -> bytes:
    """One member's bytes, bounded (the archive was checked by :func:`check_archive`)."""
    info = zf.getinfo(name)
    if info.file_size > limits.max_member_bytes:
        raise RecordError(f"{locator}:{name}", f"member of {info.file_size} bytes, over the "
                                               f"{limits.max_member_bytes}-byte bound")
    try:
        with zf.open(info) as fh:
            return fh.read(limits.max_member_bytes)
    except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError, EOFError, RuntimeError) as exc:
        raise RecordError(f"{locator}:{name}", f"unreadable member: {exc}") from None
    except Exception as exc:  # zlib.error for a corrupt deflate stream is none of the above
        raise RecordError(f"{locator}:{name}", f"unreadable member: {type(exc).__name__}: {exc}") from None




def member_xml(zf: zipfile.ZipFile, name: str, locator: str, limits: Limits = DEFAULT_LIMITS) -> etree._Element:
    """One XML member parsed with the hardened parser (a DOCTYPE or entity is refused)."""
    data = read_member(zf, name, locator, limits)
    try:
        return parse_xml(data, f"{locator}:{name}")
    except UnsafeDocxError as exc:
        raise RecordError(exc.locator, exc.reason) from None
