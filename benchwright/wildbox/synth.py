"""Synthetic WildBox source: drone segments written in the raw release layout.

``write_source(out_dir, scale, seed)`` writes, for every video and segment::

    <out>/<VIDEO>/<SEG>/frame_000001.jpg ...            frames, 1-based file numbers
    <out>/<VIDEO>/<SEG>/metadata.json                    start_time, end_time, frame_numbers
    <out>/<VIDEO>/<SEG>/sam3_masks/metadata.json         text_prompt, object_ids
    <out>/<VIDEO>/<SEG>/sam3_masks/masks/obj_<tid>/frame_NNNNNN.png   visible silhouette, 0/255
    <out>/<VIDEO>/<SEG>/vggt_results/cameras.json
    <out>/<VIDEO>/<SEG>/vggt_results/tracking_summary.json
    <out>/<VIDEO>/<SEG>/vggt_results/point_cloud.ply

exactly as ``docs/reference/wildbox.md`` ("Raw layout of one segment") describes the
release, so the real parser reads it like real data. ``vggt_results/depth_maps.npz`` is NOT
written: neither the authors' preparation nor ours reads it.

What the files hold
-------------------
* Video names look like ``DJI_20250218113812_0013_D`` (date, time and card counter drawn from
  the seed, no clock), segments are ``seg1``, ``seg2``, ... Each video films one species.
* ``cameras.json``: one entry per frame, ``frame_index`` 0..N-1, ``image_name``
  ``frame_{frame_index+1:06d}.jpg`` (file numbers are 1-based: join through ``image_name``),
  ``image_width``/``image_height`` = VGGT's processing resolution 518x294, ``intrinsic`` at that
  resolution (rescale fx, cx by W/518 and fy, cy by H/294 to get the K the frames were rendered
  with), ``extrinsic`` 3x4 world->camera. As in VGGT, the world frame is the first camera's frame
  (``extrinsic`` of frame 0 is ``[I|0]``), so the ground plane is tilted in world coordinates.
* ``tracking_summary.json``: per track id, per frame of its span: world ``centers``,
  ``dimensions`` (l, w, h) = local x, y, z extents, world ``rotation_matrices`` (columns = the box's
  local axes), ``bbox_2d`` at 518x294 (left, top, right, bottom; ``[-1, -1, -1, -1]`` = invalid),
  ``frames`` (cameras[].frame_index), ``confidences``, ``class_name``.
  The animal's local axes are x = body axis (forward, extent = body length L), y = down (extent =
  height H), z = x cross y (extent = width W). So (l, w, h) = (L, H, W) and the Omni3D
  ``[W, H, L]`` the parser derives (reverse of (l, w, h), docs/reference/wildbox.md) is in the order of
  ``schemas.wildbox.SPECIES_DIMENSIONS_M``. Box bottoms sit on the terrain.
  ``bbox_2d`` is the extent of the animal's full (unoccluded) silhouette, clipped to the frame and
  expressed at VGGT resolution; it is the fallback when a mask is missing.
* Per-segment reconstruction scale ``s`` (log-uniform in ``SCENE_SCALE_RANGE``): world
  coordinates, dimensions, extrinsic translations and the point cloud are metres times ``s``.
* Frames: textured savanna ground seen from a drone (pitch 20-60 degrees down, roll a few
  degrees, slow yaw, following the herd), sky above the horizon, soft shadows, and every animal
  drawn as a filled silhouette (the projected convex hulls of body, legs, neck, head ellipsoids
  lying inside its cuboid), far to near (painter's algorithm). A mask is the visible part of the
  silhouette, so the mask extent is tighter than the projected cuboid box; animals near the frame
  edge are truncated.
* Missing data like the release's: about ``mask_drop_rate`` of (track, frame) pairs have no mask
  PNG (plus the rare fully hidden animal), about ``bbox_invalid_rate`` have an invalid ``bbox_2d``.
  A track may start late or end early (SAM3 picking an animal up late or losing it); such an
  animal is drawn only within its span, so every visible animal is labelled.
* Labels are clean by default. ``label_defects=True`` (``benchwright synth wildbox
  --label-defects``) writes the release's known label problems into ``tracking_summary.json``
  only (``DEFECT_*``): rotation sign flips in ~11% of frames, legless boxes whose bottoms sit
  0.11-0.14 H above the terrain, and 1% floating fragments; the build's label-quality checks
  report them.

Allocation (``plan_source``)
------------------------------------
The plan is computed before any rendering and is cheap. Every scale declares exact totals
(videos per species, segments, frames, cuboids) and per-item bounds; they are split with a
bounded largest-remainder apportionment (``_apportion``) over seeded random weights, so the
totals come out exactly:
  1. segments over videos (weights lognormal, bounds ``segments_per_video``);
  2. frames over segments (weights lognormal, bounds ``frames_per_segment``);
  3. cuboids over segments (weights = frames x species herd size ``HERD_SIZE`` x lognormal jitter,
     bounds = frames x ``animals_per_segment``), which makes species unbalanced like the release
     (gazelle herds are large, giraffes come in ones and twos);
  4. a segment with c cuboids and f frames gets a = ceil(c / f) tracks; a - 1 span the whole
     segment and one spans c - (a - 1) f contiguous frames.
``full`` uses the release's counts: 64 videos (elephant 17, rhino 19, plains zebra 15, Grevy's
zebra 5, giraffe 4, gazelle 4), 345 segments, 59,758 frames, 237,505 cuboids.

Determinism
-----------
Every random draw comes from a numpy Generator seeded with a sha256 of (seed, scale, video,
segment) (or (seed, scale, "plan")); JSON is written with sorted keys and floats rounded to
``FLOAT_DIGITS`` significant digits; JPEG quality and PNG compression are fixed; times come from
the seed. Two runs with the same (scale, seed) write byte-identical trees.
"""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Callable, Iterator, Mapping

import cv2
import numpy as np

from benchwright.schemas.wildbox import SPECIES, SPECIES_DIMENSIONS_M

# ---------------------------------------------------------------------------------------------
# Declarative configuration
# ---------------------------------------------------------------------------------------------

VGGT_RESOLUTION = (518, 294)          # (width, height) the intrinsics and bbox_2d refer to
JPEG_QUALITY = 90
PNG_COMPRESSION = 3
FLOAT_DIGITS = 9                      # significant digits of every float in the JSON files
SOURCE_FPS = 30                       # the drone video's frame rate (metadata.json frame_numbers)
FRAME_STRIDE = 10                     # one extracted frame every FRAME_STRIDE video frames
SCENE_SCALE_RANGE = (0.05, 20.0)      # per-segment reconstruction scale, log-uniform
CAMERA_PITCH_DEG = (20.0, 60.0)       # drone camera looks down this much below the horizon
CAMERA_ROLL_DEG = 4.0                 # |roll| stays within about this
CAMERA_HFOV_DEG = (60.0, 80.0)
TERRAIN_TILT_DEG = 6.0                # ground plane slope along each axis
ANIMAL_TILT_DEG = 3.0                 # extra per-animal pitch/roll on top of the terrain
DIMENSION_JITTER = 0.10               # per-animal +-10% on each species-typical dimension

# The release's videos per species (wildbox.md: train/val elephant 14/3, rhino 15/4, ...).
RELEASE_VIDEOS_PER_SPECIES = {
    "giraffe": 4, "grevys_zebra": 5, "elephant": 17, "plains_zebra": 15, "rhino": 19, "gazelle": 4,
}
# SAM3 text prompt per species (also the tracks' class_name); all resolve via SPECIES_ALIASES.
TEXT_PROMPTS = {
    "giraffe": "giraffe", "grevys_zebra": "grevy's zebra", "elephant": "elephant",
    "plains_zebra": "plains zebra", "rhino": "rhino", "gazelle": "gazelle",
}
# Mean animals per frame (herd size); drives the cuboid allocation.
HERD_SIZE = {
    "giraffe": 1.5, "grevys_zebra": 3.0, "elephant": 4.0, "plains_zebra": 4.5, "rhino": 2.5,
    "gazelle": 12.0,
}
WALK_SPEED_M_S = {
    "giraffe": 1.0, "grevys_zebra": 1.2, "elephant": 1.1, "plains_zebra": 1.2, "rhino": 0.8,
    "gazelle": 1.3,
}
SPECIES_COLOR_RGB = {
    "giraffe": (205, 150, 85), "grevys_zebra": (222, 220, 214), "elephant": (120, 117, 114),
    "plains_zebra": (150, 146, 142), "rhino": (112, 104, 98), "gazelle": (196, 142, 88),
}


@dataclass(frozen=True)
class Scale:
    """How big a synthetic source is. Totals are exact; bounds are inclusive."""

    name: str
    videos_per_species: Mapping[str, int]
    segments: int
    frames: int
    cuboids: int
    image_size: tuple[int, int]            # (width, height) of the JPEGs and masks
    segments_per_video: tuple[int, int]
    frames_per_segment: tuple[int, int]
    animals_per_segment: tuple[int, int]   # tracks per segment
    ground_points: int                     # ground samples in each point_cloud.ply
    animal_points: int = 60                # surface samples per animal in point_cloud.ply
    mask_drop_rate: float = 0.04
    bbox_invalid_rate: float = 0.03

    @property
    def videos(self) -> int:
        return sum(self.videos_per_species.values())


SCALES: dict[str, Scale] = {
    # Tests: a few seconds; every species has 2 videos so both splits can hold every species.
    "tiny": Scale(
        name="tiny", videos_per_species={sp: 2 for sp in SPECIES},
        segments=18, frames=72, cuboids=200, image_size=(320, 180),
        segments_per_video=(1, 2), frames_per_segment=(3, 5), animals_per_segment=(2, 4),
        ground_points=600, animal_points=30,
    ),
    # The demo: a minute or two.
    "default": Scale(
        name="default", videos_per_species={sp: 3 for sp in SPECIES},
        segments=40, frames=1500, cuboids=6000, image_size=(640, 360),
        segments_per_video=(1, 4), frames_per_segment=(20, 60), animals_per_segment=(2, 8),
        ground_points=4000,
    ),
    # The release's counts (wildbox.md), with small frames to keep disk and time sane.
    "full": Scale(
        name="full", videos_per_species=dict(RELEASE_VIDEOS_PER_SPECIES),
        segments=345, frames=59_758, cuboids=237_505, image_size=(160, 90),
        segments_per_video=(1, 12), frames_per_segment=(30, 800), animals_per_segment=(1, 16),
        ground_points=1500, animal_points=30,
    ),
}

# Animal shapes: ellipsoid parts in the box's normalised local frame (x forward in [-0.5, 0.5],
# y down with -0.5 = top and +0.5 = ground, z lateral). (centre, semi-axes, tilt degrees about z:
# positive leans the part's top forward, shade). Points are clipped to the box, so the animal
# always lies inside its cuboid.
_Part = tuple[tuple[float, float, float], tuple[float, float, float], float, float]


def _legs(front: float, back: float, top: float, half_z: float, rx: float, rz: float) -> list[_Part]:
    cy, sy = (top + 0.5) / 2, (0.5 - top) / 2 + 0.02
    return [((x, cy, z), (rx, sy, rz), 0.0, 0.78) for x in (front, back) for z in (-half_z, half_z)]


_ZEBRA: list[_Part] = [
    ((-0.08, -0.08, 0.0), (0.32, 0.17, 0.48), 0.0, 1.0),
    ((0.26, -0.25, 0.0), (0.07, 0.20, 0.25), 40.0, 0.95),
    ((0.40, -0.35, 0.0), (0.10, 0.09, 0.22), -50.0, 0.9),
    ((0.36, -0.47, 0.0), (0.03, 0.04, 0.15), 0.0, 0.85),
    ((-0.44, 0.00, 0.0), (0.025, 0.15, 0.05), -10.0, 0.7),
    *_legs(0.14, -0.30, 0.05, 0.22, 0.035, 0.12),
]
SPECIES_SHAPES: dict[str, list[_Part]] = {
    "giraffe": [
        ((-0.15, 0.02, 0.0), (0.30, 0.11, 0.48), -8.0, 1.0),
        ((0.23, -0.25, 0.0), (0.05, 0.25, 0.15), 37.0, 0.95),
        ((0.40, -0.44, 0.0), (0.10, 0.05, 0.18), -20.0, 0.9),
        ((-0.46, 0.10, 0.0), (0.02, 0.12, 0.04), 0.0, 0.7),
        *_legs(0.05, -0.33, 0.12, 0.22, 0.03, 0.08),
    ],
    "grevys_zebra": _ZEBRA,
    "elephant": [
        ((-0.10, -0.15, 0.0), (0.33, 0.33, 0.42), 0.0, 1.0),
        ((0.28, -0.24, 0.0), (0.10, 0.22, 0.30), 0.0, 0.95),
        ((0.22, -0.24, -0.35), (0.04, 0.20, 0.15), 0.0, 0.85),
        ((0.22, -0.24, 0.35), (0.04, 0.20, 0.15), 0.0, 0.85),
        ((0.40, 0.08, 0.0), (0.05, 0.32, 0.07), -10.0, 0.9),
        ((-0.44, -0.05, 0.0), (0.02, 0.15, 0.03), 0.0, 0.7),
        *_legs(0.13, -0.30, 0.10, 0.25, 0.06, 0.14),
    ],
    "plains_zebra": _ZEBRA,
    "rhino": [
        ((-0.05, -0.08, 0.0), (0.38, 0.38, 0.48), 0.0, 1.0),
        ((0.36, 0.02, 0.0), (0.12, 0.20, 0.25), -35.0, 0.92),
        ((0.47, -0.15, 0.0), (0.025, 0.12, 0.06), 20.0, 0.8),
        *_legs(0.20, -0.28, 0.25, 0.25, 0.06, 0.14),
    ],
    "gazelle": [
        ((-0.05, -0.10, 0.0), (0.33, 0.17, 0.48), 0.0, 1.0),
        ((0.27, -0.25, 0.0), (0.06, 0.17, 0.22), 35.0, 0.95),
        ((0.40, -0.35, 0.0), (0.10, 0.07, 0.20), -30.0, 0.9),
        ((0.33, -0.45, -0.12), (0.02, 0.06, 0.04), -25.0, 0.6),
        ((0.33, -0.45, 0.12), (0.02, 0.06, 0.04), -25.0, 0.6),
        ((-0.42, -0.10, 0.0), (0.02, 0.06, 0.05), 0.0, 0.7),
        *_legs(0.15, -0.28, 0.05, 0.20, 0.03, 0.10),
    ],
}


# ---------------------------------------------------------------------------------------------
# The plan (cheap, no rendering)
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class TrackPlan:
    track_id: int
    start: int      # first frame_index of the track
    stop: int       # one past its last frame_index


@dataclass(frozen=True)
class SegmentPlan:
    video: str
    name: str                       # seg1, seg2, ...
    species: str
    frames: int
    frame_numbers: tuple[int, ...]  # video frame numbers of the extracted frames
    tracks: tuple[TrackPlan, ...]

    @property
    def cuboids(self) -> int:
        return sum(t.stop - t.start for t in self.tracks)


@dataclass(frozen=True)
class VideoPlan:
    name: str
    species: str
    segments: tuple[SegmentPlan, ...]


@dataclass(frozen=True)
class SourcePlan:
    scale: Scale
    seed: int
    videos: tuple[VideoPlan, ...]

    def segments(self) -> Iterator[SegmentPlan]:
        for video in self.videos:
            yield from video.segments

    def totals(self) -> dict:
        """videos, segments, frames, cuboids and the same per species."""
        per_species = {sp: {"videos": 0, "segments": 0, "frames": 0, "cuboids": 0} for sp in SPECIES}
        for video in self.videos:
            row = per_species[video.species]
            row["videos"] += 1
            for seg in video.segments:
                row["segments"] += 1
                row["frames"] += seg.frames
                row["cuboids"] += seg.cuboids
        out = {k: sum(r[k] for r in per_species.values()) for k in ("videos", "segments", "frames", "cuboids")}
        out["per_species"] = per_species
        return out


def _rng(*parts: object) -> np.random.Generator:
    """A Generator seeded from a sha256 of the parts (stable across runs and machines)."""
    digest = hashlib.sha256("/".join(str(p) for p in parts).encode("utf-8")).digest()
    return np.random.default_rng(int.from_bytes(digest[:16], "little"))


def _apportion(total: int, weights, lo, hi) -> np.ndarray:
    """Integers in [lo, hi] summing exactly to ``total``, proportional to ``weights`` as far as the
    bounds allow (largest remainder, ties by index)."""
    w = np.asarray(weights, dtype=np.float64)
    n = len(w)
    lo = np.broadcast_to(np.asarray(lo, dtype=np.int64), (n,)).copy()
    hi = np.broadcast_to(np.asarray(hi, dtype=np.int64), (n,)).copy()
    if not (lo.sum() <= total <= hi.sum()) or np.any(lo > hi):
        raise ValueError(f"cannot split {total} into {n} parts within [{lo.sum()}, {hi.sum()}]")
    ideal = total * w / w.sum()
    alloc = np.clip(np.floor(ideal).astype(np.int64), lo, hi)
    idx = np.arange(n)
    while (rem := int(total - alloc.sum())) != 0:
        if rem > 0:
            room = alloc < hi
            order = np.lexsort((idx, -(ideal - alloc)))   # most under-served first
            step = 1
        else:
            room = alloc > lo
            order = np.lexsort((idx, -(alloc - ideal)))   # most over-served first
            step = -1
        chosen = [i for i in order if room[i]][: abs(rem)]
        alloc[chosen] += step
    return alloc


def _video_names(rng: np.random.Generator, n: int) -> list[str]:
    names: list[str] = []
    base = datetime(2025, 1, 6)
    while len(names) < n:
        when = base + timedelta(days=int(rng.integers(0, 84)), seconds=int(rng.integers(6 * 3600, 17 * 3600)))
        name = f"DJI_{when:%Y%m%d%H%M%S}_{int(rng.integers(1, 1000)):04d}_D"
        if name not in names:
            names.append(name)
    return names


def _scale(scale: str | Scale) -> Scale:
    if isinstance(scale, Scale):
        return scale
    if scale not in SCALES:
        raise ValueError(f"unknown WildBox synth scale {scale!r}; choose one of {sorted(SCALES)}")
    return SCALES[scale]


def plan_source(scale: str | Scale = "default", seed: int = 0) -> SourcePlan:
    """Videos, segments, frames and tracks of a synthetic source, without rendering anything."""
    cfg = _scale(scale)
    rng = _rng("wildbox-synth", seed, cfg.name, "plan")
    video_species = [sp for sp in SPECIES for _ in range(cfg.videos_per_species.get(sp, 0))]
    names = _video_names(rng, len(video_species))
    seg_counts = _apportion(cfg.segments, rng.lognormal(0.0, 0.5, len(names)), *cfg.segments_per_video)
    seg_species = [sp for sp, k in zip(video_species, seg_counts, strict=True) for _ in range(k)]
    frames = _apportion(cfg.frames, rng.lognormal(0.0, 0.5, cfg.segments), *cfg.frames_per_segment)
    herd = np.array([HERD_SIZE[sp] for sp in seg_species]) * rng.lognormal(0.0, 0.3, cfg.segments)
    a_lo, a_hi = cfg.animals_per_segment
    cuboids = _apportion(cfg.cuboids, frames * herd, frames * a_lo, frames * a_hi)

    videos, s = [], 0
    for name, species, k in zip(names, video_species, seg_counts, strict=True):
        segments = []
        next_frame = int(rng.integers(30, 600))
        for j in range(k):
            f, c = int(frames[s]), int(cuboids[s])
            numbers = tuple(next_frame + FRAME_STRIDE * i for i in range(f))
            next_frame = numbers[-1] + int(rng.integers(90, 1800))
            n_tracks = -(-c // f)
            short = n_tracks * f - c                     # frames the one partial track misses
            ids = np.cumsum(np.where(rng.random(n_tracks) < 0.15, rng.integers(2, 4, n_tracks), 1))
            ids = ids - 1 + int(rng.integers(0, 2))      # ids start at 0 or 1, with gaps
            partial = int(rng.integers(0, n_tracks))
            start = int(rng.integers(0, short + 1))
            tracks = tuple(
                TrackPlan(int(tid), start, start + f - short) if t == partial else TrackPlan(int(tid), 0, f)
                for t, tid in enumerate(ids)
            )
            segments.append(SegmentPlan(name, f"seg{j + 1}", species, f, numbers, tracks))
            s += 1
        videos.append(VideoPlan(name, species, tuple(segments)))
    return SourcePlan(cfg, seed, tuple(videos))


# ---------------------------------------------------------------------------------------------
# Geometry helpers
# ---------------------------------------------------------------------------------------------

def _fibonacci_sphere(n: int) -> np.ndarray:
    i = np.arange(n) + 0.5
    phi = np.arccos(1.0 - 2.0 * i / n)
    theta = math.pi * (1.0 + 5.0 ** 0.5) * i
    return np.stack([np.cos(theta) * np.sin(phi), np.sin(theta) * np.sin(phi), np.cos(phi)], axis=1)


def _part_points(parts: list[_Part], unit: np.ndarray) -> np.ndarray:
    """(P, M, 3) normalised points of each ellipsoid part, clipped to the box."""
    out = []
    for centre, semi, tilt, _ in parts:
        a = math.radians(tilt)
        rot = np.array([[math.cos(a), -math.sin(a), 0.0], [math.sin(a), math.cos(a), 0.0], [0.0, 0.0, 1.0]])
        pts = (unit * np.asarray(semi)) @ rot.T + np.asarray(centre)
        out.append(np.clip(pts, -0.5, 0.5))
    return np.stack(out)


_SPHERE = _fibonacci_sphere(40)
_SHAPE_POINTS = {sp: _part_points(parts, _SPHERE) for sp, parts in SPECIES_SHAPES.items()}
_SHAPE_SHADES = {sp: np.array([p[3] for p in parts]) for sp, parts in SPECIES_SHAPES.items()}


def _normalize(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def _rotate_about(v: np.ndarray, axis: np.ndarray, angle: float) -> np.ndarray:
    """Rodrigues rotation of the vector v about a unit axis."""
    c, s = math.cos(angle), math.sin(angle)
    return v * c + np.cross(axis, v) * s + axis * float(v @ axis) * (1.0 - c)


def _periodic_noise(rng: np.random.Generator, n: int, beta: float) -> np.ndarray:
    """Tileable 1/f^beta noise in [0, 1], shape (n, n)."""
    spectrum = np.fft.fft2(rng.standard_normal((n, n)))
    f = np.fft.fftfreq(n)
    k = np.sqrt(f[:, None] ** 2 + f[None, :] ** 2)
    k[0, 0] = 1.0
    spectrum *= k ** (-beta)
    spectrum[0, 0] = 0.0
    out = np.real(np.fft.ifft2(spectrum))
    lo, hi = np.percentile(out, [1, 99])
    return np.clip((out - lo) / (hi - lo), 0.0, 1.0)


# ---------------------------------------------------------------------------------------------
# One segment: simulation
# ---------------------------------------------------------------------------------------------

@dataclass
class _Scene:
    scale: float
    normal: np.ndarray              # ground plane n . X = 0 (metric ground frame, z up)
    slope: np.ndarray               # ground height z = slope . (x, y)
    K: np.ndarray                   # (F, 3, 3) intrinsics at the frame resolution
    R: np.ndarray                   # (F, 3, 3) ground -> camera
    C: np.ndarray                   # (F, 3) camera centres (ground frame, metres)
    cam_dist: float
    centers: np.ndarray             # (A, F, 3) box centres (ground frame)
    rotations: np.ndarray           # (A, F, 3, 3) box axes (columns) in the ground frame
    extents: np.ndarray             # (A, 3) local x, y, z extents = (L, H, W) metres
    colors: np.ndarray              # (A, 3) RGB
    sun: np.ndarray                 # (2,) horizontal shadow direction * cot(elevation)
    coarse: np.ndarray              # (N, N, 3) float32 RGB ground colour tile
    coarse_texel: float
    fine: np.ndarray                # (N, N) float32 brightness tile
    fine_texel: float
    sky: np.ndarray                 # (2, 3) RGB sky colour at horizon / top
    grain: np.ndarray               # (H, W, 3) int16 sensor noise


def _simulate(seg: SegmentPlan, cfg: Scale, rng: np.random.Generator) -> _Scene:
    F, A, sp = seg.frames, len(seg.tracks), seg.species
    width, height = cfg.image_size
    t = np.arange(F) * (FRAME_STRIDE / SOURCE_FPS)

    scale = float(np.exp(rng.uniform(math.log(SCENE_SCALE_RANGE[0]), math.log(SCENE_SCALE_RANGE[1]))))
    slope = np.tan(np.radians(rng.uniform(-TERRAIN_TILT_DEG, TERRAIN_TILT_DEG, 2)))
    normal = _normalize(np.array([-slope[0], -slope[1], 1.0]))

    # Animals: species-typical size, herd layout, smooth motion.
    whl = np.asarray(SPECIES_DIMENSIONS_M[sp]) * rng.uniform(1 - DIMENSION_JITTER, 1 + DIMENSION_JITTER, (A, 3))
    extents = whl[:, ::-1].copy()                        # (L, H, W)
    body = float(extents[:, 0].mean())
    spacing = body * rng.uniform(1.3, 2.5)
    radius = spacing * math.sqrt(A) * 0.75 + body
    offsets: list[np.ndarray] = []
    for _ in range(A):
        for _try in range(200):
            p = rng.uniform(-radius, radius, 2)
            if np.hypot(*p) <= radius and all(np.hypot(*(p - q)) >= 0.9 * spacing for q in offsets):
                break
        offsets.append(p)
    offsets_arr = np.array(offsets)

    speed = WALK_SPEED_M_S[sp] * rng.uniform(0.2, 1.0)
    heading = rng.uniform(-math.pi, math.pi) + rng.uniform(-0.03, 0.03) * t \
        + 0.25 * np.sin(2 * math.pi * t / rng.uniform(20, 60) + rng.uniform(0, 2 * math.pi))
    velocity = speed * np.stack([np.cos(heading), np.sin(heading)], axis=1)
    herd = np.concatenate([[[0.0, 0.0]], np.cumsum(velocity[:-1], axis=0) * (FRAME_STRIDE / SOURCE_FPS)])

    wander_w = 2 * math.pi / rng.uniform(15, 50, (A, 2))
    wander_p = rng.uniform(0, 2 * math.pi, (A, 2))
    wander = np.sin(wander_w[:, None] * t[None, :, None] + wander_p[:, None])
    pos = herd[None] + offsets_arr[:, None] + 0.25 * spacing * wander
    facing = np.where(rng.random(A) < 0.7, rng.normal(0.0, 0.35, A), rng.uniform(-math.pi, math.pi, A))
    yaw = heading[None] + facing[:, None] + 0.3 * np.sin(
        2 * math.pi * t[None] / rng.uniform(10, 40, (A, 1)) + rng.uniform(0, 2 * math.pi, (A, 1)))

    ground = np.concatenate([pos, (pos @ slope)[..., None]], axis=-1)          # (A, F, 3)
    ups = []
    for _ in range(A):                      # each animal leans a little more than the terrain
        pitch_a, roll_a = (math.radians(rng.uniform(-ANIMAL_TILT_DEG, ANIMAL_TILT_DEG)) for _ in range(2))
        up = _rotate_about(normal, np.array([1.0, 0.0, 0.0]), pitch_a)
        ups.append(_normalize(_rotate_about(up, np.array([0.0, 1.0, 0.0]), roll_a)))
    up = np.array(ups)[:, None, :]                                              # (A, 1, 3)
    fwd = np.stack([np.cos(yaw), np.sin(yaw), np.zeros_like(yaw)], axis=-1)     # (A, F, 3)
    x_axis = _normalize(fwd - np.sum(fwd * up, axis=-1, keepdims=True) * up)
    y_axis = np.broadcast_to(-up, x_axis.shape)
    z_axis = np.cross(x_axis, y_axis)
    rotations = np.stack([x_axis, y_axis, z_axis], axis=-1)                     # columns
    centers = ground + up * (extents[:, 1] / 2)[:, None, None]

    base = np.asarray(SPECIES_COLOR_RGB[sp], dtype=np.float64)
    colors = np.clip(base[None] * rng.uniform(0.88, 1.12, (A, 1)) * rng.uniform(0.95, 1.05, (A, 3)), 0, 255)

    # Drone camera: follows the herd, looks down 20-60 degrees, rolls a few degrees.
    hfov = math.radians(rng.uniform(*CAMERA_HFOV_DEG))
    fx = width / (2 * math.tan(hfov / 2))
    fy = fx * rng.uniform(0.997, 1.003)
    cx = width / 2 + rng.uniform(-0.01, 0.01) * width
    cy = height / 2 + rng.uniform(-0.01, 0.01) * height
    K = np.zeros((F, 3, 3))
    jitter = 1.0 + 0.002 * rng.standard_normal(F)
    K[:, 0, 0], K[:, 1, 1], K[:, 0, 2], K[:, 1, 2], K[:, 2, 2] = fx * jitter, fy * jitter, cx, cy, 1.0
    vfov_half = math.atan(height / 2 / fy)
    cam_dist = (radius * rng.uniform(0.55, 1.1) + body) / math.tan(vfov_half)

    def wave(amplitude: float, period: tuple[float, float]) -> np.ndarray:
        return amplitude * np.sin(2 * math.pi * t / rng.uniform(*period) + rng.uniform(0, 2 * math.pi))

    lo, hi = CAMERA_PITCH_DEG
    pitch = np.radians(np.clip(rng.uniform(lo + 4, hi - 4) + wave(4.0, (20, 80)), lo, hi))
    roll = np.radians(np.clip(rng.uniform(-3.0, 3.0) + wave(1.5, (10, 40)), -CAMERA_ROLL_DEG - 1, CAMERA_ROLL_DEG + 1))
    cam_yaw = rng.uniform(-math.pi, math.pi) + rng.uniform(-0.04, 0.04) * t + wave(0.1, (20, 60))
    aim_amp = rng.uniform(0.0, 0.6) * radius
    aim = herd + np.stack([wave(aim_amp, (15, 60)), wave(aim_amp, (15, 60))], axis=1)
    target = np.concatenate([aim, (aim @ slope)[:, None]], axis=1) + normal * float(extents[:, 1].mean()) / 2
    dist = cam_dist * (1.0 + wave(0.06, (20, 60)))
    forward = np.stack([np.cos(pitch) * np.cos(cam_yaw), np.cos(pitch) * np.sin(cam_yaw), -np.sin(pitch)], axis=1)
    C = target - dist[:, None] * forward
    right = _normalize(np.cross(forward, np.array([0.0, 0.0, 1.0])))
    down = np.cross(forward, right)
    right, down = (np.cos(roll)[:, None] * right + np.sin(roll)[:, None] * down,
                   -np.sin(roll)[:, None] * right + np.cos(roll)[:, None] * down)
    R = np.stack([right, down, forward], axis=1)                                 # rows: ground -> camera

    elevation = math.radians(rng.uniform(35, 70))
    azimuth = rng.uniform(-math.pi, math.pi)
    sun = -np.array([math.cos(azimuth), math.sin(azimuth)]) / math.tan(elevation)

    # Ground and sky appearance.
    n_tile = 256
    palette = np.array([[150, 122, 88], [192, 172, 112], [104, 130, 72], [176, 160, 104]], dtype=np.float64)
    palette = palette * rng.uniform(0.9, 1.1, (1, 3))
    noise = _periodic_noise(rng, n_tile, 1.6) * (len(palette) - 1)
    i0 = np.floor(noise).astype(int).clip(0, len(palette) - 2)
    frac = (noise - i0)[..., None]
    coarse = (palette[i0] * (1 - frac) + palette[i0 + 1] * frac).astype(np.float32)
    fine = (0.72 + 0.56 * _periodic_noise(rng, n_tile, 0.7)).astype(np.float32)
    sky = np.array([[205, 210, 215], [150, 180, 215]], dtype=np.float64) * rng.uniform(0.9, 1.05)
    grain = np.round(rng.normal(0.0, 3.0, (height, width, 3))).astype(np.int16)
    return _Scene(
        scale=scale, normal=normal, slope=slope, K=K, R=R, C=C, cam_dist=float(cam_dist),
        centers=centers, rotations=rotations, extents=extents, colors=colors, sun=sun,
        coarse=coarse, coarse_texel=float(rng.uniform(0.5, 1.5)) * max(1.0, cam_dist / 60),
        fine=fine, fine_texel=max(0.05, 0.8 * cam_dist / fx), sky=sky, grain=grain,
    )


# ---------------------------------------------------------------------------------------------
# One segment: rendering
# ---------------------------------------------------------------------------------------------

def _wrap(x: np.ndarray, texel: float, n: int) -> np.ndarray:
    """Texture coordinate of ground coordinate x in a tile of n texels (float32, in [0, n))."""
    t = x * np.float32(1.0 / texel)
    return t - np.floor(t * np.float32(1.0 / n)) * np.float32(n)


def _ground_color(scene: _Scene, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """RGB float32 ground colour at ground-frame points (x, y): float32 2D arrays < 32767 wide."""
    n = scene.fine.shape[0]
    coarse = cv2.remap(scene.coarse, _wrap(x, scene.coarse_texel, n), _wrap(y, scene.coarse_texel, n),
                       cv2.INTER_LINEAR, borderMode=cv2.BORDER_WRAP)
    fine = cv2.remap(scene.fine, _wrap(x, scene.fine_texel, n), _wrap(y, scene.fine_texel, n),
                     cv2.INTER_LINEAR, borderMode=cv2.BORDER_WRAP)
    return coarse * fine[..., None]


def _ground_color_points(scene: _Scene, xy: np.ndarray) -> np.ndarray:
    """``_ground_color`` for an (N, 2) array of points."""
    count = len(xy)
    padded = np.concatenate([xy, np.zeros((-count % 1024, 2))]).reshape(-1, 1024, 2).astype(np.float32)
    return _ground_color(scene, padded[..., 0], padded[..., 1]).reshape(-1, 3)[:count]


def _render_ground(scene: _Scene, k: int, width: int, height: int) -> np.ndarray:
    """Ground (ray-plane intersection, textured, hazy with distance) and sky, RGB float32."""
    K, R, C = scene.K[k], scene.R[k], scene.C[k]
    a = ((np.arange(width) - K[0, 2]) / K[0, 0]).astype(np.float32)[None, :]    # camera-frame ray x
    b = ((np.arange(height) - K[1, 2]) / K[1, 1]).astype(np.float32)[:, None]   # camera-frame ray y
    Rt = R.T.astype(np.float32)                                                 # camera -> ground
    rays = [Rt[j, 0] * a + Rt[j, 1] * b + Rt[j, 2] for j in range(3)]           # ground-frame directions
    n = scene.normal.astype(np.float32)
    denom = rays[0] * n[0] + rays[1] * n[1] + rays[2] * n[2]
    dist = np.float32(-float(C @ scene.normal)) / np.where(np.abs(denom) < 1e-9, np.float32(-1e-9), denom)
    hit = (denom < -1e-6) & (dist > 0) & (dist < 40 * scene.cam_dist)
    dist = np.where(hit, dist, np.float32(0.0))
    color = _ground_color(scene, np.float32(C[0]) + dist * rays[0], np.float32(C[1]) + dist * rays[1])
    norm = np.sqrt(rays[0] * rays[0] + rays[1] * rays[1] + rays[2] * rays[2])
    elevation = np.maximum(rays[2] / norm, np.float32(0.0))[..., None]         # 0 at the horizon
    sky0, sky1 = scene.sky.astype(np.float32)
    sky = sky0 + (sky1 - sky0) * elevation
    haze = np.minimum(np.maximum((dist * np.float32(1.0 / scene.cam_dist) - np.float32(1.5)) * np.float32(0.1),
                                 np.float32(0.0)), np.float32(0.75))
    haze = np.where(hit, haze, np.float32(1.0))[..., None]                     # no hit: sky only
    return color * (np.float32(1.0) - haze) + sky * haze


def _project(scene: _Scene, k: int, pts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    cam = (pts - scene.C[k]) @ scene.R[k].T
    z = cam[..., 2]
    K = scene.K[k]
    uv = np.stack([K[0, 0] * cam[..., 0] / z + K[0, 2], K[1, 1] * cam[..., 1] / z + K[1, 2]], axis=-1)
    return uv, z


def _poly(uv: np.ndarray, width: int, height: int) -> np.ndarray:
    """Convex hull of projected points as int32 with 4 fractional bits (cv2 ``shift=4``)."""
    uv = np.clip(uv, -4.0 * width, 5.0 * width)
    return cv2.convexHull(np.round(uv * 16).astype(np.int32).reshape(-1, 1, 2))


def _render_frame(scene: _Scene, k: int, animals: list[int], species: str, width: int, height: int
                  ) -> tuple[np.ndarray, np.ndarray, dict[int, tuple[float, float, float, float] | None]]:
    """Frame (BGR uint8), label map (0 = ground, i + 1 = animal i) and each animal's full-silhouette
    extent (x0, y0, x1, y1 clipped to the frame, None if entirely outside)."""
    rgb = _render_ground(scene, k, width, height)

    shadow = np.zeros((height, width), np.uint8)
    ring = np.linspace(0, 2 * math.pi, 16, endpoint=False)
    for i in animals:
        L, H, W = scene.extents[i]
        bottom = scene.centers[i, k] + scene.rotations[i, k][:, 1] * H / 2
        foot = (bottom + np.outer(np.cos(ring) * 0.45 * L, scene.rotations[i, k][:, 0])
                + np.outer(np.sin(ring) * 0.45 * W, scene.rotations[i, k][:, 2]))
        cast = foot.copy()
        cast[:, :2] += scene.sun * H * 0.7
        cast[:, 2] = cast[:, :2] @ scene.slope
        uv, z = _project(scene, k, np.concatenate([foot, cast]))
        if np.all(z > 1e-3 * scene.cam_dist):
            cv2.fillConvexPoly(shadow, _poly(uv, width, height), 1, cv2.LINE_8, 4)
    rgb = rgb * (1.0 - np.float32(0.35) * shadow[..., None])
    frame = np.ascontiguousarray(np.clip(np.round(rgb[..., ::-1]), 0, 255).astype(np.uint8))

    label = np.zeros((height, width), np.uint8)
    extents: dict[int, tuple[float, float, float, float] | None] = {}
    depth = [float((scene.centers[i, k] - scene.C[k]) @ scene.R[k][2]) for i in animals]
    shape_pts = _SHAPE_POINTS[species]
    shades = _SHAPE_SHADES[species]
    for i in [a for _, a in sorted(zip(depth, animals, strict=True), key=lambda p: -p[0])]:    # far to near
        local = shape_pts * scene.extents[i]                                     # (P, M, 3)
        pts = scene.centers[i, k] + local @ scene.rotations[i, k].T
        uv, z = _project(scene, k, pts)
        if np.any(z <= 1e-3 * scene.cam_dist):
            extents[i] = None
            continue
        x0, y0 = uv[..., 0].min(), uv[..., 1].min()
        x1, y1 = uv[..., 0].max(), uv[..., 1].max()
        inside = x1 >= 0 and y1 >= 0 and x0 <= width - 1 and y0 <= height - 1
        extents[i] = (max(x0, 0.0), max(y0, 0.0), min(x1, width - 1.0), min(y1, height - 1.0)) if inside else None
        for p in range(len(shape_pts)):
            poly = _poly(uv[p], width, height)
            bgr = tuple(float(c) for c in (scene.colors[i] * shades[p])[::-1])
            cv2.fillConvexPoly(frame, poly, bgr, cv2.LINE_AA, 4)
            cv2.fillConvexPoly(label, poly, i + 1, cv2.LINE_8, 4)
    frame = np.clip(frame.astype(np.int16) + np.roll(scene.grain, 37 * k, axis=(0, 1)), 0, 255).astype(np.uint8)
    return frame, label, extents


def _point_cloud(scene: _Scene, seg: SegmentPlan, cfg: Scale, rng: np.random.Generator
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Ground points back-projected from a few frames plus points on the animals' surfaces
    (ground frame, metres) and their RGB colours in [0, 1]."""
    width, height = cfg.image_size
    keys = sorted({0, seg.frames // 2, seg.frames - 1})
    points, colors = [], []
    per_frame = -(-cfg.ground_points // len(keys))
    for k in keys:
        u = rng.uniform(0, width - 1, per_frame)
        v = rng.uniform(0, height - 1, per_frame)
        K = scene.K[k]
        rays = np.stack([(u - K[0, 2]) / K[0, 0], (v - K[1, 2]) / K[1, 1], np.ones_like(u)], axis=1) @ scene.R[k]
        denom = rays @ scene.normal
        dist = -float(scene.C[k] @ scene.normal) / np.where(np.abs(denom) < 1e-9, -1e-9, denom)
        ok = (denom < -1e-6) & (dist > 0) & (dist < 8 * scene.cam_dist)
        pts = scene.C[k] + dist[ok, None] * rays[ok]
        points.append(pts)
        colors.append(_ground_color_points(scene, pts[:, :2]).astype(np.float64) / 255.0)
    k = seg.frames // 2
    for i, track in enumerate(seg.tracks):
        if not track.start <= k < track.stop:
            continue
        parts = SPECIES_SHAPES[seg.species]
        which = rng.integers(0, len(parts), cfg.animal_points)
        unit = _normalize(rng.standard_normal((cfg.animal_points, 3)))
        local = np.empty((cfg.animal_points, 3))
        for j, (centre, semi, tilt, _) in enumerate(parts):
            sel = which == j
            a = math.radians(tilt)
            rot = np.array([[math.cos(a), -math.sin(a), 0.0], [math.sin(a), math.cos(a), 0.0], [0.0, 0.0, 1.0]])
            local[sel] = np.clip((unit[sel] * np.asarray(semi)) @ rot.T + np.asarray(centre), -0.5, 0.5)
        pts = scene.centers[i, k] + (local * scene.extents[i]) @ scene.rotations[i, k].T
        points.append(pts)
        colors.append(np.repeat(scene.colors[i][None] / 255.0, len(pts), axis=0))
    pts = np.concatenate(points)
    pts = pts + rng.normal(0.0, 0.001 * scene.cam_dist, pts.shape)
    return pts, np.clip(np.concatenate(colors), 0.0, 1.0)


# ---------------------------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------------------------

def _fmt_float(value: float) -> float:
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"non-finite value {value!r} in a generated file")
    rounded = float(f"{value:.{FLOAT_DIGITS}g}")
    return 0.0 if rounded == 0.0 else rounded


def _jsonable(obj):
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, np.ndarray):
        return _jsonable(obj.tolist())
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return _fmt_float(obj)
    return obj


def _write_json(path: Path, obj) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(_jsonable(obj), sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    path.write_bytes(text.encode("ascii") + b"\n")


def _write_ply(path: Path, points: np.ndarray, colors: np.ndarray) -> None:
    import open3d as o3d  # heavy import, only needed here

    path.parent.mkdir(parents=True, exist_ok=True)
    cloud = o3d.geometry.PointCloud()
    cloud.points = o3d.utility.Vector3dVector(np.ascontiguousarray(points, dtype=np.float64))
    cloud.colors = o3d.utility.Vector3dVector(np.ascontiguousarray(colors, dtype=np.float64))
    if not o3d.io.write_point_cloud(str(path), cloud, write_ascii=False, compressed=False):
        raise OSError(f"open3d could not write {path}")


def _frame_file(frame_index: int, ext: str) -> str:
    return f"frame_{frame_index + 1:06d}.{ext}"          # file numbers are 1-based


# Label defects of the real release (reference "Known label problems"), written only with
# ``label_defects=True``: in this share of frames one animal's rotation is turned half way round
# its up axis (a sign flip of two columns: the same corners, the opposite heading); every box
# misses the legs, so its bottom sits this many box heights above the terrain; this share of
# observations are fragments floating FRAGMENT_LIFT box heights above the ground.
DEFECT_FLIP_FRAME_RATE = 0.11
DEFECT_LEG_GAP = (0.11, 0.14)
DEFECT_FRAGMENT_RATE = 0.01
DEFECT_FRAGMENT_LIFT = (1.2, 2.0)


def _add_label_defects(tracks: dict, n_frames: int, rng: np.random.Generator, stats: dict) -> None:
    """Turns clean labels into ones with the release's defects, in place (see DEFECT_*)."""
    ids = sorted(tracks, key=int)
    for tid in ids:
        t = tracks[tid]
        R = np.asarray(t["rotation_matrices"], float)
        down = R[:, :, 1]  # local y (the height axis) points down
        dims = np.asarray(t["dimensions"], float).copy()  # (l, w, h) = (L, H, W)
        gap = rng.uniform(*DEFECT_LEG_GAP, len(dims))  # bottom gap, in the shortened box's heights
        height = dims[:, 1] / (1 + gap)
        # the box loses its legs (the top stays, the centre rises by half the lost height); a
        # fragment also floats up by DEFECT_FRAGMENT_LIFT of its height
        fragment = rng.random(len(dims)) < DEFECT_FRAGMENT_RATE
        rise = (dims[:, 1] - height) / 2 + fragment * rng.uniform(*DEFECT_FRAGMENT_LIFT, len(dims)) * height
        dims[:, 1] = height
        t["centers"] = np.asarray(t["centers"], float) - down * rise[:, None]
        t["dimensions"] = dims
        stats["defect_fragments"] += int(fragment.sum())
        stats["defect_legs"] += len(dims)
    for k in np.flatnonzero(rng.random(n_frames) < DEFECT_FLIP_FRAME_RATE):
        present = [tid for tid in ids if int(k) in tracks[tid]["frames"]]
        if present:
            t = tracks[present[int(rng.integers(len(present)))]]
            j = t["frames"].index(int(k))
            R = np.asarray(t["rotation_matrices"], float).copy()
            R[j] = R[j] @ np.diag([-1.0, 1.0, -1.0])
            t["rotation_matrices"] = R
            stats["defect_flips"] += 1


def _write_segment(seg: SegmentPlan, cfg: Scale, seed: int, out_dir: Path, label_defects: bool = False) -> dict:
    rng = _rng("wildbox-synth", seed, cfg.name, seg.video, seg.name)
    scene = _simulate(seg, cfg, rng)
    width, height = cfg.image_size
    vw, vh = VGGT_RESOLUTION
    sx, sy = width / vw, height / vh
    seg_dir = out_dir / seg.video / seg.name
    (seg_dir / "vggt_results").mkdir(parents=True, exist_ok=True)

    # World = first camera's frame scaled by s (VGGT's convention).
    R0, C0, s = scene.R[0], scene.C[0], scene.scale
    to_vggt = np.diag([1 / sx, 1 / sy, 1.0])
    cameras = []
    for k in range(seg.frames):
        extrinsic = np.concatenate([scene.R[k] @ R0.T, (s * scene.R[k] @ (C0 - scene.C[k]))[:, None]], axis=1)
        cameras.append({
            "frame_index": k, "image_name": _frame_file(k, "jpg"),
            "image_width": vw, "image_height": vh,
            "intrinsic": to_vggt @ scene.K[k], "extrinsic": extrinsic,
        })

    stats = {"masks_written": 0, "masks_dropped": 0, "masks_empty": 0, "bbox_2d_invalid": 0,
             "defect_flips": 0, "defect_legs": 0, "defect_fragments": 0}
    bbox_2d = {t.track_id: [] for t in seg.tracks}
    mask_root = seg_dir / "sam3_masks" / "masks"
    for k in range(seg.frames):
        animals = [i for i, t in enumerate(seg.tracks) if t.start <= k < t.stop]
        frame, label, extents = _render_frame(scene, k, animals, seg.species, width, height)
        cv2.imwrite(str(seg_dir / _frame_file(k, "jpg")), frame, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
        for i in animals:
            track = seg.tracks[i]
            drop, invalid = rng.random() < cfg.mask_drop_rate, rng.random() < cfg.bbox_invalid_rate
            box = extents[i]
            if box is None or invalid:
                bbox_2d[track.track_id].append([-1.0, -1.0, -1.0, -1.0])
                stats["bbox_2d_invalid"] += 1
            else:
                noise = rng.normal(0.0, 0.4, 4)
                bbox_2d[track.track_id].append([
                    max(0.0, box[0] / sx + noise[0]), max(0.0, box[1] / sy + noise[1]),
                    min(vw - 1.0, box[2] / sx + noise[2]), min(vh - 1.0, box[3] / sy + noise[3])])
            visible = label == i + 1
            if not visible.any():
                stats["masks_empty"] += 1
            elif drop:
                stats["masks_dropped"] += 1
            else:
                path = mask_root / f"obj_{track.track_id}" / _frame_file(k, "png")
                path.parent.mkdir(parents=True, exist_ok=True)
                cv2.imwrite(str(path), visible.astype(np.uint8) * 255, [cv2.IMWRITE_PNG_COMPRESSION, PNG_COMPRESSION])
                stats["masks_written"] += 1

    tracks = {}
    prompt = TEXT_PROMPTS[seg.species]
    for i, track in enumerate(seg.tracks):
        span = slice(track.start, track.stop)
        n = track.stop - track.start
        tracks[str(track.track_id)] = {
            "centers": s * (scene.centers[i, span] - C0) @ R0.T,
            "dimensions": np.repeat(s * scene.extents[i][None], n, axis=0),
            "rotation_matrices": np.einsum("ab,fbc->fac", R0, scene.rotations[i, span]),
            "bbox_2d": bbox_2d[track.track_id],
            "frames": list(range(track.start, track.stop)),
            "confidences": rng.uniform(0.55, 0.99, n),
            "class_name": prompt,
        }
    points, colors = _point_cloud(scene, seg, cfg, rng)
    if label_defects:  # a generator of its own: the clean source's draws stay the same
        _add_label_defects(tracks, seg.frames, _rng("wildbox-defects", seed, cfg.name, seg.video, seg.name), stats)

    _write_json(seg_dir / "metadata.json", {
        "start_time": seg.frame_numbers[0] / SOURCE_FPS, "end_time": seg.frame_numbers[-1] / SOURCE_FPS,
        "frame_numbers": list(seg.frame_numbers),
    })
    _write_json(seg_dir / "sam3_masks" / "metadata.json", {
        "text_prompt": prompt, "object_ids": [t.track_id for t in seg.tracks],
    })
    _write_json(seg_dir / "vggt_results" / "cameras.json", {"cameras": cameras})
    _write_json(seg_dir / "vggt_results" / "tracking_summary.json", {"tracks": tracks})
    _write_ply(seg_dir / "vggt_results" / "point_cloud.ply", s * (points - C0) @ R0.T, colors)
    stats["scene_scale"] = s
    return stats


def write_source(out_dir: str | Path, scale: str | Scale = "default", seed: int = 0,
                 progress: Callable[[int, int, str], None] | None = None, label_defects: bool = False) -> dict:
    """Write a synthetic raw WildBox source under ``out_dir`` (which must be absent or empty).

    ``scale`` is a name in ``SCALES`` ("tiny", "default", "full") or a ``Scale``.
    ``label_defects``: also write the release's known label defects (``DEFECT_*``: rotation sign
    flips, boxes without legs, floating fragments); the clean labels are the default.
    Segments are generated and written one at a time (``full`` streams; nothing is kept in
    memory but the plan). ``progress(frames_done, frames_total, "frames")`` is called after each segment.
    Returns a summary: scale, seed, image_size, videos, segments, frames, cuboids,
    masks_written, masks_missing (= masks_dropped + masks_empty), bbox_2d_invalid, per_species
    {species: {videos, segments, frames, cuboids}} and scene_scales {"VIDEO/SEG": s}.
    """
    out = Path(out_dir)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise FileExistsError(f"{out} exists and is not an empty folder; choose a new output folder")
    plan = plan_source(scale, seed)
    cfg = plan.scale
    totals = plan.totals()
    out.mkdir(parents=True, exist_ok=True)
    counters = {"masks_written": 0, "masks_dropped": 0, "masks_empty": 0, "bbox_2d_invalid": 0,
                "defect_flips": 0, "defect_legs": 0, "defect_fragments": 0}
    scene_scales = {}
    done = 0
    for seg in plan.segments():
        stats = _write_segment(seg, cfg, seed, out, label_defects)
        for key in counters:
            counters[key] += stats[key]
        scene_scales[f"{seg.video}/{seg.name}"] = stats["scene_scale"]
        done += seg.frames
        if progress is not None:
            progress(done, totals["frames"], "frames")
    return {
        "scale": cfg.name, "seed": seed, "image_size": list(cfg.image_size),
        "videos": totals["videos"], "segments": totals["segments"], "frames": totals["frames"],
        "cuboids": totals["cuboids"], **counters,
        "masks_missing": counters["masks_dropped"] + counters["masks_empty"],
        "per_species": totals["per_species"], "scene_scales": scene_scales,
    }


__all__ = [
    "SCALES", "Scale", "SourcePlan", "VideoPlan", "SegmentPlan", "TrackPlan",
    "plan_source", "write_source",
]
