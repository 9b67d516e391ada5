"""``evaluate``: the matching, then one function per metric."""
from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

from benchwright.arrays import group_pairs
from benchwright.evaluation import ap as apm
from benchwright.evaluation import iou as ioum
from benchwright.evaluation.wildbox.inputs import _arrays, _canonical_order, _gt_ignore, _rotations
from benchwright.evaluation.wildbox.protocol import (
    _REQUIRED_GT, _REQUIRED_PRED, AGNOSTIC_THRESHOLDS, AP3D_THRESHOLDS, AP_BEV_PROTOCOLS, AP_BEV_VOC11,
    BEV_THRESHOLDS, DEFAULT_AP_BEV_PROTOCOL, DEPTH_BUCKETS, N_CLASSES, NHD_COMPONENTS, NHD_IOU, OMNI3D_IGNORE,
    SCALE_GRID, SPECIES,
)
from benchwright.formats import geometry


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


@dataclass
class _Matching:
    """The evaluated ground truth ``g`` and predictions ``p`` (canonical order, ``_canonical_order``)
    and the candidate pairs every metric matches from: (``pp``, ``gg``) a prediction with each GT of
    its image and class, (``pa``, ``ga``) with each GT of its image, among the predictions
    ``max_dets`` keeps (``sel_c`` per image and class, ``sel_a`` per image)."""

    g: dict
    p: dict
    g_c: np.ndarray        # centres, dimensions and rotations (projected onto SO(3)) as floats
    g_d: np.ndarray
    g_R: np.ndarray
    p_c: np.ndarray
    p_d: np.ndarray
    p_R: np.ndarray
    g_ign: np.ndarray      # (G,) ignored ground truth
    g_img: np.ndarray      # dense image index of each GT / prediction (shared)
    p_img: np.ndarray
    p_grp: np.ndarray      # image x class group of each prediction
    sel_c: np.ndarray
    sel_a: np.ndarray
    pp: np.ndarray
    gg: np.ndarray
    pa: np.ndarray
    ga: np.ndarray
    ap_method: str
    buckets: dict          # relative depth buckets {name: (lo, hi)}

    @property
    def n_gt(self) -> int:
        return len(self.g["image_id"])

    @property
    def score(self) -> np.ndarray:
        return self.p["score"]

    @functools.cached_property
    def g_valid(self) -> np.ndarray:
        return ioum.valid_boxes(self.g_c, self.g_d, self.g_R)

    @functools.cached_property
    def p_valid(self) -> np.ndarray:
        return ioum.valid_boxes(self.p_c, self.p_d, self.p_R)

    def match(self, iou: np.ndarray, thresholds, gt_ignore=None) -> np.ndarray:
        """Class-aware greedy matching of the (``pp``, ``gg``) pairs with IoU ``iou``."""
        return apm.greedy_match(self.p_grp, self.score, self.pp, self.gg, iou, self.n_gt, thresholds,
                                gt_ignore=self.g_ign if gt_ignore is None else gt_ignore)

    def class_aps(self, iou: np.ndarray, thresholds) -> tuple[np.ndarray, np.ndarray]:
        """Per-class (C, T) and micro (T,) AP fractions of class-aware matching at ``thresholds``."""
        return _class_aps(self.sel_c, self.match(iou, thresholds), self.score, self.p["cls"], self.g["cls"],
                          self.g_ign, self.ap_method)

    def by_depth(self, iou: np.ndarray, thresholds, summarise) -> dict:
        """``_by_depth`` of class-aware matching at ``thresholds`` over the relative depth buckets."""
        return _by_depth(self.buckets, self.g_c[:, 2], self.p_c[:, 2], self.g_ign,
                         lambda ign: self.match(iou, thresholds, ign), self.sel_c, self.score, self.p["cls"],
                         self.g["cls"], self.ap_method, summarise)

    def iou3d_at(self, s: float) -> np.ndarray:
        """3D IoU of the (``pp``, ``gg``) pairs with every predicted box scaled by ``s`` about the camera."""
        pp, gg, p_c, g_c = self.pp, self.gg, self.p_c, self.g_c
        gap = _chunked(len(pp), lambda sl: np.linalg.norm(s * p_c[pp[sl]] - g_c[gg[sl]], axis=1)
                       - s * self._p_rad[pp[sl]] - self._g_rad[gg[sl]])
        near = self._ok_pair & (gap < 0)  # bounding spheres overlap
        vals = np.zeros(len(pp))
        k = np.flatnonzero(near)
        if len(k):
            vals[k] = ioum.iou_3d_pairs(s * p_c[pp[k]], s * self.p_d[pp[k]], self.p_R[pp[k]], g_c[gg[k]],
                                        self.g_d[gg[k]], self.g_R[gg[k]])
        return vals

    @functools.cached_property
    def _g_rad(self) -> np.ndarray:
        return ioum.bounding_radius(self.g_d)

    @functools.cached_property
    def _p_rad(self) -> np.ndarray:
        return ioum.bounding_radius(self.p_d)

    @functools.cached_property
    def _ok_pair(self) -> np.ndarray:
        return self.p_valid[self.pp] & self.g_valid[self.gg]


def evaluate(gt: dict, preds: dict, *, ap_method: str = "coco101", ap_bev_protocol: str = DEFAULT_AP_BEV_PROTOCOL,
             max_dets: int = 100, nhd_match_box: str = "bbox2d_proj", scale_grid=None,
             image_ids=None, ignore=None, depth_buckets=None, timings: dict | None = None,
             ap_bev_only: bool = False) -> dict:
    """All WildBox metrics (see the package docstring) as a JSON-ready dict.

    ``gt``: arrays keyed image_id, category_id, bbox2d_tight, bbox2d_proj, center_cam,
    dimensions, R_cam (as ``load_ground_truth`` returns). ``preds``: image_id, category_id,
    score, bbox (xyxy), center_cam, dimensions, pose (as ``load_predictions`` returns).
    ``ap_bev_protocol``: "voc11" (default: the WildBox authors' protocol, keys ``ap_bev_voc11@*``),
    "coco101" (the COCO-style keys ``ap_bev@*`` and ``ap_bev@0.25_by_depth``) or "both".
    ``image_ids``: the images of the evaluated split; predictions on other images are dropped
    (counted in ``meta``). ``ignore``: None / "none", "omni3d" (``omni3d_ignore``) or a (G,) bool
    array of ignored GT. ``depth_buckets``: {name: (lo, hi)} relative depths (default
    ``DEPTH_BUCKETS``). ``timings``: if a dict is given, wall seconds per metric go into it.
    ``ap_bev_only``: AP-BEV and ``meta`` only, the same values as in the full metrics (each metric reads the
    matching alone); the learned head's fold selection scores its subsets with AP-BEV alone, and the 3D
    metrics cost several times more.
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
    buckets = dict(DEPTH_BUCKETS if depth_buckets is None else depth_buckets)
    mt, counts = _prepare(gt, preds, image_ids, ignore, max_dets, ap_method, buckets)
    grid = SCALE_GRID if scale_grid is None else np.asarray(scale_grid, float)
    lap("prepare")

    out: dict = {}
    if ap_bev_only:
        _ap_bev(mt, ap_bev_protocol, out)
        lap("ap_bev")
    else:
        iou2d = _ap2d(mt, out)
        lap("ap2d")
        _ap2d_agnostic(mt, out)
        lap("ap2d_agnostic")
        _ap_bev(mt, ap_bev_protocol, out)
        lap("ap_bev")
        iou3 = _ap3d(mt, out)
        lap("ap3d")
        _rel_ap3d(mt, iou3, grid, out)
        lap("rel_ap3d")
        _nhd(mt, iou2d, nhd_match_box, out)
        lap("nhd")
    out["meta"] = _meta(mt, counts, image_ids, ignore, ap_method, ap_bev_protocol, max_dets, nhd_match_box)
    times["total"] = clock() - t_start
    return out


def _prepare(gt: dict, preds: dict, image_ids, ignore, max_dets: int, ap_method: str,
             buckets: dict) -> tuple[_Matching, dict]:
    """The checked arrays in canonical order and their candidate pairs; and the counts ``meta`` reports
    (predictions given, dropped outside the split, images)."""
    g = _arrays(gt, _REQUIRED_GT, "gt")
    p = _arrays(preds, _REQUIRED_PRED, "preds")
    n_pred_in = len(p["image_id"])
    dropped = 0
    if image_ids is not None:
        inside = np.isin(p["image_id"], np.asarray(image_ids, np.int64))
        dropped = int((~inside).sum())
        if dropped:
            p = {k: v[inside] for k, v in p.items()}
    p["score"] = p["score"].astype(float)
    order = _canonical_order(p)
    p = {k: v[order] for k, v in p.items()}
    g_R, p_R = _rotations(g["R_cam"]), _rotations(p["pose"])
    g_c, g_d = g["center_cam"].astype(float), g["dimensions"].astype(float)
    p_c, p_d = p["center_cam"].astype(float), p["dimensions"].astype(float)
    n_gt = len(g_c)
    g_ign = _gt_ignore(gt, ignore, n_gt)
    # Dense image index shared by GT and predictions; groups = image, or image x class.
    all_ids, inv = np.unique(np.r_[g["image_id"], p["image_id"]], return_inverse=True)
    g_img, p_img = inv[:n_gt], inv[n_gt:]
    g_grp, p_grp = g_img * N_CLASSES + g["cls"], p_img * N_CLASSES + p["cls"]
    score = p["score"]
    sel_c = np.flatnonzero(apm.rank_within_groups(p_grp, score) < max_dets)
    sel_a = np.flatnonzero(apm.rank_within_groups(p_img, score) < max_dets)
    pp, gg = group_pairs(p_grp[sel_c], g_grp)
    pa, ga = group_pairs(p_img[sel_a], g_img)
    mt = _Matching(g, p, g_c, g_d, g_R, p_c, p_d, p_R, g_ign, g_img, p_img, p_grp, sel_c, sel_a, sel_c[pp], gg,
                   sel_a[pa], ga, ap_method, buckets)
    return mt, {"n_pred_in": n_pred_in, "dropped": dropped, "n_images": len(all_ids)}


def _ap2d(mt: _Matching, out: dict) -> np.ndarray:
    """``ap2d@0.50``, class-aware against ``bbox2d_proj``; returns the pairs' 2D IoU (the NHD match reuses it)."""
    iou2d = _chunked(len(mt.pp), lambda sl: ioum.iou_2d_pairs(mt.p["bbox"][mt.pp[sl]], mt.g["bbox2d_proj"][mt.gg[sl]]))
    per, micro = mt.class_aps(iou2d, [0.5])
    out["ap2d@0.50"] = _summary(per[:, 0], micro[0])
    return iou2d


def _ap2d_agnostic(mt: _Matching, out: dict) -> None:
    """``ap2d_agnostic@{0.25,0.50,0.75}``: classes ignored in matching, against ``bbox2d_tight``."""
    pa, ga = mt.pa, mt.ga
    iou_a = _chunked(len(pa), lambda sl: ioum.iou_2d_pairs(mt.p["bbox"][pa[sl]], mt.g["bbox2d_tight"][ga[sl]]))
    m = apm.greedy_match(mt.p_img, mt.score, pa, ga, iou_a, mt.n_gt, AGNOSTIC_THRESHOLDS, gt_ignore=mt.g_ign)
    per, micro = _agnostic_aps(mt.sel_a, m, mt.score, mt.p["cls"], mt.g["cls"], mt.g_ign, mt.ap_method)
    for k, t in enumerate(AGNOSTIC_THRESHOLDS):
        out[f"ap2d_agnostic@{t:.2f}"] = _summary(per[:, k], micro[k])


def _ap_bev(mt: _Matching, protocol: str, out: dict) -> None:
    """AP-BEV in the chosen protocol(s): ``ap_bev_voc11@*`` and / or ``ap_bev@*`` with its depth buckets."""
    g_fp, p_fp = geometry.bev_hexagons(mt.g_c, mt.g_d, mt.g_R), geometry.bev_hexagons(mt.p_c, mt.p_d, mt.p_R)
    g_area = np.where(mt.g_valid, ioum.bev_area(mt.g_d, mt.g_R), 0.0)
    p_area = np.where(mt.p_valid, ioum.bev_area(mt.p_d, mt.p_R), 0.0)

    def bev_iou(pi, gi):
        return _chunked(len(pi), lambda sl: ioum.bev_iou_from_footprints(
            p_fp[pi[sl]], p_area[pi[sl]], g_fp[gi[sl]], g_area[gi[sl]]))

    if protocol in ("voc11", "both"):
        out.update(_ap_bev_voc11(mt.p_img, mt.p["cls"], mt.score, mt.g_img, mt.g["cls"], mt.g_ign, bev_iou))
    if protocol in ("coco101", "both"):
        iou_bev = bev_iou(mt.pp, mt.gg)
        per, micro = mt.class_aps(iou_bev, BEV_THRESHOLDS)
        for k, t in enumerate(BEV_THRESHOLDS):
            out[f"ap_bev@{t:.2f}"] = _summary(per[:, k], micro[k])
        out["ap_bev@0.25_by_depth"] = mt.by_depth(iou_bev, BEV_THRESHOLDS[:1],
                                                  lambda per, micro: _summary(per[:, 0], micro[0]))


def _ap3d(mt: _Matching, out: dict) -> np.ndarray:
    """``ap3d@0.25``, ``ap3d`` (mean over ``AP3D_THRESHOLDS``) and ``ap3d_by_depth``; returns the pairs' 3D IoU."""
    iou3 = mt.iou3d_at(1.0)
    per, micro = mt.class_aps(iou3, AP3D_THRESHOLDS)
    i25 = int(np.flatnonzero(np.isclose(AP3D_THRESHOLDS, 0.25))[0])
    out["ap3d@0.25"] = _summary(per[:, i25], micro[i25])
    out["ap3d"] = _summary(per.mean(axis=1), float(micro.mean()))
    out["ap3d_by_depth"] = mt.by_depth(iou3, AP3D_THRESHOLDS,
                                       lambda per, micro: _summary(per.mean(axis=1), float(micro.mean())))
    return iou3


def _rel_ap3d(mt: _Matching, iou3: np.ndarray, grid: np.ndarray, out: dict) -> None:
    """``rel_ap3d``: ``ap3d`` after the one global scale about the camera origin that maximises the
    mean best same-class 3D IoU of the regular GT."""
    curve, best_s, best_iou, best_val = [], float(grid[0]) if len(grid) else 1.0, None, -1.0
    for s in grid:
        vals = iou3 if math.isclose(s, 1.0, rel_tol=0, abs_tol=1e-12) else mt.iou3d_at(float(s))
        best = np.zeros(mt.n_gt)
        if len(mt.gg):
            np.maximum.at(best, mt.gg, vals)
        mean_best = float(best[~mt.g_ign].mean()) if (~mt.g_ign).any() else 0.0
        curve.append(mean_best)
        if mean_best > best_val:
            best_val, best_s, best_iou = mean_best, float(s), vals
    if best_iou is None or best_val <= 0:  # nothing overlaps at any scale: report s = 1
        best_s, best_iou = 1.0, iou3
    per, micro = mt.class_aps(best_iou, AP3D_THRESHOLDS)
    out["rel_ap3d"] = {**_summary(per.mean(axis=1), float(micro.mean())), "scale": round(best_s, 12),
                       "search": {"grid": [float(x) for x in grid], "mean_best_iou": curve}}


def _nhd(mt: _Matching, iou2d: np.ndarray, match_box: str, out: dict) -> None:
    """``nhd_hungarian`` and ``nhd_hausdorff`` on the pairs matched in 2D at IoU >= ``NHD_IOU``."""
    g, p, pp, gg = mt.g, mt.p, mt.pp, mt.gg
    iou_n = iou2d if match_box == "bbox2d_proj" else _chunked(
        len(pp), lambda sl: ioum.iou_2d_pairs(p["bbox"][pp[sl]], g["bbox2d_tight"][gg[sl]]))
    m = mt.match(iou_n, [NHD_IOU])[0]
    mp = mt.sel_c[m[mt.sel_c] >= 0]
    mp = mp[~mt.g_ign[m[mp]]]
    mg = m[mp]
    vals = _nhd_values(mt.p_c[mp], mt.p_d[mp], mt.p_R[mp], mt.g_c[mg], mt.g_d[mg], mt.g_R[mg])
    for name, v in vals.items():
        out[name] = _nhd_entry(v, g["cls"][mg])


def _meta(mt: _Matching, counts: dict, image_ids, ignore, ap_method: str, ap_bev_protocol: str, max_dets: int,
          nhd_match_box: str) -> dict:
    """``metrics["meta"]``: counts, warnings and every choice of the protocol."""
    n_gt, n_ignored = mt.n_gt, int(mt.g_ign.sum())
    n_pred_in, dropped = counts["n_pred_in"], counts["dropped"]
    return {
        "warnings": _warnings(n_pred_in, dropped, n_gt, n_ignored),
        "n_gt": int(n_gt), "n_gt_ignored": n_ignored, "n_pred": int(n_pred_in), "n_pred_outside_split": dropped,
        "n_pred_evaluated": int(len(mt.sel_c)), "n_images_with_gt": int(len(np.unique(mt.g["image_id"]))),
        "n_images": int(counts["n_images"]) if image_ids is None else int(len(np.unique(image_ids))),
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

