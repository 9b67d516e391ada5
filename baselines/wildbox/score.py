"""The learned head's score model."""
from __future__ import annotations

import numpy as np

from benchwright.baselines.wildbox.common import _box_center, _box_hw, _classes, backproject
from benchwright.baselines.wildbox.lift import base_depth, frame_median


# ================================================================================ score model
# The learned head's score: a logistic regression for "the lift's centre is a true positive" (BEV
# IoU >= TP_IOU with the true box when size and rotation are the true ones), on a few geometric
# features. The ground-plane lift fixes each frame's median depth and tilts the frame's depths
# about it by the assumed ground normal, so its error grows with the box's distance from the
# frame's median ray, and a footprint large against its depth tolerates more error.
TP_IOU = 0.25
SCORE_FEATURES = ("log sqrt(W L) / z (class prior, lift depth)", "log sqrt(w h) / f_y", "|ray_y - frame median|",
                  "|ray_x - frame median|", "log n_boxes (frame)")
SCORE_L2 = 1.0  # ridge penalty on the standardised weights (the intercept is free)


def _score_features(priors: dict, a: dict, context: str = "image") -> np.ndarray:
    cls = _classes(a)
    img = np.asarray(a["image_id"], np.int64)
    dims = priors["dims"][cls]
    w, h = _box_hw(a["bbox2d_tight"])
    ray = backproject(_box_center(a["bbox2d_tight"]), a["K"], np.ones(len(cls)))
    _, inv, counts = np.unique(img, return_inverse=True, return_counts=True)
    return np.column_stack([
        np.log(np.sqrt(dims[:, 0] * dims[:, 2]) / base_depth(priors, a, context)),
        np.log(np.sqrt(w * h) / np.asarray(a["K"], float)[:, 1, 1]),
        np.abs(ray[:, 1] - frame_median(ray[:, 1], img)), np.abs(ray[:, 0] - frame_median(ray[:, 0], img)),
        np.log(counts[inv]),
    ])


def _lift_centre_tp(priors: dict, a: dict, context: str = "image") -> np.ndarray:
    """(N,) 1.0 where the lift's centre (at ``base_depth``), with the true size and rotation, has BEV
    IoU >= ``TP_IOU`` with the true box (train only; the lift fits nothing per box, so these labels
    are honest)."""
    from benchwright.evaluation.iou import bev_iou_pairs

    b = np.asarray(a["bbox2d_tight"], float)
    centre = backproject(_box_center(b), a["K"], base_depth(priors, a, context))
    iou = bev_iou_pairs(centre, a["dimensions"], a["R_cam"], a["center_cam"], a["dimensions"], a["R_cam"])
    return (iou >= TP_IOU).astype(np.float64)


def fit_score_model(priors: dict, train: dict, context: str = "image") -> dict:
    """Logistic regression of ``_lift_centre_tp`` on ``_score_features`` (train), L2 ``SCORE_L2``.

    scipy's L-BFGS from zero weights on a convex loss: deterministic. Returns {mean, std, weights}
    (the last weight is the intercept)."""
    from scipy.optimize import minimize
    from scipy.special import expit, log_expit

    x = _score_features(priors, train, context)
    y = _lift_centre_tp(priors, train, context)
    mean, std = x.mean(axis=0), x.std(axis=0)
    std = np.where(std > 1e-12, std, 1.0)
    xb = np.column_stack([(x - mean) / std, np.ones(len(x))])
    n = max(len(x), 1)

    def loss(wts):
        t = xb @ wts
        ridge = SCORE_L2 / n * wts[:-1]
        grad = xb.T @ (expit(t) - y) / n
        grad[:-1] += ridge
        return -(y * log_expit(t) + (1 - y) * log_expit(-t)).mean() + 0.5 * ridge @ wts[:-1], grad

    wts = minimize(loss, np.zeros(xb.shape[1]), jac=True, method="L-BFGS-B").x if len(x) else np.zeros(xb.shape[1])
    return {"mean": mean, "std": std, "weights": wts, "features": list(SCORE_FEATURES), "context": context}


def score_probability(model: dict, priors: dict, target: dict) -> np.ndarray:
    """(N,) the score model's probability that the lift's centre of each target box is a true positive."""
    from scipy.special import expit

    x = (_score_features(priors, target, model.get("context", "image")) - model["mean"]) / model["std"]
    return expit(x @ model["weights"][:-1] + model["weights"][-1])
