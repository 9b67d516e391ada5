"""WildBox raw formats: one parser per format, each producing the same canonical ``RawSegment``
(``benchwright.wildbox.segments``).

Formats: the WildBox raw release (``<video>/<segment>/`` with VGGT cameras and tracks, SAM3
masks, a point cloud), KITTI object folders (``label_2``, ``calib``, ``image_2``), KITTI tracking
folders (``label_02/<seq>.txt``, ``calib/<seq>.txt``, ``image_02/<seq>/``) and Omni3D JSON.
``discover`` tells which one a source is and lists its units of work; ``parse_unit`` reads one.
"""
from __future__ import annotations

import dataclasses
import os
import posixpath
import re

import fsspec
from fsspec.implementations.local import LocalFileSystem
import numpy as np

from benchwright import strict_json
from benchwright.errors import RecordError, SourceError
from benchwright.fields import clip
from benchwright.files import Root, name_problem
from benchwright.formats import kitti
from benchwright.formats.omni3d import read_omni3d
from benchwright.ranges import check_value, fits, integer_ranges, out_of_range
from benchwright.records import FILTERED, Reject
from benchwright.schemas import wildbox as schema
from benchwright.wildbox.segments import Observations, RawFrame, RawSegment, integer


def _load_json(fs, path: str, locator: str, source: Root):
    _refuse_linked_out(source, path, locator)
    try:
        with fs.open(path, "rb") as f:
            return strict_json.load(f)
    except FileNotFoundError:
        raise RecordError(locator, "file is missing") from None
    except ValueError as err:  # JSONDecodeError, UnicodeDecodeError, an integer past Python's digit limit, a duplicate key
        raise RecordError(locator, f"malformed JSON: {err}") from None


def _source_root(fs, root: str) -> Root:
    """The source folder, as the names its files give are resolved below it (``files.Root``)."""
    return Root(root, "the source", isinstance(fs, LocalFileSystem))


def _refuse_linked_out(source: Root, path: str, locator: str) -> None:
    """A file the parser would read that a symlink puts outside the source: refused unread, naming it."""
    problem = source.link_problem(path)
    if problem:
        raise RecordError(locator, f"the file {problem}")


def _matrix(value, shape, locator: str, field: str) -> np.ndarray:
    try:
        m = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise RecordError(locator, f"{field} is not numeric") from None
    if m.shape != shape:
        raise RecordError(locator, f"{field} has shape {m.shape}, expected {shape}")
    return m


def _files_under(fs, folder: str, resolves_outside) -> tuple[set[str], set[str]]:
    """(every file below ``folder``, as ``fs.find`` names them; those of them whose bytes lie outside the
    source, by its ``files.outside_of`` check ``resolves_outside``: a file symlinked out, or any file
    under a folder symlinked out). A local folder is
    listed with os.scandir (fsspec stats each of a segment's thousands of masks); a symlinked folder is
    followed once (a link back to a folder already listed, a loop, is not)."""
    if not isinstance(fs, LocalFileSystem):
        return (set(fs.find(folder)) if fs.exists(folder) else set()), set()  # object storage has no links
    found, outside = set(), set()
    # the folder itself may lie outside (a segment's sam3_masks/ linked out): then everything under it does
    stack, listed = [(folder, resolves_outside(folder))], {os.path.realpath(folder)}
    while stack:
        path, linked_out = stack.pop()
        try:
            entries = list(os.scandir(path))
        except (FileNotFoundError, NotADirectoryError):
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                stack.append((entry.path, linked_out))
            elif entry.is_symlink() and entry.is_dir():  # is_symlink: no system call
                real = os.path.realpath(entry.path)
                if real not in listed:
                    listed.add(real)
                    stack.append((entry.path, linked_out or resolves_outside(entry.path)))
            elif entry.is_file():
                found.add(entry.path)
                if linked_out or (entry.is_symlink() and resolves_outside(entry.path)):
                    outside.add(entry.path)
    return found, outside


OUTSIDE_LINK = "a symlink to a file outside the source (not followed)"


def parse_wildbox_segment(source: str, seg_rel: str | bytes) -> RawSegment:
    """One ``<video>/<segment>/`` folder of the WildBox raw release (bytes: a folder name that is not
    UTF-8, see ``list_wildbox_segments``)."""
    if isinstance(seg_rel, bytes):
        raise RecordError(seg_rel.decode("utf-8", "backslashreplace"), "folder name is not valid UTF-8")
    fs, root = fsspec.core.url_to_fs(source)
    seg_path = posixpath.join(root, seg_rel)
    segment_id, species_folder = segment_of(root, seg_rel)
    source = _source_root(fs, root)
    frames = _read_cameras(fs, root, seg_rel, source)
    trk_loc = f"{seg_rel}/vggt_results/tracking_summary.json"
    obs, masks_outside = _read_tracks(fs, root, trk_loc, seg_path, source, frames)
    ply = posixpath.join(seg_path, "vggt_results", "point_cloud.ply")
    has_ply = fs.exists(ply) or (source.local and os.path.islink(ply))  # (a link to a missing file: said unreadable)
    ply_problem = source.link_problem(ply) if has_ply else None
    return obs.segment(segment_id=segment_id, video_id=segment_id.split("/")[0], locator=trk_loc,
                       folder_species=schema.folder_species(species_folder) if species_folder else None,
                       frames=[frames[k] for k in sorted(frames)],
                       point_cloud_url=fs.unstrip_protocol(ply) if has_ply else None,
                       point_cloud_problem=f"the file {ply_problem}" if ply_problem else None,
                       mask_problems={fs.unstrip_protocol(m): OUTSIDE_LINK for m in sorted(masks_outside)})


def _outside(source: Root):
    """Whether a local file, through a symlink at any level of its path, lies outside the source (its bytes are
    not the source's); object storage has no links."""
    return lambda path: source.link_problem(path) is not None


def _read_cameras(fs, root: str, seg_rel: str, source: Root) -> dict[int, RawFrame]:
    """The segment's frames by frame index, from its ``vggt_results/cameras.json``."""
    cam_loc = f"{seg_rel}/vggt_results/cameras.json"
    cameras = _load_json(fs, posixpath.join(root, cam_loc), cam_loc, source)
    if not isinstance(cameras, dict) or not isinstance(cameras.get("cameras"), list) or not cameras["cameras"]:
        raise RecordError(cam_loc, 'expected {"cameras": [...]} with at least one camera')
    frames = {}
    segment = Root(posixpath.join(root, seg_rel), "the segment folder", source.local)  # what an image_name may name
    outside = _outside(source)
    for i, cam in enumerate(cameras["cameras"]):
        where = f"{cam_loc}#cameras[{i}]"
        try:
            fi, name = integer(cam["frame_index"]), str(cam["image_name"])
            size = (integer(cam["image_width"]), integer(cam["image_height"]))
        except (KeyError, TypeError, ValueError) as err:
            raise RecordError(where, f"missing or invalid field: {err}") from None
        K = _matrix(cam.get("intrinsic"), (3, 3), where, "intrinsic")
        ext = _matrix(cam.get("extrinsic"), (3, 4), where, "extrinsic")
        if not (np.isfinite(K).all() and np.isfinite(ext).all()):
            raise RecordError(where, "intrinsic or extrinsic holds NaN or infinite values")
        if fi in frames:
            raise RecordError(where, f"frame_index {fi} appears twice")
        check_value(schema.FRAMES, "frame_index", fi, where)
        problem = segment.lexical_problem(name)  # a name no file has, or one leaving the folder: the segment
        if problem:
            raise RecordError(where, f"image_name {clip(name)} {problem}")
        rel = posixpath.normpath(posixpath.join(seg_rel, name))
        frames[fi] = RawFrame(fi, fs.unstrip_protocol(posixpath.join(root, rel)), rel,
                              np.hstack([K, np.zeros((3, 1))]), size, ext,
                              OUTSIDE_LINK if outside(posixpath.join(root, rel))
                              else None)
    # a frame's id is its file's stem (``<segment>/frame_000001``): two image names of one stem would be one frame
    stems: dict[str, int] = {}
    for fi, frame in sorted(frames.items()):
        stem = posixpath.splitext(posixpath.basename(frame.image_rel))[0]
        if stems.setdefault(stem, fi) != fi:
            raise RecordError(f"{cam_loc}#frame_index={fi}", f"image {frame.image_rel!r} has the file stem of frame "
                                                             f"{stems[stem]}'s image: a frame's id is its stem")
    return frames


def _read_tracks(fs, root: str, trk_loc: str, seg_path: str, source: Root,
                 frames: dict[int, RawFrame]) -> tuple[Observations, set[str]]:
    """The segment's observations, from its ``vggt_results/tracking_summary.json`` and its SAM3 masks; and the
    masks whose bytes lie outside the source (refused unread)."""
    summary = _load_json(fs, posixpath.join(root, trk_loc), trk_loc, source)
    if not isinstance(summary, dict) or not isinstance(summary.get("tracks"), dict):
        raise RecordError(trk_loc, 'expected {"tracks": {...}}')
    mask_dir = posixpath.join(seg_path, "sam3_masks", "masks")
    masks, masks_outside = _files_under(fs, mask_dir, _outside(source))
    stem_of = {fi: posixpath.splitext(posixpath.basename(f.image_rel))[0] for fi, f in frames.items()}
    obs = Observations()
    for tid, track in sorted(summary["tracks"].items(), key=lambda kv: kv[0]):
        where = f"{trk_loc}#track={tid}"
        try:
            track_id = integer(tid)
            fr = [integer(f) for f in track["frames"]]  # an id no column holds refuses its observations (Observations)
            n = len(fr)
            centers = _matrix(track["centers"], (n, 3), where, "centers")
            dims = _matrix(track["dimensions"], (n, 3), where, "dimensions")
            rots = _matrix(track["rotation_matrices"], (n, 3, 3), where, "rotation_matrices")
            boxes = (_matrix(track["bbox_2d"], (n, 4), where, "bbox_2d") if track.get("bbox_2d") is not None
                     else np.full((n, 4), -1.0))
            cls = str(track.get("class_name", ""))
        except (KeyError, TypeError, ValueError) as err:
            raise RecordError(where, f"missing or invalid field: {err}") from None
        boxes = np.where((boxes < 0).any(axis=1, keepdims=True), np.nan, boxes)
        for j, fi in enumerate(fr):
            stem = stem_of.get(fi)
            mask = posixpath.join(mask_dir, f"obj_{track_id}", f"{stem}.png") if stem else None
            obs.add(track_id, fi, centers[j], dims[j][::-1], rots[j], boxes[j], cls,  # VGGT (l, w, h) -> [W, H, L]
                    f"{where},frame_index={fi}", fs.unstrip_protocol(mask) if mask in masks else None)
    return obs, masks_outside


# The authors' source tree puts each species' segments under <species>/WildBox_sam3-vggtv1_processed/WildBox/
# (their preparation script takes the species from that folder); a release, or a species folder, may be the root.
SPECIES_TREE = "WildBox_sam3-vggtv1_processed/WildBox"
SEGMENT_FOLDERS = ("*/*", f"*/{SPECIES_TREE}/*/*", f"{SPECIES_TREE}/*/*")


def segment_of(root: str, seg_rel: str) -> tuple[str, str | None]:
    """(segment id ``<video>/<segment>``, the species folder holding it or None) of a segment folder."""
    parts = seg_rel.split("/")
    tree = SPECIES_TREE.split("/")
    if parts[-4:-2] == tree:  # <species>/<tree>/<video>/<segment>, or <tree>/<video>/<segment> in a species folder
        return "/".join(parts[-2:]), parts[-5] if len(parts) >= 5 else posixpath.basename(root.rstrip("/")) or None
    return seg_rel, None


def list_wildbox_segments(source: str) -> list[str]:
    """Segment folders (those holding ``vggt_results/`` or ``metadata.json``), relative to the source:
    ``<video>/<segment>``, or in the authors' per-species tree (``SEGMENT_FOLDERS``). Two folders of one
    segment id (a video under two species) refuse the source."""
    fs, root = fsspec.core.url_to_fs(source)
    found = set()
    for folder in SEGMENT_FOLDERS:
        for marker in ("vggt_results", "metadata.json"):
            for path in fs.glob(posixpath.join(root, folder, marker)):
                found.add(posixpath.relpath(posixpath.dirname(path), root))
    found = sorted(s for s in found if not any(p.startswith((".", "_")) for p in s.split("/"))
                   and (s.count("/") == 1 or segment_of(root, s)[1] is not None))
    ids: dict[str, str] = {}
    for s in found:
        first = ids.setdefault(segment_of(root, s)[0], s)
        if first != s:
            raise SourceError(f"{source}: segment {segment_of(root, s)[0]} is in two folders, {first} and {s}")
    # a name that is not UTF-8 (a local file system's surrogate escapes) stays bytes: no str coder
    # can carry it, and its segment is quarantined naming it
    return [s if _utf8(s) else s.encode("utf-8", "surrogateescape") for s in found]


def _carried(names: list[str]) -> list:
    """Unit names as Beam can carry them: one that is not UTF-8 (a local file system's surrogate escapes)
    stays bytes, and its unit is quarantined naming it (``parse_unit``)."""
    return [n if _utf8(n) else n.encode("utf-8", "surrogateescape") for n in names]


def _utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


# ---------------------------------------------------------------------------------------------
# KITTI object and tracking folders

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")
_IDENTITY_EXT = np.hstack([np.eye(3), np.zeros((3, 1))])


def _read_text(fs, path: str, locator: str, source: Root) -> str:
    """A KITTI text file (labels, calibration) of the source: refused naming the file and its line when it
    is linked out of the source, missing, unreadable, not UTF-8 or opened by a byte order mark."""
    _refuse_linked_out(source, path, locator)
    try:
        data = fs.cat_file(path)
    except FileNotFoundError:
        raise RecordError(locator, "file is missing") from None
    except OSError as err:
        raise RecordError(locator, f"cannot read: {err.strerror or err}") from None
    return kitti.decode_text(data, locator)


def _image_of(fs, root: str, folder: str, stem: str) -> str:
    """The image file for ``stem`` in ``folder`` (relative); the .png name if none exists (reported later)."""
    for suffix in IMAGE_SUFFIXES:
        rel = f"{folder}/{stem}{suffix}"
        if fs.exists(posixpath.join(root, rel)):
            return rel
    return f"{folder}/{stem}.png"


def _kitti_segment(fs, root: str, segment_id: str, video_id: str, frames: list, objects_by_frame: dict,
                   calib_rel: str, label_rel: str, track_of) -> tuple[RawSegment, list[Reject]]:
    """A RawSegment from KITTI rows (camera frame, so the extrinsic is the identity)."""
    source = _source_root(fs, root)
    calib = kitti.parse_calib(_read_text(fs, posixpath.join(root, calib_rel), calib_rel, source), calib_rel)
    rejects, obs = [], Observations()
    frame_index = integer_ranges(schema.FRAMES)["frame_index"]
    for fi, rel in frames:  # a frame number (an image's file name) the frames config cannot hold: not a frame
        if not fits(fi, *frame_index[:2]):
            rejects.append(Reject("frame", rel, out_of_range("frame_index", fi, frame_index)))
    raw_frames = [RawFrame(fi, fs.unstrip_protocol(posixpath.join(root, rel)), rel, calib.P2, None, _IDENTITY_EXT,
                           OUTSIDE_LINK if source.link_problem(posixpath.join(root, rel)) else None)
                  for fi, rel in frames if fits(fi, *frame_index[:2])]
    for fi, objs in sorted(objects_by_frame.items()):
        for n, (obj, where) in enumerate(objs):
            if obj.is_dontcare:
                rejects.append(Reject("box", where, "DontCare region (not an object)", FILTERED))
                continue
            c = kitti.to_canonical(obj, where)
            obs.add(track_of(obj, n), fi, c["center_cam"], c["dimensions"], c["R_cam"], c["bbox2d"], obj.type, where)
    seg = obs.segment(segment_id=segment_id, video_id=video_id, locator=label_rel, frames=raw_frames,
                      bbox_source="label")
    return seg, rejects


def parse_kitti_object_frame(source: str, stem: str):
    """One frame of a KITTI object folder; each frame is its own segment (KITTI has no videos)."""
    fs, root = fsspec.core.url_to_fs(source)
    label_rel = f"label_2/{stem}.txt"
    text = _read_text(fs, posixpath.join(root, label_rel), label_rel, _source_root(fs, root))
    objects, errors = kitti.parse_label_lines(text, label_rel)
    rows = [(o, f"{label_rel}:{n}") for n, o in _numbered(objects, errors)]
    seg, rejects = _kitti_segment(fs, root, f"kitti/{stem}", stem, [(0, _image_of(fs, root, "image_2", stem))],
                                  {0: rows}, f"calib/{stem}.txt", label_rel, lambda obj, n: n)
    return seg, rejects + [Reject("box", e.locator, e.reason) for e in errors]


def parse_kitti_tracking_sequence(source: str, seq: str):
    """One sequence of a KITTI tracking folder: a segment whose track ids come from the labels."""
    fs, root = fsspec.core.url_to_fs(source)
    label_rel = f"label_02/{seq}.txt"
    text = _read_text(fs, posixpath.join(root, label_rel), label_rel, _source_root(fs, root))
    by_frame, errors = kitti.parse_tracking_lines(text, label_rel)
    lines = {}  # the label line of each row, for locators
    for number, line in enumerate(text.split("\n"), start=1):  # numbered as kitti numbers them ("\n" only)
        tokens = line.split()
        if len(tokens) > 2:
            lines.setdefault((tokens[0], tokens[1]), []).append(number)
    image_dir = posixpath.join(root, "image_02", seq)
    images = sorted(p for p in (fs.ls(image_dir, detail=False) if fs.isdir(image_dir) else [])
                    if p.lower().endswith(IMAGE_SUFFIXES))
    frames, not_frames = [], []
    for p in images:  # a sequence's images are named by their frame number (000000.png)
        stem = posixpath.splitext(posixpath.basename(p))[0]
        (frames if stem.isascii() and stem.isdigit() else not_frames).append(
            (int(stem) if stem.isascii() and stem.isdigit() else stem, posixpath.relpath(p, root)))
    known = {fi for fi, _ in frames}
    for fi in sorted(set(by_frame) - known):  # labelled frames without an image are still frames (reported later)
        frames.append((fi, f"image_02/{seq}/{fi:06d}.png"))
    rows = {fi: [(o, f"{label_rel}:{_pop_line(lines, fi, o)}") for o in objs] for fi, objs in by_frame.items()}
    seg, rejects = _kitti_segment(fs, root, f"kitti_tracking/{seq}", seq, sorted(frames), rows,
                                  f"calib/{seq}.txt", label_rel, lambda obj, n: obj.track_id)
    rejects += [Reject("frame", rel, f"image file name {clip(stem)} is not a frame number (a tracking sequence's "
                                     "images are named 000000.png, 000001.png, ...)") for stem, rel in not_frames]
    return seg, rejects + [Reject("box", e.locator, e.reason) for e in errors]


def _numbered(objects, errors):
    """(line number, object) for the good rows of a label file (bad lines are skipped in order)."""
    bad = {int(e.locator.rsplit(":", 1)[1]) for e in errors}
    numbers = (n for n in range(1, 10**9) if n not in bad)
    return [(next(numbers), o) for o in objects]


def _pop_line(lines: dict, frame: int, obj) -> int:
    return lines.get((str(frame), str(obj.track_id)), [0]).pop(0) if lines.get((str(frame), str(obj.track_id))) else 0


# ---------------------------------------------------------------------------------------------
# Omni3D JSON


def parse_omni3d_file(source: str, json_rel: str):
    """The parts of segments an Omni3D document holds (its images grouped by their folder: a folder's
    images may be listed by several documents, which ``merge_segments`` joins), plus rejects."""
    fs, root = fsspec.core.url_to_fs(source)
    source_root = _source_root(fs, root)
    _refuse_linked_out(source_root, posixpath.join(root, json_rel), json_rel)
    try:
        with fs.open(posixpath.join(root, json_rel), "rb") as f:
            doc = strict_json.load(f)
    except (OSError, ValueError) as err:  # unreadable, malformed, a repeated key, nested too deeply
        raise RecordError(json_rel, f"cannot read Omni3D JSON: {err}") from None
    errors = []
    try:
        records = list(read_omni3d(doc, on_error=errors.append, locator=json_rel))
    except SourceError as err:
        raise RecordError(json_rel, str(err)) from None
    rejects = [Reject("box" if "annotation_id" in e.locator else "frame", e.locator, e.reason) for e in errors]
    # A WildBox document (the release's or our export) is normalised already: info.scene_scales holds the
    # scales it applied. Its published boxes are not all the segment's boxes, so normalising again
    # (over the published ones) would move every label.
    info = doc.get("info") if isinstance(doc, dict) else None
    normalised = isinstance(info, dict) and bool(info.get("scene_scales"))
    base = posixpath.dirname(json_rel)
    by_segment: dict[str, list] = {}
    for rec in records:
        path = rec.image.get("file_path")
        rel, problem = _resolve_image(fs, source_root, base, path)
        if problem:  # a path no file has, or one leaving the source: the image is refused with its annotations
            where = f"{json_rel}#image_id={rec.image['id']}"
            rejects.append(Reject("frame", where, problem))
            rejects += [Reject("box", f"{json_rel}#annotation_id={ann['id']}", f"its image ({where}) is refused: "
                                                                                f"{problem}") for ann in rec.annotations]
            continue
        by_segment.setdefault(posixpath.dirname(rel) or ".", []).append((rel, rec))
    segments = []
    for seg_dir, items in sorted(by_segment.items()):
        items.sort(key=lambda item: item[0])
        frames, obs = [], Observations()
        for fi, (rel, rec) in enumerate(items):
            K = np.asarray(rec.image["K"], float)
            size = (int(rec.image["width"]), int(rec.image["height"]))
            frames.append(RawFrame(fi, fs.unstrip_protocol(posixpath.join(root, rel)), rel,
                                   np.hstack([K, np.zeros((3, 1))]), size, _IDENTITY_EXT,
                                   OUTSIDE_LINK if source_root.link_problem(posixpath.join(root, rel)) else None))
            for n, ann in enumerate(rec.annotations):
                box = ann.get("bbox2D_tight") or (
                    [ann["bbox"][0], ann["bbox"][1], ann["bbox"][0] + ann["bbox"][2], ann["bbox"][1] + ann["bbox"][3]]
                    if ann.get("bbox") else [np.nan] * 4)
                obs.add(ann.get("track_id", n), fi, ann["center_cam"], ann["dimensions"], ann["R_cam"], box,
                        str(ann.get("category_name", "")), f"{json_rel}#annotation_id={ann['id']}")
        video = seg_dir.split("/")[-2] if seg_dir.count("/") >= 1 else seg_dir
        segments.append(obs.segment(segment_id=seg_dir, video_id=video, locator=json_rel, frames=frames,
                                    bbox_source="label", normalised=normalised))
    return segments, rejects


def _resolve_image(fs, source: Root, base: str, path) -> tuple[str | None, str | None]:
    """(the image's path relative to the source root, None) or (None, why there is none). A relative
    ``file_path`` is taken relative to the source root, then to the JSON's folder (``base``); an absolute
    one by the tail of it that is a file of the source (released files carry absolute paths from the
    authors' machine), never as it is. Every candidate goes through the source's ``Root``: one that
    leaves the source (``../x.jpg``), or that no file can have, is never a candidate; with none left
    the image is refused."""
    problem = name_problem(path) if path is not None else "is missing"
    if problem:
        return None, f"file_path {clip(path)} {problem}"
    if path.startswith("/"):
        parts = [p for p in path.split("/") if p]
        candidates = ["/".join(parts[i:]) for i in range(len(parts))]
    else:
        candidates = [path, posixpath.join(base, path)] if base else [path]
    inside = [posixpath.normpath(c) for c in candidates if source.lexical_problem(c) is None]
    for rel in inside:
        if fs.exists(source.path(rel)):
            return rel, None
    if inside:  # none exists: the first reading, reported as missing when the frame is read
        return inside[0], None
    return None, f"file_path {clip(path)} {source.lexical_problem(candidates[-1]) if candidates else 'names no file'}"


def merge_segments(keyed):
    """One segment from the parts of it Omni3D documents hold (the stage function after grouping the
    parts by segment id): Omni3D's own ``KITTI_train.json`` and ``KITTI_val.json`` split one folder's
    images. A frame's id is its file's stem, so an image listed twice (by two documents, or twice by one),
    or two images of one stem, is one frame: the first listing (documents in path order, images by path)
    is kept, every other one is quarantined with its boxes, naming both."""
    segment_id, parts = keyed
    parts = sorted(parts, key=lambda part: part.locator)
    if len({part.normalised for part in parts}) > 1:
        given = [part.locator for part in parts if part.normalised]
        raise RecordError(" + ".join(part.locator for part in parts),
                          f"segment {segment_id}: its images are listed by documents that disagree on its scale "
                          f"({', '.join(given)} give info.scene_scales, the others do not)")
    first: dict[str, tuple] = {}  # stem -> (part, frame) of the listing kept
    kept: list[tuple] = []        # (part number, frame)
    for n, part in enumerate(parts):
        for frame in part.frames:
            stem = posixpath.splitext(posixpath.basename(frame.image_rel))[0]
            if stem not in first:
                first[stem] = (part, frame)
                kept.append((n, frame))
                continue
            other_part, other = first[stem]
            what = (f"listed again (first by {other_part.locator})" if other.image_rel == frame.image_rel else
                    f"of the stem of {other.image_rel!r} (first listed by {other_part.locator}; a frame's id is its stem)")
            reason = f"image {frame.image_rel!r} is {what}: one frame, the first listing kept"
            yield Reject("frame", f"{part.locator}#file_path={frame.image_rel}", reason)
            for i in np.flatnonzero(part.frame_index == frame.frame_index):
                yield Reject("box", part.track_locator[i], f"its frame is refused: {reason}")
    if len(parts) == 1 and len(kept) == len(parts[0].frames):
        yield parts[0]
        return
    kept.sort(key=lambda item: item[1].image_rel)
    index = {(n, frame.frame_index): fi for fi, (n, frame) in enumerate(kept)}
    frames = [dataclasses.replace(frame, frame_index=fi) for fi, (_, frame) in enumerate(kept)]
    columns: dict[str, list] = {k: [] for k in ("track_id", "frame_index", "center", "dims_whl", "R", "bbox2d")}
    names, masks, locators = [], [], []
    for n, part in enumerate(parts):
        rows = [i for i, fi in enumerate(part.frame_index.tolist()) if (n, fi) in index]
        columns["frame_index"].append(np.array([index[(n, part.frame_index[i])] for i in rows], dtype=np.int64))
        for key in ("track_id", "center", "dims_whl", "R", "bbox2d"):
            columns[key].append(getattr(part, key)[rows])
        names += [part.class_name[i] for i in rows]
        masks += [part.mask_url[i] for i in rows]
        locators += [part.track_locator[i] for i in rows]
    yield dataclasses.replace(parts[0], locator=" + ".join(part.locator for part in parts), frames=frames,
                              class_name=names, mask_url=masks, track_locator=locators,
                              **{k: np.concatenate(v) for k, v in columns.items()})


# ---------------------------------------------------------------------------------------------
# Which format a source is


def discover(source: str) -> tuple[str, list[str]]:
    """(format, units): ``wildbox`` segments, ``kitti`` frames, ``kitti_tracking`` sequences or ``omni3d`` files."""
    fs, root = fsspec.core.url_to_fs(source)
    if not fs.isdir(root):
        raise SourceError(f"{source}: not a folder (expected a WildBox release, a KITTI folder or Omni3D JSON files)")
    if fs.isdir(posixpath.join(root, "label_2")):
        stems = sorted(posixpath.splitext(posixpath.basename(p))[0]
                       for p in fs.glob(posixpath.join(root, "label_2", "*.txt")))
        return "kitti", _carried(stems)
    if fs.isdir(posixpath.join(root, "label_02")):
        return "kitti_tracking", _carried(sorted(posixpath.splitext(posixpath.basename(p))[0]
                                                 for p in fs.glob(posixpath.join(root, "label_02", "*.txt"))))
    segments = list_wildbox_segments(source)
    if segments:
        return "wildbox", segments
    jsons = sorted(posixpath.relpath(p, root) for p in fs.glob(posixpath.join(root, "**", "*.json"))
                   if not posixpath.basename(p).startswith("."))
    omni = [j for j in jsons if _looks_like_omni3d(fs, posixpath.join(root, j))]
    if omni:
        return "omni3d", _carried(omni)
    raise SourceError(f"{source}: no <video>/<segment>/ folders with vggt_results/ or metadata.json, no KITTI "
                      "label_2/ or label_02/, no Omni3D JSON; is this a WildBox source? "
                      "(`benchwright synth wildbox --out DIR` writes one)")


def _looks_like_omni3d(fs, path: str) -> bool:
    """An Omni3D document opens with its top-level lists (checked on the head, not a full parse)."""
    with fs.open(path, "rb") as f:
        head = f.read(1 << 16)
    return re.search(rb'"(images|annotations)"\s*:\s*\[', head) is not None


# What one unit of work of each format is: the stage reading a source counts these as read.
UNIT_OF = {"wildbox": "segment", "kitti": "segment", "kitti_tracking": "segment", "omni3d": "omni3d_document"}


def parse_unit(source: str, fmt: str, unit: str):
    """Yields RawSegments and Rejects for one unit of a source of format ``fmt``; for an Omni3D document,
    its Rejects and one tuple of the segment parts it holds (``merge_segments`` makes the segments)."""
    if isinstance(unit, bytes) and fmt != "wildbox":  # (a WildBox segment folder's says it is a folder)
        raise RecordError(unit.decode("utf-8", "backslashreplace"), "file name is not valid UTF-8")
    if fmt == "wildbox":
        segments, rejects = [parse_wildbox_segment(source, unit)], []
    elif fmt == "omni3d":
        segments, rejects = parse_omni3d_file(source, unit)
    else:
        seg, rejects = (parse_kitti_object_frame if fmt == "kitti" else parse_kitti_tracking_sequence)(source, unit)
        segments = [seg]
    yield from rejects
    for seg in segments:
        yield from seg.refused
        seg.refused = []
    if fmt == "omni3d":
        yield tuple(segments)
    else:
        yield from segments
