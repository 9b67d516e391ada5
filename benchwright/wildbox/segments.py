"""The canonical raw segment every WildBox source parser produces (``benchwright.wildbox.sources``): a segment's
frames (image, camera) and its (track, frame) observations in the world frame, as the source gives them."""
from __future__ import annotations

import dataclasses
from collections import Counter

import numpy as np

from benchwright.fields import quote
from benchwright.ranges import fits, integer_ranges, out_of_range
from benchwright.records import Reject
from benchwright.schemas import wildbox as schema


@dataclasses.dataclass
class RawFrame:
    frame_index: int
    image_url: str
    image_rel: str            # path relative to the source root
    P: np.ndarray             # 3x4 projection in the camera frame, at the resolution below
    calib_size: tuple | None  # (width, height) that P (and bbox_2d) refer to; None = the image's own
    extrinsic: np.ndarray     # 3x4 world -> camera
    problem: str | None = None  # why the frame's file is refused before it is read


@dataclasses.dataclass
class RawSegment:
    segment_id: str
    video_id: str
    locator: str              # the file the observations come from (for quarantine rows)
    frames: list              # RawFrame, sorted by frame_index
    track_id: np.ndarray      # (n,) one row per (track, frame) observation
    frame_index: np.ndarray   # (n,)
    center: np.ndarray        # (n, 3) world frame, raw reconstruction units
    dims_whl: np.ndarray      # (n, 3)
    R: np.ndarray             # (n, 3, 3) world frame
    bbox2d: np.ndarray        # (n, 4) xyxy at calib_size, NaN when invalid
    class_name: list
    mask_url: list            # per observation: the SAM3 mask PNG, or None
    mask_problems: dict = dataclasses.field(default_factory=dict)  # mask URL -> why it is refused unread
    point_cloud_url: str | None = None
    point_cloud_problem: str | None = None  # why the cloud at point_cloud_url is refused unread
    track_locator: list = dataclasses.field(default_factory=list)
    bbox_source: str = "vggt"  # what the bbox2d column is: the VGGT tracker's box or a label file's
    normalised: bool = False   # the 3D boxes are already in a per-segment normalised frame (kept as they are)
    folder_species: str | None = None  # the species its source folder names (the authors' per-species tree)
    # Reject rows of what was refused as the segment was read (observations whose ids no column holds):
    # yielded by the stage that reads it, so that they count as read
    refused: list = dataclasses.field(default_factory=list)

    def box_species(self) -> tuple[list, list, list]:
        """Per observation: (species or None, what decided it (schema.SPECIES_FROM) or None, why there is
        none or ""), from its class name and the segment's species folder (``schema.decide_species``)."""
        decided = [schema.decide_species(c, self.folder_species) for c in self.class_name]
        return [d[0] for d in decided], [d[1] for d in decided], [d[2] for d in decided]

    @property
    def species(self) -> str | None:
        counts = Counter(n for n in self.box_species()[0] if n)
        return min(counts, key=lambda n: (-counts[n], n)) if counts else None


class Observations:
    """Collects one segment's (track, frame) observations row by row, then builds the RawSegment. An
    observation whose track id or frame index is not an integer the boxes config can hold (its Features'
    ``int32``: a track id of 3,000,000,000, a frame index of 10^30) is refused on its own, as a box."""

    IDS = ("track_id", "frame_index")

    def __init__(self):
        self.rows = []
        self.refused = []

    def add(self, track_id, frame_index, center, dims_whl, R, bbox2d, class_name, locator, mask_url=None):
        ranges = integer_ranges(schema.BOXES)
        problems = []
        values = []
        for column, value in zip(self.IDS, (track_id, frame_index)):
            try:
                value = integer(value)
            except (TypeError, ValueError, OverflowError):
                problems.append(f"{column} {quote(value)} is not an integer")
                continue
            if not fits(value, *ranges[column][:2]):
                problems.append(out_of_range(column, value, ranges[column]))
            values.append(value)
        if problems:
            self.refused.append(Reject("box", locator, "; ".join(problems)))
            return
        self.rows.append((*values, center, dims_whl, R, bbox2d, class_name, locator, mask_url))

    def segment(self, **fields) -> RawSegment:
        track, frame, center, dims, R, bbox, cls, loc, mask = (list(c) for c in zip(*self.rows)) if self.rows \
            else ([] for _ in range(9))
        return RawSegment(
            track_id=np.array(track, dtype=np.int64), frame_index=np.array(frame, dtype=np.int64),
            center=np.array(center, float).reshape(-1, 3), dims_whl=np.array(dims, float).reshape(-1, 3),
            R=np.array(R, float).reshape(-1, 3, 3), bbox2d=np.array(bbox, float).reshape(-1, 4),
            class_name=cls, mask_url=mask, track_locator=loc, refused=self.refused, **fields)


def integer(value) -> int:
    """A JSON integer (or a float or digit string holding one, as exporters write them); ValueError for
    anything else: int() would truncate 2.5, and raise OverflowError on an infinite float."""
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not an integer")
    if isinstance(value, float) and not value.is_integer():
        raise ValueError(f"{value!r} is not an integer")
    if isinstance(value, str) and not value.strip().lstrip("+-").isdigit():
        raise ValueError(f"{value!r} is not an integer")
    return int(value)
