"""Rejected WildBox observations leave no trace on the published boxes: they occlude nothing.

Two observations are added to a tiny source, each placed half way between the camera and a
published box so that it would cover that box completely: a second observation of a (track,
frame) pair, and an observation whose frame index is not in cameras.json (computed with the
camera of the segment's first frame, where a fallback to frame 0 would put it). Both are
quarantined; every published box keeps its visibility and raw geometry (the repeated observation
still counts for the segment's scale, the release's rule), and other segments are unchanged.
"""
from __future__ import annotations

import json
import shutil

import numpy as np
import pyarrow.parquet as pq
import pytest

from tests.quality_builds import tiny_wildbox
from tests.wildbox_helpers import build_wildbox

MISSING_FRAME = 9999
BOX_COLUMNS = ["box_id", "segment_id", "track_id", "frame_index", "center_cam", "corners_cam", "visibility",
               "scale_factor"]


def read_boxes(root):
    return {b["box_id"]: b for b in pq.ParquetDataset(sorted((root / "boxes").glob("*.parquet"))).read(
        columns=BOX_COLUMNS).to_pylist()}


def occluder(track: dict, j: int, extrinsic: np.ndarray) -> tuple[list, list, list]:
    """(centre, dimensions, rotation) of a copy of observation j moved half way to the camera."""
    R, t = extrinsic[:, :3], extrinsic[:, 3]
    camera = -R.T @ t  # the camera centre in world coordinates
    centre = camera + 0.5 * (np.asarray(track["centers"][j], float) - camera)
    return centre.tolist(), track["dimensions"][j], track["rotation_matrices"][j]


def append(track: dict, frame: int, centre, dims, rotation) -> None:
    track["frames"].append(frame)
    track["centers"].append(centre)
    track["dimensions"].append(dims)
    track["rotation_matrices"].append(rotation)
    if track.get("bbox_2d") is not None:
        track["bbox_2d"].append([-1.0, -1.0, -1.0, -1.0])
    if track.get("confidences") is not None:
        track["confidences"].append(track["confidences"][0])


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    source, base = tiny_wildbox(tmp_path_factory)  # the tiny source and its build, shared by the test run: read only
    # a segment with an unoccluded box in its first frame (cameras.json's first) and another in a later frame
    by_segment: dict[str, list] = {}
    for b in sorted(read_boxes(base).values(), key=lambda b: b["box_id"]):
        if b["visibility"] == 1.0:
            by_segment.setdefault(b["segment_id"], []).append(b)

    def first_frame(segment):
        return min(c["frame_index"] for c in json.loads(
            (source / segment / "vggt_results" / "cameras.json").read_text())["cameras"])

    segment, first, later = next(
        (s, f, l) for s, rows in sorted(by_segment.items())
        for f in rows if f["frame_index"] == first_frame(s)
        for l in rows if l["frame_index"] != f["frame_index"])

    damaged = tmp_path_factory.mktemp("damaged") / "wildbox"
    shutil.copytree(source, damaged)
    results = damaged / segment / "vggt_results"
    cameras = {c["frame_index"]: np.asarray(c["extrinsic"], float)
               for c in json.loads((results / "cameras.json").read_text())["cameras"]}
    summary = json.loads((results / "tracking_summary.json").read_text())
    tracks = summary["tracks"]
    # a second observation of `later`'s (track, frame), in front of it
    t = tracks[str(later["track_id"])]
    append(t, later["frame_index"], *occluder(t, t["frames"].index(later["frame_index"]), cameras[later["frame_index"]]))
    # an observation of a frame the segment does not have, in front of `first` as seen from frame 0's camera
    t = tracks[str(first["track_id"])]
    append(t, MISSING_FRAME, *occluder(t, t["frames"].index(first["frame_index"]), cameras[first["frame_index"]]))
    (results / "tracking_summary.json").write_text(json.dumps(summary))
    out = build_wildbox(damaged, tmp_path_factory.mktemp("out"), max_bad_fraction=1.0)
    return base, out, segment, first, later


def quarantine(root) -> list[dict]:
    return [json.loads(line) for f in sorted((root / "_build" / "quarantine").glob("*.jsonl"))
            for line in f.read_text().splitlines()]


def test_rejected_observations_do_not_occlude_published_boxes(builds):
    base, out, segment, first, later = builds
    before, after = read_boxes(base), read_boxes(out)
    assert set(after) == set(before)
    # the boxes the rejected observations stood in front of are still fully visible ...
    assert [after[later["box_id"]]["visibility"], after[first["box_id"]]["visibility"]] == [1.0, 1.0]
    # ... nothing else is hidden, and the raw geometry (centre / scale) is unchanged. The segment's scale
    # itself follows the release's rule (docs/reference/wildbox.md): the repeated (track, frame)
    # observation counts for it before it goes to quarantine; the unknown frame does not.
    assert {k: after[k]["visibility"] for k in before} == {k: before[k]["visibility"] for k in before}
    for k in before:
        raw_before = np.asarray(before[k]["corners_cam"]) / before[k]["scale_factor"]
        raw_after = np.asarray(after[k]["corners_cam"]) / after[k]["scale_factor"]
        np.testing.assert_allclose(raw_after, raw_before, rtol=1e-12, atol=1e-12)
    assert after[first["box_id"]]["scale_factor"] != before[first["box_id"]]["scale_factor"]
    untouched = [k for k in before if before[k]["segment_id"] != segment]
    assert untouched and all(after[k] == before[k] for k in untouched)


def test_the_duplicate_and_the_frameless_observation_are_quarantined_by_name(builds):
    base, out, segment, first, later = builds
    where = f"{segment}/vggt_results/tracking_summary.json"
    rows = quarantine(out)
    new = [r for r in rows if r not in quarantine(base)]
    assert sorted((r["locator"], r["reason"]) for r in new) == sorted([
        (f"{where}#track={later['track_id']},frame_index={later['frame_index']}",
         f"track {later['track_id']} has two observations for frame index {later['frame_index']}"),
        (f"{where}#track={first['track_id']},frame_index={MISSING_FRAME}",
         f"frame index {MISSING_FRAME} is not a frame of the segment (cameras.json)"),
    ])
    assert all(r["stage"] == "AnnotateSegment" and r["unit"] == "box" for r in new)


def test_counts_reconcile_with_the_two_rejected_observations(builds):
    base, out, *_ = builds
    units = {name: json.loads((root / "_build" / "manifest.json").read_text())["reconciliation"]["units"]
             for name, root in (("base", base), ("out", out))}
    for e in units["out"].values():
        assert e["read"] == e["written"] + e["quarantined"] + e["filtered"]
    assert units["out"]["box"]["read"] == units["base"]["box"]["read"] + 2
    assert units["out"]["box"]["quarantined"] == units["base"]["box"]["quarantined"] + 2
    assert units["out"]["box"]["written"] == units["base"]["box"]["written"]
