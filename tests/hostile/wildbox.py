"""WildBox's hostile corpus (``tests/hostile/__init__.py`` says what a hook declares): the tiny raw source
with every case (segments, frames, masks, boxes, point clouds), KITTI and Omni3D sources, and the evaluator's
prediction files."""
from __future__ import annotations

import json
import posixpath
import shutil
from pathlib import Path

from tests.hostile import (DEEP, KEPT, QUARANTINED, REFUSED, TOO_DEEP, BOMB_RSS_LIMIT_MB,
                           Case, Corpus, CorpusBuild, assert_every_case, guarded_build, huge_integer, jpeg_claiming,
                           peak_rss_growth_mb, png_bomb, quarantine_rows, reconciled_units, undecodable_name, write_file)

# A build's own growth is well below it (docs/RELIABILITY.md lists the measured peaks); the build that decoded its
# 20000 x 20000 mask before the fix grew 765 MB
PEAK_LIMIT_MB = 600

NOT_APPLICABLE = {
    "zip bombs": "WildBox reads no archive",
    "XML entity expansion and DOCTYPEs": "WildBox reads no XML",
    "not-a-zip, encrypted, macro-enabled and Strict Office files": "WildBox reads no Office file",
    "cyclic dependency graphs": "WildBox has no graphs (tracks are per-frame lists)",
}


def corpus(work: Path, fixtures: Path) -> Corpus:
    root = work / "wildbox"
    return Corpus(root, write_wildbox(root))


def other_cases(root: Path, fixtures: Path, build: CorpusBuild) -> list[Case]:
    """Omni3D documents cut from the corpus build's export, KITTI folders, Omni3D file paths."""
    return (write_omni3d(root / "omni3d", build.built) + write_wildbox_kitti(root / "kitti", fixtures)
            + write_wildbox_omni3d_paths(root / "omni3d-paths", fixtures))


def evaluator_cases(root: Path, fixtures: Path) -> list[tuple[Case, object]]:
    return wildbox_prediction_cases(root, fixtures / "kitti" / "training")


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

    from benchwright.formats import geometry

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
        path = write_file(root / "json" / f"{len(out):02d}" / "p.json", text)
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
                write_file(folder / fname, data)

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




# --------------------------------------------------------------------------- checks


def check_counts_reconcile_with_the_damage(build: CorpusBuild, tmp_path: Path, fixtures: Path):
    import pyarrow.parquet as pq

    root, built, cases = build.source, build.built, build.cases
    assert len(cases) >= 30
    units = reconciled_units(built)
    segment_cases = [c for c in cases if c.unit == "segment" and c.outcome == QUARANTINED]
    assert units["segment"]["quarantined"] == len(segment_cases)
    assert units["frame"]["quarantined"] == sum(c.unit == "frame" and c.outcome == QUARANTINED for c in cases)
    assert units["box"]["quarantined"] >= sum(c.unit == "box" for c in cases)
    published = {r["segment_id"] for f in (built / "segments").glob("*.parquet")
                 for r in pq.read_table(f, columns=["segment_id"]).to_pylist()}
    frames = {r["image_path"]: r["image"]["bytes"] for f in (built / "frames").glob("*.parquet")
              for r in pq.read_table(f, columns=["image_path", "image"]).to_pylist()}
    for case in cases:
        if case.outcome == KEPT and case.unit == "segment":
            assert case.locator in published
        if case.outcome == KEPT and case.unit == "frame":  # published with its bytes as they are
            assert frames[case.locator] == (root / case.locator).read_bytes(), case
    # nothing read from outside the source: the symlinked frame's target is not published
    outside = (root.parent / "outside.jpg").read_bytes()
    assert outside not in frames.values()


def check_hostile_names_read_back_through_its_exports_and_evaluator(build: CorpusBuild, tmp_path: Path,
                                                                     fixtures: Path):
    """Whatever the build publishes, its own exports and evaluator read back: the video folders named with a
    space, a tab and a newline, quotes and a leading dash, non-ASCII and 255 bytes are in frame_map.txt (one
    line, four fields each), the Omni3D export's file paths name its images, and the export's own KITTI rows
    given as predictions score 100 (every file mapped to its frame; before, a name with a space split the
    frame_map line and valid predictions were refused)."""
    import pyarrow.parquet as pq

    from benchwright.evaluation.wildbox import evaluate_paths
    from benchwright.loaders.wildbox import KITTI_IMAGE_SETS, parse_frame_map_line

    built = build.built
    kitti = built / "exports" / "kitti"
    lines = (kitti / "frame_map.txt").read_text(encoding="utf-8").split("\n")
    fmap = {f["frame_id"]: f for f in map(parse_frame_map_line, lines) if f}
    published = {r["frame_id"] for f in (built / "frames").glob("*.parquet")
                 for r in pq.read_table(f, columns=["frame_id"]).to_pylist()}
    assert set(fmap) == published
    for video in HOSTILE_FOLDER_NAMES:
        assert any(fid.startswith(f"{video}/seg1/") for fid in fmap), video
        assert any(f["image"].startswith(f"exports/images/{video}/") and (built / f["image"]).is_file()
                   for f in fmap.values())
    for export in sorted((built / "exports" / "omni3d").glob("*.json")):
        assert all((built / image["file_path"]).is_file() for image in json.loads(export.read_text())["images"])
    for split, listed in KITTI_IMAGE_SETS.items():
        preds = tmp_path / split
        preds.mkdir()
        names = (kitti / "ImageSets" / f"{listed}.txt").read_text().split()
        for name in names:
            rows = (kitti / "training" / "label_2" / f"{name}.txt").read_text().splitlines()
            (preds / f"{name}.txt").write_text("".join(f"{row} 0.9000\n" for row in rows))
        metrics = evaluate_paths(built, preds, split)
        assert metrics["ap2d_agnostic@0.50"]["micro"] == 100.0, split
        assert metrics["meta"]["n_pred"] == sum(1 for f in preds.iterdir() for _ in f.read_text().splitlines()) > 0
        assert metrics["meta"]["n_pred_outside_split"] == 0


def check_auxiliary_files_that_cannot_be_read_change_no_label(build: CorpusBuild, tmp_path: Path, fixtures: Path):
    """A point cloud that cannot be read leaves its segment's boxes unmeasured (support_points -1, as without a
    cloud), never 0 points in every box; a 16-bit mask of 0 and 1 gives the box its SAM3 extent (read as grey
    at 8 bits it was empty, and the box fell back to VGGT's). Both fail before the fix."""
    import pyarrow.parquet as pq

    built, cases = build.built, build.cases
    boxes = [r for f in (built / "boxes").glob("*.parquet")
             for r in pq.read_table(f, columns=["segment_id", "track_id", "frame_index", "support_points",
                                                "bbox_source"]).to_pylist()]
    clouds = {c.locator.split("/vggt_results/")[0] for c in cases if c.format == "point cloud PLY"}
    assert len(clouds) == 3  # truncated, not a PLY, symlinked out of the source (never read)
    for seg in clouds:
        assert {b["support_points"] for b in boxes if b["segment_id"] == seg} == {-1}, seg
    assert any(b["support_points"] >= 0 for b in boxes if b["segment_id"] not in clouds)
    deep = next(c for c in cases if c.name.startswith("16-bit greyscale"))
    seg, rest = deep.locator.split("/vggt_results/tracking_summary.json#track=")
    track, frame = rest.split(",frame_index=")
    (box,) = [b for b in boxes if (b["segment_id"], b["track_id"], b["frame_index"]) == (seg, int(track), int(frame))]
    assert box["bbox_source"] == 0  # sam3


def check_every_kitti_and_omni3d_path_case_is_met(build: CorpusBuild, tmp_path: Path, fixtures: Path):
    """KITTI object and tracking folders and Omni3D JSON: every name that becomes a path resolved through the
    source's ``files.Root`` (nothing read from outside it: before, ``../x.jpg`` and an absolute path were read
    and embedded); BOMs, bytes that are not UTF-8 and misspelt calibration keys refused naming file and line;
    names with spaces kept. Through the build's stage functions (``wildbox_stage_rows``), not a build."""
    from tests.wildbox_helpers import wildbox_stage_rows

    cases = write_wildbox_kitti(tmp_path / "kitti", fixtures)
    omni3d = write_wildbox_omni3d_paths(tmp_path / "omni3d", fixtures)
    rows, published = [], {"segment_id": set(), "image_path": set()}
    for source in (tmp_path / "kitti" / "object", tmp_path / "kitti" / "tracking", tmp_path / "omni3d"):
        more, made = wildbox_stage_rows(source)
        rows += more
        for key in published:
            published[key] |= made[key]
    assert len(cases) + len(omni3d) >= 15
    assert_every_case(cases + omni3d, rows)
    assert "kitti/frame 08 é" in published["segment_id"] and "images/my frame 01 é.png" in published["image_path"]
    assert not any("omni3d_outside" in path for path in published["image_path"])  # nothing from outside was read


def check_every_omni3d_case_is_quarantined_with_its_reason(build: CorpusBuild, tmp_path: Path, fixtures: Path):
    """A second build, of Omni3D documents cut from the corpus build's export that list one folder's images
    between them (or the same images twice), and damaged documents and records: each refused alone, the rest
    published; before the fix the duplicate frame and segment ids stopped the whole build, and the rest
    crashed their document."""
    import pyarrow.parquet as pq

    root = tmp_path / "omni3d"
    cases = write_omni3d(root, build.built)
    built, peak = guarded_build("wildbox", root, tmp_path / "out", max_bad_fraction=1.0)
    assert peak < PEAK_LIMIT_MB, peak
    assert len(cases) >= 9
    assert_every_case(cases, quarantine_rows(built))
    reconciled_units(built)
    frames = [r for f in (built / "frames").glob("*.parquet")
              for r in pq.read_table(f, columns=["frame_id", "segment_id"]).to_pylist()]
    assert len({r["frame_id"] for r in frames}) == len(frames)
    split = next(c.locator for c in cases if c.outcome == KEPT)
    listed = [json.loads((root / "exports" / "omni3d" / f"split_{x}.json").read_text())["images"] for x in "ab"]
    assert sum(r["segment_id"] == split for r in frames) == sum(map(len, listed)) >= 4
    segments = [r["segment_id"] for f in (built / "segments").glob("*.parquet")
                for r in pq.read_table(f, columns=["segment_id"]).to_pylist()]
    assert segments.count(split) == 1


def check_mask_bomb_is_refused_before_decoding(build: CorpusBuild, tmp_path: Path, fixtures: Path):
    """A 20000 x 20000 PNG of zeros (400 MB decoded) against its 518 x 294 frame: refused from its header."""
    from benchwright.wildbox.images import LocalFiles, mask_extent

    mask = tmp_path / "bomb.png"
    mask.write_bytes(png_bomb(20000, 20000))
    grown = peak_rss_growth_mb(lambda: mask_extent(LocalFiles, str(mask), 518 * 294))
    assert mask_extent(LocalFiles, str(mask), 518 * 294) is None
    assert grown < BOMB_RSS_LIMIT_MB


def check_frame_truncation_check_walks_real_images_to_their_end(build: CorpusBuild, tmp_path: Path, fixtures: Path):
    """The frame check on real JPEGs (EXIF thumbnails, 300 dpi, 4:2:0; and each re-encoded progressive)
    and real PNGs (KITTI frames): bytes after the end marker (padding, a trailer, a second picture) are
    not a truncation; a cut anywhere is, even right after an EXIF thumbnail's own end-of-image marker or
    when the cut file is then padded (the old check, an end marker in the last KiB, got both wrong)."""
    import io

    from PIL import Image

    from benchwright.wildbox.images import truncation_problem

    images = sorted((fixtures / "docx" / "python-docx").glob("*.jp*g")) + sorted(
        (fixtures / "kitti" / "training" / "image_2").glob("*.png"))
    real = [(p.name, p.read_bytes()) for p in images]
    for name, data in list(real):
        if name.endswith(("jpg", "jpeg")):
            out = io.BytesIO()
            Image.open(io.BytesIO(data)).convert("RGB").save(out, "JPEG", progressive=True, quality=90)
            real.append((f"{name} (progressive)", out.getvalue()))
    problems = []

    def expect(what, data, fmt, truncated):
        got = truncation_problem(io.BytesIO(data), fmt)
        if bool(got) != truncated:
            problems.append(f"{what}: {got!r}")

    for name, data in real:
        fmt = Image.open(io.BytesIO(data)).format
        expect(name, data, fmt, False)
        for pad, trailer in (("4 KiB of zeros", b"\0" * 4096), ("64 KiB of 0xFF", b"\xff" * 65536),
                             ("a second picture", data), ("4 KiB of a maker's trailer", bytes(range(256)) * 16)):
            expect(f"{name} + {pad}", data + trailer, fmt, False)
        for cut in (len(data) // 4, len(data) // 2, len(data) * 9 // 10, len(data) - 2, len(data) - 1):
            expect(f"{name} cut at {cut}", data[:cut], fmt, True)
            expect(f"{name} cut at {cut}, then 4 KiB of zeros", data[:cut] + b"\0" * 4096, fmt, True)
        thumbnail_end = data.find(b"\xff\xd9") + 2  # an EXIF thumbnail's own end marker, inside APP1
        if fmt == "JPEG" and 2 < thumbnail_end < len(data) // 2:
            expect(f"{name} cut after its EXIF thumbnail", data[:thumbnail_end], fmt, True)
    assert sum("EXIF thumbnail" not in n for n, _ in real) >= 10
    assert not problems, "\n".join(problems)


def check_too_many_bad_records_fail_and_keep_the_previous_publication(build: CorpusBuild, tmp_path: Path,
                                                                     fixtures: Path):
    """The corpus source built with --max-bad-fraction 0 over a copy of its own publication: the build fails
    naming the fraction, publishes nothing and leaves the previous build as it was."""
    import pytest

    from benchwright.errors import BuildError
    from benchwright.layout import MANIFEST
    from tests.wildbox_helpers import build_wildbox

    out = tmp_path / "out"
    shutil.copytree(build.built, out / "wildbox", symlinks=True)
    before = (out / "wildbox" / MANIFEST).read_bytes()
    with pytest.raises(BuildError, match="max-bad-fraction"):
        build_wildbox(build.source, out, max_bad_fraction=0.0)
    assert (out / "wildbox" / MANIFEST).read_bytes() == before


def check_an_unreadable_source_fails_with_one_clear_message(build: CorpusBuild, tmp_path: Path, fixtures: Path):
    import tempfile

    import pytest

    from benchwright.errors import SourceError
    from tests.wildbox_helpers import build_wildbox

    system_temp = tmp_path / "system-temp"
    system_temp.mkdir()
    saved, tempfile.tempdir = tempfile.tempdir, str(system_temp)
    try:
        with pytest.raises(SourceError, match="not a folder"):
            build_wildbox(tmp_path / "does-not-exist", tmp_path / "out")
        (tmp_path / "empty" / "junk").mkdir(parents=True)
        with pytest.raises(SourceError, match="no <video>/<segment>/ folders"):
            build_wildbox(tmp_path / "empty", tmp_path / "out")
    finally:
        tempfile.tempdir = saved
    assert not (tmp_path / "out" / "wildbox").exists()
    # A source refused while the pipeline graph is built leaves nothing in the system temp folder
    # (Beam's Pipeline() makes a folder there that only run() removes).
    assert sorted(p.name for p in system_temp.iterdir()) == []


def check_a_source_whose_every_segment_is_broken_fails(build: CorpusBuild, tmp_path: Path, fixtures: Path):
    import pytest

    from benchwright.errors import BuildError
    from tests.wildbox_helpers import build_wildbox, tiny_source

    root = tiny_source(tmp_path / "raw")
    for seg in sorted(p.parent.parent for p in root.glob("*/*/vggt_results/cameras.json")):
        (seg / "vggt_results" / "cameras.json").write_text("not json")
    with pytest.raises(BuildError, match="yielded nothing|max-bad-fraction"):
        build_wildbox(root, tmp_path / "out")
    assert not (tmp_path / "out" / "wildbox").exists()
