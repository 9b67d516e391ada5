"""WildBox evaluator: 2D AP, AP-BEV, AP-3D, Rel-AP-3D and the two NHDs, plus the KITTI protocol.

Ground truth is the built dataset's ``boxes`` config (``load_ground_truth``); predictions are
the WildBox authors' JSON or a KITTI result folder (``load_predictions``). ``evaluate`` works
on numpy arrays only, so tests and benchmarks build their inputs in memory.

Protocol (every choice is also written to ``metrics["meta"]["protocol"]``):

* Classes: the 6 species (dataset ids 1000..1005). Every class-aware metric matches a
  prediction only to ground truth of its own class in its own image. ``per_class`` is keyed by
  species; ``macro`` is the mean over the classes that have ground truth; ``micro`` pools all
  classes' predictions into one ranking against all ground truth (the class must still match).
* At most ``max_dets`` (100) predictions per image and class are kept (COCO's maxDets); for the
  class-agnostic metric, 100 per image.
* Ranking: by descending score; equal scores rank by image id (as COCOeval, which walks the
  images in id order), and within an image by the predictions' values -- never by their place
  in the file, so any order of the same predictions gives the same metrics.
* Matching: greedy by descending score, each prediction takes the unmatched ground truth of
  highest IoU if IoU >= threshold (COCO). AP is 101-point COCO interpolation
  (``ap_method="coco101"``) for every metric but the default AP-BEV. AP values are percentages.
* ``ap2d@0.50``: class-aware 2D AP at IoU 0.5 against ``bbox2d_proj`` (the projected cuboid, as
  the authors' configs do). ``ap2d_agnostic@{0.25,0.50,0.75}``: classes ignored in matching,
  against ``bbox2d_tight`` (the SAM3 mask box); its ``micro`` is the class-agnostic AP and its
  ``per_class`` the same matching seen per species: TP = matched to a box of that species
  (whatever the predicted label), FP = unmatched and labelled that species, others ignored.
* AP-BEV: IoU of the footprints on the camera x-z plane, each the convex hull of the 8 projected
  corners of the full rotated cuboid (a hexagon under pitch or roll). Two protocols
  (``ap_bev_protocol``): ``ap_bev_voc11@{0.25,0.50}`` (default, "voc11") is the WildBox
  authors' ``bev_ap_eval.py``, so numbers sit beside the paper's: every prediction (no max_dets),
  greedy by score to the best unmatched same-species GT with IoU >= t, VOC 11-point AP with the
  devkit's literal ``recall >= t`` (``ap.average_precision(..., "voc11")``), macro = mean of the
  per-species APs, micro = all species pooled with class-agnostic matching (as their script).
  ``ap_bev@{0.25,0.50}`` ("coco101") is the COCO-style metric, as ``ap3d``: max_dets,
  ``ap_method`` interpolation, class-aware micro.
* ``ap3d@0.25`` and ``ap3d`` (Omni3D: mean of the APs at IoU 0.05, 0.10, ..., 0.50): exact
  oriented 3D IoU for full rotations (``iou.iou_3d_pairs``).
* ``ap3d_by_depth`` and (with "coco101") ``ap_bev@0.25_by_depth``: the metric per relative depth bucket
  (``DEPTH_BUCKETS``: near < 0.95 <= medium < 1.05 <= far, the segment median being 1), as
  Omni3D's near / medium / far: GT outside the bucket are ignored, and so are predictions whose
  depth is outside it unless they match a GT of the bucket.
* ``rel_ap3d``: ``ap3d`` after one global scale s applied to every predicted box about the
  camera origin (centre and dimensions times s). s* maximises the mean over all ground truth
  of its best same-class 3D IoU in its image; searched on ``np.linspace(0.3, 3.0, 28)``.
  s* and the searched curve are in ``rel_ap3d["scale"]`` / ``rel_ap3d["search"]``.
* ``nhd_hungarian``: sum of the 8 corner distances under the optimal (Hungarian, scipy
  ``linear_sum_assignment``) corner assignment, divided by the diagonal of the GT's
  axis-aligned corner extent. ``nhd_hausdorff``: symmetric Hausdorff distance between the two
  corner sets divided by the mean of the two boxes' diagonals (no scale search).
  Both are averaged over prediction-GT pairs matched greedily by score with 2D IoU >= 0.75
  (same class, ``nhd_match_box``: GT ``bbox2d_proj`` by default). Components: for c in xy, z,
  dims, pose the box is the GT with only c taken from the prediction (xy = centre x, y; z =
  centre depth; dims = [W, H, L]; pose = R). ``depth_share`` = NHD_z / NHD_overall of the
  averaged values (0 when NHD_overall is 0). Unmatched boxes do not enter the NHDs.
* Rotations that are not orthonormal (|R R^T - I| > 1e-6) are replaced by the nearest rotation
  (``geometry.project_to_so3``) before any 3D metric; corners are recomputed from centre,
  dimensions and R (``geometry.corners``), never read from ``corners_cam``.
* Boxes with a dimension <= 0 have IoU 0 with everything.
* Ignored ground truth (``ignore``; default none: every GT counts, as in the WildBox paper's
  numbers, whose annotations carry the constants truncation 0, visibility 1): ``ignore="omni3d"``
  applies Omni3D's test-time filter (``omni3d_ignore``) to the real truncation, visibility,
  support points and mask pixels; a bool array gives any other set. As COCO: ignored GT do not
  count as positives, a prediction takes an ignored GT only when no regular GT is available,
  and then counts neither as TP nor as FP. Rel-AP-3D's search and the NHDs use regular GT only.

KITTI-format data: ``evaluation.kitti.evaluate_kitti`` runs the KITTI devkit protocol (see its
docstring) and its result is stored under the ``kitti`` key.

Modules: ``protocol`` (the protocol's constants), ``inputs`` (ground truth, predictions and their
checks), ``metrics`` (``evaluate``: the matching, then one function per metric), ``paths`` (files
and folders on disk, and what the KITTI export loses), ``cli`` (``benchwright evaluate wildbox``
and its summary tables).
"""
from __future__ import annotations

from benchwright.evaluation.wildbox.cli import headline, run_cli, summary_tables
from benchwright.evaluation.wildbox.inputs import (
    load_ground_truth, load_predictions, omni3d_ignore, read_prediction_json, read_prediction_kitti,
)
from benchwright.evaluation.wildbox.metrics import evaluate
from benchwright.evaluation.wildbox.paths import evaluate_paths, kitti_yaw_only_loss
from benchwright.evaluation.wildbox.protocol import (
    AP3D_THRESHOLDS, AP_BEV_PROTOCOLS, DEFAULT_AP_BEV_PROTOCOL, DEPTH_BUCKETS, IGNORE_MODES, NHD_COMPONENTS,
    OMNI3D_IGNORE, SCALE_GRID,
)

__all__ = [
    "SCALE_GRID", "AP3D_THRESHOLDS", "NHD_COMPONENTS", "load_ground_truth", "load_predictions",
    "read_prediction_json", "read_prediction_kitti", "evaluate", "evaluate_paths", "omni3d_ignore",
    "OMNI3D_IGNORE", "IGNORE_MODES", "DEPTH_BUCKETS", "AP_BEV_PROTOCOLS", "DEFAULT_AP_BEV_PROTOCOL",
    "summary_tables", "headline", "kitti_yaw_only_loss",
    "run_cli",
]

