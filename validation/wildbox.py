"""WildBox's table checks and great-expectations suites, run on the written Parquet before publishing (the record
checks run while a segment is annotated: ``benchwright.wildbox.checks``)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow.compute as pc
import pyarrow.parquet as pq

from benchwright.drift import DriftThreshold
from benchwright.formats import geometry
from benchwright.schemas import wildbox as schema
from benchwright.tables import fixed_size_matrix, parquet_leaf_path
from benchwright.wildbox.checks import consecutive

# Label quality (reported, never blocking): between consecutive observations of a track an
# animal does not turn by more than this; a larger turn is a rotation-sign flip of the label
# (the real release has them in about 11% of frames). A half turn about a box axis leaves the
# corners in place, so IoU ignores such flips; heading-aware metrics (KITTI AOS) do not.
FLIP_TURN_DEG = 90.0
# Label quality (reported): a box bottom this many box heights above or below the ground plane
# floats (the real release's legs are under-reconstructed: 0.11-0.14 H); beyond FRAGMENT_OFFSET
# it is mostly a fragment of a reconstruction, not an animal.
FLOAT_OFFSET = 0.05
FRAGMENT_OFFSET = 1.0


def table_checks(root: Path) -> list[dict]:
    """Cross-config checks: no video in two splits; boxes and frames agree."""
    def read(config, columns):
        files = sorted((root / config).glob("*.parquet"))
        return pq.ParquetDataset(files).read(columns=columns) if files else None

    results = []
    segments = read("segments", ["video_id", "split"])
    if segments is not None:
        pairs = {(v, s) for v, s in zip(segments["video_id"].to_pylist(), segments["split"].to_pylist())}
        videos = [v for v, _ in pairs]
        leaked = sorted({v for v in videos if videos.count(v) > 1})
        results.append({"check": "segments: no video in two splits", "ok": not leaked,
                        "detail": f"videos in both splits: {leaked}" if leaked else f"{len(set(videos))} videos"})
    results.append(rotation_flip_check(read("boxes", ["box_id", "segment_id", "track_id", "frame_index", "R_cam"])))
    results.append(ground_offset_check(read("boxes", ["box_id", "ground_offset"])))
    # boxes -> frames -> segments (and frames' objects -> boxes) are declared in REFERENCES, checked by the core
    if boxes_files := sorted((root / "boxes").glob("*.parquet")):
        results += cuboid_checks("boxes", _box_parts(boxes_files))
    if frames_files := sorted((root / "frames").glob("*.parquet")):
        results += cuboid_checks("frames", _object_parts(frames_files), prefix="objects.")
    return results


def _box_parts(files: list[Path]):
    """(ids, cuboid columns) of the boxes, a file at a time (bounded memory at any size)."""
    for f in files:
        table = pq.ParquetFile(f).read(columns=["box_id", *CUBOID_COLUMNS])
        yield table.column("box_id"), {c: table.column(c) for c in CUBOID_COLUMNS}


def _object_parts(files: list[Path]):
    """(ids, cuboid columns) of the frames' objects, a file at a time, reading only those fields of the
    objects (not their footprints, sources, reasons)."""
    for f in files:
        parquet = pq.ParquetFile(f)
        leaves = [parquet_leaf_path(parquet, f"objects.{c}") for c in ("box_id", *CUBOID_COLUMNS)]
        table = parquet.read(columns=leaves if all(leaves) else ["objects"])
        objects = pc.list_flatten(table.column("objects").combine_chunks())
        yield pc.struct_field(objects, ["box_id"]), {c: pc.struct_field(objects, [c]) for c in CUBOID_COLUMNS}


# ---------------------------------------------------------------------------------------------
# Geometry derived from the boxes' meaning (docs/reference/wildbox.md, "Box conventions"): every stored cuboid is a proper
# rotation, its corners, Euler angles and depth are what its centre, dimensions and rotation say.

CUBOID_COLUMNS = ("center_cam", "dimensions", "R_cam", "corners_cam", "yaw_pitch_roll", "depth")
GEOMETRY_ATOL = 1e-6  # stored float64; relative to the box's size for corners


CHECK_CHUNK_ROWS = 32_768  # cuboids checked at a time: the geometry's temporaries stay small at any size


def cuboid_checks(config: str, parts, prefix: str = "") -> list[dict]:
    """[{check, ok, detail}]: rotations orthonormal with det +1; corners = centre + R (signs [L, H, W] / 2);
    R = R_y(yaw) R_x(pitch) R_z(roll); depth = centre z; dimensions positive. ``parts``: (ids, columns)
    pairs, the ids a list or an arrow array, the columns arrow (chunked) arrays, checked a chunk of rows
    at a time; the examples are the first failing cuboids in the parts' order."""
    n = 0
    failed: dict[str, int] = {}
    examples: dict[str, list] = {}
    for ids, columns in parts:
        size = len(columns["depth"])
        for lo in range(0, max(size, 1), CHECK_CHUNK_ROWS):
            part = {c: columns[c].slice(lo, CHECK_CHUNK_ROWS) for c in CUBOID_COLUMNS}
            for name, ok in _cuboid_tests(part, prefix):
                rows = lo + np.flatnonzero(~ok)
                failed[name] = failed.get(name, 0) + len(rows)
                want = rows[:5 - len(examples.setdefault(name, []))]
                examples[name] += ids.take(want).to_pylist() if hasattr(ids, "take") else [ids[i] for i in want]
        n += size
    return [{"check": f"{config}: {name}", "ok": not count,
             "detail": f"{n:,} cuboids" if not count else f"{count:,} of {n:,} cuboids, e.g. {examples[name]}"}
            for name, count in failed.items()]


def _cuboid_tests(columns: dict, prefix: str) -> list[tuple[str, np.ndarray]]:
    """(check name, per-cuboid pass mask) for the cuboids in ``columns``."""
    center, dims = fixed_size_matrix(columns["center_cam"], 3), fixed_size_matrix(columns["dimensions"], 3)
    R, corners = fixed_size_matrix(columns["R_cam"], 3, 3), fixed_size_matrix(columns["corners_cam"], 8, 3)
    ypr = fixed_size_matrix(columns["yaw_pitch_roll"], 3)
    depth = np.asarray(columns["depth"].to_numpy(zero_copy_only=False), float)
    size = np.linalg.norm(dims, axis=1) if len(dims) else np.zeros(0)
    ortho, det_pos = geometry.check_rotations(R, atol=GEOMETRY_ATOL) if len(R) else (np.ones(0, bool),) * 2
    return [
        (f"{prefix}R_cam is a rotation (R R^T = I, det +1)", ortho & det_pos),
        (f"{prefix}dimensions positive", (dims > 0).all(axis=1) if len(dims) else np.ones(0, bool)),
        (f"{prefix}corners_cam = centre + R_cam (signs x [L, H, W] / 2)",
         (np.abs(corners - geometry.corners(center, dims, R)).max(axis=(1, 2)) <= GEOMETRY_ATOL * np.maximum(size, 1))
         if len(R) else np.ones(0, bool)),
        (f"{prefix}yaw_pitch_roll gives R_cam",
         (np.abs(geometry.rotation_from_ypr(ypr) - R).max(axis=(1, 2)) <= GEOMETRY_ATOL) if len(R) else np.ones(0, bool)),
        (f"{prefix}depth = centre z", np.abs(depth - center[:, 2]) <= GEOMETRY_ATOL * np.maximum(size, 1)),
    ]


# Declared for the core (benchwright.dataset.Dataset): the keys between configs, the class and split
# shares a build must keep, and how far a rebuild may drift before the report flags it.
REFERENCES = {"boxes": {"frame_id": "frames", "segment_id": "segments"},
              "frames": {"segment_id": "segments", "objects.box_id": "boxes"}}
# Video-level splits hold out ~20% of each species' videos (half of them for a 2-video species);
# no species vanishes from or swamps the boxes (the release: 4 to 19 videos per species).
PROPORTIONS = {"frames.split": {"validation": (0.1, 0.6)}, "boxes.species": {"*": (0.01, 0.7)}}
# The species mix of the boxes is what a detector is scored over: flagged from a smaller change.
DRIFT_THRESHOLDS = (DriftThreshold("js", 0.05, "boxes/*/species"),)


def rotation_flip_check(boxes) -> dict:
    """Label quality: consecutive observations of a track whose rotations differ by more than
    ``FLIP_TURN_DEG`` (informational: ok is always True; the detail counts them and names some)."""
    name = f"boxes: label quality, tracks turning > {FLIP_TURN_DEG:g} deg between consecutive observations"
    if boxes is None or boxes.num_rows < 2:
        return {"check": name, "ok": True, "detail": "no consecutive observations"}
    # columnar: segment codes from a dictionary encoding, rotations flattened (no Python row per box)
    seg_code = boxes["segment_id"].combine_chunks().dictionary_encode().indices.to_numpy()
    track = boxes["track_id"].to_numpy()
    frame = boxes["frame_index"].to_numpy()
    R = fixed_size_matrix(boxes["R_cam"], 3, 3)
    a, b = consecutive(np.arange(len(frame)), frame, seg_code, track)
    cos = (np.einsum("nji,nji->n", R[a], R[b]) - 1.0) / 2.0  # trace(Ra^T Rb) = sum of elementwise products
    turn = np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))
    flipped = np.flatnonzero(turn > FLIP_TURN_DEG)
    named = ", ".join(boxes["box_id"].take(b[flipped[:5]]).to_pylist())
    share = len(flipped) / len(a) if len(a) else 0.0
    detail = f"{len(flipped)} of {len(a)} consecutive pairs ({100 * share:.2f}%)" + (f", e.g. {named}" if named else "")
    return {"check": name, "ok": True, "detail": detail, "flipped_pairs": int(len(flipped)), "pairs": int(len(a))}


def ground_offset_check(boxes) -> dict:
    """Label quality: where box bottoms sit against the ground plane (informational, ok is True)."""
    name = (f"boxes: label quality, bottoms off the ground plane (> {FLOAT_OFFSET:g} H floating, "
            f"> {FRAGMENT_OFFSET:g} H fragments)")
    offset = (np.asarray(boxes["ground_offset"].to_numpy(zero_copy_only=False), float) if boxes is not None
              else np.zeros(0))
    known = np.isfinite(offset)
    if not known.any():
        return {"check": name, "ok": True, "detail": "no ground plane (no point clouds)"}
    o = offset[known]
    floating = int(((np.abs(o) > FLOAT_OFFSET) & (np.abs(o) <= FRAGMENT_OFFSET)).sum())
    fragments = np.flatnonzero(known)[np.abs(o) > FRAGMENT_OFFSET]
    named = ", ".join(boxes["box_id"].take(fragments[:5]).to_pylist())
    detail = (f"median {np.median(o):.3f} H over {len(o)} boxes; {floating} floating "
              f"({100 * floating / len(o):.2f}%), {len(fragments)} fragments ({100 * len(fragments) / len(o):.2f}%)"
              + (f", e.g. {named}" if named else "") + f"; {int((~known).sum())} without a plane")
    return {"check": name, "ok": True, "detail": detail, "median": float(np.median(o)), "floating": floating,
            "fragments": int(len(fragments)), "boxes": int(len(o))}


def _between(column, lo=None, hi=None, **kw):
    return ("ExpectColumnValuesToBeBetween", {"column": column, "min_value": lo, "max_value": hi, **kw})


EXPECTATIONS = {
    "boxes": [
        ("ExpectColumnValuesToBeInSet", {"column": "category_id", "value_set": list(schema.CATEGORY_IDS.values())}),
        _between("depth", 0, None, strict_min=True),
        _between("truncation", 0, 1),
        _between("visibility", 0, 1, mostly=1.0),
        _between("scale_factor", 0, None, strict_min=True),
        _between("support_points", -1, None),
        _between("track_id", 0, None),
        ("ExpectColumnValuesToNotBeNull", {"column": "kitti_representable"}),
    ],
    "frames": [
        _between("width", 1, None),
        _between("height", 1, None),
    ],
    "segments": [
        ("ExpectColumnValuesToBeInSet", {"column": "scale_rule", "value_set": ["1/median(z)", "1/max(z)", "none", "given"]}),
        _between("scale_factor", 0, None, strict_min=True),
        _between("num_boxes", 0, None),
    ],
}
