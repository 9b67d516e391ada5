"""What every WildBox head shares: a split's boxes, the class priors of train, the geometry of a
2D box and its camera, and the prediction JSON the heads write."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from benchwright.formats import geometry
from benchwright.schemas import wildbox as schema

HEADS = ("trivial", "lift", "learned")
SPECIES = schema.SPECIES
N_CLASSES = len(SPECIES)
N_COARSE = len(schema.COARSE_CLASSES)
FIRST_CATEGORY_ID = min(schema.CATEGORY_IDS.values())


# =============================================================================== data loading
def load_split(dataset_dir, split: str) -> dict[str, np.ndarray]:
    """The ``boxes`` rows of one split as ``loaders.wildbox.boxes_arrays`` plus image size, box_id,
    video_id and ``image_ids`` = every frame of the split (frames without boxes get an empty entry)."""
    from benchwright.loaders import wildbox as wbl

    table = wbl.read_config(dataset_dir, "boxes", split)
    arrays = wbl.boxes_arrays(table)
    arrays["image_width"] = table.column("image_width").to_numpy().astype(np.int64)
    arrays["image_height"] = table.column("image_height").to_numpy().astype(np.int64)
    arrays["box_id"] = np.asarray(table.column("box_id").to_pylist(), dtype=object)
    arrays["video_id"] = np.asarray(table.column("video_id").to_pylist(), dtype=object)
    # Which segment and track a box belongs to (video metadata, no 3D): the learned head's segment context.
    arrays["segment_id"] = np.asarray(table.column("segment_id").to_pylist(), dtype=object)
    arrays["track_id"] = table.column("track_id").to_numpy().astype(np.int64)
    image_ids = np.unique(arrays["image_id"])
    if sorted((Path(dataset_dir) / "frames").glob(f"{split}-*.parquet")):
        frames = wbl.read_config(dataset_dir, "frames", split, columns=["image_id"])
        image_ids = np.union1d(image_ids, frames.column("image_id").to_numpy())
    arrays["image_ids"] = image_ids.astype(np.int64)
    # A stable row order (box_id), whatever order the shards were read in.
    order = np.argsort(arrays["box_id"].astype(str), kind="stable")
    return {k: (v if k == "image_ids" else v[order]) for k, v in arrays.items()}


def _image_size(a: dict) -> tuple[np.ndarray, np.ndarray]:
    """(width, height) per box; without the columns, twice the principal point."""
    K = np.asarray(a["K"], float)
    w = np.asarray(a["image_width"], float) if "image_width" in a else 2 * K[:, 0, 2]
    h = np.asarray(a["image_height"], float) if "image_height" in a else 2 * K[:, 1, 2]
    return w, h


def _classes(a: dict) -> np.ndarray:
    if "species" in a:
        return np.asarray(a["species"], np.int64)
    return np.asarray(a["category_id"], np.int64) - FIRST_CATEGORY_ID


# ============================================================================ shared geometry
def class_priors(train: dict) -> dict[str, np.ndarray]:
    """Per-class statistics of the train split (a class missing from train gets the global one).

    dims (C, 3) median [W, H, L]; R (C, 3, 3) element-wise mean rotation projected onto SO(3);
    height (C,) = dims[:, 1]; ratio (C,) median of (f_y * H / z) / h_2d (the lift's correction);
    count (C,) train boxes.
    """
    cls = _classes(train)
    dims = np.asarray(train["dimensions"], float)
    R = np.asarray(train["R_cam"], float)
    fy = np.asarray(train["K"], float)[:, 1, 1]
    z = np.asarray(train["center_cam"], float)[:, 2]
    h2d = _box_hw(train["bbox2d_tight"])[1]
    ratio = fy * dims[:, 1] / z / h2d
    out = {"dims": np.zeros((N_CLASSES, 3)), "R": np.zeros((N_CLASSES, 3, 3)), "ratio": np.zeros(N_CLASSES),
           "count": np.bincount(cls, minlength=N_CLASSES)}
    g_dims, g_R, g_ratio = np.median(dims, axis=0), geometry.project_to_so3(R.mean(axis=0)), np.median(ratio)
    for k in range(N_CLASSES):
        m = cls == k
        out["dims"][k] = np.median(dims[m], axis=0) if m.any() else g_dims
        out["R"][k] = geometry.project_to_so3(R[m].mean(axis=0)) if m.any() else g_R
        out["ratio"][k] = np.median(ratio[m]) if m.any() else g_ratio
    out["height"] = out["dims"][:, 1].copy()
    return out


def _box_hw(bbox_xyxy) -> tuple[np.ndarray, np.ndarray]:
    b = np.asarray(bbox_xyxy, float)
    return np.maximum(b[:, 2] - b[:, 0], 1e-6), np.maximum(b[:, 3] - b[:, 1], 1e-6)


def backproject(uv, K, z) -> np.ndarray:
    """(N, 3) camera-frame points at depth z on the rays through pixels uv (N, 2): z * K^-1 [u, v, 1]."""
    uv = np.asarray(uv, float).reshape(-1, 2)
    K = np.asarray(K, float).reshape(-1, 3, 3)
    hom = np.column_stack([uv, np.ones(len(uv))])
    ray = np.linalg.solve(K, hom[:, :, None])[:, :, 0]
    return ray / ray[:, 2:3] * np.asarray(z, float).reshape(-1, 1)


def _box_center(bbox_xyxy) -> np.ndarray:
    b = np.asarray(bbox_xyxy, float)
    return np.column_stack([(b[:, 0] + b[:, 2]) / 2, (b[:, 1] + b[:, 3]) / 2])


def _score(target: dict) -> np.ndarray:
    """sqrt(2D box area / image area): deterministic, shared by every head."""
    w, h = _box_hw(target["bbox2d_tight"])
    iw, ih = _image_size(target)
    return np.clip(np.sqrt(w * h / (iw * ih)), 0.0, 1.0)


def _predictions(target: dict, center, dims, R, score=None) -> dict[str, np.ndarray]:
    cls = _classes(target)
    return {
        "image_id": np.asarray(target["image_id"], np.int64),
        "category_id": cls + FIRST_CATEGORY_ID,
        "score": _score(target) if score is None else np.asarray(score, float),
        "bbox": np.asarray(target["bbox2d_tight"], float).copy(),
        "center_cam": np.asarray(center, float),
        "dimensions": np.asarray(dims, float),
        "pose": np.asarray(R, float),
    }


# ====================================================================================== output
def _round(x) -> list:
    """Plain floats at full precision (``json`` writes the shortest repr that round-trips): a
    rounded copy of a box is a different box, and the 3D IoU of nearly coincident boxes is fragile."""
    return [float(v) for v in np.asarray(x, float).ravel()]


def predictions_to_json(preds: dict, image_ids=None) -> list[dict]:
    """The WildBox authors' prediction JSON: one entry per image (ascending image_id) with its
    instances {bbox xywh, score, category_id, center_cam, dimensions [W, H, L], pose 3x3}.

    ``image_ids``: every image of the split (images without predictions get ``instances: []``).
    """
    img = np.asarray(preds["image_id"], np.int64)
    ids = np.union1d(img, np.asarray(image_ids, np.int64)) if image_ids is not None else np.unique(img)
    by_image: dict[int, list] = {int(i): [] for i in ids}
    for k in range(len(img)):
        x1, y1, x2, y2 = np.asarray(preds["bbox"][k], float)
        by_image[int(img[k])].append({
            "bbox": _round([x1, y1, x2 - x1, y2 - y1]),
            "score": _round([preds["score"][k]])[0],
            "category_id": int(preds["category_id"][k]),
            "center_cam": _round(preds["center_cam"][k]),
            "dimensions": _round(preds["dimensions"][k]),
            "pose": [_round(row) for row in np.asarray(preds["pose"][k], float)],
        })
    return [{"image_id": i, "instances": by_image[i]} for i in sorted(by_image)]


def write_predictions(path, preds: dict, image_ids=None) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = predictions_to_json(preds, image_ids)
    path.write_text(json.dumps(doc, separators=(",", ":"), allow_nan=False) + "\n", encoding="utf-8")
    return path
