"""Matching predictions to ground truth and turning matches into average precision.

Shared by every evaluator. Everything is vectorised over images: candidate (prediction, GT)
pairs are built per group (an image, or an image and class) with sort/searchsorted, and the
greedy matching runs in *rounds* -- round r lets the r-th best-scored prediction of every group
pick its ground truth at once -- so the Python loop runs max(predictions per group) times, not
once per image or per pair.

Matching (COCO, also used for AP-BEV and AP-3D): predictions in descending score; each takes
the unmatched ground truth of its group with the highest IoU, if that IoU >= threshold.
Unmatched predictions are false positives; a ground truth matches at most once.

AP methods:
  * ``"coco101"`` (default everywhere in benchwright): precision made monotone (running max from
    the right), read at the first rank whose recall >= r for r in 0, 0.01, ..., 1 (0 where the
    recall is never reached), averaged over the 101 points.
  * ``"voc11"``: VOC 2007 11-point, as the devkit (and the WildBox authors' ``bev_ap_eval.py``):
    mean over t in np.arange(0., 1.1, 0.1) of the max precision at recall >= t, with recall =
    TP / n_gt in float64 compared literally -- a recall of exactly 3/10 does not reach
    t = 0.30000000000000004.
  * ``"r40"``: KITTI's 40 recall points 1/40 ... 1 read like ``coco101`` (for ranked lists).
AP values are returned as fractions in [0, 1]; the evaluators report percentages.
"""
from __future__ import annotations

import numpy as np

__all__ = [
    "AP_METHODS", "rank_within_groups", "greedy_match", "average_precision",
    "kitti_thresholds", "kitti_ap_from_precision",
]

AP_METHODS = ("coco101", "voc11", "r40")
# The VOC devkit's recall thresholds exactly as it builds them (np.arange(0., 1.1, 0.1); the same
# floats as np.linspace(0, 1, 11)): t[3] = 0.30000000000000004, t[6] = 0.6000000000000001 and
# t[7] = 0.7000000000000001 sit one ulp above 3/10, 6/10, 7/10, and are compared literally.
_VOC11_RECALLS = np.arange(0.0, 1.1, 0.1)


def rank_within_groups(group: np.ndarray, score: np.ndarray) -> np.ndarray:
    """(N,) 0-based rank of each item inside its group by descending score (ties: input order)."""
    group = np.asarray(group, np.int64)
    score = np.asarray(score, float)
    order = np.lexsort((np.arange(len(score)), -score, group))
    g_sorted = group[order]
    start = np.r_[True, g_sorted[1:] != g_sorted[:-1]] if len(order) else np.zeros(0, bool)
    first = np.maximum.accumulate(np.where(start, np.arange(len(order)), 0)) if len(order) else order
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order)) - first
    return rank


def greedy_match(pred_group, pred_score, p_idx, g_idx, iou, n_gt: int, thresholds,
                 strict: bool = False, gt_ignore=None):
    """Greedy score-ordered matching at several IoU thresholds at once.

    pred_group (P,) and pred_score (P,): the group (e.g. image, or image x class) and score of
    every prediction; (p_idx, g_idx, iou): candidate pairs (only pairs inside a group; pairs
    absent from the list have IoU 0). A prediction matches the unmatched GT of highest IoU with
    IoU >= t (> t when ``strict``); ties go to the GT listed first. ``gt_ignore`` (n_gt,) bool:
    as COCO, a prediction takes an ignored GT only when no regular GT is available to it.
    Returns ``matched_gt`` (T, P) int64: the GT index each prediction matched, -1 if none.
    """
    thr = np.atleast_1d(np.asarray(thresholds, float))
    n_pred = len(pred_score)
    t_n = len(thr)
    matched = np.full((t_n, n_pred), -1, np.int64)
    iou = np.asarray(iou, float)
    keep = iou > 0
    p_idx, g_idx, iou = np.asarray(p_idx)[keep], np.asarray(g_idx)[keep], iou[keep]
    if len(iou) == 0:
        return matched
    rank = rank_within_groups(pred_group, pred_score)
    pair_rank = rank[p_idx]
    order = np.lexsort((np.arange(len(p_idx)), p_idx, pair_rank))
    p_idx, g_idx, iou, pair_rank = p_idx[order], g_idx[order], iou[order], pair_rank[order]
    bounds = np.searchsorted(pair_rank, np.arange(int(pair_rank.max()) + 2))
    taken = np.zeros((t_n, n_gt), bool)
    # regular GT outrank ignored ones whatever the IoU (IoU <= 1 < the bonus)
    bonus = np.zeros(n_gt) if gt_ignore is None else np.where(np.asarray(gt_ignore, bool), 0.0, 2.0)
    for r in range(len(bounds) - 1):
        lo, hi = bounds[r], bounds[r + 1]
        if lo == hi:
            continue
        p, g, v = p_idx[lo:hi], g_idx[lo:hi], iou[lo:hi]
        ok = (v[None, :] > thr[:, None]) if strict else (v[None, :] >= thr[:, None])
        avail = ok & ~taken[:, g]
        val = np.where(avail, (v + bonus[g])[None, :], -1.0)
        seg = np.flatnonzero(np.r_[True, p[1:] != p[:-1]])
        best = np.maximum.reduceat(val, seg, axis=1)
        seg_len = np.diff(np.r_[seg, len(p)])
        is_best = avail & (val == np.repeat(best, seg_len, axis=1))
        pos = np.where(is_best, np.arange(len(p))[None, :], len(p))
        first = np.minimum.reduceat(pos, seg, axis=1)
        ti, si = np.nonzero(best >= 0)
        if len(ti) == 0:
            continue
        gsel = g[first[ti, si]]
        taken[ti, gsel] = True
        matched[ti, p[seg[si]]] = gsel
    return matched


def average_precision(scores, tp, n_gt: int, method: str = "coco101", ignore=None):
    """AP (fraction 0..1) of a ranked list, one value per row of ``tp``.

    scores (P,); tp (T, P) or (P,) bool true positives; ``ignore`` (T, P) or (P,) bool marks
    predictions that count neither as TP nor FP. Ranking is by descending score, stable
    (mergesort, as COCO). Returns (T,) array (or a float for 1-D ``tp``); NaN when n_gt == 0.
    """
    if method not in AP_METHODS:
        raise ValueError(f"unknown AP method {method!r}; expected one of {AP_METHODS}")
    tp = np.asarray(tp, bool)
    one = tp.ndim == 1
    tp = np.atleast_2d(tp)
    if n_gt <= 0:
        out = np.full(tp.shape[0], np.nan)
        return float(out[0]) if one else out
    scores = np.asarray(scores, float)
    order = np.argsort(-scores, kind="mergesort")
    tp = tp[:, order]
    counted = np.ones_like(tp) if ignore is None else ~np.atleast_2d(np.asarray(ignore, bool))[:, order]
    out = np.zeros(tp.shape[0])
    for t in range(tp.shape[0]):
        c = counted[t] if counted.shape[0] > 1 else counted[0]
        tpc = np.cumsum(tp[t][c])
        fpc = np.cumsum(~tp[t][c])
        if len(tpc) == 0:
            continue
        recall = tpc / n_gt
        precision = tpc / np.maximum(tpc + fpc, np.finfo(float).eps)
        out[t] = _interpolated_ap(recall, precision, method)
    return float(out[0]) if one else out


def _interpolated_ap(recall: np.ndarray, precision: np.ndarray, method: str) -> float:
    # Monotone precision envelope: p(k) = max precision at rank >= k.
    envelope = np.maximum.accumulate(precision[::-1])[::-1]
    if method == "voc11":
        pts = _VOC11_RECALLS
    elif method == "coco101":
        pts = np.linspace(0, 1, 101)
    else:
        pts = np.arange(1, 41) / 40.0
    idx = np.searchsorted(recall, pts, side="left")
    vals = np.where(idx < len(recall), envelope[np.minimum(idx, len(recall) - 1)], 0.0)
    return float(vals.mean())


# ---------------------------------------------------------------------------- KITTI protocol
def kitti_thresholds(tp_scores: np.ndarray, n_gt: int, n_sample: int = 41) -> np.ndarray:
    """Score thresholds at which the KITTI devkit samples precision (``getThresholds``).

    ``tp_scores``: scores of the true positives from the score-greedy pass. Walks them in
    descending order and keeps a score whenever its recall is the closest one to the next of
    the 41 sample points 0, 1/40, ..., 1.
    """
    scores = np.sort(np.asarray(tp_scores, float))[::-1]
    out = []
    current = 0.0
    for i, s in enumerate(scores):
        l_recall = (i + 1) / n_gt
        r_recall = (i + 2) / n_gt if i < len(scores) - 1 else l_recall
        if (r_recall - current) < (current - l_recall) and i < len(scores) - 1:
            continue
        out.append(s)
        current += 1.0 / (n_sample - 1.0)
    return np.asarray(out, float)


def kitti_ap_from_precision(precision: np.ndarray):
    """(AP11, AP40) as fractions from the 41 sampled, monotone precisions of the KITTI devkit.

    AP11 averages samples 0, 4, ..., 40 (recall 0, 0.1, ..., 1); AP40 averages samples 1..40.
    """
    p = np.zeros(41)
    p[:len(precision)] = precision[:41]
    return float(p[0::4].sum() / 11.0), float(p[1:].sum() / 40.0)
