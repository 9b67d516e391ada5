"""Deterministic zip writing for .docx packages, with each member's deflate stream remembered by content.

A WordEval build writes the same base document again and again with one part changed (every case's input
and reference .docx): the theme, fonts, settings, images and headers are the same bytes each time, and
deflating them again is most of the cost of writing. :func:`write_zip` writes the archive the way
``zipfile`` writes it with the settings below (fixed member order, timestamp 1980-01-01 00:00:00, deflate
level 6, ``create_system`` 0, permissions ``0o600`` as ``zipfile`` fills in an empty ``external_attr``, no
data descriptor, no extras) and reuses the deflate stream and CRC of a member whose bytes it has deflated
before. An archive outside that plain form (a member name with a NUL, sizes or counts that need ZIP64) is
written by ``zipfile`` itself: :func:`write_zip_with_zipfile`, which is also the reference the tests
compare :func:`write_zip` with byte for byte.
"""
from __future__ import annotations

import io
import struct
import zipfile
import zlib
from typing import Iterable

from benchwright.formats.ooxml.ns import ZIP_DATE_TIME
from benchwright.memo import Memo

_FIRST_MEMBERS = ("[Content_Types].xml", "_rels/.rels", "word/document.xml", "word/_rels/document.xml.rels")
_LEVEL = 6
_VERSION = 20                        # zipfile.DEFAULT_VERSION: what deflate needs to extract
_EXTERNAL_ATTR = 0o600 << 16         # zipfile's default for an entry written with external_attr 0
_UTF8_NAME = 0x800                   # general purpose flag: the name is UTF-8
DEFLATED_MEMO_BYTES = 48 * 1024 * 1024
# the deflate streams of the members written last (content -> (crc32, stream)), at most this many bytes
_DEFLATED: "Memo[tuple[int, bytes]]" = Memo(None, DEFLATED_MEMO_BYTES, lambda data, hit: len(data) + len(hit[1]))


def member_order(names: Iterable[str]) -> list[str]:
    """The fixed member order used by :func:`write_zip`."""
    names = list(names)
    first = [n for n in _FIRST_MEMBERS if n in names]
    rest = sorted(n for n in names if n not in _FIRST_MEMBERS)
    return first + rest


def _dos_date_time() -> tuple[int, int]:
    y, mo, d, h, mi, s = ZIP_DATE_TIME
    return (y - 1980) << 9 | mo << 5 | d, h << 11 | mi << 5 | s // 2


def write_zip_with_zipfile(members: dict[str, bytes]) -> bytes:
    """The archive as ``zipfile`` writes it: fixed member order, timestamp, permissions and compression."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name in member_order(members):
            info = zipfile.ZipInfo(name, date_time=ZIP_DATE_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 0
            info.external_attr = 0
            zf.writestr(info, members[name], compress_type=zipfile.ZIP_DEFLATED, compresslevel=_LEVEL)
    return buf.getvalue()


def deflated(data: bytes) -> tuple[int, bytes]:
    """(crc32, raw deflate stream) of ``data`` as ``zipfile`` makes them, remembered by content."""
    def deflate() -> tuple[int, bytes]:
        compressor = zlib.compressobj(_LEVEL, zlib.DEFLATED, -15)   # zipfile's compressor for ZIP_DEFLATED
        return zlib.crc32(data), compressor.compress(data) + compressor.flush()

    if len(data) > DEFLATED_MEMO_BYTES // 8:   # a member this large is not kept (nor, then, its stream)
        return deflate()
    return _DEFLATED.get(data, deflate)


def write_zip(members: dict[str, bytes]) -> bytes:
    """Deterministic zip: fixed member order, timestamp, permissions and compression (the bytes
    :func:`write_zip_with_zipfile` writes)."""
    names = member_order(members)
    if len(names) >= zipfile.ZIP_FILECOUNT_LIMIT or any("\x00" in n for n in names):
        return write_zip_with_zipfile(members)
    dosdate, dostime = _dos_date_time()
    out: list[bytes] = []
    central: list[bytes] = []
    offset = 0
    for name in names:
        data = members[name]
        if isinstance(data, str):
            data = data.encode("utf-8")      # as zipfile.writestr does
        if len(data) * 1.05 > zipfile.ZIP64_LIMIT:
            return write_zip_with_zipfile(members)
        crc, stream = deflated(bytes(data))
        try:
            encoded, flags = name.encode("ascii"), 0
        except UnicodeEncodeError:
            encoded, flags = name.encode("utf-8"), _UTF8_NAME
        head = struct.pack(zipfile.structFileHeader, zipfile.stringFileHeader, _VERSION, 0, flags,
                           zipfile.ZIP_DEFLATED, dostime, dosdate, crc, len(stream), len(data), len(encoded), 0)
        central.append(struct.pack(zipfile.structCentralDir, zipfile.stringCentralDir, _VERSION, 0, _VERSION, 0,
                                   flags, zipfile.ZIP_DEFLATED, dostime, dosdate, crc, len(stream), len(data),
                                   len(encoded), 0, 0, 0, 0, _EXTERNAL_ATTR, offset) + encoded)
        out += (head, encoded, stream)
        offset += len(head) + len(encoded) + len(stream)
        if offset > zipfile.ZIP64_LIMIT:
            return write_zip_with_zipfile(members)
    directory = b"".join(central)
    if len(directory) > zipfile.ZIP64_LIMIT:
        return write_zip_with_zipfile(members)
    out.append(directory)
    out.append(struct.pack(zipfile.structEndArchive, zipfile.stringEndArchive, 0, 0, len(names), len(names),
                           len(directory), offset, 0))
    return b"".join(out)


__all__ = ["write_zip", "write_zip_with_zipfile", "member_order", "deflated", "DEFLATED_MEMO_BYTES"]
