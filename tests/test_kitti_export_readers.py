"""The WildBox KITTI export read by the code made for KITTI: mmdetection3d's KITTI converter's own reading
functions (verbatim from the mmdet3d wheel: tests/fixtures/kitti_readers/, and tests/fixtures/README.md for
why they are copied, not installed), the layout OpenPCDet's KittiDataset opens, and the KITTI devkit protocol
of ``benchwright evaluate wildbox --gt KITTI_DIR``."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from benchwright.cli import main as cli_main
from benchwright.schemas.wildbox import SPECIES
from tests.quality_builds import tiny_wildbox

READERS = Path(__file__).parent / "fixtures" / "kitti_readers"


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    return tiny_wildbox(tmp_path_factory)[1]


def mmdet3d_reader():
    spec = importlib.util.spec_from_file_location("mmdet3d_kitti_data_utils", READERS / "mmdet3d_kitti_data_utils.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def published_boxes(built: Path) -> dict[str, list[dict]]:
    rows = pq.ParquetDataset(sorted((built / "boxes").glob("*.parquet"))).read(columns=[
        "frame_id", "track_id", "species", "center_cam", "dimensions", "yaw_pitch_roll", "bbox2d_tight",
        "K", "image_width", "image_height"]).to_pylist()
    by_frame: dict[str, list[dict]] = {}
    for row in sorted(rows, key=lambda r: (r["frame_id"], r["track_id"])):
        by_frame.setdefault(row["frame_id"], []).append(row)
    return by_frame


def test_mmdetection3d_reads_every_box_of_the_export_as_the_boxes_config_holds_it(built):
    """mmdetection3d's get_kitti_image_info on each ImageSets list (as create_kitti_info_file calls it, without
    the point clouds a monocular dataset has not got): every frame's image shape, calibration and every box,
    rotation_y the box's yaw (the export is the release's yaw-only one)."""
    reader = mmdet3d_reader()
    root = built / "exports" / "kitti"
    boxes = published_boxes(built)
    frame_of = {line.split()[0]: line.split() for line in (root / "frame_map.txt").read_text().splitlines()}
    assert reader._read_imageset_file(str(root / "ImageSets" / "test.txt")) == []
    seen = 0
    for split, listed in (("train", "train"), ("validation", "val")):
        ids = reader._read_imageset_file(str(root / "ImageSets" / f"{listed}.txt"))
        infos = reader.get_kitti_image_info(str(root), training=True, velodyne=False, calib=True, image_ids=ids,
                                            relative_path=True, num_worker=2)
        assert len(infos) == len(ids) > 0
        for info in infos:
            name = reader.get_image_index_str(info["image"]["image_idx"])
            _, frame_id, _, frame_split = frame_of[name]
            assert frame_split == split and info["image"]["image_path"] == f"training/image_2/{name}.png"
            want = boxes.get(frame_id, [])
            if want:
                assert info["image"]["image_shape"].tolist() == [want[0]["image_height"], want[0]["image_width"]]
                np.testing.assert_allclose(info["calib"]["P2"][:3, :3], want[0]["K"])
            annos = info["annos"]
            assert annos["name"].tolist() == [SPECIES[b["species"]] for b in want]
            W, H, L = np.array([b["dimensions"] for b in want]).reshape(-1, 3).T
            center = np.array([b["center_cam"] for b in want]).reshape(-1, 3)
            # mmdetection3d's dimensions are (l, h, w); its location the bottom centre
            np.testing.assert_allclose(annos["dimensions"], np.c_[L, H, W], atol=5e-7)
            np.testing.assert_allclose(annos["location"], center + np.c_[0 * H, H / 2, 0 * H], atol=5e-7)
            np.testing.assert_allclose(annos["rotation_y"], [b["yaw_pitch_roll"][0] for b in want], atol=5e-7)
            np.testing.assert_allclose(annos["bbox"], np.array([b["bbox2d_tight"] for b in want]).reshape(-1, 4),
                                       atol=0.005)
            assert len(annos["difficulty"]) == len(want)
            seen += len(want)
    assert seen == sum(map(len, boxes.values())) > 100  # every published box, none refused


def test_the_layout_openpcdets_kitti_dataset_opens(built):
    """OpenPCDet's KittiDataset (pcdet/datasets/kitti/kitti_dataset.py) reads ImageSets/<split>.txt, then
    training/image_2/<id>.png (skimage), training/label_2/<id>.txt and training/calib/<id>.txt, whose 3rd to
    6th lines its calibration_kitti reads as P2, P3, R0_rect and Tr_velo_to_cam by position."""
    from skimage import io

    root = built / "exports" / "kitti"
    for listed in ("train", "val"):
        ids = [x.strip() for x in open(root / "ImageSets" / f"{listed}.txt").readlines()]
        assert ids and all(len(i) == 6 and i.isdigit() for i in ids)
        for idx in ids[:: max(1, len(ids) // 5)]:
            assert io.imread(root / "training" / "image_2" / ("%s.png" % idx)).ndim == 3
            assert (root / "training" / "label_2" / ("%s.txt" % idx)).exists()
            lines = (root / "training" / "calib" / ("%s.txt" % idx)).read_text().splitlines()
            assert [line.split(" ")[0] for line in lines[2:6]] == ["P2:", "P3:", "R0_rect:", "Tr_velo_to_cam:"]


def test_the_kitti_export_is_the_releases_lossy_one_with_its_loss_measured(built):
    """Every box is a KITTI row (the drone views pitch every synthetic box, so a strict export holds none:
    before, the build wrote 0 rows); what the rows drop is measured and on the card."""
    root = built / "exports" / "kitti"
    rows = sum(len(f.read_text().splitlines()) for f in (root / "training" / "label_2").glob("*.txt"))
    n = sum(map(len, published_boxes(built).values()))
    assert rows == n > 100
    loss = json.loads((root / "yaw_only_loss.json").read_text())
    assert loss["boxes"] == n and loss["exact"] == 0 and loss["yaw_only"] == n
    iou = loss["iou_3d_full_vs_yaw_only"]
    assert iou["boxes"] == n and 0 < iou["q0"] <= iou["q50"] <= iou["q100"] < 1
    assert loss["pitch_deg"]["q50"] > 1 and loss["rotation_dropped_deg"]["q0"] > 0
    manifest = json.loads((built / "_build" / "manifest.json").read_text())
    assert manifest["exports"]["kitti"]["rows"] == n and manifest["exports"]["kitti"]["rows_exact"] == 0
    card = (built / "README.md").read_text()
    assert "3D IoU, full vs yaw-only box" in card and f"writes {n:,} rows" in card


def test_the_strict_export_is_an_option_written_elsewhere(built, tmp_path, capsys):
    out = tmp_path / "strict"
    assert cli_main(["export", str(built), "--kitti-rotation", "strict"]) == 2  # not over the build's own
    assert "--out" in capsys.readouterr().err
    assert cli_main(["export", str(built), "--kitti-rotation", "strict", "--kitti-images", "jpg",
                     "--out", str(out)]) == 0
    summary = json.loads(capsys.readouterr().out)
    n = sum(map(len, published_boxes(built).values()))
    assert summary["kitti"]["rotation"] == "strict" and summary["kitti"]["rows"] == 0
    assert summary["kitti"]["not_representable"] == n
    listed = [json.loads(line) for line in (out / "not_representable.jsonl").read_text().splitlines()]
    assert len(listed) == n and all("pitch" in e["reason"] for e in listed)
    assert not (out / "yaw_only_loss.json").exists()


def test_evaluate_reads_the_export_as_a_kitti_folder(built, tmp_path, capsys):
    """``benchwright evaluate wildbox --gt exports/kitti`` scores the ImageSets list of the split (val for
    validation) with the KITTI devkit protocol: the labels themselves, given scores, are a perfect result."""
    root = built / "exports" / "kitti"
    val = (root / "ImageSets" / "val.txt").read_text().split()
    results = tmp_path / "results"
    results.mkdir()
    scores = iter(np.linspace(0.99, 0.01, 10_000))  # distinct: the devkit samples precision at the scores
    for name in val:
        lines = (root / "training" / "label_2" / f"{name}.txt").read_text().splitlines()
        (results / f"{name}.txt").write_text("".join(f"{line} {next(scores):.4f}\n" for line in lines))
    out = tmp_path / "metrics.json"
    assert cli_main(["evaluate", "wildbox", "--gt", str(root), "--pred", str(results), "--out", str(out)]) == 0
    metrics = json.loads(out.read_text())["kitti"]
    assert metrics["n_frames"] == len(val) and metrics["n_gt"] == metrics["n_pred"] > 0
    # a perfect result: the devkit samples precision at one score per true positive, one per 1/40 of recall,
    # so with n < 41 ground truth boxes its AP40 is (n - 1) / 40 (every sampled precision is 1)
    scored = [m for c in metrics["classes"].values() for k in ("2d", "bev", "3d") for m in c[k].values() if m]
    assert scored and all(m["ap40"] == pytest.approx(100 * min(m["n_gt"] - 1, 40) / 40) for m in scored)
    capsys.readouterr()
    # the built folder: its KITTI export is scored too, over the same frames
    assert cli_main(["evaluate", "wildbox", "--gt", str(built), "--pred", str(results), "--out", str(out)]) == 0
    assert json.loads(out.read_text())["kitti"]["n_frames"] == len(val)
