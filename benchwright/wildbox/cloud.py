"""A WildBox segment's reconstruction (its VGGT point cloud): each box's support points and the height of its bottom
above the terrain's plane, the "support points" step of the annotation (``benchwright.wildbox.stages``)."""
from __future__ import annotations

import tempfile

import fsspec
import numpy as np

from benchwright.formats import geometry
from benchwright.memory import collection_paused
from benchwright.wildbox.segments import RawSegment

# Ground plane (geometry.ground_plane, deterministic RANSAC + least squares) on the segment's
# point cloud; inliers within this share of the median box height.
# The budget is fixed (256 triples scored on 2,048 sampled points) so a segment's cost does not grow with its cloud.
GROUND_RANSAC = {"threshold_of_median_height": 0.1, "iterations": 256, "max_points": 2048, "seed": 0}


_PLY_SCALAR_BYTES = {"char": 1, "uchar": 1, "int8": 1, "uint8": 1, "short": 2, "ushort": 2, "int16": 2,
                     "uint16": 2, "int": 4, "uint": 4, "int32": 4, "uint32": 4, "float": 4, "float32": 4,
                     "double": 8, "float64": 8}


def _ply_vertices(data: bytes) -> tuple[int, str | None]:
    """(the vertex count a PLY file's header declares, why its body cannot hold them or None). Open3D reads
    a cut file with a warning only, and returns the declared number of points, the missing ones zero."""
    end = data.find(b"end_header", 0, 1 << 16)
    if not data.startswith(b"ply") or end < 0:
        return 0, "not a PLY point cloud (no PLY header)"
    body = data.index(b"\n", end) + 1 if b"\n" in data[end:end + 16] else len(data)
    fmt, vertices, size, elements = "", 0, 0, []
    for line in data[:end].decode("ascii", "replace").splitlines():
        words = line.split()
        if words[:1] == ["format"] and len(words) >= 2:
            fmt = words[1]
        elif words[:1] == ["element"] and len(words) == 3:
            elements.append(words[1])
            if words[1] == "vertex" and words[2].isdigit():
                vertices = int(words[2])
        elif words[:1] == ["property"] and elements == ["vertex"] and size is not None:
            size = size + _PLY_SCALAR_BYTES[words[1]] if len(words) == 3 and words[1] in _PLY_SCALAR_BYTES else None
    if fmt == "ascii":
        rows = sum(1 for row in data[body:].splitlines() if row.strip())
        short = rows < vertices
    else:  # binary: the vertices (when they come first, with fixed-size properties) fill their bytes
        short = size is not None and elements[:1] == ["vertex"] and len(data) - body < vertices * size
    return vertices, (f"cut short: its header declares {vertices:,} points its body does not hold" if short else None)


def point_cloud_measures(seg: RawSegment, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray, str | None]:
    """(support points, ground offset, why the cloud was not read or None) per observation from the
    segment's reconstruction.

    support points: cloud points inside the world-frame cuboid (-1 without a point cloud).
    ground offset: height of the box's bottom face centre above the dominant plane of the
    cloud (the terrain), in box heights, "up" being against the boxes' mean down axis (NaN
    without a cloud or a plane). 0 is an animal standing on the ground; the real release's
    under-reconstructed legs put bottoms 0.11-0.14 H up, and fragments float above 1 H.
    """
    counts = np.full(len(keep), -1, dtype=np.int32)
    offsets = np.full(len(keep), np.nan)
    if seg.point_cloud_url is None or not keep.any():
        return counts, offsets, None
    if seg.point_cloud_problem:  # a cloud the source does not hold (a symlink out of it) is not read
        return counts, offsets, seg.point_cloud_problem
    with collection_paused():
        import open3d as o3d  # ~2 s to import: only segments with a point cloud need it

    # A cloud that cannot be read is no cloud (-1, NaN: the labels' "not measured"), said so by the caller;
    # Open3D itself only warns and returns an empty cloud, which would count 0 points in every box.
    try:
        with fsspec.open(seg.point_cloud_url, "rb") as f:
            data = f.read()
    except OSError as err:
        return counts, offsets, f"cannot read: {err}"
    declared, problem = _ply_vertices(data)
    if problem:
        return counts, offsets, problem
    # Open3D reads from a path; a local copy keeps remote (fsspec) sources working.
    with tempfile.NamedTemporaryFile(suffix=".ply") as tmp:
        tmp.write(data)
        tmp.flush()
        cloud = o3d.io.read_point_cloud(tmp.name, format="ply")
    points = cloud.points
    if len(points) != declared:
        return counts, offsets, f"its header declares {declared:,} points, Open3D read {len(points):,}"
    if len(points) == 0:
        return np.zeros(len(keep), dtype=np.int32), offsets, None
    rows = np.flatnonzero(keep)
    for i in rows:
        extent = seg.dims_whl[i][::-1]  # local x, y, z extents = [L, H, W]
        box = o3d.geometry.OrientedBoundingBox(seg.center[i], seg.R[i], extent)
        counts[i] = len(box.get_point_indices_within_bounding_box(points))
    height = seg.dims_whl[rows, 1]
    plane = geometry.ground_plane(np.asarray(points), GROUND_RANSAC["threshold_of_median_height"] * float(np.median(height)),
                                  iterations=GROUND_RANSAC["iterations"], max_points=GROUND_RANSAC["max_points"],
                                  seed=GROUND_RANSAC["seed"])
    if plane is not None:
        normal, d, _ = plane
        down = seg.R[rows][:, :, 1]  # the box's local +y (H axis) points down
        if float(np.mean(down @ normal)) > 0:  # orient the normal up
            normal, d = -normal, -d
        bottom = seg.center[rows] + down * (height / 2)[:, None]
        offsets[rows] = (bottom @ normal + d) / height
    return counts, offsets, None
