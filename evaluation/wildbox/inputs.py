"""What the evaluator reads: the ground truth of a built split, predictions (the authors' JSON or a
KITTI result folder), and the checks every array passes before a metric sees it."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from benchwright import fields, strict_json
from benchwright.errors import RecordError, SourceError
from benchwright.evaluation.wildbox.protocol import (
    _SHAPES, FIRST_CATEGORY_ID, GT_COLUMNS, IGNORE_MODES, N_CLASSES, OMNI3D_IGNORE, SPECIES,
)
from benchwright.formats import geometry, kitti
from benchwright.loaders import wildbox as wbl
from benchwright.schemas import wildbox as schema


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
    for number, line in enumerate(kitti.read_text(fmap, str(fmap)).split("\n"), start=1):
        try:
            fields = wbl.parse_frame_map_line(line)
        except ValueError as err:
            raise RecordError(f"{fmap}:{number}", str(err)) from None
        if fields is not None and fields["frame_id"] in by_frame:
            out[fields["name"]] = int(by_frame[fields["frame_id"]])
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


