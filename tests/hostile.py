"""The corpus of hostile and broken input, every dataset, one place (issue 13).

Each ``write_<dataset>(root)`` writes ONE source holding all of that dataset's hostile cases at once
(generated here from the tiny synthetic sources and real fixtures: no hand-edited binaries) and
returns its ``Case`` list: the format the case damages, what it is, the quarantine row it must
produce (locator prefix, reason substring, unit) or ``kept`` (the build must publish it unharmed,
and not hang: a symlink loop in a folder it does not need). ``refusals_<dataset>(root)`` writes the
cases whose source cannot be read at all (``SourceError`` naming the file), each its own source.

``NOT_APPLICABLE`` says, per dataset, which items of the issue's list have no input to land in
and why; ``reliability_table()`` renders the README's table from all of it, so the README's
numbers are the corpus's (``tests/test_hostile_inputs.py`` checks they are equal).
"""
from __future__ import annotations

import dataclasses
import functools
import io
import json
import os
import posixpath
import shutil
import struct
import zipfile
import zlib
from pathlib import Path

QUARANTINED, KEPT, REFUSED = "quarantined", "kept", "refused"


@dataclasses.dataclass(frozen=True)
class Case:
    dataset: str
    format: str        # the input format (file kind) the case damages
    name: str
    locator: str       # quarantine: the row's locator starts with this; refused: the error names it
    reason: str        # a substring of the row's reason (or of the error)
    unit: str | None = None
    outcome: str = QUARANTINED


# --------------------------------------------------------------------------- generated bad bytes


@functools.lru_cache(maxsize=2)
def png_bomb(width: int, height: int) -> bytes:
    """A valid 8-bit greyscale PNG of ``width`` x ``height`` zeros, compressed row by row (1/230 of the
    ``width * height`` bytes it decodes to)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    comp, row, parts = zlib.compressobj(1), b"\0" * (width + 1), []
    for _ in range(height):
        parts.append(comp.compress(row))
    parts.append(comp.flush())
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", b"".join(parts)) + chunk(b"IEND", b"")


def jpeg_claiming(width: int, height: int, good: bytes) -> bytes:
    """A real JPEG whose frame header (SOF0) claims ``width`` x ``height``: the pixels a decoder
    would allocate are the header's, not the file's."""
    i = good.index(b"\xff\xc0")
    return good[:i + 5] + struct.pack(">HH", height, width) + good[i + 9:]


DEEP = "[" * 100_000 + "]" * 100_000  # 100,000-deep nesting (JSON, YAML flow style)
TOO_DEEP = "nested deeper than the JSON decoder"  # what the strict reader says of it (strict_json)


def huge_integer(digits: int = 5000) -> str:
    return "9" * digits


def zip_bytes(members: dict[str, bytes], compression=zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as zf:
        for name, data in members.items():
            zf.writestr(zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0)), data, compress_type=compression)
    return buf.getvalue()


def zip_bomb(members: int = 40, member_bytes: int = 8 << 20) -> bytes:
    """``members`` x ``member_bytes`` of zeros (320 MiB by default) in about 320 KiB."""
    zeros = b"\0" * member_bytes
    return zip_bytes({f"part{i:03d}.bin": zeros for i in range(members)})


BILLION_LAUGHS = (b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
                  + b"".join(b'<!ENTITY lol%d "%s">' % (i, (b"&lol%s;" % (b"" if i == 1 else str(i - 1).encode())) * 10)
                             for i in range(1, 10))
                  + b"]><lolz>&lol9;</lolz>")
EXTERNAL_ENTITY = b'<?xml version="1.0"?><!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd">]><d>&x;</d>'
YAML_BOMB = ("a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
    f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n" for i in range(8)))


def damage_json(value, data, leaves, depth: int = 0, max_depth: int = 4):
    """A JSON value with one nested value replaced by a draw from the hypothesis strategy ``leaves``, or
    a key dropped: a random path from the top (never the top itself), stopping at a leaf, at ``max_depth``
    or (1 in 6) anywhere below, so a whole list or object is replaced too."""
    from hypothesis import strategies as st

    descend = depth < max_depth and (depth == 0 or data.draw(st.integers(0, 5)) > 0)
    if isinstance(value, dict) and value and descend:
        key = data.draw(st.sampled_from(sorted(value)))
        out = dict(value)
        if data.draw(st.integers(0, 4)) == 0:
            del out[key]
        else:
            out[key] = damage_json(value[key], data, leaves, depth + 1, max_depth)
        return out
    if isinstance(value, list) and value and descend:
        i = data.draw(st.integers(0, len(value) - 1))
        return value[:i] + [damage_json(value[i], data, leaves, depth + 1, max_depth)] + value[i + 1:]
    return data.draw(leaves)


def undecodable_name(folder: Path, name: bytes, data: bytes | None = b"x\n") -> str:
    """Write ``folder/name`` (bytes that are not UTF-8); returns the name as Python lists it."""
    path = os.path.join(os.fsencode(folder), name)
    if data is None:
        os.mkdir(path)
    else:
        with open(path, "wb") as fh:
            fh.write(data)
    return os.fsdecode(name)


# --------------------------------------------------------------------------- WildBox


def _segments(root: Path) -> list[Path]:
    return sorted(p.parent.parent for p in root.glob("*/*/vggt_results/cameras.json"))


def _edit_json(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))  # json writes NaN / Infinity as bare tokens, as numpy-based writers do


def write_wildbox(root: Path) -> list[Case]:
    """The tiny WildBox source with every case: a copy of one segment per whole-segment case (under
    ``hostile_<n>/seg1``), frame, mask and box cases in the source's own segments."""
    from benchwright.wildbox.synth import write_source

    write_source(root, scale="tiny", seed=0)
    segs = _segments(root)
    rel = lambda p: p.relative_to(root).as_posix()  # noqa: E731
    cases: list[Case] = []

    def add(fmt, name, locator, reason, unit=None, outcome=QUARANTINED):
        cases.append(Case("wildbox", fmt, name, locator, reason, unit, outcome))

    # video folders whose names break naive tools (whitespace splitting, quoting, option parsing, byte counts):
    # published, and the build's own exports and evaluator read them back (test_hostile_inputs). Copies of
    # undamaged segments of five species (copies of one would tip the species mix past the validation's bound).
    for video, seg in zip(HOSTILE_FOLDER_NAMES, segs[2:]):
        shutil.copytree(seg, root / video / "seg1", symlinks=True)
        add("segment folder", f"video folder name {video[:40]!r}{'...' if len(video) > 40 else ''}",
            rel(root / video / "seg1"), "", "segment", KEPT)

    # a segment with a track seen in >= 4 frames and at least one other track (the box cases)
    for seg in segs[4:]:
        summary = json.loads((seg / "vggt_results" / "tracking_summary.json").read_text())
        ids = sorted(summary["tracks"], key=lambda t: (-len(summary["tracks"][t]["frames"]), int(t)))
        if len(ids) >= 2 and len(summary["tracks"][ids[0]]["frames"]) >= 4:
            box_seg = seg
            break
    else:
        raise AssertionError("the tiny source has no segment with a track seen in 4 frames")
    template = segs[0]
    copies = iter(range(100))

    def copy_segment() -> Path:
        dst = root / f"hostile_{next(copies):02d}" / "seg1"
        shutil.copytree(template, dst, symlinks=True)
        return dst

    # cameras.json: one copied segment per case (a bad camera file loses its segment)
    def cameras_case(name, reason, change=None, text=None):
        seg = copy_segment()
        path = seg / "vggt_results" / "cameras.json"
        if text is not None:
            path.write_text(text)
        else:
            _edit_json(path, change)
        add("cameras.json", name, rel(path), reason, "segment")

    def first_camera(change):
        return lambda d: change(d["cameras"][0])

    cameras_case("truncated JSON", "malformed JSON", text='{"cameras": [{"frame_index": 0, ')
    cameras_case("wrong JSON type: cameras is an object", 'expected {"cameras": [...]}',
                 lambda d: d.update(cameras={"0": d["cameras"][0]}))
    cameras_case("wrong JSON type: image_width is a word", "missing or invalid field",
                 first_camera(lambda c: c.update(image_width="wide")))
    cameras_case("NaN in the intrinsic matrix", "NaN or infinite",
                 first_camera(lambda c: c["intrinsic"][0].__setitem__(0, float("nan"))))
    cameras_case("infinite (1e999) extrinsic", "NaN or infinite",
                 first_camera(lambda c: c["extrinsic"][0].__setitem__(3, float("inf"))))
    seg = copy_segment()
    path = seg / "vggt_results" / "cameras.json"
    _edit_json(path, first_camera(lambda c: c.update(frame_index="HUGE")))
    path.write_text(path.read_text().replace('"HUGE"', huge_integer(), 1))
    add("cameras.json", "huge value: a 5000-digit frame_index", rel(path), "malformed JSON", "segment")
    cameras_case("duplicate frame_index", "appears twice",
                 lambda d: d["cameras"][1].update(frame_index=d["cameras"][0]["frame_index"]))
    cameras_case("path traversal in image_name", "leaves the segment folder",
                 first_camera(lambda c: c.update(image_name="../../../../outside.jpg")))
    cameras_case("absolute image_name", "is an absolute path",
                 first_camera(lambda c: c.update(image_name="/etc/hostname")))
    cameras_case("duplicate key in an object", "duplicate key 'cameras'",
                 text='{"cameras": [], "cameras": []}')
    cameras_case("100,000-deep nesting", TOO_DEEP, text=DEEP)
    cameras_case("a NUL byte in image_name", "holds a NUL byte", first_camera(lambda c: c.update(image_name="frame\0.jpg")))
    cameras_case("a 300-character image_name", "has a name of 300 bytes",
                 first_camera(lambda c: c.update(image_name="f" * 296 + ".jpg")))
    cameras_case("huge value: a frame_index of 3,000,000,000 (past the declared int32)",
                 "does not fit the column's int32", first_camera(lambda c: c.update(frame_index=3_000_000_000)))
    cameras_case("two image names of one file stem (frame ids are stems)", "has the file stem of",
                 lambda d: d["cameras"][1].update(image_name=posixpath.splitext(d["cameras"][0]["image_name"])[0] + ".png"))

    # tracking_summary.json: whole-file cases on copied segments, record cases in box_seg
    def tracking_case(name, reason, change=None, text=None, unlink=False):
        seg = copy_segment()
        path = seg / "vggt_results" / "tracking_summary.json"
        if unlink:
            path.unlink()
        elif text is not None:
            path.write_text(text)
        else:
            _edit_json(path, change)
        add("tracking_summary.json", name, rel(path), reason, "segment")

    tracking_case("missing file", "file is missing", unlink=True)
    tracking_case("truncated JSON", "malformed JSON", text='{"tracks": {"1": {"frames": [1, 2')
    tracking_case("wrong JSON type: tracks is a list", 'expected {"tracks": {...}}', lambda d: d.update(tracks=[1, 2]))
    tracking_case("wrong JSON type: centers is a string", "centers is not numeric",
                  lambda d: next(iter(d["tracks"].values())).update(centers="up high"))
    # ids no column can hold (the boxes config declares int32): those observations refused, the segment kept
    def track_id_case(name, tid, frame=None):
        seg = copy_segment()
        path = seg / "vggt_results" / "tracking_summary.json"
        data = json.loads(path.read_text())
        first = next(iter(data["tracks"]))
        if frame is None:
            data["tracks"][tid] = data["tracks"][first]
            locator = f"{rel(path)}#track={tid},"
        else:
            data["tracks"][first]["frames"][0] = frame
            locator = f"{rel(path)}#track={first},frame_index={frame}"
        path.write_text(json.dumps(data))
        add("tracking_summary.json", name, locator, "does not fit the column's int32", "box")

    track_id_case("huge value: a track id past int64", "9" * 30)
    track_id_case("huge value: a track id of 3,000,000,000 (past the declared int32)", "3000000000")
    track_id_case("huge value: a frame index past int64", None, frame=10 ** 30)
    tracking_case("100,000-deep nesting", TOO_DEEP, text=DEEP)
    seg = copy_segment()
    path = seg / "vggt_results" / "tracking_summary.json"
    _edit_json(path, lambda d: d["tracks"][next(iter(d["tracks"]))].update(class_name="x" * 1_000_000))
    add("tracking_summary.json", "a 1 MB class name (the reason quoting it is cut to 1 KB)",
        f"{rel(path)}#track=", "unknown class 'xxxx", "box")
    summary_text = json.dumps(json.loads((template / "vggt_results" / "tracking_summary.json").read_text()))
    first_track = next(iter(json.loads(summary_text)["tracks"]))
    dup = summary_text.replace('"tracks": {', f'"tracks": {{"{first_track}": {{}}, ', 1)
    tracking_case("duplicate track id (a repeated key)", f"duplicate key {first_track!r}", text=dup)

    trk = box_seg / "vggt_results" / "tracking_summary.json"
    summary = json.loads(trk.read_text())
    ids = sorted(summary["tracks"], key=lambda t: (-len(summary["tracks"][t]["frames"]), int(t)))
    fr = summary["tracks"][ids[0]]["frames"]

    def damage(data):
        t = data["tracks"][ids[0]]
        t["centers"][0][2] = float("nan")
        t["rotation_matrices"][1][0][0] *= 1.5
        t["dimensions"][2][1] = 0.0
        t["frames"][3] = 9999
        t["dimensions"][4 % len(fr)][0] = 1e308 * 10 if len(fr) > 4 else t["dimensions"][4 % len(fr)][0]
        data["tracks"][ids[1]]["class_name"] = "unicorn"

    _edit_json(trk, damage)
    loc = f"{rel(trk)}#track={ids[0]}"
    add("tracking_summary.json", "NaN centre", f"{loc},frame_index={fr[0]}", "NaN or infinite", "box")
    add("tracking_summary.json", "rotation not orthonormal", f"{loc},frame_index={fr[1]}", "not orthonormal", "box")
    add("tracking_summary.json", "zero dimension", f"{loc},frame_index={fr[2]}", "not all positive", "box")
    add("tracking_summary.json", "frame index outside the segment", f"{loc},frame_index=9999",
        "is not a frame of the segment", "box")
    if len(fr) > 4:
        add("tracking_summary.json", "infinite (1e999) dimension", f"{loc},frame_index={fr[4]}", "NaN or infinite", "box")
    add("tracking_summary.json", "unknown class", f"{rel(trk)}#track={ids[1]},", "unknown class 'unicorn'", "box")

    # frame JPEGs (segments 1-3 of the source: a frame case loses the frame and its boxes)
    frames = sorted(segs[3].glob("frame_*.jpg"))
    frames[0].write_bytes(b"\xff\xd8\xff\xe0 this is not a JPEG")
    add("frame JPEG", "corrupt bytes", rel(frames[0]), "not a decodable image", "frame")
    frames[1].unlink()
    add("frame JPEG", "missing", rel(frames[1]), "cannot read", "frame")
    frames[2].unlink()
    frames[2].mkdir()  # unreadable as a file (root reads any mode, so permissions cannot show this)
    add("frame JPEG", "unreadable (a folder)", rel(frames[2]), "cannot read", "frame")
    frames = sorted(segs[1].glob("frame_*.jpg"))
    frames[0].write_bytes(frames[0].read_bytes()[: len(frames[0].read_bytes()) // 2])
    add("frame JPEG", "truncated", rel(frames[0]), "truncated", "frame")
    frames[1].write_bytes(b"")
    add("frame JPEG", "empty file", rel(frames[1]), "not a decodable image", "frame")
    frames[2].write_bytes(jpeg_claiming(60000, 60000, frames[2].read_bytes()))
    add("frame JPEG", "decompression bomb (header claims 60000 x 60000)", rel(frames[2]), "decompression bomb", "frame")
    outside = root.parent / "outside.jpg"  # a real JPEG no frame of the source has
    from PIL import Image

    Image.new("RGB", (64, 48), (200, 30, 90)).save(outside, format="JPEG")
    frames[3].unlink()
    frames[3].symlink_to(outside)
    add("frame JPEG", "symlink out of the source", rel(frames[3]), "outside the source", "frame")
    # kept: bytes after the end-of-image marker are not a truncation (cameras pad; multi-picture files append)
    frames[4].write_bytes(frames[4].read_bytes() + b"\0" * 4096)
    add("frame JPEG", "4 KiB of zero padding after its end marker", rel(frames[4]), "", "frame", KEPT)
    trailer = sorted(segs[3].glob("frame_*.jpg"))[3]
    trailer.write_bytes(trailer.read_bytes() + outside.read_bytes() * 4)
    add("frame JPEG", "a trailer after its end marker (JPEGs appended, as multi-picture files carry)",
        rel(trailer), "", "frame", KEPT)

    # SAM3 mask PNGs (segment 2)
    masks = sorted((segs[2] / "sam3_masks" / "masks").glob("obj_*/*.png"))
    mask_box = f"{rel(segs[2])}/vggt_results/tracking_summary.json#track="
    masks[0].write_bytes(b"\x89PNG\r\n\x1a\n not really a PNG")
    add("SAM3 mask PNG", "corrupt bytes", mask_box, f"{masks[0].parent.name}', '{masks[0].name}'] unreadable", "box")
    masks[1].write_bytes(masks[1].read_bytes()[:40])
    add("SAM3 mask PNG", "truncated", mask_box, f"{masks[1].parent.name}', '{masks[1].name}'] unreadable", "box")
    masks[2].write_bytes(png_bomb(20000, 20000))
    add("SAM3 mask PNG", "decompression bomb (20000 x 20000 zeros)", mask_box,
        f"{masks[2].parent.name}', '{masks[2].name}'] unreadable", "box")
    outside_mask = root.parent / "outside_mask.png"  # a real mask (this one's), outside the source
    outside_mask.write_bytes(masks[3].read_bytes())
    masks[3].unlink()
    masks[3].symlink_to(outside_mask)
    add("SAM3 mask PNG", "symlink out of the source", mask_box,
        f"{masks[3].parent.name}', '{masks[3].name}'] unreadable: a symlink to a file outside the source", "box")

    # masks in another encoding than a single channel: refused, never read as empty (the box would silently
    # fall back to another 2D box); a 16-bit greyscale mask of 0 and 1 is read as it is, kept
    import numpy as np
    from PIL import Image

    silhouette = np.asarray(Image.open(masks[4]).convert("L"))
    zero = Image.fromarray(np.zeros_like(silhouette))
    Image.merge("RGBA", (zero, zero, zero, Image.fromarray(silhouette))).save(masks[4])
    add("SAM3 mask PNG", "RGBA (the silhouette in the alpha channel, the colour all black)", mask_box,
        f"{masks[4].parent.name}', '{masks[4].name}'] unreadable: a RGBA PNG, not a single-channel", "box")
    Image.fromarray((np.asarray(Image.open(masks[5]).convert("L")) > 0).astype(np.uint16)).save(masks[5])
    cams = {posixpath.splitext(posixpath.basename(c["image_name"]))[0]: c["frame_index"]
            for c in json.loads((segs[2] / "vggt_results" / "cameras.json").read_text())["cameras"]}
    add("SAM3 mask PNG", "16-bit greyscale of 0 and 1 (0 once scaled to 8 bits)",
        f"{mask_box}{masks[5].parent.name.removeprefix('obj_')},frame_index={cams[masks[5].stem]}", "", "box", KEPT)

    # the point cloud: one that cannot be read is no cloud (support_points -1, quarantined naming it), never 0 points
    for name, damage in (("truncated (half its bytes)", lambda data: data[: len(data) // 2]),
                         ("not a PLY file", lambda data: b"solid mesh\nendsolid\n")):
        seg = copy_segment()
        ply = seg / "vggt_results" / "point_cloud.ply"
        ply.write_bytes(damage(ply.read_bytes()))
        add("point cloud PLY", name, rel(ply), "point cloud unreadable", "point_cloud")
    seg = copy_segment()  # a cloud symlinked out of the source: its bytes are not the source's, not read
    ply = seg / "vggt_results" / "point_cloud.ply"
    shutil.move(ply, root.parent / "outside_point_cloud.ply")
    ply.symlink_to(root.parent / "outside_point_cloud.ply")
    add("point cloud PLY", "symlinked out of the source", rel(ply),
        "is reached through a symlink to a place outside the source", "point_cloud")

    # a track's whole mask folder linked out of the source: its boxes quarantined naming each mask, none read
    seg = copy_segment()
    linked = sorted(p for p in (seg / "sam3_masks" / "masks").glob("obj_*") if p.is_dir())[0]
    shutil.copytree(linked, root.parent / "outside_masks")
    shutil.rmtree(linked)
    linked.symlink_to(root.parent / "outside_masks", target_is_directory=True)
    add("SAM3 mask PNG", "mask folder symlinked out of the source", f"{rel(seg)}/vggt_results/tracking_summary.json#track=",
        f"{linked.name}', ", "box")
    # the segment's whole sam3_masks/ linked out of the source: every mask under it refused unread
    seg = copy_segment()
    shutil.move(seg / "sam3_masks", root.parent / "outside_sam3_masks")
    (seg / "sam3_masks").symlink_to(root.parent / "outside_sam3_masks", target_is_directory=True)
    add("SAM3 mask PNG", "the segment's sam3_masks folder symlinked out of the source",
        f"{rel(seg)}/vggt_results/tracking_summary.json#track=", "a symlink to a file outside the source", "box")
    # ... and one linked to a folder inside the source: followed, its boxes kept with their masks
    seg = copy_segment()
    linked = sorted(p for p in (seg / "sam3_masks" / "masks").glob("obj_*") if p.is_dir())[0]
    store = root / "hostile_masks_store" / linked.name
    shutil.copytree(linked, store)
    shutil.rmtree(linked)
    linked.symlink_to(store, target_is_directory=True)
    add("segment folder", "mask folder symlinked to a folder inside the source", rel(seg), "", "segment", KEPT)
    # a frame whose image_name goes through a folder linked out of the source
    seg = copy_segment()
    cams = json.loads((seg / "vggt_results" / "cameras.json").read_text())
    name = cams["cameras"][0]["image_name"]
    (root.parent / "outside_frames").mkdir()
    shutil.move(seg / name, root.parent / "outside_frames" / posixpath.basename(name))
    (seg / "linked_frames").symlink_to(root.parent / "outside_frames", target_is_directory=True)
    cams["cameras"][0]["image_name"] = f"linked_frames/{posixpath.basename(name)}"
    (seg / "vggt_results" / "cameras.json").write_text(json.dumps(cams))
    add("frame JPEG", "reached through a folder symlinked out of the source",
        rel(seg / "linked_frames" / posixpath.basename(name)), "outside the source", "frame")

    # segment folders
    seg = copy_segment()
    (seg / "sam3_masks" / "masks" / "loop").symlink_to("..")
    add("segment folder", "symlink loop in the masks folder", rel(seg), "", "segment", KEPT)
    bad_video = undecodable_name(root, b"DJI_bad\xffname", None)
    (root / bad_video / "seg1").mkdir()
    shutil.copytree(template / "vggt_results", root / bad_video / "seg1" / "vggt_results")
    add("segment folder", "undecodable folder name", "DJI_bad\\xffname/seg1", "not valid UTF-8", "segment")

    # names that become paths (issue 25): JSON files linked out of the source, image names that are no file's
    for name in ("cameras.json", "tracking_summary.json"):
        seg = copy_segment()
        outside_json = root.parent / f"outside_{name}"
        shutil.move(seg / "vggt_results" / name, outside_json)
        (seg / "vggt_results" / name).symlink_to(outside_json)
        add(name, "symlink out of the source", rel(seg / "vggt_results" / name),
            "is reached through a symlink to a place outside the source", "segment")
    for image_name, reason in (("", "image_name '' is empty"), (".", "names the segment folder itself"),
                               ("frames/../../seg1/frame.jpg", "leaves the segment folder")):
        seg = copy_segment()
        _edit_json(seg / "vggt_results" / "cameras.json", first_camera(lambda c: c.update(image_name=image_name)))
        add("cameras.json", f"image_name {image_name!r}", rel(seg / "vggt_results" / "cameras.json"), reason, "segment")
    return cases


# Folder names a file system takes that tools trip on: a space (a whitespace-separated list splits it), a tab and
# a newline (a line-based one), quotes, a leading dash (read as an option), dots, a percent sign (a URL decoder),
# non-ASCII, the longest name a file system holds (255 bytes of UTF-8), and whitespace only.
HOSTILE_FOLDER_NAMES = ("DJI 0001 with spaces", "tab\tand\nnewline", "-leading 'single' \"double\" quotes",
                        "ünïcødé 名前 %20 ..dots..", "long_" + "é" * 125, " \t\r ", "line\u2028separators\x85")


def write_wildbox_kitti(root: Path, fixtures: Path) -> list[Case]:
    """WildBox sources in KITTI's layouts (real KITTI files, ``tests/fixtures/kitti``): an object folder
    (``label_2``, ``calib``, ``image_2``) and a tracking folder (``label_02``, ``calib``, ``image_02``) under
    ``root/object`` and ``root/tracking``, each holding its cases: files that open with a byte order mark
    or hold a byte that is not UTF-8 (refused naming the file and line, not read as a class '\\ufeffCar' or
    a calibration "missing P0"), files linked out of the source, a calibration key misspelt, and names with
    spaces (kept)."""
    real = fixtures / "kitti" / "training"
    obj, trk = root / "object", root / "tracking"
    for sub in ("label_2", "calib", "image_2"):
        (obj / sub).mkdir(parents=True)
    outside = root / "outside"
    outside.mkdir()
    image = (real / "image_2" / "000000.png").read_bytes()
    cases: list[Case] = []

    def add(name, locator, reason, unit, outcome=QUARANTINED, fmt="KITTI label / calibration"):
        cases.append(Case("wildbox", fmt, name, locator, reason, unit, outcome))

    def frame(stem, label=None, calib=None):
        source = f"{int(stem):06d}" if stem.isdigit() and int(stem) < 6 else "000000"
        (obj / "label_2" / f"{stem}.txt").write_bytes(label if label is not None else
                                                     (real / "label_2" / f"{source}.txt").read_bytes())
        (obj / "calib" / f"{stem}.txt").write_bytes(calib if calib is not None else
                                                   (real / "calib" / f"{source}.txt").read_bytes())
        (obj / "image_2" / f"{stem}.png").write_bytes(image)

    def link_out(path: Path):
        target = outside / f"{path.parent.name}_{path.name}"
        shutil.move(path, target)
        path.symlink_to(target)

    label, calib = (real / "label_2" / "000000.txt").read_bytes(), (real / "calib" / "000000.txt").read_bytes()
    frame("000000")
    frame("000001", label=b"\xef\xbb\xbf" + label)
    add("a label file opening with a UTF-8 byte order mark", "label_2/000001.txt:1", "byte order mark", "segment")
    frame("000002", calib=b"\xef\xbb\xbf" + calib)
    add("a calibration file opening with a UTF-8 byte order mark", "calib/000002.txt:1", "byte order mark", "segment")
    frame("000003", label=label + label.replace(b"Pedestrian", b"Pi\xe9ton", 1))
    add("a Latin-1 byte in a label file", "label_2/000003.txt:2", "not UTF-8: byte 0xe9 at column 3", "segment")
    frame("000004")
    link_out(obj / "label_2" / "000004.txt")
    add("a label file symlinked out of the source", "label_2/000004.txt",
        "is reached through a symlink to a place outside the source", "segment")
    frame("000005")
    link_out(obj / "calib" / "000005.txt")
    add("a calibration file symlinked out of the source", "calib/000005.txt",
        "is reached through a symlink to a place outside the source", "segment")
    frame("000006")
    link_out(obj / "image_2" / "000006.png")
    add("an image symlinked out of the source", "image_2/000006.png", "outside the source", "frame")
    frame("000007", calib=calib.replace(b"P2:", b"p2:"))
    add("a calibration key misspelt (p2:)", "calib/000007.txt",
        "missing P2 (no line starts with 'P2:'; lines not read: 'p2' at line 3)", "segment")
    frame("frame 08 \u00e9")
    add("a frame file name with a space and non-ASCII", "kitti/frame 08 \u00e9", "", "segment", KEPT)

    # the tracking layout: a sequence whose image folder holds a file not named by a frame number
    (trk / "label_02").mkdir(parents=True)
    (trk / "calib").mkdir()
    rows = b"".join(b"0 %d " % n + line + b"\n" for n, line in enumerate(label.splitlines()))
    for seq, text in (("0000", rows), ("0001", b"\xef\xbb\xbf" + rows)):
        (trk / "label_02" / f"{seq}.txt").write_bytes(text)
        (trk / "calib" / f"{seq}.txt").write_bytes(calib)
        (trk / "image_02" / seq).mkdir(parents=True)
        (trk / "image_02" / seq / "000000.png").write_bytes(image)
    (trk / "image_02" / "0000" / "cover.png").write_bytes(image)
    add("an image of a sequence not named by a frame number", "image_02/0000/cover.png", "is not a frame number",
        "frame", fmt="KITTI tracking sequence")
    add("a tracking label file opening with a byte order mark", "label_02/0001.txt:1", "byte order mark", "segment",
        fmt="KITTI tracking sequence")
    return cases


def _omni3d_annotation(ann_id: int, image_id: int, K: list, size: tuple) -> dict:
    """A valid WildBox Omni3D annotation: an elephant-sized box 8 units ahead, its 2D boxes its projection."""
    import numpy as np

    from benchwright import geometry

    center, dims, R = np.array([0.5, 1.0, 8.0]), np.array([1.5, 1.6, 3.0]), np.eye(3)
    corners = geometry.corners(center, dims, R[None])
    _, box, _ = geometry.projected_boxes(corners, K, *size)
    x1, y1, x2, y2 = box[0].tolist()
    return {"id": ann_id, "image_id": image_id, "dataset_id": 1, "category_id": 1002, "category_name": "elephant",
            "valid3D": True, "behind_camera": False, "bbox": [x1, y1, x2 - x1, y2 - y1], "bbox2D_tight": [x1, y1, x2, y2],
            "bbox2D_trunc": [x1, y1, x2, y2], "bbox2D_proj": [x1, y1, x2, y2], "bbox3D_cam": corners[0].tolist(),
            "center_cam": center.tolist(), "dimensions": dims.tolist(), "R_cam": R.tolist(), "truncation": 0.0,
            "visibility": 1.0, "segmentation_pts": -1, "lidar_pts": -1, "depth_error": -1, "area": (x2 - x1) * (y2 - y1),
            "iscrowd": 0, "track_id": ann_id, "bbox_source": "label", "support_points": -1,
            "projected_truncation": 0.0, "occlusion_visibility": 1.0}


def write_wildbox_omni3d_paths(root: Path, fixtures: Path) -> list[Case]:
    """A WildBox source in Omni3D JSON whose ``file_path`` values try every way out of the source: ``../``,
    an absolute path to a real file outside it (only the tails of an absolute path that are files of the
    source are read, as released files carry the authors' paths), a symlinked image and folder, a document
    symlinked in from outside; and a name with spaces and non-ASCII (kept)."""
    image = (fixtures / "kitti" / "training" / "image_2" / "000000.png").read_bytes()
    size, K = (1242, 375), [[707.05, 0.0, 604.08], [0.0, 707.05, 180.51], [0.0, 0.0, 1.0]]
    (root / "images").mkdir(parents=True)
    outside = root.parent / "omni3d_outside"
    (outside / "folder").mkdir(parents=True)
    for path in (outside / "outside.png", outside / "folder" / "b.png", outside / "c.png"):
        path.write_bytes(image)
    (root / "images" / "a.png").write_bytes(image)
    (root / "images" / "my frame 01 \u00e9.png").write_bytes(image)
    (root / "images" / "c.png").symlink_to(outside / "c.png")
    (root / "linked").symlink_to(outside / "folder", target_is_directory=True)
    paths = {1: "images/a.png", 2: "../../omni3d_outside/outside.png", 3: str(outside / "outside.png"),
             4: "linked/b.png", 5: "images/c.png", 6: "images/my frame 01 \u00e9.png", 7: "images/../../../x.png"}
    doc = {"info": {"id": 1, "source": "wildbox", "name": "hostile paths", "split": "train", "version": "1.0",
                    "known_category_ids": [1002], "scene_scales": {}},
           "images": [{"id": i, "dataset_id": 1, "file_path": p, "height": size[1], "width": size[0], "K": K}
                      for i, p in paths.items()],
           "categories": [{"id": 1002, "name": "elephant", "supercategory": "animal"}],
           "annotations": [_omni3d_annotation(10 + i, i, K, size) for i in paths]}
    (root / "annotations").mkdir()
    (root / "annotations" / "train.json").write_text(json.dumps(doc))
    (outside / "doc.json").write_text(json.dumps(dict(doc, images=doc["images"][:1], annotations=doc["annotations"][:1])))
    (root / "annotations" / "linked.json").symlink_to(outside / "doc.json")
    fmt, at = "Omni3D JSON", "annotations/train.json#image_id="
    return [Case("wildbox", fmt, "file_path '../' out of the source", f"{at}2", "leaves the source", "frame"),
            Case("wildbox", fmt, "file_path '../' in the middle climbing out", f"{at}7", "leaves the source", "frame"),
            Case("wildbox", fmt, "absolute file_path of a real file outside the source (never read as it is)",
                 str(outside / "outside.png").lstrip("/"), "cannot read", "frame"),
            Case("wildbox", fmt, "file_path through a folder symlinked out of the source", "linked/b.png",
                 "outside the source", "frame"),
            Case("wildbox", fmt, "file_path of an image symlinked out of the source", "images/c.png",
                 "outside the source", "frame"),
            Case("wildbox", fmt, "a document symlinked in from outside the source", "annotations/linked.json",
                 "is reached through a symlink to a place outside the source", None),
            Case("wildbox", fmt, "file_path with spaces and non-ASCII", "images/my frame 01 \u00e9.png", "", "frame",
                 KEPT)]


def write_omni3d(root: Path, built: Path) -> list[Case]:
    """A WildBox source in Omni3D JSON: documents cut from a build's own Omni3D export (``exports/omni3d``,
    its frames under ``exports/images``), three of its segments' images spread over documents as real
    releases spread them (Omni3D's KITTI_train.json and KITTI_val.json split one folder's images), and
    damaged documents and records beside them."""
    doc = json.loads((built / "exports" / "omni3d" / "WildBox_train.json").read_text())
    shutil.copytree(built / "exports" / "images", root / "exports" / "images")
    folders: dict[str, list] = {}
    for image in sorted(doc["images"], key=lambda i: i["file_path"]):
        folders.setdefault(posixpath.dirname(image["file_path"]), []).append(image)
    split, twice, damaged = [f for f, images in sorted(folders.items()) if len(images) >= 4][:3]
    cases: list[Case] = []
    fmt = "Omni3D JSON"

    def write(name: str, images: list, annotations=None, text: str | None = None) -> str:
        rel = f"exports/omni3d/{name}"
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        ids = {i["id"] for i in images}
        anns = annotations if annotations is not None else [a for a in doc["annotations"] if a["image_id"] in ids]
        (root / rel).write_text(text if text is not None else json.dumps(
            {"info": doc["info"], "images": images, "categories": doc["categories"], "annotations": anns}))
        return rel

    def add(name, locator, reason, unit, outcome=QUARANTINED):
        cases.append(Case("wildbox", fmt, name, locator, reason, unit, outcome))

    half = len(folders[split]) // 2
    write("split_a.json", folders[split][:half])
    write("split_b.json", folders[split][half:])
    add("two documents splitting one folder's images (as Omni3D's KITTI_train / KITTI_val)", split, "", "segment",
        KEPT)
    write("twice.json", folders[twice])
    again = write("twice_again.json", folders[twice])
    add("the same images listed by two documents", f"{again}#file_path=", "listed again (first by", "frame")

    images = [json.loads(json.dumps(i)) for i in folders[damaged]]
    anns = [json.loads(json.dumps(a)) for a in doc["annotations"] if a["image_id"] in {i["id"] for i in images}]
    by_image = {i["id"]: [a for a in anns if a["image_id"] == i["id"]] for i in images}
    with_boxes = [i for i in images if by_image[i["id"]]]
    rel = "exports/omni3d/damaged.json"
    with_boxes[0]["file_path"] = with_boxes[0]["file_path"].replace(".jpg", "\0.jpg")
    add("a NUL byte in file_path", f"{rel}#image_id={with_boxes[0]['id']}", "holds a NUL byte", "frame")
    with_boxes[1]["file_path"] = posixpath.join(posixpath.dirname(with_boxes[1]["file_path"]), "f" * 296 + ".jpg")
    add("a 300-character file name in file_path", f"{rel}#image_id={with_boxes[1]['id']}", "has a name of 300 bytes",
        "frame")
    by_image[with_boxes[2]["id"]][0]["track_id"] = 3_000_000_000
    add("huge value: a track_id of 3,000,000,000 (past the declared int32)",
        f"{rel}#annotation_id={by_image[with_boxes[2]['id']][0]['id']}", "does not fit the column's int32", "box")
    by_image[with_boxes[3]["id"]][0]["track_id"] = 10 ** 19
    add("huge value: a track_id of 10^19 (past int64)", f"{rel}#annotation_id={by_image[with_boxes[3]['id']][0]['id']}",
        "does not fit the column's int32", "box")
    stem_twin = dict(images[-1], id=max(i["id"] for i in doc["images"]) + 1,
                     file_path=images[-1]["file_path"].replace(".jpg", ".png"))
    images.append(stem_twin)
    add("two images of one file stem (a frame's id is its stem)", f"{rel}#file_path={stem_twin['file_path']}",
        "of the stem of", "frame")
    write("damaged.json", images, anns)
    add("duplicate key in a document", write("repeated_key.json", [], text='{"images": [], "images": [], '
                                                                          '"annotations": []}'),
        "duplicate key 'images'", "omni3d_document")
    undecodable_name(root / "exports" / "omni3d", b"not_utf8_\xff.json", (root / again).read_bytes())
    add("a document whose file name is not UTF-8", "exports/omni3d/not_utf8_\\xff.json", "not valid UTF-8",
        "omni3d_document")
    add("100,000-deep nesting", write("deep.json", [], text='{"images": [' + "[" * 100_000 + "]" * 100_000
                                                             + '], "annotations": []}'),
        TOO_DEEP, "omni3d_document")
    return cases


# --------------------------------------------------------------------------- VLM unlearning


def _vlm_image(path: str) -> bytes:
    from PIL import Image

    from benchwright.hashing import stable_hash64

    h = stable_hash64(path)
    out = io.BytesIO()
    Image.new("RGB", (24 + h % 40, 24 + (h >> 8) % 40), (h % 256, (h >> 8) % 256, (h >> 16) % 256)).save(
        out, format="PNG" if path.endswith(".png") else "JPEG")
    return out.getvalue()


def write_vlm_unlearning(root: Path, fixtures: Path) -> list[Case]:
    """Real VLGuard records (the first 30 of train.json, 10 of test.json) with generated images, then
    one case per record: damaged JSON values, paths out of the image root, broken images."""
    train = json.loads((fixtures / "vlguard" / "train.json").read_text())[:30]
    test = json.loads((fixtures / "vlguard" / "test.json").read_text())[:10]
    ids = iter(range(1000))
    cases: list[Case] = []

    def add(fmt, name, record, reason, unit="record", outcome=QUARANTINED, locator=None):
        cases.append(Case("vlm_unlearning", fmt, name, locator or f"train.json#id={record['id']}", reason, unit,
                          outcome))

    def record(change=None) -> dict:
        r = json.loads(json.dumps(train[next(ids) % len(train)]))
        r["id"] = f"hostile_{len(cases):02d}"
        r["image"] = f"hostile/{r['id']}.png"
        if change:
            change(r)
        return r

    extra = []

    def json_case(name, reason, change, unit="record", locator=None):
        r = record(change)
        extra.append(r)
        add("VLGuard JSON", name, r, reason, unit, locator=locator)

    json_case("wrong JSON type: a record is a list", "a record is an object", None,
              locator="train.json#index=")
    extra[-1] = [extra[-1]]
    json_case("wrong JSON type: safe is a string", "true or false is required", lambda r: r.update(safe="yes"))
    json_case("wrong JSON type: instr-resp is a string", "no instruction-response pairs",
              lambda r: r.update({"instr-resp": "say hi"}))
    json_case("missing id", "field 'id' is missing", lambda r: r.pop("id"), locator="train.json#index=")
    json_case("NaN response", "empty response",
              lambda r: r["instr-resp"][0].update(response=float("nan")), unit="example")
    json_case("infinite (1e999) id", "a non-empty string is required", lambda r: r.update(id=float("inf")),
              locator="train.json#index=")
    json_case("unknown harmful category", "unknown harmful_category",
              lambda r: r.update(safe=False, harmful_category="unicorns", harmful_subcategory="x"))
    json_case("path traversal in image", "leaves the image root", lambda r: r.update(image="../../outside.png"))
    json_case("absolute image path", "is an absolute path", lambda r: r.update(image="/etc/hostname"))
    token = record(lambda r: [p.update({k: f"<image> {v}" for k, v in p.items()}) for p in r["instr-resp"]])
    extra.append(token)  # kept: LLaVA's image token written literally is escaped where a model reads it
    add("VLGuard JSON", "LLaVA's image token in an instruction and a response", token, "", outcome=KEPT)
    dup = record()
    dup["id"] = train[0]["id"]
    extra.append(dup)
    add("VLGuard JSON", "duplicate id", dup, "duplicate id", locator=f"train.json#id={dup['id']}[index=")
    json_case("a lone surrogate (\\ud800) escaped in an instruction (repaired to U+FFFD, counted)", "",
              lambda r: r["instr-resp"][0].update({k: f"{v} \ud800" for k, v in r["instr-resp"][0].items()
                                                   if k != "response"}))
    cases[-1] = dataclasses.replace(cases[-1], outcome=KEPT)
    json_case("a NUL byte in image", "holds a NUL byte", lambda r: r.update(image=f"hostile/{r['id']}\0.png"))
    json_case("a 300-character image file name", "has a name of 300 bytes",
              lambda r: r.update(image="hostile/" + "i" * 296 + ".png"))
    json_case("a record nested 150 levels deep (past what Beam's coder walks)", "nested more than 100 levels deep",
              lambda r: r.update(extra=functools.reduce(lambda inner, _: [inner], range(150), 0)),
              locator="train.json#index=")
    leaked = record()
    extra.append(leaked)
    test = test + [json.loads(json.dumps(leaked))]  # the same id and image in the test file: the test copy is kept
    add("VLGuard JSON", "the same id and image in train.json and test.json (a leak)", leaked,
        "is a leak; the test copy is kept")

    # images: records whose image file is broken
    broken = {}

    def image_case(name, reason, data):
        r = record()
        extra.append(r)
        broken[r["image"]] = data
        add("image", name, r, reason)

    good = _vlm_image("good.png")
    image_case("missing", "is missing", None)
    image_case("corrupt bytes", "not decodable", b"\x89PNG\r\n\x1a\n not really a png")
    image_case("truncated PNG", "not decodable", good[: len(good) // 2])
    image_case("empty file", "not decodable", b"")
    image_case("decompression bomb (20000 x 20000 zeros)", "decompression bomb", png_bomb(20000, 20000))
    image_case("unreadable (a folder)", "cannot be read", "folder")
    # symlinks: the image root's real path bounds the real path of every image read through it
    outside = root.parent / "outside.png"
    image_case("symlink out of the image root", "a symlink to a place outside the image root", ("link", outside))
    r = record(lambda r: r.update(image=f"linked/{r['id']}.png"))  # a folder above the file is the link
    extra.append(r)
    broken[r["image"]] = ("link", None)
    add("image", "a folder symlinked out of the image root", r, "a symlink to a place outside the image root")
    image_case("symlink loop (the file links to itself)", "Too many levels of symbolic links", ("link", "itself"))
    inside = record()  # kept: a link that stays inside the image root is an ordinary file of the source
    extra.append(inside)
    broken[inside["image"]] = ("link", f"../{train[0]['image']}")
    add("image", "symlink inside the image root", inside, "", outcome=KEPT)
    # ids no file is named after (images are exported by their sha256): kept whatever they hold, and read back
    # through the LLaVA export and the evaluator (test_hostile_inputs)
    for n, hostile_id in enumerate(HOSTILE_IDS):
        r = record()
        r.update(id=hostile_id, image=f"hostile/named_{n}.png")
        extra.append(r)
        add("VLGuard JSON", f"id {hostile_id[:40]!r}{'...' if len(hostile_id) > 40 else ''}", r, "", outcome=KEPT)

    for stem, records in (("train", train + extra), ("test", test)):
        (root / stem).mkdir(parents=True, exist_ok=True)
        (root / f"{stem}.json").write_text(json.dumps(records, indent=1))
        for r in records:
            if not isinstance(r, dict) or not isinstance(r.get("image"), str) or r["image"].startswith(("/", "..")) \
                    or "\0" in r["image"] or len(r["image"]) > 255:
                continue
            path = root / stem / r["image"]
            path.parent.mkdir(parents=True, exist_ok=True)
            data = broken.get(r["image"], _vlm_image(r["image"]))
            if data == "folder":
                path.mkdir()
            elif isinstance(data, tuple) and data[1] is None:  # the folder above is a link out of the root
                (root.parent / "linked").mkdir(exist_ok=True)
                (root.parent / "linked" / path.name).write_bytes(_vlm_image(r["image"]))
                if not path.parent.is_symlink():
                    path.parent.rmdir()
                    path.parent.symlink_to(root.parent / "linked")
            elif isinstance(data, tuple):
                path.symlink_to(path if data[1] == "itself" else data[1])
            elif data is not None:
                path.write_bytes(data)
    (root.parent / "outside.png").write_bytes(_vlm_image("outside.png"))
    return cases


# Record ids that name no file: whitespace of every kind, quotes, a leading dash, a slash and a hash (the example
# id's own separators), a percent sign, non-ASCII, and 300 characters.
HOSTILE_IDS = ("id with spaces", "tab\tand\nnewline", "-leading 'single' \"double\"", "slash/in#hash 0",
               "ünïcødé 名前 %20", "x" * 300)


def _parquet_rows() -> bytes:
    """A mapped Parquet file as ``datasets`` writes the Hugging Face releases (Image column of bytes)."""
    import datasets

    table = datasets.Dataset.from_dict(
        {"id": ["a", "b"], "img": [{"bytes": _vlm_image(f"{n}.png"), "path": f"{n}.png"} for n in "ab"],
         "q": ["Q?", "Q2?"], "a": ["A", "B"]},
        features=datasets.Features({"id": datasets.Value("string"), "img": datasets.Image(),
                                    "q": datasets.Value("string"), "a": datasets.Value("string")}))
    out = io.BytesIO()
    table.to_parquet(out)
    return out.getvalue()


def refusals_vlm_unlearning(root: Path) -> list[tuple[Case, Path, list]]:
    """Sources the VLM build refuses whole (``SourceError`` naming the file), each its own folder, and
    routing-score files (``--routing-scores``: a bad score refuses the routing it feeds)."""
    out = []
    mapping_ok = "files: [{path: forget.jsonl, role: forget}]\nfields: {id: id, image: img, instruction: q, response: a}\n"

    def source(name, files: dict[str, str | bytes], fmt, reason, locator):
        folder = root / f"refused_{len(out):02d}"
        folder.mkdir(parents=True)
        for rel, data in files.items():
            (folder / rel).write_bytes(data if isinstance(data, bytes) else data.encode())
        out.append((Case("vlm_unlearning", fmt, name, locator, reason, outcome=REFUSED), folder, []))

    line = '{"id": 1, "img": "a.png", "q": "Q?", "a": "A"}\n'
    source("malformed YAML", {"mapping.yaml": "files: [\n  - path: x\n", "forget.jsonl": line},
           "mapping YAML", "malformed YAML", "mapping.yaml")
    source("wrong YAML type: files is a string", {"mapping.yaml": mapping_ok.replace(
        "[{path: forget.jsonl, role: forget}]", "forget.jsonl"), "forget.jsonl": line}, "mapping YAML",
        "is not of type 'array'", "mapping.yaml")
    source("YAML alias bomb", {"mapping.yaml": YAML_BOMB.replace("i: &i", "files: &i") + mapping_ok.split("\n", 1)[1],
                               "forget.jsonl": line}, "mapping YAML", "alias", "mapping.yaml")
    source("not UTF-8", {"mapping.yaml": b"files: \xff\xfe\n", "forget.jsonl": line}, "mapping YAML",
           "cannot read the mapping", "mapping.yaml")
    parquet_mapping = mapping_ok.replace("forget.jsonl", "forget.parquet")
    source("not Parquet (JSON Lines under a .parquet name)", {"mapping.yaml": parquet_mapping, "forget.parquet": line},
           "mapped Parquet", "not a readable Parquet file", "forget.parquet")
    source("truncated Parquet", {"mapping.yaml": parquet_mapping, "forget.parquet": _parquet_rows()[:-200]},
           "mapped Parquet", "not a readable Parquet file", "forget.parquet")
    source("huge value: a 5000-digit integer", {"train.json": f'[{{"id": {huge_integer()}}}]'}, "VLGuard JSON",
           "not valid JSON", "train.json")
    source("duplicate key in a record", {"train.json": '[{"id": "a", "id": "b"}]'}, "VLGuard JSON",
           "duplicate key 'id'", "train.json")
    source("truncated JSON", {"train.json": '[{"id": "a", "image": '}, "VLGuard JSON", "not valid JSON", "train.json")
    source("100,000-deep nesting", {"train.json": DEEP}, "VLGuard JSON", TOO_DEEP,
           "train.json")
    source("100,000-deep nesting", {"mapping.yaml": "files: " + "[" * 100_000 + "]" * 100_000 + "\n", "forget.jsonl": line},
           "mapping YAML", "nested more than 100 levels deep", "mapping.yaml")
    source("duplicate key", {"mapping.yaml": mapping_ok + "fields: {id: id}\n", "forget.jsonl": line}, "mapping YAML",
           "duplicate key 'fields'", "mapping.yaml")
    source("a NUL byte in a file path", {"mapping.yaml": mapping_ok.replace("forget.jsonl", '"forget\\0.jsonl"'),
                                         "forget.jsonl": line}, "mapping YAML", "holds a NUL byte", "mapping.yaml")
    source("wrong JSON type: an object, not an array", {"train.json": '{"id": "a"}'}, "VLGuard JSON",
           "expected a JSON array", "train.json")
    # names that become paths, and empty files (issue 25)
    source("a mapped file's path climbing out of the source", {"mapping.yaml": mapping_ok.replace(
        "path: forget.jsonl", "path: ../outside.jsonl"), "forget.jsonl": line}, "mapping YAML",
        "files/0/path '../outside.jsonl' leaves the source", "mapping.yaml")
    source("an image_root climbing out of the source", {"mapping.yaml": mapping_ok + "image_root: ../..\n",
                                                        "forget.jsonl": line}, "mapping YAML",
           "image_root '../..' leaves the source", "mapping.yaml")
    source("an empty annotation file (an empty JSON array)", {"train.json": "[]", "test.json": "[]"}, "VLGuard JSON",
           "holds no records (an empty JSON array)", "train.json")
    source("an empty JSON Lines file", {"mapping.yaml": mapping_ok, "forget.jsonl": "\n"}, "mapped JSON Lines",
           "holds no records (no JSON Lines)", "forget.jsonl")
    source("an annotation file symlinked out of the source", {}, "VLGuard JSON",
           "the file is reached through a symlink to a place outside the source", "train.json")
    (root / "outside_train.json").write_text('[{"id": "a"}]')
    (out[-1][1] / "train.json").symlink_to(root / "outside_train.json")
    for name, text, reason in (
            ("NaN score", '{"train/a#0": NaN}', "not a finite number"),
            ("infinite (1e999) score", '{"train/a#0": 1e999}', "not a finite number"),
            ("huge value: a 5000-digit score", '{"train/a#0": %s}' % huge_integer(), "not JSON"),
            ("wrong JSON type: a list", "[0.5]", "expected one JSON object"),
            ("duplicate example id", '{"train/a#0": 0.1, "train/a#0": 0.9}', "duplicate key"),
            ("100,000-deep nesting", "[" * 100_000 + "]" * 100_000, TOO_DEEP),
            ("huge value: a score of 10^400 (past a float's range)", '{"train/a#0": 1%s}' % ("0" * 400),
             "is not a finite number"),
            ("truncated JSON", '{"train/a#0": 0.', "not JSON")):
        path = root / f"scores_{len(out):02d}.json"
        path.write_text(text)
        out.append((Case("vlm_unlearning", "routing-score file", name, path.name, reason, outcome=REFUSED), path, []))
    path = root / f"scores_{len(out):02d}.jsonl"
    path.write_text('{"example_id": "train/a#0", "score": 0.5}\n{"example_id": "train/a#0", "score": 0.7}\n')
    out.append((Case("vlm_unlearning", "routing-score file", "duplicate example id (JSON Lines)", f"{path.name}:2",
                     "appears twice", outcome=REFUSED), path, []))
    path = root / f"scores_{len(out):02d}.jsonl"  # the line numbers are the file's whatever its strings hold
    path.write_text('{"example_id": "train/a#0", "score": 0.5, "note": "a\u2028b\x85c"}\n'
                    '{"example_id": "train/a#0", "score": 0.7}\n', encoding="utf-8")
    out.append((Case("vlm_unlearning", "routing-score file", "a line separator (U+2028) in a line, then a duplicate id",
                     f"{path.name}:2", "appears twice", outcome=REFUSED), path, []))
    return out


def mapped_lines_vlm_unlearning(root: Path) -> tuple[Path, list[Case]]:
    """A mapped source (JSON Lines) whose bad lines are records of their own, quarantined by the same
    stage function the build runs."""
    (root / "images").mkdir(parents=True)
    (root / "mapping.yaml").write_text(
        "files: [{path: forget.jsonl, role: forget}]\nfields: {id: id, image: img, instruction: q, response: a}\n")
    lines = ['{"id": 1, "img": "a.png", "q": "Q?", "a": "A"}', '{"id": 2, "img": "a.png", "q": "Q?", ',
             '{"id": %s, "img": "a.png", "q": "Q?", "a": "A"}' % huge_integer(),
             '{"id": 4, "id": 5, "img": "a.png", "q": "Q?", "a": "A"}', '[1, 2]',
             '{"id": 6, "img": "../../a.png", "q": "Q?", "a": "A"}', "[" * 100_000 + "]" * 100_000,
             '{"id": 8, "img": "a.png", "q": "Q?", "a": "A", "x": %s}' % ("[" * 150 + "]" * 150),
             json.dumps({"id": 9, "img": "a.png", "q": LINE_SEPARATED[0], "a": LINE_SEPARATED[1]}, ensure_ascii=False)]
    (root / "forget.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "images" / "a.png").write_bytes(_vlm_image("a.png"))
    fmt = "mapped JSON Lines"
    return root, [Case("vlm_unlearning", fmt, "truncated line", "forget.jsonl#line=2", "not valid JSON", "record"),
                  Case("vlm_unlearning", fmt, "huge value: a 5000-digit id", "forget.jsonl#line=3", "not valid JSON",
                       "record"),
                  Case("vlm_unlearning", fmt, "duplicate key", "forget.jsonl#line=4", "duplicate key 'id'", "record"),
                  Case("vlm_unlearning", fmt, "wrong JSON type: a list", "forget.jsonl#index=4", "a record is an object",
                       "record"),
                  Case("vlm_unlearning", fmt, "path traversal in the image field", "forget.jsonl#id=6",
                       "leaves the image root", "record"),
                  Case("vlm_unlearning", fmt, "100,000-deep nesting", "forget.jsonl#line=7", TOO_DEEP, "record"),
                  Case("vlm_unlearning", fmt, "a record nested 150 levels deep (past what Beam's coder walks)",
                       "forget.jsonl#line=8", "nested more than 100 levels deep", "record"),
                  Case("vlm_unlearning", fmt, "line separators (U+2028, U+0085) as they are in a record's strings",
                       "forget.jsonl#line=9", "", "record", KEPT)]


# text JSON keeps as it is that str.splitlines ends a line at (a JSON Lines line ends at "\n" only)
LINE_SEPARATED = ("What is\u2028shown?", "An elephant\x85and\u2029a calf.")


# --------------------------------------------------------------------------- Workspace-Bench


def _office_file(kind: str) -> bytes:
    """A small real .docx / .xlsx written by the library made for it."""
    buf = io.BytesIO()
    if kind == "docx":
        import docx

        d = docx.Document()
        d.add_paragraph("Quarterly numbers: see data.csv")
        d.save(buf)
    else:
        import openpyxl

        wb = openpyxl.Workbook()
        wb.active["A1"] = "region"
        wb.save(buf)
    return buf.getvalue()


def _strict_ooxml(transitional: bytes) -> bytes:
    """The package as ISO/IEC 29500 Strict writes it (Strict namespaces, ``w:conformance="strict"``)."""
    pairs = ((b"http://schemas.openxmlformats.org/wordprocessingml/2006/main", b"http://purl.oclc.org/ooxml/wordprocessingml/main"),
             (b"http://schemas.openxmlformats.org/officeDocument/2006/relationships",
              b"http://purl.oclc.org/ooxml/officeDocument/relationships"))
    zin = zipfile.ZipFile(io.BytesIO(transitional))
    members = {}
    for info in zin.infolist():
        data = zin.read(info)
        if info.filename.endswith((".xml", ".rels")):
            for old, new in pairs:
                data = data.replace(old, new)
        members[info.filename] = data
    return zip_bytes(members)


def _with_members(package: bytes, changes: dict[str, bytes]) -> bytes:
    """``package`` with members replaced or added."""
    zin = zipfile.ZipFile(io.BytesIO(package))
    members = {i.filename: zin.read(i) for i in zin.infolist()}
    members.update(changes)
    return zip_bytes(members)


def write_workspace_bench(root: Path, fixtures: Path) -> list[Case]:
    """The runner's layout: the real release's first tasks as ``tasks/<id>/metadata.json`` (their
    manifests and graphs cut to files written here), hostile task records beside them, and hostile
    workspace files in one task's folder."""
    real = json.loads((fixtures / "workspace_bench" / "tasks_head.json").read_text())["full"]
    cases: list[Case] = []

    def add(fmt, name, locator, reason, unit, outcome=QUARANTINED):
        cases.append(Case("workspace_bench", fmt, name, locator, reason, unit, outcome))

    def task(aid: int, change=None, text: str | None = None) -> str:
        record = dict(real[(aid - 1) % len(real)], absolute_id=aid, id=str(aid), file_system=None)
        record.pop("file_system")
        record.update(data_manifest=[{"filename": n, "stored_relpath": f"data/{n}"} for n in ("a.csv", "b.md", "c.txt")],
                      file_count=3, file_dep_graph=[{"from": "a.csv", "to": "b.md"}, {"from": "b.md", "to": "c.txt"}])
        record["file_system"] = "kaifa"
        if change:
            change(record)
        folder = root / "tasks" / str(aid)
        (folder / "data").mkdir(parents=True, exist_ok=True)
        for n, data in (("a.csv", "x,y\n1,2\n"), ("b.md", "see [a](a.csv)\n"), ("c.txt", "plain\n")):
            (folder / "data" / n).write_text(data)
        (folder / "metadata.json").write_text(text if text is not None else json.dumps(record, indent=1))
        return f"tasks/{aid}/metadata.json"

    for aid in range(1, 6):
        task(aid)
    meta = "task record (metadata.json)"
    add(meta, "truncated JSON", task(11, text='{"id": "11", "persona": '), "not JSON", "task")
    add(meta, "wrong JSON type: a list", task(12, text="[1, 2]"), "expected a JSON object", "task")
    add(meta, "wrong JSON type: persona is a number", task(13, lambda r: r.update(persona=5)), "unknown persona", "task")
    add(meta, "wrong JSON type: rubrics is a string", task(14, lambda r: r.update(rubrics="all of them")),
        "expected a list of strings", "task")
    add(meta, "NaN file_count", task(15, lambda r: r.update(file_count=float("nan"))), "file_count nan", "task")
    add(meta, "huge value: a 5000-digit file_count", task(16, text=json.dumps(dict(
        real[0], id="16", absolute_id=16, file_system="kaifa", file_count="HUGE")).replace('"HUGE"', huge_integer())),
        "not JSON", "task")
    add(meta, "duplicate key", task(17, text='{"id": "17", "id": "18"}'), "duplicate key 'id'", "task")
    add(meta, "id differs from its folder", task(18, lambda r: r.update(id="19", absolute_id=19)),
        "is not the folder's name", "task")
    add(meta, "a manifest listing one file twice", task(26, lambda r: r["data_manifest"].append(
        dict(r["data_manifest"][0])) or r.update(file_count=4)), "a manifest lists a file once", "task")
    add(meta, "100,000-deep nesting", task(27, text=DEEP), TOO_DEEP, "task")
    add(meta, "huge value: an absolute_id of 10^19 (past the declared int64)", task(10 ** 19),
        "does not fit the column's int64", "task")
    add(meta, "a lone surrogate (\\ud800) escaped in a rubric (repaired to U+FFFD, counted)",
        task(28, lambda r: r["rubrics"].__setitem__(0, r["rubrics"][0] + " \ud800")), "", "task", KEPT)
    task(21, lambda r: r["data_manifest"].append({"filename": "passwd", "stored_relpath": "../../../../etc/passwd"})
         or r.update(file_count=4))
    add(meta, "path traversal in the manifest", "tasks/21/metadata.json#data_manifest[3]", "no data file", "data_file")
    task(22, lambda r: r["data_manifest"].append({"filename": "hostname", "stored_relpath": "/etc/hostname"})
         or r.update(file_count=4))
    add(meta, "absolute path in the manifest", "tasks/22/metadata.json#data_manifest[3]", "no data file", "data_file")
    graph = "dependency graph (file_dep_graph)"
    task(23, lambda r: r["file_dep_graph"].append({"from": "c.txt", "to": "a.csv"}))
    add(graph, "a cycle", "tasks/23/metadata.json", "", "task", KEPT)
    names = [f"n{i:02d}.txt" for i in range(12)]   # every ordered pair: cycles beyond counting
    task(24, lambda r: r.update(data_manifest=[{"filename": n, "stored_relpath": f"data/{n}"} for n in names],
                                file_count=len(names),
                                file_dep_graph=[{"from": a, "to": b} for a in names for b in names if a != b]))
    for n in names:
        (root / "tasks" / "24" / "data" / n).write_text(n)
    add(graph, "a complete graph on 12 files (simple cycles beyond counting)", "tasks/24/metadata.json", "", "task", KEPT)
    task(25, lambda r: r["file_dep_graph"].extend([{"from": "a.csv", "to": "../../etc/passwd"}, {"from": 3, "to": None}]))
    add(graph, "an edge to a path outside the task", "tasks/25/metadata.json#file_dep_graph[2]",
        "neither a manifest file nor a declared output", "task_edge")
    add(graph, "wrong JSON type: an edge of numbers", "tasks/25/metadata.json#file_dep_graph[3]",
        "an edge must be {from, to}", "task_edge")

    # data file names that break naive tools (whitespace splitting, quoting, option parsing, byte counts), named by
    # a task's manifest and graph: published, the task's manifest resolved to them and its graph read back through
    # the loader (test_hostile_inputs)
    task(29, lambda r: r.update(data_manifest=[{"filename": n, "stored_relpath": f"data/{n}"} for n in WS_HOSTILE_FILE_NAMES],
                                file_count=len(WS_HOSTILE_FILE_NAMES),
                                file_dep_graph=[{"from": a, "to": b} for a, b in zip(WS_HOSTILE_FILE_NAMES,
                                                                                      WS_HOSTILE_FILE_NAMES[1:])]))
    for n in WS_HOSTILE_FILE_NAMES:
        (root / "tasks" / "29" / "data" / n).write_text(f"{n}\n")
        add("folder entry", f"file name {n[:40]!r}{'...' if len(n) > 40 else ''} named by the manifest",
            f"tasks/29/data/{n}", "", "file", KEPT)

    # workspace files of each format, in task 5's folder
    ws = root / "tasks" / "5" / "data"
    docx_bytes, xlsx_bytes = _office_file("docx"), _office_file("xlsx")

    def wfile(name, data, fmt, what, reason, unit="file", outcome=QUARANTINED):
        (ws / name).write_bytes(data)
        add(fmt, what, f"tasks/5/data/{name}", reason, unit, outcome)

    wfile("bomb.zip", zip_bomb(), "zip archive", "zip bomb (320 MiB of zeros)", "zip bomb")
    wfile("many.zip", zip_bytes({f"m{i:05d}.txt": b"" for i in range(10_001)}), "zip archive", "10001 members",
          "10001 members")
    wfile("traversal.zip", zip_bytes({"../../evil.txt": b"x"}), "zip archive", "a member path leaving the archive",
          "", "file", KEPT)
    wfile("bomb.docx", zip_bomb(), "Office file (.docx, .xlsx)", "zip bomb named .docx", "zip bomb")
    wfile("not_a_zip.docx", b"%PDF-1.4 definitely not a docx", "Office file (.docx, .xlsx)", "not-a-zip .docx",
          "docx does not parse: unreadable zip archive", "file_references")
    wfile("encrypted.docx", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 4000, "Office file (.docx, .xlsx)",
          "encrypted (an OLE container)", "", "file", KEPT)
    wfile("macro.docm", _with_members(docx_bytes, {"word/vbaProject.bin": b'Attribute VB_Name = "evil"'}),
          "Office file (.docx, .xlsx)", "macro-enabled", "", "file", KEPT)
    wfile("strict.docx", _strict_ooxml(docx_bytes), "Office file (.docx, .xlsx)", "Strict OOXML namespaces", "",
          "file", KEPT)
    wfile("entities.docx", _with_members(docx_bytes, {"word/document.xml": BILLION_LAUGHS}), "Office file (.docx, .xlsx)",
          "billion laughs in document.xml", "", "file", KEPT)  # references come from the .rels parts
    wfile("truncated.xlsx", xlsx_bytes[: len(xlsx_bytes) // 2], "Office file (.docx, .xlsx)", "truncated .xlsx",
          "unreadable zip archive", "file")
    wfile("laughs.xml", BILLION_LAUGHS, "XML / SVG", "billion laughs", "", "file", KEPT)
    wfile("xxe.svg", EXTERNAL_ENTITY.replace(b"<d>&x;</d>", b'<svg xmlns="http://www.w3.org/2000/svg">&x;</svg>')
          .replace(b"DOCTYPE d", b"DOCTYPE svg"), "XML / SVG", "external entity (file:///etc/passwd)",
          "svg does not parse: doctype", "file_references")
    wfile("bomb.yaml", YAML_BOMB.encode(), "YAML / JSON", "YAML alias bomb", "", "file", KEPT)
    wfile("nan.json", b'{"value": NaN, "big": ' + huge_integer().encode() + b"}", "YAML / JSON",
          "NaN and a 5000-digit integer", "json does not parse", "file_references")
    wfile("deep.json", b'{"input": "a.csv", "rows": [{"name": "alpha", "value": 1}, {"name": "beta", "value": 2}],\n'
          b' "deep": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n", "YAML / JSON", "100,000-deep nesting (JSON)",
          "nested too deeply", "file_references")
    wfile("repeated.json", b'{"input": "a.csv", "input": "b.md"}', "YAML / JSON",
          "a repeated key (every value read for references, none lost)", "", "file", KEPT)
    wfile("corrupt.pdf", b"%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n%%EOF", "PDF", "corrupt",
          "pdf does not parse", "file_references")
    wfile("bomb.png", png_bomb(20000, 20000), "image", "decompression bomb PNG", "", "file", KEPT)
    wfile("truncated.png", png_bomb(20, 20)[:30], "image", "truncated PNG", "", "file", KEPT)
    outside = root.parent / "secret.txt"
    outside.write_text("outside the workspace\n")
    (ws / "escape.txt").symlink_to(outside)
    add("folder entry", "symlink escape", "tasks/5/data/escape.txt", "outside the workspace", "file")
    (ws / "loop").symlink_to(ws / "loop")
    add("folder entry", "symlink loop", "tasks/5/data/loop", "symlink loop", "file")
    os.mkfifo(ws / "pipe")
    add("folder entry", "unreadable (a fifo)", "tasks/5/data/pipe", "fifo", "file")
    undecodable_name(ws, b"bad\xffname.txt")
    add("folder entry", "undecodable file name", "tasks/5/data/bad\\xffname.txt", "UTF-8", "file")
    # strings a file escapes as a lone surrogate: the file is kept, the string repaired (U+FFFD)
    wfile("surrogate.json", b'{"input": "\\udcff.csv", "data": "a.csv"}', "YAML / JSON",
          "a lone surrogate (\\udcff) escaped in a string", "", "file", KEPT)
    wfile("surrogate.py", b'import pathlib\n\npath = pathlib.Path("\\udcff")  # click\'s own test\n',
          "Python / notebook", "a lone surrogate in a string literal", "", "file", KEPT)
    cell = {"cell_type": "code", "execution_count": None, "id": "c1", "metadata": {}, "outputs": [],
            "source": 'name = "\udcff"\nopen("a.csv")\n'}
    wfile("surrogate.ipynb", json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode(),
          "Python / notebook", "a lone surrogate escaped in a notebook cell", "", "file", KEPT)
    # a tasks/ folder that is not a task (named by no id): quarantined, never read as one
    (root / "tasks" / "build").mkdir(parents=True)
    (root / "tasks" / "build" / "log.txt").write_text("not a task\n")
    add("source layout", "a tasks/ folder whose name is not a task id", "tasks/build", "not a task folder", "task")
    # a task folder, or its metadata.json, symlinked out of the source: not read (nor its workspace scanned)
    task(41)
    shutil.move(root / "tasks" / "41", root.parent / "outside_task_41")
    (root / "tasks" / "41").symlink_to(root.parent / "outside_task_41", target_is_directory=True)
    add("source layout", "a task folder symlinked out of the source", "tasks/41",
        "the task folder is reached through a symlink to a place outside the source", "task")
    task(42)
    shutil.move(root / "tasks" / "42" / "metadata.json", root.parent / "outside_metadata_42.json")
    (root / "tasks" / "42" / "metadata.json").symlink_to(root.parent / "outside_metadata_42.json")
    add("task record (metadata.json)", "symlinked out of the source", "tasks/42",
        "its metadata.json is reached through a symlink to a place outside the source", "task")
    # the runner's Lite list is its tasks_lite/<id>/ folders (copies of the full tasks' folders)
    for aid in (1, 11):
        shutil.copytree(root / "tasks" / str(aid), root / "tasks_lite" / str(aid))
    add("Lite folders (tasks_lite/)", "the Lite copy of a quarantined task", "tasks_lite/11",
        "Lite task 11 is quarantined", "lite_task")
    return cases


# Data file names a file system takes that tools trip on (see HOSTILE_FOLDER_NAMES), the last 255 bytes of UTF-8
WS_HOSTILE_FILE_NAMES = ("data with spaces.csv", "tab\tand\nnewline.md", "-leading 'single' \"double\".txt",
                         "..dots...txt", "ünïcødé 名前 %20.csv", "long_" + "é" * 123 + ".txt")


def write_workspace_website(root: Path, fixtures: Path) -> list[Case]:
    """The website release (``tasks.json``): three real tasks and bad elements of its ``full`` list; its
    Lite list (``tasks-lite.js``, the real file's shape) with two real tasks and bad entries."""
    real = json.loads((fixtures / "workspace_bench" / "tasks_head.json").read_text())["full"][:3]
    bad = [[1, 2], dict(real[0], absolute_id="seven"), dict(real[1]), dict(real[2], absolute_id=30, persona=None),
           dict(real[2], absolute_id=31, task=real[2]["task"] + " \udcff"),  # json.dumps escapes it: "\\udcff"
           dict(real[2], absolute_id=10 ** 19), dict(real[2], absolute_id=33, deep=functools.reduce(
               lambda inner, _: [inner], range(150), 0)),
           dict(real[2], absolute_id=32, rubrics=[r + " \ud800" for r in real[2]["rubrics"]])]
    root.mkdir(parents=True)
    (root / "tasks.json").write_text(json.dumps({"full": real + bad}))
    lite = [real[0], "3", dict(real[1], absolute_id="two"), real[0], dict(real[2], absolute_id=999),
            dict(real[2], absolute_id=30), real[2]]
    (root / "tasks-lite.js").write_text("window.WORKSPACE_BENCH_LITE_TASKS = " + json.dumps(lite, indent=2) + ";\n")
    fmt, lite_fmt = "task list (tasks.json)", "Lite list (tasks-lite.js)"
    return [Case("workspace_bench", lite_fmt, "wrong JSON type: an entry is a string", "tasks-lite.js#[1]",
                 "must be a JSON object", "lite_task"),
            Case("workspace_bench", lite_fmt, "wrong JSON type: absolute_id is a word", "tasks-lite.js#[2]",
                 "not an integer", "lite_task"),
            Case("workspace_bench", lite_fmt, "duplicate entry", f"tasks-lite.js#absolute_id={real[0]['absolute_id']}",
                 "duplicate absolute_id", "lite_task"),
            Case("workspace_bench", lite_fmt, "an entry naming a task the source does not have",
                 "tasks-lite.js#absolute_id=999", "which the source does not have", "lite_task"),
            Case("workspace_bench", lite_fmt, "an entry naming a quarantined task", "tasks-lite.js#absolute_id=30",
                 "Lite task 30 is quarantined", "lite_task"),
            Case("workspace_bench", fmt, "wrong JSON type: a task is a list", "tasks.json#[3]", "must be a JSON object",
                 "task"),
            Case("workspace_bench", fmt, "wrong JSON type: absolute_id is a word", "tasks.json#[4]",
                 "not an integer", "task"),
            Case("workspace_bench", fmt, "duplicate absolute_id", f"tasks.json#absolute_id={real[1]['absolute_id']}",
                 "duplicate absolute_id", "task"),
            Case("workspace_bench", fmt, "null persona", "tasks.json#absolute_id=30", "unknown persona None", "task"),
            Case("workspace_bench", fmt, "a lone surrogate (\\udcff) escaped in the instruction",
                 "tasks.json#absolute_id=31", "", "task", KEPT),
            Case("workspace_bench", fmt, "huge value: an absolute_id of 10^19 (past the declared int64)",
                 f"tasks.json#absolute_id={10 ** 19}", "does not fit the column's int64", "task"),
            Case("workspace_bench", fmt, "a task nested 150 levels deep (past what json.dumps follows)",
                 f"tasks.json#[{len(real) + 6}]", "nested more than 100 levels deep", "task"),
            Case("workspace_bench", fmt, "lone surrogates (\\ud800) escaped in the rubrics",
                 "tasks.json#absolute_id=32", "", "task", KEPT)]


def refusals_workspace_bench(root: Path) -> list[tuple[Case, Path, list]]:
    out = []
    fmt = "task list (tasks.json)"
    for name, files, reason, locator in (
            ("truncated JSON", {"tasks.json": '{"full": [{"absolute_id": 1, '}, "not JSON", "tasks.json"),
            ("wrong JSON type: full is an object", {"tasks.json": '{"full": {}}'}, "'full' list", "tasks.json"),
            ("huge value: a 5000-digit id", {"tasks.json": '{"full": [{"absolute_id": %s}]}' % huge_integer()},
             "not JSON", "tasks.json"),
            ("duplicate key", {"tasks.json": '{"full": [], "full": []}'}, "duplicate key 'full'", "tasks.json"),
            ("100,000-deep nesting", {"tasks.json": '{"full": ' + "[" * 100_000 + "]" * 100_000 + "}"},
             TOO_DEEP, "tasks.json"),
            ("Lite list: 100,000-deep nesting", {
                "tasks.json": '{"full": []}',
                "tasks-lite.js": "window.WORKSPACE_BENCH_LITE_TASKS = " + "[" * 100_000 + "]" * 100_000 + ";"},
             TOO_DEEP, "tasks-lite.js"),
            ("not UTF-8", {"tasks.json": b'{"full": ["\xff"]}'}, "unreadable", "tasks.json"),
            ("Lite list: code after the array", {"tasks.json": '{"full": []}',
                                                 "tasks-lite.js": "window.WORKSPACE_BENCH_LITE_TASKS = [];alert(1)"},
             "unexpected code after the task array", "tasks-lite.js"),
            ("Lite list: huge value (a 5000-digit id)", {
                "tasks.json": '{"full": []}',
                "tasks-lite.js": "window.WORKSPACE_BENCH_LITE_TASKS = [{\"absolute_id\": %s}];" % huge_integer()},
             "Exceeds the limit", "tasks-lite.js"),
            ("Lite list: duplicate key", {
                "tasks.json": '{"full": []}',
                "tasks-lite.js": 'window.WORKSPACE_BENCH_LITE_TASKS = [{"absolute_id": 1, "absolute_id": 2}];'},
             "duplicate key 'absolute_id'", "tasks-lite.js")):
        folder = root / f"refused_{len(out):02d}"
        folder.mkdir(parents=True)
        for rel, data in files.items():
            (folder / rel).write_bytes(data if isinstance(data, bytes) else data.encode())
        out.append((Case("workspace_bench", fmt if "Lite" not in name else "Lite list (tasks-lite.js)", name, locator,
                         reason, outcome=REFUSED), folder, []))
    folder = root / f"refused_{len(out):02d}"  # the task list itself symlinked in from outside the source
    folder.mkdir(parents=True)
    (root / "outside_tasks.json").write_text('{"full": []}')
    (folder / "tasks.json").symlink_to(root / "outside_tasks.json")
    out.append((Case("workspace_bench", fmt, "symlinked out of the source", "tasks.json",
                     "is reached through a symlink to a place outside the source", outcome=REFUSED), folder, []))
    return out


# --------------------------------------------------------------------------- WordEval

OOXML_CT = (b'<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            b'<Default Extension="xml" ContentType="application/xml"/></Types>')


def declared_parts(package: bytes, overrides: dict[str, str] | None = None,
                   relationships: dict[str, tuple[str, str]] | None = None) -> tuple[bytes, bytes]:
    """The package's ``[Content_Types].xml`` with ``overrides`` ({part name: content type}) and its
    document relationships with ``relationships`` ({id: (type, target)}) added."""
    zin = zipfile.ZipFile(io.BytesIO(package))
    ct = zin.read("[Content_Types].xml").replace(b"</Types>", b"".join(
        b'<Override PartName="%s" ContentType="%s"/>' % (name.encode(), kind.encode())
        for name, kind in (overrides or {}).items()) + b"</Types>")
    rels = zin.read("word/_rels/document.xml.rels").replace(b"</Relationships>", b"".join(
        b'<Relationship Id="%s" Type="%s" Target="%s"/>' % (rid.encode(), kind.encode(), target.encode())
        for rid, (kind, target) in (relationships or {}).items()) + b"</Relationships>")
    return ct, rels


def wordeval_docx_cases(good: bytes) -> list[tuple[Case, bytes]]:
    """An agent's edited .docx as the evaluator reads it (``benchwright evaluate wordeval``, the harness):
    every case is refused by name (``rejected`` starts with the reason), nothing expanded or executed."""
    import warnings

    def case(name, reason):
        return Case("wordeval", "edited .docx (evaluator input)", name, "", reason, outcome=REFUSED)

    bomb = zip_bytes({"[Content_Types].xml": OOXML_CT, "word/document.xml": b"<a>" + b" " * (200 << 20) + b"</a>"})
    billion = BILLION_LAUGHS.replace(b"<lolz>&lol9;</lolz>", b'<w:document xmlns:w="http://schemas.openxmlformats.org/'
                                                            b'wordprocessingml/2006/main">&lol9;</w:document>')
    xxe = EXTERNAL_ENTITY.replace(b"<d>&x;</d>", b'<w:document xmlns:w="http://schemas.openxmlformats.org/'
                                                 b'wordprocessingml/2006/main">&x;</w:document>')
    dup = io.BytesIO()
    with zipfile.ZipFile(dup, "w") as zf, warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # zipfile warns about the duplicate it writes
        zf.writestr("[Content_Types].xml", OOXML_CT)
        zf.writestr("word/document.xml", b"<a/>")
        zf.writestr("word/document.xml", b"<b/>")
    ct, _ = declared_parts(good, overrides={"/word/vbaProject.bin": "application/vnd.ms-office.vbaProject"})
    _, rels = declared_parts(good, relationships={
        "rId99": ("http://schemas.openxmlformats.org/officeDocument/2006/relationships/aFChunk", "evil.html")})
    custom = EXTERNAL_ENTITY.replace(b"<d>&x;</d>", b'<root xmlns="urn:example">&x;</root>').replace(b"DOCTYPE d", b"DOCTYPE r")
    return [
        (case("zip bomb (200 MiB document part)", "zip_bomb"), bomb),
        (case("billion laughs in document.xml", "doctype"), _with_members(good, {"word/document.xml": billion})),
        (case("external entity in document.xml", "doctype"), _with_members(good, {"word/document.xml": xxe})),
        (case("DOCTYPE in a customXml part", "doctype"), _with_members(good, {"customXml/item1.xml": custom})),
        (case("too many members", "too_many_members"),
         zip_bytes({"[Content_Types].xml": OOXML_CT, **{f"f{i}.xml": b"<a/>" for i in range(1200)}})),
        (case("path traversal member", "path_traversal"), zip_bytes({"[Content_Types].xml": OOXML_CT, "../../evil.xml": b"<a/>"})),
        (case("absolute member path", "absolute_path"), zip_bytes({"[Content_Types].xml": OOXML_CT, "/etc/evil.xml": b"<a/>"})),
        (case("duplicate member", "duplicate_member"), dup.getvalue()),
        (case("not a zip", "not_a_zip"), b"%PDF-1.4 definitely not a docx"),
        (case("truncated", "not_a_zip"), good[: len(good) // 2]),
        (case("encrypted (an OLE container)", "encrypted"), b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 4000),
        (case("macro-enabled (vbaProject.bin)", "active content"),
         _with_members(good, {"word/vbaProject.bin": b'Attribute VB_Name = "evil"', "[Content_Types].xml": ct})),
        (case("altChunk (embedded HTML)", "active content"),
         _with_members(good, {"word/_rels/document.xml.rels": rels, "word/evil.html": b"<html/>"})),
        (case("Strict OOXML namespaces", "strict"), _strict_ooxml(good)),
    ]


def refusals_wordeval(root: Path) -> list[tuple[Case, Path, list]]:
    """Catalogue folders (``benchwright build wordeval --source``) the build refuses whole, naming the
    file: the catalogue is one declarative plan, read before any case is built (a bad value inside a
    well-formed unit is a quarantined case: the contract's planted record)."""
    from benchwright.wordeval.synth import write_source

    out = []
    fmt = "catalogue YAML"

    template = root / "tiny"
    write_source(template, scale="tiny")

    def source(name, reason, locator, edit):
        folder = root / f"refused_{len(out):02d}"
        shutil.copytree(template, folder)
        edit(folder)
        out.append((Case("wordeval", fmt, name, locator, reason, outcome=REFUSED), folder, []))

    def write(rel, data):
        return lambda folder: (folder / rel).write_bytes(data if isinstance(data, bytes) else data.encode())

    source("malformed YAML", "malformed catalogue YAML", "properties.yaml", write("properties.yaml", "properties: [\n"))
    source("YAML alias bomb", "alias *a is not allowed", "instructions.yaml",
           write("instructions.yaml", YAML_BOMB + "families: {}\n"))
    source("wrong YAML type: properties is a list", "expected a mapping", "properties.yaml",
           write("properties.yaml", "properties: 5\n"))
    source("huge value: a 5000-digit integer", "Exceeds the limit", "basedocs.yaml",
           write("basedocs.yaml", f"basedocs: {{x: {huge_integer()}}}\n"))
    source("not UTF-8", "compositions.yaml:1: not UTF-8 (byte 0xff", "compositions.yaml",
           write("compositions.yaml", b"templates: [\xff]\n"))

    def unit_edit(change):
        def edit(folder):
            path = sorted((folder / "units").glob("*.yaml"))[0]
            import yaml

            doc = yaml.safe_load(path.read_text(encoding="utf-8"))
            change(doc)
            path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
        return edit

    source("a unit without its id", "#units[0] (line 3): unit 'None': missing field 'id'", "units/",
           unit_edit(lambda d: d["units"][0].pop("id")))
    source("wrong YAML type: a unit is a string", "#units[", "units/", unit_edit(lambda d: d["units"].append("unit")))
    source("duplicate unit id", "duplicate unit id", "", unit_edit(
        lambda d: d["units"].append(json.loads(json.dumps(d["units"][0])))))
    source("a missing part", "missing instructions.yaml", "instructions.yaml",
           lambda folder: (folder / "instructions.yaml").unlink())

    def repeat_property(folder):  # Font.Bold given again with Font.StrikeThrough's entry: PyYAML kept the second
        import yaml

        path = folder / "properties.yaml"
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        lines = [f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in doc["properties"].items()]
        lines.append(f"  {json.dumps('Font.Bold')}: {json.dumps(doc['properties']['Font.StrikeThrough'])}")
        rest = {k: v for k, v in doc.items() if k != "properties"}
        path.write_text((yaml.safe_dump(rest) if rest else "") + "properties:\n" + "\n".join(lines) + "\n",
                        encoding="utf-8")

    source("a repeated key (Font.Bold given twice, the second a strike-through's)", "duplicate key 'Font.Bold'",
           "properties.yaml", repeat_property)
    source("100,000-deep nesting", "nested more than 100 levels deep", "units/",
           lambda folder: (folder / "units" / "zz_deep.yaml").write_text("units: " + "[" * 100_000 + "]" * 100_000))

    def link(name, target):
        return lambda folder: os.symlink(target(folder) if callable(target) else target, folder / "units" / name)

    outside = root / "outside_unit.yaml"
    shutil.copy(sorted((template / "units").glob("*.yaml"))[0], outside)
    source("symlink escape: a unit file linked out of the catalogue", "symlink to a place outside the catalogue",
           "units/zz_escape.yaml", link("zz_escape.yaml", str(outside)))
    source("symlink loop", "is a symlink loop", "units/zz_loop.yaml", link("zz_loop.yaml", "zz_loop.yaml"))
    source("dangling symlink", "is a dangling symlink", "units/zz_gone.yaml", link("zz_gone.yaml", "missing.yaml"))
    # root reads any mode, so permissions cannot show an unreadable file: a folder named like a unit file
    source("unreadable (a folder)", "unreadable catalogue file", "zz_folder.yaml",
           lambda folder: (folder / "units" / "zz_folder.yaml").mkdir())
    source("undecodable file name", "is not valid UTF-8", "units/zz\\xffbad.yaml",
           lambda folder: undecodable_name(folder / "units", b"zz\xffbad.yaml", b"units: []\n"))
    return out


def write_wordeval_ids(root: Path) -> tuple[Path, list[Case]]:
    """The tiny catalogue with units and a composition template whose ids become case ids, and so the names of
    case folders (``exports/cases/<case_id>``) and of the files tools name after them: ids that would leave
    that folder or not fit a file name are quarantined case by case naming the catalogue file (before, a
    ``../`` unit id wrote input.docx, reference.docx and case.json outside the build and it published);
    ids with spaces, quotes, a leading dash, dots, non-ASCII are kept, and their folders evaluate back."""
    import yaml

    from benchwright.wordeval.synth import write_source

    write_source(root, scale="tiny")
    path = sorted((root / "units").glob("*.yaml"))[0]
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    good = doc["units"][0]
    refused = {"../../escape": "holds '/'", "/tmp/absolute": "holds '/'", "nested/unit": "holds '/'",
               "w" * 240: "need 19 bytes more", "u" * 300: "has a name of 3", "bold\0unit": "holds a NUL byte",
               "bold\ud800unit": "holds a lone surrogate"}
    doc["units"] += [dict(json.loads(json.dumps(good)), id=uid) for uid in [*refused, *HOSTILE_UNIT_IDS]]
    path.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True), encoding="utf-8")
    comp = yaml.safe_load((root / "compositions.yaml").read_text(encoding="utf-8"))
    comp["templates"].append(dict(json.loads(json.dumps(comp["templates"][0])), id="../escape_template"))
    (root / "compositions.yaml").write_text(yaml.safe_dump(comp, sort_keys=False), encoding="utf-8")
    fmt = "catalogue ids (case folders)"
    # (a quarantine row is UTF-8 text: the surrogate in its locator is written repaired, U+FFFD, and counted)
    cases = [Case("wordeval", fmt, f"unit id {uid[:30]!r}{'...' if len(uid) > 30 else ''}".replace("\\x00", "\\0"),
                  f"{uid.replace(chr(0xD800), chr(0xFFFD))}@", reason, "atomic_case") for uid, reason in refused.items()]
    cases += [Case("wordeval", fmt, "template id '../escape_template'", "../escape_template@", "holds '/'",
                   "compositional_case")]
    cases += [Case("wordeval", fmt, f"unit id {uid!r}", f"{uid}@", "", "atomic_case", KEPT) for uid in HOSTILE_UNIT_IDS]
    return root, cases


# Unit ids a file name holds that tools trip on (the harness passes case paths to agents' commands)
HOSTILE_UNIT_IDS = ("bold with spaces", "-leading 'single' \"double\"", "..dots..", "ünïcødé 名前 %20")


# --------------------------------------------------------------------------- evaluator input (issue 25)
# What ``benchwright evaluate <dataset>`` reads besides the build: predictions, judge files, case folders.
# Each case is (Case, run): ``run()`` evaluates the case's input and returns what the evaluator said
# about it (its warnings, or the reasons it listed for what it left out), or raises the project's error.
# Outcomes: ``refused`` (an error naming the file and the record or line), ``kept`` (scored, with a
# warning saying why the numbers say little: AP 0 for no predictions), ``quarantined`` (the file is left
# out of the score and listed with its reason, the rest scored: Workspace-Bench's judge files).


def _write(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass"))
    return path


def wildbox_prediction_cases(root: Path, kitti_dir: Path) -> list[tuple[Case, object]]:
    """The authors' prediction JSON (against in-memory ground truth) and KITTI result folders (against
    the real KITTI fixture, through ``evaluate_paths``)."""
    from benchwright.benchmarks.wildbox_eval import synth_ground_truth
    from benchwright.evaluation import wildbox as ev

    gt = synth_ground_truth(12, seed=5)
    image_ids = gt.pop("image_ids")
    iid = int(image_ids[0])
    out = []

    def inst(**change) -> dict:
        return {"bbox": [10, 20, 30, 40], "score": 0.5, "category_id": 1002, "center_cam": [0.1, 0.2, 1.0],
                "dimensions": [0.2, 0.3, 0.4], "pose": [[1, 0, 0], [0, 1, 0], [0, 0, 1]], **change}

    def json_case(name, reason, text, outcome=REFUSED, locator="p.json"):
        path = _write(root / "json" / f"{len(out):02d}" / "p.json", text)
        where = f"{path.parent}/{locator}"

        def run():
            return ev.evaluate(gt, ev.load_predictions(path), image_ids=image_ids)["meta"]["warnings"]

        out.append((Case("wildbox", "prediction JSON (evaluator input)", name, where, reason, outcome=outcome), run))

    def entry(**change) -> str:
        return json.dumps([{"image_id": iid, "instances": [inst(**change)]}])

    json_case("no predictions ([])", "no predictions: every AP is 0", "[]", KEPT)
    json_case("every prediction outside the split", "1 predictions are on images outside the split: every AP is 0",
              json.dumps([{"image_id": 10 ** 9, "instances": [inst()]}]), KEPT)
    json_case("an image without instances", "no predictions: every AP is 0",
              json.dumps([{"image_id": iid, "instances": []}]), KEPT)
    json_case("image_id 2**70", "'image_id' 1180591620717411303424 is outside int64",
              json.dumps([{"image_id": 2 ** 70, "instances": [inst()]}]), locator="p.json#[0]")
    json_case("image_id 1.5", "'image_id' must be an integer, got 1.5",
              json.dumps([{"image_id": 1.5, "instances": []}]), locator="p.json#[0]")
    json_case("score of 5,000 digits", "a number of 5,000 digits at line 1",
              entry().replace('"score": 0.5', '"score": ' + huge_integer()), locator="p.json:1")
    json_case("score of 400 digits (past a double)", "'score' an integer of 400 digits is too large for a double",
              entry(score=10 ** 399), locator="p.json#[0].instances[0]")
    json_case("score '0.5' (a string)", "'score' must be a number, got '0.5' (a string)", entry(score="0.5"),
              locator="p.json#[0].instances[0]")
    json_case("score true", "'score' must be a number, got True (a boolean)", entry(score=True),
              locator="p.json#[0].instances[0]")
    json_case("score NaN", "'score' must be finite, got nan", entry(score=float("nan")),
              locator="p.json#[0].instances[0]")
    json_case("category_id true", "'category_id' must be an integer, got True", entry(category_id=True),
              locator="p.json#[0].instances[0]")
    json_case("a 1 MB string for a number (the message stays short)", "'center_cam' must be a number, got 'xxx",
              entry(center_cam=[0, "x" * (1 << 20), 1]), locator="p.json#[0].instances[0]")
    json_case("pose of 2 rows", "'pose' must be a list of shape [3, 3], got 2 items",
              entry(pose=[[1, 0, 0], [0, 1, 0]]), locator="p.json#[0].instances[0]")
    json_case("a negative dimension", "'dimensions' must be >= 0", entry(dimensions=[0.2, -0.3, 0.4]),
              locator="p.json#[0].instances[0]")
    json_case("a repeated key", "duplicate key 'score'", entry().replace('"score": 0.5', '"score": 0.5, "score": 0.9'),
              locator="p.json:1")
    json_case("100,000-deep nesting", "nested deeper than the JSON decoder can follow",
              "[" * 100_000 + "]" * 100_000, locator="p.json:1")
    json_case("a Latin-1 byte", "not UTF-8: byte 0xe9 at column 4",
              b'[\n {"\xe9": 1}]', locator="p.json:2")
    json_case("a UTF-8 byte order mark", "Unexpected UTF-8 BOM", "\ufeff[]", locator="p.json:1")
    json_case("an empty file", "not valid JSON: Expecting value", "", locator="p.json:1")
    json_case("an object, not a list", "expected a JSON list", '{"image_id": 1}')

    car = "Pedestrian 0.00 0 -0.20 712.40 143.00 810.73 307.92 1.89 0.48 1.20 1.84 1.47 8.41 0.01"

    def kitti_case(name, reason, files: dict, outcome=REFUSED, locator=""):
        folder = root / "kitti" / f"{len(out):02d}" / "results"
        folder.mkdir(parents=True)
        for fname, data in files.items():
            if data is None:
                (folder / fname).mkdir()
            else:
                _write(folder / fname, data)

        def run():
            return ev.evaluate_paths(kitti_dir, folder)["kitti"]["warnings"]

        out.append((Case("wildbox", "KITTI result folder (evaluator input)", name, locator, reason, outcome=outcome),
                    run))

    kitti_case("an empty folder", "no detections for the 6 frame(s) of label_2: every AP is 0", {}, KEPT)
    kitti_case("only frames the ground truth lacks", "1 result file(s) of results name no frame of label_2",
               {"000042.txt": f"{car} 0.9\n"}, KEPT)
    kitti_case("a Latin-1 byte", "not UTF-8: byte 0xe9 at column 4", {"000000.txt": f"{car} 0.9\nCaf\xe9".encode("latin-1")},
               locator="results/000000.txt:2")
    kitti_case("score 'true'", "score is not a number: 'true'", {"000000.txt": f"{car} true\n"},
               locator="results/000000.txt:1")
    kitti_case("score nan", "score is not finite: 'nan'", {"000000.txt": f"{car} nan\n"}, locator="results/000000.txt:1")
    kitti_case("score of 5,000 digits", "score is not finite", {"000000.txt": f"{car} {huge_integer()}\n"},
               locator="results/000000.txt:1")
    kitti_case("no score column", "a prediction needs 16 columns", {"000000.txt": f"{car}\n"},
               locator="results/000000.txt:1")
    kitti_case("17 columns", "expected 15 or 16 columns, got 17", {"000000.txt": f"{car} 0.9 1\n"},
               locator="results/000000.txt:1")
    kitti_case("a folder named as a frame's file", "cannot read", {"000000.txt": None}, locator="results/000000.txt")
    kitti_case("a UTF-8 byte order mark", "starts with a UTF-8 byte order mark", {"000000.txt": f"\ufeff{car} 0.9\n"},
               locator="results/000000.txt:1")
    return out


def workspace_judge_cases(root: Path) -> list[tuple[Case, object]]:
    """Judge files of one run; each bad one beside a good case, so the run is scored without it."""
    from benchwright.evaluation import workspace_bench as ev

    good = {"rubrics": [{"index": 0, "passed": True}, {"index": 1, "passed": "no"}]}
    out = []

    def case(name, reason, text, locator_tail=""):
        run = root / f"{len(out):02d}" / "Agent--model--run1"
        _write(run / "1" / "rubrics_judge--j.json", json.dumps(good))
        _write(run / "2" / "rubrics_judge--j.json", text)

        def run_it():
            report = ev.evaluate(run.parent)["runs"][run.name]
            assert (report["rubrics_total"], report["tasks_scored"]) == (2, 1), report  # the good case alone
            return [u["error"] for u in report["unreadable_judge_file"]]

        out.append((Case("workspace_bench", "judge file (evaluator input)", name,
                         f"2/rubrics_judge--j.json{locator_tail}", reason), run_it))

    def items(*values, key="passed"):
        return json.dumps({"rubrics": [{"index": i, key: v} for i, v in enumerate(values)]}).replace('"NAN"', "NaN")

    case("passed: NaN (bool(nan) is a pass)", "'passed' must be a boolean, a string, null, 0 or 1, got nan",
         items(True, "NAN"), "#rubrics[1]")
    case("passed: 2", "'passed' must be a boolean, a string, null, 0 or 1, got 2", items(2), "#rubrics[0]")
    case("passed: a list", "'passed' must be a boolean, a string, null, 0 or 1, got [True]", items([True]),
         "#rubrics[0]")
    case("originalPassed: NaN", "'originalPassed' must be", items("NAN", key="originalPassed"), "#rubrics[0]")
    case("a rubric index given twice", "rubric index 0 given twice (first at rubrics[0])",
         json.dumps({"rubrics": [{"index": 0, "passed": False}, {"index": "0", "passed": True}]}), "#rubrics[1]")
    case("a repeated key", "duplicate key 'passed'", '{"rubrics": [{"index": 0, "passed": false, "passed": true}]}',
         ":1")
    case("a rubric item that is not an object", "a rubric item must be an object, got 'x' (a string)",
         json.dumps({"rubrics": [{"index": 0, "passed": True}, "x"]}), "#rubrics[1]")
    case("100,000-deep nesting", "nested deeper than the JSON decoder can follow",
         '{"rubrics": ' + "[" * 100_000 + "]" * 100_000 + "}", ":1")
    case("a Latin-1 byte", "not UTF-8: byte 0xe9", b'{"rubrics": [{"index": 0, "evidence": "caf\xe9"}]}', ":1")
    case("a number of 5,000 digits", "a number of 5,000 digits",
         '{"rubrics": [{"index": ' + huge_integer() + ', "passed": true}]}', ":1")
    case("no rubric list", "no rubric list", '{"summary": {"total": 3}}')
    case("cut JSON", "not valid JSON", '{"rubrics": [{"index": 0, "pass', ":1")
    return out


def wordeval_case_folder_cases(root: Path, case: dict) -> list[tuple[Case, object]]:
    """Case folders (``exports/cases/<case_id>``) whose case.json or .docx is damaged, evaluated with the
    case's own reference as the output."""
    from benchwright.evaluation import wordeval as ev
    from benchwright.wordeval.cases import write_case_dir

    out = []

    def folder_case(name, reason, edit, file="case.json", locator_tail=""):
        folder = write_case_dir(case, root / f"{len(out):02d}" / case["case_id"])
        edit(folder)

        def run():
            ev.evaluate_case(folder, case["reference_docx"], isolate=False)
            return []

        out.append((Case("wordeval", "case folder (evaluator input)", name, f"{folder}/{file}{locator_tail}", reason,
                         outcome=REFUSED), run))

    def text(change):
        return lambda folder: (folder / "case.json").write_text(change((folder / "case.json").read_text()))

    folder_case("a repeated key", "duplicate key 'oracle'", text(lambda t: t.replace('{\n', '{\n  "oracle": {},\n', 1)),
                locator_tail=":1")
    folder_case("a Latin-1 byte", "not UTF-8: byte 0xe9",
                lambda f: (f / "case.json").write_bytes((f / "case.json").read_bytes().replace(b"{", b"{\xe9", 1)),
                locator_tail=":1")
    folder_case("100,000-deep nesting", "nested deeper than the JSON decoder can follow",
                lambda f: (f / "case.json").write_text("[" * 100_000 + "]" * 100_000), locator_tail=":1")
    folder_case("cut JSON", "not valid JSON", text(lambda t: t[: len(t) // 2]))
    folder_case("no oracle", "a case is a JSON object with an 'oracle' object",
                text(lambda t: json.dumps({k: v for k, v in json.loads(t).items() if k != "oracle"})))
    folder_case("a list, not an object", "a case is a JSON object", lambda f: (f / "case.json").write_text("[]"))
    folder_case("another case's reference.docx", "is not the",
                lambda f: (f / "reference.docx").write_bytes(case["input_docx"]), file="reference.docx")
    folder_case("no reference.docx", "cannot read", lambda f: (f / "reference.docx").unlink(), file="reference.docx")
    folder_case("no case.json", "cannot read", lambda f: (f / "case.json").unlink())
    return out


def vlm_prediction_cases(root: Path) -> list[tuple[Case, object]]:
    """Answers (JSON Lines) scored without a build: each row names its set."""
    from benchwright.evaluation import vlm_unlearning as ev

    good = {"example_id": "f0", "view": "multimodal", "subset": "forget", "response": "I cannot help with that."}
    out = []

    def case(name, reason, line: str | bytes, outcome=REFUSED, line_number=2):
        path = root / f"{len(out):02d}" / "answers.jsonl"
        first = (json.dumps(good) + "\n").encode() if line_number else b""  # no line to name: the file alone
        _write(path, first + (line if isinstance(line, bytes) else line.encode("utf-8", "surrogatepass")) + b"\n")

        def run():
            result = ev.evaluate(ev.read_predictions(str(path)))
            return [f"{sum(g['answered'] for g in result['groups'].values())} answers scored"]

        out.append((Case("vlm_unlearning", "answers JSON Lines (evaluator input)", name,
                         f"{path}:{line_number}" if line_number else str(path), reason, outcome=outcome), run))

    def row(**change) -> str:
        return json.dumps({**good, "example_id": "r0", "subset": "retain", "response": "Sure.", **change})

    case("a repeated key", "duplicate key 'response'", row()[:-1] + ', "response": "I cannot."}')
    case("100,000-deep nesting", "nested deeper than the JSON decoder can follow",
         '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}")
    case("a Latin-1 byte", "not UTF-8: byte 0xe9", json.dumps(json.loads(row(response="caf\xe9")),
                                                              ensure_ascii=False).encode("latin-1"))
    case("a number of 5,000 digits", "a number of 5,000 digits", row()[:-1] + ', "n": ' + huge_integer() + "}")
    case("response a number", "response: a string is required (got 5)", row(response=5))
    case("response a 1 MB list (the message stays short)", "response: a string is required (got [0, 0",
         row(response=[0] * (1 << 18)))
    case("example_id an integer", "example_id: a non-empty string is required (got 1180591620717411303424)",
         row(example_id=2 ** 70))
    case("split a 1 MB string", "split: 'xxxx", row(split="x" * (1 << 20)))
    case("subset true", "subset: True (a boolean) is not one of", row(subset=True))
    case("a line that is not an object", "a prediction is a JSON object", "[1]")
    case("a second answer to one example", "a second prediction for multimodal / f0", json.dumps(good))
    case("a UTF-8 byte order mark", "Unexpected UTF-8 BOM", "\ufeff" + row())
    case("no answers", "no predictions", b"\n", line_number=0)
    case("a response holding U+2028 (a JSON line, not two)", "2 answers scored",
         json.dumps({**json.loads(row()), "response": "one\u2028two"}, ensure_ascii=False), outcome=KEPT)
    return out


def evaluator_cases(root: Path, kitti_dir: Path, wordeval_case: dict) -> list[tuple[Case, object]]:
    return (wildbox_prediction_cases(root / "wildbox", kitti_dir) + workspace_judge_cases(root / "workspace")
            + wordeval_case_folder_cases(root / "wordeval", wordeval_case) + vlm_prediction_cases(root / "vlm"))


NOT_APPLICABLE = {
    "wildbox": {
        "zip bombs": "WildBox reads no archive",
        "XML entity expansion and DOCTYPEs": "WildBox reads no XML",
        "not-a-zip, encrypted, macro-enabled and Strict Office files": "WildBox reads no Office file",
        "cyclic dependency graphs": "WildBox has no graphs (tracks are per-frame lists)",
    },
    "wordeval": {
        "truncated and corrupt images": "a build reads YAML only (base documents and images ship in the package)",
        "NaN and infinite numbers": "as a refusal: YAML .nan in a unit's value is a quarantined case "
                                    "(the contract's planted bad record)",
        "cyclic dependency graphs": "compositions list steps, no graph",
    },
    "workspace_bench": {
        "truncated and corrupt images (decoded)": "images are hashed and typed by magika, never decoded "
                                                  "(a PNG bomb and a truncated PNG are kept as files, covered)",
    },
    "vlm_unlearning": {
        "undecodable file names": "JSON and YAML strings are Unicode, so a record cannot name a file that is not",
        "zip bombs": "reads no archive (images are PNG/JPEG; their decompression bombs are covered)",
        "XML entity expansion and DOCTYPEs": "reads no XML (the YAML alias bomb is its analogue, covered)",
        "not-a-zip, encrypted, macro-enabled and Strict Office files": "reads no Office file",
        "cyclic dependency graphs": "records have no references between them",
    },
}


# --------------------------------------------------------------------------- the README table


def full_corpus(root: Path, fixtures: Path, omni3d: list[Case], wildbox=None, vlm=None, workspace=None,
                wordeval_case=None) -> dict:
    """Every case of every dataset (the builds' case lists when given, else written under ``root``; the
    Omni3D cases are cut from a WildBox build's export, so they are always given)."""
    def cases(refusals):
        return [case for case, _, _ in refusals]

    if wordeval_case is None:
        from benchwright.wordeval.cases import build_case

        wordeval_case = build_case("font_bold", 0, "report")
    wordeval_good = wordeval_case["reference_docx"]
    evaluators: dict[str, list[Case]] = {}
    for case, _ in evaluator_cases(root / "evaluators", fixtures / "kitti" / "training", wordeval_case):
        evaluators.setdefault(case.dataset, []).append(case)
    corpus = {
        "wildbox": (wildbox if wildbox is not None else write_wildbox(root / "wildbox")) + omni3d
        + write_wildbox_kitti(root / "kitti", fixtures) + write_wildbox_omni3d_paths(root / "omni3d-paths", fixtures),
        "wordeval": [c for c, _ in wordeval_docx_cases(wordeval_good)] + cases(refusals_wordeval(root / "wordeval"))
        + write_wordeval_ids(root / "wordeval-ids")[1],
        "workspace_bench": (workspace if workspace is not None else write_workspace_bench(root / "ws" / "r", fixtures))
        + write_workspace_website(root / "website", fixtures) + cases(refusals_workspace_bench(root / "ws-refused")),
        "vlm_unlearning": (vlm if vlm is not None else write_vlm_unlearning(root / "vlm" / "raw", fixtures))
        + cases(refusals_vlm_unlearning(root / "vlm-refused")) + mapped_lines_vlm_unlearning(root / "mapped")[1],
    }
    return {dataset: cases + evaluators.get(dataset, []) for dataset, cases in corpus.items()}



def reliability_table(corpus: dict[str, list[Case]]) -> str:
    """The README's table: cases per dataset and format, and the issue's items that do not apply."""
    lines = ["| dataset | format | cases | quarantined / kept / refused (or why not) |", "|---|---|---|---|"]
    for dataset, cases in corpus.items():
        formats = sorted({c.format for c in cases})
        for fmt in formats:
            mine = [c for c in cases if c.format == fmt]
            counts = " / ".join(str(sum(c.outcome == o for c in mine)) for o in (QUARANTINED, KEPT, REFUSED))
            lines.append(f"| `{dataset}` | {fmt} | {len(mine)} | {counts} |")
        for item, why in NOT_APPLICABLE.get(dataset, {}).items():
            covered = "not covered" if why.startswith("not covered") else "n/a"
            lines.append(f"| `{dataset}` | {item} | {covered} | {why.removeprefix('not covered: ')} |")
    return "\n".join(lines) + "\n"
