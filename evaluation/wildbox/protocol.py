"""The WildBox evaluation protocol's constants (the package docstring says what each means)."""
from __future__ import annotations

import math

import numpy as np

from benchwright.schemas import wildbox as schema

SPECIES = schema.SPECIES
N_CLASSES = len(SPECIES)
FIRST_CATEGORY_ID = min(schema.CATEGORY_IDS.values())
SCALE_GRID = np.linspace(0.3, 3.0, 28)
AP3D_THRESHOLDS = np.round(np.arange(1, 11) * 0.05, 2)  # 0.05 ... 0.50
AGNOSTIC_THRESHOLDS = (0.25, 0.50, 0.75)
BEV_THRESHOLDS = (0.25, 0.50)
# AP-BEV protocols: "voc11" = the WildBox authors' tools/bev_ap_eval.py (their published numbers),
# "coco101" = the COCO-style metric the other keys use; "both" reports the two.
AP_BEV_PROTOCOLS = ("voc11", "coco101", "both")
# The one default everywhere (evaluate, baseline --evaluate, the benchmarks): the published numbers' protocol.
DEFAULT_AP_BEV_PROTOCOL = "voc11"
AP_BEV_PROTOCOL_NAMES = {"voc11": "VOC 11-point", "coco101": "COCO 101-point"}
AP_BEV_VOC11 = ("the WildBox authors' bev_ap_eval.py: every prediction (no max_dets), by descending score, "
                "takes the unmatched same-species GT of its image with the highest BEV IoU if IoU >= t; "
                "VOC 11-point (max precision at recall >= t, t = 0, 0.1, ..., 1 compared literally); "
                "macro = mean of the per-species APs; micro = all species pooled with class-agnostic matching")
# Omni3D's near / medium / far buckets (10 m, 35 m) mean nothing after the per-segment
# normalisation; these are relative to the segment's median depth (1) and split WildBox's
# depths into about equal thirds.
DEPTH_BUCKETS = {"near": (0.0, 0.95), "medium": (0.95, 1.05), "far": (1.05, math.inf)}
NHD_COMPONENTS = ("overall", "xy", "z", "dims", "pose")
NHD_IOU = 0.75
GT_COLUMNS = ("image_id", "frame_id", "segment_id", "species", "coarse_class", "category_id", "center_cam",
              "dimensions", "R_cam", "corners_cam", "bbox2d_tight", "bbox2d_proj", "depth",
              "truncation", "visibility", "segmentation_pts", "support_points", "kitti_representable",
              "K", "image_width", "image_height", "bbox_source")
# Omni3D's test-time filter (cubercnn ``is_ignore`` with ``do_test``'s settings): truncation >=
# 0.33, visibility <= 0.33, projected 2D box height <= 0.0625 or >= 1.5 image heights, a
# dimension <= 0, no points (lidar_pts; here the support points) or no mask pixels.
OMNI3D_IGNORE = {"truncation_thres": 0.33, "visibility_thres": 0.33, "min_height_thres": 0.0625,
                 "max_height_thres": 1.5}
IGNORE_MODES = ("none", "omni3d")
_REQUIRED_GT = ("image_id", "category_id", "bbox2d_tight", "bbox2d_proj", "center_cam",
                "dimensions", "R_cam")
_REQUIRED_PRED = ("image_id", "category_id", "score", "bbox", "center_cam", "dimensions", "pose")
_SHAPES = {"bbox2d_tight": (4,), "bbox2d_proj": (4,), "bbox": (4,), "center_cam": (3,),
           "dimensions": (3,), "R_cam": (3, 3), "pose": (3, 3)}


