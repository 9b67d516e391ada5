"""A WildBox segment's image files, read no further than needed: a frame's size from its header (its structure walked
to its end marker, so a cut file is caught without decoding a pixel), a SAM3 mask's extent and pixel count."""
from __future__ import annotations

import re
import struct

import cv2
import fsspec
import numpy as np
import PIL.Image
from fsspec.implementations.local import LocalFileSystem

from benchwright.formats import geometry
from benchwright.wildbox.segments import RawSegment

# A marker ending a JPEG scan's entropy-coded data: 0xFF then a byte that is neither a stuffed zero nor a
# restart marker RST0-7 (those stay inside the scan); a fill 0xFF matches too (the walk skips fill bytes).
# Its leading literal lets the regex engine search for 0xFF at C speed.
_JPEG_MARKER_AFTER_SCAN = re.compile(rb"\xff[^\x00\xd0-\xd7]")
_JPEG_STANDALONE = frozenset([0x01, *range(0xD0, 0xD8)])  # TEM, RST0-7: no length field


def _jpeg_end(data: bytes) -> int | None:
    """Offset just past the end-of-image marker of the JPEG ``data`` starts with, walking its marker
    segments by their lengths and each scan to the marker that ends it (nothing decoded); None when the
    data ends first. Bytes after the marker (padding, a maker's trailer, a second picture) are not its.
    Stray bytes where a marker is due are skipped to the next 0xFF, as libjpeg does."""
    pos, n = 2, len(data)
    while True:
        if pos < n and data[pos] != 0xFF:
            pos = data.find(b"\xff", pos)
            if pos < 0:
                return None
        while pos < n and data[pos] == 0xFF:  # a marker may be preceded by fill bytes
            pos += 1
        if pos >= n:
            return None
        marker, pos = data[pos], pos + 1
        if marker == 0xD9:
            return pos
        if marker in _JPEG_STANDALONE:
            continue
        if pos + 2 > n:
            return None
        pos += int.from_bytes(data[pos:pos + 2], "big")
        if pos > n:
            return None
        if marker == 0xDA:  # start of scan: its entropy-coded data runs to the next marker
            found = _JPEG_MARKER_AFTER_SCAN.search(data, pos)
            if found is None:
                return None
            pos = found.start()


def _png_end(data: bytes) -> int | None:
    """Offset just past the IEND chunk of the PNG ``data`` starts with, walking its chunks by their
    lengths (nothing decoded); None when the data ends first. Bytes after IEND are not the PNG's."""
    pos, n = 8, len(data)
    while pos + 8 <= n:
        length, kind = int.from_bytes(data[pos:pos + 4], "big"), data[pos + 4:pos + 8]
        pos += 12 + length
        if kind == b"IEND":  # its CRC is a constant: a file cut inside it (then padded) has not got it
            return pos if data[pos - 4:pos] == b"\xaeB`\x82" else None
    return None


_IMAGE_ENDS = {"JPEG": _jpeg_end, "PNG": _png_end}


def truncation_problem(f, fmt: str) -> str | None:
    """Why the JPEG or PNG image in the open binary file ``f`` is cut short (a cut file keeps its header,
    so it opens), or None: its structure is walked to its end marker from the start of the file, no pixel
    decoded. Padding or a trailer after the end marker is not a truncation."""
    end_of = _IMAGE_ENDS.get(fmt)
    if end_of is None:
        return None
    f.seek(0)
    if end_of(f.read()) is None:
        return f"truncated {fmt}: the file ends before its end-of-image marker"
    return None


def embeddable(url: str) -> str:
    """The path form ``datasets`` embeds from: plain paths for local files, URLs for remote ones."""
    return url[len("file://"):] if url.startswith("file://") else url


class LocalFiles:
    """The two calls the annotation makes, on local files without fsspec's per-call wrapping (an
    fsspec open of a local file costs 9x a plain open, more than decoding a small mask)."""

    @staticmethod
    def open(url: str, mode: str = "rb"):
        return open(embeddable(url), mode)

    @staticmethod
    def cat_file(url: str) -> bytes:
        with open(embeddable(url), "rb") as f:
            return f.read()


def filesystem(seg: RawSegment):
    """The filesystem of the segment's files, resolved once per segment."""
    urls = [f.image_url for f in seg.frames[:1]] + [u for u in seg.mask_url[:1] if u]
    fs = fsspec.core.url_to_fs(urls[0])[0] if urls else None
    return LocalFiles if fs is None or isinstance(fs, LocalFileSystem) else fs


def image_size(fs, path: str) -> tuple[int, int]:
    """(width, height) from the image's header: the frame's pixels are never needed (the writer embeds its
    bytes as they are). Raises OSError when the file cannot be read, ValueError when it is not an image."""
    with fs.open(path, "rb") as f:  # OSError here: the file cannot be read
        try:
            with PIL.Image.open(f) as image:
                size, fmt = image.size, image.format
        except PIL.Image.DecompressionBombError as err:  # the header claims more pixels than any frame has
            raise ValueError(f"decompression bomb: {err}") from None
        except (OSError, SyntaxError, ValueError):  # what PIL raises for bytes that are no image
            raise ValueError("") from None
        truncated = truncation_problem(f, fmt)  # a cut file keeps its header: its structure is walked
        if truncated:
            raise ValueError(truncated)
        return size


PNG_COLOUR_TYPES = {0: "greyscale", 2: "RGB", 3: "palette", 4: "greyscale with alpha", 6: "RGBA"}


def mask_extent(fs, path: str, max_pixels: int):
    """(inclusive xyxy extent, pixel count) of a SAM3 mask PNG; count 0 for an empty mask, None when the
    bytes are not an image or its header claims more than ``max_pixels`` (its frame's: a decompression bomb).

    A mask is one channel, non-zero on the object: greyscale at any bit depth (read as it is: 16-bit 0/1
    values would be 0 once scaled to 8 bits) or a palette's indices. Any other encoding (RGB, an alpha
    channel) is a ``ValueError``: read as grey it could come out empty (an alpha-only silhouette), and the
    box would silently fall back to another 2D box."""
    data = fs.cat_file(path)
    palette = False
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 26:
        width, height = struct.unpack(">II", data[16:24])  # IHDR
        if width * height > max_pixels:
            return None
        colour = data[25]
        if colour not in (0, 3):
            raise ValueError(f"a {PNG_COLOUR_TYPES.get(colour, f'colour type {colour}')} PNG, not a "
                             "single-channel (greyscale or palette) mask")
        palette = colour == 3
    flags = cv2.IMREAD_GRAYSCALE if palette else cv2.IMREAD_UNCHANGED
    mask = cv2.imdecode(np.frombuffer(data, np.uint8), flags) if data else None
    if mask is not None and mask.ndim != 2:
        raise ValueError(f"an image of {mask.shape[2]} channels, not a single-channel mask")
    return None if mask is None else geometry.mask_extent(mask)
