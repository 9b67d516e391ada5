"""The floor for the WildBox build: a plain single-process preparation script, written for speed.

It applies only the preparation rules of docs/reference/wildbox.md ("Preparation rules"), as the
dataset's authors' own script does, and nothing more: per segment it reads ``cameras.json`` and
``tracking_summary.json``, each frame's size from its JPEG header (never its pixels), each
observation's SAM3 mask extent and pixel count (OpenCV on the decoded mask), puts the cuboids in
the camera frame, takes the segment's scale over every box in front of the camera, picks the 2D box
by the release's priority (mask extent, else the VGGT box rescaled, else the projected corners),
clips it, drops boxes 1 px or less, and writes one Omni3D JSON per split (video-level split,
stratified by species). No image is copied, and there is no Parquet, truncation, occlusion, support
point, ground plane, KITTI export, card or validation: it is the least a regeneration can do, the
yardstick ``benchmarks/wildbox_build.py`` holds the build against.

It imports no benchwright module (numpy, OpenCV, Pillow and the standard library only), so its wall
time is what a user timing such a script sees. ``--categories`` maps raw class names to category
ids (the benchmark passes the schema's; without it the schema is imported, which costs a second).

    python -m benchwright.benchmarks.wildbox_floor SOURCE OUT [--categories JSON]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import time
from collections import Counter

import cv2
import numpy as np
from PIL import Image

from benchwright.arguments import ArgumentParser

VALIDATION_SHARE = 0.2
MAX_SEGMENTATION_PTS = 10_000
# Corner signs of local (x, y, z) = (L, H, W) in the order pytorch3d's box3d_overlap expects.
SIGNS = np.array([[-1, -1, -1], [1, -1, -1], [1, 1, -1], [-1, 1, -1],
                  [-1, -1, 1], [1, -1, 1], [1, 1, 1], [-1, 1, 1]], float)


def default_categories() -> dict[str, int]:
    from benchwright.schemas import wildbox as schema

    return {alias: schema.CATEGORY_IDS[name] for alias, name in schema.SPECIES_ALIASES.items()}


def segments(source: str) -> list[tuple[str, str]]:
    """(video, segment) folders holding vggt_results/, sorted."""
    found = []
    for video in sorted(os.listdir(source)):
        vdir = os.path.join(source, video)
        if video.startswith((".", "_")) or not os.path.isdir(vdir):
            continue
        for seg in sorted(os.listdir(vdir)):
            if os.path.isdir(os.path.join(vdir, seg, "vggt_results")):
                found.append((video, seg))
    return found


def mask_extent(path: str) -> tuple[tuple[int, int, int, int], int] | None:
    """(inclusive xyxy extent, pixel count) of a mask PNG; None when missing or empty."""
    mask = cv2.imread(path, cv2.IMREAD_GRAYSCALE)
    if mask is None:
        return None
    count = cv2.countNonZero(mask)
    if count == 0:
        return None
    x, y, w, h = cv2.boundingRect(mask)
    return (x, y, x + w - 1, y + h - 1), count


def prepare_segment(source: str, video: str, seg: str, categories: dict[str, int]) -> dict | None:
    """One segment's images and annotations (scaled, unsplit), or None when it has no readable frame."""
    seg_dir = os.path.join(source, video, seg)
    with open(os.path.join(seg_dir, "vggt_results", "cameras.json"), "rb") as f:
        cameras = json.load(f)["cameras"]
    with open(os.path.join(seg_dir, "vggt_results", "tracking_summary.json"), "rb") as f:
        tracks = json.load(f)["tracks"]
    frames = {}
    for cam in cameras:
        try:
            with Image.open(os.path.join(seg_dir, cam["image_name"])) as im:  # the header only
                width, height = im.size
        except OSError:
            continue
        sx, sy = width / cam["image_width"], height / cam["image_height"]
        K = np.asarray(cam["intrinsic"], float) * [[sx], [sy], [1.0]]
        frames[int(cam["frame_index"])] = (cam["image_name"], width, height, K, np.asarray(cam["extrinsic"], float),
                                           (sx, sy))
    if not frames:
        return None

    parts, names = [], []
    for key, track in sorted(tracks.items(), key=lambda kv: int(kv[0])):
        fi = np.asarray(track["frames"], int)
        n = len(fi)
        box = np.asarray(track["bbox_2d"], float) if track.get("bbox_2d") is not None else np.full((n, 4), -1.0)
        parts.append((np.full(n, int(key)), fi, np.asarray(track["centers"], float),
                      np.asarray(track["dimensions"], float), np.asarray(track["rotation_matrices"], float), box))
        names.append(track.get("class_name", ""))
    known = [categories[n.strip().lower()] for n in names if n.strip().lower() in categories]
    if not parts or not known:
        return None
    species = Counter(known)
    category = min(species, key=lambda c: (-species[c], c))
    tid, fidx, center_w, dims, R_w, vggt_box = (np.concatenate(col) for col in zip(*parts))
    seen = np.isin(fidx, list(frames))
    tid, fidx, center_w, R_w, vggt_box = tid[seen], fidx[seen], center_w[seen], R_w[seen], vggt_box[seen]
    dims = dims[seen][:, ::-1]  # VGGT (l, w, h) -> Omni3D [W, H, L]
    ext = np.stack([frames[f][4] for f in fidx])
    K = np.stack([frames[f][3] for f in fidx])
    size = np.array([frames[f][1:3] for f in fidx], float)
    center = np.einsum("nij,nj->ni", ext[:, :, :3], center_w) + ext[:, :, 3]
    R = ext[:, :, :3] @ R_w
    front = center[:, 2] > 0
    z = center[front, 2]
    scale = 1.0 if len(z) == 0 else 1.0 / float(np.max(z)) if len(z) < 3 else 1.0 / float(np.median(z))
    keep = front & (dims > 0).all(axis=1)

    corners = center[:, None] + np.einsum("nij,nkj->nki", R, SIGNS[None] * dims[:, None, ::-1] / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        uv = np.einsum("nij,nkj->nki", K, corners)
        uv = uv[..., :2] / uv[..., 2:]
    lo, hi = np.zeros(4), np.concatenate([size, size], axis=1) - 1
    proj = np.clip(np.concatenate([uv.min(axis=1), uv.max(axis=1)], axis=1), lo, hi)

    tight = np.zeros((len(tid), 4))
    source_of = ["vggt"] * len(tid)
    seg_pts = np.full(len(tid), -1)
    stem = {f: os.path.splitext(frames[f][0])[0] for f in frames}
    mask_dir = os.path.join(seg_dir, "sam3_masks", "masks")
    masks = {os.path.join(mask_dir, d, name) for d in (os.listdir(mask_dir) if os.path.isdir(mask_dir) else ())
             for name in os.listdir(os.path.join(mask_dir, d))}
    for i in np.flatnonzero(keep):
        path = os.path.join(mask_dir, f"obj_{tid[i]}", f"{stem[fidx[i]]}.png")
        found = mask_extent(path) if path in masks else None
        if found is not None:
            tight[i], seg_pts[i] = found[0], min(found[1], MAX_SEGMENTATION_PTS)
            source_of[i] = "sam3"
        elif (vggt_box[i] >= 0).all():
            tight[i] = vggt_box[i] * np.tile(frames[fidx[i]][5], 2)
        else:
            tight[i] = np.concatenate([uv[i].min(axis=0), uv[i].max(axis=0)])
            source_of[i] = "projected"
    tight = np.clip(tight, lo, hi)
    keep &= (tight[:, 2] - tight[:, 0] > 1) & (tight[:, 3] - tight[:, 1] > 1)

    images = {f: {"file_path": f"{video}/{seg}/{frames[f][0]}", "width": frames[f][1], "height": frames[f][2],
                  "K": frames[f][3].tolist()} for f in sorted(frames)}
    rows = np.flatnonzero(keep)
    tight, proj, corners, center, dims, R = (a[rows].tolist() for a in (
        tight, proj, corners * scale, center * scale, dims * scale, R))  # one conversion per column, not per box
    annotations = []
    for k, i in enumerate(rows.tolist()):
        x1, y1, x2, y2 = tight[k]
        annotations.append({
            "frame": int(fidx[i]), "category_id": category, "valid3D": True, "behind_camera": False,
            "bbox": [x1, y1, x2 - x1, y2 - y1], "bbox2D_tight": tight[k], "bbox2D_trunc": tight[k],
            "bbox2D_proj": proj[k], "bbox3D_cam": corners[k], "center_cam": center[k], "dimensions": dims[k],
            "R_cam": R[k], "truncation": 0.0, "visibility": 1.0,
            "segmentation_pts": int(seg_pts[i]) if seg_pts[i] >= 0 else 10, "lidar_pts": 10, "depth_error": 0.0,
            "area": (x2 - x1) * (y2 - y1), "iscrowd": 0, "track_id": int(tid[i]), "bbox_source": source_of[i],
        })
    return {"video": video, "segment": f"{video}/{seg}", "category": category, "scale": scale,
            "images": images, "annotations": annotations}


def video_splits(prepared: list[dict]) -> dict[str, str]:
    """Video-level, stratified by species: per species, videos in sha256 order, the first 20% (at least
    one when there are two or more) to validation."""
    species: dict[str, Counter] = {}
    for p in prepared:
        species.setdefault(p["video"], Counter())[p["category"]] += len(p["annotations"])
    by_species: dict[int, list[str]] = {}
    for video, counts in species.items():
        by_species.setdefault(min(counts, key=lambda c: (-counts[c], c)), []).append(video)
    splits = {}
    for videos in by_species.values():
        videos.sort(key=lambda v: hashlib.sha256(v.encode()).hexdigest())
        held = max(1, round(VALIDATION_SHARE * len(videos))) if len(videos) >= 2 else 0
        splits.update({v: "validation" if k < held else "train" for k, v in enumerate(videos)})
    return splits


def run(source: str, out: str, categories: dict[str, int]) -> dict:
    t0 = time.perf_counter()
    prepared = [p for video, seg in segments(source) if (p := prepare_segment(source, video, seg, categories))]
    splits = video_splits(prepared)
    os.makedirs(out, exist_ok=True)
    names = {c: n for n, c in sorted(categories.items(), reverse=True)}
    counts = {}
    dataset_id = 1000  # the release's collection id, both splits (its preparation script's default)
    for split in ("train", "validation"):
        images, annotations, scales = [], [], {}
        for p in (p for p in prepared if splits[p["video"]] == split):
            scales[p["segment"]] = p["scale"]
            first = len(images)
            for k, (f, image) in enumerate(p["images"].items()):
                images.append({"id": first + k, "dataset_id": dataset_id, **image})
            image_of = {f: first + k for k, f in enumerate(p["images"])}
            for a in p["annotations"]:
                annotations.append({"id": len(annotations), "image_id": image_of[a.pop("frame")],
                                    "dataset_id": dataset_id, "category_name": names[a["category_id"]], **a})
        doc = {"info": {"id": dataset_id, "source": "wildbox", "name": f"WildBox {split}", "split": split,
                        "version": "1.0", "known_category_ids": sorted(set(categories.values())),
                        "scene_scales": scales},
               "categories": [{"id": c, "name": n, "supercategory": "animal"} for c, n in sorted(names.items())],
               "images": images, "annotations": annotations}
        with open(os.path.join(out, f"WildBox_{split}.json"), "w") as f:
            f.write(json.dumps(doc))  # json.dump streams through the pure-Python encoder: 5x slower
        counts[split] = {"images": len(images), "annotations": len(annotations)}
    return {"wall_s": round(time.perf_counter() - t0, 3), "segments": len(prepared), "splits": counts,
            "annotations": sum(c["annotations"] for c in counts.values())}


def main(argv=None) -> None:
    p = ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("source")
    p.add_argument("out")
    p.add_argument("--categories", help='JSON {"raw class name": category id} (default: the schema\'s)')
    args = p.parse_args(argv)
    categories = json.loads(args.categories) if args.categories else default_categories()
    print(json.dumps(run(args.source, args.out, categories)))


if __name__ == "__main__":
    main()
