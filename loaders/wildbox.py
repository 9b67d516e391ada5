"""WildBox loaders: read a built dataset, export it as Omni3D JSON and KITTI text, card statistics.

Everything here reads the published Parquet (never the raw source), so an export made from a
downloaded dataset is the same as the one the build wrote.
"""
from __future__ import annotations

import errno
import io
import json
import math
import os
import posixpath
import shutil
import unicodedata
from urllib.parse import quote, unquote
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from benchwright import tables
from benchwright.errors import RecordError
from benchwright.files import Root, map_in_threads
from benchwright.formats import kitti
from benchwright.formats.omni3d import AnnotationColumns, write_omni3d_stream
from benchwright.hashing import stable_int_id
from benchwright.memory import release_freed_memory
from benchwright.prepared import Conversion, Prepared
from benchwright.schemas import wildbox as schema

EXPORTS = "exports"
# What the exports need of the boxes config (its footprints and yaw/pitch/roll stay on disk).
EXPORT_BOX_COLUMNS = ["box_id", "frame_id", "image_id", "track_id", "species", "coarse_class", "category_id",
                      "center_cam", "dimensions", "R_cam", "corners_cam", "bbox2d_tight", "bbox2d_proj", "K",
                      "bbox_source", "truncation", "visibility", "segmentation_pts", "support_points",
                      "kitti_representable", "kitti_reason"]
# What the release's Omni3D files hold where they hold a constant (docs/reference/wildbox.md): stock
# Cube R-CNN / OVMono3D training ignores a box with lidar_pts or segmentation_pts 0, truncation at or
# above, or visibility at or below its thresholds, so these keep training on our export the same as
# on the release. Omni3D writes -1 for a value it does not have; its loader ignores only 0.
RELEASE_TRUNCATION, RELEASE_VISIBILITY, RELEASE_LIDAR_PTS, RELEASE_DEPTH_ERROR = 0.0, 1.0, 10, 0.0
# The collection id (info.id, and every image's and annotation's dataset_id) of both splits, as the authors'
# preparation script writes it (its --dataset-id default). Cube R-CNN reads it as a key only: train_net.py maps
# each loaded file's info.id to its source and to the categories it does not annotate, and the dataset mapper
# looks every image's dataset_id up there (an id no loaded file has is a KeyError). So the id must be the one of
# the file the image is in, and must not be another collection's (two collections with one id would share one
# category list): one id for both splits of WildBox, which share their categories, breaks nothing.
RELEASE_DATASET_ID = 1000
UNAVAILABLE = -1
_SAME = "same meaning"
_OURS = "same field, our values"
# Every field of the Omni3D export: (field, what it holds, how it differs from the release's files and why).
OMNI3D_FIELD_NOTES = (
    ("info.id", f"the collection: {RELEASE_DATASET_ID} (both splits)",
     "as the release (its preparation script's default); Cube R-CNN keys each file's source and known "
     "categories by it"),
    ("info.source", '"wildbox"', _SAME),
    ("info.name", '"WildBox <split>"', _OURS),
    ("info.split", "train or validation", _SAME),
    ("info.version", '"1.0"', _OURS),
    ("info.known_category_ids", "1000-1005", _SAME),
    ("info.scene_scales", "per segment, the scale s applied (normalised = raw reconstruction units x s)",
     "as the release: s = 1/median(z) over all the segment's boxes with z > 0, before any 2D check"),
    ("images.id", "a stable 53-bit hash of the frame id (exact as a JSON number)", _OURS + " (the same on every rebuild)"),
    ("images.dataset_id", f"the collection (info.id, {RELEASE_DATASET_ID}), never the species", _SAME),
    ("images.file_path", "the frame under exports/images/, relative to the dataset folder",
     "the release's paths are absolute (they break when the data moves)"),
    ("images.height, images.width", "the frame's size in pixels", _SAME),
    ("images.K", "intrinsics at the frame's resolution", _SAME),
    ("categories", "id 1000-1005, species name, supercategory animal", _SAME),
    ("annotations.id", "a stable 53-bit hash of the box id", _OURS + " (the same on every rebuild)"),
    ("annotations.image_id", "the frame's images.id", _SAME),
    ("annotations.dataset_id", "the frame's collection, never the species", _SAME),
    ("annotations.category_id, category_name", "the species (1000-1005)", _SAME),
    ("annotations.valid3D", "true", _SAME),
    ("annotations.behind_camera", "false: every published centre is in front of the camera",
     "same meaning; the release also keeps only boxes with z > 0"),
    ("annotations.bbox", "bbox2D_tight as x, y, w, h", "same field (x, y, w, h)"),
    ("annotations.bbox2D_tight", "the SAM3 mask extent, else the VGGT (or label) box, else the projected "
     "box, clipped to the image (bbox_source says which)", _SAME),
    ("annotations.bbox2D_trunc", "bbox2D_tight",
     "as the release, whose Cube R-CNN training reads its 2D target here (TRUNC_2D_BOXES=True); Omni3D's "
     "own datasets put the clipped projected box here, which is bbox2D_proj"),
    ("annotations.bbox2D_proj", "the projected cuboid's box, clipped to the image", _SAME),
    ("annotations.bbox3D_cam, center_cam, dimensions", "the cuboid in normalised units, centre, [W, H, L]",
     _SAME),
    ("annotations.R_cam", "the rotation to the camera frame (full 3x3)",
     "the nearest exact rotation to the release's R_ext R_world, which drifts off SO(3) by float noise"),
    ("annotations.truncation", f"{RELEASE_TRUNCATION:g}",
     "the release's constant: a measured value would make Cube R-CNN drop truncated boxes the release "
     "trains on; ours is projected_truncation"),
    ("annotations.visibility", f"{RELEASE_VISIBILITY:g}",
     "the release's constant, for the same reason; ours is occlusion_visibility"),
    ("annotations.segmentation_pts", f"SAM3 mask pixels, capped at 10,000; {UNAVAILABLE} without a mask",
     "as the release where there is a mask; without one Omni3D's 'unavailable' (-1), as 0 would make "
     "Cube R-CNN drop the box"),
    ("annotations.lidar_pts", f"{RELEASE_LIDAR_PTS}",
     "the release's constant (there is no lidar): our points inside the cuboid are support_points, "
     "0 for many boxes, which Cube R-CNN would drop"),
    ("annotations.depth_error", f"{RELEASE_DEPTH_ERROR:g}", "the release's constant"),
    ("annotations.area", "bbox2D_tight's area in pixels", "same field"),
    ("annotations.iscrowd", "0", _SAME),
    ("annotations.track_id", "the track within its segment", _SAME),
    ("annotations.bbox_source", "sam3, vggt, label (a KITTI / Omni3D source) or projected",
     "the release has sam3 and vggt only"),
    ("annotations.support_points", f"reconstruction points inside the cuboid; {UNAVAILABLE} without a point "
     "cloud (the boxes config's support_points)", "ours only"),
    ("annotations.projected_truncation", "share of the projected box outside the image (the boxes "
     "config's truncation)", "ours only"),
    ("annotations.occlusion_visibility", f"share of the projected cuboid silhouette no nearer published "
     f"cuboid covers; {UNAVAILABLE} when unknown (the boxes config's visibility)", "ours only"),
)
# KITTI's occluded column from ``visibility``: >= 0.9 fully visible (0), >= 0.5 partly occluded
# (1), else largely occluded (2); unknown (no visibility) is 3, as in KITTI.
KITTI_OCCLUSION_LEVELS = (0.9, 0.5)


def read_config(root: Path | str, config: str, split: str | None = None, columns=None) -> pa.Table:
    """One config (optionally one split) of a built dataset as a pyarrow Table."""
    return tables.read_config(root, config, schema.CONFIGS[config], split, columns)


def load(root: Path | str, config: str, split: str | None = None):
    """``datasets.load_dataset`` on a built folder (no script, no benchwright code involved)."""
    import datasets  # ~2 s to import: only this helper needs it

    return datasets.load_dataset(str(root), config, split=split)


def boxes_arrays(table: pa.Table) -> dict[str, np.ndarray]:
    """The geometry of a boxes table as numpy arrays (what evaluators and baselines consume)."""
    return {
        "image_id": table.column("image_id").to_numpy(),
        "species": table.column("species").to_numpy(),
        "coarse_class": table.column("coarse_class").to_numpy(),
        "category_id": table.column("category_id").to_numpy(),
        "center_cam": tables.fixed_size_matrix(table.column("center_cam"), 3),
        "dimensions": tables.fixed_size_matrix(table.column("dimensions"), 3),
        "R_cam": tables.fixed_size_matrix(table.column("R_cam"), 3, 3),
        "corners_cam": tables.fixed_size_matrix(table.column("corners_cam"), 8, 3),
        "bbox2d_tight": tables.fixed_size_matrix(table.column("bbox2d_tight"), 4),
        "bbox2d_proj": tables.fixed_size_matrix(table.column("bbox2d_proj"), 4),
        "K": tables.fixed_size_matrix(table.column("K"), 3, 3),
    }


# ---------------------------------------------------------------------------------------------
# The coarse-to-fine curriculum

# Coarse class index of every species (the zebras merged), in SPECIES order.
COARSE_OF_SPECIES = np.array([schema.COARSE_CLASSES.index(schema.COARSE_OF[s]) for s in schema.SPECIES])
# Number of label values per curriculum stage.
STAGE_CLASSES = {"coarse": len(schema.COARSE_CLASSES), "fine": len(schema.SPECIES)}


def curriculum_stages(arrays: dict):
    """The coarse-to-fine label curriculum: yields (stage name, label array (N,) int64).

    First ``("coarse", ...)`` -- the two zebras merged, indices into ``COARSE_CLASSES`` -- then
    ``("fine", species)``, indices into ``SPECIES``. Works on ``boxes_arrays`` (or any dict with
    ``species``; coarse labels are derived from it when ``coarse_class`` is absent).
    """
    species = np.asarray(arrays["species"], np.int64)
    coarse = (np.asarray(arrays["coarse_class"], np.int64) if "coarse_class" in arrays
              else COARSE_OF_SPECIES[species])
    yield "coarse", coarse
    yield "fine", species


# ---------------------------------------------------------------------------------------------
# Exports


# The KITTI export (exports/kitti/): the layout of a KITTI object root, as mmdetection3d's and OpenPCDet's KITTI
# readers take it (training/{image_2,label_2,calib}/<6 digits>.*, ImageSets/<split>.txt); both read
# training/image_2/<name>.png, so PNG is the default image format ("jpg": the frames as they are, hard links).
KITTI_ROTATIONS = ("yaw-only", "strict")  # the release's lossy KITTI export (pitch and roll dropped), or exact rows only
KITTI_IMAGE_FORMATS = ("png", "jpg")
KITTI_IMAGE_SETS = {"train": "train", "validation": "val"}  # our split -> its ImageSets list (KITTI's names)
# How the KITTI PNGs are encoded (OpenCV's own defaults for PNG, pinned here so that a change of OpenCV's
# defaults cannot change the export's bytes): zlib level 1, every row filtered with Sub, run-length matches
# only. On the synthetic frames: 0.47 ms a 160x90 frame (28.0 KB) and 9.5 ms a 640x360 one (507 KB), against
# 0.99 ms (27.3 KB) and 19.5 ms (411 KB) with level 1 alone (libpng then tries every filter on every row and
# searches every match); level 0 (stored) takes 0.07 ms and 0.85 ms but 43.4 KB and 693 KB. The PNG holds the
# frame's pixels exactly either way (docs/SCALING.md).
KITTI_PNG_PARAMS = ("IMWRITE_PNG_COMPRESSION", 1, "IMWRITE_PNG_FILTER", "IMWRITE_PNG_FILTER_SUB",
                    "IMWRITE_PNG_STRATEGY", "IMWRITE_PNG_STRATEGY_RLE")
# Decimals of the rows' 3D fields: the boxes are in normalised units (the segment's median depth is 1, a zebra
# about 0.05 long), where KITTI's 2 would round a dimension by up to 10%; every KITTI reader parses floats.
KITTI_DECIMALS = 6


def export_all(root: Path, kitti_rotation: str = KITTI_ROTATIONS[0], kitti_images: str = KITTI_IMAGE_FORMATS[0],
               kitti_dir: Path | None = None, omni3d: bool = True, prepared: Prepared | None = None) -> dict:
    """Frame images, Omni3D JSON per split and the KITTI object root under ``exports/``.

    Images are written once (``exports/images/<video>/<segment>/<frame>``, the layout Omni3D paths point
    into); the KITTI root's ``training/image_2`` holds them as PNG (or, ``kitti_images="jpg"``, as hard
    links to the same files). ``kitti_dir``: write the KITTI root there instead of ``exports/kitti`` (and,
    with ``omni3d=False``, nothing else: the frames of ``exports/images`` must exist then). ``prepared``: the
    frames' PNGs made while the build's pipeline ran (``KITTI_PNG``; the others are encoded here).
    """
    if kitti_rotation not in KITTI_ROTATIONS or kitti_images not in KITTI_IMAGE_FORMATS:
        raise ValueError(f"kitti_rotation is one of {KITTI_ROTATIONS}, kitti_images one of {KITTI_IMAGE_FORMATS}")
    image_rel = {}
    images_dir = Root(root / EXPORTS / "images", f"{EXPORTS}/images")  # our own staging: no links to follow
    for f in sorted((root / "frames").glob("*.parquet")):  # streamed: image bytes never all in memory
        for batch in pq.ParquetFile(f).iter_batches(batch_size=512, columns=["frame_id", "image"]):
            images = batch.column("image")
            files = []
            for fid, path, data in zip(batch.column("frame_id").to_pylist(), images.field("path").to_pylist(),
                                       images.field("bytes").to_pylist()):
                # a frame id names its image's path: one that would leave exports/images is refused (OutsideRoot)
                target = images_dir.join(f"{fid}{Path(path).suffix or '.jpg'}", "frame", links=False)
                image_rel[fid] = posixpath.relpath(target, root)
                files.append((target, data))
            if omni3d:
                write_files(files)
    frames = read_config(root, "frames", columns=["frame_id", "image_id", "width", "height", "K", "split",
                                                  "segment_id", "scale_factor"])
    summary = {"images": len(image_rel)} if omni3d else {}
    kitti_root = KittiRoot(kitti_dir or root / EXPORTS / "kitti", root, frames["frame_id"].to_pylist(), image_rel,
                           kitti_rotation, kitti_images, prepared)
    for split in schema.SPLITS:
        f = frames.filter(pc.equal(frames["split"], split))
        b = read_config(root, "boxes", split=split, columns=EXPORT_BOX_COLUMNS)
        if f.num_rows == 0:
            continue
        if omni3d:
            summary[f"omni3d_{split}"] = export_omni3d(root, split, f, b, image_rel)
        summary[f"kitti_{split}"] = kitti_root.write_split(split, f, b)
        del b
        release_freed_memory()  # the exports run beside the statistics and checks: keep the peak down
    summary["kitti"] = kitti_root.finish()
    return summary


def export_build(root: Path, yaw_only_loss, options: list[str] | None = None,
                 prepared: Prepared | None = None) -> dict:
    """A build's exports (``export_all``) as ``benchwright export OUT/wildbox [options]`` asks for them, and what the
    yaw-only KITTI export loses (``yaw_only_loss(root)``, the dataset's declared measure: in
    ``kitti/yaw_only_loss.json`` and the card). ``options``: ``--kitti-rotation strict`` and ``--kitti-images jpg``
    write another KITTI root, to ``--out DIR`` (the build's own exports are what its manifest lists). ``prepared``:
    the frames' PNGs made while the pipeline ran."""
    import argparse

    from benchwright.errors import BenchwrightError

    parser = argparse.ArgumentParser(prog="benchwright export OUT/wildbox", exit_on_error=False, allow_abbrev=False)
    parser.add_argument("--kitti-rotation", choices=KITTI_ROTATIONS, default=KITTI_ROTATIONS[0],
                        help="yaw-only (the release's KITTI export: pitch and roll dropped) or strict (only "
                             "the boxes KITTI holds exactly)")
    parser.add_argument("--kitti-images", choices=KITTI_IMAGE_FORMATS, default=KITTI_IMAGE_FORMATS[0],
                        help="png (what mmdetection3d's and OpenPCDet's KITTI readers open) or jpg (the "
                             "frames as they are, hard links: no copy)")
    parser.add_argument("--out", help="write only the KITTI root, here")
    try:
        ns = parser.parse_args(options or [])
    except (argparse.ArgumentError, SystemExit) as err:
        raise BenchwrightError(f"export wildbox: {err}") from None
    default = (ns.kitti_rotation, ns.kitti_images) == (KITTI_ROTATIONS[0], KITTI_IMAGE_FORMATS[0])
    if not default and not ns.out:
        raise BenchwrightError("export wildbox: other KITTI options than the build's go to --out DIR (the "
                               "build's manifest lists its own exports' sha256)")
    root = Path(root)
    kitti_dir = Path(ns.out) if ns.out else root / EXPORTS / "kitti"
    summary = export_all(root, ns.kitti_rotation, ns.kitti_images, kitti_dir, omni3d=not ns.out, prepared=prepared)
    if ns.kitti_rotation == "yaw-only":
        loss = {**yaw_only_loss(root), "frames_without_rows": summary["kitti"]["frames_without_rows"]}
        (kitti_dir / "yaw_only_loss.json").write_text(json.dumps(loss, indent=1, sort_keys=True) + "\n")
        summary["kitti"]["loss"] = loss
    return summary


# Exports are hundreds of thousands of small files: the time goes to the filesystem (create, write,
# close), which a few threads overlap (the calls release the GIL); Python's file objects add nothing.
EXPORT_CHUNK_ROWS = 16_384  # annotations converted to Python values at a time


def _in_threads(work, items: list) -> None:
    """``work(item)`` for every item (its last element the path it creates), its folders made first."""
    for folder in sorted({os.path.dirname(item[-1]) for item in items}):
        os.makedirs(folder, exist_ok=True)
    map_in_threads(work, items)


def _write_file(item: tuple[bytes, str]) -> None:
    data, path = item
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def _link_file(item: tuple[str, str]) -> None:
    target, link = item
    try:
        os.link(target, link)
    except FileExistsError:  # a re-export over an earlier one
        os.unlink(link)
        _link_file(item)
    except OSError as err:
        if err.errno != errno.EXDEV:
            raise
        shutil.copyfile(target, link)  # an export to another file system: a copy


def write_files(files: list[tuple[str, bytes]]) -> None:
    """Write (path, bytes) pairs, creating their folders."""
    _in_threads(_write_file, [(data, path) for path, data in files])


def export_omni3d(root: Path, split: str, frames: pa.Table, boxes: pa.Table, image_rel: dict) -> dict:
    """Omni3D JSON for one split, streamed: annotations are made and written one at a time."""
    dataset_id = RELEASE_DATASET_ID  # the collection id, never the species
    scales = {}
    images = []
    for row in frames.select(["frame_id", "image_id", "width", "height", "K", "segment_id",
                              "scale_factor"]).to_pylist():
        images.append({"id": row["image_id"], "dataset_id": dataset_id, "file_path": image_rel[row["frame_id"]],
                       "height": row["height"], "width": row["width"], "K": row["K"]})
        scales[row["segment_id"]] = row["scale_factor"]
    # A chunk of rows at a time goes to the writer as columns (checked per column, made Python lists in one
    # call each): a numpy row per annotation costs more than its JSON; a whole split as Python floats would
    # cost a gigabyte at the release's size.
    a = boxes_arrays(boxes)
    sources_all = boxes["bbox_source"].to_numpy()
    segmentation_all = omni3d_segmentation_pts(boxes["segmentation_pts"].to_numpy(), sources_all)

    def annotations():
        for lo in range(0, boxes.num_rows, EXPORT_CHUNK_ROWS):
            rows = slice(lo, lo + EXPORT_CHUNK_ROWS)
            part = boxes.slice(lo, EXPORT_CHUNK_ROWS)
            n = part.num_rows
            tight = a["bbox2d_tight"][rows]
            x1, y1, x2, y2 = tight.T
            box_ids, tracks, truncs, vis, support = (part[c].to_pylist() for c in (
                "box_id", "track_id", "truncation", "visibility", "support_points"))
            # The release's fields keep the release's meaning (OMNI3D_FIELD_NOTES); ours follow them.
            yield AnnotationColumns({
                "id": [_ann_id(box_id) for box_id in box_ids], "image_id": a["image_id"][rows],
                "dataset_id": [dataset_id] * n, "category_id": a["category_id"][rows],
                "category_name": [schema.SPECIES[s] for s in a["species"][rows].tolist()],
                "valid3D": [True] * n, "behind_camera": [False] * n,
                "bbox": np.stack([x1, y1, x2 - x1, y2 - y1], axis=1), "bbox2D_tight": tight, "bbox2D_trunc": tight,
                "bbox2D_proj": a["bbox2d_proj"][rows], "bbox3D_cam": a["corners_cam"][rows],
                "center_cam": a["center_cam"][rows], "dimensions": a["dimensions"][rows], "R_cam": a["R_cam"][rows],
                "truncation": [RELEASE_TRUNCATION] * n, "visibility": [RELEASE_VISIBILITY] * n,
                "segmentation_pts": segmentation_all[rows], "lidar_pts": [RELEASE_LIDAR_PTS] * n,
                "depth_error": [RELEASE_DEPTH_ERROR] * n,
                "area": (x2 - x1) * (y2 - y1), "iscrowd": [0] * n, "track_id": tracks,
                "bbox_source": [schema.BBOX_SOURCES[s] for s in sources_all[rows].tolist()],
                "support_points": support, "projected_truncation": truncs,
                "occlusion_visibility": [UNAVAILABLE if v is None or math.isnan(v) else v for v in vis],
            })

    info = {"id": dataset_id, "source": "wildbox", "name": f"WildBox {split}", "split": split, "version": "1.0",
            "known_category_ids": list(schema.CATEGORY_IDS.values()), "scene_scales": dict(sorted(scales.items()))}
    categories = [{"id": cid, "name": name, "supercategory": "animal"} for name, cid in schema.CATEGORY_IDS.items()]
    path = write_omni3d_stream(root / EXPORTS / "omni3d" / f"WildBox_{split}.json", info, categories, images,
                               annotations())
    return {"path": str(path.relative_to(root)), "images": len(images), "annotations": boxes.num_rows}


def _ann_id(box_id: str) -> int:
    return stable_int_id(box_id)


def omni3d_segmentation_pts(segmentation_pts, bbox_source) -> np.ndarray:
    """Omni3D's ``segmentation_pts`` of boxes: the mask's pixel count where the 2D box is the SAM3
    mask's, else UNAVAILABLE (-1). Omni3D ignores a box with 0 (a mask without pixels), not one
    with -1 (no mask): the export and the evaluator's Omni3D filter read boxes the same way."""
    pts = np.asarray(segmentation_pts, np.int64)
    return np.where(np.asarray(bbox_source) == schema.BBOX_SOURCES.index("sam3"), pts, UNAVAILABLE)


def kitti_occlusion(visibility) -> np.ndarray:
    """KITTI occlusion levels 0..3 for visibilities (NaN / None = unknown = 3)."""
    v = np.asarray([np.nan if x is None else x for x in visibility], float)
    full, partly = KITTI_OCCLUSION_LEVELS
    return np.where(np.isnan(v), 3, np.where(v >= full, 0, np.where(v >= partly, 1, 2))).astype(int)


class KittiRoot:
    """The KITTI object root of a WildBox build, written a split at a time (``write_split``), then ``finish``.

    Every frame is numbered in frame_id order over both splits (000000, 000001, ...): ``training/label_2``
    holds its boxes as KITTI rows, ``training/calib`` its camera (P2 = [K | 0], the other cameras P2, R0_rect
    I), ``training/image_2`` its image; ``ImageSets/train.txt`` and ``val.txt`` list each split's frames, and
    ``test.txt`` is empty (WildBox has no test split; mmdetection3d's converter reads all three).
    ``frame_map.txt`` maps each name to its frame, image and split.

    ``rotation``: "yaw-only" (the release's KITTI export) writes every box, its rotation_y the yaw of R_cam
    (pitch and roll dropped: ``kitti.from_canonical(lossy=True)``); "strict" writes only the boxes KITTI holds
    exactly (pitch and roll within ``geometry.KITTI_ANGLE_TOL``). Boxes not written are listed with the reason
    in ``not_representable.jsonl``.
    """

    def __init__(self, base: Path, root: Path, frame_ids: list, image_rel: dict, rotation: str, images: str,
                 prepared: Prepared | None = None):
        self.base, self.root, self.image_rel = Path(base), root, image_rel
        self.rotation, self.images, self.prepared = rotation, images, prepared or Prepared()
        self.name_of = {fid: f"{n:06d}" for n, fid in enumerate(sorted(frame_ids))}
        self.split_of: dict[str, str] = {}
        self.skipped: list[tuple[str, str]] = []
        self.counts = {"frames": 0, "frames_without_rows": 0, "rows": 0, "rows_exact": 0, "rows_yaw_only": 0,
                       "not_representable": 0}

    def write_split(self, split: str, frames: pa.Table, boxes: pa.Table) -> dict:
        """The split's frames: label, calibration and image files, and its ImageSets list."""
        base = self.base / "training"
        a = boxes_arrays(boxes)
        frame_of_box = boxes["frame_id"].to_pylist()
        exact = boxes["kitti_representable"].to_pylist()
        reasons = boxes["kitti_reason"].to_pylist()
        box_ids = boxes["box_id"].to_pylist()
        truncation = boxes["truncation"].to_pylist()
        occluded = kitti_occlusion(boxes["visibility"].to_pylist())
        lossy = self.rotation == "yaw-only"
        # The boxes converted a chunk at a time in one numpy pass each, each kept as its label line (a
        # KittiObject per box of a split cost 200 MB at the release's size); a refusal is kept as is.
        convertible = [i for i, ok in enumerate(exact) if ok or lossy]
        converted = {}
        for lo in range(0, len(convertible), EXPORT_CHUNK_ROWS):
            rows = convertible[lo:lo + EXPORT_CHUNK_ROWS]
            for i, obj in zip(rows, kitti.from_canonical_many(
                    a["center_cam"][rows], a["dimensions"][rows], a["R_cam"][rows], a["bbox2d_tight"][rows],
                    [schema.SPECIES[s] for s in a["species"][rows].tolist()], [truncation[i] for i in rows],
                    occluded[rows].tolist(), lossy=lossy, locators=[box_ids[i] for i in rows])):
                converted[i] = obj if isinstance(obj, RecordError) else kitti.format_label_line(obj, KITTI_DECIMALS)
        by_frame: dict[str, list[int]] = {}
        for i, fid in enumerate(frame_of_box):
            by_frame.setdefault(fid, []).append(i)
        # Kept small for the exports' child, which runs beside the statistics and checks: the files are written
        # a few thousand frames at a time, the refusals kept as (box_id, reason).
        counts = {"frames": frames.num_rows, "frames_without_rows": 0, "rows": 0, "rows_exact": 0,
                  "rows_yaw_only": 0, "not_representable": 0}
        files, images = [], []
        calib_of: dict[bytes, bytes] = {}  # the frames of one camera share their calibration text
        frame_ids = frames["frame_id"].to_pylist()
        Ks = tables.fixed_size_matrix(frames.column("K"), 3, 3)
        names = []
        for row in sorted(range(len(frame_ids)), key=frame_ids.__getitem__):
            fid = frame_ids[row]
            name = self.name_of[fid]
            names.append(name)
            self.split_of[fid] = split
            lines = []
            for i in by_frame.get(fid, []):
                line = converted.get(i)
                if line is None or isinstance(line, RecordError):
                    self.skipped.append((box_ids[i], reasons[i] if line is None else line.reason))
                    counts["not_representable"] += 1
                    continue
                lines.append(line)
                counts["rows"] += 1
                counts["rows_exact" if exact[i] else "rows_yaw_only"] += 1
            counts["frames_without_rows"] += not lines  # OpenPCDet's get_infos cannot read such a label file
            files.append((f"{base}/label_2/{name}.txt", "".join(line + "\n" for line in lines).encode()))
            key = Ks[row].tobytes()
            if key not in calib_of:
                calib_of[key] = kitti.format_calib(Ks[row]).encode()
            files.append((f"{base}/calib/{name}.txt", calib_of[key]))
            source = str(self.root / self.image_rel[fid])
            suffix = ".png" if self.images == "png" else Path(source).suffix
            images.append((source, f"{base}/image_2/{name}{suffix}"))
            if len(files) >= EXPORT_CHUNK_ROWS:
                write_files(files)
                _in_threads(self._image, images)
                files, images = [], []
        write_files(files)
        _in_threads(self._image, images)
        sets = self.base / "ImageSets"
        sets.mkdir(parents=True, exist_ok=True)
        (sets / f"{KITTI_IMAGE_SETS.get(split, split)}.txt").write_text("".join(n + "\n" for n in sorted(names)))
        for key, value in counts.items():
            self.counts[key] += value
        return counts

    def finish(self) -> dict:
        """frame_map.txt, the empty test list, not_representable.jsonl; the counts over both splits."""
        sets = self.base / "ImageSets"
        sets.mkdir(parents=True, exist_ok=True)
        (sets / "test.txt").write_text("")
        (self.base / "frame_map.txt").write_text("".join(
            frame_map_line(name, fid, self.image_rel[fid], self.split_of[fid])
            for fid, name in sorted(self.name_of.items(), key=lambda kv: kv[1]) if fid in self.split_of),
            encoding="utf-8")
        (self.base / "not_representable.jsonl").write_text("".join(
            json.dumps({"box_id": box_id, "reason": reason}, sort_keys=True) + "\n"
            for box_id, reason in sorted(self.skipped)))
        return {"layout": "KITTI object root: training/{image_2,label_2,calib}, ImageSets/{train,val,test}.txt",
                "rotation": self.rotation, "images": self.images, **self.counts}

    def _image(self, item: tuple[str, str]) -> None:
        """One frame into training/image_2: its PNG (``KITTI_PNG``) or, when it is one already, a hard link."""
        source, target = item
        if Path(source).suffix.lower() == Path(target).suffix.lower():
            _link_file((source, target))
        else:
            self.prepared.write(KITTI_PNG, source, target)


# frame_map.txt: one line per frame, "<name> <frame_id> <image> <split>" separated by single spaces. A frame id is
# its folder names (a video folder "DJI 0001" has a space), so a character that would split a field or a line
# (any whitespace, a control or format character) and "%" itself are written percent-encoded (their UTF-8
# bytes as %XX, RFC 3986: urllib.parse.unquote reads them back): every line is exactly four fields.
FRAME_MAP_FIELDS = ("name", "frame_id", "image", "split")


def _frame_map_escaped(char: str) -> bool:
    return char == "%" or char.isspace() or unicodedata.category(char)[0] == "C"


def frame_map_field(text: str) -> str:
    """``text`` as a field of frame_map.txt (see ``FRAME_MAP_FIELDS``): unchanged unless it holds a character
    that would split it, which is percent-encoded."""
    if text.isprintable() and " " not in text and "%" not in text:  # the common case: nothing to escape
        return text
    return "".join(quote(c, safe="") if _frame_map_escaped(c) else c for c in text)


def frame_map_line(name: str, frame_id: str, image: str, split: str) -> str:
    return " ".join(frame_map_field(v) for v in (name, frame_id, image, split)) + "\n"


def parse_frame_map_line(line: str) -> dict | None:
    """The fields of one frame_map.txt line (``FRAME_MAP_FIELDS``, percent-decoded); None for a blank line;
    ValueError when it does not hold exactly four fields."""
    parts = line.split()
    if not parts:
        return None
    if len(parts) != len(FRAME_MAP_FIELDS):
        raise ValueError(f"expected {len(FRAME_MAP_FIELDS)} fields ({' '.join(FRAME_MAP_FIELDS)}), got {len(parts)}")
    return dict(zip(FRAME_MAP_FIELDS, (unquote(p, errors="strict") for p in parts)))


def kitti_png(data: bytes) -> bytes | None:
    """The KITTI export's PNG of an encoded frame: decoded and encoded with OpenCV (``KITTI_PNG_PARAMS``),
    pixels as stored, EXIF orientation not applied, as ``datasets`` decodes them. None when it does not
    decode, or its header claims more pixels than Pillow opens (a decompression bomb, which the pipeline
    refuses: a frame's source file is converted before the pipeline has read it)."""
    import cv2  # only a PNG export needs it in this module
    from PIL import Image

    try:
        with Image.open(io.BytesIO(data)):
            pass  # the header only: Pillow refuses a bomb before anything is decoded
    except Exception:  # noqa: BLE001 - not an image Pillow reads, or a bomb
        return None
    pixels = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
    if pixels is None:
        return None
    ok, png = cv2.imencode(".png", pixels, [getattr(cv2, v) if isinstance(v, str) else v for v in KITTI_PNG_PARAMS])
    return png.tobytes() if ok else None


# Every JPEG of the raw source may be a published frame (masks are PNGs already, never a frame's JPEG).
KITTI_PNG = Conversion("kitti.png", applies=lambda path: path.lower().endswith((".jpg", ".jpeg")), make=kitti_png,
                       refused="the frame cannot be decoded, or encoded as PNG, for the KITTI export")
