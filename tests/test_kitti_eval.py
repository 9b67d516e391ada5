"""KITTI devkit protocol on the real KITTI fixtures, with predictions built by hand.

Fixture ground truth used (label_2, frames 000000-000005):
  Car A  000002  box height 33.26 px  -> ignored for easy (<= 40 px), valid for moderate / hard
  Car B  000003  box height 103.0 px  -> valid everywhere
  Car C  000004  box height 30.49 px  -> valid for moderate / hard
  Car    000001  box height 21.58 px  -> ignored everywhere (<= 25 px)
  Car    000004  box height 20.66 px  -> ignored everywhere
  Pedestrian 000000 (164.9 px) and 000005 (59.9 px) -> valid everywhere
  Cyclist 000001 occluded = 3 -> ignored everywhere, so Cyclist has no valid ground truth.
"""
import shutil

import numpy as np
import pytest

from benchwright.formats import geometry
from benchwright.evaluation import iou
from benchwright.evaluation import kitti as kitti_eval
from benchwright.evaluation import wildbox as ev
from benchwright.formats import kitti

CAR_A = "Car 0.00 0 -1.67 657.39 190.13 700.07 223.39 1.41 1.58 4.36 3.18 2.27 34.38 -1.58"
CAR_A_SHIFTED = "Car 0.00 0 -1.67 657.39 190.13 700.07 223.39 1.41 1.58 4.36 3.18 2.27 35.38 -1.58"
CAR_B = "Car 0.00 0 1.55 614.24 181.78 727.31 284.77 1.57 1.73 4.15 1.00 1.75 13.22 1.62"
CAR_SMALL = "Car 0.00 0 1.85 387.63 181.54 423.81 203.12 1.67 1.87 3.69 -16.53 2.39 58.49 1.57"
FALSE_POS = "Car 0.00 0 0.00 100.00 150.00 200.00 220.00 1.50 1.60 4.00 -10.00 1.80 20.00 0.00"
# Exactly the first DontCare region of frame 000004, with a 3D box far from every car.
IN_DONTCARE = "Car 0.00 0 0.00 402.27 166.69 477.31 197.98 1.50 1.60 4.00 5.00 1.50 15.00 0.00"
PED_0 = "Pedestrian 0.00 0 -0.20 712.40 143.00 810.73 307.92 1.89 0.48 1.20 1.84 1.47 8.41 0.01"
PED_5 = "Pedestrian 0.00 0 1.94 330.06 178.74 360.77 238.64 1.87 0.96 0.65 -8.50 2.07 23.02 1.59"


def _write(folder, frames: dict):
    folder.mkdir(parents=True, exist_ok=True)
    for name, lines in frames.items():
        (folder / f"{name}.txt").write_text("".join(f"{line}\n" for line in lines))
    return folder


@pytest.fixture()
def predictions(tmp_path):
    return _write(tmp_path / "results", {
        "000000": [f"{FALSE_POS} 0.95", f"{PED_0} 0.50"],
        "000001": [f"{CAR_SMALL} 0.80"],        # on an ignored car, itself below the min height
        "000002": [f"{CAR_A_SHIFTED} 0.60"],    # right 2D box, 3D box 1 m too far
        "000003": [f"{CAR_B} 0.90"],
        "000004": [f"{IN_DONTCARE} 0.99"],      # inside a DontCare region; car C is missed
        "000005": [f"{PED_5} 0.70"],
    })


def _ap(result, cls, metric, difficulty):
    entry = result["classes"][cls][metric][difficulty]
    return None if entry is None else (entry["ap11"], entry["ap40"])


def test_shifted_car_falls_below_the_car_threshold_in_3d_only():
    a = kitti.to_canonical(kitti.parse_label_lines(CAR_A)[0][0])
    s = kitti.to_canonical(kitti.parse_label_lines(CAR_A_SHIFTED)[0][0])
    args = (a["center_cam"][None], a["dimensions"][None], a["R_cam"][None],
            s["center_cam"][None], s["dimensions"][None], s["R_cam"][None])
    assert 0.5 < iou.iou_3d_pairs(*args)[0] < 0.7
    assert 0.5 < iou.bev_iou_pairs(*args)[0] < 0.7


def test_kitti_protocol_reproduces_hand_computed_ap(kitti_dir, predictions):
    result = kitti_eval.evaluate_kitti(kitti_dir / "label_2", predictions, kitti_dir / "calib")
    assert result["n_frames"] == 6

    # Car, 2D, moderate. Valid GT: A, B, C (3). Pass 1 (score-greedy matching) finds TPs
    # B (0.90) and A (0.60). getThresholds(n_gt=3): 0.90 is kept (recall 1/3 is the nearest to
    # the first sample, 0), and 0.60 as the last TP: thresholds [0.90, 0.60].
    #   t = 0.90: detections 0.99 (DontCare region: neither TP nor FP), 0.95 (frame 0: FP),
    #             0.90 (B: TP) -> precision 1 / 2. The small car's detection (0.80, 21.6 px)
    #             is ignored (below 25 px) and would not count anyway at this threshold.
    #   t = 0.60: + A (TP); the 0.80 detection is still ignored -> 2 TP, 1 FP -> 2 / 3.
    # Monotone precision over the 41 samples: [2/3, 2/3, 0, ..., 0].
    # AP11 = (p[0] + p[4] + ... + p[40]) / 11 = (2/3) / 11; AP40 = (p[1] + ... + p[40]) / 40 = (2/3) / 40.
    moderate_2d = (100 * (2 / 3) / 11, 100 * (2 / 3) / 40)
    assert _ap(result, "Car", "2d", "moderate") == pytest.approx(moderate_2d)
    # Hard admits the same three cars (no occlusion or truncation in these frames).
    assert _ap(result, "Car", "2d", "hard") == pytest.approx(moderate_2d)
    # Easy: only B is valid; A's detection (33 px < 40) is ignored. TPs [0.90] -> thresholds
    # [0.90]; at 0.90: B TP, frame-0 FP -> precision 1/2 at sample 0 only:
    # AP11 = (1/2) / 11, AP40 = 0.
    easy = (100 * 0.5 / 11, 0.0)
    assert _ap(result, "Car", "2d", "easy") == pytest.approx(easy)

    # BEV and 3D: A's detection overlaps A by < 0.7, so it is a FP and A a FN. TPs [0.90] ->
    # thresholds [0.90]. DontCare regions excuse 2D false positives only (the C++ devkit's BEV / 3D
    # overlap with a DontCare row is 0; mmdetection3d checks them for 2D alone), so the 0.99 detection
    # in the DontCare region, 31 px high, is a FP for moderate and hard: at 0.90 it, the frame-0 FP
    # and B (TP) -> precision 1/3 at sample 0: AP11 = (1/3)/11, AP40 = 0. Easy ignores it (< 40 px):
    # 1/2 as in 2D.
    for metric in ("bev", "3d"):
        assert _ap(result, "Car", metric, "easy") == pytest.approx(easy), metric
        for difficulty in ("moderate", "hard"):
            assert _ap(result, "Car", metric, difficulty) == pytest.approx((100 * (1 / 3) / 11, 0.0)), (metric, difficulty)

    # Pedestrian: both found, no FP. TPs [0.70, 0.50], n_gt = 2 -> thresholds [0.70, 0.50],
    # precision 1 at samples 0 and 1: AP11 = 1/11, AP40 = 1/40 (KITTI's sampling on 2 GT).
    for metric in ("2d", "bev", "3d"):
        for difficulty in ("easy", "moderate", "hard"):
            assert _ap(result, "Pedestrian", metric, difficulty) == pytest.approx((100 / 11, 100 / 40))
            assert result["classes"]["Pedestrian"][metric][difficulty]["n_gt"] == 2
    # Cyclist: its only box is occluded = 3, ignored in every difficulty: no AP.
    assert all(_ap(result, "Cyclist", m, d) is None for m in ("2d", "bev", "3d") for d in ("easy", "moderate", "hard"))
    assert result["classes"]["Car"]["min_overlap"] == {"2d": 0.7, "bev": 0.7, "3d": 0.7}
    assert result["classes"]["Car"]["2d"]["moderate"]["n_gt"] == 3


def test_aos_hand_computed(kitti_dir, predictions):
    # The hand-built detections carry their GT's alpha: every TP has similarity 1, so AOS = AP.
    result = kitti_eval.evaluate_kitti(kitti_dir / "label_2", predictions)
    entry = result["classes"]["Car"]["2d"]["moderate"]
    assert (entry["aos11"], entry["aos40"]) == pytest.approx((entry["ap11"], entry["ap40"]))
    assert "aos11" not in result["classes"]["Car"]["3d"]["moderate"]  # AOS goes with 2D detection only
    # Turn car B's detection by pi/2 (alpha 1.55 -> 3.12): its similarity is (1 + cos(-1.57)) / 2 ~ 0.5.
    # Moderate 2D: t = 0.90: B (TP, 0.5) + the frame-0 FP (0) -> 0.5 / 2 = 0.25; t = 0.60: + A (TP, 1)
    # -> 1.5 / 3 = 0.5. Monotone: [0.5, 0.5]: AOS11 = 0.5 / 11, AOS40 = 0.5 / 40; AP does not change.
    turned = CAR_B.replace(" 1.55 ", " 3.12 ")
    (predictions / "000003.txt").write_text(f"{turned} 0.90\n")
    result = kitti_eval.evaluate_kitti(kitti_dir / "label_2", predictions)
    entry = result["classes"]["Car"]["2d"]["moderate"]
    sim_b = (1 + np.cos(1.55 - 3.12)) / 2
    want = max(sim_b / 2, (sim_b + 1) / 3)
    assert (entry["aos11"], entry["aos40"]) == pytest.approx((100 * want / 11, 100 * want / 40))
    assert (entry["ap11"], entry["ap40"]) == pytest.approx((100 * (2 / 3) / 11, 100 * (2 / 3) / 40))
    # A detection without orientation (alpha -10, the devkit's convention) switches AOS off.
    (predictions / "000003.txt").write_text(f"{CAR_B.replace(' 1.55 ', ' -10 ')} 0.90\n")
    result = kitti_eval.evaluate_kitti(kitti_dir / "label_2", predictions)
    assert "aos11" not in result["classes"]["Car"]["2d"]["moderate"]


def test_line_order_of_a_result_file_changes_nothing(kitti_dir, predictions):
    """Issue 8.2: two detections of car B with the same score and box but different alpha: which
    one takes B decides AOS; it must not be the line order (ties go by the rows' values)."""
    turned = CAR_B.replace(" 1.55 ", " 3.12 ")
    results = []
    for lines in ([f"{CAR_B} 0.90", f"{turned} 0.90"], [f"{turned} 0.90", f"{CAR_B} 0.90"]):
        (predictions / "000003.txt").write_text("".join(f"{line}\n" for line in lines))
        results.append(kitti_eval.evaluate_kitti(kitti_dir / "label_2", predictions))
    assert results[0] == results[1]
    # equal up to alpha, the smaller alpha (B's own, 1.55) ranks first and takes B: AOS = AP
    entry = results[0]["classes"]["Car"]["2d"]["moderate"]
    assert entry["aos11"] == pytest.approx(entry["ap11"])


def test_loose_table_accepts_the_shifted_car(kitti_dir, predictions):
    # With Car at 0.5 for BEV / 3D the shifted detection of A is a TP. Unlike 2D, the detection in the
    # DontCare region is a FP in 3D: t = 0.90: 0.99 FP, 0.95 FP, B TP -> 1/3; t = 0.60: + A TP -> 2/4.
    # Monotone [1/2, 1/2]: AP11 = (1/2)/11, AP40 = (1/2)/40.
    result = kitti_eval.evaluate_kitti(kitti_dir / "label_2", predictions, overlap="loose")
    assert _ap(result, "Car", "3d", "moderate") == pytest.approx((100 * 0.5 / 11, 100 * 0.5 / 40))
    assert _ap(result, "Car", "2d", "moderate") == pytest.approx((100 * (2 / 3) / 11, 100 * (2 / 3) / 40))
    assert result["classes"]["Car"]["min_overlap"]["3d"] == 0.5


def test_without_the_dontcare_region_the_detection_is_a_false_positive(kitti_dir, predictions, tmp_path):
    labels = tmp_path / "labels"
    shutil.copytree(kitti_dir / "label_2", labels)
    text = (labels / "000004.txt").read_text().splitlines()
    (labels / "000004.txt").write_text("".join(line + "\n" for line in text if "402.27" not in line))
    result = kitti_eval.evaluate_kitti(labels, predictions)
    # Moderate 2D: t = 0.90 now has 2 FP (0.99, 0.95) and 1 TP -> 1/3; t = 0.60: 2 TP, 2 FP -> 1/2.
    # Monotone: [1/2, 1/2]: AP11 = (1/2)/11, AP40 = (1/2)/40.
    assert _ap(result, "Car", "2d", "moderate") == pytest.approx((100 * 0.5 / 11, 100 * 0.5 / 40))


def test_neighbour_class_and_strict_threshold(tmp_path):
    car = "Car 0.00 0 0.00 100.00 100.00 200.00 200.00 1.50 1.60 4.00 0.00 1.50 10.00 0.00"
    van = "Van 0.00 0 0.00 400.00 100.00 500.00 200.00 2.00 1.80 5.00 4.00 1.50 10.00 0.00"
    labels = _write(tmp_path / "gt", {"000000": [car, van]})
    # A detection on the Van (class Car, score 0.9) is ignored, not a FP: 1 TP at 0.5 only ->
    # thresholds [0.5] -> precision 1 at sample 0: AP11 = 1/11, AP40 = 0.
    preds = _write(tmp_path / "dt", {"000000": [f"{van.replace('Van', 'Car')} 0.90", f"{car} 0.50"]})
    result = kitti_eval.evaluate_kitti(labels, preds)
    assert _ap(result, "Car", "2d", "easy") == pytest.approx((100 / 11, 0.0))
    # A 2D overlap of exactly 0.7 is not a match (KITTI needs > 0.7): box of width 70 inside 100.
    exact = car.replace("200.00 200.00", "170.00 200.00")
    preds = _write(tmp_path / "dt2", {"000000": [f"{exact} 0.90"]})
    assert _ap(kitti_eval.evaluate_kitti(labels, preds), "Car", "2d", "easy") == pytest.approx((0.0, 0.0))


def test_missing_prediction_files_are_empty_and_bad_rows_are_named(kitti_dir, tmp_path):
    empty = _write(tmp_path / "none", {})
    result = kitti_eval.evaluate_kitti(kitti_dir / "label_2", empty)
    assert _ap(result, "Car", "2d", "moderate") == (0.0, 0.0)
    bad = _write(tmp_path / "bad", {"000003": [CAR_B]})  # 15 columns: no score
    with pytest.raises(Exception, match=r"bad/000003.txt:1: a prediction needs 16 columns"):
        kitti_eval.evaluate_kitti(kitti_dir / "label_2", bad)


def test_evaluate_paths_on_kitti_ground_truth(kitti_dir, predictions, tmp_path):
    out = ev.evaluate_paths(kitti_dir, predictions)
    assert set(out) == {"kitti"}
    assert _ap(out["kitti"], "Pedestrian", "3d", "moderate") == pytest.approx((100 / 11, 100 / 40))
    metrics = tmp_path / "metrics.json"
    assert ev.run_cli(["--gt", str(kitti_dir), "--pred", str(predictions), "--out", str(metrics)]) == 0
    assert '"kitti"' in metrics.read_text()


def test_calib_gives_a_2d_box_to_detections_without_one(kitti_dir, tmp_path):
    # B's detection with no 2D box: with calib its box is its projected corners (P2), tall
    # enough to pass every height filter; without calib it is 0 px high and ignored.
    no_box = CAR_B.replace("614.24 181.78 727.31 284.77", "-1.00 -1.00 -1.00 -1.00")
    preds = _write(tmp_path / "dt", {"000003": [f"{no_box} 0.90"]})
    with_calib = kitti_eval.evaluate_kitti(kitti_dir / "label_2", preds, kitti_dir / "calib")
    without = kitti_eval.evaluate_kitti(kitti_dir / "label_2", preds)
    assert with_calib["classes"]["Car"]["3d"]["easy"]["ap11"] == pytest.approx(100 / 11)
    assert without["classes"]["Car"]["3d"]["easy"]["ap11"] == 0.0
    calib = kitti.parse_calib(kitti_dir / "calib" / "000003.txt")
    b = kitti.to_canonical(kitti.parse_label_lines(CAR_B)[0][0])
    corners = geometry.corners(b["center_cam"], b["dimensions"], b["R_cam"])
    proj = geometry.project_points(corners[0], calib.P2)
    assert np.ptp(proj[:, 1]) > 40


MMDET3D = "mmdet3d_kitti"  # tests/fixtures/<this>: KITTI-style GT with DontCare, detections, mmdetection3d's AP


def test_ap_with_dontcare_regions_equals_mmdetection3d(fixtures_dir, kitti_dir, tmp_path):
    """Issue 25 item 7: 2D DontCare regions excuse 2D false positives only. mmdetection3d's eval.py (run
    once at the commit in expected.json: see tests/fixtures/README.md) on the 6 real KITTI frames and 30
    generated ones, every frame with DontCare rows, many detections inside them: all 144 values (AP11,
    AP40 of 2D / BEV / 3D and AOS11 / AOS40, 3 classes x 3 difficulties x the strict and loose tables)
    agree. Before the fix 66 of them differed, by up to 10.7 AP (BEV / 3D detections in DontCare
    regions were dropped)."""
    import json

    fixture = fixtures_dir / MMDET3D
    expected = json.loads((fixture / "expected.json").read_text())
    assert expected["provenance"]["licence"] == "Apache-2.0"
    labels = tmp_path / "label_2"
    labels.mkdir()
    for path in [*(kitti_dir / "label_2").glob("*.txt"), *(fixture / "label_2").glob("*.txt")]:
        shutil.copy(path, labels / path.name)
    assert sum("DontCare" in p.read_text() for p in labels.glob("*.txt")) == 34  # all but two real frames
    got = {}
    for overlap in ("strict", "loose"):
        result = kitti_eval.evaluate_kitti(labels, fixture / "results", overlap=overlap)
        assert result["n_frames"] == 36 and result["warnings"] == []
        for cls, entry in result["classes"].items():
            for metric in kitti_eval.KITTI_METRICS:
                for difficulty, v in entry[metric].items():
                    for k in ("11", "40"):
                        got[f"{overlap}/{cls}/{difficulty}/ap{k}_{metric}"] = v[f"ap{k}"]
                        if metric == "2d":
                            got[f"{overlap}/{cls}/{difficulty}/aos{k}"] = v[f"aos{k}"]
    assert got.keys() == expected["values"].keys() and len(got) == 144
    assert got == pytest.approx(expected["values"], rel=0, abs=1e-9)
    # what tells the two rules apart: detections lying in a DontCare region in 2D (over half their area)
    inside = 0
    for path in labels.glob("*.txt"):
        regions = [o.bbox for o in kitti.parse_label_file(path) if o.is_dontcare]
        for det in kitti.parse_label_file(fixture / "results" / path.name):
            x1, y1, x2, y2 = det.bbox
            inside += any(max(0, min(x2, r[2]) - max(x1, r[0])) * max(0, min(y2, r[3]) - max(y1, r[1]))
                          > 0.5 * (x2 - x1) * (y2 - y1) for r in regions)
    assert inside >= 100, inside


def test_empty_or_foreign_result_folders_score_zero_with_a_warning(kitti_dir, tmp_path):
    """Issue 25 item 6: no detection, or only result files of frames the ground truth does not have,
    is AP 0 with a warning saying why (the files left out are counted), never a traceback."""
    empty = _write(tmp_path / "empty", {})
    result = kitti_eval.evaluate_kitti(kitti_dir / "label_2", empty)
    assert _ap(result, "Car", "3d", "moderate") == (0.0, 0.0)
    assert result["warnings"] == ["no detections for the 6 frame(s) of label_2: every AP is 0"]
    foreign = _write(tmp_path / "foreign", {"000042": [f"{CAR_B} 0.9"], "x y": [f"{CAR_B} 0.9"]})
    result = kitti_eval.evaluate_kitti(kitti_dir / "label_2", foreign)
    assert result["n_pred"] == 0 and result["n_pred_files_outside"] == 2
    assert result["warnings"][0] == "2 result file(s) of foreign name no frame of label_2 and are left out: '000042', 'x y'"
    assert _ap(result, "Pedestrian", "2d", "easy") == (0.0, 0.0)


def test_undecodable_and_unreadable_kitti_files_are_named(kitti_dir, tmp_path):
    """A Latin-1 byte in a result file was a UnicodeDecodeError traceback; a missing calib file a
    FileNotFoundError."""
    from benchwright.errors import RecordError, SourceError

    bad = _write(tmp_path / "latin", {"000003": [f"{CAR_B} 0.90", f"Caf\xe9 {CAR_B[4:]} 0.5"]})
    (bad / "000003.txt").write_bytes((bad / "000003.txt").read_text().encode("latin-1"))
    with pytest.raises(RecordError, match=r"^latin/000003.txt:2: not UTF-8: byte 0xe9 at column 4"):
        kitti_eval.evaluate_kitti(kitti_dir / "label_2", bad)
    no_box = CAR_B.replace("614.24 181.78 727.31 284.77", "-1.00 -1.00 -1.00 -1.00")
    preds = _write(tmp_path / "dt", {"000003": [f"{no_box} 0.90"]})
    calib = tmp_path / "calib"
    calib.mkdir()
    with pytest.raises(SourceError, match=r"calib/000003.txt: cannot read"):
        kitti_eval.evaluate_kitti(kitti_dir / "label_2", preds, calib)
