"""Vectorised array helpers shared by domain code (occlusion between a frame's boxes) and the
metrics (prediction-GT pairs of one image)."""
from __future__ import annotations

import numpy as np


def group_pairs(pred_key: np.ndarray, gt_key: np.ndarray):
    """All (prediction, GT) index pairs whose integer keys are equal.

    Returns ``(p_idx, g_idx)``, sorted by prediction index (pairs of one prediction are
    contiguous). The number of pairs is sum over groups of n_pred * n_gt.
    """
    pred_key = np.asarray(pred_key, np.int64)
    gt_key = np.asarray(gt_key, np.int64)
    g_order = np.argsort(gt_key, kind="stable")
    g_sorted = gt_key[g_order]
    lo = np.searchsorted(g_sorted, pred_key, "left")
    hi = np.searchsorted(g_sorted, pred_key, "right")
    cnt = hi - lo
    total = int(cnt.sum())
    p_idx = np.repeat(np.arange(len(pred_key)), cnt)
    offs = np.arange(total) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    g_idx = g_order[np.repeat(lo, cnt) + offs]
    return p_idx, g_idx
