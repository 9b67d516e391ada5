"""WildBox: raw drone segments (or KITTI / Omni3D files) to the frames, boxes and segments configs.

Read top to bottom, a record goes: ListSegments -> ParseSegment (one parser per raw format, all
producing a ``RawSegment``) -> AssignSplits (video-level, stratified by species, stable) ->
AnnotateSegment (camera frame, normalisation, geometry, masks, support points, record checks; one
numpy batch per segment) -> the core writer. Every refusal is a quarantine or filtered row.
"""
from __future__ import annotations

import posixpath
import struct
import tempfile
from pathlib import Path

import apache_beam as beam
import cv2
import fsspec
from fsspec.implementations.local import LocalFileSystem
import numpy as np
import PIL.Image
import pyarrow as pa

from benchwright import geometry
from benchwright.dataset import Dataset, Unit
from benchwright.errors import SourceError
from benchwright.hashing import stable_int_id
from benchwright.pipelines.wildbox_sources import RawSegment, discover, parse_unit, truncation_problem
from benchwright.schemas import wildbox as schema
from benchwright.splits import AssignSplits, SplitRule, WriteSplits, read_previous, split_of
from benchwright.stage import FILTERED, Read, Reject, run_stage
from benchwright.validation import wildbox as checks

# Video-level splits, stratified by species (the core's rule: previous assignments kept, new videos
# in stable-hash order; a single-video species stays in train).
SPLIT_RULE = SplitRule(held_out=(("validation", 0.2),), rest="train", seed=0, group="video", stratum="species")
ROTATION_ATOL = 1e-4  # VGGT rotations are stored with ~6 significant digits
MAX_SEGMENTATION_PTS = 10_000
# The configs' Arrow schemas, made once: datasets rebuilds one from its Features on every access (7% of
# annotating a segment).
BOXES_SCHEMA, FRAMES_SCHEMA, SEGMENTS_SCHEMA = (f.arrow_schema for f in (schema.BOXES, schema.FRAMES, schema.SEGMENTS))


# ---------------------------------------------------------------------------------------------
# Annotation: one numpy batch per segment


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


def _embeddable(url: str) -> str:
    """The path form ``datasets`` embeds from: plain paths for local files, URLs for remote ones."""
    return url[len("file://"):] if url.startswith("file://") else url


class _LocalFiles:
    """The two calls annotate_segment makes, on local files without fsspec's per-call wrapping (an
    fsspec open of a local file costs 9x a plain open, more than decoding a small mask)."""

    @staticmethod
    def open(url: str, mode: str = "rb"):
        return open(_embeddable(url), mode)

    @staticmethod
    def cat_file(url: str) -> bytes:
        with open(_embeddable(url), "rb") as f:
            return f.read()


def _filesystem(seg: RawSegment):
    """The filesystem of the segment's files, resolved once per segment."""
    urls = [f.image_url for f in seg.frames[:1]] + [u for u in seg.mask_url[:1] if u]
    fs = fsspec.core.url_to_fs(urls[0])[0] if urls else None
    return _LocalFiles if fs is None or isinstance(fs, LocalFileSystem) else fs


def _image_size(fs, path: str) -> tuple[int, int]:
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


def _mask_extent(fs, path: str, max_pixels: int):
    """(inclusive xyxy extent, pixel count) of a SAM3 mask PNG; count 0 for an empty mask, None when the
    bytes are not an image or its header claims more than ``max_pixels`` (its frame's: a decompression bomb)."""
    data = fs.cat_file(path)
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24:
        width, height = struct.unpack(">II", data[16:24])  # IHDR
        if width * height > max_pixels:
            return None
    mask = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_GRAYSCALE) if data else None
    return None if mask is None else geometry.mask_extent(mask)


# Ground plane (geometry.ground_plane, deterministic RANSAC + least squares) on the segment's
# point cloud; inliers within this share of the median box height.
# The budget is fixed (256 triples scored on 2,048 sampled points) so a segment's cost does not grow with its cloud.
GROUND_RANSAC = {"threshold_of_median_height": 0.1, "iterations": 256, "max_points": 2048, "seed": 0}


def _point_cloud_measures(seg: RawSegment, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(support points, ground offset) per observation from the segment's reconstruction.

    support points: cloud points inside the world-frame cuboid (-1 without a point cloud).
    ground offset: height of the box's bottom face centre above the dominant plane of the
    cloud (the terrain), in box heights, "up" being against the boxes' mean down axis (NaN
    without a cloud or a plane). 0 is an animal standing on the ground; the real release's
    under-reconstructed legs put bottoms 0.11-0.14 H up, and fragments float above 1 H.
    """
    counts = np.full(len(keep), -1, dtype=np.int32)
    offsets = np.full(len(keep), np.nan)
    if seg.point_cloud_url is None or not keep.any():
        return counts, offsets
    import open3d as o3d  # ~2 s to import: only segments with a point cloud need it

    with fsspec.open(seg.point_cloud_url, "rb") as f:
        data = f.read()
    # Open3D reads from a path; a local copy keeps remote (fsspec) sources working.
    with tempfile.NamedTemporaryFile(suffix=".ply") as tmp:
        tmp.write(data)
        tmp.flush()
        cloud = o3d.io.read_point_cloud(tmp.name)
    points = cloud.points
    if len(points) == 0:
        return np.zeros(len(keep), dtype=np.int32), offsets
    rows = np.flatnonzero(keep)
    for i in rows:
        extent = seg.dims_whl[i][::-1]  # local x, y, z extents = [L, H, W]
        box = o3d.geometry.OrientedBoundingBox(seg.center[i], seg.R[i], extent)
        counts[i] = len(box.get_point_indices_within_bounding_box(points))
    height = seg.dims_whl[rows, 1]
    plane = geometry.ground_plane(np.asarray(points), GROUND_RANSAC["threshold_of_median_height"] * float(np.median(height)),
                                  iterations=GROUND_RANSAC["iterations"], max_points=GROUND_RANSAC["max_points"],
                                  seed=GROUND_RANSAC["seed"])
    if plane is not None:
        normal, d, _ = plane
        down = seg.R[rows][:, :, 1]  # the box's local +y (H axis) points down
        if float(np.mean(down @ normal)) > 0:  # orient the normal up
            normal, d = -normal, -d
        bottom = seg.center[rows] + down * (height / 2)[:, None]
        offsets[rows] = (bottom @ normal + d) / height
    return counts, offsets


def annotate_segment(seg: RawSegment, splits: dict[str, str]):
    """Yields Reject rows and one {"frames", "boxes", "segments"} dict of pyarrow tables."""
    n = len(seg.track_id)
    split = split_of(splits, seg.video_id, SPLIT_RULE)
    species, species_from, species_problem = seg.box_species()
    frame_pos = {f.frame_index: i for i, f in enumerate(seg.frames)}
    keep = np.ones(n, dtype=bool)

    def reject(i, reason, kind="quarantine"):
        keep[i] = False
        return Reject("box", seg.track_locator[i], reason, kind)

    # Input checks on raw observations (before any derived value depends on them).
    for i, reason in checks.raw_observation_problems(seg, species_problem, frame_pos, ROTATION_ATOL):
        yield reject(i, reason)
    # The well-formed 3D labels: every derived value (camera frame, projection) is made for these only.
    scale_set = keep.copy()
    # The observations the segment's scale is taken over (the release's rule, docs/reference/wildbox.md):
    # every one with a finite centre in a frame of the segment, whatever else is wrong with it (dimensions,
    # rotation, class, a second observation of its track and frame) and before any image, mask or 2D check,
    # so that no check moves the 3D labels of the boxes it keeps. Its camera-frame centre is all it needs.
    fidx = np.array([frame_pos.get(int(fi), -1) for fi in seg.frame_index], dtype=np.int64)
    scale_basis = np.isfinite(seg.center).all(axis=1) & (fidx >= 0)
    basis_center = np.full((n, 3), np.nan)
    if scale_basis.any():
        ext = np.stack([f.extrinsic for f in seg.frames])[fidx[scale_basis]]
        basis_center[scale_basis] = np.einsum("nij,nj->ni", ext[:, :, :3], seg.center[scale_basis]) + ext[:, :, 3]

    # Frames: every image's size from its header; a corrupt or missing one takes its boxes with it.
    frame_ok, frame_rows = [], []
    fs = _filesystem(seg)
    for f in seg.frames:
        try:
            if f.problem:
                raise OSError(f.problem)
            frame_rows.append(_image_size(fs, f.image_url))
            problem = ""
        except OSError as err:
            problem = f"cannot read: {err}"
        except ValueError as err:
            problem = "not a decodable image" + (f" ({err})" if str(err) else "")
        if problem:
            frame_ok.append(False)
            frame_rows.append(None)
            yield Reject("frame", f.image_rel, problem)
            for i in np.flatnonzero(keep & (seg.frame_index == f.frame_index)):
                yield reject(i, f"its frame {f.image_rel} is unreadable ({problem})")
            continue
        frame_ok.append(True)

    # Camera frame, image-resolution projection, for the observations that passed the input checks
    # only: the others (no frame of the segment, NaN, not a rotation...) get NaN geometry, no frame.
    center_cam, R_cam = np.full((n, 3), np.nan), np.full((n, 3, 3), np.nan)
    if scale_set.any():  # a subset of the scale's basis (the input checks refuse non-finite centres, unknown frames)
        ext = np.stack([f.extrinsic for f in seg.frames])[fidx[scale_set]]
        center_cam[scale_set] = basis_center[scale_set]
        # R_ext @ R_world drifts off SO(3) by float noise (and stored rotations keep ~9 digits); the checks
        # above bound the drift, and the stored rotation is the nearest exact one, as 3D IoU needs.
        R_cam[scale_set] = geometry.project_to_so3(ext[:, :, :3] @ seg.R[scale_set])
    Ps, sizes = [], []
    for f, row in zip(seg.frames, frame_rows):
        w, h = row if row else (f.calib_size or (1, 1))
        cw, ch = f.calib_size or (w, h)
        sx, sy = w / cw, h / ch
        Ps.append(np.diag([sx, sy, 1.0]) @ f.P)
        sizes.append((w, h))
    P_frame = np.stack(Ps)
    size_frame = np.array(sizes, dtype=np.int64)
    size_row = np.zeros((n, 2), dtype=np.int64)  # each observation's image size (0 x 0 without a frame)
    size_row[fidx >= 0] = size_frame[fidx[fidx >= 0]]
    for i in np.flatnonzero(keep & ~(center_cam[:, 2] > 0)):
        yield reject(i, f"behind the camera (z = {center_cam[i, 2]:.3g} <= 0)", FILTERED)

    # Projection is scale-invariant: derive 2D geometry in raw units, normalise once the kept set is final.
    corners_raw = geometry.corners(center_cam, seg.dims_whl, R_cam) if n else np.zeros((0, 8, 3))

    # 2D boxes: SAM3 mask extent, else VGGT box (rescaled), else the projection.
    unclipped = np.full((n, 4), np.nan)
    proj = np.full((n, 4), np.nan)
    sel = np.flatnonzero(scale_set)
    if len(sel):  # each box with its frame's camera and size, the segment in one call
        unclipped[sel], proj[sel], _ = geometry.projected_boxes(corners_raw[sel], P_frame[fidx[sel]],
                                                                size_frame[fidx[sel], 0], size_frame[fidx[sel], 1])
    trunc = geometry.truncation(unclipped, proj)
    # What a mask can be compared with: the part of the projected cuboid inside the image. Where an edge cuts
    # the projection, the clipped projected box can be far wider than that part (the silhouette's widest part
    # lies outside), and an animal cut off by the edge would fail the mask check with a clean label.
    visible = proj.copy()
    cut = np.flatnonzero(scale_set & (trunc > 0))
    if len(cut):
        visible[cut] = geometry.visible_projected_boxes(corners_raw[cut], P_frame[fidx[cut]],
                                                        size_frame[fidx[cut], 0], size_frame[fidx[cut], 1])
    tight = np.full((n, 4), np.nan)
    source = np.full(n, schema.BBOX_SOURCES.index("projected"), dtype=np.int64)
    seg_pts = np.zeros(n, dtype=np.int32)
    for i in np.flatnonzero(keep):
        w, h = size_row[i]
        if seg.mask_url[i] is not None:
            try:
                if seg.mask_url[i] in seg.mask_problems:  # refused unread (a symlink out of the source)
                    raise OSError(seg.mask_problems[seg.mask_url[i]])
                found = _mask_extent(fs, seg.mask_url[i], max(1, int(w) * int(h)))
            except OSError as err:
                found, problem = None, str(err)
            else:
                problem = f"not a decodable PNG of at most its frame's {w} x {h} pixels"
            if found is None:
                yield reject(i, f"SAM3 mask {seg.mask_url[i].rsplit('/', 4)[-3:]} unreadable: {problem}")
                continue
            extent, count = found
            if count:
                tight[i] = extent
                source[i] = schema.BBOX_SOURCES.index("sam3")
                seg_pts[i] = min(count, MAX_SEGMENTATION_PTS)
                continue
        if np.isfinite(seg.bbox2d[i]).all():
            cw, ch = seg.frames[fidx[i]].calib_size or (w, h)
            tight[i] = seg.bbox2d[i] * [w / cw, h / ch, w / cw, h / ch]
            source[i] = schema.BBOX_SOURCES.index(seg.bbox_source)
        else:
            tight[i] = proj[i]
    tight = np.clip(tight, 0, np.tile(size_row - 1, 2))
    small = keep & ~((tight[:, 2] - tight[:, 0] > 1) & (tight[:, 3] - tight[:, 1] > 1))
    for i in np.flatnonzero(small):
        yield reject(i, "2D box 1 px or less after clipping to the image", FILTERED)

    # Record checks on the derived values.
    for i, reason in checks.box_problems(keep, center_cam, seg.dims_whl, R_cam, tight, visible, size_row,
                                         seg.track_id, seg.frame_index, ROTATION_ATOL):
        yield reject(i, reason)

    # Occlusion among the published boxes of each frame only: a rejected observation (a duplicate,
    # one of no frame, one a check refused) is not an animal of the frame, so it covers nothing.
    visibility = np.full(n, np.nan)
    kept = np.flatnonzero(keep)
    visibility[kept] = geometry.occlusion_visibility(corners_raw[kept], P_frame[fidx[kept]], size_row[kept, 0],
                                                     size_row[kept, 1], frame=fidx[kept])

    # Per-segment normalisation (the release's rule, docs/reference/wildbox.md): s = 1/median(z) over the
    # scale's basis in front of the camera, kept or not (1/max(z) with fewer than 3, 1 with none).
    z = basis_center[scale_basis, 2]
    z = z[z > 0]
    if seg.normalised:  # a WildBox Omni3D document: normalised by its own segment's boxes already
        scale, rule = 1.0, "given"
    elif len(z) >= 3:
        scale, rule = 1.0 / float(np.median(z)), "1/median(z)"
    elif len(z) > 0:
        scale, rule = 1.0 / float(np.max(z)), "1/max(z)"
    else:
        scale, rule = 1.0, "none"
    center_n, dims_n, corners = center_cam * scale, seg.dims_whl * scale, corners_raw * scale

    support, ground_offset = _point_cloud_measures(seg, keep)
    ypr = geometry.euler_yaw_pitch_roll(R_cam) if n else np.zeros((0, 3))
    representable, reasons = geometry.kitti_representable(R_cam) if n else (np.zeros(0, bool), [])

    # Tables, one row per kept box, ordered by (frame, track).
    order = np.flatnonzero(keep)
    order = order[np.lexsort((seg.track_id[order], seg.frame_index[order]))]
    frame_ids = [f"{seg.segment_id}/{posixpath.splitext(posixpath.basename(f.image_rel))[0]}" for f in seg.frames]
    box_frame_ids = [frame_ids[fidx[i]] for i in order]
    sp = [species[i] for i in order]
    cuboid = {
        "track_id": pa.array(seg.track_id[order], pa.int32()),
        "species": pa.array([schema.SPECIES.index(s) for s in sp], pa.int64()),
        "category_id": pa.array([schema.CATEGORY_IDS[s] for s in sp], pa.int32()),
        "coarse_class": pa.array([schema.COARSE_CLASSES.index(schema.COARSE_OF[s]) for s in sp], pa.int64()),
        "center_cam": _fixed(center_n[order], 3),
        "dimensions": _fixed(dims_n[order], 3),
        "R_cam": _fixed(R_cam[order], 3, 3),
        "corners_cam": _fixed(corners[order], 8, 3),
        "bev_footprint": _footprints(corners[order]),
        "yaw_pitch_roll": _fixed(ypr[order], 3),
        "depth": pa.array(center_n[order, 2]),
        "bbox2d_tight": _fixed(tight[order], 4),
        "bbox2d_proj": _fixed(proj[order], 4),
        "bbox_source": pa.array(source[order], pa.int64()),
        "truncation": pa.array(trunc[order], pa.float32()),
        "visibility": pa.array(visibility[order], pa.float32(), from_pandas=True),
        "segmentation_pts": pa.array(seg_pts[order], pa.int32()),
        "support_points": pa.array(support[order], pa.int32()),
        "ground_offset": pa.array(ground_offset[order], pa.float32(), from_pandas=True),
        "kitti_representable": pa.array(representable[order], pa.bool_()),
        "kitti_reason": pa.array([reasons[i] for i in order], pa.string()),
    }
    box_ids = [f"{fid}#{t}" for fid, t in zip(box_frame_ids, seg.track_id[order])]
    nb = len(order)
    boxes = pa.table({
        "box_id": box_ids,
        "frame_id": box_frame_ids,
        "image_id": pa.array([stable_int_id(f) for f in box_frame_ids], pa.int64()),
        "video_id": [seg.video_id] * nb,
        "segment_id": [seg.segment_id] * nb,
        "frame_index": pa.array(seg.frame_index[order], pa.int32()),
        **cuboid,
        "species_from": pa.array([schema.SPECIES_FROM.index(species_from[i]) for i in order], pa.int64()),
        "K": _fixed(P_frame[fidx[order], :, :3], 3, 3),
        "image_width": pa.array(size_row[order, 0], pa.int32()),
        "image_height": pa.array(size_row[order, 1], pa.int32()),
        "scale_factor": pa.array(np.full(nb, scale)),
        "split": [split] * nb,
    }, schema=BOXES_SCHEMA)

    # Frames: the objects column is the boxes' cuboid columns cut per frame (no per-row Python).
    kept_frames = [p for p, ok in enumerate(frame_ok) if ok]
    per_frame = np.bincount(fidx[order], minlength=len(seg.frames))[kept_frames]
    offsets = pa.array(np.concatenate([[0], np.cumsum(per_frame)]).astype(np.int32))
    object_type = FRAMES_SCHEMA.field("objects").type.value_type
    objects_struct = pa.StructArray.from_arrays(
        [pa.array(box_ids, pa.string())] + [cuboid[f.name] for f in list(object_type)[1:]],
        fields=list(object_type))
    frames = pa.table({
        "frame_id": [frame_ids[p] for p in kept_frames],
        "image_id": pa.array([stable_int_id(frame_ids[p]) for p in kept_frames], pa.int64()),
        "video_id": [seg.video_id] * len(kept_frames),
        "segment_id": [seg.segment_id] * len(kept_frames),
        "frame_index": pa.array([seg.frames[p].frame_index for p in kept_frames], pa.int32()),
        # the writer embeds the bytes (keeping the file name as the path): the shuffle carries paths only
        "image": pa.array([{"bytes": None, "path": _embeddable(seg.frames[p].image_url)} for p in kept_frames],
                          FRAMES_SCHEMA.field("image").type),
        "image_path": [seg.frames[p].image_rel for p in kept_frames],
        "width": pa.array([frame_rows[p][0] for p in kept_frames], pa.int32()),
        "height": pa.array([frame_rows[p][1] for p in kept_frames], pa.int32()),
        "K": _fixed(P_frame[kept_frames, :, :3], 3, 3),
        "scale_factor": pa.array(np.full(len(kept_frames), scale)),
        "objects": pa.ListArray.from_arrays(offsets, objects_struct),
        "split": [split] * len(kept_frames),
    }, schema=FRAMES_SCHEMA)

    seg_species = seg.species
    segments = pa.table({
        "segment_id": [seg.segment_id], "video_id": [seg.video_id],
        "species": pa.array([schema.SPECIES.index(seg_species) if seg_species else None], pa.int64()),
        "scale_factor": [scale], "scale_rule": [rule],
        "num_frames": pa.array([len(kept_frames)], pa.int32()),
        "num_boxes": pa.array([nb], pa.int32()),
        "num_tracks": pa.array([len(set(seg.track_id[order].tolist()))], pa.int32()),
        "num_masks_missing": pa.array([int(sum(seg.mask_url[i] is None for i in order))], pa.int32()),
        "split": [split],
    }, schema=SEGMENTS_SCHEMA)
    # Counted only if the whole segment succeeds: one that fails half-way is one quarantined segment.
    yield Read("frame", len(seg.frames))
    yield Read("box", n)
    yield {"frames": frames, "boxes": boxes, "segments": segments}


# ---------------------------------------------------------------------------------------------
# The dataset


class WildBox(Dataset):
    name = "wildbox"
    pretty_name = "WildBox: monocular 3D wildlife detection from drone video"
    configs = schema.CONFIGS
    id_columns = {"frames": "frame_id", "boxes": "box_id", "segments": "segment_id"}
    splits = schema.SPLITS
    units = (Unit("segment", "segments"), Unit("frame", "frames"), Unit("box", "boxes", primary=True))
    license = "cc-by-nc-sa-4.0"
    description = ("Monocular 3D wildlife detection from drone video: per-frame images and intrinsics, tight 2D "
                   "boxes, full-rotation 3D cuboids in a per-segment scale-normalised camera frame, track ids, "
                   "video-level splits stratified by species. Built by benchwright from the WildBox release layout.")
    creators = ({"type": "Organization", "name": "3DOM-FBK", "description": "publisher of the WildBox release"},)
    citation = ("@misc{wildbox,\n  title = {WildBox: monocular 3D wildlife detection from drone video},\n"
                "  author = {{3DOM-FBK}},\n  note = {The WildBox release (3DOM-FBK/WildBox)}\n}")
    task_categories = ("object-detection",)
    tags = ("3d-object-detection", "monocular", "wildlife", "drone", "omni3d", "kitti")
    synth = "benchwright.wildbox.synth:write_wildbox_source"
    evaluator = "benchwright.evaluation.wildbox:run_cli"
    baselines = "benchwright.baselines.wildbox:run_cli"
    references, proportion_bounds, drift_thresholds = checks.REFERENCES, checks.PROPORTIONS, checks.DRIFT_THRESHOLDS

    def expand(self, pipeline, source, staging, previous):
        fmt, units = discover(source)
        if not units:
            raise SourceError(f"{source}: a {fmt} source with nothing in it")
        previous_splits = read_previous(previous)

        parsed = run_stage(
            pipeline | "ListUnits" >> beam.Create(units) | "Spread" >> beam.Reshuffle(),
            "ParseSegment", lambda unit: parse_unit(source, fmt, unit), unit="segment", source=True,
            total=len(units), what="segments")
        splits = (
            parsed.main
            | "VideoSpecies" >> beam.Map(lambda s: (s.video_id, s.species))
            | "AssignSplits" >> AssignSplits(SPLIT_RULE, previous_splits)
        )
        splits | "WriteSplits" >> WriteSplits(staging, SPLIT_RULE)
        annotated = run_stage(parsed.main, "AnnotateSegment", annotate_segment, unit="segment",
                              locate=lambda s: s.locator, side_inputs=[beam.pvalue.AsSingleton(splits)],
                              total="ParseSegment", what="segments")
        tables = {cfg: annotated.main | f"Select{cfg.capitalize()}" >> beam.Map(lambda d, c=cfg: d[c])
                  for cfg in self.configs}
        return tables, [parsed, annotated]

    # The exports and the card run on the driver once: their modules (matplotlib, the formats) stay out
    # of every worker's start-up.
    def export(self, staging: str, options: list[str] | None = None) -> dict:
        """The Omni3D and KITTI exports (``loaders.wildbox.export_all``) and what the yaw-only KITTI export loses
        (``evaluation.wildbox.kitti_yaw_only_loss``, in ``exports/kitti/yaw_only_loss.json`` and the card).
        ``options`` (``benchwright export OUT/wildbox [options]``): ``--kitti-rotation strict`` and
        ``--kitti-images jpg`` write another KITTI root, to ``--out DIR`` (the build's own exports are what its
        manifest lists)."""
        import argparse
        import json

        from benchwright.errors import BenchwrightError
        from benchwright.evaluation.wildbox import kitti_yaw_only_loss
        from benchwright.loaders.wildbox import EXPORTS, KITTI_IMAGE_FORMATS, KITTI_ROTATIONS, export_all

        parser = argparse.ArgumentParser(prog="benchwright export OUT/wildbox", exit_on_error=False,
                                         allow_abbrev=False)
        parser.add_argument("--kitti-rotation", choices=KITTI_ROTATIONS, default=KITTI_ROTATIONS[0],
                            help="yaw-only (the release's KITTI export: pitch and roll dropped) or strict (only "
                                 "the boxes KITTI holds exactly)")
        parser.add_argument("--kitti-images", choices=KITTI_IMAGE_FORMATS, default=KITTI_IMAGE_FORMATS[0],
                            help="png (what mmdetection3d's and OpenPCDet's KITTI readers open) or jpg (the "
                                 "frames as they are, hard links: no copy)")
        parser.add_argument("--out", help="write only the KITTI root, here")
        try:
            ns = parser.parse_args(options or [])
        except (argparse.ArgumentError, SystemExit) as err:
            raise BenchwrightError(f"export wildbox: {err}") from None
        default = (ns.kitti_rotation, ns.kitti_images) == (KITTI_ROTATIONS[0], KITTI_IMAGE_FORMATS[0])
        if not default and not ns.out:
            raise BenchwrightError("export wildbox: other KITTI options than the build's go to --out DIR (the "
                                   "build's manifest lists its own exports' sha256)")
        root = Path(staging)
        kitti_dir = Path(ns.out) if ns.out else root / EXPORTS / "kitti"
        summary = export_all(root, ns.kitti_rotation, ns.kitti_images, kitti_dir, omni3d=not ns.out)
        if ns.kitti_rotation == "yaw-only":
            loss = {**kitti_yaw_only_loss(root), "frames_without_rows": summary["kitti"]["frames_without_rows"]}
            (kitti_dir / "yaw_only_loss.json").write_text(json.dumps(loss, indent=1, sort_keys=True) + "\n")
            summary["kitti"]["loss"] = loss
        return summary

    def card_context(self, staging: str) -> dict:
        from benchwright.cards.wildbox import card_statistics

        return card_statistics(Path(staging))

    def responsible_ai(self, staging: str, source: str) -> dict:
        from benchwright.cards.wildbox import responsible_ai

        return responsible_ai(self, Path(staging), source)

    def validate_tables(self, staging: str) -> list[dict]:
        return checks.table_checks(Path(staging))

    def expectation_suites(self) -> dict:
        return checks.EXPECTATIONS

    def plant_bad_record(self, source: str) -> str:
        """The first frame of the first segment becomes an undecodable JPEG."""
        fs, root = fsspec.core.url_to_fs(source)
        frame = sorted(p for p in fs.find(root) if posixpath.basename(p).startswith("frame_")
                       and p.endswith(".jpg"))[0]
        fs.pipe_file(frame, b"\xff\xd8\xff\xe0 this is not a JPEG")
        return posixpath.relpath(frame, root)


DATASET = WildBox()
