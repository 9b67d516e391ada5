"""WildBox end to end: a tiny synthetic source through the real pipeline to a loadable, validated folder."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from benchwright.cli import main as cli_main
from benchwright.hashing import stable_int_id
from benchwright.pipelines.wildbox import DATASET
from benchwright.splits import assign
from tests.quality_builds import planted_wildbox, tiny_build, tiny_builds_loaded_with_datasets_alone
from tests.wildbox_helpers import build_wildbox, damaged_box_copy, published_hashes


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> tuple[Path, Path]:
    """(tiny source, its build): the per-run shared build (``tiny_build``). Both are read by other test files:
    a test that changes either works on a copy."""
    return tiny_build("wildbox", tmp_path_factory)


@pytest.fixture(scope="module")
def source(tiny) -> Path:
    return tiny[0]


@pytest.fixture(scope="module")
def built(tiny) -> Path:
    return tiny[1]


def card_yaml(root: Path) -> dict:
    text = (root / "README.md").read_text()
    return yaml.safe_load(text.split("---\n")[1])


def test_load_dataset_in_a_clean_process(built, tmp_path_factory):
    """Every config loaded by ``datasets`` in one fresh process (no benchwright import): the run's one clean
    interpreter that loads every tiny build (``tiny_builds_loaded_with_datasets_alone``)."""
    loaded = tiny_builds_loaded_with_datasets_alone(tmp_path_factory)["wildbox"]
    infos = {i["config_name"]: i for i in card_yaml(built)["dataset_info"]}
    species = ["giraffe", "grevys_zebra", "elephant", "plains_zebra", "rhino", "gazelle"]
    for config in ("frames", "boxes", "segments"):
        got, info = loaded[config], infos[config]
        for split in info["splits"]:
            assert got["splits"][split["name"]] == split["num_examples"] > 0, config
    assert loaded["frames"]["class_names"]["objects[].species"] == loaded["boxes"]["class_names"]["species"] == species
    assert loaded["frames"]["first_row"]["image"]["image_size"][0] > 0


def test_card_counts_match_files_and_exclude_build_folders(built):
    meta = card_yaml(built)
    for cfg in meta["configs"]:
        for entry in cfg["data_files"]:
            assert entry["path"].startswith(f"{cfg['config_name']}/")
            assert "_build" not in entry["path"] and "exports" not in entry["path"]
    for info in meta["dataset_info"]:
        for split in info["splits"]:
            files = sorted((built / info["config_name"]).glob(f"{split['name']}-*.parquet"))
            assert sum(pq.ParquetFile(f).metadata.num_rows for f in files) == split["num_examples"]
            assert sum(f.stat().st_size for f in files) == split["num_bytes"]
    text = (built / "README.md").read_text()
    assert "| total |" in text and "_build/figures/sample_frame.png" in text
    for fig in ("class_histogram", "depth_distribution", "sample_frame"):
        assert (built / "_build" / "figures" / f"{fig}.png").stat().st_size > 1000


def test_every_species_in_both_splits_and_no_video_in_two(built):
    seg = pq.ParquetDataset(sorted((built / "segments").glob("*.parquet"))).read().to_pylist()
    by_video = {}
    for row in seg:
        by_video.setdefault(row["video_id"], set()).add(row["split"])
    assert all(len(s) == 1 for s in by_video.values())
    species_splits = {(r["species"], r["split"]) for r in seg}
    assert {s for s, _ in species_splits} == set(range(6))
    assert all((s, split) in species_splits for s in range(6) for split in ("train", "validation"))


def release_scales(source: Path) -> dict[str, tuple[float, str]]:
    """The release's per-segment scale from the raw files alone (docs/reference/wildbox.md): over
    every box of the segment with camera-frame z > 0, s = 1/median(z) (1/max(z) below 3 boxes, 1 with none)."""
    import numpy as np

    out = {}
    for cams in sorted(source.glob("*/*/vggt_results/cameras.json")):
        ext = {c["frame_index"]: np.asarray(c["extrinsic"], float) for c in json.loads(cams.read_text())["cameras"]}
        tracks = json.loads((cams.parent / "tracking_summary.json").read_text())["tracks"]
        z = np.array([ext[f][2, :3] @ c + ext[f][2, 3] for t in tracks.values()
                      for f, c in zip(t["frames"], np.asarray(t["centers"], float))])
        z = z[z > 0]
        rule = (1 / np.median(z), "1/median(z)") if len(z) >= 3 else (1 / z.max(), "1/max(z)") if len(z) else (1.0, "none")
        out[cams.parent.parent.relative_to(source).as_posix()] = rule
    return out


def test_scale_is_the_release_rule_over_every_box_not_the_kept_ones(source, built):
    boxes = pq.ParquetDataset(sorted((built / "boxes").glob("*.parquet"))).read(
        columns=["segment_id", "center_cam", "depth", "scale_factor"]).to_pandas()
    seg = pq.ParquetDataset(sorted((built / "segments").glob("*.parquet"))).read().to_pandas()
    want = release_scales(source)
    assert sorted(seg.segment_id) == sorted(want)
    for seg_id, scale, rule in zip(seg.segment_id, seg.scale_factor, seg.scale_rule):
        assert (scale, rule) == (pytest.approx(want[seg_id][0], rel=1e-12), want[seg_id][1]), seg_id
    for seg_id, group in boxes.groupby("segment_id"):
        assert list(group.scale_factor) == [pytest.approx(want[seg_id][0], rel=1e-12)] * len(group)
        assert all(d == c[2] for d, c in zip(group.depth, group.center_cam))
    # the tiny build drops boxes by 2D rules (their segment's kept median is not the release's), and
    # the raw scales differ wildly between segments; normalised depths do not
    filtered = (built / "_build" / "filtered" / "AnnotateSegment.jsonl").read_text()
    assert "2D box 1 px or less" in filtered
    assert seg.scale_factor.max() / seg.scale_factor.min() > 10


@pytest.fixture(scope="module")
def shrunk_and_lifted(source, built, tmp_path_factory) -> dict:
    """One build of a copy of the tiny source with two changes in two segments: one track lifted half a box
    height along its own up axis (the first segment's first track), and in another segment with several
    boxes one mask shrunk to a single pixel (its box is then filtered)."""
    import cv2
    import numpy as np

    work = tmp_path_factory.mktemp("shrunk-and-lifted")
    raw = work / "raw"
    shutil.copytree(source, raw)
    # Lift one track half a box height along its own up axis: its boxes float 0.5 H up
    summary_path = sorted(raw.glob("*/*/vggt_results/tracking_summary.json"))[0]
    lifted_segment = summary_path.parent.parent.relative_to(raw).as_posix()
    summary = json.loads(summary_path.read_text())
    tid, track = sorted(summary["tracks"].items())[0]
    R = np.asarray(track["rotation_matrices"], float)
    height = np.asarray(track["dimensions"], float)[:, 1]  # VGGT (l, w, h) = local x, y, z extents; y is H
    track["centers"] = (np.asarray(track["centers"], float) - R[:, :, 1] * (0.5 * height)[:, None]).tolist()
    summary_path.write_text(json.dumps(summary))
    # a segment with several boxes (not the lifted one); one of its masks becomes a single pixel
    counts = pq.ParquetDataset(sorted((built / "boxes").glob("*.parquet"))).read(
        columns=["segment_id"]).to_pandas().segment_id.value_counts()
    segment = min(s for s, n in counts.items() if n >= 8 and s != lifted_segment)
    mask_path = sorted((raw / segment / "sam3_masks" / "masks").glob("obj_*/*.png"))[0]
    mask = cv2.imread(str(mask_path), cv2.IMREAD_GRAYSCALE)
    ys, xs = np.nonzero(mask)
    one = np.zeros_like(mask)
    one[ys[0], xs[0]] = 255
    cv2.imwrite(str(mask_path), one)
    return {"built": build_wildbox(raw, work / "out"), "mask_segment": segment,
            "mask_track": int(mask_path.parent.name.removeprefix("obj_")), "lifted_segment": lifted_segment,
            "lifted_track": int(tid)}


def test_a_mask_shrunk_to_one_pixel_moves_no_other_3d_label(built, shrunk_and_lifted):
    out, segment, track = (shrunk_and_lifted[k] for k in ("built", "mask_segment", "mask_track"))
    filtered = (out / "_build" / "filtered" / "AnnotateSegment.jsonl").read_text()
    assert f"{segment}/vggt_results/tracking_summary.json#track={track}," in filtered

    columns = ["box_id", "segment_id", "center_cam", "dimensions", "corners_cam", "scale_factor"]
    before = {b["box_id"]: b for b in pq.ParquetDataset(sorted((built / "boxes").glob("*.parquet"))).read(
        columns=columns).to_pylist() if b["segment_id"] == segment}
    after = {b["box_id"]: b for b in pq.ParquetDataset(sorted((out / "boxes").glob("*.parquet"))).read(
        columns=columns).to_pylist() if b["segment_id"] == segment}
    assert len(after) == len(before) - 1 >= 7 and set(after) < set(before)
    assert all(after[k] == before[k] for k in after)  # exactly: the scale did not move


def test_boxes_carry_full_rotations_and_kitti_flags(built):
    boxes = pq.ParquetDataset(sorted((built / "boxes").glob("*.parquet"))).read(
        columns=["yaw_pitch_roll", "kitti_representable", "kitti_reason", "bbox2d_tight", "bbox2d_proj"]).to_pylist()
    tilted = [b for b in boxes if max(abs(b["yaw_pitch_roll"][1]), abs(b["yaw_pitch_roll"][2])) > 0.05]
    assert len(tilted) > len(boxes) / 2
    assert all(not b["kitti_representable"] and "pitch" in b["kitti_reason"] for b in tilted)
    assert sum(b["bbox2d_tight"] != b["bbox2d_proj"] for b in boxes) > len(boxes) * 0.9


def test_exports_omni3d_and_kitti(built):
    from benchwright.formats.omni3d import read_omni3d

    for split in ("train", "validation"):
        path = built / "exports" / "omni3d" / f"WildBox_{split}.json"
        doc = json.loads(path.read_text())
        assert {c["id"] for c in doc["categories"]} == set(range(1000, 1006))
        assert all(not im["file_path"].startswith("/") and (built / im["file_path"]).exists() for im in doc["images"])
        assert doc["info"]["scene_scales"]
        records = list(read_omni3d(path))
        assert sum(len(r.annotations) for r in records) == len(doc["annotations"]) > 0
        # the KITTI root: the split's frames listed in ImageSets, each with a row per box (yaw-only: all of them)
        kitti = built / "exports" / "kitti"
        names = (kitti / "ImageSets" / {"train": "train", "validation": "val"}[split]).with_suffix(".txt")
        names = names.read_text().split()
        assert len(names) == len(doc["images"])
        rows = sum(len((kitti / "training" / "label_2" / f"{n}.txt").read_text().splitlines()) for n in names)
        assert rows == len(doc["annotations"])
    assert (built / "exports" / "kitti" / "not_representable.jsonl").read_text() == ""
    assert (built / "exports" / "kitti" / "ImageSets" / "test.txt").read_text() == ""


def test_omni3d_collection_id_is_the_releases_and_cube_rcnn_finds_every_image(built):
    """dataset_id is 1000 in both splits, as the authors' preparation script writes it (its --dataset-id
    default). Cube R-CNN reads it as a key (facebookresearch/omni3d tools/train_net.py: each loaded file's
    info.id -> its source and the categories it does not annotate; cubercnn/data/dataset_mapper.py looks every
    image's dataset_id up there): with both splits loaded together, as that code does, every image's id is
    found and every WildBox species is a known category of it."""
    docs = [json.loads((built / "exports" / "omni3d" / f"WildBox_{split}.json").read_text())
            for split in ("train", "validation")]
    unknown_by_id, source_by_id = {}, {}
    classes = sorted({c["id"] for d in docs for c in d["categories"]})
    contiguous = {cid: k for k, cid in enumerate(classes)}  # register_and_store_model_metadata's id map
    for doc in docs:
        info = doc["info"]
        assert info["id"] == 1000 and info["source"] == "wildbox"
        source_by_id.setdefault(info["id"], info["source"])
        known = {contiguous[c["id"]] for c in doc["categories"]}  # Omni3D() sets known_category_ids so
        unknown_by_id[info["id"]] = set(range(len(classes) + 1)) - known
    for doc in docs:
        assert {im["dataset_id"] for im in doc["images"]} == {a["dataset_id"] for a in doc["annotations"]} == {1000}
        for image in doc["images"]:
            assert not unknown_by_id[image["dataset_id"]] & set(contiguous.values())
            assert source_by_id[image["dataset_id"]] == "wildbox"


# Stock Cube R-CNN's training filter (cubercnn/data/datasets.py is_ignore) on the fields it reads
# besides the 2D box size, with the thresholds of its Base.yaml (truncation 0.75, visibility 0.25).
def cube_rcnn_ignores(ann: dict) -> bool:
    return bool(ann["behind_camera"] or not ann["valid3D"] or min(ann["dimensions"]) <= 0
                or ann["lidar_pts"] == 0 or ann["segmentation_pts"] == 0 or ann["depth_error"] > 0.5
                or 0.75 <= ann["truncation"] or 0 <= ann["visibility"] <= 0.25)


def test_omni3d_training_fields_mean_what_the_release_files_mean(built):
    from benchwright.formats.omni3d import ANNOTATION_FIELDS

    rows = pq.ParquetDataset(sorted((built / "boxes").glob("*.parquet"))).read(
        columns=["box_id", "bbox2d_tight", "bbox2d_proj", "bbox_source", "truncation", "visibility",
                 "segmentation_pts", "support_points"]).to_pylist()
    # the measured values hold boxes Cube R-CNN would drop: no mask pixels, no support points
    assert any(r["segmentation_pts"] == 0 for r in rows) and any(r["support_points"] == 0 for r in rows)
    by_id = {stable_int_id(r["box_id"]): r for r in rows}
    anns = [a for split in ("train", "validation")
            for a in json.loads((built / "exports" / "omni3d" / f"WildBox_{split}.json").read_text())["annotations"]]
    assert len(anns) == len(rows)
    for a in anns:
        r = by_id[a["id"]]
        assert list(a) == list(ANNOTATION_FIELDS)
        assert not cube_rcnn_ignores(a), a["id"]
        # the release's meaning: the 2D target is the tight box, constants where the release has them
        assert a["bbox2D_trunc"] == a["bbox2D_tight"] == r["bbox2d_tight"] and a["bbox2D_proj"] == r["bbox2d_proj"]
        assert (a["truncation"], a["visibility"], a["lidar_pts"], a["depth_error"]) == (0, 1, 10, 0)
        sam3 = a["bbox_source"] == "sam3"
        assert a["segmentation_pts"] == (r["segmentation_pts"] if sam3 else -1) and (a["segmentation_pts"] > 0) == sam3
        # our measurements, in fields of their own
        assert a["support_points"] == r["support_points"]
        assert a["projected_truncation"] == r["truncation"]
        assert a["occlusion_visibility"] == (-1 if r["visibility"] is None else r["visibility"])


def test_the_card_lists_every_exported_field(built):
    from benchwright.card import markdown_text
    from benchwright.formats import omni3d
    from benchwright.loaders.wildbox import OMNI3D_FIELD_NOTES

    documented = {part.strip().split(".")[-1] for name, _, _ in OMNI3D_FIELD_NOTES for part in name.split(",")}
    sections = {name.split(".")[0] for name, _, _ in OMNI3D_FIELD_NOTES}
    assert set(omni3d.ANNOTATION_FIELDS) | set(omni3d.IMAGE_FIELDS) | set(omni3d.INFO_FIELDS) <= documented
    assert set(omni3d.DOCUMENT_KEYS) == sections
    card = (built / "README.md").read_text()
    for name, holds, release in OMNI3D_FIELD_NOTES:  # as the card writes text: "<split>" as "\<split>"
        assert markdown_text(f"| {name} | {holds} | {release} |") in card


def test_two_builds_are_byte_identical_in_memory_and_multiprocessing(source, built, tmp_path):
    again = build_wildbox(source, tmp_path / "mp", running_mode="multi_processing", num_workers=2)
    a, b = published_hashes(built), published_hashes(again)
    assert a == b
    assert any(p.endswith(".parquet") for p in a) and any(p.startswith("exports/") for p in a)


def test_info_prints_configs_and_counts(built, capsys):
    assert cli_main(["info", str(built)]) == 0
    out = capsys.readouterr().out
    for word in ("frames", "boxes", "segments", "train", "validation", "report.json"):
        assert word in out


def test_splits_are_stable_when_a_video_is_added(tmp_path_factory):
    """The run's planted build (``planted_wildbox``: the tiny source with a video added and a box moved, built
    where the tiny build was published, so that is its previous build): every video keeps its split, the new
    one gets one."""
    planted = planted_wildbox(tmp_path_factory)
    before = json.loads((planted["old"] / "_build" / "splits.json").read_text())["groups"]
    after = json.loads((planted["new"] / "_build" / "splits.json").read_text())["groups"]
    assert {v: after[v] for v in before} == before
    assert set(after) - set(before) == {planted["planted"]["new_video"]}


def test_wildbox_split_rule():
    videos = {f"v{i}": "elephant" for i in range(17)} | {"g1": "giraffe"} | {f"z{i}": "gazelle" for i in range(4)}
    splits = assign(videos, DATASET.split_rule)
    assert sum(s == "validation" for v, s in splits.items() if videos[v] == "elephant") == 3
    assert sum(s == "validation" for v, s in splits.items() if videos[v] == "gazelle") == 1
    assert splits["g1"] == "train"  # a single video cannot be on both sides
    grown = videos | {f"v{i}": "elephant" for i in range(17, 30)}
    regrown = assign(grown, DATASET.split_rule, previous=splits)
    assert {v: regrown[v] for v in splits} == splits
    assert sum(s == "validation" for v, s in regrown.items() if grown[v] == "elephant") == 6


def test_bev_footprint_is_the_hull_of_the_corners(built):
    from shapely.geometry import MultiPoint, Polygon

    boxes = pq.ParquetDataset(sorted((built / "boxes").glob("*.parquet"))).read(
        columns=["corners_cam", "bev_footprint"]).to_pylist()
    for b in boxes:
        hull = MultiPoint([(c[0], c[2]) for c in b["corners_cam"]]).convex_hull
        footprint = Polygon(b["bev_footprint"])
        assert footprint.area == pytest.approx(hull.area, rel=1e-9)
        assert footprint.symmetric_difference(hull).area < 1e-9 * hull.area


def test_a_perfect_predictor_scores_100_on_the_built_dataset(built, tmp_path):
    from benchwright.evaluation.wildbox import evaluate_paths

    rows = pq.ParquetDataset(sorted((built / "boxes").glob("validation-*.parquet"))).read().to_pylist()
    images = {}
    for b in rows:
        x1, y1, x2, y2 = b["bbox2d_proj"]
        images.setdefault(b["image_id"], []).append({
            "bbox": [x1, y1, x2 - x1, y2 - y1], "score": 1.0, "category_id": b["category_id"],
            "center_cam": b["center_cam"], "dimensions": b["dimensions"], "pose": b["R_cam"]})
    pred = tmp_path / "perfect.json"
    pred.write_text(json.dumps([{"image_id": k, "instances": v} for k, v in sorted(images.items())]))
    metrics = evaluate_paths(built, pred, split="validation")
    for key in ("ap2d@0.50", "ap_bev_voc11@0.25", "ap_bev_voc11@0.50", "ap3d@0.25", "ap3d", "rel_ap3d"):
        assert metrics[key]["macro"] == pytest.approx(100.0), key
    assert metrics["nhd_hungarian"]["macro"]["overall"] == pytest.approx(0.0, abs=1e-9)


def test_stored_rotations_are_exact(built):
    import numpy as np

    from benchwright.loaders.wildbox import boxes_arrays

    R = boxes_arrays(pq.ParquetDataset(sorted((built / "boxes").glob("*.parquet"))).read())["R_cam"]
    np.testing.assert_allclose(R @ np.swapaxes(R, 1, 2), np.broadcast_to(np.eye(3), R.shape), atol=1e-12)
    np.testing.assert_allclose(np.linalg.det(R), 1.0, atol=1e-12)


def test_refreshing_the_card_adds_results_and_keeps_validate_green(built, tmp_path):
    from benchwright.build import refresh_card
    from benchwright.pipelines.wildbox import DATASET

    copy = tmp_path / "wildbox"
    shutil.copytree(built, copy)
    (copy / "_build" / "baselines.md").write_text("| head | AP-BEV@0.25 |\n|---|---:|\n| trivial | 7.32 |\n")
    refresh_card(DATASET, copy)
    assert "## Baselines" in (copy / "README.md").read_text() and "| trivial | 7.32 |" in (copy / "README.md").read_text()
    assert cli_main(["validate", str(copy)]) == 0


def test_visibility_is_the_unoccluded_share_of_the_silhouette(built):
    import numpy as np

    from benchwright.formats import geometry
    from benchwright.loaders.wildbox import kitti_occlusion

    boxes = pq.ParquetDataset(sorted((built / "boxes").glob("*.parquet"))).read(
        columns=["frame_id", "corners_cam", "K", "image_width", "image_height", "visibility"]).to_pylist()
    frames: dict[str, list[dict]] = {}
    for b in boxes:
        frames.setdefault(b["frame_id"], []).append(b)
    got, want = [], []
    for rows in frames.values():
        corners = np.array([r["corners_cam"] for r in rows])
        want += geometry.occlusion_visibility(corners, np.array(rows[0]["K"]), rows[0]["image_width"],
                                              rows[0]["image_height"]).tolist()
        got += [r["visibility"] for r in rows]
    got, want = np.array(got, float), np.array(want, float)
    # recomputed from the stored (normalised) corners of the frame's published boxes: only they occlude
    np.testing.assert_allclose(got, want, atol=1e-6)
    assert np.all((got >= 0) & (got <= 1))
    assert (got < 0.9).any() and np.median(got) == 1.0  # herds overlap a little; most animals are free
    assert kitti_occlusion([1.0, 0.9, 0.89, 0.5, 0.49, None, float("nan")]).tolist() == [0, 0, 1, 1, 2, 3, 3]


def test_rotation_flips_are_reported_not_blocking(built):
    import numpy as np
    import pyarrow as pa

    from benchwright.formats import geometry
    from benchwright.validation.wildbox import rotation_flip_check

    report = json.loads((built / "_build" / "validation" / "report.json").read_text())
    text = json.dumps(report)
    assert "tracks turning > 90 deg" in text  # the tiny build's labels turn smoothly: reported, 0 flips
    # A track whose third label is turned half way round (a sign flip of two axes): two turning
    # pairs (into and out of the flip); another track in another segment with the same id is apart.
    R = geometry.rotation_from_ypr(np.column_stack([np.linspace(0, 0.2, 5), np.zeros(5), np.zeros(5)]))
    R[2] = R[2] @ np.diag([-1.0, 1.0, -1.0])
    table = pa.table({
        "box_id": [f"s/f{k}#1" for k in range(5)] + ["t/f0#1", "t/f1#1"],
        "segment_id": ["s"] * 5 + ["t"] * 2, "track_id": [1] * 7, "frame_index": [4, 0, 2, 3, 1, 0, 1],
        "R_cam": [r.tolist() for r in R[[4, 0, 2, 3, 1]]] + [R[0].tolist(), R[1].tolist()],
    })
    result = rotation_flip_check(table)
    assert result["ok"] and result["pairs"] == 5 and result["flipped_pairs"] == 2
    assert "s/f2#1" in result["detail"] or "s/f3#1" in result["detail"]


def test_ground_offset_measures_boxes_off_the_terrain(built, shrunk_and_lifted):
    import numpy as np

    boxes = pq.ParquetDataset(sorted((built / "boxes").glob("*.parquet"))).read(columns=["ground_offset"])
    offset = np.asarray(boxes["ground_offset"].to_numpy(zero_copy_only=False), float)
    assert np.isfinite(offset).all() and np.abs(offset).max() < 0.02  # synthetic animals stand on the ground
    # One track lifted half a box height along its own up axis (shrunk_and_lifted): its boxes float 0.5 H up,
    # and the build's label-quality report counts them (without refusing to publish).
    out, segment, tid = (shrunk_and_lifted[k] for k in ("built", "lifted_segment", "lifted_track"))
    lifted = pq.ParquetDataset(sorted((out / "boxes").glob("*.parquet"))).read(
        columns=["segment_id", "track_id", "ground_offset"]).to_pylist()
    mine = [b["ground_offset"] for b in lifted if b["segment_id"] == segment and b["track_id"] == tid]
    assert mine and all(abs(v - 0.5) < 0.02 for v in mine)
    assert max(abs(b["ground_offset"]) for b in lifted if b["segment_id"] != segment) < 0.02
    report = json.loads((out / "_build" / "validation" / "report.json").read_text())
    check = next(r for r in report["results"] if "off the ground plane" in r["check"])
    assert check["ok"] and check["floating"] == len(mine) and check["fragments"] == 0


def test_the_floor_applies_the_same_preparation_rules(source, built, tmp_path):
    """benchmarks/wildbox_floor.py (the benchmark's yardstick) keeps every box the build publishes, with
    the same mask extent or 2D box, cuboid and segment scale: it does the build's core work, not less."""
    import numpy as np

    from benchwright.benchmarks.wildbox_floor import default_categories, run

    summary = run(str(source), str(tmp_path / "floor"), default_categories())
    floor, scales = {}, {}
    for split in ("train", "validation"):
        doc = json.loads((tmp_path / "floor" / f"WildBox_{split}.json").read_text())
        path_of = {im["id"]: im["file_path"].rsplit(".", 1)[0] for im in doc["images"]}
        floor.update({(path_of[a["image_id"]], a["track_id"]): a for a in doc["annotations"]})
        scales.update(doc["info"]["scene_scales"])
    assert summary["annotations"] == len(floor)
    ours = [a for split in ("train", "validation")
            for a in json.loads((built / "exports" / "omni3d" / f"WildBox_{split}.json").read_text())["annotations"]]
    frame_of = {stable_int_id(fid): fid for fid in pq.ParquetDataset(
        sorted((built / "frames").glob("*.parquet"))).read(columns=["frame_id"])["frame_id"].to_pylist()}
    assert 0 < len(ours) <= len(floor) and len(floor) - len(ours) < 0.1 * len(floor)
    for a in ours:
        f = floor[(frame_of[a["image_id"]], a["track_id"])]
        assert f["bbox_source"] == a["bbox_source"]
        if a["bbox_source"] == "sam3":  # mask extents are integers: exactly equal
            assert (f["bbox2D_tight"], f["segmentation_pts"]) == (a["bbox2D_tight"], a["segmentation_pts"])
        # the build projects with the nearest exact rotation (R_ext R_world drifts off SO(3) by float noise)
        for key in ("bbox2D_tight", "center_cam", "dimensions", "bbox3D_cam"):
            np.testing.assert_allclose(f[key], a[key], rtol=1e-6, atol=1e-9)
    built_scales = {s["segment_id"]: s["scale_factor"] for s in pq.ParquetDataset(
        sorted((built / "segments").glob("*.parquet"))).read(columns=["segment_id", "scale_factor"]).to_pylist()}
    assert scales == built_scales


def test_the_build_benchmark_reports_every_ratio_and_puts_them_on_the_card(source, tmp_path, capsys):
    """The benchmark runs the build, the reference and the floor on one source, keeps its keys, adds
    the floor's, and the measured build's card shows the table (validate stays green)."""
    from benchwright.benchmarks import wildbox_build

    raw = tmp_path / "raw"  # a copy: the shared source is not ours to mark
    shutil.copytree(source, raw)
    (raw / ".complete").write_text("")
    wildbox_build.main(["--scale", "tiny", "--raw", str(raw), "--work", str(tmp_path), "--start-up-runs", "1"])
    result = json.loads(capsys.readouterr().out)
    for key in ("beam_wall_s", "beam_build_total_s", "beam_timings", "beam_peak_pss_mb", "reference_wall_s",
                "ratio", "same_rows", "floor_wall_s", "ratio_pipeline_to_floor", "ratio_build_to_floor"):
        assert key in result, key
    assert result["same_rows"] and result["floor_annotations"] >= result["cuboids"]
    # the ratios are of the unrounded times: within what rounding the printed times (to 0.01 s) allows
    def within_rounding(ratio, num, den):
        return (num - 0.005) / (den + 0.005) - 0.0005 <= ratio <= (num + 0.005) / (den - 0.005) + 0.0005

    assert within_rounding(result["ratio_pipeline_to_floor"], result["beam_wall_s"], result["floor_wall_s"])
    assert within_rounding(result["ratio_build_to_floor"], result["beam_build_total_s"], result["floor_wall_s"])
    phases = result["beam_phases_s"]
    assert set(phases) >= {"start_up", "pipeline", "reconcile", "statistics", "checks_wait", "exports_wait", "card"}
    # the exports' and the file checks' own time, in their children beside the statistics
    assert result["beam_timings"]["exports_s"] > 0 and result["beam_timings"]["checks_s"] > 0
    assert abs(sum(phases.values()) - result["beam_build_total_s"]) < 0.05
    assert {t: v["met"] for t, v in result["targets"].items()} == {
        t: result[t] <= v["at_most"] for t, v in result["targets"].items()}
    assert set(result["targets"]) == {"help_wall_s", "info_wall_s"}  # tiny scale: only the start-up targets
    assert result["start_up"]["info"]["runs"] == 1 and 0 < result["info_wall_s"] == result["start_up"]["info"]["wall_s"]
    built_here = tmp_path / "beam" / "wildbox"
    card = (built_here / "README.md").read_text()
    assert "| whole build |" in card and f"{result['ratio_build_to_floor']:.2f}x" in card
    assert cli_main(["validate", str(built_here)]) == 0


def test_exports_are_the_same_bytes_in_chunks_and_again_over_themselves(built, tmp_path, monkeypatch):
    """The Omni3D export converts its columns a chunk of rows at a time, and KITTI's files are written and
    linked by threads: a re-export with tiny chunks, over a previous export, writes the same bytes."""
    from benchwright.loaders import wildbox as loaders

    copy = tmp_path / "wildbox"
    shutil.copytree(built, copy)
    monkeypatch.setattr(loaders, "EXPORT_CHUNK_ROWS", 7)
    loaders.export_all(copy)
    exported = {k: v for k, v in published_hashes(copy).items() if k.startswith("exports/")}
    assert exported == {k: v for k, v in published_hashes(built).items() if k.startswith("exports/")}
    assert all(f.stat().st_nlink == 1 for f in (copy / "exports" / "images").rglob("*.jpg"))  # no stale links


def test_kitti_pngs_prepared_from_the_source_are_taken_and_are_the_same_bytes(source, built, tmp_path):
    """The PNGs a build encodes from the source's JPEGs while its pipeline runs are the export's own bytes:
    an export that takes every published frame's PNG from the prepared folder writes what one that encodes
    them writes (the build's, prepared or not), each PNG a file of its own; what no published frame has
    (a JPEG that is no frame's) stays."""
    from benchwright import prepared
    from benchwright.loaders import wildbox as loaders
    from benchwright.pipelines.wildbox import DATASET

    folder = tmp_path / "prepared"
    folder.mkdir()
    prepared.prepare(DATASET, str(source), str(folder))
    jpegs = {f.read_bytes() for f in source.rglob("*.jpg")}
    assert {f.name for f in folder.iterdir()} == {prepared.content_key(loaders.KITTI_PNG, d) for d in jpegs}
    stray = prepared.content_key(loaders.KITTI_PNG, b"no frame has these bytes")
    prepared.store(str(folder), stray, b"not a frame's")
    copy = tmp_path / "wildbox"
    shutil.copytree(built, copy)
    loaders.export_all(copy, prepared=prepared.Prepared(str(folder)))
    exported = {k: v for k, v in published_hashes(copy).items() if k.startswith("exports/")}
    assert exported == {k: v for k, v in published_hashes(built).items() if k.startswith("exports/")}
    published = {f.read_bytes() for f in (copy / "exports" / "images").rglob("*.jpg")}
    assert published and {f.name for f in folder.iterdir()} == (
        {prepared.content_key(loaders.KITTI_PNG, d) for d in jpegs - published} | {stray})
    assert all(f.stat().st_nlink == 1 for f in (copy / "exports" / "kitti" / "training" / "image_2").iterdir())
    assert not list(built.parent.glob(".prepared-exports-*"))  # the build removed its own


def test_kitti_images_are_the_frames_pixels_as_png_or_the_frames_as_links(built, tmp_path):
    """training/image_2/<name>.png decodes to the frame's pixels exactly (as datasets' PIL decodes the
    frames config's image); the jpg option hard-links the frames themselves."""
    import numpy as np
    from PIL import Image

    from benchwright.pipelines.wildbox import DATASET

    kitti = built / "exports" / "kitti"
    rows = [line.split() for line in (kitti / "frame_map.txt").read_text().splitlines()]
    assert [r[0] for r in rows] == [f"{n:06d}" for n in range(len(rows))] and len(rows) > 10
    for name, _, image, _ in rows[:: max(1, len(rows) // 8)]:
        with Image.open(kitti / "training" / "image_2" / f"{name}.png") as png, Image.open(built / image) as jpg:
            assert png.format == "PNG" and np.array_equal(np.asarray(png), np.asarray(jpg))
    copy = tmp_path / "wildbox"
    shutil.copytree(built, copy)
    DATASET.export(str(copy), ["--kitti-images", "jpg", "--out", str(tmp_path / "jpg")])
    for name, _, image, _ in rows:
        assert os.path.samefile(tmp_path / "jpg" / "training" / "image_2" / f"{name}.jpg", copy / image)
    for sub in ("label_2", "calib"):
        assert sorted(p.name for p in (tmp_path / "jpg" / "training" / sub).iterdir()) == sorted(
            p.name for p in (kitti / "training" / sub).iterdir())


def test_cuboid_checks_in_chunks_name_the_same_boxes(built, tmp_path, monkeypatch):
    """The geometry checks run a chunk of rows at a time (bounded memory): with 5-row chunks they find
    the same broken box, by id, as in one chunk."""
    from benchwright.pipelines.wildbox import DATASET
    from benchwright.validation import wildbox as checks

    copy, victim = damaged_box_copy(built, tmp_path, "depth", 7, lambda depth: depth + 1.0)
    whole = DATASET.validate_tables(str(copy))
    monkeypatch.setattr(checks, "CHECK_CHUNK_ROWS", 5)
    assert DATASET.validate_tables(str(copy)) == whole
    failed = [r for r in whole if not r["ok"]]
    assert [r["check"] for r in failed] == ["boxes: depth = centre z"] and victim in failed[0]["detail"]


def test_the_card_sample_is_the_frame_with_most_objects(built):
    """Counted from the boxes (only that frame's row is read), it is the frame whose objects list is
    longest, ties by smallest frame_id, and its drawing is that frame's image upscaled."""
    import cv2
    import numpy as np
    from benchwright.cards.wildbox import sample_frame_id, sample_frame_with_cuboids

    frames = pq.ParquetDataset(sorted((built / "frames").glob("*.parquet"))).read(
        columns=["frame_id", "objects", "width", "height"]).to_pylist()
    expected = min(frames, key=lambda r: (-len(r["objects"]), r["frame_id"]))
    assert len(expected["objects"]) > 1 and sample_frame_id(built) == expected["frame_id"]
    scale = max(1, 640 // expected["width"])
    assert sample_frame_with_cuboids(built).shape == (expected["height"] * scale, expected["width"] * scale, 3)
    assert np.array_equal(cv2.imread(str(built / "_build" / "figures" / "sample_frame.png")),
                          sample_frame_with_cuboids(built))


@pytest.mark.parametrize("rotation", ["strict", "yaw-only"])
def test_kitti_export_writes_the_boxes_as_from_canonical_does(built, tmp_path, rotation):
    """The synthetic drone views tilt every box, so the strict export writes no KITTI row: here some boxes are
    made yaw-only (representable) and one a mirror (refused by either export), and the label files are checked
    line by line against ``kitti.from_canonical`` box by box: strict writes the representable ones, yaw-only
    (the release's, lossy) every rotation with its pitch and roll dropped."""
    import numpy as np
    import pyarrow as pa

    from benchwright.formats import geometry
    from benchwright.errors import RecordError
    from benchwright.formats import kitti
    from benchwright.loaders import wildbox as loader
    from schemas.wildbox import SPECIES

    frames = loader.read_config(built, "frames", split="train",
                                columns=["frame_id", "image_id", "width", "height", "K", "split"])
    boxes = loader.read_config(built, "boxes", split="train", columns=loader.EXPORT_BOX_COLUMNS)
    n = boxes.num_rows
    tilted = loader.boxes_arrays(boxes)["R_cam"]
    flagged = np.arange(n) % 3 != 0
    R = np.where(flagged[:, None, None], geometry.yaw_only_rotation(np.linspace(-3.0, 3.0, n)), tilted)
    R[1] = -R[1]  # a reflection: not a rotation
    R_col = pa.array(R.tolist(), boxes.schema.field("R_cam").type)
    boxes = boxes.set_column(boxes.schema.get_field_index("R_cam"), "R_cam", R_col)
    boxes = boxes.set_column(boxes.schema.get_field_index("kitti_representable"), "kitti_representable",
                             pa.array(flagged))
    image_rel = {fid: f"exports/images/{fid}.png" for fid in frames["frame_id"].to_pylist()}
    for rel in image_rel.values():  # the label files are under test, the images only linked
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(b"")
    base = tmp_path / "kitti"
    root = loader.KittiRoot(base, tmp_path, frames["frame_id"].to_pylist(), image_rel, rotation, "png")
    summary = root.write_split("train", frames, boxes)
    root.finish()

    a = loader.boxes_arrays(boxes)
    occluded = loader.kitti_occlusion(boxes["visibility"].to_pylist())
    rows = boxes.select(["box_id", "frame_id", "truncation", "kitti_reason"]).to_pylist()
    want: dict[str, list[str]] = {}
    refused = {}
    for i, row in enumerate(rows):
        if not flagged[i] and rotation == "strict":
            refused[row["box_id"]] = row["kitti_reason"]
            continue
        try:
            obj = kitti.from_canonical(a["center_cam"][i], a["dimensions"][i], R[i], a["bbox2d_tight"][i],
                                       SPECIES[a["species"][i]], row["truncation"], int(occluded[i]),
                                       lossy=rotation == "yaw-only", locator=row["box_id"])
        except RecordError as err:
            refused[row["box_id"]] = err.reason
            continue
        want.setdefault(row["frame_id"], []).append(kitti.format_label_line(obj, loader.KITTI_DECIMALS) + "\n")
    names = dict(line.split()[:2] for line in (base / "frame_map.txt").read_text().splitlines())
    got = {names[f.stem]: f.read_text() for f in (base / "training" / "label_2").glob("*.txt")}
    assert got == {fid: "".join(want.get(fid, [])) for fid in names.values()}
    listed = {e["box_id"]: e["reason"] for e in map(json.loads, (base / "not_representable.jsonl").read_text().splitlines())}
    assert listed == refused and "not a rotation" in listed[rows[1]["box_id"]]
    written = sum(map(len, want.values()))
    assert summary["rows"] == written and summary["not_representable"] == len(refused)
    assert summary["rows_exact"] == int(flagged.sum()) - 1  # the mirror is flagged, and refused
    if rotation == "strict":
        assert written == int(flagged.sum()) - 1 and summary["rows_yaw_only"] == 0
    else:
        assert written == n - 1 and summary["rows_yaw_only"] == n - int(flagged.sum())
    assert (base / "ImageSets" / "train.txt").read_text().split() == sorted(names)


def annotated(source: Path, segment: str) -> tuple[dict, list]:
    """One raw segment through the pipeline's parser and annotation, without Beam: (tables, rejects)."""
    from benchwright.wildbox.stages import annotate_segment
    from benchwright.wildbox.sources import parse_wildbox_segment
    from benchwright.stage import Reject

    out = list(annotate_segment(parse_wildbox_segment(str(source), segment), "train"))
    return out[-1], [r for r in out if isinstance(r, Reject)]


def test_a_malformed_box_still_counts_for_its_segments_scale_then_goes_to_quarantine(source, tmp_path):
    """The release's rule: the scale is taken over every box of the segment with z > 0, whatever is wrong
    with it. One box with negative dimensions (quarantined) must not move the other boxes' centres."""
    import numpy as np

    raw = tmp_path / "raw"
    shutil.copytree(source, raw)
    segment = max(release_scales(raw), key=lambda s: sum(
        len(t["frames"]) for t in json.loads((raw / s / "vggt_results" / "tracking_summary.json").read_text())[
            "tracks"].values()))
    before, _ = annotated(raw, segment)
    summary = raw / segment / "vggt_results" / "tracking_summary.json"
    doc = json.loads(summary.read_text())
    track_id, track = sorted(doc["tracks"].items())[0]
    track["dimensions"][1] = [-abs(v) for v in track["dimensions"][1]]
    summary.write_text(json.dumps(doc))
    after, rejects = annotated(raw, segment)

    assert [r.reason for r in rejects if "not all positive" in r.reason] and any(
        f"#track={track_id},frame_index={track['frames'][1]}" in r.locator for r in rejects)
    scale = after["segments"]["scale_factor"][0].as_py()
    assert scale == pytest.approx(release_scales(raw)[segment][0], rel=1e-12)
    assert scale == before["segments"]["scale_factor"][0].as_py()
    kept = dict(zip(after["boxes"]["box_id"].to_pylist(), after["boxes"]["center_cam"].to_pylist()))
    was = dict(zip(before["boxes"]["box_id"].to_pylist(), before["boxes"]["center_cam"].to_pylist()))
    assert len(kept) == len(was) - 1 and all(np.array_equal(kept[b], was[b]) for b in kept)


# A plains zebra cut off by the bottom edge of a 640 x 360 frame (a default-scale synthetic draw, seed 0:
# DJI_20250204065514_0762_D/seg2, track 2, frame index 7): its SAM3 mask is the 8 x 4 px strip of its back
# that is in the image; its cuboid's projection, clipped to the image, is 56 x 12 px (IoU 0.048).
EDGE_CUT_BOX = {
    "center": [0.029891814714902726, 0.24549015058581589, 0.5331458033787649],
    "dims_whl": [0.02339821067979661, 0.051098824033129785, 0.0896434286765543],
    "R": [[-0.40059420677979335, 0.07318247213633386, -0.9133283129666377],
          [-0.4610963037553883, 0.8452843612250425, 0.2699713824306039],
          [0.7917793127870848, 0.5292812810220925, -0.3048718507865652]],
    "K": [[472.45854393822395, 0.0, 318.292947027027], [0.0, 473.6090742857143, 177.57164448979591], [0, 0, 1]],
    "mask_xyxy": (326, 355, 334, 359),
}


def test_an_animal_cut_off_by_the_frame_edge_is_compared_with_the_projections_part_in_the_image(tmp_path):
    import cv2
    import numpy as np

    seg = tmp_path / "raw" / "DJI_0001" / "seg1"
    (seg / "vggt_results").mkdir(parents=True)
    cv2.imwrite(str(seg / "frame_000001.jpg"), np.full((360, 640, 3), 90, np.uint8))
    mask = np.zeros((360, 640), np.uint8)
    x1, y1, x2, y2 = EDGE_CUT_BOX["mask_xyxy"]
    mask[y1:y2 + 1, x1:x2 + 1] = 255
    (seg / "sam3_masks" / "masks" / "obj_2").mkdir(parents=True)
    cv2.imwrite(str(seg / "sam3_masks" / "masks" / "obj_2" / "frame_000001.png"), mask)
    (seg / "vggt_results" / "cameras.json").write_text(json.dumps({"cameras": [{
        "frame_index": 0, "image_name": "frame_000001.jpg", "image_width": 640, "image_height": 360,
        "intrinsic": EDGE_CUT_BOX["K"], "extrinsic": [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]]}]}))
    (seg / "vggt_results" / "tracking_summary.json").write_text(json.dumps({"tracks": {"2": {
        "frames": [0], "centers": [EDGE_CUT_BOX["center"]], "dimensions": [EDGE_CUT_BOX["dims_whl"][::-1]],
        "rotation_matrices": [EDGE_CUT_BOX["R"]], "bbox_2d": [[-1, -1, -1, -1]], "class_name": "plains zebra"}}}))

    tables, rejects = annotated(tmp_path / "raw", "DJI_0001/seg1")
    assert rejects == []
    box = tables["boxes"].to_pylist()[0]
    assert box["bbox2d_tight"] == [326, 355, 334, 359] and box["truncation"] > 0.8
    assert np.round(box["bbox2d_proj"], 1).tolist() == [317.8, 347.2, 373.7, 359.0]  # the clipped projection
