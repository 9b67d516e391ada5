"""The trivial head (the paper's d0) and the geometric lift with its three depth rules."""
from __future__ import annotations

import numpy as np

from benchwright.baselines.wildbox.common import (
    _box_center, _box_hw, _classes, _predictions, backproject, class_priors,
)


# ================================================================================ trivial, lift
def predict_trivial(train: dict, target: dict) -> dict[str, np.ndarray]:
    """The paper's d0 on oracle 2D boxes (target: 2D box, class and K only; train: class statistics).

    z = 1, centre = K^-1 [u, v, 1] for the 2D box centre (u, v), per-class median dimensions,
    per-class mean rotation projected onto SO(3).
    """
    pri = class_priors(train)
    cls = _classes(target)
    center = backproject(_box_center(target["bbox2d_tight"]), target["K"], np.ones(len(cls)))
    return _predictions(target, center, pri["dims"][cls], pri["R"][cls])


def pinhole_depth(priors: dict, target: dict, correction: bool = True) -> np.ndarray:
    """The literal height lift: z = c_k f_y H_k / h_2d (c_k = 1 without the correction).

    Absolute, so it inherits the spread of the per-segment normalisation: H_k is a median of
    heights in normalised units (metres / the segment's median depth), which differ by a factor
    of ~2 between segments. See ``predict_lift(mode="pinhole")``.
    """
    cls = _classes(target)
    fy = np.asarray(target["K"], float)[:, 1, 1]
    h2d = _box_hw(target["bbox2d_tight"])[1]
    c = priors["ratio"][cls] if correction else 1.0
    return c * fy * priors["height"][cls] / h2d


def frame_median(values, image_id) -> np.ndarray:
    """(N,) the median of ``values`` over the rows of the same image, for every row."""
    values = np.asarray(values, float)
    img = np.asarray(image_id, np.int64)
    if len(values) == 0:
        return values.copy()
    order = np.lexsort((values, img))
    _, start, counts = np.unique(img[order], return_index=True, return_counts=True)
    v = values[order]
    med = 0.5 * (v[start + (counts - 1) // 2] + v[start + counts // 2])
    out = np.empty(len(values))
    out[order] = np.repeat(med, counts)
    return out


def ground_plane_depth(priors: dict, target: dict) -> np.ndarray:
    """Depth where the ray through each 2D box centre meets the frame's plane of animal centres.

    The animals of a frame stand on one ground plane, so their centres lie on a parallel plane
    n . X = d. Its normal n is the class-mean rotation's local y axis (the animal's "down", i.e.
    the average ground normal seen from the drone, a train statistic). The ray r = K^-1 [u, v, 1]
    meets it at z = d / (n . r) (n . r is clipped at 0.05: a ray at the horizon stays finite).
    The offset d is what monocular geometry cannot know; it is fixed by the dataset's own
    normalisation (every segment's median depth is 1, the assumption d0's z = 1 makes): the
    depths of each frame are scaled to median 1. A frame with one box gets z = 1 (d0).
    """
    cls = _classes(target)
    ray = backproject(_box_center(target["bbox2d_tight"]), target["K"], np.ones(len(cls)))
    down = priors["R"][cls][:, :, 1]
    inv_z = np.maximum(np.sum(down * ray, axis=1), 0.05)
    z = 1.0 / inv_z
    return z / frame_median(z, target["image_id"])


def _group_ids(*keys) -> np.ndarray:
    """(N,) dense integer ids of the distinct tuples of ``keys`` (for ``frame_median``'s grouping)."""
    _, inv = np.unique(np.array([np.asarray(k).astype(str) for k in keys]).T, axis=0, return_inverse=True)
    return np.asarray(inv, np.int64).reshape(-1)


def segment_depth(priors: dict, target: dict) -> np.ndarray:
    """The ground-plane lift with each frame's scale taken from its segment (uses OTHER frames).

    ``ground_plane_depth`` fixes every frame's median depth at 1, but the dataset fixes each
    segment's median at 1, so a frame where the drone is nearer or farther than its segment's
    median carries one common depth error for all its boxes (on train, as large as all the
    within-frame errors together). The segment's frames tell it: an animal's apparent size
    times its true depth is its size, constant along its track, so for every box
    q = log(sqrt(w h) / f_y) + log z_ground is its track's size minus its frame's log scale
    error. The frame's error is the frame median of q minus its track's median of q (the
    track's other frames; the medians keep a turning animal's changing outline from
    dominating), removed from each box of the frame; then each segment's depths are scaled to
    median 1 (the dataset's normalisation). A frame whose tracks appear nowhere else keeps the
    lift's scale. Needs the target's ``segment_id`` and ``track_id`` (video metadata, no 3D).
    """
    z = ground_plane_depth(priors, target)
    if len(z) == 0:
        return z
    if "segment_id" not in target or "track_id" not in target:
        raise ValueError("segment context needs the target's segment_id and track_id (load_split gives them)")
    w, h = _box_hw(target["bbox2d_tight"])
    q = np.log(np.sqrt(w * h) / np.asarray(target["K"], float)[:, 1, 1]) + np.log(z)
    track = _group_ids(target["segment_id"], target["track_id"])
    z = z * np.exp(-frame_median(q - frame_median(q, track), target["image_id"]))
    return z / frame_median(z, _group_ids(target["segment_id"]))


LIFT_MODES = ("ground", "pinhole", "segment")


def lift_depth(priors: dict, target: dict, mode: str = "ground") -> np.ndarray:
    """The lift head's depth: ``ground_plane_depth`` (default), the literal ``pinhole_depth``, or
    ``segment_depth`` (the ground-plane lift with each frame's scale from its segment's other frames)."""
    if mode == "ground":
        return ground_plane_depth(priors, target)
    if mode == "pinhole":
        return pinhole_depth(priors, target)
    if mode == "segment":
        return segment_depth(priors, target)
    raise ValueError(f"unknown lift mode {mode!r}; expected one of {LIFT_MODES}")


CONTEXTS = ("image", "segment")


def base_depth(priors: dict, target: dict, context: str = "image") -> np.ndarray:
    """The depth the learned head corrects: ``ground_plane_depth`` (context "image": the image's own
    2D boxes only) or ``segment_depth`` (context "segment": also the other frames of the segment)."""
    if context == "image":
        return ground_plane_depth(priors, target)
    if context == "segment":
        return segment_depth(priors, target)
    raise ValueError(f"unknown context {context!r}; expected one of {CONTEXTS}")


def predict_lift(train: dict, target: dict, mode: str = "ground") -> dict[str, np.ndarray]:
    """Geometric lifting on oracle 2D boxes (see the module docstring); the centre is back-projected
    from the 2D box centre at the lifted depth, dimensions and rotation are the class priors.

    ``mode="pinhole"``: z = c_k f_y H_k / h_2d, the class-height pinhole lift with the train ratio
    correction. ``mode="ground"`` (default): ``ground_plane_depth``. Reads only the target's 2D
    boxes, classes and K; every statistic comes from train.
    """
    pri = class_priors(train)
    cls = _classes(target)
    z = lift_depth(pri, target, mode)
    center = backproject(_box_center(target["bbox2d_tight"]), target["K"], z)
    return _predictions(target, center, pri["dims"][cls], pri["R"][cls])
