"""The KITTI object devkit protocol on KITTI-format folders: AP11 / AP40 for 2D, BEV and 3D at the
devkit's difficulty levels (easy, moderate, hard), and AOS.

Ground truth is a ``label_2`` folder (with ``calib`` for 3D), detections a result folder of the
same frame names with a score column; both are read with ``formats.kitti``. Detections are ranked
by score with ties broken by their values, never by the line order of a file. DontCare regions
excuse 2D false positives only, as the C++ devkit in effect and mmdetection3d do. Checked against
mmdetection3d's evaluator (its values on KITTI ground truth with DontCare rows are a test fixture).
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from benchwright import fields
from benchwright.arrays import group_pairs
from benchwright.errors import RecordError, SourceError
from benchwright.evaluation import ap as apm
from benchwright.evaluation import iou as ioum
from benchwright.formats import geometry, kitti


KITTI_DIFFICULTIES = ("easy", "moderate", "hard")
KITTI_MIN_HEIGHT = (40, 25, 25)
KITTI_MAX_OCCLUSION = (0, 1, 2)
KITTI_MAX_TRUNCATION = (0.15, 0.30, 0.50)
KITTI_NEIGHBOURS = {"car": "van", "pedestrian": "person_sitting"}
# IoU thresholds per class for (2d, bev, 3d): the devkit's table and the "loose" one.
KITTI_OVERLAPS = {
    "strict": {"Car": (0.7, 0.7, 0.7), "Pedestrian": (0.5, 0.5, 0.5), "Cyclist": (0.5, 0.5, 0.5)},
    "loose": {"Car": (0.7, 0.5, 0.5), "Pedestrian": (0.5, 0.25, 0.25), "Cyclist": (0.5, 0.25, 0.25)},
}
KITTI_METRICS = ("2d", "bev", "3d")


def _read_kitti_frame(path: Path, need_score: bool) -> dict:
    loc = f"{path.parent.name}/{path.name}"
    text = kitti.read_text(path, loc)
    objs, errors = kitti.parse_label_lines(text, loc)
    if errors:
        raise errors[0]
    if need_score:
        lines = kitti.row_line_numbers(text)
        for number, obj in zip(lines, objs):
            if obj.score is None:
                raise RecordError(f"{loc}:{number}", "a prediction needs 16 columns (the 16th is the score)")
    n = len(objs)
    return {
        "name": np.array([o.type for o in objs], dtype=object),
        "truncated": np.array([o.truncated for o in objs], float),
        "occluded": np.array([o.occluded for o in objs], float),
        "bbox": np.array([o.bbox for o in objs], float).reshape(n, 4),
        "hwl": np.array([(o.h, o.w, o.l) for o in objs], float).reshape(n, 3),
        "xyz": np.array([(o.x, o.y, o.z) for o in objs], float).reshape(n, 3),
        "ry": np.array([o.rotation_y for o in objs], float),
        "alpha": np.array([o.alpha for o in objs], float),
        **_canonical_arrays(objs, loc),
        "score": np.array([o.score if o.score is not None else 0.0 for o in objs], float),
    }


def _canonical_arrays(objs, loc: str) -> dict:
    """Canonical cuboids (``formats.kitti.to_canonical``) of a frame's rows; DontCare rows get
    NaN centres and zero dimensions (degenerate: IoU 0 with everything)."""
    n = len(objs)
    center, dims, R = np.full((n, 3), np.nan), np.zeros((n, 3)), np.tile(np.eye(3), (n, 1, 1))
    for k, obj in enumerate(objs):
        if not obj.is_dontcare:
            box = kitti.to_canonical(obj, loc)
            center[k], dims[k], R[k] = box["center_cam"], box["dimensions"], box["R_cam"]
    return {"center": center, "dims": dims, "R": R}


def _kitti_overlaps(frames_gt, frames_dt):
    """Per frame (n_det, n_gt) overlaps for 2d, bev, 3d, and (n_det, n_gt) det-area overlap
    (intersection / detection area, the devkit's criterion for DontCare regions)."""
    def cat(frames, key, width):
        arrs = [f[key].reshape(len(f["ry"]), *width) for f in frames]
        return np.concatenate(arrs) if arrs else np.zeros((0, *width))

    n_g = np.array([len(f["ry"]) for f in frames_gt])
    n_d = np.array([len(f["ry"]) for f in frames_dt])
    g_frame, d_frame = np.repeat(np.arange(len(n_g)), n_g), np.repeat(np.arange(len(n_d)), n_d)
    gb, db = cat(frames_gt, "bbox", (4,)), cat(frames_dt, "bbox", (4,))
    g_hwl, d_hwl = cat(frames_gt, "hwl", (3,)), cat(frames_dt, "hwl", (3,))
    g_xyz, d_xyz = cat(frames_gt, "xyz", (3,)), cat(frames_dt, "xyz", (3,))
    gc, dc_ = cat(frames_gt, "center", (3,)), cat(frames_dt, "center", (3,))
    gd, dd = cat(frames_gt, "dims", (3,)), cat(frames_dt, "dims", (3,))
    gR, dR = cat(frames_gt, "R", (3, 3)), cat(frames_dt, "R", (3, 3))
    pi, gi = group_pairs(d_frame, g_frame)
    iou2 = ioum.iou_2d_pairs(db[pi], gb[gi])
    a, b = db[pi], gb[gi]
    iw = np.clip(np.minimum(a[:, 2], b[:, 2]) - np.maximum(a[:, 0], b[:, 0]), 0, None)
    ih = np.clip(np.minimum(a[:, 3], b[:, 3]) - np.maximum(a[:, 1], b[:, 1]), 0, None)
    det_area = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    with np.errstate(divide="ignore", invalid="ignore"):
        dc = np.where(det_area > 0, iw * ih / det_area, 0.0)

    iou_bev = ioum.bev_iou_pairs(dc_[pi], dd[pi], dR[pi], gc[gi], gd[gi], gR[gi])
    inter_bev = ioum.bev_intersection_pairs(dc_[pi], dd[pi], dR[pi], gc[gi], gd[gi], gR[gi])
    # 3D: BEV intersection x overlap in y, a box spanning [y - h, y].
    y_lo = np.maximum(d_xyz[pi, 1] - d_hwl[pi, 0], g_xyz[gi, 1] - g_hwl[gi, 0])
    y_hi = np.minimum(d_xyz[pi, 1], g_xyz[gi, 1])
    inter3 = inter_bev * np.clip(y_hi - y_lo, 0, None)
    vol_d, vol_g = ioum.box_volume(dd[pi]), ioum.box_volume(gd[gi])
    union3 = vol_d + vol_g - inter3
    with np.errstate(divide="ignore", invalid="ignore"):
        iou3 = np.where((inter3 > 0) & (union3 > 0), inter3 / union3, 0.0)
    g_start, d_start = np.cumsum(n_g) - n_g, np.cumsum(n_d) - n_d
    out = []
    for f in range(len(n_g)):
        shape = (n_d[f], n_g[f])
        mats = {k: np.zeros(shape) for k in (*KITTI_METRICS, "dontcare")}
        out.append(mats)
    frame_of_pair = d_frame[pi]  # pairs are grouped by detection, so sorted by frame
    bounds = np.searchsorted(frame_of_pair, np.arange(len(n_g) + 1))
    for f in range(len(n_g)):
        sl = slice(bounds[f], bounds[f + 1])
        rows, cols = pi[sl] - d_start[f], gi[sl] - g_start[f]
        for k, vals in (("2d", iou2), ("bev", iou_bev), ("3d", iou3), ("dontcare", dc)):
            out[f][k][rows, cols] = vals[sl]
    return out


def _kitti_clean(gt: dict, dt: dict, cls: str, diff: int):
    """The devkit's cleanData: ignored_gt (1 ignored, 0 valid, -1 other), ignored_det, DontCare."""
    name = cls.lower()
    neighbour = KITTI_NEIGHBOURS.get(name)
    g_names = np.array([n.lower() for n in gt["name"]], dtype=object)
    height = gt["bbox"][:, 3] - gt["bbox"][:, 1]
    hard = ((gt["occluded"] > KITTI_MAX_OCCLUSION[diff]) | (gt["truncated"] > KITTI_MAX_TRUNCATION[diff])
            | (height <= KITTI_MIN_HEIGHT[diff]))
    is_cls = g_names == name
    is_nb = (g_names == neighbour) if neighbour else np.zeros(len(g_names), bool)
    ig_gt = np.where(is_cls & ~hard, 0, np.where(is_nb | (is_cls & hard), 1, -1))
    dontcare = np.array([n == "DontCare" for n in gt["name"]], bool)
    d_names = np.array([n.lower() for n in dt["name"]], dtype=object)
    d_height = np.abs(dt["bbox"][:, 3] - dt["bbox"][:, 1])
    ig_dt = np.where(d_height < KITTI_MIN_HEIGHT[diff], 1, np.where(d_names == name, 0, -1))
    return ig_gt, ig_dt, dontcare


def _kitti_stats(ov, dc_ov, ig_gt, ig_dt, scores, min_overlap, thresh, compute_fp, delta_alpha=None):
    """The devkit's computeStatistics for one frame: (tp, fp, fn, tp_scores, similarity).

    ``dc_ov`` (n_det, n_dontcare): each detection's 2D overlap with the DontCare regions (intersection
    / detection area); unassigned detections above ``min_overlap`` there are not false positives. The
    caller gives it for the 2D metric only (``_kitti_class_ap``).

    ``delta_alpha`` (n_det, n_gt) = GT alpha - detection alpha turns on AOS: similarity is the
    sum of (1 + cos(delta)) / 2 over the true positives (false positives add 0), or -1 when the
    frame has neither (the devkit then leaves it out).
    """
    n_det = len(scores)
    assigned = np.zeros(n_det, bool)
    below = (scores < thresh) if compute_fp else np.zeros(n_det, bool)
    usable = (ig_dt != -1) & ~below
    tp = fp = fn = 0
    tp_scores = []
    similarity = 0.0
    for i in range(len(ig_gt)):
        if ig_gt[i] == -1:
            continue
        cand = usable & ~assigned & (ov[:, i] > min_overlap)
        j = -1
        if cand.any():
            idx = np.flatnonzero(cand)
            if not compute_fp:
                j = int(idx[np.argmax(scores[idx])])  # highest score (first on ties)
            else:
                valid = idx[ig_dt[idx] == 0]
                j = int(valid[np.argmax(ov[valid, i])]) if len(valid) else int(idx[0])
        if j == -1:
            if ig_gt[i] == 0:
                fn += 1
        elif ig_gt[i] == 1 or ig_dt[j] == 1:
            assigned[j] = True
        else:
            tp += 1
            tp_scores.append(scores[j])
            assigned[j] = True
            if delta_alpha is not None:
                similarity += (1.0 + math.cos(delta_alpha[j, i])) / 2.0
    if compute_fp:
        fp = int((~assigned & (ig_dt == 0) & ~below).sum())
        # Detections in DontCare regions (intersection / detection area > min_overlap) are not FP.
        for c in range(dc_ov.shape[1]):
            hit = ~assigned & (ig_dt == 0) & ~below & (dc_ov[:, c] > min_overlap)
            assigned |= hit
            fp -= int(hit.sum())
    if delta_alpha is not None and tp == 0 and fp == 0:
        similarity = -1.0
    return tp, fp, fn, tp_scores, similarity


def _kitti_class_ap(frames_gt, frames_dt, overlaps, cls: str, diff: int, metric: str, min_overlap: float,
                    aos: bool = False):
    """AP11 / AP40 (percent) of one class, difficulty and metric; with ``aos`` also the average
    orientation similarity (AOS11 / AOS40: summed similarity / (TP + FP) per threshold, made
    monotone and sampled like precision, as the devkit does for 2D detections)."""
    prepared = []
    n_valid = 0
    for f, (gt, dt) in enumerate(zip(frames_gt, frames_dt)):
        ig_gt, ig_dt, dontcare = _kitti_clean(gt, dt, cls, diff)
        n_valid += int((ig_gt == 0).sum())
        ov = overlaps[f][metric]
        # DontCare regions excuse 2D false positives only: the C++ devkit's BEV / 3D overlap of a
        # detection with a DontCare row (its -1000 location, -1 dimensions) is 0, and mmdetection3d's
        # eval.py checks them for the 2D metric alone
        dc_ov = overlaps[f]["dontcare"][:, dontcare] if metric == "2d" else np.zeros((len(dt["score"]), 0))
        delta = (gt["alpha"][None, :] - dt["alpha"][:, None]) if aos else None
        prepared.append((ov, dc_ov, ig_gt, ig_dt, dt["score"], delta))
    if n_valid == 0:
        return None
    tp_scores = []
    for ov, dc_ov, ig_gt, ig_dt, scores, _ in prepared:
        tp_scores += _kitti_stats(ov, dc_ov, ig_gt, ig_dt, scores, min_overlap, 0.0, False)[3]
    thresholds = apm.kitti_thresholds(np.asarray(tp_scores), n_valid)
    pr = np.zeros((len(thresholds), 4))  # tp, fp, fn, similarity
    for ov, dc_ov, ig_gt, ig_dt, scores, delta in prepared:
        if not (ig_gt != -1).any() and not (ig_dt == 0).any():
            continue
        cache = {}
        for t, th in enumerate(thresholds):
            key = int((scores >= th).sum())  # the frame's statistics change only with this count
            if key not in cache:
                tp, fp, fn, _, sim = _kitti_stats(ov, dc_ov, ig_gt, ig_dt, scores, min_overlap, th, True, delta)
                cache[key] = (tp, fp, fn, max(sim, 0.0))  # -1: the frame is left out of the AOS sum
            pr[t] += cache[key]
    with np.errstate(divide="ignore", invalid="ignore"):
        counted = pr[:, 0] + pr[:, 1]
        precision = np.where(counted > 0, pr[:, 0] / counted, 0.0)
        orientation = np.where(counted > 0, pr[:, 3] / counted, 0.0)
    out = {"n_gt": n_valid}
    for name, curve in (("ap", precision), ("aos", orientation)) if aos else (("ap", precision),):
        curve = np.maximum.accumulate(curve[::-1])[::-1] if len(curve) else curve
        v11, v40 = apm.kitti_ap_from_precision(curve)
        out[f"{name}11"], out[f"{name}40"] = 100.0 * v11, 100.0 * v40
    return out


def evaluate_kitti(gt_label_dir, pred_dir, calib_dir=None, *, classes: dict | None = None,
                   overlap: str = "strict", frames: list[str] | None = None) -> dict:
    """The KITTI object devkit protocol on a KITTI label folder and a KITTI result folder.

    Every ``<frame>.txt`` of ``gt_label_dir`` is a frame (or only those named in ``frames``, e.g. an
    ``ImageSets`` list; a name without a label file is an error); a missing result file means no
    detections. Per class and difficulty (easy / moderate / hard: min box height 40 / 25 / 25
    px, max occlusion 0 / 1 / 2, max truncation 0.15 / 0.30 / 0.50), ground truth outside the
    difficulty and neighbour classes (Van for Car, Person_sitting for Pedestrian) are ignored
    (neither TP nor FN); detections lower than the min height are ignored; for the 2D metric (and
    AOS), a detection inside a DontCare region (intersection / detection area above the threshold)
    is not a false positive. For BEV and 3D it still is: the C++ devkit computes that overlap with
    the metric's own box overlap, and a DontCare row's 3D box (location -1000, dimensions -1)
    overlaps nothing, so in effect it never excuses a BEV or 3D detection; mmdetection3d's
    ``eval.py`` checks DontCare for the 2D metric only (its values are the test's reference,
    ``tests/test_kitti_eval.py``). A match needs overlap strictly above the
    class threshold (Car 0.7, Pedestrian and Cyclist 0.5; ``overlap="loose"``: 0.5 / 0.25 for
    BEV and 3D). Precision is sampled at the devkit's 41 score thresholds, made monotone, and
    averaged over 11 points (AP11) and over recall 1/40..1 (AP40). Where the devkit takes the first
    of equally good detections, a frame's detections are in descending score, ties by their values
    (``_kitti_sorted``), not in the file's line order. Overlaps: 2D IoU; BEV = IoU
    of the rotated rectangles in x-z; 3D = BEV intersection x overlap in y (a box spans
    [y - h, y]) over the union of volumes.

    ``classes``: {name: (t2d, tbev, t3d)}; default Car / Pedestrian / Cyclist when any appears
    in the ground truth, else every non-DontCare type found (WildBox exports: the species) at
    0.5. ``calib_dir`` is only used to give detections without a 2D box (x2 <= x1 or y2 <= y1)
    the box of their projected corners (P2), so 2D overlap and the height filter still apply.
    AOS (average orientation similarity, (1 + cos(alpha_gt - alpha_det)) / 2 per true positive,
    0 per false positive) is reported with the 2D metric as aos11 / aos40 when every detection
    has an orientation (alpha != -10).
    Result files naming no frame of ``gt_label_dir`` are left out and counted
    (``n_pred_files_outside``). Files are read strictly: bytes that are not UTF-8, a row that is not
    15 columns of numbers (16 with the score for a detection) or a non-finite number raise a
    ``RecordError`` naming the file and line. No detection at all (an empty folder, or only files
    of other frames) scores 0 with a warning.
    Returns {"classes": {cls: {"min_overlap": {...}, "2d" | "bev" | "3d": {difficulty: {ap11,
    ap40, n_gt[, aos11, aos40]} or None}}}, "n_frames", "n_gt", "n_pred", "n_pred_files_outside",
    "warnings" (sentences), "protocol"}; in percent.
    """
    gt_label_dir, pred_dir = Path(gt_label_dir), Path(pred_dir)
    if not gt_label_dir.is_dir():
        raise SourceError(f"{gt_label_dir}: KITTI label folder not found")
    if not pred_dir.is_dir():
        raise SourceError(f"{pred_dir}: KITTI result folder not found")
    if overlap not in KITTI_OVERLAPS:
        raise ValueError(f"overlap must be one of {tuple(KITTI_OVERLAPS)}")
    names = _kitti_frame_names(gt_label_dir, frames)
    frames_gt = [_read_kitti_frame(gt_label_dir / f"{n}.txt", False) for n in names]
    known = set(names)
    outside = sorted(p.stem for p in pred_dir.glob("*.txt") if p.stem not in known)
    frames_dt = [_kitti_sorted(_read_kitti_detections(pred_dir, n, calib_dir)) for n in names]
    if classes is None:
        classes = _kitti_default_classes(frames_gt, overlap)
    overlaps = _kitti_overlaps(frames_gt, frames_dt)
    # AOS needs an orientation on every detection (the devkit's alpha = -10 means none)
    alphas = np.concatenate([f["alpha"] for f in frames_dt]) if frames_dt else np.zeros(0)
    with_aos = bool(len(alphas)) and bool(np.all(np.isfinite(alphas) & (alphas != -10)))
    result = {}
    for cls, thr in classes.items():
        entry = {"min_overlap": dict(zip(KITTI_METRICS, (float(t) for t in thr)))}
        for metric, t in zip(KITTI_METRICS, thr):
            entry[metric] = {KITTI_DIFFICULTIES[d]: _kitti_class_ap(frames_gt, frames_dt, overlaps, cls, d, metric, t,
                                                                    aos=with_aos and metric == "2d")
                             for d in range(3)}
        result[cls] = entry
    n_gt = int(sum(int((f["name"] != "DontCare").sum()) for f in frames_gt))
    n_pred = int(sum(len(f["ry"]) for f in frames_dt))
    return {
        "classes": result, "n_frames": len(names), "n_gt": n_gt, "n_pred": n_pred,
        "n_pred_files_outside": len(outside),
        "warnings": _kitti_warnings(gt_label_dir, pred_dir, len(names), outside, n_gt, n_pred),
        "protocol": "KITTI devkit: 41 score thresholds, monotone precision, AP11 and AP40, "
                    "overlap strictly above threshold, DontCare regions for 2D only (as the C++ devkit in effect)"
                    + (", AOS with 2D" if with_aos else ""),
    }


def _kitti_default_classes(frames_gt: list[dict], overlap: str) -> dict:
    """Car / Pedestrian / Cyclist at their thresholds when any appears in the ground truth, else
    every non-DontCare type found at 0.5."""
    found = {t for f in frames_gt for t in f["name"] if t != "DontCare"}
    standard = KITTI_OVERLAPS[overlap]
    if found & set(standard):
        return dict(standard)
    return {t: (0.5, 0.5, 0.5) for t in sorted(found)}


def _kitti_frame_names(gt_label_dir: Path, frames: list[str] | None) -> list[str]:
    """The frames evaluated: every label file's, or those ``frames`` lists (each must have one)."""
    names = sorted(p.stem for p in gt_label_dir.glob("*.txt"))
    if frames is not None:
        missing = sorted(set(frames) - set(names))
        if missing:
            raise SourceError(f"{gt_label_dir}: no label file for {len(missing)} listed frames, e.g. {missing[:3]}")
        names = sorted(set(frames))
    if not names:
        raise SourceError(f"{gt_label_dir}: no label files")
    return names


def _read_kitti_detections(pred_dir: Path, name: str, calib_dir) -> dict:
    """Frame ``name``'s detections (none without a result file); with ``calib_dir``, a detection
    without a 2D box gets the box of its projected corners."""
    path = pred_dir / f"{name}.txt"
    # a folder or a dangling link of that name is an error naming it, not a frame without detections
    dt = _read_kitti_frame(path, True) if path.exists() or path.is_symlink() else _read_kitti_frame_empty()
    if calib_dir is not None and len(dt["ry"]):
        bad = (dt["bbox"][:, 2] <= dt["bbox"][:, 0]) | (dt["bbox"][:, 3] <= dt["bbox"][:, 1])
        if bad.any():
            P2 = kitti.parse_calib(Path(calib_dir) / f"{name}.txt").P2
            pts = geometry.corners(dt["center"][bad], dt["dims"][bad], dt["R"][bad])
            unclipped, _, _ = geometry.projected_boxes(pts, P2, 10 ** 6, 10 ** 6)
            dt["bbox"][bad] = np.nan_to_num(unclipped, nan=0.0)
    return dt


def _kitti_warnings(gt_label_dir: Path, pred_dir: Path, n_frames: int, outside: list[str], n_gt: int,
                    n_pred: int) -> list[str]:
    """What makes the KITTI metrics say little, in words."""
    warnings = []
    if outside:
        warnings.append(f"{len(outside)} result file(s) of {pred_dir.name} name no frame of {gt_label_dir.name} "
                        f"and are left out: {', '.join(fields.clip(n) for n in outside[:3])}"
                        + (", ..." if len(outside) > 3 else ""))
    if n_pred == 0:
        warnings.append(f"no detections for the {n_frames} frame(s) of {gt_label_dir.name}: every AP is 0")
    if n_gt == 0:
        warnings.append(f"{gt_label_dir.name} holds no object but DontCare: there is no AP to compute")
    return warnings


def _kitti_sorted(dt: dict) -> dict:
    """A frame's detections by descending score, ties by the rows' values (type, box, h w l, x y z,
    rotation_y, alpha): the devkit takes the first of equal candidates, which must not be the
    file's line order."""
    n = len(dt["score"])
    if n < 2:
        return dt
    priority = [-dt["score"], np.asarray(dt["name"], dtype=str)] + [
        col for k in ("bbox", "hwl", "xyz", "ry", "alpha") for col in np.asarray(dt[k], float).reshape(n, -1).T]
    order = np.lexsort(priority[::-1])  # lexsort's last key is the primary one
    return {k: v[order] for k, v in dt.items()}


def _read_kitti_frame_empty() -> dict:
    return {"name": np.zeros(0, dtype=object), "truncated": np.zeros(0), "occluded": np.zeros(0),
            "bbox": np.zeros((0, 4)), "hwl": np.zeros((0, 3)), "xyz": np.zeros((0, 3)),
            "ry": np.zeros(0), "alpha": np.zeros(0), "score": np.zeros(0), "center": np.zeros((0, 3)), "dims": np.zeros((0, 3)),
            "R": np.zeros((0, 3, 3))}
