"""The WildBox card: the release's statistics per split and species, label quality, the Omni3D
field table, figures (class histogram, depth distribution, a sample frame with its cuboids) and
the baselines' results table when the baselines benchmark has written it."""
from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pyarrow.compute as pc

from benchwright.card import FIGURES_DIR, markdown_table, pyplot, save_figure
from benchwright.formats import geometry
from benchwright.loaders.wildbox import OMNI3D_FIELD_NOTES, read_config
from benchwright.schemas import wildbox as schema
from benchwright.tables import read_row
from benchwright.validation import wildbox as checks


def release_table(root: Path) -> tuple[list[str], list[list]]:
    """The release's statistics: videos, segments, frames, cuboids per split (and the total)."""
    seg = read_config(root, "segments", columns=["video_id", "split", "num_frames", "num_boxes", "species"])
    rows = []
    for split in (*schema.SPLITS, None):
        t = seg if split is None else seg.filter(pc.equal(seg["split"], split))
        rows.append([split or "total", len(pc.unique(t["video_id"])), t.num_rows,
                     int(pc.sum(t["num_frames"]).as_py() or 0), int(pc.sum(t["num_boxes"]).as_py() or 0)])
    return ["split", "videos", "segments", "frames", "cuboids"], rows


def species_table(root: Path) -> tuple[list[str], list[list]]:
    seg = read_config(root, "segments", columns=["video_id", "split", "species"])
    boxes = read_config(root, "boxes", columns=["species", "split"])
    rows = []
    for k, name in enumerate(schema.SPECIES):
        row = [name]
        for split in schema.SPLITS:
            s = seg.filter(pc.and_(pc.equal(seg["species"], k), pc.equal(seg["split"], split)))
            b = boxes.filter(pc.and_(pc.equal(boxes["species"], k), pc.equal(boxes["split"], split)))
            row += [len(pc.unique(s["video_id"])), b.num_rows]
        rows.append(row)
    return ["species", "train videos", "train cuboids", "validation videos", "validation cuboids"], rows


def card_statistics(root: Path) -> dict:
    figures = write_figures(root)
    context = {
        "release_table": markdown_table(*release_table(root)),
        "species_table": markdown_table(*species_table(root)),
        "figures": figures,
    }
    context["label_quality"] = label_quality(root)
    context["kitti_loss"] = kitti_loss_table(root)
    context["omni3d_fields"] = markdown_table(["field", "holds", "against the release's files"],
                                              [list(row) for row in OMNI3D_FIELD_NOTES])
    results = root / "_build" / "baselines.md"  # written by benchmarks/wildbox_baselines.py
    if results.exists():
        context["results_table"] = results.read_text().strip()
    speed = root / "_build" / "build_speed.md"  # written by benchmarks/wildbox_build.py
    if speed.exists():
        context["build_speed"] = speed.read_text().strip()
    return context


def kitti_loss_table(root: Path) -> str:
    """What the yaw-only KITTI export drops, as measured by the export (``exports/kitti/yaw_only_loss.json``):
    a markdown table of the dropped pitch, roll and rotation (degrees) and the 3D IoU between each full box and
    its yaw-only box, with the row counts of the yaw-only and the strict export; "" without the file."""
    path = root / "exports" / "kitti" / "yaw_only_loss.json"
    if not path.is_file():
        return ""
    loss = json.loads(path.read_text())
    if not loss.get("boxes"):
        return ""
    iou = loss["iou_3d_full_vs_yaw_only"]
    header = ["per box", "mean", "min", "10%", "median", "90%", "99%", "max"]
    keys = ["mean", "q0", "q10", "q50", "q90", "q99", "q100"]
    rows = [[name, *(f"{loss[key][k]:.{digits}f}" for k in keys)] for name, key, digits in (
        ("pitch dropped (deg)", "pitch_deg", 1), ("roll dropped (deg)", "roll_deg", 1),
        ("rotation dropped (deg)", "rotation_dropped_deg", 1))]
    rows.append(["3D IoU, full vs yaw-only box", *(f"{iou[k]:.3f}" for k in keys)])
    counts = (f"The yaw-only export writes {loss['boxes']:,} rows, one per box; the strict one "
              f"(`benchwright export OUT/wildbox --kitti-rotation strict --out DIR`) would write "
              f"{loss['exact']:,}: the boxes whose pitch and roll are both within "
              f"{geometry.KITTI_ANGLE_TOL:g} rad. The 3D IoU is over {iou['boxes']:,} boxes ({iou['sample']}); "
              f"{100 * iou['below_0.5']:.1f}% of them are below 0.5, {100 * iou['below_0.25']:.1f}% below 0.25.")
    empty = loss.get("frames_without_rows")
    if empty:
        counts += (f" {empty:,} frames have no box: their label files are empty, which mmdetection3d reads and "
                   "OpenPCDet's `get_infos` does not.")
    return markdown_table(header, rows) + "\n\n" + counts


def label_quality(root: Path) -> list[str]:
    """The label-quality findings (validation.wildbox) as card lines: rotation flips, ground offsets."""
    boxes = read_config(root, "boxes", columns=["box_id", "segment_id", "track_id", "frame_index", "R_cam",
                                                "ground_offset"])
    return [f"{r['check'].removeprefix('boxes: label quality, ')}: {r['detail']}"
            for r in (checks.rotation_flip_check(boxes), checks.ground_offset_check(boxes))]


def write_figures(root: Path) -> dict[str, str]:
    """Class histogram, depth distribution and a sample frame with projected cuboids (PNG)."""
    plt = pyplot()
    boxes = read_config(root, "boxes", columns=["species", "split", "depth"])
    figures = {}

    fig, ax = plt.subplots(figsize=(7, 3.5))
    x = np.arange(len(schema.SPECIES))
    for j, split in enumerate(schema.SPLITS):
        b = boxes.filter(pc.equal(boxes["split"], split))
        counts = np.bincount(b["species"].to_numpy(), minlength=len(schema.SPECIES))
        ax.bar(x + (j - 0.5) * 0.4, counts, width=0.4, label=split)
    ax.set_xticks(x, schema.SPECIES, rotation=20)
    ax.set_ylabel("cuboids")
    ax.set_title("Cuboids per species")
    ax.legend()
    fig.tight_layout()
    figures["class_histogram"] = save_figure(fig, root, "class_histogram")

    fig, ax = plt.subplots(figsize=(7, 3.5))
    depth = boxes["depth"].to_numpy()
    ax.hist(depth, bins=np.linspace(0, max(3.0, float(np.quantile(depth, 0.99)) if len(depth) else 3.0), 60))
    ax.set_xlabel("normalised depth z (1 = the segment's median)")
    ax.set_ylabel("cuboids")
    ax.set_title("Depth distribution")
    fig.tight_layout()
    figures["depth_distribution"] = save_figure(fig, root, "depth_distribution")

    sample = sample_frame_with_cuboids(root)
    if sample is not None:
        figures["sample_frame"] = f"{FIGURES_DIR}/sample_frame.png"
        cv2.imwrite(str(root / figures["sample_frame"]), sample)
    return figures


def sample_frame_id(root: Path) -> str | None:
    """The frame with the most objects (ties: smallest frame_id). A frame's objects are its boxes (the
    pipeline cuts the boxes per frame), so the counts come from the boxes' frame_id column: reading every
    frame's objects (and images) took 1.2 GB at the release's size."""
    ids = read_config(root, "frames", columns=["frame_id"])["frame_id"].to_pylist()
    if not ids:
        return None
    per_frame = pc.value_counts(read_config(root, "boxes", columns=["frame_id"])["frame_id"])
    counts = dict(zip(per_frame.field("values").to_pylist(), per_frame.field("counts").to_pylist()))
    return min(ids, key=lambda fid: (-counts.get(fid, 0), fid))


def sample_frame_with_cuboids(root: Path):
    """The sample frame (``sample_frame_id``, the only one read), cuboid edges drawn with OpenCV."""
    best = sample_frame_id(root)
    if best is None:
        return None
    row = read_row(root, "frames", "frame_id", best, columns=["frame_id", "image", "K", "objects"])
    image = cv2.imdecode(np.frombuffer(row["image"]["bytes"], np.uint8), cv2.IMREAD_COLOR)
    scale = max(1, 640 // image.shape[1])
    image = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_NEAREST)
    K = np.asarray(row["K"], float) * [[scale], [scale], [1]]
    colours = [(0, 200, 255), (255, 120, 0), (0, 255, 0), (255, 0, 255), (0, 0, 255), (255, 255, 0)]
    for obj in row["objects"]:
        corners = np.asarray(obj["corners_cam"], float)
        uv = geometry.project_points(corners, K)
        if not np.isfinite(uv).all():
            continue
        colour = colours[obj["species"] % len(colours)]
        for a, b in geometry.EDGES:
            cv2.line(image, tuple(np.round(uv[a]).astype(int)), tuple(np.round(uv[b]).astype(int)), colour, 1,
                     cv2.LINE_AA)
        x1, y1, x2, y2 = (np.asarray(obj["bbox2d_tight"]) * scale).round().astype(int)
        cv2.rectangle(image, (x1, y1), (x2, y2), (255, 255, 255), 1)
    return image


def responsible_ai(dataset, root: Path, source: str) -> dict:
    """The Croissant file's Responsible-AI facts (``Dataset.responsible_ai``): the release's collection and
    automatic labels (docs/reference/wildbox.md), their known defects, and this build's own measures."""
    from benchwright.croissant import counts_text, value_counts

    species = value_counts(dataset, root, "boxes", "species")
    videos = {s: len(v) for s, v in _videos_per_species(root).items()}
    return {
        "dataCollection": (
            "WildBox records wild animals (giraffe, Grevy's and plains zebra, elephant, rhino, gazelle) from drone "
            "video (1920x1080 in the release), cut into segments. Per segment VGGT reconstructs the cameras and "
            "tracks each animal in 3D, and SAM3 segments each track in each frame from a text prompt. The build "
            "reads those files (frames, masks, cameras.json, tracking_summary.json) and takes no footage itself."),
        "dataCollectionType": ["Physical data collection (drone video, in the release)",
                               "Software Collection (VGGT reconstructions and tracks, SAM3 masks)"],
        "dataAnnotationProtocol": [
            "No human annotation: every label is automatic. 3D cuboids (centre, [W, H, L], full 3x3 rotation) and "
            "track ids come from VGGT's per-segment reconstruction and tracking, in a scale-normalised camera frame "
            "(each segment's median depth of the cuboids in front of the camera is 1: metric scale is unknown).",
            "Tight 2D boxes come from the SAM3 mask's extent, else VGGT's 2D box, else the projected cuboid "
            "(`bbox_source` says which); the species is the segment's SAM3 prompt / VGGT class name.",
            "Measured by this build, never used to drop a box: truncation, occlusion visibility, support points "
            "(Open3D, from the reconstruction), ground offset (RANSAC plane of the reconstruction's points)."],
        "annotationsPerItem": "One automatic label per animal per frame; no human labels.",
        "annotatorDemographics": "None: no person annotated the data (automatic labels).",
        "machineAnnotationTools": ["VGGT (cameras, 3D tracks, cuboids, 2D boxes)", "SAM3 (masks, tight 2D boxes)",
                                   "benchwright (scale normalisation, truncation, visibility, support points, "
                                   "ground offset; OpenCV, Open3D)"],
        "dataAnnotationAnalysis": [
            "Known defects of the release's automatic labels: rotation sign flips in about 11% of frames, and box "
            "bottoms 0.11-0.14 box heights above the terrain.",
            *[f"This build: {line}." for line in label_quality(root)]],
        "dataBiases": [
            f"Species are unbalanced. Cuboids per species in this build: {counts_text(species)}; videos per "
            f"species: {counts_text(videos)}. In the release: elephant 17, rhino 19, plains zebra 15 videos against "
            "Grevy's zebra 5, giraffe 4, gazelle 4.",
            "Drone views only (mostly from above, pitch and roll carry much of the orientation), African savanna "
            "species only."],
        "dataLimitations": [
            "3D is relative: each segment is normalised (median depth 1), so metric depth and size are unknown; "
            "scale_factor maps back to the reconstruction's own units, not to metres.",
            "Labels are automatic and unverified by people, with the defects above; use the label-quality fields "
            "(ground_offset, visibility, support_points) to select boxes.",
            "The KITTI export holds yaw only: cuboids with pitch or roll are not representable there "
            "(kitti_representable, kitti_reason)."],
        "dataUseCases": [
            "Training and evaluating monocular 3D detection of wildlife from drone views (Omni3D / Cube R-CNN and "
            "KITTI exports; `benchwright evaluate wildbox`: AP-BEV, AP-3D, the release's protocol).",
            "Splits are video-level: train on train, report on validation."],
        "personalSensitiveInformation": [
            "No personal data is known to be in the data: the footage shows wildlife. The build does not check "
            "frames for people or vehicles.",
            "Frames are stored as the source's image bytes, unchanged: metadata the camera wrote into them (drone "
            "cameras can record a GPS position in EXIF) is kept, not stripped. Where endangered animals (rhino) "
            "are, is sensitive: check frames before publishing them."],
    }


def _videos_per_species(root: Path) -> dict[str, set]:
    seg = read_config(root, "segments", columns=["video_id", "species"])
    out: dict[str, set] = {}
    for video, k in zip(seg["video_id"].to_pylist(), seg["species"].to_pylist()):
        out.setdefault(schema.SPECIES[k], set()).add(video)
    return dict(sorted(out.items(), key=lambda kv: (-len(kv[1]), kv[0])))
