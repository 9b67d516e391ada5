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
    from benchwright.wildbox.synth import write_wildbox_source

    write_wildbox_source(root, scale="tiny", seed=0)
    segs = _segments(root)
    rel = lambda p: p.relative_to(root).as_posix()  # noqa: E731
    cases: list[Case] = []

    def add(fmt, name, locator, reason, unit=None, outcome=QUARANTINED):
        cases.append(Case("wildbox", fmt, name, locator, reason, unit, outcome))

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
    cameras_case("absolute image_name", "leaves the segment folder",
                 first_camera(lambda c: c.update(image_name="/etc/hostname")))
    cameras_case("duplicate key in an object", "duplicate key 'cameras'",
                 text='{"cameras": [], "cameras": []}')

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
    tracking_case("huge value: a track id past int64", "out of range",
                  lambda d: d["tracks"].update({"9" * 30: next(iter(d["tracks"].values()))}))
    tracking_case("huge value: a frame index past int64", "out of range",
                  lambda d: next(iter(d["tracks"].values()))["frames"].__setitem__(0, 10 ** 30))
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
    json_case("absolute image path", "leaves the image root", lambda r: r.update(image="/etc/hostname"))
    token = record(lambda r: [p.update({k: f"<image> {v}" for k, v in p.items()}) for p in r["instr-resp"]])
    extra.append(token)  # kept: LLaVA's image token written literally is escaped where a model reads it
    add("VLGuard JSON", "LLaVA's image token in an instruction and a response", token, "", outcome=KEPT)
    dup = record()
    dup["id"] = train[0]["id"]
    extra.append(dup)
    add("VLGuard JSON", "duplicate id", dup, "duplicate id", locator=f"train.json#id={dup['id']}[index=")

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

    for stem, records in (("train", train + extra), ("test", test)):
        (root / stem).mkdir(parents=True, exist_ok=True)
        (root / f"{stem}.json").write_text(json.dumps(records, indent=1))
        for r in records:
            if not isinstance(r, dict) or not isinstance(r.get("image"), str) or r["image"].startswith(("/", "..")):
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
    source("wrong JSON type: an object, not an array", {"train.json": '{"id": "a"}'}, "VLGuard JSON",
           "expected a JSON array", "train.json")
    for name, text, reason in (
            ("NaN score", '{"train/a#0": NaN}', "not a finite number"),
            ("infinite (1e999) score", '{"train/a#0": 1e999}', "not a finite number"),
            ("huge value: a 5000-digit score", '{"train/a#0": %s}' % huge_integer(), "not JSON"),
            ("wrong JSON type: a list", "[0.5]", "expected one JSON object"),
            ("duplicate example id", '{"train/a#0": 0.1, "train/a#0": 0.9}', "duplicate key"),
            ("truncated JSON", '{"train/a#0": 0.', "not JSON")):
        path = root / f"scores_{len(out):02d}.json"
        path.write_text(text)
        out.append((Case("vlm_unlearning", "routing-score file", name, path.name, reason, outcome=REFUSED), path, []))
    path = root / f"scores_{len(out):02d}.jsonl"
    path.write_text('{"example_id": "train/a#0", "score": 0.5}\n{"example_id": "train/a#0", "score": 0.7}\n')
    out.append((Case("vlm_unlearning", "routing-score file", "duplicate example id (JSON Lines)", f"{path.name}:2",
                     "appears twice", outcome=REFUSED), path, []))
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
             '{"id": 6, "img": "../../a.png", "q": "Q?", "a": "A"}']
    (root / "forget.jsonl").write_text("\n".join(lines) + "\n")
    (root / "images" / "a.png").write_bytes(_vlm_image("a.png"))
    fmt = "mapped JSON Lines"
    return root, [Case("vlm_unlearning", fmt, "truncated line", "forget.jsonl#line=2", "not valid JSON", "record"),
                  Case("vlm_unlearning", fmt, "huge value: a 5000-digit id", "forget.jsonl#line=3", "not valid JSON",
                       "record"),
                  Case("vlm_unlearning", fmt, "duplicate key", "forget.jsonl#line=4", "duplicate key 'id'", "record"),
                  Case("vlm_unlearning", fmt, "wrong JSON type: a list", "forget.jsonl#index=4", "a record is an object",
                       "record"),
                  Case("vlm_unlearning", fmt, "path traversal in the image field", "forget.jsonl#id=6",
                       "leaves the image root", "record")]


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
    # the runner's Lite list is its tasks_lite/<id>/ folders (copies of the full tasks' folders)
    for aid in (1, 11):
        shutil.copytree(root / "tasks" / str(aid), root / "tasks_lite" / str(aid))
    add("Lite folders (tasks_lite/)", "the Lite copy of a quarantined task", "tasks_lite/11",
        "Lite task 11 is quarantined", "lite_task")
    return cases


def write_workspace_website(root: Path, fixtures: Path) -> list[Case]:
    """The website release (``tasks.json``): three real tasks and bad elements of its ``full`` list; its
    Lite list (``tasks-lite.js``, the real file's shape) with two real tasks and bad entries."""
    real = json.loads((fixtures / "workspace_bench" / "tasks_head.json").read_text())["full"][:3]
    bad = [[1, 2], dict(real[0], absolute_id="seven"), dict(real[1]), dict(real[2], absolute_id=30, persona=None),
           dict(real[2], absolute_id=31, task=real[2]["task"] + " \udcff")]  # json.dumps escapes it: "\\udcff"
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
                 "tasks.json#absolute_id=31", "", "task", KEPT)]


def refusals_workspace_bench(root: Path) -> list[tuple[Case, Path, list]]:
    out = []
    fmt = "task list (tasks.json)"
    for name, files, reason, locator in (
            ("truncated JSON", {"tasks.json": '{"full": [{"absolute_id": 1, '}, "not JSON", "tasks.json"),
            ("wrong JSON type: full is an object", {"tasks.json": '{"full": {}}'}, "'full' list", "tasks.json"),
            ("huge value: a 5000-digit id", {"tasks.json": '{"full": [{"absolute_id": %s}]}' % huge_integer()},
             "not JSON", "tasks.json"),
            ("duplicate key", {"tasks.json": '{"full": [], "full": []}'}, "duplicate key 'full'", "tasks.json"),
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
    from benchwright.wordeval.synth import write_catalogue_source

    out = []
    fmt = "catalogue YAML"

    template = root / "tiny"
    write_catalogue_source(template, scale="tiny")

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
    source("not UTF-8", "can't decode", "compositions.yaml", write("compositions.yaml", b"templates: [\xff]\n"))

    def unit_edit(change):
        def edit(folder):
            path = sorted((folder / "units").glob("*.yaml"))[0]
            import yaml

            doc = yaml.safe_load(path.read_text(encoding="utf-8"))
            change(doc)
            path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
        return edit

    source("a unit without its id", "KeyError: 'id'", "units/", unit_edit(lambda d: d["units"][0].pop("id")))
    source("wrong YAML type: a unit is a string", "#units[", "units/", unit_edit(lambda d: d["units"].append("unit")))
    source("duplicate unit id", "duplicate unit id", "", unit_edit(
        lambda d: d["units"].append(json.loads(json.dumps(d["units"][0])))))
    source("a missing part", "missing instructions.yaml", "instructions.yaml",
           lambda folder: (folder / "instructions.yaml").unlink())

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


def full_corpus(root: Path, fixtures: Path, wildbox=None, vlm=None, workspace=None, wordeval_case=None) -> dict:
    """Every case of every dataset (the builds' case lists when given, else written under ``root``)."""
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
        "wildbox": wildbox if wildbox is not None else write_wildbox(root / "wildbox"),
        "wordeval": [c for c, _ in wordeval_docx_cases(wordeval_good)] + cases(refusals_wordeval(root / "wordeval")),
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
