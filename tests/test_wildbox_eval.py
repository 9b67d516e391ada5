"""WildBox evaluator: AP arithmetic, matching, metric behaviour, NHD, Rel-AP-3D, file parsing."""
import json
import math

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from benchwright.formats import geometry
from benchwright.arrays import group_pairs
from benchwright.benchmarks.wildbox_eval import jitter_predictions, synth_ground_truth
from benchwright.errors import RecordError
from benchwright.evaluation import ap as apm
from benchwright.evaluation import wildbox as ev
from benchwright.schemas import wildbox as schema

AP_KEYS = ("ap2d@0.50", "ap2d_agnostic@0.25", "ap2d_agnostic@0.50", "ap2d_agnostic@0.75",
           "ap_bev_voc11@0.25", "ap_bev_voc11@0.50", "ap3d@0.25", "ap3d", "rel_ap3d")
COCO_BEV_KEYS = ("ap_bev@0.25", "ap_bev@0.50")  # with ap_bev_protocol="coco101" (or "both")
NHD_KEYS = ("nhd_hungarian", "nhd_hausdorff")


@pytest.fixture(scope="module")
def gt():
    g = synth_ground_truth(400, seed=11)
    g["bbox2d_tight"] = g["bbox2d_proj"].copy()  # one predicted box can then be perfect for both
    g.pop("image_ids")
    return g


def _perfect(gt):
    return jitter_predictions(gt, 0.0, seed=3, miss=0, false_pos=0, wrong_class=0)


def _clean(gt, level, seed=3):
    return jitter_predictions(gt, level, seed=seed, miss=0, false_pos=0, wrong_class=0)


# --------------------------------------------------------------------------------- AP arithmetic
def test_average_precision_hand_computed():
    # 3 GT; ranked TP (0.9), FP (0.8), TP (0.7): recall 1/3, 1/3, 2/3; precision 1, 1/2, 2/3.
    # Monotone envelope: 1, 2/3, 2/3.
    scores = np.array([0.7, 0.9, 0.8])  # unsorted on purpose
    tp = np.array([True, True, False])
    # COCO 101: r = 0.00..0.33 (34 points) read precision 1; r = 0.34..0.66 (33 points) read the
    # envelope at rank 3, 2/3; r >= 0.67 (34 points) is never reached, 0. (34 + 33 * 2/3) / 101.
    assert apm.average_precision(scores, tp, 3, "coco101") == pytest.approx((34 + 22) / 101)
    # VOC 11: r = 0, .1, .2, .3 -> 1; r = .4, .5, .6 -> 2/3; r >= .7 -> 0. (4 + 3 * 2/3) / 11.
    assert apm.average_precision(scores, tp, 3, "voc11") == pytest.approx(6 / 11)
    # R40: r = 1/40 .. 13/40 (13 points, < 1/3) -> 1; 14/40 .. 26/40 (13 points) -> 2/3; rest 0.
    assert apm.average_precision(scores, tp, 3, "r40") == pytest.approx((13 + 13 * 2 / 3) / 40)
    # Ignored predictions drop out of the ranking: ignoring the FP gives precision 1 up to 2/3.
    assert apm.average_precision(scores, tp, 3, "coco101", ignore=[False, False, True]) == pytest.approx(67 / 101)
    assert np.isnan(apm.average_precision(scores, tp, 0))
    assert apm.average_precision(np.zeros(0), np.zeros(0, bool), 5) == 0.0


def test_voc11_compares_recall_with_the_devkit_thresholds_literally():
    """VOC 11-point reads max precision at recall >= t for t in np.arange(0, 1.1, 0.1) compared as
    floats: t[3] = 0.30000000000000004, so a recall of exactly 3/10 does not reach it (the
    devkit's and the WildBox authors' arithmetic; a tolerance would count it)."""
    assert np.arange(0.0, 1.1, 0.1)[3] > 3 / 10
    # 10 GT, three TPs then nothing: recall 0.1, 0.2, 0.3 at precision 1 -> t = 0, .1, .2 only.
    assert apm.average_precision(np.array([0.9, 0.8, 0.7]), np.ones(3, bool), 10, "voc11") == pytest.approx(3 / 11)
    # 5 GT, three TPs: recall 0.2, 0.4, 0.6; t[6] = 0.6000000000000001 is not reached by 3/5.
    assert apm.average_precision(np.array([3.0, 2, 1]), np.ones(3, bool), 5, "voc11") == pytest.approx(6 / 11)
    # 4 GT, two TPs: recall 0.25, 0.5 (0.5 == t[5] exactly: reached).
    assert apm.average_precision(np.array([2.0, 1]), np.ones(2, bool), 4, "voc11") == pytest.approx(6 / 11)


def test_greedy_match_takes_best_iou_in_score_order():
    # Prediction 0 (score 0.9) overlaps GT 0 (0.6) and GT 1 (0.8): takes GT 1 (best IoU).
    # Prediction 1 (score 0.8) overlaps only GT 1 (0.7): GT 1 is taken, so it is a false positive.
    p_idx, g_idx = np.array([0, 0, 1]), np.array([0, 1, 1])
    iou = np.array([0.6, 0.8, 0.7])
    m = apm.greedy_match(np.array([0, 0]), np.array([0.9, 0.8]), p_idx, g_idx, iou, 2, [0.5, 0.65, 0.85])
    assert m.tolist() == [[1, -1], [1, -1], [-1, -1]]
    # Strict ('>') versus COCO's '>=' at exactly the threshold.
    m = apm.greedy_match(np.array([0]), np.array([1.0]), np.array([0]), np.array([0]), np.array([0.5]), 1, [0.5])
    assert m[0, 0] == 0
    m = apm.greedy_match(np.array([0]), np.array([1.0]), np.array([0]), np.array([0]), np.array([0.5]), 1, [0.5], strict=True)
    assert m[0, 0] == -1


def _reference_match(p_group, score, g_group, ious, thr, ignored=None):
    """COCOeval.evaluateImg's per-group loop: regular GT sorted first; once a prediction holds a
    regular GT it stops at the ignored ones; an ignored GT is taken only if nothing regular matched."""
    ignored = np.zeros(len(g_group), bool) if ignored is None else ignored
    out = np.full(len(score), -1)
    for grp in np.unique(p_group):
        preds = [i for i in np.argsort(-score, kind="stable") if p_group[i] == grp]
        gts = sorted(np.flatnonzero(g_group == grp), key=lambda g: (bool(ignored[g]), g))
        taken = set()
        for p in preds:
            best, best_g = thr, -1
            for g in gts:
                if g in taken:
                    continue
                if best_g > -1 and not ignored[best_g] and ignored[g]:
                    break
                if ious[p, g] < best or (ious[p, g] == best and best_g != -1):
                    continue
                best, best_g = ious[p, g], g
            if best_g >= 0:
                taken.add(best_g)
                out[p] = best_g
    return out


def _random_matching_case(seed: int):
    """300 predictions and 250 GT in 40 groups with random scores and IoUs (half the pairs 0)."""
    rng = np.random.default_rng(seed)
    n_p, n_g = 300, 250
    p_group, g_group = rng.integers(0, 40, n_p), rng.integers(0, 40, n_g)
    score = rng.random(n_p)
    ious = rng.random((n_p, n_g)) * (rng.random((n_p, n_g)) < 0.5)
    return rng, p_group, g_group, score, ious


def test_greedy_match_equals_reference_loop():
    _, p_group, g_group, score, ious = _random_matching_case(0)
    p_idx, g_idx = group_pairs(p_group, g_group)
    assert np.all(p_group[p_idx] == g_group[g_idx])
    assert len(p_idx) == sum(int((p_group == k).sum() * (g_group == k).sum()) for k in range(40))
    thresholds = [0.1, 0.5, 0.9]
    m = apm.greedy_match(p_group, score, p_idx, g_idx, ious[p_idx, g_idx], len(g_group), thresholds)
    for t, thr in enumerate(thresholds):
        assert np.array_equal(m[t], _reference_match(p_group, score, g_group, ious, thr))


def test_greedy_match_with_ignored_gt_equals_cocoeval_loop():
    rng, p_group, g_group, score, ious = _random_matching_case(1)
    ignored = rng.random(len(g_group)) < 0.3
    p_idx, g_idx = group_pairs(p_group, g_group)
    m = apm.greedy_match(p_group, score, p_idx, g_idx, ious[p_idx, g_idx], len(g_group), [0.1, 0.5],
                         gt_ignore=ignored)
    for t, thr in enumerate([0.1, 0.5]):
        assert np.array_equal(m[t], _reference_match(p_group, score, g_group, ious, thr, ignored))
    # a prediction prefers a regular GT (IoU 0.6) to an ignored one (IoU 0.9); the next one takes the ignored
    m = apm.greedy_match(np.array([0, 0]), np.array([0.9, 0.8]), np.array([0, 0, 1]), np.array([0, 1, 0]),
                         np.array([0.9, 0.6, 0.8]), 2, [0.5], gt_ignore=np.array([True, False]))
    assert m.tolist() == [[1, 0]]


def test_ignored_ground_truth_counts_neither_way(gt):
    ignored = np.random.default_rng(5).random(len(gt["image_id"])) < 0.3
    perfect = _perfect(gt)
    regular_only = {k: v[~ignored] for k, v in perfect.items()}
    plain = ev.evaluate(gt, regular_only, ap_bev_protocol="both")
    masked = ev.evaluate(gt, regular_only, ignore=ignored, ap_bev_protocol="both")
    everything = ev.evaluate(gt, perfect, ignore=ignored, ap_bev_protocol="both")
    for key in AP_KEYS + COCO_BEV_KEYS:
        assert plain[key]["micro"] < 80.0, key                        # the ignored GT are misses without the mask
        assert masked[key]["micro"] == pytest.approx(100.0), key      # ... and not counted with it
        # hits on ignored GT are not FPs (counted as FPs they would cost ~30 points). Not exactly 100:
        # as in COCO, a prediction of an ignored GT overlapping a regular one at IoU >= t takes the regular
        assert everything[key]["micro"] >= 99.5, key
    assert masked["meta"]["n_gt_ignored"] == int(ignored.sum())
    assert everything["nhd_hungarian"]["n_pairs"]["micro"] == int((~ignored).sum())
    with pytest.raises(ValueError, match="shape"):
        ev.evaluate(gt, perfect, ignore=ignored[:-1])
    with pytest.raises(ValueError, match="needs gt arrays"):
        ev.evaluate(gt, perfect, ignore="omni3d")


def test_depth_buckets_ignore_what_lies_outside(gt):
    z = gt["center_cam"][:, 2]
    perfect = _perfect(gt)
    m = ev.evaluate(gt, perfect, ap_bev_protocol="coco101")
    for key in ("ap3d_by_depth", "ap_bev@0.25_by_depth"):
        assert set(m[key]) == {"bounds", "near", "medium", "far"}
        assert sum(m[key][b]["n_gt"] for b in ("near", "medium", "far")) == len(z)
        assert all(m[key][b]["micro"] == pytest.approx(100.0) for b in ("near", "medium", "far"))
    assert m["ap3d_by_depth"]["bounds"] == {"near": [0.0, 0.95], "medium": [0.95, 1.05], "far": [1.05, None]}
    # Predict only the near animals: near stays 100, far drops to 0 (its GT are all missed) and
    # the near predictions are not false positives of the far bucket (outside it, ignored).
    near = z < 0.95
    assert 0 < near.sum() < len(z)
    m = ev.evaluate(gt, {k: v[near] for k, v in perfect.items()})
    assert m["ap3d_by_depth"]["near"]["micro"] == pytest.approx(100.0)
    assert m["ap3d_by_depth"]["far"]["micro"] == pytest.approx(0.0)
    assert m["ap3d"]["micro"] < 60.0
    # A confident false positive at far depth costs the far bucket only.
    fp = {k: v[:1].copy() for k, v in perfect.items()}
    fp["center_cam"] = fp["center_cam"] * (3.0 / fp["center_cam"][:, 2:])  # on its ray, at depth 3
    fp["score"] = np.array([10.0])
    both = {k: np.concatenate([perfect[k], fp[k]]) for k in perfect}
    m = ev.evaluate(gt, both)
    assert m["ap3d_by_depth"]["near"]["micro"] == pytest.approx(100.0)
    assert m["ap3d_by_depth"]["medium"]["micro"] == pytest.approx(100.0)
    assert m["ap3d_by_depth"]["far"]["micro"] < 100.0
    custom = ev.evaluate(gt, perfect, depth_buckets={"all": (0.0, math.inf)})
    assert custom["ap3d_by_depth"]["all"]["n_gt"] == len(z)


def test_omni3d_ignore_rules():
    H = 1000.0
    rows = [  # (truncation, visibility, box height px, dims, support points, segmentation pts) -> ignored
        ((0.0, 1.0, 100, 1.0, 5, 50), False),
        ((0.33, 1.0, 100, 1.0, 5, 50), True),      # truncation >= 0.33
        ((0.32, 1.0, 100, 1.0, 5, 50), False),
        ((0.0, 0.33, 100, 1.0, 5, 50), True),      # visibility <= 0.33
        ((0.0, 0.34, 100, 1.0, 5, 50), False),
        ((-1.0, -1.0, 100, 1.0, 5, 50), False),    # unknown truncation / visibility: kept (Omni3D)
        ((0.0, 1.0, 62.5, 1.0, 5, 50), True),      # height <= 0.0625 image heights
        ((0.0, 1.0, 63, 1.0, 5, 50), False),
        ((0.0, 1.0, 1500, 1.0, 5, 50), True),      # height >= 1.5 image heights
        ((0.0, 1.0, 100, 0.0, 5, 50), True),       # a zero dimension
        ((0.0, 1.0, 100, float("nan"), 5, 50), True),
        ((0.0, 1.0, 100, 1.0, 0, 50), True),       # no support points (Omni3D's lidar_pts)
        ((0.0, 1.0, 100, 1.0, 5, 0), True),        # no mask pixels
    ]
    vals = np.array([r for r, _ in rows], float)
    g = {"truncation": vals[:, 0], "visibility": vals[:, 1],
         "bbox2d_proj": np.column_stack([np.zeros(len(rows)), np.full(len(rows), 10.0), np.full(len(rows), 50.0),
                                         10.0 + vals[:, 2]]),
         "image_height": np.full(len(rows), H), "dimensions": np.column_stack([vals[:, 3], np.ones((len(rows), 2))]),
         "support_points": vals[:, 4].astype(int), "segmentation_pts": vals[:, 5].astype(int)}
    assert ev.omni3d_ignore(g).tolist() == [want for _, want in rows]
    assert ev.omni3d_ignore(g, truncation_thres=0.99)[1] == np.False_


# ---------------------------------------------------------------------------- metric behaviour
def test_metrics_json_has_every_key(gt):
    m = ev.evaluate(gt, _clean(gt, 1.0))
    for key in AP_KEYS + NHD_KEYS:
        assert set(m[key]) >= {"macro", "micro", "per_class"}
        assert set(m[key]["per_class"]) == set(schema.SPECIES)
    for key in NHD_KEYS:
        for block in [m[key]["macro"], m[key]["micro"], *m[key]["per_class"].values()]:
            assert set(block) == {"overall", "xy", "z", "dims", "pose", "depth_share"}
    assert 0.3 <= m["rel_ap3d"]["scale"] <= 3.0
    json.dumps(m, allow_nan=False)  # JSON-ready


def test_perfect_predictor_scores_100_and_nhd_0(gt):
    m = ev.evaluate(gt, _perfect(gt), ap_bev_protocol="both")
    present = {schema.SPECIES[c] for c in np.unique(gt["category_id"] - 1000)}
    for key in AP_KEYS + COCO_BEV_KEYS:
        assert m[key]["macro"] == pytest.approx(100.0), key
        assert m[key]["micro"] == pytest.approx(100.0), key
        for name, value in m[key]["per_class"].items():
            assert value == (pytest.approx(100.0) if name in present else None), (key, name)
    for key in NHD_KEYS:
        for block in (m[key]["macro"], m[key]["micro"]):
            assert all(v == pytest.approx(0.0, abs=1e-9) for v in block.values()), key
    assert m["nhd_hungarian"]["n_pairs"]["micro"] == len(gt["image_id"])
    assert m["rel_ap3d"]["scale"] == pytest.approx(1.0)


def test_predictions_a_tiny_rotation_off_the_ground_truth_score_100(gt):
    """Issue 8.1: the same boxes turned by 1e-5 rad (or rotations rounded to 6 decimals, as text
    files do) have 3D IoU 1 - O(1e-5); the old face merging scored such a file AP-3D 62."""
    from scipy.spatial.transform import Rotation

    rng = np.random.default_rng(8)
    preds = _perfect(gt)
    axis = rng.normal(size=(len(preds["pose"]), 3))
    axis *= 1e-5 / np.linalg.norm(axis, axis=1, keepdims=True)
    turned = dict(preds, pose=preds["pose"] @ Rotation.from_rotvec(axis).as_matrix())
    rounded = dict(preds, pose=np.round(preds["pose"], 6))
    for p in (turned, rounded):
        m = ev.evaluate(gt, p)
        for key in ("ap3d@0.25", "ap3d", "rel_ap3d", "ap_bev_voc11@0.25", "ap_bev_voc11@0.50"):
            assert m[key]["micro"] == pytest.approx(100.0), key
            assert m[key]["macro"] == pytest.approx(100.0), key
    from benchwright.evaluation import iou as ioum
    g = (gt["center_cam"], gt["dimensions"], gt["R_cam"])
    for p in (turned, rounded):
        v = ioum.iou_3d_pairs(*g, p["center_cam"], p["dimensions"], p["pose"])
        assert v.min() > 0.999, v.min()


def test_shuffled_labels_lower_class_aware_ap_only(gt):
    perfect = _perfect(gt)
    shuffled = dict(perfect)
    rng = np.random.default_rng(0)
    shuffled["category_id"] = rng.permutation(perfect["category_id"])
    m = ev.evaluate(gt, shuffled, ap_bev_protocol="both")
    for key in ("ap2d@0.50", "ap_bev@0.50", "ap3d", "rel_ap3d"):
        assert m[key]["micro"] < 90.0, key
        assert m[key]["macro"] < 90.0, key
    assert m["ap_bev_voc11@0.50"]["macro"] < 90.0
    # The class-agnostic APs do not look at labels (the authors' AP-BEV micro matches across species).
    assert m["ap2d_agnostic@0.50"]["micro"] == pytest.approx(100.0)
    assert m["ap_bev_voc11@0.50"]["micro"] == pytest.approx(100.0)


def test_more_jitter_lowers_ap_and_raises_nhd(gt):
    levels = [0.0, 0.3, 0.7, 1.5, 3.0]
    runs = [ev.evaluate(gt, _clean(gt, lv), ap_bev_protocol="both") for lv in levels]
    for key in ("ap2d_agnostic@0.75", "ap_bev_voc11@0.25", "ap_bev_voc11@0.50", "ap_bev@0.25", "ap_bev@0.50",
                "ap3d@0.25", "ap3d"):
        for agg in ("micro", "macro"):
            vals = [r[key][agg] for r in runs]
            assert all(a >= b for a, b in zip(vals, vals[1:])), (key, agg, vals)
            assert vals[0] == pytest.approx(100.0) and vals[-1] < 50.0, (key, agg, vals)
    # NHD is measured on the pairs that still match in 2D (IoU >= 0.75): compare the first four.
    for key in NHD_KEYS:
        vals = [r[key]["micro"]["overall"] for r in runs[:4]]
        assert all(a < b for a, b in zip(vals, vals[1:])), (key, vals)
        assert vals[0] == pytest.approx(0.0, abs=1e-9)


def test_rel_ap3d_recovers_a_global_scale(gt):
    preds = _perfect(gt)
    preds["center_cam"] = preds["center_cam"] / 1.6
    preds["dimensions"] = preds["dimensions"] / 1.6
    m = ev.evaluate(gt, preds)
    assert m["rel_ap3d"]["scale"] == pytest.approx(1.6, abs=0.051)
    assert m["rel_ap3d"]["macro"] == pytest.approx(100.0)
    assert m["ap3d"]["macro"] < 5.0  # without the scale the boxes sit at the wrong depth
    curve = m["rel_ap3d"]["search"]["mean_best_iou"]
    assert int(np.argmax(curve)) == 13 and max(curve) == pytest.approx(1.0)


def _one_box_case(pred_center=None, pred_dims=None, pred_R=None, pred_box=None):
    K = np.array([[1000.0, 0, 960], [0, 1000, 540], [0, 0, 1]])
    c = np.array([[0.1, 0.05, 1.0]])
    d = np.array([[0.1, 0.15, 0.3]])
    R = geometry.rotation_from_ypr([[0.4, 0.3, 0.1]])
    corners = geometry.corners(c, d, R)
    uv = corners[0] @ K.T
    uv = uv[:, :2] / uv[:, 2:]
    box = np.r_[uv.min(0), uv.max(0)][None]
    gt = {"image_id": np.array([7]), "category_id": np.array([1002]), "bbox2d_tight": box,
          "bbox2d_proj": box, "center_cam": c, "dimensions": d, "R_cam": R}
    preds = {"image_id": np.array([7]), "category_id": np.array([1002]), "score": np.array([0.9]),
             "bbox": box if pred_box is None else pred_box,
             "center_cam": c if pred_center is None else pred_center,
             "dimensions": d if pred_dims is None else pred_dims, "pose": R if pred_R is None else pred_R}
    return gt, preds, corners[0]


def test_nhd_hand_computed_depth_error():
    dz = 0.05
    gt, preds, corners = _one_box_case(pred_center=np.array([[0.1, 0.05, 1.0 + dz]]))
    m = ev.evaluate(gt, preds)
    diag = np.linalg.norm(corners.max(0) - corners.min(0))
    # Every corner moves by dz and the Hungarian assignment is the identity: 8 dz / diagonal.
    hung = m["nhd_hungarian"]["per_class"]["elephant"]
    assert hung["overall"] == pytest.approx(8 * dz / diag)
    assert hung["z"] == pytest.approx(8 * dz / diag)
    assert hung["xy"] == hung["dims"] == hung["pose"] == pytest.approx(0.0)
    assert hung["depth_share"] == pytest.approx(1.0)
    # Hausdorff: every corner is dz from its twin and no closer corner exists; both diagonals equal.
    assert m["nhd_hausdorff"]["micro"]["overall"] == pytest.approx(dz / diag)
    assert m["nhd_hungarian"]["macro"] == m["nhd_hungarian"]["per_class"]["elephant"]
    assert m["nhd_hungarian"]["per_class"]["giraffe"]["overall"] is None


def test_nhd_uses_the_hungarian_assignment_not_the_corner_order():
    # The same cuboid described with a rotation of 180 deg about its own y axis: identical corners
    # in a different order. NHD (Hungarian) is 0; a corner-by-corner distance would not be.
    gt, preds, corners = _one_box_case()
    flipped = gt["R_cam"] @ geometry.yaw_only_rotation([np.pi])
    preds["pose"] = flipped
    pred_corners = geometry.corners(gt["center_cam"], gt["dimensions"], flipped)[0]
    assert np.linalg.norm(pred_corners - corners, axis=1).sum() > 0.1
    m = ev.evaluate(gt, preds)
    assert m["nhd_hungarian"]["micro"]["overall"] == pytest.approx(0.0, abs=1e-9)
    assert m["nhd_hungarian"]["micro"]["pose"] == pytest.approx(0.0, abs=1e-9)
    assert m["ap3d"]["micro"] == pytest.approx(100.0)


def test_nhd_only_on_pairs_matched_at_2d_iou_075():
    gt, preds, _ = _one_box_case(pred_center=np.array([[0.1, 0.05, 1.2]]))
    box = gt["bbox2d_proj"][0]
    w = box[2] - box[0]
    shifted = box + [0.2 * w, 0, 0.2 * w, 0]  # IoU = 0.8 / 1.2 = 0.667 < 0.75
    preds["bbox"] = shifted[None]
    m = ev.evaluate(gt, preds)
    assert m["nhd_hungarian"]["n_pairs"]["micro"] == 0
    assert m["nhd_hungarian"]["micro"]["overall"] is None
    assert m["ap2d@0.50"]["micro"] == pytest.approx(100.0)


def test_micro_macro_and_classes_without_gt():
    # Two species. Giraffe: 1 GT, found. Elephant: 2 GT, one found, plus a higher-scored FP.
    gt, preds, _ = _one_box_case()
    one = {k: np.repeat(v, 3, axis=0) for k, v in gt.items()}
    one["image_id"] = np.array([1, 2, 3])
    one["category_id"] = np.array([1000, 1002, 1002])
    p = {k: np.repeat(v, 3, axis=0) for k, v in preds.items()}
    p["image_id"] = np.array([1, 2, 4])  # image 4 has no GT: a false positive
    p["category_id"] = np.array([1000, 1002, 1002])
    p["score"] = np.array([0.5, 0.6, 0.9])
    m = ev.evaluate(one, p)
    # Elephant ranking: FP (0.9), TP (0.6); 2 GT. Precision 0, 1/2 at recall 0, 1/2; envelope
    # 1/2 up to recall 0.5 (51 points of 101), then 0: AP = 51 * 0.5 / 101.
    elephant = 51 * 0.5 / 101 * 100
    assert m["ap3d"]["per_class"]["elephant"] == pytest.approx(elephant)
    assert m["ap3d"]["per_class"]["giraffe"] == pytest.approx(100.0)
    assert m["ap3d"]["per_class"]["rhino"] is None
    assert m["ap3d"]["macro"] == pytest.approx((100.0 + elephant) / 2)
    # Micro: FP (0.9), TP (0.6), TP (0.5) against 3 GT: precision 0, 1/2, 2/3 at recall 0, 1/3,
    # 2/3: envelope 2/3 for r <= 0.66 (67 points), 0 after: 67 * 2/3 / 101.
    assert m["ap3d"]["micro"] == pytest.approx(67 * (2 / 3) / 101 * 100)


def test_tied_scores_across_images_rank_in_image_order():
    """Issue 8.2: equal scores in different images rank by image id (as COCOeval), not by file order."""
    gt, preds, _ = _one_box_case()
    two = {k: np.repeat(v, 2, axis=0) for k, v in gt.items()}
    two["image_id"] = np.array([3, 5])
    p = {k: np.repeat(v, 2, axis=0) for k, v in preds.items()}
    p["image_id"] = np.array([3, 5])
    p["score"] = np.array([0.5, 0.5])
    p["center_cam"] = p["center_cam"] * np.array([[1.0], [3.0]])  # image 5's box is far off: a 3D FP
    # Image 3 first: TP then FP, recall 1/2 at precision 1 -> 51 points of 101 at 1.
    want = 51 / 101 * 100
    for order in ([0, 1], [1, 0]):
        m = ev.evaluate(two, {k: v[order] for k, v in p.items()})
        assert m["ap3d"]["micro"] == pytest.approx(want)
        assert m["ap3d@0.25"]["micro"] == pytest.approx(want)
    # The FP in the lower image id ranks first: precision 0 then 1/2 -> 51 points at 1/2.
    p["image_id"] = np.array([5, 3])
    m = ev.evaluate({**two, "image_id": np.array([5, 3])}, p)
    assert m["ap3d"]["micro"] == pytest.approx(want / 2)


def test_shuffled_prediction_file_changes_no_metric(tmp_path, gt):
    """Issue 8.2: the same predictions in any order (entries and instances) give identical metrics."""
    rng = np.random.default_rng(12)
    preds = jitter_predictions(gt, 1.0, seed=4)
    preds["score"] = np.round(preds["score"], 1)  # many ties, within and across images
    # exact duplicates and same-score twins in one image, differing only in the box
    twin = {k: v[:40].copy() for k, v in preds.items()}
    twin["center_cam"] = twin["center_cam"] * 1.01
    preds = {k: np.concatenate([preds[k], twin[k], preds[k][:10]]) for k in preds}
    texts = set()
    for trial in range(4):
        order = np.arange(len(preds["score"])) if trial == 0 else rng.permutation(len(preds["score"]))
        path = tmp_path / f"preds{trial}.json"
        _write_json_preds(path, {k: v[order] for k, v in preds.items()})
        m = ev.evaluate(gt, ev.load_predictions(path))
        texts.add(json.dumps(m, sort_keys=True, allow_nan=False))
    assert len(texts) == 1
    m = json.loads(texts.pop())
    assert 5.0 < m["ap3d"]["micro"] < 95.0 and 5.0 < m["ap2d_agnostic@0.75"]["micro"] < 95.0  # not trivial


def test_max_dets_keeps_the_best_scored_per_image_and_class():
    gt, preds, _ = _one_box_case()
    p = {k: np.repeat(v, 3, axis=0) for k, v in preds.items()}
    p["score"] = np.array([0.2, 0.9, 0.5])
    m = ev.evaluate(gt, p, max_dets=1)
    assert m["meta"]["n_pred_evaluated"] == 1
    assert m["ap3d"]["micro"] == pytest.approx(100.0)  # the two duplicates are not counted as FP
    m = ev.evaluate(gt, p)
    assert m["ap3d"]["micro"] == pytest.approx(100.0)  # duplicates rank below the TP
    p["score"] = np.array([0.9, 0.2, 0.5])
    assert ev.evaluate(gt, p)["ap3d"]["micro"] == pytest.approx(100.0)


def test_ap_bev_protocol_option(gt):
    preds = _clean(gt, 0.7)
    voc = ev.evaluate(gt, preds)  # default: the WildBox authors' protocol
    coco = ev.evaluate(gt, preds, ap_bev_protocol="coco101")
    both = ev.evaluate(gt, preds, ap_bev_protocol="both")
    voc_keys = {"ap_bev_voc11@0.25", "ap_bev_voc11@0.50"}
    coco_keys = {"ap_bev@0.25", "ap_bev@0.50", "ap_bev@0.25_by_depth"}
    assert voc_keys <= set(voc) and not coco_keys & set(voc)
    assert coco_keys <= set(coco) and not voc_keys & set(coco)
    assert all(both[k] == voc[k] for k in voc_keys) and all(both[k] == coco[k] for k in coco_keys)
    assert voc["ap_bev_voc11@0.50"]["macro"] != pytest.approx(coco["ap_bev@0.50"]["macro"])
    for key in ("ap2d@0.50", "ap3d", "rel_ap3d", "ap3d_by_depth", "nhd_hungarian"):
        assert voc[key] == coco[key], key
    assert voc["meta"]["protocol"]["ap_bev_protocol"] == "voc11"
    assert "bev_ap_eval.py" in voc["meta"]["protocol"]["ap_bev_voc11"]
    # ap_bev_only (the learned head's fold selection): the same AP-BEV and meta, in either protocol, nothing else
    for protocol, full, keys in (("voc11", voc, voc_keys), ("both", both, voc_keys | coco_keys)):
        assert ev.evaluate(gt, preds, ap_bev_protocol=protocol, ap_bev_only=True) == \
            {k: full[k] for k in (*sorted(keys), "meta")}
    with pytest.raises(ValueError, match="AP-BEV protocol"):
        ev.evaluate(gt, preds, ap_bev_protocol="voc07")
    with pytest.raises(ValueError):
        ev.evaluate(gt, preds, ap_method="voc7")


def _authors_bev_ap(gt, preds, t):
    """An independent loop over the protocol of the WildBox authors' ``bev_ap_eval.py``: shapely
    footprints, per species every prediction by descending score takes the best unmatched GT of its
    image (counted if IoU >= t), VOC 11-point with literal ``recall >= t``; macro over species
    with GT; micro with all species pooled and matched class-agnostically. Fractions."""
    from shapely.geometry import MultiPoint

    def hulls(c, d, R):
        return [MultiPoint([tuple(v) for v in k[:, [0, 2]]]).convex_hull for k in geometry.corners(c, d, R)]

    g_poly = hulls(gt["center_cam"], gt["dimensions"], gt["R_cam"])
    p_poly = hulls(preds["center_cam"], preds["dimensions"], preds["pose"])

    def iou(a, b):
        inter = a.intersection(b).area
        return inter / (a.area + b.area - inter)

    def ap(pred_idx, gt_idx):
        if len(gt_idx) == 0:
            return None
        taken = set()
        tp = []
        for i in sorted(pred_idx, key=lambda i: -preds["score"][i]):
            cands = [j for j in gt_idx if gt["image_id"][j] == preds["image_id"][i] and j not in taken]
            best_j, best = -1, -1.0
            for j in cands:
                v = iou(p_poly[i], g_poly[j])
                if v > best:
                    best_j, best = j, v
            tp.append(best_j >= 0 and best >= t)
            if tp[-1]:
                taken.add(best_j)
        tpc = np.cumsum(tp)
        recall = tpc / len(gt_idx)
        precision = tpc / np.arange(1, len(tp) + 1)
        return sum(precision[recall >= r].max() if (recall >= r).any() else 0.0
                   for r in np.arange(0.0, 1.1, 0.1)) / 11

    per = [ap(np.flatnonzero(preds["category_id"] == 1000 + c), np.flatnonzero(gt["category_id"] == 1000 + c))
           for c in range(len(schema.SPECIES))]
    have = [v for v in per if v is not None]
    return per, float(np.mean(have)), ap(np.arange(len(preds["score"])), np.arange(len(gt["image_id"])))


def test_ap_bev_voc11_is_the_authors_protocol(gt):
    """Against an independent loop: same per-species, macro and (class-agnostic) micro APs, with
    every prediction counted (max_dets does not apply) -- duplicates, misses, wrong species."""
    keep = np.isin(gt["image_id"], np.unique(gt["image_id"])[:80])
    small = {k: v[keep] for k, v in gt.items()}
    preds = jitter_predictions(small, 0.5, seed=7, miss=0.15, false_pos=0.2, wrong_class=0.1)
    dup = {k: v[:60] for k, v in _clean(small, 0.2, seed=8).items()}
    dup["score"] = dup["score"] * 0.5
    preds = {k: np.concatenate([preds[k], dup[k]]) for k in preds}
    m = ev.evaluate(small, preds, max_dets=1)
    for t in (0.25, 0.50):
        per, macro, micro = _authors_bev_ap(small, preds, t)
        got = m[f"ap_bev_voc11@{t:.2f}"]
        assert got["macro"] == pytest.approx(100 * macro, abs=1e-9)
        assert got["micro"] == pytest.approx(100 * micro, abs=1e-9)
        for c, name in enumerate(schema.SPECIES):
            assert got["per_class"][name] == (None if per[c] is None else pytest.approx(100 * per[c], abs=1e-9))
        assert 5 < got["macro"] < 95 and got["micro"] != pytest.approx(got["macro"])


def test_non_orthonormal_pose_is_projected_to_so3():
    gt, preds, _ = _one_box_case()
    preds["pose"] = preds["pose"] * 1.01  # scaled rotation: the nearest rotation is the GT's
    m = ev.evaluate(gt, preds)
    assert m["ap3d"]["micro"] == pytest.approx(100.0)


# -------------------------------------------------------------------------------- file formats
def _write_json_preds(path, preds):
    entries = {}
    for k in range(len(preds["image_id"])):
        x1, y1, x2, y2 = preds["bbox"][k]
        entries.setdefault(int(preds["image_id"][k]), []).append({
            "bbox": [x1, y1, x2 - x1, y2 - y1], "score": float(preds["score"][k]),
            "category_id": int(preds["category_id"][k]), "center_cam": preds["center_cam"][k].tolist(),
            "dimensions": preds["dimensions"][k].tolist(), "pose": preds["pose"][k].tolist()})
    path.write_text(json.dumps([{"image_id": i, "instances": v} for i, v in entries.items()]))


def test_json_predictions_round_trip(tmp_path, gt):
    preds = _clean(gt, 0.5)
    path = tmp_path / "preds.json"
    _write_json_preds(path, preds)
    back = ev.load_predictions(path)
    order = np.lexsort((preds["score"], preds["image_id"]))
    back_order = np.lexsort((back["score"], back["image_id"]))
    for key in ("image_id", "category_id", "score", "bbox", "center_cam", "dimensions", "pose"):
        assert np.allclose(back[key][back_order], preds[key][order]), key
    assert ev.evaluate(gt, back)["ap3d"] == ev.evaluate(gt, preds)["ap3d"]


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d[1]["instances"][0].pop("score"), "missing 'score'"),
    (lambda d: d[1]["instances"][0].__setitem__("pose", [[1, 0, 0], [0, 1, 0]]), "'pose' must be a list of shape [3, 3]"),
    (lambda d: d[1]["instances"][0].__setitem__("category_id", 2), "contiguous model id"),
    (lambda d: d[1]["instances"][0].__setitem__("category_id", 1017), "not a WildBox category"),
    (lambda d: d[1]["instances"][0].__setitem__("bbox", [1, 2, -3, 4]), "w, h >= 0"),
    (lambda d: d[1]["instances"][0].__setitem__("center_cam", [0, "x", 1]), "'center_cam' must be a number, got 'x'"),
    (lambda d: d[1]["instances"][0].__setitem__("dimensions", [0.1, float("nan"), 0.2]), "'dimensions' must be finite"),
    # issue 25: numpy reads "0.5" and true as numbers; they were scored silently
    (lambda d: d[1]["instances"][0].__setitem__("score", "0.5"), "'score' must be a number, got '0.5' (a string)"),
    (lambda d: d[1]["instances"][0].__setitem__("score", True), "'score' must be a number, got True (a boolean)"),
    (lambda d: d[1]["instances"][0].__setitem__("category_id", True), "'category_id' must be an integer, got True"),
    (lambda d: d[1]["instances"][0].__setitem__("score", 10 ** 400), "'score' an integer of 401 digits is too large"),
    (lambda d: d[1]["instances"][0].__setitem__("bbox", {"x": 1}), "'bbox' must be a list of shape [4], got {'x': 1}"),
])
def test_malformed_json_entries_name_file_and_entry(tmp_path, mutate, message):
    gt, preds, _ = _one_box_case()
    p = {k: np.repeat(v, 2, axis=0) for k, v in preds.items()}
    p["image_id"] = np.array([5, 6])
    path = tmp_path / "preds.json"
    _write_json_preds(path, p)
    data = json.loads(path.read_text())
    mutate(data)
    path.write_text(json.dumps(data))
    with pytest.raises(RecordError) as err:
        ev.load_predictions(path)
    assert err.value.locator == f"{path}#[1].instances[0] (image_id=6)"
    assert message in err.value.reason
    assert "preds.json#[1].instances[0]" in str(err.value)


def test_malformed_json_structure(tmp_path):
    path = tmp_path / "p.json"
    path.write_text('{"image_id": 1}')
    with pytest.raises(RecordError, match="expected a JSON list"):
        ev.load_predictions(path)
    path.write_text('[{"image_id": 1}]')
    with pytest.raises(RecordError, match=r"p.json#\[0\]: missing 'instances'"):
        ev.load_predictions(path)
    path.write_text('[{"image_id": "a", "instances": []}]')
    with pytest.raises(RecordError, match="'image_id' must be an integer"):
        ev.load_predictions(path)
    path.write_text('[{"image_id": 1, "instances": [}')
    with pytest.raises(RecordError, match="not valid JSON"):
        ev.load_predictions(path)
    path.write_text("[]")
    assert len(ev.load_predictions(path)["score"]) == 0


def test_kitti_result_folder_predictions(tmp_path):
    gt, preds, _ = _one_box_case()
    c, d, R = gt["center_cam"][0], gt["dimensions"][0], geometry.yaw_only_rotation([0.7])[0]
    gt["R_cam"] = R[None]
    x1, y1, x2, y2 = gt["bbox2d_proj"][0]
    W, H, L = d
    line = (f"elephant -1 -1 0 {x1} {y1} {x2} {y2} {H} {W} {L} {c[0]} {c[1] + H / 2} {c[2]} 0.7 0.93\n")
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "000007.txt").write_text(line + line.replace("elephant", "Plains_Zebra").replace("0.93", "0.10"))
    (folder / "000008.txt").write_text("")
    p = ev.load_predictions(folder)
    assert p["image_id"].tolist() == [7, 7]
    assert p["category_id"].tolist() == [1002, 1003]
    assert np.allclose(p["center_cam"][0], c) and np.allclose(p["dimensions"][0], d)
    assert np.allclose(p["pose"][0], R) and p["score"].tolist() == [0.93, 0.10]
    assert ev.evaluate(gt, p)["ap3d"]["per_class"]["elephant"] == pytest.approx(100.0)
    # A frame map (the dataset's KITTI export) turns file names into image ids.
    assert ev.load_predictions(folder, {"000007": 42, "000008": 43})["image_id"].tolist() == [42, 42]
    (folder / "000009.txt").write_text(line.replace(" 0.93", ""))
    with pytest.raises(RecordError, match=r"results/000009.txt:1: a prediction needs 16 columns"):
        ev.load_predictions(folder)
    (folder / "000009.txt").write_text(line.replace("elephant", "Car"))
    with pytest.raises(RecordError, match=r"results/000009.txt:1: type 'Car' is not a WildBox species"):
        ev.load_predictions(folder)
    (folder / "000009.txt").unlink()
    (folder / "frame_a.txt").write_text(line)
    with pytest.raises(RecordError, match="frame_a.txt"):
        ev.load_predictions(folder)


# ------------------------------------------------------------------------- dataset folder + CLI
def _boxes_table(g, split):
    n = len(g["image_id"])
    ypr = geometry.euler_yaw_pitch_roll(g["R_cam"])
    cls = (g["category_id"] - 1000).astype(int)
    cols = {
        "box_id": [f"f{i}#{k}" for k, i in enumerate(g["image_id"])],
        "frame_id": [f"v/s/frame_{i}" for i in g["image_id"]],
        "image_id": g["image_id"].tolist(), "video_id": ["v"] * n, "segment_id": ["v/s"] * n,
        "frame_index": [int(i) % 1000 for i in g["image_id"]], "track_id": list(range(n)),
        "species": cls.tolist(), "category_id": g["category_id"].tolist(),
        "coarse_class": [schema.COARSE_CLASSES.index(schema.COARSE_OF[schema.SPECIES[c]]) for c in cls],
        "center_cam": g["center_cam"].tolist(), "dimensions": g["dimensions"].tolist(),
        "R_cam": g["R_cam"].tolist(), "corners_cam": geometry.corners(g["center_cam"], g["dimensions"], g["R_cam"]).tolist(),
        "yaw_pitch_roll": ypr.tolist(), "depth": g["center_cam"][:, 2].tolist(),
        "bbox2d_tight": g["bbox2d_tight"].tolist(), "bbox2d_proj": g["bbox2d_proj"].tolist(),
        "bbox_source": g["bbox_source"].tolist() if "bbox_source" in g else [0] * n,
        "truncation": g["truncation"].tolist() if "truncation" in g else [0.0] * n,
        "visibility": g["visibility"].tolist() if "visibility" in g else [1.0] * n,
        "segmentation_pts": g["segmentation_pts"].tolist() if "segmentation_pts" in g else [100] * n,
        "support_points": [10] * n,
        "kitti_representable": [False] * n, "kitti_reason": ["pitch"] * n,
        "K": [[[1500.0, 0, 960], [0, 1500, 540], [0, 0, 1]]] * n,
        "image_width": [1920] * n, "image_height": [1080] * n, "scale_factor": [0.02] * n,
        "split": [split] * n,
        "bev_footprint": [h.tolist() for h in geometry.bev_footprint(
            geometry.corners(g["center_cam"], g["dimensions"], g["R_cam"]))],
    }
    arrow_schema = schema.BOXES.arrow_schema
    cols = {name: cols.get(name, [None] * n) for name in arrow_schema.names}  # columns added later: null
    return pa.Table.from_pydict(cols, schema=arrow_schema)


def test_load_ground_truth_from_parquet_and_evaluate_paths(tmp_path, gt):
    root = tmp_path / "wildbox"
    (root / "boxes").mkdir(parents=True)
    ids = np.unique(gt["image_id"])
    val, train = np.isin(gt["image_id"], ids[:60]), np.isin(gt["image_id"], ids[60:66])
    small = {k: v[val] for k, v in gt.items()}
    pq.write_table(_boxes_table(small, "validation"), root / "boxes" / "validation-00000-of-00001.parquet")
    other = {k: v[train] for k, v in gt.items()}
    pq.write_table(_boxes_table(other, "train"), root / "boxes" / "train-00000-of-00001.parquet")
    loaded = ev.load_ground_truth(root, "validation")
    assert len(loaded["image_id"]) == val.sum() > 200
    for key in ("center_cam", "dimensions", "R_cam", "bbox2d_tight", "bbox2d_proj"):
        assert np.allclose(loaded[key], small[key]), key
    assert loaded["R_cam"].shape == (val.sum(), 3, 3) and loaded["corners_cam"].shape == (val.sum(), 8, 3)
    assert np.array_equal(loaded["image_ids"], np.unique(small["image_id"]))
    preds = _perfect(small)
    # A prediction on a train image is outside the split: dropped and counted, not a FP.
    train_pred = _perfect(other)
    both = {k: np.concatenate([preds[k], train_pred[k]]) for k in preds}
    path = tmp_path / "preds.json"
    _write_json_preds(path, both)
    metrics = ev.evaluate_paths(root, path, "validation")
    assert metrics["meta"]["n_pred_outside_split"] == len(train_pred["image_id"])
    assert metrics["ap3d"]["micro"] == pytest.approx(100.0)
    out = tmp_path / "m" / "metrics.json"
    assert ev.run_cli(["--gt", str(root), "--pred", str(path), "--out", str(out)]) == 0
    written = json.loads(out.read_text())
    assert set(written) >= set(AP_KEYS + NHD_KEYS) | {"meta"}
    assert not set(COCO_BEV_KEYS) & set(written)
    assert ev.run_cli(["--gt", str(root), "--pred", str(path), "--out", str(out), "--ap-bev-protocol", "coco101"]) == 0
    written = json.loads(out.read_text())
    assert set(written) >= set(COCO_BEV_KEYS) and "ap_bev_voc11@0.50" not in written
    assert written["ap_bev@0.50"]["macro"] == pytest.approx(100.0)
    assert written["ap2d@0.50"]["macro"] == pytest.approx(100.0)
    with pytest.raises(Exception, match="no validation"):
        ev.load_ground_truth(tmp_path / "nothing", "validation")


def test_cli_omni3d_ignore_reads_truncation_and_visibility(tmp_path, gt):
    root = tmp_path / "wildbox"
    (root / "boxes").mkdir(parents=True)
    n = len(gt["image_id"])
    cut = np.random.default_rng(2).random(n) < 0.25
    g = dict(gt, truncation=np.where(cut, 0.5, 0.0), visibility=np.ones(n))
    pq.write_table(_boxes_table(g, "validation"), root / "boxes" / "validation-00000-of-00001.parquet")
    path = tmp_path / "preds.json"
    _write_json_preds(path, {k: v[~cut] for k, v in _perfect(gt).items()})  # no predictions for the cut-off ones
    for mode, want_micro in (("none", None), ("omni3d", 100.0)):
        out = tmp_path / f"{mode}.json"
        assert ev.run_cli(["--gt", str(root), "--pred", str(path), "--out", str(out), "--ignore", mode]) == 0
        m = json.loads(out.read_text())
        assert m["meta"]["protocol"]["ignore"] == mode
        if want_micro is None:
            assert m["ap3d"]["micro"] < 90.0 and m["meta"]["n_gt_ignored"] == 0
        else:
            assert m["ap3d"]["micro"] == pytest.approx(want_micro)
            assert m["meta"]["n_gt_ignored"] >= cut.sum()


def test_omni3d_ignore_keeps_boxes_without_a_mask_as_the_export_does(tmp_path, gt):
    """A box whose 2D box is not the SAM3 mask's has no mask pixels to count: the export writes -1
    (unavailable) there and Cube R-CNN keeps it; the evaluator's Omni3D filter must keep it too.
    A mask with 0 pixels is ignored by both."""
    root = tmp_path / "wildbox"
    (root / "boxes").mkdir(parents=True)
    n = len(gt["image_id"])
    sam3, vggt = schema.BBOX_SOURCES.index("sam3"), schema.BBOX_SOURCES.index("vggt")
    source = np.where(np.arange(n) % 2 == 0, sam3, vggt)
    g = dict(gt, bbox_source=source, segmentation_pts=np.zeros(n, int), truncation=np.zeros(n), visibility=np.ones(n))
    pq.write_table(_boxes_table(g, "validation"), root / "boxes" / "validation-00000-of-00001.parquet")
    loaded = ev.load_ground_truth(root, "validation")
    assert loaded["segmentation_pts"].tolist() == np.where(source == sam3, 0, -1).tolist()
    ignored = ev.omni3d_ignore(loaded)
    assert ignored[source == sam3].all()
    assert np.array_equal(ignored[source == vggt], ev.omni3d_ignore({**loaded, "segmentation_pts": np.ones(n)})[source == vggt])


def test_cli_reports_bad_input(tmp_path, capsys, gt):
    root = tmp_path / "wildbox"
    (root / "boxes").mkdir(parents=True)
    pq.write_table(_boxes_table({k: v[:5] for k, v in gt.items()}, "validation"),
                   root / "boxes" / "validation-00000-of-00001.parquet")
    path = tmp_path / "bad.json"
    path.write_text('[{"image_id": 1, "instances": [{"bbox": [0, 0, 1, 1]}]}]')
    assert ev.run_cli(["--gt", str(root), "--pred", str(path)]) == 2
    err = capsys.readouterr().err
    assert "bad.json#[0].instances[0] (image_id=1)" in err and "missing 'score'" in err


def test_empty_or_foreign_predictions_score_zero_with_a_warning(tmp_path, gt, capsys):
    """Issue 25 item 6: ``[]``, an empty KITTI result folder and predictions all outside the split raised
    'cannot reshape array of size 0'; they score 0 with a warning, printed by the CLI."""
    root = tmp_path / "wildbox"
    (root / "boxes").mkdir(parents=True)
    inside = np.isin(gt["image_id"], np.unique(gt["image_id"])[:10])
    pq.write_table(_boxes_table({k: v[inside] for k, v in gt.items()}, "validation"),
                   root / "boxes" / "validation-00000-of-00001.parquet")
    empty_json, empty_dir, outside = tmp_path / "empty.json", tmp_path / "results", tmp_path / "outside.json"
    empty_json.write_text("[]")
    empty_dir.mkdir()
    _write_json_preds(outside, {k: v[~inside][:5] for k, v in _perfect(gt).items()})
    for pred, warning in ((empty_json, "no predictions: every AP is 0"), (empty_dir, "no predictions: every AP is 0"),
                          (outside, "all 5 predictions are on images outside the split: every AP is 0")):
        metrics = ev.evaluate_paths(root, pred, "validation")
        assert metrics["meta"]["warnings"] == [warning]
        assert all(metrics[k]["macro"] == 0.0 for k in AP_KEYS), pred
        assert ev.run_cli(["--gt", str(root), "--pred", str(pred), "--out", str(tmp_path / "m.json")]) == 0
        assert f"warning: {warning}\n" in capsys.readouterr().err
