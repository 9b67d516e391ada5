"""The synthetic WildBox source writes the real raw layout, with geometry a parser can trust."""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import cv2
import numpy as np
import pytest

from benchwright.schemas.wildbox import SPECIES, SPECIES_DIMENSIONS_M, canonical_species
from benchwright.wildbox.synth import (
    RELEASE_VIDEOS_PER_SPECIES,
    SCALES,
    VGGT_RESOLUTION,
    plan_source,
    write_source,
)

CORNER_SIGNS = np.array([[-1, -1, -1], [1, -1, -1], [1, 1, -1], [-1, 1, -1],
                         [-1, -1, 1], [1, -1, 1], [1, 1, 1], [-1, 1, 1]]) / 2


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    parent = tmp_path_factory.mktemp("wildbox_tiny")
    calls = []
    summary = write_source(parent / "src", "tiny", seed=0, progress=lambda d, t, unit: calls.append((d, t)))
    return parent / "src", summary, calls


def _segments(root: Path) -> list[Path]:
    return sorted(p for p in root.glob("*/*") if p.is_dir())


def _load(seg: Path):
    cameras = json.loads((seg / "vggt_results" / "cameras.json").read_text())["cameras"]
    tracks = json.loads((seg / "vggt_results" / "tracking_summary.json").read_text())["tracks"]
    return cameras, tracks


def _boxes(root: Path):
    """Parse every box the way the preparation does: join frames through cameras.json, rescale K
    to the real frame size, move the box into the camera frame."""
    for seg in _segments(root):
        cameras, tracks = _load(seg)
        by_index = {c["frame_index"]: c for c in cameras}
        height, width = cv2.imread(str(seg / cameras[0]["image_name"])).shape[:2]
        for tid, track in tracks.items():
            for i, f in enumerate(track["frames"]):
                cam = by_index[f]
                K = np.array(cam["intrinsic"], dtype=float)
                K[0] *= width / cam["image_width"]
                K[1] *= height / cam["image_height"]
                ext = np.array(cam["extrinsic"], dtype=float)
                R_ext, t_ext = ext[:, :3], ext[:, 3]
                center_w = np.array(track["centers"][i])
                R_w = np.array(track["rotation_matrices"][i])
                dims = np.array(track["dimensions"][i])
                corners_w = center_w + (R_w @ (CORNER_SIGNS * dims).T).T
                yield {
                    "seg": seg, "tid": tid, "frame_index": f, "image_name": cam["image_name"],
                    "width": width, "height": height, "K": K,
                    "center_cam": R_ext @ center_w + t_ext, "R_cam": R_ext @ R_w,
                    "corners_cam": (R_ext @ corners_w.T).T + t_ext, "dims": dims,
                    "bbox_2d": track["bbox_2d"][i],
                }


def _project(K, pts):
    uvw = (K @ np.atleast_2d(pts).T).T
    return uvw[:, :2] / uvw[:, 2:]


def _tree_digest(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_tree_has_the_documented_files(tiny):
    root, summary, _ = tiny
    assert sorted(p.name for p in root.parent.iterdir()) == ["src"]          # nothing outside out_dir
    videos = sorted(root.iterdir())
    assert len(videos) == summary["videos"] == 12
    for video in videos:
        assert video.is_dir() and re.fullmatch(r"DJI_\d{14}_\d{4}_D", video.name)
        assert all(re.fullmatch(r"seg\d+", s.name) for s in video.iterdir())
    segs = _segments(root)
    assert len(segs) == summary["segments"] == 18
    for seg in segs:
        meta = json.loads((seg / "metadata.json").read_text())
        assert set(meta) == {"start_time", "end_time", "frame_numbers"}
        assert meta["start_time"] < meta["end_time"]
        cameras, tracks = _load(seg)
        assert len(meta["frame_numbers"]) == len(cameras)
        sam = json.loads((seg / "sam3_masks" / "metadata.json").read_text())
        assert canonical_species(sam["text_prompt"]) in SPECIES
        assert sorted(sam["object_ids"]) == sorted(int(t) for t in tracks)
        assert (seg / "vggt_results" / "point_cloud.ply").is_file()
        assert not (seg / "vggt_results" / "depth_maps.npz").exists()
        image_stems = {Path(c["image_name"]).stem for c in cameras}
        for mask in (seg / "sam3_masks" / "masks").rglob("*.png"):
            assert re.fullmatch(r"obj_\d+", mask.parent.name) and int(mask.parent.name[4:]) in sam["object_ids"]
            assert mask.stem in image_stems


def test_cameras_and_tracking_summary_schema(tiny):
    root, _, _ = tiny
    species_of_video: dict[str, set] = {}
    for seg in _segments(root):
        cameras, tracks = _load(seg)
        assert [c["frame_index"] for c in cameras] == list(range(len(cameras)))
        for cam in cameras:
            assert set(cam) == {"frame_index", "image_name", "image_width", "image_height", "intrinsic", "extrinsic"}
            assert (cam["image_width"], cam["image_height"]) == VGGT_RESOLUTION
            K = np.array(cam["intrinsic"])
            assert K.shape == (3, 3) and np.allclose(K[2], [0, 0, 1]) and K[0, 0] > 0 and K[1, 1] > 0
            assert 0 < K[0, 2] < VGGT_RESOLUTION[0] and 0 < K[1, 2] < VGGT_RESOLUTION[1]
            ext = np.array(cam["extrinsic"])
            assert ext.shape == (3, 4)
            assert np.allclose(ext[:, :3] @ ext[:, :3].T, np.eye(3), atol=1e-6)
        # VGGT's world frame is the first camera's
        assert np.allclose(np.array(cameras[0]["extrinsic"]), np.hstack([np.eye(3), np.zeros((3, 1))]), atol=1e-7)
        for tid, track in tracks.items():
            assert int(tid) >= 0
            n = len(track["frames"])
            assert n >= 1 and track["frames"] == list(range(track["frames"][0], track["frames"][0] + n))
            assert set(track["frames"]) <= {c["frame_index"] for c in cameras}
            assert np.array(track["centers"]).shape == (n, 3)
            dims = np.array(track["dimensions"])
            assert dims.shape == (n, 3) and np.all(dims > 0)
            rots = np.array(track["rotation_matrices"])
            assert rots.shape == (n, 3, 3)
            assert np.allclose(np.einsum("nij,nkj->nik", rots, rots), np.eye(3), atol=1e-6)
            assert np.allclose(np.linalg.det(rots), 1.0, atol=1e-6)
            bb = np.array(track["bbox_2d"])
            assert bb.shape == (n, 4)
            valid = np.all(bb >= 0, axis=1)
            assert np.all(bb[~valid] == -1)
            assert np.all(bb[valid, 0] < bb[valid, 2]) and np.all(bb[valid, 1] < bb[valid, 3])
            assert np.all(bb[valid, 2] <= VGGT_RESOLUTION[0]) and np.all(bb[valid, 3] <= VGGT_RESOLUTION[1])
            assert len(track["confidences"]) == n
            species_of_video.setdefault(seg.parent.name, set()).add(canonical_species(track["class_name"]))
    assert all(len(s) == 1 and None not in s for s in species_of_video.values())   # one species per video


def test_every_species_has_two_videos_and_summary_matches_the_tree(tiny):
    root, summary, calls = tiny
    per_species: dict[str, set] = {}
    frames = cuboids = masks = 0
    for seg in _segments(root):
        cameras, tracks = _load(seg)
        frames += len(list(seg.glob("frame_*.jpg")))
        cuboids += sum(len(t["frames"]) for t in tracks.values())
        masks += len(list((seg / "sam3_masks" / "masks").rglob("*.png")))
        for t in tracks.values():
            per_species.setdefault(canonical_species(t["class_name"]), set()).add(seg.parent.name)
    assert {sp: len(v) for sp, v in per_species.items()} == {sp: 2 for sp in SPECIES}
    assert frames == summary["frames"] == SCALES["tiny"].frames
    assert cuboids == summary["cuboids"] == SCALES["tiny"].cuboids
    assert masks == summary["masks_written"] == cuboids - summary["masks_missing"]
    assert {sp: r["videos"] for sp, r in summary["per_species"].items()} == {sp: 2 for sp in SPECIES}
    assert calls[-1] == (frames, frames) and [d for d, _ in calls] == sorted(d for d, _ in calls)


def test_frame_files_are_one_based_and_full_resolution(tiny):
    root, summary, _ = tiny
    width, height = summary["image_size"]
    for seg in _segments(root):
        cameras, _ = _load(seg)
        assert [c["image_name"] for c in cameras] == [f"frame_{k + 1:06d}.jpg" for k in range(len(cameras))]
        assert not (seg / "frame_000000.jpg").exists()
        assert sorted(p.name for p in seg.glob("frame_*.jpg")) == [c["image_name"] for c in cameras]
        assert cv2.imread(str(seg / cameras[0]["image_name"])).shape == (height, width, 3)
        for mask in (seg / "sam3_masks" / "masks").rglob("*.png"):
            m = cv2.imread(str(mask), cv2.IMREAD_UNCHANGED)
            assert m.shape == (height, width) and set(np.unique(m)) <= {0, 255} and m.any()


def test_projected_centres_land_in_the_frame(tiny):
    root, _, _ = tiny
    inside = total = 0
    for box in _boxes(root):
        assert box["center_cam"][2] > 0
        u, v = _project(box["K"], box["center_cam"])[0]
        inside += 0 <= u < box["width"] and 0 <= v < box["height"]
        total += 1
    assert inside / total >= 0.9


def test_masks_lie_inside_and_are_tighter_than_the_projected_cuboid(tiny):
    root, _, _ = tiny
    diffs, outside = [], 0
    for box in _boxes(root):
        path = box["seg"] / "sam3_masks" / "masks" / f"obj_{box['tid']}" / (Path(box["image_name"]).stem + ".png")
        if not path.exists():
            continue
        ys, xs = np.nonzero(cv2.imread(str(path), cv2.IMREAD_GRAYSCALE))
        tight = np.array([xs.min(), ys.min(), xs.max(), ys.max()], dtype=float)
        uv = _project(box["K"], box["corners_cam"])
        proj = np.array([uv[:, 0].min(), uv[:, 1].min(), uv[:, 0].max(), uv[:, 1].max()])
        proj = np.clip(proj, 0, [box["width"] - 1, box["height"] - 1] * 2)
        outside += bool(np.any(tight[:2] < proj[:2] - 1.5) or np.any(tight[2:] > proj[2:] + 1.5))
        diffs.append(np.abs(tight - proj).max())
    assert len(diffs) > 100
    assert outside == 0                                   # the silhouette is inside its cuboid
    assert np.median(diffs) > 2.0                         # ... and visibly tighter than the cuboid's box
    assert np.mean(np.array(diffs) > 1.0) > 0.8


def test_camera_frame_rotations_carry_pitch_and_roll(tiny):
    root, _, _ = tiny
    rotations = [box["R_cam"] for box in _boxes(root)]
    # yaw-only about the camera y axis would keep R_cam[1, 1] = +-1
    tilted = [abs(R[1, 1]) < np.cos(np.radians(5)) for R in rotations]
    assert np.mean(tilted) > 0.9


def test_missing_masks_and_invalid_bbox_2d(tiny):
    root, summary, _ = tiny
    missing = invalid = total = 0
    for box in _boxes(root):
        path = box["seg"] / "sam3_masks" / "masks" / f"obj_{box['tid']}" / (Path(box["image_name"]).stem + ".png")
        missing += not path.exists()
        invalid += min(box["bbox_2d"]) < 0
        total += 1
    assert missing == summary["masks_missing"] and invalid == summary["bbox_2d_invalid"]
    assert 0.005 < missing / total < 0.15
    assert 0.005 < invalid / total < 0.15


def test_animals_move_smoothly_on_a_ground_plane_with_species_sizes(tiny):
    root, _, _ = tiny
    for seg in _segments(root):
        _, tracks = _load(seg)
        bottoms, ratios = [], []
        for track in tracks.values():
            centers = np.array(track["centers"])
            dims = np.array(track["dimensions"])
            rots = np.array(track["rotation_matrices"])
            assert np.allclose(dims, dims[0])                        # one animal, one size
            steps = np.linalg.norm(np.diff(centers, axis=0), axis=1)
            assert np.all(steps < 0.5 * dims[0, 0])                  # smooth: under half a body length per frame
            bottoms.append(centers + rots[:, :, 1] * dims[:, 1:2] / 2)   # local y is down, extent = height
            W, H, L = SPECIES_DIMENSIONS_M[canonical_species(track["class_name"])]
            ratios.append(dims[0] / np.array([L, H, W]))
        ratios = np.array(ratios)
        assert ratios.max() / ratios.min() < (1.1 / 0.9) ** 2 * 1.001   # +-10% around one segment scale
        pts = np.concatenate(bottoms)
        centred = pts - pts.mean(axis=0)
        _, sv, vt = np.linalg.svd(centred)
        assert sv[2] / sv[0] < 1e-4                                  # all feet on one plane
        normal = vt[2]
        # the plane is not the camera's image plane: the ground is seen obliquely
        assert 0.2 < abs(normal[2]) < 0.95


def test_point_cloud_holds_the_ground_in_world_coordinates(tiny):
    o3d = pytest.importorskip("open3d")
    root, _, _ = tiny
    for seg in _segments(root)[:6]:
        _, tracks = _load(seg)
        bottoms = np.concatenate([np.array(t["centers"]) + np.array(t["rotation_matrices"])[:, :, 1]
                                  * np.array(t["dimensions"])[:, 1:2] / 2 for t in tracks.values()])
        origin = bottoms.mean(axis=0)
        normal = np.linalg.svd(bottoms - origin)[2][2]
        cloud = o3d.io.read_point_cloud(str(seg / "vggt_results" / "point_cloud.ply"))
        pts = np.asarray(cloud.points)
        assert len(pts) > 100 and cloud.has_colors()
        height = np.abs((pts - origin) @ normal)
        body = max(np.array(t["dimensions"][0]).max() for t in tracks.values())
        assert np.median(height) < 0.1 * body                   # most points are on the ground plane
        assert np.mean(height > 0.2 * body) > 0.01               # some are on the animals


def test_segments_have_different_reconstruction_scales(tiny):
    root, summary, _ = tiny
    estimates = []
    for seg in _segments(root):
        _, tracks = _load(seg)
        ratio = [t["dimensions"][0][0] / SPECIES_DIMENSIONS_M[canonical_species(t["class_name"])][2]
                 for t in tracks.values()]
        estimates.append(float(np.median(ratio)))
        true = summary["scene_scales"][f"{seg.parent.name}/{seg.name}"]
        assert 0.85 < estimates[-1] / true < 1.15
    assert max(estimates) / min(estimates) > 20
    assert len({round(e, 6) for e in estimates}) == len(estimates)


def test_same_seed_is_byte_identical_and_another_seed_differs(tiny, tmp_path, tmp_path_factory):
    from tests.quality_builds import tiny_wildbox

    root, _, _ = tiny
    again = tiny_wildbox(tmp_path_factory)[0]  # the shared tiny source: seed 0 again, written apart (and without progress)
    write_source(tmp_path / "other", "tiny", seed=1)
    reference = _tree_digest(root)
    assert _tree_digest(again) == reference
    other = _tree_digest(tmp_path / "other")
    assert other != reference
    frames = lambda digest: {h for name, h in digest.items() if name.endswith(".jpg")}   # noqa: E731
    assert not frames(other) & frames(reference)


def test_refuses_a_non_empty_output_folder_and_unknown_scales(tmp_path):
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "keep.txt").write_text("x")
    with pytest.raises(FileExistsError):
        write_source(tmp_path / "busy", "tiny")
    assert sorted(p.name for p in (tmp_path / "busy").iterdir()) == ["keep.txt"]
    with pytest.raises(ValueError):
        write_source(tmp_path / "new", "huge")


@pytest.mark.parametrize("seed", [0, 1, 12345])
def test_full_plan_has_the_release_totals(seed):
    plan = plan_source("full", seed)
    totals = plan.totals()
    assert (totals["videos"], totals["segments"], totals["frames"], totals["cuboids"]) == (64, 345, 59_758, 237_505)
    assert {sp: r["videos"] for sp, r in totals["per_species"].items()} == RELEASE_VIDEOS_PER_SPECIES
    cfg = SCALES["full"]
    assert len({v.name for v in plan.videos}) == 64
    for seg in plan.segments():
        assert cfg.frames_per_segment[0] <= seg.frames <= cfg.frames_per_segment[1]
        assert cfg.animals_per_segment[0] <= len(seg.tracks) <= cfg.animals_per_segment[1]
        ids = [t.track_id for t in seg.tracks]
        assert len(set(ids)) == len(ids)
        assert all(0 <= t.start < t.stop <= seg.frames for t in seg.tracks)
        assert len(seg.frame_numbers) == seg.frames
    # species are unbalanced like the release: gazelle herds outnumber giraffes per video
    per_video = {sp: r["cuboids"] / r["videos"] for sp, r in totals["per_species"].items()}
    assert per_video["gazelle"] > 3 * per_video["giraffe"]


@pytest.mark.parametrize("scale", sorted(SCALES))
def test_every_scale_plan_hits_its_declared_totals(scale):
    cfg = SCALES[scale]
    totals = plan_source(scale, 7).totals()
    assert (totals["videos"], totals["segments"], totals["frames"], totals["cuboids"]) == (
        cfg.videos, cfg.segments, cfg.frames, cfg.cuboids)
    assert all(r["videos"] >= 2 for r in totals["per_species"].values())


def test_label_defects_change_only_the_labels_and_the_build_reports_them(tiny, tmp_path):
    from tests.wildbox_helpers import build_wildbox

    root, clean_summary, _ = tiny
    defects = write_source(tmp_path / "defects", "tiny", seed=0, label_defects=True)
    assert clean_summary["defect_flips"] == clean_summary["defect_legs"] == 0
    assert defects["defect_flips"] > 0 and defects["defect_legs"] == defects["cuboids"]
    clean, bad = _tree_digest(root), _tree_digest(tmp_path / "defects")
    changed = {p for p in clean if clean[p] != bad[p]}
    assert set(clean) == set(bad) and changed  # frames, masks, cameras, clouds: untouched
    assert all(p.endswith("vggt_results/tracking_summary.json") for p in changed)

    out = build_wildbox(tmp_path / "defects", tmp_path / "out")  # defects are reported, not refused
    report = json.loads((out / "_build" / "validation" / "report.json").read_text())
    flips = next(r for r in report["results"] if "tracks turning" in r["check"])
    ground = next(r for r in report["results"] if "off the ground plane" in r["check"])
    # a flip inside a track turns twice (into and out of it), at a track end once
    assert defects["defect_flips"] // 2 <= flips["flipped_pairs"] <= 2 * defects["defect_flips"]
    assert 0.11 <= ground["median"] <= 0.14  # the legless boxes of the release
    assert ground["floating"] >= 0.9 * ground["boxes"]
    card = (out / "README.md").read_text()  # the card carries the same findings
    assert f"{flips['flipped_pairs']} of {flips['pairs']} consecutive pairs" in card
    assert f"median {ground['median']:.3f} H over {ground['boxes']} boxes" in card
