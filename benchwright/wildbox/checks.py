"""WildBox's record checks, run while a segment is annotated (``benchwright.wildbox.stages``): each returns
(observation index, reason) pairs, and the annotation refuses those observations. The checks of the written tables
are ``validation/wildbox.py``'s."""
from __future__ import annotations

import numpy as np

from benchwright.formats import geometry

# A mask box and the projected cuboid box of the same animal must overlap at least this much
# (IoU). The cuboid encloses legs, neck and tail the mask may miss, so the bound is loose; a
# lower overlap means the 3D box and the mask describe different things (a sign flip, a wrong id).
MIN_TIGHT_PROJ_IOU = 0.05
# Between consecutive observations a track's centre may move at most this many box diagonals
# per frame step (a walking animal moves a fraction of its length per frame; a jump is an id swap).
MAX_STEP_DIAGONALS = 3.0


def raw_observation_problems(seg, species_problems, frame_pos, atol):
    """Input problems of raw observations: non-finite values, bad dimensions, rotations, frame
    indices outside the segment, no species (``species_problems``: per observation why its class name and
    source folder give none, "" where they do), duplicate (track, frame) pairs.

    Every test runs on the whole segment at once; Python touches only the rows that fail.
    """
    n = len(seg.track_id)
    if n == 0:
        return
    finite = (np.isfinite(seg.center).all(axis=1) & np.isfinite(seg.dims_whl).all(axis=1)
              & np.isfinite(seg.R).all(axis=(1, 2)))
    ortho, det_pos = geometry.check_rotations(np.nan_to_num(seg.R), atol=atol)
    positive = (seg.dims_whl > 0).all(axis=1)
    in_segment = np.isin(seg.frame_index, np.fromiter(frame_pos, dtype=np.int64, count=len(frame_pos)))
    known = np.array([not problem for problem in species_problems], dtype=bool)
    pairs = seg.track_id * (1 << 32) + seg.frame_index
    _, first = np.unique(pairs, return_index=True)
    duplicate = np.ones(n, dtype=bool)
    duplicate[first] = False
    # (mask of rows that pass, reason for those that fail) in the order a row is judged
    tests = [
        (finite, lambda i: "NaN or infinite centre, dimensions or rotation"),
        (positive, lambda i: f"dimensions {np.round(seg.dims_whl[i][::-1], 4).tolist()} (l, w, h) not all positive"),
        (ortho, lambda i: "rotation matrix is not orthonormal (R R^T != I)"),
        (det_pos, lambda i: "rotation matrix has det -1 (a reflection)"),
        (in_segment, lambda i: f"frame index {seg.frame_index[i]} is not a frame of the segment (cameras.json)"),
        (known, lambda i: species_problems[i]),
        (~duplicate, lambda i: f"track {seg.track_id[i]} has two observations for frame index {seg.frame_index[i]}"),
    ]
    failed = np.zeros(n, dtype=bool)
    for passes, reason in tests:
        for i in np.flatnonzero(~passes & ~failed):
            yield int(i), reason(i)
        failed |= ~passes


def box_problems(keep, center, dims, R, tight, proj, sizes, track_id, frame_index, atol):
    """Checks on derived values of the boxes still kept (camera frame, normalised). ``proj``: the box of the
    projected cuboid's part inside the image (``geometry.visible_projected_boxes``), which the mask's is
    compared with."""
    ortho, det_pos = geometry.check_rotations(R, atol=atol) if len(R) else ((), ())
    iou = _iou(tight, proj)
    inside = ((tight[:, 0] >= 0) & (tight[:, 1] >= 0) & (tight[:, 2] <= sizes[:, 0] - 1)
              & (tight[:, 3] <= sizes[:, 1] - 1))
    step_bad = _track_jumps(keep, center, dims, track_id, frame_index)
    for i in np.flatnonzero(keep):
        if not (np.isfinite(center[i]).all() and np.isfinite(dims[i]).all()):
            reason = "non-finite value after the camera transform"
        elif not (ortho[i] and det_pos[i]):
            reason = "camera-frame rotation is not a proper rotation (R_ext @ R_world)"
        elif not inside[i]:
            reason = f"2D box {np.round(tight[i], 1).tolist()} outside the {sizes[i, 0]}x{sizes[i, 1]} image"
        elif not iou[i] >= MIN_TIGHT_PROJ_IOU:
            reason = (f"mask/VGGT box {np.round(tight[i], 1).tolist()} and the projected cuboid's box in the "
                      f"image {np.round(proj[i], 1).tolist()} disagree (IoU {iou[i]:.3f} < {MIN_TIGHT_PROJ_IOU})")
        elif step_bad[i]:
            reason = f"track {track_id[i]} jumps more than {MAX_STEP_DIAGONALS} box diagonals per frame"
        else:
            continue
        yield i, reason


def _iou(a, b):
    ix = np.clip(np.minimum(a[:, 2], b[:, 2]) - np.maximum(a[:, 0], b[:, 0]), 0, None)
    iy = np.clip(np.minimum(a[:, 3], b[:, 3]) - np.maximum(a[:, 1], b[:, 1]), 0, None)
    inter = ix * iy
    union = ((a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1]) + (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1]) - inter)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(union > 0, inter / union, 0.0)


def consecutive(rows, frame_index, *track_keys) -> tuple[np.ndarray, np.ndarray]:
    """(earlier, later) indices of consecutive observations of one track among ``rows``; a track
    is identified by all of ``track_keys`` (e.g. segment and track id), ordered by frame."""
    order = rows[np.lexsort((frame_index[rows], *[k[rows] for k in reversed(track_keys)]))]
    same = np.ones(max(len(order) - 1, 0), dtype=bool)
    for k in track_keys:
        same &= k[order[1:]] == k[order[:-1]]
    return order[:-1][same], order[1:][same]


def _track_jumps(keep, center, dims, track_id, frame_index):
    """Marks the later observation of each consecutive pair whose centre moved too far."""
    bad = np.zeros(len(keep), dtype=bool)
    a, b = consecutive(np.flatnonzero(keep), frame_index, track_id)
    steps = np.maximum(frame_index[b] - frame_index[a], 1)
    moved = np.linalg.norm(center[b] - center[a], axis=1)
    diag = np.linalg.norm(dims[a], axis=1)
    bad[b[moved > MAX_STEP_DIAGONALS * diag * steps]] = True
    return bad
