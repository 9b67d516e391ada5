"""WildBox evaluator: 2D AP, AP-BEV, AP-3D, Rel-AP-3D and the two NHDs, plus the KITTI protocol.

Ground truth is the built dataset's ``boxes`` config (``load_ground_truth``); predictions are
the WildBox authors' JSON or a KITTI result folder (``load_predictions``). ``evaluate`` works
on numpy arrays only, so tests and benchmarks build their inputs in memory.

Protocol (every choice is also written to ``metrics["meta"]["protocol"]``):

* Classes: the 6 species (dataset ids 1000..1005). Every class-aware metric matches a
  prediction only to ground truth of its own class in its own image. ``per_class`` is keyed by
  species; ``macro`` is the mean over the classes that have ground truth; ``micro`` pools all
  classes' predictions into one ranking against all ground truth (the class must still match).
* At most ``max_dets`` (100) predictions per image and class are kept (COCO's maxDets); for the
  class-agnostic metric, 100 per image.
* Ranking: by descending score; equal scores rank by image id (as COCOeval, which walks the
  images in id order), and within an image by the predictions' values -- never by their place
  in the file, so any order of the same predictions gives the same metrics.
* Matching: greedy by descending score, each prediction takes the unmatched ground truth of
  highest IoU if IoU >= threshold (COCO). AP is 101-point COCO interpolation
  (``ap_method="coco101"``) for every metric but the default AP-BEV. AP values are percentages.
* ``ap2d@0.50``: class-aware 2D AP at IoU 0.5 against ``bbox2d_proj`` (the projected cuboid, as
  the authors' configs do). ``ap2d_agnostic@{0.25,0.50,0.75}``: classes ignored in matching,
  against ``bbox2d_tight`` (the SAM3 mask box); its ``micro`` is the class-agnostic AP and its
  ``per_class`` the same matching seen per species: TP = matched to a box of that species
  (whatever the predicted label), FP = unmatched and labelled that species, others ignored.
* AP-BEV: IoU of the footprints on the camera x-z plane, each the convex hull of the 8 projected
  corners of the full rotated cuboid (a hexagon under pitch or roll). Two protocols
  (``ap_bev_protocol``): ``ap_bev_voc11@{0.25,0.50}`` (default, "voc11") is the WildBox
  authors' ``bev_ap_eval.py``, so numbers sit beside the paper's: every prediction (no max_dets),
  greedy by score to the best unmatched same-species GT with IoU >= t, VOC 11-point AP with the
  devkit's literal ``recall >= t`` (``ap.average_precision(..., "voc11")``), macro = mean of the
  per-species APs, micro = all species pooled with class-agnostic matching (as their script).
  ``ap_bev@{0.25,0.50}`` ("coco101") is the COCO-style metric, as ``ap3d``: max_dets,
  ``ap_method`` interpolation, class-aware micro.
* ``ap3d@0.25`` and ``ap3d`` (Omni3D: mean of the APs at IoU 0.05, 0.10, ..., 0.50): exact
  oriented 3D IoU for full rotations (``iou.iou_3d_pairs``).
* ``ap3d_by_depth`` and (with "coco101") ``ap_bev@0.25_by_depth``: the metric per relative depth bucket
  (``DEPTH_BUCKETS``: near < 0.95 <= medium < 1.05 <= far, the segment median being 1), as
  Omni3D's near / medium / far: GT outside the bucket are ignored, and so are predictions whose
  depth is outside it unless they match a GT of the bucket.
* ``rel_ap3d``: ``ap3d`` after one global scale s applied to every predicted box about the
  camera origin (centre and dimensions times s). s* maximises the mean over all ground truth
  of its best same-class 3D IoU in its image; searched on ``np.linspace(0.3, 3.0, 28)``.
  s* and the searched curve are in ``rel_ap3d["scale"]`` / ``rel_ap3d["search"]``.
* ``nhd_hungarian``: sum of the 8 corner distances under the optimal (Hungarian, scipy
  ``linear_sum_assignment``) corner assignment, divided by the diagonal of the GT's
  axis-aligned corner extent. ``nhd_hausdorff``: symmetric Hausdorff distance between the two
  corner sets divided by the mean of the two boxes' diagonals (no scale search).
  Both are averaged over prediction-GT pairs matched greedily by score with 2D IoU >= 0.75
  (same class, ``nhd_match_box``: GT ``bbox2d_proj`` by default). Components: for c in xy, z,
  dims, pose the box is the GT with only c taken from the prediction (xy = centre x, y; z =
  centre depth; dims = [W, H, L]; pose = R). ``depth_share`` = NHD_z / NHD_overall of the
  averaged values (0 when NHD_overall is 0). Unmatched boxes do not enter the NHDs.
* Rotations that are not orthonormal (|R R^T - I| > 1e-6) are replaced by the nearest rotation
  (``geometry.project_to_so3``) before any 3D metric; corners are recomputed from centre,
  dimensions and R (``geometry.corners``), never read from ``corners_cam``.
* Boxes with a dimension <= 0 have IoU 0 with everything.
* Ignored ground truth (``ignore``; default none: every GT counts, as in the WildBox paper's
  numbers, whose annotations carry the constants truncation 0, visibility 1): ``ignore="omni3d"``
  applies Omni3D's test-time filter (``omni3d_ignore``) to the real truncation, visibility,
  support points and mask pixels; a bool array gives any other set. As COCO: ignored GT do not
  count as positives, a prediction takes an ignored GT only when no regular GT is available,
  and then counts neither as TP nor as FP. Rel-AP-3D's search and the NHDs use regular GT only.

KITTI-format data: ``evaluation.kitti.evaluate_kitti`` runs the KITTI devkit protocol (see its
docstring) and its result is stored under the ``kitti`` key.
"""
from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import numpy as np
from scipy.optimize import linear_sum_assignment

from benchwright import fields, geometry, strict_json
from benchwright.arguments import ArgumentParser, parser_of
from benchwright.arrays import group_pairs
from benchwright.errors import BenchwrightError, RecordError, SourceError
from benchwright.evaluation import ap as apm
from benchwright.evaluation import iou as ioum
from benchwright.evaluation.kitti import evaluate_kitti
from benchwright.formats import kitti
from benchwright.hashing import stable_int_id
from benchwright.loaders import wildbox as wbl
from benchwright.schemas import wildbox as schema
from benchwright.summary import Table, show, write_json
from benchwright.tables import fixed_size_matrix

__all__ = [
    "SCALE_GRID", "AP3D_THRESHOLDS", "NHD_COMPONENTS", "load_ground_truth", "load_predictions",
    "read_prediction_json", "read_prediction_kitti", "evaluate", "evaluate_paths", "omni3d_ignore",
    "OMNI3D_IGNORE", "IGNORE_MODES", "DEPTH_BUCKETS", "AP_BEV_PROTOCOLS", "DEFAULT_AP_BEV_PROTOCOL",
    "summary_tables", "headline",
    "run_cli",
]

SPECIES = schema.SPECIES
N_CLASSES = len(SPECIES)
FIRST_CATEGORY_ID = min(schema.CATEGORY_IDS.values())
SCALE_GRID = np.linspace(0.3, 3.0, 28)
AP3D_THRESHOLDS = np.round(np.arange(1, 11) * 0.05, 2)  # 0.05 ... 0.50
AGNOSTIC_THRESHOLDS = (0.25, 0.50, 0.75)
BEV_THRESHOLDS = (0.25, 0.50)
# AP-BEV protocols: "voc11" = the WildBox authors' tools/bev_ap_eval.py (their published numbers),
# "coco101" = the COCO-style metric the other keys use; "both" reports the two.
AP_BEV_PROTOCOLS = ("voc11", "coco101", "both")
# The one default everywhere (evaluate, baseline --evaluate, the benchmarks): the published numbers' protocol.
DEFAULT_AP_BEV_PROTOCOL = "voc11"
AP_BEV_PROTOCOL_NAMES = {"voc11": "VOC 11-point", "coco101": "COCO 101-point"}
AP_BEV_VOC11 = ("the WildBox authors' bev_ap_eval.py: every prediction (no max_dets), by descending score, "
                "takes the unmatched same-species GT of its image with the highest BEV IoU if IoU >= t; "
                "VOC 11-point (max precision at recall >= t, t = 0, 0.1, ..., 1 compared literally); "
                "macro = mean of the per-species APs; micro = all species pooled with class-agnostic matching")
# Omni3D's near / medium / far buckets (10 m, 35 m) mean nothing after the per-segment
# normalisation; these are relative to the segment's median depth (1) and split WildBox's
# depths into about equal thirds.
DEPTH_BUCKETS = {"near": (0.0, 0.95), "medium": (0.95, 1.05), "far": (1.05, math.inf)}
NHD_COMPONENTS = ("overall", "xy", "z", "dims", "pose")
NHD_IOU = 0.75
GT_COLUMNS = ("image_id", "frame_id", "segment_id", "species", "coarse_class", "category_id", "center_cam",
              "dimensions", "R_cam", "corners_cam", "bbox2d_tight", "bbox2d_proj", "depth",
              "truncation", "visibility", "segmentation_pts", "support_points", "kitti_representable",
              "K", "image_width", "image_height", "bbox_source")
# Omni3D's test-time filter (cubercnn ``is_ignore`` with ``do_test``'s settings): truncation >=
# 0.33, visibility <= 0.33, projected 2D box height <= 0.0625 or >= 1.5 image heights, a
# dimension <= 0, no points (lidar_pts; here the support points) or no mask pixels.
OMNI3D_IGNORE = {"truncation_thres": 0.33, "visibility_thres": 0.33, "min_height_thres": 0.0625,
                 "max_height_thres": 1.5}
IGNORE_MODES = ("none", "omni3d")
_REQUIRED_GT = ("image_id", "category_id", "bbox2d_tight", "bbox2d_proj", "center_cam",
                "dimensions", "R_cam")
_REQUIRED_PRED = ("image_id", "category_id", "score", "bbox", "center_cam", "dimensions", "pose")
_SHAPES = {"bbox2d_tight": (4,), "bbox2d_proj": (4,), "bbox": (4,), "center_cam": (3,),
           "dimensions": (3,), "R_cam": (3, 3), "pose": (3, 3)}


# =========================================================================== ground truth I/O
def load_ground_truth(dataset_dir, split: str = "validation") -> dict[str, np.ndarray]:
    """Ground truth arrays of one split of a built WildBox folder (``boxes/<split>-*.parquet``).

    Keys: image_id (G,), category_id (G,), species (G,), center_cam (G, 3), dimensions (G, 3)
    [W, H, L], R_cam (G, 3, 3), corners_cam (G, 8, 3), bbox2d_tight / bbox2d_proj (G, 4) xyxy,
    K (G, 3, 3), depth, truncation, visibility, segmentation_pts (-1 without a mask, as the Omni3D
    export), support_points,
    kitti_representable, image_width, image_height (G,), frame_id and segment_id (G,) object arrays; plus ``image_ids``: every image of the split
    (from the frames config when present, so frames without boxes count too).
    """
    root = Path(dataset_dir)
    files = sorted((root / "boxes").glob(f"{split}-*.parquet"))
    if not files:
        raise SourceError(f"{root / 'boxes'}: no {split}-*.parquet files (is this a built WildBox folder?)")
    table = wbl.read_config(root, "boxes", split, columns=list(GT_COLUMNS))
    gt = wbl.boxes_arrays(table)
    for name in ("depth", "truncation", "visibility", "segmentation_pts", "support_points", "kitti_representable",
                 "image_width", "image_height"):
        gt[name] = table.column(name).to_numpy(zero_copy_only=False)
    for name in ("frame_id", "segment_id"):
        gt[name] = np.asarray(table.column(name).to_pylist(), dtype=object)
    # as the Omni3D export holds it: -1 (unavailable) for a box without a mask, which Omni3D keeps
    gt["segmentation_pts"] = wbl.omni3d_segmentation_pts(gt["segmentation_pts"],
                                                         table.column("bbox_source").to_numpy())
    image_ids = np.unique(gt["image_id"])
    if sorted((root / "frames").glob(f"{split}-*.parquet")):
        frames = wbl.read_config(root, "frames", split, columns=["image_id"])
        image_ids = np.union1d(image_ids, frames.column("image_id").to_numpy())
    gt["image_ids"] = image_ids
    return gt


def _frame_image_ids(root: Path, split: str) -> dict[str, int]:
    """KITTI export frame name (``000123``) -> image_id of the split's frames, through the export's
    ``exports/kitti/frame_map.txt`` (name, frame_id, image, split)."""
    fmap = root / "exports" / "kitti" / "frame_map.txt"
    if not fmap.is_file():
        return {}
    frames = wbl.read_config(root, "frames", split, columns=["frame_id", "image_id"])
    by_frame = dict(zip(frames.column("frame_id").to_pylist(), frames.column("image_id").to_pylist()))
    out = {}
    for number, line in enumerate(kitti.read_text(fmap, str(fmap)).splitlines(), start=1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) < 2:
            raise RecordError(f"{fmap}:{number}", "expected '<name> <frame_id> ...'")
        if parts[1] in by_frame:
            out[parts[0]] = int(by_frame[parts[1]])
    return out


# ============================================================================ predictions I/O
def load_predictions(path, frame_to_image: dict[str, int] | None = None) -> dict[str, np.ndarray]:
    """Predictions from the authors' JSON file or a KITTI result folder (one ``<frame>.txt`` each).

    Returns image_id (P,), category_id (P,), score (P,), bbox (P, 4) xyxy, center_cam (P, 3),
    dimensions (P, 3) [W, H, L], pose (P, 3, 3). Malformed input raises ``RecordError`` naming
    the file and the entry.
    """
    path = Path(path)
    if path.is_dir():
        return read_prediction_kitti(path, frame_to_image)
    if not path.is_file():
        raise SourceError(f"{path}: prediction file or folder not found")
    return read_prediction_json(path)


def _empty_predictions() -> dict[str, np.ndarray]:
    return {"image_id": np.zeros(0, np.int64), "category_id": np.zeros(0, np.int64),
            "score": np.zeros(0), "bbox": np.zeros((0, 4)), "center_cam": np.zeros((0, 3)),
            "dimensions": np.zeros((0, 3)), "pose": np.zeros((0, 3, 3))}


# the fields of one predicted instance and their shapes (the JSON's bbox is xywh)
_INSTANCE_FIELDS = {"bbox": (4,), "score": (), "category_id": (), "center_cam": (3,), "dimensions": (3,),
                    "pose": (3, 3)}


def _check_instance(inst, where: str) -> None:
    """Raise RecordError(where, ...) for the first thing wrong with one JSON instance."""
    if not isinstance(inst, dict):
        raise RecordError(where, f"instance must be an object, got {fields.quote(inst)}")
    for key, shape in _INSTANCE_FIELDS.items():
        if key not in inst:
            raise RecordError(where, f"missing '{key}'")
        if key != "category_id":
            fields.numbers(inst[key], shape, key, where)
    cid = fields.integer(inst["category_id"], "category_id", where, integral_float=True)
    if not FIRST_CATEGORY_ID <= cid < FIRST_CATEGORY_ID + N_CLASSES:
        hint = (" (looks like a contiguous model id: WildBox uses dataset ids, "
                f"{FIRST_CATEGORY_ID} + rank)") if 0 <= cid < N_CLASSES else ""
        raise RecordError(where, f"'category_id' {cid} is not a WildBox category "
                                 f"({FIRST_CATEGORY_ID}..{FIRST_CATEGORY_ID + N_CLASSES - 1}){hint}")
    w, h = inst["bbox"][2], inst["bbox"][3]
    if w < 0 or h < 0:
        raise RecordError(where, f"'bbox' is xywh and needs w, h >= 0, got {inst['bbox']!r}")
    if any(d < 0 for d in inst["dimensions"]):
        raise RecordError(where, f"'dimensions' must be >= 0, got {inst['dimensions']!r}")


def read_prediction_json(path) -> dict[str, np.ndarray]:
    """The WildBox authors' prediction JSON: ``[{"image_id", "instances": [{bbox xywh, score,
    category_id, center_cam, dimensions [W, H, L], pose 3x3}, ...]}, ...]``.

    Read strictly (``strict_json.read``: UTF-8, a repeated key refused) and typed by ``fields``:
    ``image_id`` an int64 integer, every other value a finite JSON number (a string such as ``"0.5"``
    or a boolean is refused, not converted), ``category_id`` a WildBox id. Errors name the file and
    entry, e.g. ``preds.json#[12].instances[3] (image_id=4711)``, or the file and line.
    """
    path = Path(path)
    data = strict_json.read(path)
    if not isinstance(data, list):
        raise RecordError(str(path), "expected a JSON list of {image_id, instances} entries, "
                                     f"got {fields.quote(data)}")
    image_ids, flat, where = [], [], []
    for i, entry in enumerate(data):
        loc = f"{path}#[{i}]"
        if not isinstance(entry, dict):
            raise RecordError(loc, f"entry must be an object, got {fields.quote(entry)}")
        if "image_id" not in entry or "instances" not in entry:
            missing = [k for k in ("image_id", "instances") if k not in entry]
            raise RecordError(loc, f"missing {', '.join(repr(k) for k in missing)}")
        iid = fields.integer(entry["image_id"], "image_id", loc)
        insts = entry["instances"]
        if not isinstance(insts, list):
            raise RecordError(loc, f"'instances' must be a list, got {fields.quote(insts)}")
        image_ids.extend([iid] * len(insts))
        flat.extend(insts)
        where.extend((i, j, iid) for j in range(len(insts)))
    if not flat:
        return _empty_predictions()

    def fail_at(k: int):
        i, j, iid = where[k]
        _check_instance(flat[k], f"{path}#[{i}].instances[{j}] (image_id={iid})")

    def first_bad() -> None:
        for k in range(len(flat)):
            fail_at(k)
        raise RecordError(str(path), "malformed prediction entries")  # pragma: no cover

    if not all(isinstance(inst, dict) and _INSTANCE_FIELDS.keys() <= inst.keys() for inst in flat):
        first_bad()
    cols = {}
    for key, shape in _INSTANCE_FIELDS.items():
        cols[key] = fields.number_column([inst[key] for inst in flat], shape)
        if cols[key] is None:  # a value of the wrong type, shape or a non-finite one: named by the slow path
            first_bad()
    cid = cols["category_id"]
    bad = (cid != np.round(cid)) | (cid < FIRST_CATEGORY_ID) | (cid >= FIRST_CATEGORY_ID + N_CLASSES)
    bad |= (cols["bbox"][:, 2] < 0) | (cols["bbox"][:, 3] < 0) | np.any(cols["dimensions"] < 0, axis=1)
    if bad.any():
        fail_at(int(np.flatnonzero(bad)[0]))
    bbox = cols["bbox"].copy()
    bbox[:, 2:] += bbox[:, :2]  # xywh -> xyxy
    return {"image_id": np.asarray(image_ids, np.int64), "category_id": cid.astype(np.int64),
            "score": cols["score"], "bbox": bbox, "center_cam": cols["center_cam"],
            "dimensions": cols["dimensions"], "pose": cols["pose"]}


def _frame_key(stem: str, frame_to_image: dict[str, int] | None, where: str) -> int:
    if frame_to_image:
        if stem not in frame_to_image:
            raise RecordError(where, f"frame '{stem}' is not in the dataset's KITTI frame_map.txt")
        return int(frame_to_image[stem])
    if not (stem.isascii() and stem.isdigit()):
        raise RecordError(where, "file name must be the frame number / image_id (e.g. 000123.txt)")
    return fields.integer(int(stem), "image_id (the file name)", where)


def read_prediction_kitti(pred_dir, frame_to_image: dict[str, int] | None = None) -> dict[str, np.ndarray]:
    """KITTI result folder: one ``<frame>.txt`` per image, 16 columns (the last is the score).

    The type column is a species name (aliases accepted). ``frame_to_image`` maps the file stem
    to an image_id (the dataset's KITTI ``frame_map.txt``); without it the stem is the image_id.
    (x, y, z) is the bottom-face centre: centre = (x, y - h/2, z); [W, H, L] = (w, h, l);
    R = R_y(rotation_y).
    """
    pred_dir = Path(pred_dir)
    files = sorted(pred_dir.glob("*.txt"))
    rows = {k: [] for k in ("image_id", "category_id", "score", "bbox", "center_cam", "dimensions", "pose")}
    for f in files:
        loc = f"{pred_dir.name}/{f.name}"
        iid = _frame_key(f.stem, frame_to_image, loc)
        text = kitti.read_text(f, loc)
        objs, errors = kitti.parse_label_lines(text, loc)
        if errors:
            raise errors[0]
        lines = kitti.row_line_numbers(text)
        for number, obj in zip(lines, objs):
            where = f"{loc}:{number}"
            if obj.score is None:
                raise RecordError(where, "a prediction needs 16 columns (the 16th is the score)")
            species = schema.canonical_species(obj.type)
            if species is None:
                raise RecordError(where, f"type {fields.clip(obj.type)} is not a WildBox species ({', '.join(SPECIES)})")
            if min(obj.h, obj.w, obj.l) < 0:
                raise RecordError(where, f"negative dimensions h={obj.h} w={obj.w} l={obj.l}")
            rows["image_id"].append(iid)
            rows["category_id"].append(schema.CATEGORY_IDS[species])
            rows["score"].append(obj.score)
            rows["bbox"].append(obj.bbox)
            box = kitti.to_canonical(obj, where)
            rows["center_cam"].append(box["center_cam"])
            rows["dimensions"].append(box["dimensions"])
            rows["pose"].append(box["R_cam"])
    if not rows["score"]:
        return _empty_predictions()
    return {"image_id": np.asarray(rows["image_id"], np.int64),
            "category_id": np.asarray(rows["category_id"], np.int64),
            "score": np.asarray(rows["score"], float), "bbox": np.asarray(rows["bbox"], float),
            "center_cam": np.asarray(rows["center_cam"], float),
            "dimensions": np.asarray(rows["dimensions"], float),
            "pose": np.asarray(rows["pose"], float)}


# =============================================================================== array checks
def _arrays(d: dict, required, kind: str) -> dict[str, np.ndarray]:
    missing = [k for k in required if k not in d]
    if missing:
        raise ValueError(f"{kind} arrays miss {', '.join(missing)}")
    out = {k: np.asarray(d[k]) for k in required}
    n = len(out["image_id"])
    for k, v in out.items():
        shape = _SHAPES.get(k, ())
        if v.shape != (n,) + shape:
            raise ValueError(f"{kind}['{k}'] must have shape {(n,) + shape}, got {v.shape}")
    out["image_id"] = out["image_id"].astype(np.int64)
    cls = out["category_id"].astype(np.int64) - FIRST_CATEGORY_ID
    if np.any((cls < 0) | (cls >= N_CLASSES)):
        bad = out["category_id"][(cls < 0) | (cls >= N_CLASSES)][0]
        raise ValueError(f"{kind} category_id {bad} is not a WildBox category id")
    out["cls"] = cls
    return out


def _canonical_order(p: dict) -> np.ndarray:
    """Permutation putting predictions in one order whatever the file's: image id, then
    descending score, then the values (class, box, cuboid) as tie-breaks.

    Every ranking downstream is stable, so equal scores in different images rank by image id
    (as COCOeval, which walks images in id order) and equal scores in one image by their values,
    never by their place in the file; identical predictions are interchangeable.
    """
    n = len(p["score"])
    priority = [p["image_id"], -np.asarray(p["score"], float), p["category_id"]] + [
        col for k in ("bbox", "center_cam", "dimensions", "pose") for col in np.asarray(p[k], float).reshape(n, int(np.prod(_SHAPES[k]))).T]
    return np.lexsort(priority[::-1])  # lexsort's last key is the primary one


def _rotations(R: np.ndarray) -> np.ndarray:
    R = np.asarray(R, float)
    if len(R) == 0:
        return R.reshape(0, 3, 3)
    ortho, det_pos = geometry.check_rotations(R)
    fix = ~(ortho & det_pos) & np.all(np.isfinite(R), axis=(1, 2))
    if fix.any():
        R = R.copy()
        R[fix] = geometry.project_to_so3(R[fix])
    return R


def omni3d_ignore(gt: dict, *, truncation_thres: float = OMNI3D_IGNORE["truncation_thres"],
                  visibility_thres: float = OMNI3D_IGNORE["visibility_thres"],
                  min_height_thres: float = OMNI3D_IGNORE["min_height_thres"],
                  max_height_thres: float = OMNI3D_IGNORE["max_height_thres"]) -> np.ndarray:
    """(G,) bool: the ground truth Omni3D's evaluation ignores (see ``OMNI3D_IGNORE``).

    Reads dimensions, bbox2d_proj, image_height, truncation and visibility (negative = unknown,
    never ignored, as Omni3D), and support_points / segmentation_pts when present (0 = ignored).
    """
    dims = np.asarray(gt["dimensions"], float)
    proj = np.asarray(gt["bbox2d_proj"], float)
    height = proj[:, 3] - proj[:, 1]
    image_h = np.asarray(gt["image_height"], float)
    trunc = np.asarray(gt["truncation"], float)
    vis = np.asarray(gt["visibility"], float)
    ignore = np.any(~(dims > 0), axis=1)
    ignore |= ~(height > min_height_thres * image_h) | (height >= max_height_thres * image_h)
    ignore |= (trunc >= 0) & (trunc >= truncation_thres)
    ignore |= (vis >= 0) & (vis <= visibility_thres)
    for name in ("support_points", "segmentation_pts"):
        if name in gt:
            ignore |= np.asarray(gt[name]) == 0
    return ignore


def _gt_ignore(gt: dict, ignore, n_gt: int) -> np.ndarray:
    if ignore is None or (isinstance(ignore, str) and ignore == "none"):
        return np.zeros(n_gt, bool)
    if isinstance(ignore, str):
        if ignore != "omni3d":
            raise ValueError(f"unknown ignore mode {ignore!r}; expected one of {IGNORE_MODES} or a bool array")
        missing = [k for k in ("dimensions", "bbox2d_proj", "image_height", "truncation", "visibility") if k not in gt]
        if missing:
            raise ValueError(f"ignore='omni3d' needs gt arrays {', '.join(missing)}")
        return omni3d_ignore(gt)
    mask = np.asarray(ignore, bool)
    if mask.shape != (n_gt,):
        raise ValueError(f"ignore must have shape ({n_gt},), got {mask.shape}")
    return mask


# ==================================================================================== metrics
_PAIR_CHUNK = 1 << 19  # pairs per vectorised block: bounds memory when images hold many predictions


def _chunked(n: int, fn) -> np.ndarray:
    """fn(slice) over consecutive blocks of ``n`` pairs, concatenated."""
    out = np.empty(n)
    for s in range(0, n, _PAIR_CHUNK):
        sl = slice(s, min(n, s + _PAIR_CHUNK))
        out[sl] = fn(sl)
    return out


def _pct(x) -> float | None:
    return None if x is None or not np.isfinite(x) else float(100.0 * x)


def _summary(per_class: np.ndarray, micro: float) -> dict:
    """{'macro', 'micro', 'per_class'} in percent from per-class fractions (NaN = no GT)."""
    with np.errstate(all="ignore"):
        macro = float(np.nanmean(per_class)) if np.isfinite(per_class).any() else float("nan")
    return {"macro": _pct(macro), "micro": _pct(micro),
            "per_class": {SPECIES[c]: _pct(per_class[c]) for c in range(N_CLASSES)}}


def _split_matches(matched, gt_ign) -> tuple[np.ndarray, np.ndarray]:
    """(TP, ignored) bool arrays of a match matrix: matched to a regular / to an ignored GT."""
    hit = matched >= 0
    on_ignored = hit & gt_ign[np.maximum(matched, 0)] if len(gt_ign) else np.zeros_like(hit)
    return hit & ~on_ignored, on_ignored


def _class_aps(sel, matched, score, pred_cls, gt_cls, gt_ign, method, pred_out=None) -> tuple[np.ndarray, np.ndarray]:
    """Per-class (C, T) and micro (T,) AP fractions of the predictions ``sel`` (regular GT only).

    ``pred_out`` (P,) bool: predictions outside the evaluated range (a depth bucket): ignored
    unless they matched a regular GT, as COCO does with area ranges."""
    tp, ign = _split_matches(matched[:, sel], gt_ign)
    if pred_out is not None:
        ign |= ~tp & pred_out[sel][None, :]
    s, c = score[sel], pred_cls[sel]
    t_n = matched.shape[0]
    regular = gt_cls[~gt_ign]
    per = np.full((N_CLASSES, t_n), np.nan)
    for k in range(N_CLASSES):
        n_gt = int((regular == k).sum())
        if n_gt:
            m = c == k
            per[k] = apm.average_precision(s[m], tp[:, m], n_gt, method, ignore=ign[:, m])
    micro = apm.average_precision(s, tp, len(regular), method, ignore=ign) if len(regular) \
        else np.full(t_n, np.nan)
    return per, np.atleast_1d(micro)


def _by_depth(buckets, g_depth, p_depth, g_ign, match, sel, score, pred_cls, gt_cls, method, summarise) -> dict:
    """One metric per depth bucket, Omni3D style: GT outside [lo, hi) are ignored, and so are
    predictions outside it that match no regular GT. ``match(gt_ignore)`` -> match matrix."""
    out = {"bounds": {name: [lo, None if math.isinf(hi) else hi] for name, (lo, hi) in buckets.items()}}
    for name, (lo, hi) in buckets.items():
        ign = g_ign | ~((g_depth >= lo) & (g_depth < hi))
        p_out = ~((p_depth >= lo) & (p_depth < hi))
        per, micro = _class_aps(sel, match(ign), score, pred_cls, gt_cls, ign, method, pred_out=p_out)
        out[name] = {**summarise(per, micro), "n_gt": int((~ign).sum())}
    return out


def _ap_bev_voc11(p_img, p_cls, score, g_img, g_cls, g_ign, bev_iou) -> dict:
    """``ap_bev_voc11@{0.25,0.50}``: the WildBox authors' protocol (``AP_BEV_VOC11``).

    Per species: every prediction of it, greedy by score, each taking the unmatched ground truth
    of its species and image with the highest BEV IoU if IoU >= t; VOC 11-point AP. Macro: the
    mean over the species that have ground truth (their script counts a species without ground
    truth as 0; every species has some in the released validation split). Micro: every
    prediction in one ranking, matched class-agnostically (to the best unmatched GT of its image,
    whatever the species), as their script's "micro". Ignored GT (``ignore``, not part of their
    protocol) keep COCO semantics. ``bev_iou(p_idx, g_idx)`` gives the pairs' BEV IoU.
    """
    pa, ga = group_pairs(p_img, g_img)  # every prediction with every GT of its image
    iou = bev_iou(pa, ga)
    same = p_cls[pa] == g_cls[ga]
    n_gt = len(g_cls)
    every = np.arange(len(score))
    m = apm.greedy_match(p_img * N_CLASSES + p_cls, score, pa[same], ga[same], iou[same], n_gt, BEV_THRESHOLDS,
                         gt_ignore=g_ign)
    per, _ = _class_aps(every, m, score, p_cls, g_cls, g_ign, "voc11")
    m = apm.greedy_match(p_img, score, pa, ga, iou, n_gt, BEV_THRESHOLDS, gt_ignore=g_ign)
    tp, ign = _split_matches(m, g_ign)
    n_regular = int((~g_ign).sum())
    micro = (np.atleast_1d(apm.average_precision(score, tp, n_regular, "voc11", ignore=ign)) if n_regular
             else np.full(len(BEV_THRESHOLDS), np.nan))
    return {f"ap_bev_voc11@{t:.2f}": _summary(per[:, k], micro[k]) for k, t in enumerate(BEV_THRESHOLDS)}


def _agnostic_aps(sel, matched, score, pred_cls, gt_cls, gt_ign, method) -> tuple[np.ndarray, np.ndarray]:
    """Class-agnostic AP (micro) and its per-species view.

    For species c: TP = a prediction matched (class-agnostically) to a regular GT of species c,
    whatever its label; FP = an unmatched prediction labelled c; every other prediction is ignored.
    """
    m = matched[:, sel]
    s, pc = score[sel], pred_cls[sel]
    t_n = m.shape[0]
    tp_any, ign = _split_matches(m, gt_ign)
    regular = gt_cls[~gt_ign]
    micro = np.atleast_1d(apm.average_precision(s, tp_any, len(regular), method, ignore=ign)) if len(regular) \
        else np.full(t_n, np.nan)
    per = np.full((N_CLASSES, t_n), np.nan)
    matched_cls = np.where(tp_any, gt_cls[np.maximum(m, 0)] if len(gt_cls) else -1, -1)
    for k in range(N_CLASSES):
        n_gt = int((regular == k).sum())
        if n_gt:
            tp = matched_cls == k
            ignore = ~tp & ((m >= 0) | (pc != k)[None, :])
            per[k] = apm.average_precision(s, tp, n_gt, method, ignore=ignore)
    return per, micro


def _corner_sets(center, dims, R) -> np.ndarray:
    return geometry.corners(center, dims, R)


def _nhd_values(pc, pd, pR, gc, gd, gR) -> dict[str, dict[str, np.ndarray]]:
    """Per-pair NHD (Hungarian and Hausdorff) for the full box and each component swap."""
    g_corners = _corner_sets(gc, gd, gR)
    g_diag = np.linalg.norm(g_corners.max(axis=1) - g_corners.min(axis=1), axis=1)
    variants = {
        "overall": (pc, pd, pR),
        "xy": (np.column_stack([pc[:, 0], pc[:, 1], gc[:, 2]]), gd, gR),
        "z": (np.column_stack([gc[:, 0], gc[:, 1], pc[:, 2]]), gd, gR),
        "dims": (gc, pd, gR),
        "pose": (gc, gd, pR),
    }
    hung, haus = {}, {}
    for name, (c, d, R) in variants.items():
        corners = _corner_sets(c, d, R)
        dist = np.linalg.norm(corners[:, :, None, :] - g_corners[:, None, :, :], axis=-1)  # (M, 8, 8)
        if len(dist):
            cols = np.array([linear_sum_assignment(m)[1] for m in dist])
            total = np.take_along_axis(dist, cols[:, :, None], axis=2).sum(axis=(1, 2))
        else:
            total = np.zeros(0)
        diag = np.linalg.norm(corners.max(axis=1) - corners.min(axis=1), axis=1)
        hd = np.maximum(dist.min(axis=2).max(axis=1), dist.min(axis=1).max(axis=1)) if len(dist) else np.zeros(0)
        with np.errstate(divide="ignore", invalid="ignore"):
            hung[name] = np.where(g_diag > 0, total / g_diag, np.nan)
            haus[name] = np.where(g_diag + diag > 0, hd / (0.5 * (g_diag + diag)), np.nan)
    return {"nhd_hungarian": hung, "nhd_hausdorff": haus}


def _finite(x) -> float | None:
    return float(x) if np.isfinite(x) else None


def _nhd_entry(vals: dict[str, np.ndarray], pair_cls: np.ndarray) -> dict:
    def block(mask) -> dict:
        if not mask.any():
            return {k: None for k in (*NHD_COMPONENTS, "depth_share")}
        with np.errstate(all="ignore"):
            out = {k: _finite(np.nanmean(vals[k][mask])) if np.isfinite(vals[k][mask]).any() else None
                   for k in NHD_COMPONENTS}
        if out["overall"] is None or out["z"] is None:
            out["depth_share"] = None
        else:
            out["depth_share"] = out["z"] / out["overall"] if out["overall"] > 0 else 0.0
        return out

    per = {SPECIES[c]: block(pair_cls == c) for c in range(N_CLASSES)}
    have = [v for v in per.values() if all(v[k] is not None for k in NHD_COMPONENTS)]
    if have:
        macro = {k: float(np.mean([v[k] for v in have])) for k in NHD_COMPONENTS}
        macro["depth_share"] = macro["z"] / macro["overall"] if macro["overall"] > 0 else 0.0
    else:
        macro = {k: None for k in (*NHD_COMPONENTS, "depth_share")}
    return {"macro": macro, "micro": block(np.ones(len(pair_cls), bool)), "per_class": per,
            "n_pairs": {"micro": int(len(pair_cls)),
                        **{SPECIES[c]: int((pair_cls == c).sum()) for c in range(N_CLASSES)}}}


def evaluate(gt: dict, preds: dict, *, ap_method: str = "coco101", ap_bev_protocol: str = DEFAULT_AP_BEV_PROTOCOL,
             max_dets: int = 100, nhd_match_box: str = "bbox2d_proj", scale_grid=None,
             image_ids=None, ignore=None, depth_buckets=None, timings: dict | None = None) -> dict:
    """All WildBox metrics (see the module docstring) as a JSON-ready dict.

    ``gt``: arrays keyed image_id, category_id, bbox2d_tight, bbox2d_proj, center_cam,
    dimensions, R_cam (as ``load_ground_truth`` returns). ``preds``: image_id, category_id,
    score, bbox (xyxy), center_cam, dimensions, pose (as ``load_predictions`` returns).
    ``ap_bev_protocol``: "voc11" (default: the WildBox authors' protocol, keys ``ap_bev_voc11@*``),
    "coco101" (the COCO-style keys ``ap_bev@*`` and ``ap_bev@0.25_by_depth``) or "both".
    ``image_ids``: the images of the evaluated split; predictions on other images are dropped
    (counted in ``meta``). ``ignore``: None / "none", "omni3d" (``omni3d_ignore``) or a (G,) bool
    array of ignored GT. ``depth_buckets``: {name: (lo, hi)} relative depths (default
    ``DEPTH_BUCKETS``). ``timings``: if a dict is given, wall seconds per metric go into it.
    """
    clock = time.perf_counter
    t_start = t0 = clock()
    times = {} if timings is None else timings

    def lap(name):
        nonlocal t0
        now = clock()
        times[name] = times.get(name, 0.0) + now - t0
        t0 = now

    if ap_method not in apm.AP_METHODS:
        raise ValueError(f"unknown AP method {ap_method!r}; expected one of {apm.AP_METHODS}")
    if ap_bev_protocol not in AP_BEV_PROTOCOLS:
        raise ValueError(f"unknown AP-BEV protocol {ap_bev_protocol!r}; expected one of {AP_BEV_PROTOCOLS}")
    if nhd_match_box not in ("bbox2d_proj", "bbox2d_tight"):
        raise ValueError("nhd_match_box must be 'bbox2d_proj' or 'bbox2d_tight'")
    g = _arrays(gt, _REQUIRED_GT, "gt")
    p = _arrays(preds, _REQUIRED_PRED, "preds")
    n_pred_in = len(p["image_id"])
    dropped = 0
    if image_ids is not None:
        inside = np.isin(p["image_id"], np.asarray(image_ids, np.int64))
        dropped = int((~inside).sum())
        if dropped:
            p = {k: v[inside] for k, v in p.items()}
    grid = SCALE_GRID if scale_grid is None else np.asarray(scale_grid, float)
    p["score"] = p["score"].astype(float)
    order = _canonical_order(p)
    p = {k: v[order] for k, v in p.items()}
    g_R, p_R = _rotations(g["R_cam"]), _rotations(p["pose"])
    g_c, g_d = g["center_cam"].astype(float), g["dimensions"].astype(float)
    p_c, p_d = p["center_cam"].astype(float), p["dimensions"].astype(float)
    n_gt = len(g_c)
    g_ign = _gt_ignore(gt, ignore, n_gt)
    buckets = dict(DEPTH_BUCKETS if depth_buckets is None else depth_buckets)
    # Dense image index shared by GT and predictions; groups = image, or image x class.
    all_ids, inv = np.unique(np.r_[g["image_id"], p["image_id"]], return_inverse=True)
    g_img, p_img = inv[:n_gt], inv[n_gt:]
    g_grp, p_grp = g_img * N_CLASSES + g["cls"], p_img * N_CLASSES + p["cls"]
    score = p["score"]
    sel_c = np.flatnonzero(apm.rank_within_groups(p_grp, score) < max_dets)
    sel_a = np.flatnonzero(apm.rank_within_groups(p_img, score) < max_dets)
    pp, gg = group_pairs(p_grp[sel_c], g_grp)
    pp = sel_c[pp]
    pa, ga = group_pairs(p_img[sel_a], g_img)
    pa = sel_a[pa]
    lap("prepare")

    out: dict = {}
    # ---- 2D
    iou2d = _chunked(len(pp), lambda sl: ioum.iou_2d_pairs(p["bbox"][pp[sl]], g["bbox2d_proj"][gg[sl]]))
    m = apm.greedy_match(p_grp, score, pp, gg, iou2d, n_gt, [0.5], gt_ignore=g_ign)
    per, micro = _class_aps(sel_c, m, score, p["cls"], g["cls"], g_ign, ap_method)
    out["ap2d@0.50"] = _summary(per[:, 0], micro[0])
    lap("ap2d")
    iou_a = _chunked(len(pa), lambda sl: ioum.iou_2d_pairs(p["bbox"][pa[sl]], g["bbox2d_tight"][ga[sl]]))
    m = apm.greedy_match(p_img, score, pa, ga, iou_a, n_gt, AGNOSTIC_THRESHOLDS, gt_ignore=g_ign)
    per, micro = _agnostic_aps(sel_a, m, score, p["cls"], g["cls"], g_ign, ap_method)
    for k, t in enumerate(AGNOSTIC_THRESHOLDS):
        out[f"ap2d_agnostic@{t:.2f}"] = _summary(per[:, k], micro[k])
    lap("ap2d_agnostic")

    # ---- BEV
    g_valid = ioum.valid_boxes(g_c, g_d, g_R)
    p_valid = ioum.valid_boxes(p_c, p_d, p_R)
    g_fp, p_fp = geometry.bev_hexagons(g_c, g_d, g_R), geometry.bev_hexagons(p_c, p_d, p_R)
    g_area = np.where(g_valid, ioum.bev_area(g_d, g_R), 0.0)
    p_area = np.where(p_valid, ioum.bev_area(p_d, p_R), 0.0)

    def bev_iou(pi, gi):
        return _chunked(len(pi), lambda sl: ioum.bev_iou_from_footprints(
            p_fp[pi[sl]], p_area[pi[sl]], g_fp[gi[sl]], g_area[gi[sl]]))

    if ap_bev_protocol in ("voc11", "both"):
        out.update(_ap_bev_voc11(p_img, p["cls"], score, g_img, g["cls"], g_ign, bev_iou))
    if ap_bev_protocol in ("coco101", "both"):
        iou_bev = bev_iou(pp, gg)
        m = apm.greedy_match(p_grp, score, pp, gg, iou_bev, n_gt, BEV_THRESHOLDS, gt_ignore=g_ign)
        per, micro = _class_aps(sel_c, m, score, p["cls"], g["cls"], g_ign, ap_method)
        for k, t in enumerate(BEV_THRESHOLDS):
            out[f"ap_bev@{t:.2f}"] = _summary(per[:, k], micro[k])
        out["ap_bev@0.25_by_depth"] = _by_depth(buckets, g_c[:, 2], p_c[:, 2], g_ign, lambda ign: apm.greedy_match(
            p_grp, score, pp, gg, iou_bev, n_gt, BEV_THRESHOLDS[:1], gt_ignore=ign), sel_c, score, p["cls"],
            g["cls"], ap_method, lambda per, micro: _summary(per[:, 0], micro[0]))
    lap("ap_bev")

    # ---- 3D
    g_rad, p_rad = ioum.bounding_radius(g_d), ioum.bounding_radius(p_d)
    ok_pair = p_valid[pp] & g_valid[gg]

    def iou3d_at(s: float) -> np.ndarray:
        gap = _chunked(len(pp), lambda sl: np.linalg.norm(s * p_c[pp[sl]] - g_c[gg[sl]], axis=1)
                       - s * p_rad[pp[sl]] - g_rad[gg[sl]])
        near = ok_pair & (gap < 0)  # bounding spheres overlap
        vals = np.zeros(len(pp))
        k = np.flatnonzero(near)
        if len(k):
            vals[k] = ioum.iou_3d_pairs(s * p_c[pp[k]], s * p_d[pp[k]], p_R[pp[k]], g_c[gg[k]], g_d[gg[k]], g_R[gg[k]])
        return vals

    iou3 = iou3d_at(1.0)
    m = apm.greedy_match(p_grp, score, pp, gg, iou3, n_gt, AP3D_THRESHOLDS, gt_ignore=g_ign)
    per, micro = _class_aps(sel_c, m, score, p["cls"], g["cls"], g_ign, ap_method)
    i25 = int(np.flatnonzero(np.isclose(AP3D_THRESHOLDS, 0.25))[0])
    out["ap3d@0.25"] = _summary(per[:, i25], micro[i25])
    out["ap3d"] = _summary(per.mean(axis=1), float(micro.mean()))
    out["ap3d_by_depth"] = _by_depth(buckets, g_c[:, 2], p_c[:, 2], g_ign, lambda ign: apm.greedy_match(
        p_grp, score, pp, gg, iou3, n_gt, AP3D_THRESHOLDS, gt_ignore=ign), sel_c, score, p["cls"], g["cls"],
        ap_method, lambda per, micro: _summary(per.mean(axis=1), float(micro.mean())))
    lap("ap3d")

    # ---- Rel-AP-3D: one global scale about the camera origin.
    curve, best_s, best_iou, best_val = [], float(grid[0]) if len(grid) else 1.0, None, -1.0
    for s in grid:
        vals = iou3 if math.isclose(s, 1.0, rel_tol=0, abs_tol=1e-12) else iou3d_at(float(s))
        best = np.zeros(n_gt)
        if len(gg):
            np.maximum.at(best, gg, vals)
        mean_best = float(best[~g_ign].mean()) if (~g_ign).any() else 0.0
        curve.append(mean_best)
        if mean_best > best_val:
            best_val, best_s, best_iou = mean_best, float(s), vals
    if best_iou is None or best_val <= 0:  # nothing overlaps at any scale: report s = 1
        best_s, best_iou = 1.0, iou3
    m = apm.greedy_match(p_grp, score, pp, gg, best_iou, n_gt, AP3D_THRESHOLDS, gt_ignore=g_ign)
    per, micro = _class_aps(sel_c, m, score, p["cls"], g["cls"], g_ign, ap_method)
    out["rel_ap3d"] = {**_summary(per.mean(axis=1), float(micro.mean())), "scale": round(best_s, 12),
                       "search": {"grid": [float(x) for x in grid], "mean_best_iou": curve}}
    lap("rel_ap3d")

    # ---- NHD on pairs matched in 2D at IoU >= 0.75.
    iou_n = iou2d if nhd_match_box == "bbox2d_proj" else _chunked(
        len(pp), lambda sl: ioum.iou_2d_pairs(p["bbox"][pp[sl]], g["bbox2d_tight"][gg[sl]]))
    m = apm.greedy_match(p_grp, score, pp, gg, iou_n, n_gt, [NHD_IOU], gt_ignore=g_ign)[0]
    mp = sel_c[m[sel_c] >= 0]
    mp = mp[~g_ign[m[mp]]]
    mg = m[mp]
    vals = _nhd_values(p_c[mp], p_d[mp], p_R[mp], g_c[mg], g_d[mg], g_R[mg])
    for name, v in vals.items():
        out[name] = _nhd_entry(v, g["cls"][mg])
    lap("nhd")

    out["meta"] = {
        "warnings": _warnings(n_pred_in, dropped, n_gt, int(g_ign.sum())),
        "n_gt": int(n_gt), "n_gt_ignored": int(g_ign.sum()), "n_pred": int(n_pred_in), "n_pred_outside_split": dropped,
        "n_pred_evaluated": int(len(sel_c)), "n_images_with_gt": int(len(np.unique(g["image_id"]))),
        "n_images": int(len(all_ids)) if image_ids is None else int(len(np.unique(image_ids))),
        "species": list(SPECIES),
        "protocol": {
            "ap_method": ap_method, "ap_bev_protocol": ap_bev_protocol, "max_dets": max_dets,
            "ignore": (ignore if isinstance(ignore, str) else "none" if ignore is None else "given mask"),
            **({"omni3d_ignore": dict(OMNI3D_IGNORE)} if isinstance(ignore, str) and ignore == "omni3d" else {}),
            "ranking": "descending score; ties by image id, then by the prediction's values",
            "matching": "greedy by score to the unmatched GT of highest IoU, IoU >= threshold",
            "ap2d": "class-aware vs bbox2d_proj; agnostic vs bbox2d_tight",
            "bev_footprint": "convex hull of the 8 corners on the camera x-z plane",
            **({"ap_bev_voc11": AP_BEV_VOC11} if ap_bev_protocol in ("voc11", "both") else {}),
            **({"ap_bev": "COCO-style, as ap3d: max_dets, --ap-method interpolation, class-aware micro"}
               if ap_bev_protocol in ("coco101", "both") else {}),
            "ap3d_thresholds": [float(t) for t in AP3D_THRESHOLDS],
            "depth_buckets": "relative depth (segment median 1) in [lo, hi); GT outside ignored, unmatched "
                             "predictions outside ignored",
            "rel_ap3d": "scale about the camera origin maximising mean best same-class IoU per GT",
            "nhd_match": f"greedy 2D IoU >= {NHD_IOU} vs {nhd_match_box}, same class",
            "nhd_hungarian": "sum of 8 Hungarian corner distances / GT axis-aligned diagonal",
            "nhd_hausdorff": "symmetric corner Hausdorff distance / mean of the two diagonals",
        },
    }
    times["total"] = clock() - t_start
    return out


def _warnings(n_pred: int, outside: int, n_gt: int, n_ignored: int) -> list[str]:
    """What makes the metrics say little, in words (``meta["warnings"]``; the CLI prints them)."""
    out = []
    zero = ": every AP is 0" if n_gt > n_ignored else ""
    if n_pred == 0:
        out.append(f"no predictions{zero}")
    elif outside == n_pred:
        out.append(f"all {n_pred:,} predictions are on images outside the split{zero}")
    elif outside:
        out.append(f"{outside:,} of {n_pred:,} predictions are on images outside the split and are left out")
    if n_gt == n_ignored:
        out.append("no ground truth to match (none, or all ignored): every AP is undefined (null)")
    return out


def evaluate_paths(dataset_dir, pred_path, split: str = "validation", **kwargs) -> dict:
    """Evaluate a prediction file/folder against a built WildBox folder, or a KITTI folder.

    A KITTI folder (``is_kitti_folder``: an object root, or one holding ``label_2``, or a ``label_2`` folder)
    is KITTI-format ground truth: the result is ``{"kitti": evaluate_kitti_folder(...)}``. Otherwise it is a
    built WildBox folder; KITTI-format predictions are mapped to images through the dataset's
    ``exports/kitti/frame_map.txt`` and additionally scored with the KITTI protocol against that export's
    frames of the split (key ``kitti``).
    """
    root = Path(dataset_dir)
    if is_kitti_folder(root):
        return {"kitti": evaluate_kitti_folder(root, pred_path, split)}
    gt = load_ground_truth(root, split)
    pred_path = Path(pred_path)
    frame_map = _frame_image_ids(root, split) if pred_path.is_dir() else None
    preds = load_predictions(pred_path, frame_map)
    image_ids = gt.pop("image_ids")
    metrics = evaluate(gt, preds, image_ids=image_ids, **kwargs)
    export = root / "exports" / "kitti"
    if pred_path.is_dir() and (export / "training" / "label_2").is_dir():
        metrics["kitti"] = evaluate_kitti_folder(export, pred_path, split)
    return metrics


def is_kitti_folder(path: Path) -> bool:
    """A KITTI object root (``training/label_2``), a folder holding ``label_2``, or a ``label_2`` folder."""
    path = Path(path)
    return (path / "training" / "label_2").is_dir() or (path / "label_2").is_dir() or path.name == "label_2"


def evaluate_kitti_folder(path: Path, pred_dir, split: str = "validation") -> dict:
    """The KITTI devkit protocol on a KITTI folder (``is_kitti_folder``). In an object root (the layout of
    the WildBox export, mmdetection3d's and OpenPCDet's), ground truth is ``training/label_2``, only the
    frames ``ImageSets/<split>.txt`` lists when that file exists (split ``validation`` is KITTI's ``val``)."""
    path = Path(path)
    frames = None
    if (path / "training" / "label_2").is_dir():
        listed = path / "ImageSets" / f"{wbl.KITTI_IMAGE_SETS.get(split, split)}.txt"
        if listed.is_file():
            frames = listed.read_text(encoding="utf-8").split()
            if not frames:
                raise SourceError(f"{listed}: lists no frame")
        path = path / "training"
    label_dir = path / "label_2" if (path / "label_2").is_dir() else path
    calib = label_dir.parent / "calib"
    return evaluate_kitti(label_dir, pred_dir, calib if calib.is_dir() else None, frames=frames)


# ======================================================================= what the KITTI export loses
KITTI_LOSS_IOU_BOXES = 20_000  # boxes whose full / yaw-only 3D IoU is measured: every box up to this, else a stable sample
KITTI_LOSS_QUANTILES = (0.0, 0.1, 0.5, 0.9, 0.99, 1.0)


def kitti_yaw_only_loss(root: Path) -> dict:
    """What the yaw-only KITTI export (``loaders.wildbox.KittiRoot``, the release's) loses, on the published
    boxes: per box the pitch and roll its rotation_y drops, the angle between R_cam and the yaw-only rotation
    KITTI keeps (degrees), and the exact oriented 3D IoU between the full cuboid and the yaw-only cuboid of the
    same centre and dimensions (``evaluation.iou``): over every box when there are at most
    ``KITTI_LOSS_IOU_BOXES``, else over that many chosen by a stable hash of their box_id. Quantiles
    (``KITTI_LOSS_QUANTILES``) and means; the shares of boxes whose IoU is below 0.5 and 0.25."""
    boxes = wbl.read_config(Path(root), "boxes", columns=["box_id", "center_cam", "dimensions", "R_cam",
                                                         "yaw_pitch_roll", "kitti_representable"])
    n = boxes.num_rows
    ypr = fixed_size_matrix(boxes["yaw_pitch_roll"], 3)
    R = fixed_size_matrix(boxes["R_cam"], 3, 3)
    exact = int(np.count_nonzero(boxes["kitti_representable"].to_numpy(zero_copy_only=False)))
    out = {"boxes": n, "exact": exact, "yaw_only": n - exact}
    if not n:
        return out
    yaw_only = geometry.yaw_only_rotation(ypr[:, 0])
    cos = (np.einsum("nij,nij->n", yaw_only, R) - 1.0) / 2.0  # trace(R_y^T R)
    dropped = np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))

    def summary(values):
        values = np.asarray(values, float)
        return {"mean": round(float(values.mean()), 4),
                **{f"q{round(100 * q):g}": round(float(np.quantile(values, q)), 4) for q in KITTI_LOSS_QUANTILES}}

    rows = np.arange(n)
    if n > KITTI_LOSS_IOU_BOXES:
        keys = np.array([stable_int_id(b) for b in boxes["box_id"].to_pylist()], dtype=np.int64)
        rows = np.sort(np.argsort(keys, kind="stable")[:KITTI_LOSS_IOU_BOXES])
    center = fixed_size_matrix(boxes["center_cam"], 3)[rows]
    dims = fixed_size_matrix(boxes["dimensions"], 3)[rows]
    iou = ioum.iou_3d_pairs(center, dims, R[rows], center, dims, yaw_only[rows])
    out.update({
        "pitch_deg": summary(np.degrees(np.abs(ypr[:, 1]))),
        "roll_deg": summary(np.degrees(np.abs(ypr[:, 2]))),
        "rotation_dropped_deg": summary(dropped),
        "iou_3d_full_vs_yaw_only": {"boxes": int(len(rows)),
                                    "sample": "every box" if len(rows) == n else "a stable hash sample of box_id",
                                    **summary(iou), "below_0.5": round(float(np.mean(iou < 0.5)), 4),
                                    "below_0.25": round(float(np.mean(iou < 0.25)), 4)},
    })
    return out


# ======================================================================================== CLI
def cli_parser() -> ArgumentParser:
    parser = ArgumentParser(prog="benchwright evaluate wildbox", description=__doc__.split("\n")[0])
    parser.add_argument("--gt", required=True, help="built WildBox folder, or a KITTI folder: an object root "
                        "(training/label_2, ImageSets/<split>.txt: the WildBox export's layout) or one with label_2")
    parser.add_argument("--pred", required=True, help="prediction JSON, or a KITTI result folder")
    parser.add_argument("--split", default="validation")
    parser.add_argument("--out", help="write the full metrics JSON here (the summary table is printed)")
    parser.add_argument("--ap-method", default="coco101", choices=apm.AP_METHODS,
                        help="AP interpolation of the COCO-style metrics (2D, 3D, Rel-AP-3D, coco101 AP-BEV)")
    parser.add_argument("--ap-bev-protocol", default=DEFAULT_AP_BEV_PROTOCOL, choices=AP_BEV_PROTOCOLS,
                        help="voc11 (default): the WildBox paper's AP-BEV, keys ap_bev_voc11@*; coco101: the "
                             "COCO-style keys ap_bev@* (and ap_bev@0.25_by_depth); both")
    parser.add_argument("--ignore", default="none", choices=IGNORE_MODES,
                        help="ground truth to ignore: none (the authors' setting) or omni3d (Omni3D's test filter)")
    return parser


@parser_of(cli_parser)
def run_cli(args=None) -> int:
    """``benchwright evaluate wildbox --gt OUT/wildbox --pred FILE [--split validation] [--out METRICS.json]
    [--ap-bev-protocol voc11|coco101|both] [--ignore none|omni3d]``.

    Prints a summary table, the headline AP-BEV@0.25 first with its protocol, and writes the full
    metrics JSON to ``--out``. Returns the exit code: 0, or 2 when the input is bad (the error names
    the file and entry).
    """
    ns = cli_parser().parse_args(args)
    root = Path(ns.gt)
    try:
        if is_kitti_folder(root):
            metrics = evaluate_paths(root, ns.pred, ns.split)
        else:
            metrics = evaluate_paths(root, ns.pred, ns.split, ap_method=ns.ap_method,
                                     ap_bev_protocol=ns.ap_bev_protocol, ignore=ns.ignore)
    except BenchwrightError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for warning in [*metrics.get("meta", {}).get("warnings", []), *metrics.get("kitti", {}).get("warnings", [])]:
        print(f"warning: {warning}", file=sys.stderr)
    notes = [f"full metrics: {write_json(ns.out, metrics)}" if ns.out else
             "full metrics (per species, by depth, the protocol): add --out METRICS.json"]
    show(summary_tables(metrics), notes)
    return 0


def headline(metrics: dict) -> tuple[str, str, float | None]:
    """(name, protocol, macro value) of the number the README and the paper lead with: AP-BEV@0.25,
    in the protocol the metrics were computed with (VOC 11-point when they hold both)."""
    for key, protocol in (("ap_bev_voc11@0.25", "voc11"), ("ap_bev@0.25", "coco101")):
        if key in metrics:
            return "AP-BEV@0.25", AP_BEV_PROTOCOL_NAMES[protocol], metrics[key]["macro"]
    raise KeyError("no AP-BEV@0.25 in these metrics")


# (key, name, protocol) in the summary's order: the headline first
SUMMARY_ROWS = (
    ("ap_bev_voc11@0.25", "AP-BEV@0.25", "voc11"), ("ap_bev_voc11@0.50", "AP-BEV@0.50", "voc11"),
    ("ap_bev@0.25", "AP-BEV@0.25", "coco101"), ("ap_bev@0.50", "AP-BEV@0.50", "coco101"),
    ("ap3d@0.25", "AP-3D@0.25", None), ("ap3d", "AP-3D (IoU 0.05-0.50)", None),
    ("rel_ap3d", "Rel-AP-3D", None), ("ap2d@0.50", "AP-2D@0.50", None),
    ("ap2d_agnostic@0.50", "AP-2D@0.50 agnostic", None),
)


PER_SPECIES_KEYS = ("ap_bev_voc11@0.25", "ap_bev@0.25", "ap3d", "ap2d@0.50")


def summary_tables(metrics: dict) -> list[Table]:
    """One screen: every AP (macro, micro, per species) with its protocol, the headline first; the
    NHDs; or, for KITTI-format ground truth, the devkit's AP per class, metric and difficulty."""
    if "meta" not in metrics:  # KITTI-format ground truth: the devkit's protocol only
        return [_kitti_table(metrics["kitti"])]
    method = metrics["meta"]["protocol"]["ap_method"]
    names = {**AP_BEV_PROTOCOL_NAMES, None: "COCO 101-point" if method == "coco101" else method}
    shown = [(key, name, names[protocol]) for key, name, protocol in SUMMARY_ROWS if key in metrics]
    tables = [Table("WildBox: AP in % (macro = mean over the species with ground truth; VOC 11-point = the WildBox "
                    "paper's AP-BEV)", ["metric", "protocol", "macro", "micro"],
                    [[name, protocol, metrics[key]["macro"], metrics[key]["micro"]] for key, name, protocol in shown],
                    numeric=(2, 3))]
    per_species = [(key, name) for key, name, _ in shown if key in PER_SPECIES_KEYS]
    tables.append(Table("Per species (AP in %)", ["species", *(name for _, name in per_species)],
                        [[s, *(metrics[key]["per_class"][s] for key, _ in per_species)] for s in SPECIES]))
    nhd = [[key, mean, metrics[key]["n_pairs"]["micro"], *(metrics[key][mean][c] for c in (*NHD_COMPONENTS, "depth_share"))]
           for key in ("nhd_hungarian", "nhd_hausdorff") if key in metrics for mean in ("macro", "micro")]
    if nhd:
        tables.append(Table(f"Normalised corner distances (pairs matched at 2D IoU >= {NHD_IOU}; lower is better)",
                            ["metric", "mean", "pairs", *NHD_COMPONENTS, "depth share"], nhd,
                            numeric=tuple(range(2, 4 + len(NHD_COMPONENTS)))))
    if "kitti" in metrics:
        tables.append(_kitti_table(metrics["kitti"]))
    return tables


def _kitti_table(kitti: dict) -> Table:
    rows = []
    for cls, entry in kitti["classes"].items():
        for kind in ("2d", "bev", "3d"):
            for difficulty, v in (entry.get(kind) or {}).items():
                if v is not None:
                    rows.append([cls, kind.upper(), difficulty, v["ap11"], v["ap40"], v.get("aos40"), v["n_gt"]])
    return Table("KITTI devkit protocol (AP in %)", ["class", "metric", "difficulty", "AP11", "AP40", "AOS40",
                                                   "ground truth"], rows, numeric=(3, 4, 5, 6))
