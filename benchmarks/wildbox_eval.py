"""Wall time of every WildBox metric on a validation-sized split.

Synthesises, in memory, a ground truth shaped like WildBox validation (~67,000 cuboids over
~13,800 images, 1-12 per image, herds of one species per segment, drone views with full
rotations, depths normalised so each segment's median z is 1) and jittered predictions
(depth errors dominate, some misses, false positives and wrong species), then runs
``evaluation.wildbox.evaluate`` and prints ONE JSON object: seconds per metric and in total,
the sizes, and the headline metrics.

    python -m benchwright.benchmarks.wildbox_eval [--images 13800] [--seed 0] [--gt OUT/wildbox]

``--gt`` evaluates jittered predictions of a real build's validation split instead.
"""
from __future__ import annotations

import json
import platform
import time

import numpy as np

from benchwright.arguments import ArgumentParser
from benchwright.formats import geometry
from benchwright.schemas import wildbox as schema

# Share of validation boxes per species (very unbalanced, like the release).
SPECIES_WEIGHTS = np.array([0.03, 0.05, 0.17, 0.20, 0.15, 0.40])
IMAGE_W, IMAGE_H = 1920, 1080


def _rot_x(a):
    c, s = np.cos(a), np.sin(a)
    o, i = np.zeros_like(a), np.ones_like(a)
    return np.stack([np.stack([i, o, o], -1), np.stack([o, c, -s], -1), np.stack([o, s, c], -1)], -2)


def _small_rotations(rng, n, sigma):
    """(n, 3, 3) rotations by angle ~ N(0, sigma) about random axes (Rodrigues)."""
    axis = rng.normal(size=(n, 3))
    axis /= np.linalg.norm(axis, axis=1, keepdims=True)
    ang = rng.normal(0, sigma, n)
    Kx = np.zeros((n, 3, 3))
    Kx[:, 0, 1], Kx[:, 0, 2], Kx[:, 1, 2] = -axis[:, 2], axis[:, 1], -axis[:, 0]
    Kx -= np.swapaxes(Kx, 1, 2)
    s, c = np.sin(ang)[:, None, None], np.cos(ang)[:, None, None]
    return np.eye(3)[None] + s * Kx + (1 - c) * Kx @ Kx


def _project(corners, K):
    uv = corners @ K.T
    uv = uv[..., :2] / uv[..., 2:3]
    box = np.concatenate([uv.min(axis=1), uv.max(axis=1)], axis=1)
    return np.clip(box, 0, [IMAGE_W - 1, IMAGE_H - 1, IMAGE_W - 1, IMAGE_H - 1])


def synth_ground_truth(n_images: int = 13_800, seed: int = 0, frames_per_segment: int = 168,
                       mean_boxes: float = 4.85) -> dict[str, np.ndarray]:
    """Ground truth arrays (the keys ``load_ground_truth`` returns) for ``n_images`` images."""
    rng = np.random.default_rng(seed)
    counts = np.clip(rng.poisson(mean_boxes - 1.0, n_images) + 1, 1, 12)
    n = int(counts.sum())
    img = np.repeat(np.arange(n_images), counts)
    seg = img // frames_per_segment
    n_seg = int(seg.max()) + 1
    seg_species = rng.choice(len(schema.SPECIES), n_seg, p=SPECIES_WEIGHTS)
    seg_pitch = rng.uniform(0.35, 1.2, n_seg)  # drone camera pitch (rad)
    seg_metres = rng.uniform(25, 80, n_seg)  # median range in metres -> normalisation
    seg_yaw = rng.uniform(-np.pi, np.pi, n_seg)
    cls = seg_species[seg]
    # 5% of boxes are a second species in the shot.
    other = rng.random(n) < 0.05
    cls[other] = rng.choice(len(schema.SPECIES), other.sum(), p=SPECIES_WEIGHTS)
    dims_m = np.array([schema.SPECIES_DIMENSIONS_M[s] for s in schema.SPECIES])[cls]
    dims = dims_m * rng.uniform(0.8, 1.2, (n, 3)) / seg_metres[seg][:, None]
    # Herd: each image's animals near a herd centre, depth ~ lognormal about 1.
    herd_z = np.exp(rng.normal(0, 0.25, n_images))[img]
    z = herd_z * np.exp(rng.normal(0, 0.08, n))
    fx = 1500.0
    K = np.array([[fx, 0, IMAGE_W / 2], [0, fx, IMAGE_H / 2], [0, 0, 1.0]])
    u = np.clip(rng.uniform(150, IMAGE_W - 150, n_images)[img] + rng.normal(0, 120, n), 60, IMAGE_W - 60)
    v = np.clip(rng.uniform(150, IMAGE_H - 150, n_images)[img] + rng.normal(0, 80, n), 60, IMAGE_H - 60)
    center = np.column_stack([(u - K[0, 2]) * z / fx, (v - K[1, 2]) * z / fx, z])
    yaw = seg_yaw[seg] + rng.normal(0, 0.6, n)  # herds roughly aligned
    R = _rot_x(-seg_pitch[seg]) @ geometry.yaw_only_rotation(yaw) @ _small_rotations(rng, n, 0.08)
    corners = geometry.corners(center, dims, R)
    proj = _project(corners, K)
    w, h = proj[:, 2] - proj[:, 0], proj[:, 3] - proj[:, 1]
    shrink = rng.uniform(0.03, 0.12, (n, 4)) * np.column_stack([w, h, -w, -h])
    tight = proj + shrink
    return {
        "image_id": (100_000 + img).astype(np.int64),
        "category_id": (1000 + cls).astype(np.int64),
        "species": cls.astype(np.int64),
        "center_cam": center, "dimensions": dims, "R_cam": R, "corners_cam": corners,
        "bbox2d_tight": tight, "bbox2d_proj": proj, "depth": center[:, 2],
        "K": np.broadcast_to(K, (n, 3, 3)).copy(),
        "segment_id": np.array([f"seg{s}" for s in seg], dtype=object),
        "image_ids": np.unique(100_000 + img).astype(np.int64),
    }


def jitter_predictions(gt: dict, level: float = 1.0, seed: int = 1, miss: float = 0.1,
                       false_pos: float = 0.1, wrong_class: float = 0.03) -> dict[str, np.ndarray]:
    """Predictions from ground truth: ``level`` scales every error (0 = perfect copies).

    Centre errors are relative to depth (x, y 0.5%, z 3% along the ray at level 1), dimensions 10%, rotation
    0.15 rad; 2D boxes move by 5% of their size. ``miss`` of the boxes get no prediction,
    ``false_pos`` extra boxes are copies moved far away with low scores.
    """
    rng = np.random.default_rng(seed)
    n = len(gt["image_id"])
    keep = rng.random(n) >= miss
    idx = np.flatnonzero(keep)
    m = len(idx)
    z = gt["center_cam"][idx, 2]
    center = gt["center_cam"][idx].copy()
    center[:, :2] += rng.normal(0, 0.005 * level, (m, 2)) * z[:, None]
    center *= np.exp(rng.normal(0, 0.03 * level, m))[:, None]  # depth error along the ray
    dims = gt["dimensions"][idx] * np.exp(rng.normal(0, 0.10 * level, (m, 3)))
    pose = gt["R_cam"][idx] @ _small_rotations(rng, m, 0.15 * level) if level > 0 else gt["R_cam"][idx].copy()
    box = gt["bbox2d_proj"][idx].copy()
    wh = np.column_stack([box[:, 2] - box[:, 0], box[:, 3] - box[:, 1]])
    box += rng.normal(0, 0.05 * level, (m, 4)) * np.tile(wh, 2)
    cid = gt["category_id"][idx].copy()
    flip = rng.random(m) < wrong_class
    cid[flip] = 1000 + rng.integers(0, len(schema.SPECIES), flip.sum())
    score = np.clip(0.5 + 0.5 * rng.random(m) - 0.2 * level * rng.random(m), 0.01, 1.0)
    n_fp = int(false_pos * n)
    if n_fp:
        src = rng.integers(0, n, n_fp)
        fp_center = gt["center_cam"][src] * rng.uniform(1.3, 2.0, (n_fp, 1))
        fp_box = gt["bbox2d_proj"][src] + rng.normal(0, 60, (n_fp, 4))
        center = np.concatenate([center, fp_center])
        dims = np.concatenate([dims, gt["dimensions"][src]])
        pose = np.concatenate([pose, gt["R_cam"][src]])
        box = np.concatenate([box, fp_box])
        cid = np.concatenate([cid, gt["category_id"][src]])
        score = np.concatenate([score, rng.uniform(0.01, 0.6, n_fp)])
        image_id = np.concatenate([gt["image_id"][idx], gt["image_id"][src]])
    else:
        image_id = gt["image_id"][idx].copy()
    box[:, 2:] = np.maximum(box[:, 2:], box[:, :2])
    return {"image_id": image_id, "category_id": cid, "score": score, "bbox": box,
            "center_cam": center, "dimensions": dims, "pose": pose}


def main(argv=None) -> int:
    from benchwright.evaluation import wildbox as ev

    parser = ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--images", type=int, default=13_800)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--gt", help="a built WildBox folder (uses its validation split)")
    ns = parser.parse_args(argv)
    t = time.perf_counter()
    if ns.gt:
        gt = ev.load_ground_truth(ns.gt, "validation")
        source = f"{ns.gt} (validation)"
    else:
        gt = synth_ground_truth(ns.images, ns.seed)
        source = "synthetic"
    preds = jitter_predictions(gt, 1.0, ns.seed + 1)
    t_data = time.perf_counter() - t
    image_ids = gt.pop("image_ids")
    timings: dict = {}
    metrics = ev.evaluate(gt, preds, image_ids=image_ids, timings=timings)
    report = {
        "source": source, "machine": platform.machine(), "python": platform.python_version(),
        "n_gt": int(len(gt["image_id"])), "n_pred": int(len(preds["image_id"])),
        "n_images": int(len(image_ids)),
        "seconds": {**{k: round(v, 3) for k, v in timings.items()}, "synthesis": round(t_data, 3)},
        "headline": {k: metrics[k]["macro"] for k in ("ap2d@0.50", "ap2d_agnostic@0.50", "ap_bev_voc11@0.50",
                                                     "ap3d@0.25", "ap3d", "rel_ap3d")},
        "rel_ap3d_scale": metrics["rel_ap3d"]["scale"],
        "nhd_hungarian_overall": metrics["nhd_hungarian"]["micro"]["overall"],
        "nhd_depth_share": metrics["nhd_hungarian"]["micro"]["depth_share"],
    }
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
