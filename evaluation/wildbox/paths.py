"""Evaluating what is on disk: a built WildBox folder or a KITTI folder against a prediction file or
folder, and what a built folder's yaw-only KITTI export loses."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from benchwright.errors import SourceError
from benchwright.evaluation import iou as ioum
from benchwright.evaluation.kitti import evaluate_kitti
from benchwright.evaluation.wildbox.inputs import _frame_image_ids, load_ground_truth, load_predictions
from benchwright.evaluation.wildbox.metrics import evaluate
from benchwright.formats import geometry
from benchwright.hashing import stable_int_id
from benchwright.loaders import wildbox as wbl
from benchwright.tables import fixed_size_matrix



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


