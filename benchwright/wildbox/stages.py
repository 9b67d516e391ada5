"""What WildBox's pipeline stages do to one segment, its annotation, one numpy batch per segment (the parsers that
read it are ``benchwright.wildbox.sources``'): a ``RawSegment`` (``benchwright.wildbox.segments``) becomes its frames,
boxes and segments rows.

The steps run in this order, each filling in the segment's ``Annotation`` and yielding a ``Reject`` for what it
refuses (the observation's box, or a frame with its boxes): the input checks on the raw observations; the frames
(each image's size from its header); the geometry (camera frame, projection at the image's resolution); the masks
(each box's 2D box: its SAM3 mask's extent, else the source's box, else the projection); the checks of the derived
values and the occlusion among the published boxes; the per-segment normalisation; the support points (from the
segment's point cloud); the tables. ``annotate_segment`` runs them all.
"""
from __future__ import annotations

import dataclasses
import posixpath

import numpy as np
import pyarrow as pa

from benchwright.formats import geometry
from benchwright.hashing import stable_int_id
from benchwright.records import FILTERED, QUARANTINE, Read, Reject
from benchwright.schemas import wildbox as schema
from benchwright.wildbox import checks
from benchwright.wildbox.cloud import point_cloud_measures
from benchwright.wildbox.images import embeddable, filesystem, image_size, mask_extent
from benchwright.wildbox.segments import RawSegment

ROTATION_ATOL = 1e-4  # VGGT rotations are stored with ~6 significant digits
MAX_SEGMENTATION_PTS = 10_000
# The configs' Arrow schemas, made once: datasets rebuilds one from its Features on every access (7% of
# annotating a segment).
BOXES_SCHEMA, FRAMES_SCHEMA, SEGMENTS_SCHEMA = (f.arrow_schema for f in (schema.BOXES, schema.FRAMES, schema.SEGMENTS))


def annotate_segment(seg: RawSegment, split: str):
    """Yields Reject rows and one {"frames", "boxes", "segments"} dict of pyarrow tables, every row in ``split``."""
    a = Annotation.of(seg, split)
    for step in (input_checks, read_frames, camera_geometry, boxes_2d, derived_checks):
        yield from step(a)
    normalise(a)
    yield from support_points(a)
    # Counted only if the whole segment succeeds: one that fails half-way is one quarantined segment.
    yield Read("frame", len(seg.frames))
    yield Read("box", a.n)
    yield tables(a)


@dataclasses.dataclass
class Annotation:
    """One segment's annotation as its steps fill it in: per observation (n of them, the segment's rows) unless said."""

    seg: RawSegment
    split: str
    n: int
    keep: np.ndarray          # still published
    fidx: np.ndarray          # its frame's position in seg.frames (-1: no frame of the segment)
    species: list             # its species (None: none), what decided it, why there is none ("" where there is)
    species_from: list
    species_problem: list
    frame_pos: dict           # frame index -> position in seg.frames
    # The observations the segment's scale is taken over (the release's rule, docs/reference/wildbox.md):
    # every one with a finite centre in a frame of the segment, whatever else is wrong with it (dimensions,
    # rotation, class, a second observation of its track and frame) and before any image, mask or 2D check,
    # so that no check moves the 3D labels of the boxes it keeps. Its camera-frame centre is all it needs.
    scale_basis: np.ndarray
    basis_center: np.ndarray
    scale_set: np.ndarray | None = None  # the well-formed 3D labels (input checks passed): derived values are theirs
    fs: object = None                    # the filesystem of the segment's files
    frame_ok: list | None = None         # per frame: its image was read; frame_rows: its (width, height) or None
    frame_rows: list | None = None
    center_cam: np.ndarray | None = None  # the geometry step's: camera frame (raw units), per frame P and size
    R_cam: np.ndarray | None = None
    P_frame: np.ndarray | None = None
    size_frame: np.ndarray | None = None
    size_row: np.ndarray | None = None    # each observation's image size (0 x 0 without a frame)
    corners_raw: np.ndarray | None = None
    proj: np.ndarray | None = None        # the projected cuboid's box, clipped to the image
    trunc: np.ndarray | None = None
    visible: np.ndarray | None = None     # the box of the projected cuboid's part inside the image
    tight: np.ndarray | None = None       # the masks step's: the 2D box, where it came from, mask pixels
    source: np.ndarray | None = None
    seg_pts: np.ndarray | None = None
    visibility: np.ndarray | None = None
    scale: float = 1.0                    # the normalisation's
    rule: str = "none"
    support: np.ndarray | None = None     # the support points step's
    ground_offset: np.ndarray | None = None

    @classmethod
    def of(cls, seg: RawSegment, split: str) -> Annotation:
        n = len(seg.track_id)
        species, species_from, species_problem = seg.box_species()
        frame_pos = {f.frame_index: i for i, f in enumerate(seg.frames)}
        fidx = np.array([frame_pos.get(int(fi), -1) for fi in seg.frame_index], dtype=np.int64)
        scale_basis = np.isfinite(seg.center).all(axis=1) & (fidx >= 0)
        basis_center = np.full((n, 3), np.nan)
        if scale_basis.any():
            ext = np.stack([f.extrinsic for f in seg.frames])[fidx[scale_basis]]
            basis_center[scale_basis] = (np.einsum("nij,nj->ni", ext[:, :, :3], seg.center[scale_basis])
                                         + ext[:, :, 3])
        return cls(seg, split, n, np.ones(n, dtype=bool), fidx, species, species_from, species_problem, frame_pos,
                   scale_basis, basis_center)

    def reject(self, i, reason: str, kind: str = QUARANTINE) -> Reject:
        """Observation ``i`` is not published: its box's Reject."""
        self.keep[i] = False
        return Reject("box", self.seg.track_locator[i], reason, kind)


# ---------------------------------------------------------------------------------------------
# The steps


def input_checks(a: Annotation):
    """The checks on the raw observations, before any derived value depends on them."""
    for i, reason in checks.raw_observation_problems(a.seg, a.species_problem, a.frame_pos, ROTATION_ATOL):
        yield a.reject(i, reason)
    a.scale_set = a.keep.copy()


def read_frames(a: Annotation):
    """Every image's size from its header; a corrupt or missing one takes its boxes with it."""
    seg = a.seg
    a.frame_ok, a.frame_rows = [], []
    a.fs = filesystem(seg)
    for f in seg.frames:
        try:
            if f.problem:
                raise OSError(f.problem)
            a.frame_rows.append(image_size(a.fs, f.image_url))
            problem = ""
        except OSError as err:
            problem = f"cannot read: {err}"
        except ValueError as err:
            problem = "not a decodable image" + (f" ({err})" if str(err) else "")
        if problem:
            a.frame_ok.append(False)
            a.frame_rows.append(None)
            yield Reject("frame", f.image_rel, problem)
            for i in np.flatnonzero(a.keep & (seg.frame_index == f.frame_index)):
                yield a.reject(i, f"its frame {f.image_rel} is unreadable ({problem})")
            continue
        a.frame_ok.append(True)


def camera_geometry(a: Annotation):
    """Camera frame and image-resolution projection, for the observations that passed the input checks only: the
    others (no frame of the segment, NaN, not a rotation...) get NaN geometry, no frame. A box behind the camera
    is filtered."""
    seg, n, fidx, scale_set = a.seg, a.n, a.fidx, a.scale_set
    a.center_cam, a.R_cam = np.full((n, 3), np.nan), np.full((n, 3, 3), np.nan)
    if scale_set.any():  # a subset of the scale's basis (the input checks refuse non-finite centres, unknown frames)
        ext = np.stack([f.extrinsic for f in seg.frames])[fidx[scale_set]]
        a.center_cam[scale_set] = a.basis_center[scale_set]
        # R_ext @ R_world drifts off SO(3) by float noise (and stored rotations keep ~9 digits); the checks
        # above bound the drift, and the stored rotation is the nearest exact one, as 3D IoU needs.
        a.R_cam[scale_set] = geometry.project_to_so3(ext[:, :, :3] @ seg.R[scale_set])
    Ps, sizes = [], []
    for f, row in zip(seg.frames, a.frame_rows):
        w, h = row if row else (f.calib_size or (1, 1))
        cw, ch = f.calib_size or (w, h)
        sx, sy = w / cw, h / ch
        Ps.append(np.diag([sx, sy, 1.0]) @ f.P)
        sizes.append((w, h))
    a.P_frame = np.stack(Ps)
    a.size_frame = size_frame = np.array(sizes, dtype=np.int64)
    a.size_row = np.zeros((n, 2), dtype=np.int64)
    a.size_row[fidx >= 0] = size_frame[fidx[fidx >= 0]]
    for i in np.flatnonzero(a.keep & ~(a.center_cam[:, 2] > 0)):
        yield a.reject(i, f"behind the camera (z = {a.center_cam[i, 2]:.3g} <= 0)", FILTERED)

    # Projection is scale-invariant: derive 2D geometry in raw units, normalise once the kept set is final.
    a.corners_raw = corners_raw = geometry.corners(a.center_cam, seg.dims_whl, a.R_cam) if n else np.zeros((0, 8, 3))
    unclipped = np.full((n, 4), np.nan)
    a.proj = np.full((n, 4), np.nan)
    sel = np.flatnonzero(scale_set)
    if len(sel):  # each box with its frame's camera and size, the segment in one call
        unclipped[sel], a.proj[sel], _ = geometry.projected_boxes(corners_raw[sel], a.P_frame[fidx[sel]],
                                                                  size_frame[fidx[sel], 0], size_frame[fidx[sel], 1])
    a.trunc = geometry.truncation(unclipped, a.proj)
    # What a mask can be compared with: the part of the projected cuboid inside the image. Where an edge cuts
    # the projection, the clipped projected box can be far wider than that part (the silhouette's widest part
    # lies outside), and an animal cut off by the edge would fail the mask check with a clean label.
    a.visible = a.proj.copy()
    cut = np.flatnonzero(scale_set & (a.trunc > 0))
    if len(cut):
        a.visible[cut] = geometry.visible_projected_boxes(corners_raw[cut], a.P_frame[fidx[cut]],
                                                          size_frame[fidx[cut], 0], size_frame[fidx[cut], 1])


def boxes_2d(a: Annotation):
    """Each kept box's 2D box: its SAM3 mask's extent, else the source's box (rescaled to the image), else the
    projection; a box of 1 px or less once clipped to the image is filtered, an unreadable mask quarantines it."""
    seg, n = a.seg, a.n
    a.tight = tight = np.full((n, 4), np.nan)
    a.source = np.full(n, schema.BBOX_SOURCES.index("projected"), dtype=np.int64)
    a.seg_pts = np.zeros(n, dtype=np.int32)
    for i in np.flatnonzero(a.keep):
        w, h = a.size_row[i]
        if seg.mask_url[i] is not None:
            try:
                if seg.mask_url[i] in seg.mask_problems:  # refused unread (a symlink out of the source)
                    raise OSError(seg.mask_problems[seg.mask_url[i]])
                found = mask_extent(a.fs, seg.mask_url[i], max(1, int(w) * int(h)))
            except (OSError, ValueError) as err:  # unreadable, or not a mask's encoding
                found, problem = None, str(err)
            else:
                problem = f"not a decodable PNG of at most its frame's {w} x {h} pixels"
            if found is None:
                yield a.reject(i, f"SAM3 mask {seg.mask_url[i].rsplit('/', 4)[-3:]} unreadable: {problem}")
                continue
            extent, count = found
            if count:
                tight[i] = extent
                a.source[i] = schema.BBOX_SOURCES.index("sam3")
                a.seg_pts[i] = min(count, MAX_SEGMENTATION_PTS)
                continue
        if np.isfinite(seg.bbox2d[i]).all():
            cw, ch = seg.frames[a.fidx[i]].calib_size or (w, h)
            tight[i] = seg.bbox2d[i] * [w / cw, h / ch, w / cw, h / ch]
            a.source[i] = schema.BBOX_SOURCES.index(seg.bbox_source)
        else:
            tight[i] = a.proj[i]
    a.tight = np.clip(tight, 0, np.tile(a.size_row - 1, 2))
    small = a.keep & ~((a.tight[:, 2] - a.tight[:, 0] > 1) & (a.tight[:, 3] - a.tight[:, 1] > 1))
    for i in np.flatnonzero(small):
        yield a.reject(i, "2D box 1 px or less after clipping to the image", FILTERED)


def derived_checks(a: Annotation):
    """The record checks on the derived values; then the occlusion among the published boxes of each frame only: a
    rejected observation (a duplicate, one of no frame, one a check refused) is not an animal of the frame, so it
    covers nothing."""
    seg = a.seg
    for i, reason in checks.box_problems(a.keep, a.center_cam, seg.dims_whl, a.R_cam, a.tight, a.visible, a.size_row,
                                         seg.track_id, seg.frame_index, ROTATION_ATOL):
        yield a.reject(i, reason)
    a.visibility = np.full(a.n, np.nan)
    kept = np.flatnonzero(a.keep)
    a.visibility[kept] = geometry.occlusion_visibility(a.corners_raw[kept], a.P_frame[a.fidx[kept]],
                                                       a.size_row[kept, 0], a.size_row[kept, 1], frame=a.fidx[kept])


def normalise(a: Annotation) -> None:
    """The per-segment scale (the release's rule, docs/reference/wildbox.md): s = 1/median(z) over the scale's
    basis in front of the camera, kept or not (1/max(z) with fewer than 3, 1 with none)."""
    z = a.basis_center[a.scale_basis, 2]
    z = z[z > 0]
    if a.seg.normalised:  # a WildBox Omni3D document: normalised by its own segment's boxes already
        a.scale, a.rule = 1.0, "given"
    elif len(z) >= 3:
        a.scale, a.rule = 1.0 / float(np.median(z)), "1/median(z)"
    elif len(z) > 0:
        a.scale, a.rule = 1.0 / float(np.max(z)), "1/max(z)"
    else:
        a.scale, a.rule = 1.0, "none"


def support_points(a: Annotation):
    """Each kept box's support points and ground offset from the segment's point cloud (``cloud``); an unreadable
    cloud keeps the boxes with support_points -1 and no ground offset, and is quarantined itself."""
    seg = a.seg
    a.support, a.ground_offset, cloud_problem = point_cloud_measures(seg, a.keep)
    if cloud_problem:
        yield Reject("point_cloud", posixpath.join(posixpath.dirname(seg.locator), "point_cloud.ply"),
                     f"point cloud unreadable: {cloud_problem}; its segment's boxes have support_points -1 and "
                     "ground_offset NaN (not measured)")


# ---------------------------------------------------------------------------------------------
# The tables: one row per kept box, ordered by (frame, track); the frames that were read; the segment


def tables(a: Annotation) -> dict[str, pa.Table]:
    seg = a.seg
    order = np.flatnonzero(a.keep)
    order = order[np.lexsort((seg.track_id[order], seg.frame_index[order]))]
    frame_ids = [f"{seg.segment_id}/{posixpath.splitext(posixpath.basename(f.image_rel))[0]}" for f in seg.frames]
    cuboid = _cuboid_columns(a, order)
    box_frame_ids = [frame_ids[a.fidx[i]] for i in order]
    box_ids = [f"{fid}#{t}" for fid, t in zip(box_frame_ids, seg.track_id[order])]
    kept_frames = [p for p, ok in enumerate(a.frame_ok) if ok]
    return {"frames": _frames_table(a, order, frame_ids, kept_frames, cuboid, box_ids),
            "boxes": _boxes_table(a, order, box_frame_ids, cuboid, box_ids),
            "segments": _segments_table(a, order, len(kept_frames))}


def _cuboid_columns(a: Annotation, order: np.ndarray) -> dict[str, pa.Array]:
    """The boxes' columns a frame's objects repeat, normalised, in ``order``."""
    seg, n = a.seg, a.n
    center_n, dims_n, corners = a.center_cam * a.scale, seg.dims_whl * a.scale, a.corners_raw * a.scale
    ypr = geometry.euler_yaw_pitch_roll(a.R_cam) if n else np.zeros((0, 3))
    representable, reasons = geometry.kitti_representable(a.R_cam) if n else (np.zeros(0, bool), [])
    sp = [a.species[i] for i in order]
    return {
        "track_id": pa.array(seg.track_id[order], pa.int32()),
        "species": pa.array([schema.SPECIES.index(s) for s in sp], pa.int64()),
        "category_id": pa.array([schema.CATEGORY_IDS[s] for s in sp], pa.int32()),
        "coarse_class": pa.array([schema.COARSE_CLASSES.index(schema.COARSE_OF[s]) for s in sp], pa.int64()),
        "center_cam": _fixed(center_n[order], 3),
        "dimensions": _fixed(dims_n[order], 3),
        "R_cam": _fixed(a.R_cam[order], 3, 3),
        "corners_cam": _fixed(corners[order], 8, 3),
        "bev_footprint": _footprints(corners[order]),
        "yaw_pitch_roll": _fixed(ypr[order], 3),
        "depth": pa.array(center_n[order, 2]),
        "bbox2d_tight": _fixed(a.tight[order], 4),
        "bbox2d_proj": _fixed(a.proj[order], 4),
        "bbox_source": pa.array(a.source[order], pa.int64()),
        "truncation": pa.array(a.trunc[order], pa.float32()),
        "visibility": pa.array(a.visibility[order], pa.float32(), from_pandas=True),
        "segmentation_pts": pa.array(a.seg_pts[order], pa.int32()),
        "support_points": pa.array(a.support[order], pa.int32()),
        "ground_offset": pa.array(a.ground_offset[order], pa.float32(), from_pandas=True),
        "kitti_representable": pa.array(representable[order], pa.bool_()),
        "kitti_reason": pa.array([reasons[i] for i in order], pa.string()),
    }


def _boxes_table(a: Annotation, order: np.ndarray, box_frame_ids: list, cuboid: dict, box_ids: list) -> pa.Table:
    seg, nb = a.seg, len(order)
    return pa.table({
        "box_id": box_ids,
        "frame_id": box_frame_ids,
        "image_id": pa.array([stable_int_id(f) for f in box_frame_ids], pa.int64()),
        "video_id": [seg.video_id] * nb,
        "segment_id": [seg.segment_id] * nb,
        "frame_index": pa.array(seg.frame_index[order], pa.int32()),
        **cuboid,
        "species_from": pa.array([schema.SPECIES_FROM.index(a.species_from[i]) for i in order], pa.int64()),
        "K": _fixed(a.P_frame[a.fidx[order], :, :3], 3, 3),
        "image_width": pa.array(a.size_row[order, 0], pa.int32()),
        "image_height": pa.array(a.size_row[order, 1], pa.int32()),
        "scale_factor": pa.array(np.full(nb, a.scale)),
        "split": [a.split] * nb,
    }, schema=BOXES_SCHEMA)


def _frames_table(a: Annotation, order: np.ndarray, frame_ids: list, kept_frames: list, cuboid: dict,
                  box_ids: list) -> pa.Table:
    """The frames that were read; the objects column is the boxes' cuboid columns cut per frame (no per-row
    Python)."""
    seg = a.seg
    per_frame = np.bincount(a.fidx[order], minlength=len(seg.frames))[kept_frames]
    offsets = pa.array(np.concatenate([[0], np.cumsum(per_frame)]).astype(np.int32))
    object_type = FRAMES_SCHEMA.field("objects").type.value_type
    objects_struct = pa.StructArray.from_arrays(
        [pa.array(box_ids, pa.string())] + [cuboid[f.name] for f in list(object_type)[1:]],
        fields=list(object_type))
    return pa.table({
        "frame_id": [frame_ids[p] for p in kept_frames],
        "image_id": pa.array([stable_int_id(frame_ids[p]) for p in kept_frames], pa.int64()),
        "video_id": [seg.video_id] * len(kept_frames),
        "segment_id": [seg.segment_id] * len(kept_frames),
        "frame_index": pa.array([seg.frames[p].frame_index for p in kept_frames], pa.int32()),
        # the writer embeds the bytes (keeping the file name as the path): the shuffle carries paths only
        "image": pa.array([{"bytes": None, "path": embeddable(seg.frames[p].image_url)} for p in kept_frames],
                          FRAMES_SCHEMA.field("image").type),
        "image_path": [seg.frames[p].image_rel for p in kept_frames],
        "width": pa.array([a.frame_rows[p][0] for p in kept_frames], pa.int32()),
        "height": pa.array([a.frame_rows[p][1] for p in kept_frames], pa.int32()),
        "K": _fixed(a.P_frame[kept_frames, :, :3], 3, 3),
        "scale_factor": pa.array(np.full(len(kept_frames), a.scale)),
        "objects": pa.ListArray.from_arrays(offsets, objects_struct),
        "split": [a.split] * len(kept_frames),
    }, schema=FRAMES_SCHEMA)


def _segments_table(a: Annotation, order: np.ndarray, num_frames: int) -> pa.Table:
    seg = a.seg
    seg_species = seg.species
    return pa.table({
        "segment_id": [seg.segment_id], "video_id": [seg.video_id],
        "species": pa.array([schema.SPECIES.index(seg_species) if seg_species else None], pa.int64()),
        "scale_factor": [a.scale], "scale_rule": [a.rule],
        "num_frames": pa.array([num_frames], pa.int32()),
        "num_boxes": pa.array([len(order)], pa.int32()),
        "num_tracks": pa.array([len(set(seg.track_id[order].tolist()))], pa.int32()),
        "num_masks_missing": pa.array([int(sum(seg.mask_url[i] is None for i in order))], pa.int32()),
        "split": [a.split],
    }, schema=SEGMENTS_SCHEMA)


def _fixed(values: np.ndarray, *shape: int) -> pa.Array:
    """A nested fixed-size list array of float64 from an (n, *shape) numpy array."""
    arr = pa.array(np.ascontiguousarray(values, dtype=float).ravel())
    for size in reversed(shape):
        arr = pa.FixedSizeListArray.from_arrays(arr, size)
    return arr


def _footprints(corners: np.ndarray) -> pa.Array:
    """Each box's BEV hull (a variable number of (x, z) vertices) as a list-of-pairs column."""
    points, counts = geometry.bev_footprint_vertices(corners)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    return pa.ListArray.from_arrays(pa.array(offsets), _fixed(points, 2))
