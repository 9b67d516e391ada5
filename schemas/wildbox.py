"""WildBox: taxonomy and the datasets.Features of every config (the single source of truth)."""
from __future__ import annotations

from datasets import ClassLabel, Features, Image, List, Value

# Fixed order = dataset category id ascending; a model's contiguous id is the rank.
SPECIES = ("giraffe", "grevys_zebra", "elephant", "plains_zebra", "rhino", "gazelle")
CATEGORY_IDS = {name: 1000 + i for i, name in enumerate(SPECIES)}
# Coarse classes merge the two zebras (the curriculum's first stage).
COARSE_CLASSES = ("giraffe", "zebra", "elephant", "rhino", "gazelle")
COARSE_OF = {s: ("zebra" if s.endswith("zebra") else s) for s in SPECIES}
# Names a raw source may use for a species (SAM3 prompts, KITTI type column, Omni3D category_name).
SPECIES_ALIASES = {
    **{s: s for s in SPECIES},
    "grevy's zebra": "grevys_zebra", "grevy_zebra": "grevys_zebra", "grevys zebra": "grevys_zebra",
    "plains zebra": "plains_zebra", "zebra_plains": "plains_zebra",
}
SPLITS = ("train", "validation")
# Where a tight 2D box came from: a SAM3 mask, the VGGT tracker, a label file (KITTI / Omni3D), the projection.
BBOX_SOURCES = ("sam3", "vggt", "label", "projected")

# Typical adult body size in metres [W, H, L] (width across, shoulder/total height, body length).
SPECIES_DIMENSIONS_M = {
    "giraffe": (1.0, 4.8, 4.0),
    "grevys_zebra": (0.7, 1.5, 2.6),
    "elephant": (2.5, 3.2, 6.0),
    "plains_zebra": (0.65, 1.35, 2.3),
    "rhino": (1.5, 1.7, 3.8),
    "gazelle": (0.35, 0.85, 1.1),
}


def canonical_species(name: str) -> str | None:
    """The canonical species name for a raw class name, or None if it is not a WildBox species."""
    key = name.strip().lower()
    return SPECIES_ALIASES.get(key) or SPECIES_ALIASES.get(key.replace("-", "_").replace(" ", "_"))


# What decided a box's species (the boxes config's species_from): its class name (the SAM3 prompt, a KITTI
# type, an Omni3D category_name) or, where that is generic, the species folder of the authors' source tree
# (<species>/WildBox_sam3-vggtv1_processed/WildBox/<video>/<segment>/), which is where the authors' own
# preparation takes every species from.
SPECIES_FROM = ("class_name", "folder")
# Class names that name no species: the authors' default class_name ("object"), and words for any animal.
GENERIC_CLASS_NAMES = frozenset({"", "object", "objects", "animal", "animals", "wildlife"})


def folder_species(name: str) -> str | None:
    """The species a source folder names: a species or its plural, as the authors name them ("giraffes",
    "rhinos", "elephants", "plains_zebras"); None for anything else ("zebras" names two species)."""
    key = name.strip().lower()
    for stem in (key, key[:-1] if key.endswith("s") else None, key[:-2] if key.endswith("es") else None):
        if stem and (found := canonical_species(stem)):
            return found
    return None


def decide_species(class_name: str, from_folder: str | None) -> tuple[str | None, str | None, str]:
    """(species, what decided it (one of SPECIES_FROM), why there is none) of one box from its class name and
    its source folder's species (None outside the authors' per-species tree). A class name that names a
    species decides, and must agree with the folder; a generic one (GENERIC_CLASS_NAMES, or a coarse class
    such as "zebra" that holds the folder's species) leaves it to the folder."""
    named = canonical_species(class_name)
    if named:
        if from_folder and from_folder != named:
            return None, None, f"class {class_name!r} names {named}, its source folder {from_folder}"
        return named, SPECIES_FROM[0], ""
    key = class_name.strip().lower()
    coarse = key.replace(" ", "_").replace("-", "_")
    generic = key in GENERIC_CLASS_NAMES or coarse in COARSE_CLASSES
    if from_folder and generic:
        if coarse in COARSE_CLASSES and COARSE_OF[from_folder] != coarse:
            return None, None, f"class {class_name!r} cannot be {from_folder}, the species of its source folder"
        return from_folder, SPECIES_FROM[1], ""
    expected = f"expected one of {', '.join(SPECIES)}"
    if generic:
        return None, None, f"class {class_name!r} names no species and no species folder holds it ({expected})"
    return None, None, f"unknown class {class_name!r} ({expected})"


def _vec(n: int, dtype: str = "float64") -> List:
    return List(Value(dtype), length=n)


def _mat(rows: int, cols: int) -> List:
    return List(List(Value("float64"), length=cols), length=rows)


# One cuboid as stored in every config that holds objects.
_CUBOID = {
    "track_id": Value("int32"),
    "species": ClassLabel(names=list(SPECIES)),
    "category_id": Value("int32"),            # WildBox dataset id (1000..1005)
    "coarse_class": ClassLabel(names=list(COARSE_CLASSES)),
    "center_cam": _vec(3),                    # box centre, normalised camera frame
    "dimensions": _vec(3),                    # [W, H, L], normalised units
    "R_cam": _mat(3, 3),
    "corners_cam": _mat(8, 3),
    "bev_footprint": List(_vec(2)),           # convex hull of the corners on the camera x-z plane, CCW
    "yaw_pitch_roll": _vec(3),                # radians, R = R_y(yaw) R_x(pitch) R_z(roll)
    "depth": Value("float64"),                # z of the centre (1 = the median over all the segment's boxes with z > 0)
    "bbox2d_tight": _vec(4),                  # xyxy: SAM3 mask extent, else VGGT / label box, else projection
    "bbox2d_proj": _vec(4),                   # xyxy: projected corners, clipped to the image
    "bbox_source": ClassLabel(names=list(BBOX_SOURCES)),
    "truncation": Value("float32"),           # fraction of the projected box outside the image
    "visibility": Value("float32"),           # silhouette share no nearer published cuboid covers (geometry.occlusion_visibility)
    "segmentation_pts": Value("int32"),       # mask pixel count, capped at 10,000
    "support_points": Value("int32"),         # reconstruction points inside the cuboid (Open3D); -1 without a readable cloud
    "ground_offset": Value("float32"),        # box bottom above the segment's ground plane, in box heights
    "kitti_representable": Value("bool"),
    "kitti_reason": Value("string"),          # why not, empty when representable
}

BOXES = Features({
    "box_id": Value("string"),                # "<frame_id>#<track_id>"
    "frame_id": Value("string"),              # "<video>/<segment>/<image stem>"
    "image_id": Value("int64"),               # stable id used by the Omni3D export
    "video_id": Value("string"),
    "segment_id": Value("string"),            # "<video>/<segment>"
    "frame_index": Value("int32"),
    **_CUBOID,
    "species_from": ClassLabel(names=list(SPECIES_FROM)),  # what decided species: the class name or the folder
    "K": _mat(3, 3),
    "image_width": Value("int32"),
    "image_height": Value("int32"),
    "scale_factor": Value("float64"),         # multiply raw reconstruction units by this to get normalised units
    "split": Value("string"),
})

FRAMES = Features({
    "frame_id": Value("string"),
    "image_id": Value("int64"),
    "video_id": Value("string"),
    "segment_id": Value("string"),
    "frame_index": Value("int32"),
    "image": Image(),
    "image_path": Value("string"),            # relative to the source root
    "width": Value("int32"),
    "height": Value("int32"),
    "K": _mat(3, 3),
    "scale_factor": Value("float64"),
    "objects": List({"box_id": Value("string"), **_CUBOID}),
    "split": Value("string"),
})

SEGMENTS = Features({
    "segment_id": Value("string"),
    "video_id": Value("string"),
    "species": ClassLabel(names=list(SPECIES)),
    "scale_factor": Value("float64"),
    "scale_rule": Value("string"),            # "1/median(z)", "1/max(z)" (< 3 boxes) or "none", over every
                                              # well-formed box with z > 0 before any 2D check (the release's rule);
                                              # "given": the source is normalised already (scale 1)
    "num_frames": Value("int32"),
    "num_boxes": Value("int32"),
    "num_tracks": Value("int32"),
    "num_masks_missing": Value("int32"),
    "split": Value("string"),
})

CONFIGS = {"frames": FRAMES, "boxes": BOXES, "segments": SEGMENTS}
ID_COLUMNS = {"frames": "frame_id", "boxes": "box_id", "segments": "segment_id"}
