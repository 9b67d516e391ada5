"""WildBox raw formats: one parser per format, each producing the same canonical ``RawSegment``.

Formats: the WildBox raw release (``<video>/<segment>/`` with VGGT cameras and tracks, SAM3
masks, a point cloud), KITTI object folders (``label_2``, ``calib``, ``image_2``), KITTI tracking
folders (``label_02/<seq>.txt``, ``calib/<seq>.txt``, ``image_02/<seq>/``) and Omni3D JSON.
``discover`` tells which one a source is and lists its units of work.
"""
from __future__ import annotations

import dataclasses
import json
import os
import posixpath
import re
from collections import Counter

import fsspec
from fsspec.implementations.local import LocalFileSystem
import numpy as np

from benchwright import strict_json
from benchwright.files import outside_of
from benchwright.errors import RecordError, SourceError
from benchwright.formats import kitti
from benchwright.formats.omni3d import read_omni3d
from benchwright.schemas import wildbox as schema
from benchwright.stage import FILTERED, Reject

# ---------------------------------------------------------------------------------------------
# The canonical raw segment every parser produces


@dataclasses.dataclass
class RawFrame:
    frame_index: int
    image_url: str
    image_rel: str            # path relative to the source root
    P: np.ndarray             # 3x4 projection in the camera frame, at the resolution below
    calib_size: tuple | None  # (width, height) that P (and bbox_2d) refer to; None = the image's own
    extrinsic: np.ndarray     # 3x4 world -> camera
    problem: str | None = None  # why the frame's file is refused before it is read


@dataclasses.dataclass
class RawSegment:
    segment_id: str
    video_id: str
    locator: str              # the file the observations come from (for quarantine rows)
    frames: list              # RawFrame, sorted by frame_index
    track_id: np.ndarray      # (n,) one row per (track, frame) observation
    frame_index: np.ndarray   # (n,)
    center: np.ndarray        # (n, 3) world frame, raw reconstruction units
    dims_whl: np.ndarray      # (n, 3)
    R: np.ndarray             # (n, 3, 3) world frame
    bbox2d: np.ndarray        # (n, 4) xyxy at calib_size, NaN when invalid
    class_name: list
    mask_url: list            # per observation: the SAM3 mask PNG, or None
    mask_problems: dict = dataclasses.field(default_factory=dict)  # mask URL -> why it is refused unread
    point_cloud_url: str | None = None
    track_locator: list = dataclasses.field(default_factory=list)
    bbox_source: str = "vggt"  # what the bbox2d column is: the VGGT tracker's box or a label file's
    normalised: bool = False   # the 3D boxes are already in a per-segment normalised frame (kept as they are)
    folder_species: str | None = None  # the species its source folder names (the authors' per-species tree)

    def box_species(self) -> tuple[list, list, list]:
        """Per observation: (species or None, what decided it (schema.SPECIES_FROM) or None, why there is
        none or ""), from its class name and the segment's species folder (``schema.decide_species``)."""
        decided = [schema.decide_species(c, self.folder_species) for c in self.class_name]
        return [d[0] for d in decided], [d[1] for d in decided], [d[2] for d in decided]

    @property
    def species(self) -> str | None:
        counts = Counter(n for n in self.box_species()[0] if n)
        return min(counts, key=lambda n: (-counts[n], n)) if counts else None


class Observations:
    """Collects one segment's (track, frame) observations row by row, then builds the RawSegment."""

    def __init__(self):
        self.rows = []

    def add(self, track_id, frame_index, center, dims_whl, R, bbox2d, class_name, locator, mask_url=None):
        self.rows.append((int(track_id), int(frame_index), center, dims_whl, R, bbox2d, class_name, locator, mask_url))

    def segment(self, **fields) -> RawSegment:
        track, frame, center, dims, R, bbox, cls, loc, mask = (list(c) for c in zip(*self.rows)) if self.rows \
            else ([] for _ in range(9))
        return RawSegment(
            track_id=np.array(track, dtype=np.int64), frame_index=np.array(frame, dtype=np.int64),
            center=np.array(center, float).reshape(-1, 3), dims_whl=np.array(dims, float).reshape(-1, 3),
            R=np.array(R, float).reshape(-1, 3, 3), bbox2d=np.array(bbox, float).reshape(-1, 4),
            class_name=cls, mask_url=mask, track_locator=loc, **fields)


def _load_json(fs, path: str, locator: str):
    try:
        with fs.open(path, "rb") as f:
            return strict_json.load(f)
    except FileNotFoundError:
        raise RecordError(locator, "file is missing") from None
    except ValueError as err:  # JSONDecodeError, UnicodeDecodeError, an integer past Python's digit limit, a duplicate key
        raise RecordError(locator, f"malformed JSON: {err}") from None


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


def _integer(value) -> int:
    """A JSON integer (or a float or digit string holding one, as exporters write them); ValueError for
    anything else: int() would truncate 2.5, and raise OverflowError on an infinite float."""
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not an integer")
    if isinstance(value, float) and not value.is_integer():
        raise ValueError(f"{value!r} is not an integer")
    if isinstance(value, str) and not value.strip().lstrip("+-").isdigit():
        raise ValueError(f"{value!r} is not an integer")
    return int(value)


INT64_LIMIT = 1 << 63
OUTSIDE_LINK = "a symlink to a file outside the source (not followed)"


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


def parse_wildbox_segment(source: str, seg_rel: str | bytes) -> RawSegment:
    """One ``<video>/<segment>/`` folder of the WildBox raw release (bytes: a folder name that is not
    UTF-8, see ``list_wildbox_segments``)."""
    if isinstance(seg_rel, bytes):
        raise RecordError(seg_rel.decode("utf-8", "backslashreplace"), "folder name is not valid UTF-8")
    fs, root = fsspec.core.url_to_fs(source)
    seg_path = posixpath.join(root, seg_rel)
    segment_id, species_folder = segment_of(root, seg_rel)
    video_id = segment_id.split("/")[0]
    cam_loc = f"{seg_rel}/vggt_results/cameras.json"
    trk_loc = f"{seg_rel}/vggt_results/tracking_summary.json"
    cameras = _load_json(fs, posixpath.join(root, cam_loc), cam_loc)
    if not isinstance(cameras, dict) or not isinstance(cameras.get("cameras"), list) or not cameras["cameras"]:
        raise RecordError(cam_loc, 'expected {"cameras": [...]} with at least one camera')
    frames = {}
    # a local frame that, through a symlink at any level of its path, lies outside the source (its bytes
    # are not the source's); object storage has no links
    outside = outside_of(root) if isinstance(fs, LocalFileSystem) else (lambda path: False)
    for i, cam in enumerate(cameras["cameras"]):
        where = f"{cam_loc}#cameras[{i}]"
        try:
            fi, name = _integer(cam["frame_index"]), str(cam["image_name"])
            size = (_integer(cam["image_width"]), _integer(cam["image_height"]))
        except (KeyError, TypeError, ValueError) as err:
            raise RecordError(where, f"missing or invalid field: {err}") from None
        K = _matrix(cam.get("intrinsic"), (3, 3), where, "intrinsic")
        ext = _matrix(cam.get("extrinsic"), (3, 4), where, "extrinsic")
        if not (np.isfinite(K).all() and np.isfinite(ext).all()):
            raise RecordError(where, "intrinsic or extrinsic holds NaN or infinite values")
        if fi in frames:
            raise RecordError(where, f"frame_index {fi} appears twice")
        rel = posixpath.normpath(posixpath.join(seg_rel, name))
        if posixpath.isabs(name) or not rel.startswith(seg_rel + "/"):
            raise RecordError(where, f"image_name {name!r} leaves the segment folder")
        frames[fi] = RawFrame(fi, fs.unstrip_protocol(posixpath.join(root, rel)), rel,
                              np.hstack([K, np.zeros((3, 1))]), size, ext,
                              OUTSIDE_LINK if outside(posixpath.join(root, rel))
                              else None)
    summary = _load_json(fs, posixpath.join(root, trk_loc), trk_loc)
    if not isinstance(summary, dict) or not isinstance(summary.get("tracks"), dict):
        raise RecordError(trk_loc, 'expected {"tracks": {...}}')
    mask_dir = posixpath.join(seg_path, "sam3_masks", "masks")
    masks, masks_outside = _files_under(fs, mask_dir, outside)
    stem_of = {fi: posixpath.splitext(posixpath.basename(f.image_rel))[0] for fi, f in frames.items()}
    obs = Observations()
    for tid, track in sorted(summary["tracks"].items(), key=lambda kv: kv[0]):
        where = f"{trk_loc}#track={tid}"
        try:
            track_id = _integer(tid)
            fr = [_integer(f) for f in track["frames"]]
            if not all(-INT64_LIMIT <= v < INT64_LIMIT for v in (track_id, *fr)):
                raise RecordError(where, "track id or frame index out of range (beyond int64)")
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
    ply = posixpath.join(seg_path, "vggt_results", "point_cloud.ply")
    return obs.segment(segment_id=segment_id, video_id=video_id, locator=trk_loc,
                       folder_species=schema.folder_species(species_folder) if species_folder else None,
                       frames=[frames[k] for k in sorted(frames)],
                       point_cloud_url=fs.unstrip_protocol(ply) if fs.exists(ply) else None,
                       mask_problems={fs.unstrip_protocol(m): OUTSIDE_LINK for m in sorted(masks_outside)})


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


def _read_text(fs, path: str, locator: str) -> str:
    try:
        with fs.open(path, "rb") as f:
            return f.read().decode("utf-8")
    except FileNotFoundError:
        raise RecordError(locator, "file is missing") from None
    except (OSError, UnicodeDecodeError) as err:
        raise RecordError(locator, f"cannot read: {err}") from None


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
    calib = kitti.parse_calib(_read_text(fs, posixpath.join(root, calib_rel), calib_rel), calib_rel)
    raw_frames = [RawFrame(fi, fs.unstrip_protocol(posixpath.join(root, rel)), rel, calib.P2, None, _IDENTITY_EXT)
                  for fi, rel in frames]
    rejects, obs = [], Observations()
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
    objects, errors = kitti.parse_label_lines(_read_text(fs, posixpath.join(root, label_rel), label_rel), label_rel)
    rows = [(o, f"{label_rel}:{n}") for n, o in _numbered(objects, errors)]
    seg, rejects = _kitti_segment(fs, root, f"kitti/{stem}", stem, [(0, _image_of(fs, root, "image_2", stem))],
                                  {0: rows}, f"calib/{stem}.txt", label_rel, lambda obj, n: n)
    return seg, rejects + [Reject("box", e.locator, e.reason) for e in errors]


def parse_kitti_tracking_sequence(source: str, seq: str):
    """One sequence of a KITTI tracking folder: a segment whose track ids come from the labels."""
    fs, root = fsspec.core.url_to_fs(source)
    label_rel = f"label_02/{seq}.txt"
    text = _read_text(fs, posixpath.join(root, label_rel), label_rel)
    by_frame, errors = kitti.parse_tracking_lines(text, label_rel)
    lines = {}  # the label line of each row, for locators
    for number, line in enumerate(text.splitlines(), start=1):
        tokens = line.split()
        if len(tokens) > 2:
            lines.setdefault((tokens[0], tokens[1]), []).append(number)
    image_dir = posixpath.join(root, "image_02", seq)
    images = sorted(p for p in (fs.ls(image_dir, detail=False) if fs.isdir(image_dir) else [])
                    if p.lower().endswith(IMAGE_SUFFIXES))
    frames = [(int(posixpath.splitext(posixpath.basename(p))[0]), posixpath.relpath(p, root)) for p in images]
    known = {fi for fi, _ in frames}
    for fi in sorted(set(by_frame) - known):  # labelled frames without an image are still frames (reported later)
        frames.append((fi, f"image_02/{seq}/{fi:06d}.png"))
    rows = {fi: [(o, f"{label_rel}:{_pop_line(lines, fi, o)}") for o in objs] for fi, objs in by_frame.items()}
    seg, rejects = _kitti_segment(fs, root, f"kitti_tracking/{seq}", seq, sorted(frames), rows,
                                  f"calib/{seq}.txt", label_rel, lambda obj, n: obj.track_id)
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
    """Every segment of an Omni3D document (images grouped by their folder), plus rejects."""
    fs, root = fsspec.core.url_to_fs(source)
    try:
        with fs.open(posixpath.join(root, json_rel), "rb") as f:
            doc = json.load(f)
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as err:
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
        path = str(rec.image["file_path"])
        rel = _resolve_image(fs, root, base, path)
        by_segment.setdefault(posixpath.dirname(rel) or ".", []).append((rel, rec))
    segments = []
    for seg_dir, items in sorted(by_segment.items()):
        items.sort(key=lambda item: item[0])
        frames, obs = [], Observations()
        for fi, (rel, rec) in enumerate(items):
            K = np.asarray(rec.image["K"], float)
            size = (int(rec.image["width"]), int(rec.image["height"]))
            frames.append(RawFrame(fi, fs.unstrip_protocol(posixpath.join(root, rel)), rel,
                                   np.hstack([K, np.zeros((3, 1))]), size, _IDENTITY_EXT))
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


def _resolve_image(fs, root: str, base: str, path: str) -> str:
    """An image path relative to the source root: as given, relative to the JSON's folder, or by
    the tail of an absolute path (released files carry absolute paths from the authors' machine)."""
    parts = path.strip("/").split("/")
    candidates = [path.lstrip("./"), posixpath.join(base, path)] + ["/".join(parts[i:]) for i in range(1, len(parts))]
    for rel in candidates:
        if rel and not rel.startswith("..") and fs.exists(posixpath.join(root, rel)):
            return rel
    return path.lstrip("/")


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
        return "kitti", stems
    if fs.isdir(posixpath.join(root, "label_02")):
        return "kitti_tracking", sorted(posixpath.splitext(posixpath.basename(p))[0]
                                        for p in fs.glob(posixpath.join(root, "label_02", "*.txt")))
    segments = list_wildbox_segments(source)
    if segments:
        return "wildbox", segments
    jsons = sorted(posixpath.relpath(p, root) for p in fs.glob(posixpath.join(root, "**", "*.json"))
                   if not posixpath.basename(p).startswith("."))
    omni = [j for j in jsons if _looks_like_omni3d(fs, posixpath.join(root, j))]
    if omni:
        return "omni3d", omni
    raise SourceError(f"{source}: no <video>/<segment>/ folders with vggt_results/ or metadata.json, no KITTI "
                      "label_2/ or label_02/, no Omni3D JSON; is this a WildBox source? "
                      "(`benchwright synth wildbox --out DIR` writes one)")


def _looks_like_omni3d(fs, path: str) -> bool:
    """An Omni3D document opens with its top-level lists (checked on the head, not a full parse)."""
    with fs.open(path, "rb") as f:
        head = f.read(1 << 16)
    return re.search(rb'"(images|annotations)"\s*:\s*\[', head) is not None


def parse_unit(source: str, fmt: str, unit: str):
    """Yields RawSegments and Rejects for one unit of a source of format ``fmt``."""
    if fmt == "wildbox":
        yield parse_wildbox_segment(source, unit)
        return
    if fmt == "omni3d":
        segments, rejects = parse_omni3d_file(source, unit)
    else:
        seg, rejects = (parse_kitti_object_frame if fmt == "kitti" else parse_kitti_tracking_sequence)(source, unit)
        segments = [seg]
    yield from rejects
    yield from segments
