"""WildBox baselines: prediction JSON, determinism, the geometry of trivial and lift, the learned
head's checkpoint, no leakage of the target's 3D ground truth, and the evaluator's perfect score."""
import json

import numpy as np
import pytest

from benchwright.formats import geometry
from benchwright.baselines import wildbox as bw
from benchwright.baselines.wildbox.common import _box_center
from benchwright.schemas import wildbox as schema

from tests.quality_builds import tiny_build

EPOCHS = 3  # the learned head on the tiny build: enough to exercise training, seconds to run
LIFT_OF_CONTEXT = {"image": "ground", "segment": "segment"}  # the lift each learned context starts from
GT_3D_KEYS = ("center_cam", "dimensions", "R_cam", "corners_cam", "bbox2d_proj")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The tiny build shared by the test run (``tiny_build``): read, never changed."""
    return tiny_build("wildbox", tmp_path_factory)[1]


@pytest.fixture(scope="module")
def splits(built):
    return bw.load_split(built, "train"), bw.load_split(built, "validation")


@pytest.fixture(scope="module")
def bundle(splits, tmp_path_factory):
    path = tmp_path_factory.mktemp("ckpt") / "learned.pt"
    b = bw.train_learned(splits[0], epochs=EPOCHS, seed=0, checkpoint=path, progress=False)
    return b, path


def _cli(built, head, out, *extra):
    return bw.run_cli(["--data", str(built), "--head", head, "--out", str(out), "--epochs", str(EPOCHS),
                       "--no-progress", *extra])


# ------------------------------------------------------------------------------- JSON and CLI
@pytest.mark.parametrize("head", bw.HEADS)
def test_prediction_json_schema(built, splits, tmp_path, head, capsys):
    from benchwright.evaluation import wildbox as ev

    out = tmp_path / f"{head}.json"
    assert _cli(built, head, out) == 0
    assert f"wildbox baseline {head}:" in capsys.readouterr().out
    doc = json.loads(out.read_text())
    _, val = splits
    assert isinstance(doc, list)
    ids = [e["image_id"] for e in doc]
    assert ids == sorted(ids) and set(ids) == set(val["image_ids"].tolist())  # one entry per image, frames included
    n = 0
    for entry in doc:
        assert set(entry) == {"image_id", "instances"} and isinstance(entry["image_id"], int)
        for inst in entry["instances"]:
            n += 1
            assert set(inst) == {"bbox", "score", "category_id", "center_cam", "dimensions", "pose"}
            assert len(inst["bbox"]) == 4 and inst["bbox"][2] > 0 and inst["bbox"][3] > 0  # xywh
            assert 0 < inst["score"] <= 1
            assert inst["category_id"] in schema.CATEGORY_IDS.values()
            assert len(inst["center_cam"]) == 3 and inst["center_cam"][2] > 0
            assert len(inst["dimensions"]) == 3 and min(inst["dimensions"]) > 0
            R = np.asarray(inst["pose"])
            assert R.shape == (3, 3)
            assert np.allclose(R @ R.T, np.eye(3), atol=1e-6) and np.linalg.det(R) > 0
    assert n == len(val["image_id"])  # one prediction per oracle box
    # The xywh box is the oracle 2D box, and the evaluator reads the file back.
    p = ev.read_prediction_json(out)
    assert len(p["image_id"]) == n
    first = next(e for e in doc if e["instances"])
    k = int(np.flatnonzero(val["image_id"] == first["image_id"])[0])
    x1, y1, x2, y2 = val["bbox2d_tight"][k]
    assert first["instances"][0]["bbox"] == pytest.approx([x1, y1, x2 - x1, y2 - y1])


def test_cli_bad_input_exit_code(tmp_path, capsys):
    assert bw.run_cli(["--data", str(tmp_path / "nope"), "--head", "trivial", "--out", str(tmp_path / "p.json")]) == 2
    assert "error" in capsys.readouterr().err


@pytest.mark.parametrize("head", bw.HEADS)
def test_same_seed_same_bytes(built, tmp_path, head):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert _cli(built, head, a, "--seed", "0") == 0
    assert _cli(built, head, b, "--seed", "0") == 0
    assert a.read_bytes() == b.read_bytes()
    if head == "learned":
        assert (tmp_path / "a.pt").is_file()  # the checkpoint lands beside the predictions
        c = tmp_path / "c.json"
        assert _cli(built, head, c, "--seed", "1") == 0
        assert c.read_bytes() != a.read_bytes()  # the seed is used


# ------------------------------------------------------------------------------------ geometry
def test_trivial_centre_on_ray_at_depth_one(splits):
    train, val = splits
    p = bw.predict_trivial(train, val)
    b = val["bbox2d_tight"]
    centre_px = np.column_stack([(b[:, 0] + b[:, 2]) / 2, (b[:, 1] + b[:, 3]) / 2])
    assert np.allclose(p["center_cam"][:, 2], 1.0)
    hom = np.einsum("nij,nj->ni", val["K"], p["center_cam"])
    assert np.allclose(hom[:, :2] / hom[:, 2:], centre_px, atol=1e-6)  # on the ray through the box centre
    # Per-class median dimensions and mean rotation of train, whatever the target's 3D boxes are.
    for k in np.unique(val["species"]):
        m, mt = val["species"] == k, train["species"] == k
        assert np.allclose(p["dimensions"][m], np.median(train["dimensions"][mt], axis=0))
        assert np.allclose(p["pose"][m], geometry.project_to_so3(train["R_cam"][mt].mean(axis=0)))
    assert np.array_equal(p["category_id"], val["species"] + 1000)


def _hand_arrays(n, species, K, bbox, image_id, center=None, dims=None, R=None):
    a = {"image_id": np.asarray(image_id, np.int64), "species": np.full(n, species),
         "category_id": np.full(n, 1000 + species), "K": np.repeat(K[None], n, axis=0),
         "bbox2d_tight": np.asarray(bbox, float), "image_width": np.full(n, 640), "image_height": np.full(n, 360)}
    if center is not None:
        a.update(center_cam=np.asarray(center, float), dimensions=np.asarray(dims, float), R_cam=np.asarray(R, float))
    return a


def test_lift_pinhole_depth_is_f_H_over_h():
    K = np.array([[500.0, 0, 320], [0, 520.0, 180], [0, 0, 1]])
    R = geometry.rotation_from_ypr([[0.3, -0.6, 0.05]])[0]
    # Train: two boxes of species 2 with H = 0.4 whose 2D box height is exactly f_y H / z (ratio 1).
    train = _hand_arrays(2, 2, K, [[100, 50, 160, 50 + 520 * 0.4 / 2], [300, 80, 330, 80 + 520 * 0.4 / 4]], [1, 1],
                         center=[[0.1, 0.2, 2.0], [0.3, 0.1, 4.0]], dims=[[0.3, 0.4, 0.9]] * 2, R=[R, R])
    target = _hand_arrays(1, 2, K, [[200, 100, 240, 140]], [7])  # h = 40 px
    p = bw.predict_lift(train, target, mode="pinhole")
    assert p["center_cam"][0, 2] == pytest.approx(520.0 * 0.4 / 40.0)
    hom = K @ p["center_cam"][0]
    assert hom[:2] / hom[2] == pytest.approx([220.0, 120.0])
    # The train ratio correction: 2D boxes 25% taller than f_y H / z scale the lifted z by 1 / 1.25.
    train["bbox2d_tight"][:, 3] = train["bbox2d_tight"][:, 1] + 1.25 * (train["bbox2d_tight"][:, 3] - train["bbox2d_tight"][:, 1])
    p = bw.predict_lift(train, target, mode="pinhole")
    assert p["center_cam"][0, 2] == pytest.approx(520.0 * 0.4 / 40.0 / 1.25)


def test_lift_ground_plane_recovers_relative_depth():
    """Centres on a plane whose normal is the class-mean 'down' axis: depths come back up to the frame median."""
    K = np.array([[500.0, 0, 320], [0, 500.0, 180], [0, 0, 1]])
    R = geometry.rotation_from_ypr([[0.2, 0.7, 0.03]])[0]  # a drone looking down: "down" points away too
    n = R[:, 1]
    assert n[1] > 0 and n[2] > 0
    rng = np.random.default_rng(0)
    uv = np.column_stack([rng.uniform(60, 580, 5), rng.uniform(40, 320, 5)])
    ray = np.linalg.solve(K, np.column_stack([uv, np.ones(5)]).T).T
    z_true = 3.0 / (ray @ n)  # plane n . X = 3
    assert np.ptp(z_true) > 0.2 * np.median(z_true)  # depths that differ, so z = 1 would fail
    centres = ray * z_true[:, None]
    boxes = np.column_stack([uv - 10, uv + 10])
    train = _hand_arrays(5, 4, K, boxes, [1] * 5, center=centres, dims=[[0.3, 0.4, 0.9]] * 5, R=[R] * 5)
    target = _hand_arrays(5, 4, K, boxes, [9] * 5)
    p = bw.predict_lift(train, target)
    assert p["center_cam"][:, 2] == pytest.approx(z_true / np.median(z_true))
    assert np.median(p["center_cam"][:, 2]) == pytest.approx(1.0)


def _segment_scene():
    """Two segments seen by one camera: segment "a" has three animals (tracks 1-3) in frames 10 and 11,
    the drone 1.25x farther in frame 11 (same image positions, boxes 1 / 1.25 the size); segment "b"
    one frame. Centres on a plane whose normal is the class-mean 'down' axis, depths in
    segment-median units. Returns (train, target, true depths)."""
    K = np.array([[500.0, 0, 320], [0, 500.0, 180], [0, 0, 1]])
    R = geometry.rotation_from_ypr([[0.2, 0.7, 0.03]])[0]
    uv = np.array([[150.0, 90.0], [330.0, 200.0], [520.0, 300.0]])
    ray = np.linalg.solve(K, np.column_stack([uv, np.ones(3)]).T).T
    rel = 1.0 / (ray @ R[:, 1])
    rel = rel / np.median(rel)                               # the frame's relative depths (median 1)
    half = np.array([30.0, 20.0, 12.0])                      # half box sizes at depth 1 (size / depth)
    z = np.concatenate([rel, 1.25 * rel, 0.9 * rel])         # frame 10, frame 11 (farther), segment b
    z[:6] /= np.median(z[:6])                                # each segment's median depth is 1
    z[6:] /= np.median(z[6:])
    sizes = np.tile(half, 3) / z
    centre_px = np.tile(uv, (3, 1))
    boxes = np.column_stack([centre_px - sizes[:, None], centre_px + sizes[:, None]])
    image = np.repeat([10, 11, 20], 3)
    target = _hand_arrays(9, 4, K, boxes, image)
    target.update(segment_id=np.array(["a"] * 6 + ["b"] * 3, dtype=object), track_id=np.tile([1, 2, 3], 3))
    centres = ray * (rel * 3.0)[:, None]
    train = _hand_arrays(3, 4, K, boxes[:3], [1] * 3, center=centres, dims=[[0.3, 0.4, 0.9]] * 3, R=[R] * 3)
    return train, target, z


def test_segment_lift_takes_each_frames_scale_from_its_segment():
    """Segment context: the frame where the drone is farther gets depths 1.25x the other frame's
    (the ground-plane lift gives both frames median 1); every segment's median is 1."""
    train, target, z_true = _segment_scene()
    ground = bw.predict_lift(train, target)["center_cam"][:, 2]
    assert np.median(ground[:3]) == pytest.approx(1.0) and np.median(ground[3:6]) == pytest.approx(1.0)
    assert not np.allclose(ground, z_true, rtol=0.05)       # the per-image lift cannot see the drone move
    p = bw.predict_lift(train, target, mode="segment")
    assert p["center_cam"][:, 2] == pytest.approx(z_true, rel=1e-9)
    hom = np.einsum("nij,nj->ni", target["K"], p["center_cam"])   # still on the rays through the box centres
    assert hom[:, :2] / hom[:, 2:] == pytest.approx(_box_center(target["bbox2d_tight"]))
    # It reads other frames of the same segment only: segment b alone gives the same depths.
    alone = {k: np.asarray(v)[6:] for k, v in target.items()}
    assert bw.segment_depth(bw.class_priors(train), alone) == pytest.approx(z_true[6:], rel=1e-12)
    # Row order does not matter.
    order = np.array([4, 7, 0, 8, 2, 5, 1, 6, 3])
    shuffled = {k: np.asarray(v)[order] for k, v in target.items()}
    assert np.array_equal(bw.segment_depth(bw.class_priors(train), shuffled),
                          bw.segment_depth(bw.class_priors(train), target)[order])


def test_learned_context_image_reads_one_image_segment_reads_its_segment(splits):
    """context "image": a box's base depth depends on its own image only; "segment": on the segment's frames."""
    train, val = splits
    pri = bw.class_priors(train)
    seg = val["segment_id"][0]
    frames = np.unique(val["image_id"][val["segment_id"] == seg])
    assert len(frames) >= 2
    keep = val["image_id"] != frames[-1]                    # drop one frame of that segment
    part = {k: (v if k == "image_ids" else np.asarray(v)[keep]) for k, v in val.items()}
    mine = part["segment_id"] == seg
    assert np.array_equal(bw.base_depth(pri, part, "image"), bw.base_depth(pri, val, "image")[keep])
    assert not np.allclose(bw.base_depth(pri, part, "segment")[mine], bw.base_depth(pri, val, "segment")[keep][mine])
    other = ~mine                                            # other segments are untouched
    assert np.array_equal(bw.base_depth(pri, part, "segment")[other], bw.base_depth(pri, val, "segment")[keep][other])


def test_heads_never_read_target_3d(splits, bundle):
    """Oracle-2D setting: garbage in the target's 3D ground truth changes no prediction."""
    train, val = splits
    spoiled = dict(val)
    for key in GT_3D_KEYS:
        spoiled[key] = np.full_like(val[key], np.nan)
    for fn in (lambda t: bw.predict_trivial(train, t), lambda t: bw.predict_lift(train, t),
               lambda t: bw.predict_learned(bundle[0], t)):
        a, b = fn(val), fn(spoiled)
        for key in a:
            assert np.array_equal(a[key], b[key]), key


# ----------------------------------------------------------------------------- learned head
def test_curriculum_coarse_then_fine(splits):
    train, _ = splits
    stages = list(bw.curriculum_stages(train))
    assert [name for name, _ in stages] == ["coarse", "fine"]
    coarse, fine = stages[0][1], stages[1][1]
    assert np.array_equal(fine, train["species"])
    zebra = schema.COARSE_CLASSES.index("zebra")
    for k, name in enumerate(schema.SPECIES):
        assert set(coarse[fine == k]) <= {schema.COARSE_CLASSES.index(schema.COARSE_OF[name])}
    assert set(coarse[np.isin(fine, [1, 3])]) == {zebra}  # both zebras merged
    assert coarse.max() < bw.STAGE_CLASSES["coarse"] and fine.max() < bw.STAGE_CLASSES["fine"]


def test_learned_checkpoint_round_trip(splits, bundle):
    import torch

    _, val = splits
    trained, path = bundle
    saved = torch.load(path, map_location="cpu", weights_only=False)
    assert {"state_dict", "feature_mean", "feature_std", "species", "priors", "config"} <= set(saved)
    assert saved["species"] == list(schema.SPECIES)
    assert len(saved["feature_mean"]) == len(bw.CONTINUOUS_FEATURES)
    assert [h["stage"] for h in trained["history"]] == ["coarse"] + ["fine"] * (EPOCHS - 1)
    a = bw.predict_learned(trained, val)
    b = bw.predict_learned(path, val)
    for key in a:
        assert np.array_equal(a[key], b[key]), key
    # The network's depth residual moved away from the lift (it is not the prior passed through).
    lift = bw.predict_lift(splits[0], val)
    moved = bw.predict_learned(trained, val, components=("depth",))
    assert not np.allclose(moved["center_cam"][:, 2], lift["center_cam"][:, 2])


def test_untrained_learned_head_is_the_lift(splits):
    """The residual starts at zero: before training the head predicts exactly the lift's boxes."""
    train, val = splits
    for context, mode in (("segment", "segment"), ("image", "ground")):  # the lift of the head's context
        untrained = bw.train_learned(train, epochs=0, seed=0, progress=False,
                                     config={"select_folds": 0, "context": context})
        assert untrained["components"] == list(bw.COMPONENTS)
        lift = bw.predict_lift(train, val, mode=mode)
        p = bw.predict_learned(untrained, val)
        for key in ("image_id", "category_id", "bbox", "center_cam", "dimensions", "pose"):
            assert np.array_equal(p[key], lift[key]), key
        # With no component switched on, every field is the lift's, the score included.
        p = bw.predict_learned(untrained, val, components=())
        for key in lift:
            assert np.array_equal(p[key], lift[key]), key


def _merged(splits):
    """Train and validation of the tiny build as one 'train' split: two videos per species, so folds exist."""
    a, b = splits
    out = {k: np.concatenate([a[k], b[k]]) for k in a if k != "image_ids"}
    out["image_ids"] = np.union1d(a["image_ids"], b["image_ids"])
    return out


def test_video_folds_hold_out_whole_videos(splits):
    train, _ = splits
    assert bw.video_folds(train, 2) is None  # the tiny train split has one video per species: no fold
    merged = _merged(splits)
    folds = bw.video_folds(merged, 2)
    assert folds is not None and set(folds.tolist()) == {0, 1}
    for v in np.unique(merged["video_id"]):
        assert len(set(folds[merged["video_id"] == v].tolist())) == 1  # a video is never split
    for k in np.unique(merged["species"]):  # every species has a video on each side
        assert set(folds[merged["species"] == k].tolist()) == {0, 1}
    order = np.random.default_rng(0).permutation(len(folds))
    shuffled = {key: (v if key == "image_ids" else v[order]) for key, v in merged.items()}
    assert np.array_equal(bw.video_folds(shuffled, 2), folds[order])  # independent of the row order


def test_selection_on_train_folds_keeps_the_lift_unless_beaten(splits, capsys):
    """The components are chosen on video folds inside train; the choice is the best fold score,
    never below the lift's, and on its training data the head is not worse than the lift. The
    training and the folds' training show their epochs on stderr (issue 23: a tqdm bar in logs)."""
    from benchwright.evaluation import wildbox as ev

    merged = _merged(splits)
    trained = bw.train_learned(merged, epochs=EPOCHS, seed=0, progress=True)
    shown = capsys.readouterr().err.splitlines()
    last = trained["history"][-1]
    assert shown[-1].startswith("[wildbox] learned head done in ") and "\r" not in "".join(shown), shown
    assert (f"training {EPOCHS}/{EPOCHS} epochs, {last['stage']} stage, loss {last['loss']:.4f}; "
            f"component selection (2 folds) {2 * EPOCHS}/{2 * EPOCHS} epochs, ") in shown[-1], shown
    sel = trained["selection"]
    assert sel["folds"] == 2 and len(sel["scores"]) == 2 ** len(bw.COMPONENTS)
    chosen = "+".join(trained["components"]) or "lift"
    tol = bw.LEARNED_CONFIG["select_tolerance"]
    best = max(sel["scores"].values())
    assert sel["scores"][chosen] >= best - tol - 1e-9  # within the tolerance of the best fold score ...
    assert sel["scores"][chosen] >= sel["scores"]["lift"] - 1e-9 or chosen == "lift"

    def size(k):
        return 0 if k == "lift" else len(k.split("+"))

    # ... and no subset with fewer parts is (parsimony)
    assert all(size(k) >= size(chosen) for k, v in sel["scores"].items() if v >= best - tol - 1e-9)
    gt = {k: merged[k] for k in ("image_id", "bbox2d_tight", "bbox2d_proj", "center_cam", "dimensions", "R_cam")}
    gt["category_id"] = merged["species"] + 1000

    def ap(preds):  # the evaluator's default AP-BEV protocol, as the fold selection uses
        m = ev.evaluate(gt, preds, image_ids=merged["image_ids"])
        return m[bw.ap_bev_key(m)]["macro"]

    assert ap(bw.predict_learned(trained, merged)) >= ap(bw.predict_lift(merged, merged))
    # The fold scores are the evaluator's default AP-BEV protocol (the one the verdict reads): the
    # "lift" subset's score is the mean over folds of the held-out videos' AP of the context's lift.
    folds = bw.video_folds(merged, sel["folds"])
    lift_scores = []
    for k in range(sel["folds"]):
        held = folds == k
        fit_part, target = ({key: (np.asarray(v)[m] if key != "image_ids" else v) for key, v in merged.items()}
                            for m in (~held, held))
        target["image_ids"] = np.unique(target["image_id"])
        g = {key: target[key] for key in ("image_id", "bbox2d_tight", "bbox2d_proj", "center_cam", "dimensions",
                                           "R_cam")}
        g["category_id"] = target["species"] + 1000
        m = ev.evaluate(g, bw.predict_lift(fit_part, target, mode=LIFT_OF_CONTEXT[trained["config"]["context"]]),
                        image_ids=target["image_ids"],
                        scale_grid=[1.0])
        lift_scores.append(m[bw.ap_bev_key(m)]["macro"] or 0.0)
    assert sel["scores"]["lift"] == pytest.approx(sum(lift_scores) / len(lift_scores), abs=1e-9)


def test_segment_head_that_keeps_no_part_is_the_segment_lift(splits):
    """The segment-context learned head is a residual on ``lift --lift-mode segment``: trained, but with
    no part kept (a tolerance that makes the fold selection fall back to its starting point), every
    field of its prediction -- depth, centre, size, rotation, score -- is the segment lift's, bit for bit."""
    merged = _merged(splits)
    _, val = splits
    trained = bw.train_learned(merged, epochs=EPOCHS, seed=0, progress=False,
                               config={"context": "segment", "select_tolerance": 1e9})
    assert trained["selection"]["folds"] == 2 and trained["components"] == []
    lift = bw.predict_lift(merged, val, mode="segment")
    assert not np.array_equal(lift["center_cam"], bw.predict_lift(merged, val)["center_cam"])  # not the image lift
    for p in (bw.predict_learned(trained, val), bw.predict_learned(trained, val, components=())):
        assert set(p) == set(lift)
        for key in lift:
            assert np.array_equal(p[key], lift[key]), key
    # The network did learn something: switching its depth part on moves the boxes off the segment lift.
    moved = bw.predict_learned(trained, val, components=("depth",))
    assert not np.allclose(moved["center_cam"][:, 2], lift["center_cam"][:, 2])


def test_every_fold_rule_keeps_a_part_only_if_it_helps_on_each_fold(splits):
    """The segment head's selection (``select_every_fold``): each kept part raises every held-out fold's score over the chosen
    subset without it; the fold scores are recorded per fold and average to the reported means."""
    merged = _merged(splits)
    trained = bw.train_learned(merged, epochs=EPOCHS, seed=0, progress=False,
                               config={"context": "segment", "select_tolerance": 0.0})
    sel = trained["selection"]
    for name, per_fold in sel["fold_scores"].items():
        assert len(per_fold) == sel["folds"] and sel["scores"][name] == pytest.approx(np.mean(per_fold), abs=1e-12)
    chosen = trained["components"]
    for part in chosen:
        without = "+".join(c for c in chosen if c != part) or "lift"
        assert all(a > b for a, b in zip(sel["fold_scores"]["+".join(chosen)], sel["fold_scores"][without]))


def test_checkpoint_of_another_taxonomy_is_refused(bundle, tmp_path):
    import torch

    other = dict(bundle[0], species=["cat", "dog"])
    torch.save(other, tmp_path / "other.pt")
    with pytest.raises(ValueError, match="not WildBox"):
        bw.load_checkpoint(tmp_path / "other.pt")


# ------------------------------------------------------------------------------------ evaluator
def test_ground_truth_as_predictions_scores_100(built, splits, tmp_path):
    from benchwright.evaluation import wildbox as ev

    _, val = splits
    perfect = {"image_id": val["image_id"], "category_id": val["species"] + 1000,
               "score": np.linspace(1.0, 0.5, len(val["image_id"])), "bbox": val["bbox2d_proj"],
               "center_cam": val["center_cam"], "dimensions": val["dimensions"], "pose": val["R_cam"]}
    path = bw.write_predictions(tmp_path / "perfect.json", perfect, val["image_ids"])
    m = ev.evaluate_paths(built, path, "validation", ap_bev_protocol="both")
    for key in ("ap_bev@0.25", "ap_bev@0.50", "ap3d@0.25", "ap3d"):
        assert m[key]["macro"] == pytest.approx(100.0), key
    assert m["nhd_hungarian"]["macro"]["overall"] == pytest.approx(0.0, abs=1e-6)
    # And the baselines are scored below that, trivial included.
    p = bw.write_predictions(tmp_path / "trivial.json", bw.predict_trivial(splits[0], val), val["image_ids"])
    assert ev.evaluate_paths(built, p, "validation", ap_bev_protocol="coco101")["ap_bev@0.50"]["macro"] < 100.0


def test_score_model_is_the_learned_score(splits, bundle):
    """The "score" part: a deterministic logistic model of whether the lift's centre is a true positive."""
    train, val = splits
    trained, _ = bundle
    model = trained["score_model"]
    assert model["context"] == trained["config"]["context"] == bw.LEARNED_CONFIG["context"]
    again = bw.fit_score_model(trained["priors"], train, model["context"])
    assert np.array_equal(model["weights"], again["weights"])  # same data, same weights
    p = bw.predict_learned(trained, val, components=("score",))
    prob = bw.score_probability(model, trained["priors"], val)
    assert np.array_equal(p["score"], prob) and np.all((prob > 0) & (prob < 1))
    lift = bw.predict_lift(train, val, mode=LIFT_OF_CONTEXT[model["context"]])
    for key in ("center_cam", "dimensions", "pose"):  # the score part alone moves no box
        assert np.array_equal(p[key], lift[key]), key


# ----------------------------------------------------------------------------------- benchmark
def test_benchmark_reports_seed_mean_both_protocols_and_lift_modes(built):
    """The baselines benchmark: learned = mean over its seeds, both AP-BEV protocols, the verdict on
    the evaluator's default protocol, and a card table with both lift modes and why they differ."""
    from benchwright.benchmarks import wildbox_baselines as bench

    result, _ = bench.run(built, epochs=EPOCHS, seed=0, extra_seeds=(1,), progress=False)
    heads = result["heads"]
    assert set(heads) == {"trivial", "lift", "lift (pinhole)", "lift (segment)", "learned", "learned (segment)"}
    for row in heads.values():
        assert {"ap_bev@0.25", "ap_bev_voc11@0.25", "ap_bev@0.50", "ap_bev_voc11@0.50"} <= set(row)
    key = result["protocol"]["key"]
    # each learned row: the mean over its seeds, compared with the lift of its own context
    for name, context, lift_row in (("learned", "image", "lift"), ("learned (segment)", "segment", "lift (segment)")):
        entry = result["learned_rows"][name]
        assert (entry["context"], entry["compared_with"]) == (context, lift_row)
        seeds = [entry["seeds"]["0"][key], entry["seeds"]["1"][key]]
        assert seeds[0] == heads[name][key]
        assert entry["mean"][key] == pytest.approx(sum(seeds) / 2)
        assert entry["spread"][key] == [min(seeds), max(seeds)]
        assert entry["mean_minus_lift"] == pytest.approx(sum(seeds) / 2 - heads[lift_row][key])
    # the default learned head is per-image, and keeps the keys earlier results used
    assert bw.LEARNED_CONFIG["context"] == "image"
    assert result["learned_mean"] == result["learned_rows"]["learned"]["mean"]
    assert result["ordering"]["learned_mean_minus_lift"] == result["learned_rows"]["learned"]["mean_minus_lift"]
    assert result["extra_seeds"]["1"] == result["learned_rows"]["learned"]["seeds"]["1"]
    assert set(result["learned_components"]) == {"0", "1"}
    card = bench.markdown(result)
    assert "| lift (pinhole) |" in card and "| lift |" in card and bench.LIFT_MODES_SENTENCE in card
    assert "| lift (segment) |" in card and "| learned (segment) |" in card and bench.SEGMENT_SENTENCE in card
    assert "- learned (mean of 2 seeds) - lift = " in card and "- learned (segment) (mean of 2 seeds) - lift (segment) = " in card
    assert "VOC 11" in card and "COCO" in card


def test_baseline_evaluate_and_evaluate_print_one_headline_number_with_its_protocol(built, tmp_path, capfd):
    """Issue 23: `baseline wildbox --evaluate` printed AP-BEV@0.25 as COCO 101-point while `evaluate` defaults
    to VOC 11-point and left it out of its summary. Both now print the same number, first, with its
    protocol, in a table of one screen; the full metrics go to a file. (Both commands through the CLI's
    ``main`` in this process; what they print is read at the file descriptors, as a terminal gets it.)"""
    from tests.test_cli_usage import benchwright_here

    pred, metrics_path = tmp_path / "lift.json", tmp_path / "metrics.json"
    baseline = benchwright_here(capfd, "baseline", "wildbox", "--data", built, "--head", "lift", "--out", pred,
                                "--evaluate", "--no-progress")
    assert baseline.returncode == 0, baseline.stderr[-2000:]
    evaluated = benchwright_here(capfd, "evaluate", "wildbox", "--gt", built, "--pred", pred, "--out", metrics_path)
    assert evaluated.returncode == 0, evaluated.stderr[-2000:]
    metrics = json.loads(metrics_path.read_text())
    value = f"{metrics['ap_bev_voc11@0.25']['macro']:.2f}"
    for printed in (baseline.stdout, evaluated.stdout):
        lines = printed.splitlines()
        first = next(line for line in lines if line.startswith("| AP-"))  # the table's first metric row
        assert "AP-BEV@0.25" in first and "VOC 11-point" in first and value in first, printed
        assert "COCO 101-point" not in printed.split("AP-3D")[0]  # AP-BEV in one protocol only
        assert len(lines) <= 40 and "{" not in printed, printed  # a screen, not JSON
    assert f"AP-BEV@0.25 macro {value} (VOC 11-point)" in baseline.stdout
    assert f"full metrics: {metrics_path}" in evaluated.stdout
    written = json.loads(pred.with_suffix(".metrics.json").read_text())
    assert written["ap_bev_voc11@0.25"] == metrics["ap_bev_voc11@0.25"] and "ap_bev@0.25" not in written
