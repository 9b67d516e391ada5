"""Batched cuboid geometry in the camera frame (+x right, +y down, +z forward).

One implementation shared by WildBox's annotation, the KITTI and Omni3D formats, the evaluator and the
baselines, so a box means the same thing everywhere (see docs/CONVENTIONS.md): the 3D formats' own convention,
kept with them. Every function takes a leading batch
axis: centres (N, 3), dimensions [W, H, L] (N, 3), rotations (N, 3, 3), corners (N, 8, 3).
"""
from __future__ import annotations

import cv2
import numpy as np

from benchwright.arrays import group_pairs

# Local corner signs in the pytorch3d box3d_overlap order; local extents are (x, y, z) = (L, H, W).
CORNER_SIGNS = np.array(
    [[-1, -1, -1], [1, -1, -1], [1, 1, -1], [-1, 1, -1],
     [-1, -1, 1], [1, -1, 1], [1, 1, 1], [-1, 1, 1]], dtype=float)
# The 12 edges of a cuboid as corner index pairs (used to clip boxes against the image plane).
EDGES = np.array(
    [[0, 1], [1, 2], [2, 3], [3, 0], [4, 5], [5, 6], [6, 7], [7, 4],
     [0, 4], [1, 5], [2, 6], [3, 7]])
# Pitch and roll (rad) below which a rotation counts as yaw-only. Well above float noise from
# composing camera and world rotations (~1e-7), and it moves a corner by at most 0.1% of the
# box size, below the 2-decimal precision KITTI text keeps for a metre-scale box.
KITTI_ANGLE_TOL = 1e-3


def corners(center, dims_whl, R) -> np.ndarray:
    """(N, 8, 3) corners: corner_i = center + R @ (sign_i * [L, H, W] / 2)."""
    center = np.asarray(center, float).reshape(-1, 3)
    dims = np.asarray(dims_whl, float).reshape(-1, 3)
    R = np.asarray(R, float).reshape(-1, 3, 3)
    local = CORNER_SIGNS[None] * dims[:, None, ::-1] / 2  # [W, H, L] -> [L, H, W]
    return center[:, None, :] + np.einsum("nij,nkj->nki", R, local)


def project_points(points, P) -> np.ndarray:
    """Pixel coordinates (..., 2) of camera-frame points (..., 3).

    ``P`` is a 3x3 K (pinhole at the origin; projected with ``cv2.projectPoints``) or a full
    3x4 P (KITTI P2: the 4th column is the stereo baseline offset, so K alone is off by pixels).
    Points whose projective depth is <= 0 (behind or on the camera plane) get NaN: their
    perspective division is meaningless. Clip boxes with ``projected_boxes`` instead.
    """
    points = np.asarray(points, float)
    P = np.asarray(P, float)
    if P.shape not in ((3, 3), (3, 4)):
        raise ValueError(f"camera matrix must be 3x3 or 3x4, got {P.shape}")
    flat = np.ascontiguousarray(points.reshape(-1, 3))
    if P.shape == (3, 4) and not P[:, 3].any():
        P = P[:, :3]  # [K | 0] is a pinhole at the origin: let OpenCV project it
    if P.shape == (3, 3) and len(flat):
        depth = flat[:, 2]
        uv = cv2.projectPoints(flat, np.zeros(3), np.zeros(3), P, None)[0].reshape(-1, 2)
    else:
        hom = flat @ _as_P(P)[:, :3].T + _as_P(P)[:, 3]
        depth = hom[:, 2]
        with np.errstate(divide="ignore", invalid="ignore"):
            uv = hom[:, :2] / depth[:, None]
    uv = np.where((depth > 0)[:, None], uv, np.nan)
    return uv.reshape(points.shape[:-1] + (2,))


def _as_P(P) -> np.ndarray:
    """A 3x4 projection: [K | 0] for a pinhole K at the origin."""
    P = np.asarray(P, float)
    return np.hstack([P, np.zeros((3, 1))]) if P.shape == (3, 3) else P


def projected_boxes(corner_pts, P, width, height, near: float = 1e-6):
    """Image boxes of cuboids: (unclipped xyxy (N, 4), clipped xyxy (N, 4), all_in_front (N,)).

    A box partly behind the camera is cut at the plane depth = ``near`` (its 12 edges are
    clipped there) so the box covers only the visible part of the cuboid; its unclipped extent
    is then huge and its truncation near 1. A box entirely behind the camera gets NaN boxes.
    Clipping is to the pixel grid [0, width - 1] x [0, height - 1] (0-based, like KITTI labels).
    ``P`` is one camera (3x3 K or 3x4 P) or one per cuboid (N, 3, 3) / (N, 3, 4), with ``width``
    and ``height`` then scalars or one per cuboid: a segment's boxes in one call, with the same bits
    as one call per camera.
    """
    c = np.asarray(corner_pts, float).reshape(-1, 8, 3)
    P = np.asarray(P, float)
    if P.ndim == 3:
        return _projected_boxes_per_cuboid(c, P, width, height, near)
    P = _as_P(P)
    depth = c @ P[2, :3] + P[2, 3]  # (N, 8), linear in the point, so edges clip exactly
    a, b = c[:, EDGES[:, 0]], c[:, EDGES[:, 1]]
    da, db = depth[:, EDGES[:, 0]], depth[:, EDGES[:, 1]]
    crosses = (da > near) != (db > near)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(crosses, (near - da) / (db - da), np.nan)
    cut = a + t[..., None] * (b - a)  # NaN where the edge does not cross the plane
    candidates = np.concatenate([np.where((depth > near)[..., None], c, np.nan), cut], axis=1)
    uv = project_points(candidates, P)
    seen = ~np.isnan(uv[..., 0]).all(axis=1)
    unclipped = np.full((len(c), 4), np.nan)
    unclipped[seen] = np.concatenate(
        [np.nanmin(uv[seen], axis=1), np.nanmax(uv[seen], axis=1)], axis=1)
    clipped = np.clip(unclipped, 0, [width - 1, height - 1, width - 1, height - 1])
    return unclipped, clipped, (depth > 0).all(axis=1)


def _projected_boxes_per_cuboid(c: np.ndarray, P: np.ndarray, width, height, near: float):
    """``projected_boxes`` with a camera per cuboid. Pinhole cameras [K | 0] with K's last row (0, 0, 1)
    (every WildBox camera) are projected together with OpenCV's own arithmetic (x * (1 / z) * fx + cx,
    which cv2.projectPoints computes for one camera); any other camera, one camera at a time."""
    n = len(c)
    W = np.broadcast_to(np.asarray(width, float), (n,))
    H = np.broadcast_to(np.asarray(height, float), (n,))
    if P.shape[1:] == (3, 3):
        P = np.concatenate([P, np.zeros((n, 3, 1))], axis=2)
    if not (P[:, :, 3] == 0).all() or not (P[:, 2, :3] == [0, 0, 1]).all():
        out = (np.full((n, 4), np.nan), np.full((n, 4), np.nan), np.zeros(n, bool))
        cams, which = np.unique(np.c_[P.reshape(n, -1), W, H], axis=0, return_inverse=True)
        for k, cam in enumerate(cams):
            rows = np.flatnonzero(which.ravel() == k)
            for part, value in zip(out, projected_boxes(c[rows], cam[:12].reshape(3, 4), cam[12], cam[13], near)):
                part[rows] = value
        return out
    depth = c[:, :, 2]  # K's last row is (0, 0, 1): exactly what c @ P[2, :3] + P[2, 3] gives
    a, b = c[:, EDGES[:, 0]], c[:, EDGES[:, 1]]
    da, db = depth[:, EDGES[:, 0]], depth[:, EDGES[:, 1]]
    crosses = (da > near) != (db > near)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(crosses, (near - da) / (db - da), np.nan)
        cut = a + t[..., None] * (b - a)
        candidates = np.concatenate([np.where((depth > near)[..., None], c, np.nan), cut], axis=1)
        inv = 1.0 / candidates[..., 2]
        uv = np.stack([candidates[..., 0] * inv * P[:, None, 0, 0] + P[:, None, 0, 2],
                       candidates[..., 1] * inv * P[:, None, 1, 1] + P[:, None, 1, 2]], axis=-1)
    uv = np.where((candidates[..., 2] > 0)[..., None], uv, np.nan)
    seen = ~np.isnan(uv[..., 0]).all(axis=1)
    unclipped = np.full((n, 4), np.nan)
    unclipped[seen] = np.concatenate([np.nanmin(uv[seen], axis=1), np.nanmax(uv[seen], axis=1)], axis=1)
    clipped = np.clip(unclipped, 0, np.stack([W - 1, H - 1, W - 1, H - 1], axis=1))
    return unclipped, clipped, (depth > 0).all(axis=1)


def visible_projected_boxes(corner_pts, P, width, height, near: float = 1e-6) -> np.ndarray:
    """(N, 4) xyxy: the box of the part of each projected cuboid that lies in the image, i.e. of its
    silhouette (the convex hull of its projected corners, cut at depth ``near`` as ``projected_boxes``
    does) intersected with [0, width - 1] x [0, height - 1]; NaN where none of it does. Omni3D's
    ``bbox2D_trunc`` ("projected from bbox3D then truncated"). Where the projection lies inside the image
    it is the clipped box of ``projected_boxes``; where it is cut off by an edge it can be much smaller, as
    the hull's widest part may lie outside. ``P`` is one camera (3x3 or 3x4) or one per cuboid, ``width``
    and ``height`` scalars or one per cuboid. Exact in float64 (a hull, then a clip by the 4 edges)."""
    c = np.asarray(corner_pts, float).reshape(-1, 8, 3)
    n = len(c)
    P = np.asarray(P, float)
    cams = P if P.ndim == 3 else np.broadcast_to(P, (n, *P.shape))
    W = np.broadcast_to(np.asarray(width, float), (n,))
    H = np.broadcast_to(np.asarray(height, float), (n,))
    out = np.full((n, 4), np.nan)
    for i in range(n):
        uv = _silhouette_points(c[i], _as_P(cams[i]), near)
        poly = _clip_to_rectangle(_convex_hull(uv), W[i] - 1, H[i] - 1)
        if len(poly):
            out[i] = [*poly.min(axis=0), *poly.max(axis=0)]
    return out


def _silhouette_points(c: np.ndarray, P: np.ndarray, near: float) -> np.ndarray:
    """The image points whose hull is the silhouette of one cuboid's part at depth > ``near``: its corners
    in front and the points where its edges cross that plane, projected with the 3x4 ``P``."""
    depth = c @ P[2, :3] + P[2, 3]
    a, b = c[EDGES[:, 0]], c[EDGES[:, 1]]
    da, db = depth[EDGES[:, 0]], depth[EDGES[:, 1]]
    crosses = (da > near) != (db > near)
    t = (near - da[crosses]) / (db[crosses] - da[crosses])
    points = np.concatenate([c[depth > near], a[crosses] + t[:, None] * (b[crosses] - a[crosses])])
    hom = points @ P[:, :3].T + P[:, 3]
    with np.errstate(divide="ignore", invalid="ignore"):
        uv = hom[:, :2] / hom[:, 2:]
    return uv[(hom[:, 2] > 0) & np.isfinite(uv).all(axis=1)]


def _convex_hull(points: np.ndarray) -> np.ndarray:
    """The convex hull of 2D points, counter-clockwise (Andrew's monotone chain; a point or a segment
    when the points are collinear)."""
    pts = sorted(set(map(tuple, np.asarray(points, float).tolist())))
    if len(pts) <= 2:
        return np.asarray(pts, float).reshape(-1, 2)

    def half(seq):
        chain = []
        for p in seq:
            while len(chain) >= 2 and ((chain[-1][0] - chain[-2][0]) * (p[1] - chain[-2][1])
                                       - (chain[-1][1] - chain[-2][1]) * (p[0] - chain[-2][0])) <= 0:
                chain.pop()
            chain.append(p)
        return chain

    lower, upper = half(pts), half(reversed(pts))
    return np.asarray(lower[:-1] + upper[:-1], float)


def _clip_to_rectangle(poly: np.ndarray, x_max: float, y_max: float) -> np.ndarray:
    """A convex polygon (or point, or segment) clipped to [0, x_max] x [0, y_max] (Sutherland-Hodgman)."""
    for axis, bound, keep_below in ((0, 0.0, False), (0, x_max, True), (1, 0.0, False), (1, y_max, True)):
        if not len(poly):
            break
        inside = poly[:, axis] <= bound if keep_below else poly[:, axis] >= bound
        if inside.all():
            continue
        out = []
        for k in range(len(poly)):
            p, q = poly[k], poly[(k + 1) % len(poly)]
            if inside[k]:
                out.append(p)
            if inside[k] != inside[(k + 1) % len(poly)] and len(poly) > 1:
                t = (bound - p[axis]) / (q[axis] - p[axis])
                cut = p + t * (q - p)
                cut[axis] = bound
                out.append(cut)
        poly = np.asarray(out, float).reshape(-1, 2)
    return poly


def _area(xyxy: np.ndarray) -> np.ndarray:
    return np.clip(xyxy[:, 2] - xyxy[:, 0], 0, None) * np.clip(xyxy[:, 3] - xyxy[:, 1], 0, None)


def truncation(unclipped, clipped) -> np.ndarray:
    """Fraction (0..1) of each projected box's area outside the image.

    A degenerate (zero-area) box counts 0 if it lies inside the image and 1 otherwise; a box
    entirely behind the camera (NaN) counts 1, as none of it is in the image.
    """
    u = np.asarray(unclipped, float).reshape(-1, 4)
    k = np.asarray(clipped, float).reshape(-1, 4)
    au, ak = _area(u), _area(k)
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.where(au > 0, 1.0 - ak / au, np.where(np.all(u == k, axis=1), 0.0, 1.0))
    return np.clip(np.nan_to_num(frac, nan=1.0), 0.0, 1.0)


_RASTER_SHIFT = 4  # fractional bits for cv2.fillConvexPoly: silhouettes are rasterised at 1/16 px


def occlusion_visibility(corner_pts, P, width, height, frame=None) -> np.ndarray:
    """(N,) fraction of each cuboid's silhouette inside the image that no nearer cuboid covers.

    ``frame`` (N,) groups the cuboids by image (default: one image); ``P`` is one camera matrix
    (3x3 K or 3x4 P) or one per cuboid (N, 3, 4), ``width`` / ``height`` scalars or per cuboid.
    A silhouette is the convex hull of the 8 projected corners, rasterised (OpenCV, 1/16 px
    vertices) on the image part of its bounding box; a cuboid is nearer when its centre has the
    smaller projective depth. This is visibility in Omni3D's sense (1 = unoccluded; truncation by
    the image border is ``truncation``'s business), from the geometry alone: a mask covers only
    the visible part of an animal, so mask / silhouette box would measure the animal's shape, not
    its occlusion. NaN for a cuboid with a corner behind the camera or no silhouette pixel in the
    image (such a cuboid occludes nothing either).
    """
    c = np.asarray(corner_pts, float).reshape(-1, 8, 3)
    n = len(c)
    vis = np.full(n, np.nan)
    if n == 0:
        return vis
    P = np.asarray(P, float)
    if P.ndim == 2:
        uv = project_points(c, P)
        P = np.broadcast_to(_as_P(P), (n, 3, 4))
    else:  # one camera per cuboid: plain perspective division (cv2.projectPoints takes one camera)
        hom = np.einsum("nij,nkj->nki", P[:, :, :3], c) + P[:, None, :, 3]
        with np.errstate(divide="ignore", invalid="ignore"):
            uv = np.where((hom[..., 2:] > 0), hom[..., :2] / hom[..., 2:], np.nan)
    depth = np.einsum("ni,ni->n", P[:, 2, :3], c.mean(axis=1)) + P[:, 2, 3]
    W = np.broadcast_to(np.asarray(width, float), (n,))
    H = np.broadcast_to(np.asarray(height, float), (n,))
    ok = np.isfinite(uv).all(axis=(1, 2)) & np.isfinite(depth)
    uv_ok = np.where(ok[:, None, None], uv, 0.0)
    lo, hi = np.floor(uv_ok.min(axis=1)), np.ceil(uv_ok.max(axis=1))
    ok &= (hi[:, 0] >= 0) & (lo[:, 0] <= W - 1) & (hi[:, 1] >= 0) & (lo[:, 1] <= H - 1)
    x0, x1 = (np.clip(v, 0, W - 1).astype(int) for v in (lo[:, 0], hi[:, 0]))
    y0, y1 = (np.clip(v, 0, H - 1).astype(int) for v in (lo[:, 1], hi[:, 1]))
    vis[ok] = 1.0
    # (i, j): j is in i's image, nearer, and their image boxes meet. Most animals have no such j.
    group = np.zeros(n, np.int64) if frame is None else np.asarray(frame, np.int64)
    i, j = group_pairs(group, group)  # every ordered pair of one image, (i, i) included
    hit = (ok[i] & ok[j] & (depth[j] < depth[i]) & (x0[j] <= x1[i]) & (x1[j] >= x0[i])
           & (y0[j] <= y1[i]) & (y1[j] >= y0[i]))
    i, j = i[hit], j[hit]
    scale = 1 << _RASTER_SHIFT
    hulls: dict[int, np.ndarray] = {}

    def fill(mask, k, ox, oy):
        if k not in hulls:
            hulls[k] = cv2.convexHull(uv[k].astype(np.float32)).reshape(-1, 2).astype(float)
        pts = np.round((hulls[k] - [ox, oy]) * scale).astype(np.int32)
        cv2.fillConvexPoly(mask, pts, 1, lineType=cv2.LINE_8, shift=_RASTER_SHIFT)

    for k in np.unique(i):
        own = np.zeros((y1[k] - y0[k] + 1, x1[k] - x0[k] + 1), np.uint8)
        fill(own, k, x0[k], y0[k])
        area = int(own.sum())
        if area == 0:
            vis[k] = np.nan
            continue
        cover = np.zeros_like(own)
        for m in np.sort(j[i == k]):
            fill(cover, m, x0[k], y0[k])
        vis[k] = 1.0 - int((own & cover).sum()) / area
    return vis


def mask_extent(mask) -> tuple[tuple[int, int, int, int], int]:
    """(inclusive xyxy extent of the non-zero pixels, their count) of a 2D mask; ((0, 0, -1, -1), 0) when empty.

    OpenCV's countNonZero and boundingRect (vectorised C++) give exactly what ``np.nonzero`` would
    (min/max of the non-zero columns and rows), without materialising every pixel's coordinates.
    """
    mask = np.asarray(mask)
    if mask.dtype != np.uint8:  # boundingRect reads an 8-bit image as a mask; other types as points
        mask = (mask != 0).astype(np.uint8)
    count = cv2.countNonZero(mask)
    if count == 0:
        return (0, 0, -1, -1), 0
    x, y, w, h = cv2.boundingRect(mask)
    return (x, y, x + w - 1, y + h - 1), count


def ground_plane(points, threshold: float, iterations: int = 256, max_points: int = 2048,
                 seed: int = 0) -> tuple[np.ndarray, float, int] | None:
    """(unit normal n, offset d, inliers) of the dominant plane n . x + d = 0, or None.

    RANSAC with a fixed budget: ``iterations`` planes through random point triples, each scored by
    its points within ``threshold`` on a subsample of at most ``max_points`` (so the cost does not
    grow with the cloud); the best one's inliers among all points are refitted by least squares
    (SVD), and the refitted plane's inliers once more, so the answer hangs on the consensus set,
    not on which triple won. Deterministic across processes: one generator seeded with ``seed``
    draws the subsample and the triples, and distances are elementwise (no BLAS reduction whose
    order could vary with threads). Open3D's segment_plane, seeded, gave different planes in Beam's
    worker processes than in the main process.
    """
    pts = np.asarray(points, float)
    if len(pts) < 3:
        return None
    rng = np.random.default_rng(seed)
    sample = pts if len(pts) <= max_points else pts[np.sort(rng.choice(len(pts), max_points, replace=False))]
    tri = sample[rng.integers(0, len(sample), (iterations, 3))]
    normal = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    norm = np.linalg.norm(normal, axis=1)
    good = norm > 1e-12
    if not good.any():
        return None
    normal = normal[good] / norm[good, None]
    d = -np.einsum("ij,ij->i", normal, tri[good, 0])
    scores = (np.abs(_plane_distances(sample, normal, d)) <= threshold).sum(axis=0)
    best = int(np.argmax(scores))  # the first of equal scores
    n, offset = normal[best], float(d[best])
    for _ in range(2):  # least-squares refit on the consensus set, then on the refitted plane's own
        inliers = pts[np.abs(_plane_distances(pts, n[None], np.array([offset]))[:, 0]) <= threshold]
        if len(inliers) < 3:
            return None
        centroid = inliers.mean(axis=0)
        n = np.linalg.svd(inliers - centroid, full_matrices=False)[2][-1]
        offset = float(-n @ centroid)
    return n, offset, len(inliers)


def _plane_distances(points: np.ndarray, normals: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """(N, P) signed distances of N points to P planes, elementwise (bit-identical in any process)."""
    return (points[:, :1] * normals[:, 0] + points[:, 1:2] * normals[:, 1] + points[:, 2:3] * normals[:, 2]
            + offsets)


def _zonotope_hexagons(center_xz: np.ndarray, gens: np.ndarray) -> np.ndarray:
    """(N, 6, 2) CCW hexagons: the zonotope ``c + sum t_i g_i``, t in [-1, 1]^3, of three 2D generators.

    A cuboid's footprint on a plane is the zonotope of its projected half axes. With each g_i
    turned into the upper half plane and sorted by angle, the vertices are c - sum g, then
    +2 g_1, +2 g_2, +2 g_3, -2 g_1, -2 g_2 (repeated where the hull has fewer than 6).
    """
    flip = (gens[..., 1] < 0) | ((gens[..., 1] == 0) & (gens[..., 0] < 0))
    gens = np.where(flip[..., None], -gens, gens)
    order = np.argsort(np.arctan2(gens[..., 1], gens[..., 0]), axis=1, kind="stable")
    gens = np.take_along_axis(gens, order[..., None], axis=1)
    v0 = center_xz - gens.sum(axis=1)
    steps = np.concatenate([2 * gens, -2 * gens[:, :2]], axis=1)  # 5 steps after v0
    return np.concatenate([v0[:, None], v0[:, None] + np.cumsum(steps, axis=1)], axis=1)


def bev_hexagons(center, dims_whl, R) -> np.ndarray:
    """(N, 6, 2) bird's-eye footprints (x, z) of boxes, exact and batched (see ``_zonotope_hexagons``)."""
    center = np.asarray(center, float).reshape(-1, 3)
    half = np.asarray(dims_whl, float).reshape(-1, 3)[:, ::-1] / 2  # local (x, y, z) = (L, H, W) / 2
    gens = np.swapaxes((np.asarray(R, float).reshape(-1, 3, 3) * half[:, None, :])[:, [0, 2], :], 1, 2)
    return _zonotope_hexagons(center[:, [0, 2]], gens)


def bev_footprint(corner_pts) -> list[np.ndarray]:
    """Bird's-eye footprint of each box: the convex hull of its 8 corners on the (x, z) plane.

    A list of (K_i, 2) float arrays of (x, z), counter-clockwise, without repeated vertices:
    K_i is 4 for a yaw-only box and up to 6 once pitch or roll tilts it (fewer if degenerate).
    """
    vertices, counts = bev_footprint_vertices(corner_pts)
    return np.split(vertices, np.cumsum(counts)[:-1]) if len(counts) else []


def bev_footprint_vertices(corner_pts) -> tuple[np.ndarray, np.ndarray]:
    """``bev_footprint`` of every box at once, flat: ((sum of K_i, 2) vertices, (N,) K_i)."""
    c = np.asarray(corner_pts, float).reshape(-1, 8, 3)
    if not len(c):
        return np.zeros((0, 2)), np.zeros(0, np.int64)
    # half axes from the corner layout: local x = c1 - c0, local y = c3 - c0, local z = c4 - c0
    gens = np.stack([c[:, 1] - c[:, 0], c[:, 3] - c[:, 0], c[:, 4] - c[:, 0]], axis=1)[..., [0, 2]] / 2
    hexagons = _zonotope_hexagons(c.mean(axis=1)[:, [0, 2]], gens)
    scale = np.maximum(np.abs(hexagons).max(axis=(1, 2)), 1e-300)
    keep = np.linalg.norm(hexagons - np.roll(hexagons, 1, axis=1), axis=2) > 1e-12 * scale[:, None]
    keep[~keep.any(axis=1), 0] = True  # a point-like footprint keeps its first vertex
    return hexagons[keep], keep.sum(axis=1)


def _rot_y(a):
    c, s, o, i = np.cos(a), np.sin(a), np.zeros_like(a), np.ones_like(a)
    return np.stack([np.stack([c, o, s], -1), np.stack([o, i, o], -1), np.stack([-s, o, c], -1)], -2)


def _rot_x(a):
    c, s, o, i = np.cos(a), np.sin(a), np.zeros_like(a), np.ones_like(a)
    return np.stack([np.stack([i, o, o], -1), np.stack([o, c, -s], -1), np.stack([o, s, c], -1)], -2)


def _rot_z(a):
    c, s, o, i = np.cos(a), np.sin(a), np.zeros_like(a), np.ones_like(a)
    return np.stack([np.stack([c, -s, o], -1), np.stack([s, c, o], -1), np.stack([o, o, i], -1)], -2)


def euler_yaw_pitch_roll(R) -> np.ndarray:
    """(N, 3) [yaw, pitch, roll] with R = R_y(yaw) @ R_x(pitch) @ R_z(roll).

    Yaw is about camera y (the vertical axis, so it equals KITTI's rotation_y for a yaw-only
    box), then pitch about the box's x, then roll about its z. Yaw and roll are in [-pi, pi],
    pitch in [-pi/2, pi/2]. At gimbal lock (|pitch| = pi/2) roll is set to 0.
    """
    R = np.asarray(R, float).reshape(-1, 3, 3)
    cos_pitch = np.hypot(R[:, 1, 0], R[:, 1, 1])
    pitch = np.arctan2(-R[:, 1, 2], cos_pitch)
    locked = cos_pitch < 1e-9
    yaw = np.where(locked, np.arctan2(-R[:, 2, 0], R[:, 0, 0]), np.arctan2(R[:, 0, 2], R[:, 2, 2]))
    roll = np.where(locked, 0.0, np.arctan2(R[:, 1, 0], R[:, 1, 1]))
    return np.stack([yaw, pitch, roll], axis=1)


def rotation_from_ypr(ypr) -> np.ndarray:
    """(N, 3, 3) inverse of ``euler_yaw_pitch_roll``."""
    ypr = np.asarray(ypr, float).reshape(-1, 3)
    return _rot_y(ypr[:, 0]) @ _rot_x(ypr[:, 1]) @ _rot_z(ypr[:, 2])


def yaw_only_rotation(ry) -> np.ndarray:
    """(N, 3, 3) R_y(ry): the only rotation KITTI's rotation_y can express."""
    return _rot_y(np.asarray(ry, float).reshape(-1))


def wrap_angle(a):
    """Angles wrapped to [-pi, pi)."""
    return (np.asarray(a, float) + np.pi) % (2 * np.pi) - np.pi


def check_rotations(R, atol: float = 1e-6):
    """(orthonormal (N,), det_positive (N,)) masks: R R^T = I within atol, and det(R) > 0.

    Both must hold for R to be a rotation; a reflection (det -1) mirrors the box's corner order.
    """
    R = np.asarray(R, float).reshape(-1, 3, 3)
    gram = R @ np.swapaxes(R, 1, 2)
    orthonormal = np.all(np.abs(gram - np.eye(3)) <= atol, axis=(1, 2))
    return orthonormal, np.linalg.det(R) > 0


def kitti_representable(R, tol_rad: float = KITTI_ANGLE_TOL):
    """(ok (N,), reasons list[str]): can each rotation be written as KITTI's yaw-only rotation_y?

    True when R is a rotation (R R^T = I within tol_rad, det > 0) with |pitch| and |roll| <=
    tol_rad (default ``KITTI_ANGLE_TOL``).
    The reason is "" when ok, else says what is wrong, e.g. "pitch 0.21 rad, roll 0.03 rad
    exceed 0.001".
    """
    R = np.asarray(R, float).reshape(-1, 3, 3)
    orthonormal, det_pos = check_rotations(R, atol=tol_rad)
    ypr = euler_yaw_pitch_roll(R)
    ok, reasons = [], []
    for is_rot, det_ok, (_, pitch, roll) in zip(orthonormal, det_pos, ypr):
        if not (is_rot and det_ok):
            reason = "not a rotation (R R^T != I)" if not is_rot else "not a rotation (det < 0)"
        elif abs(pitch) > tol_rad or abs(roll) > tol_rad:
            reason = f"pitch {abs(pitch):.3g} rad, roll {abs(roll):.3g} rad exceed {tol_rad:g}"
        else:
            reason = ""
        ok.append(not reason)
        reasons.append(reason)
    return np.array(ok, dtype=bool), reasons


def project_to_so3(M) -> np.ndarray:
    """Nearest rotation (Frobenius) to each 3x3 matrix, via SVD with det forced to +1.

    Used to average rotations: project the element-wise mean of rotation matrices back to SO(3).
    Returns the same leading shape as ``M`` ((3, 3) or (N, 3, 3)).
    """
    M = np.asarray(M, float)
    U, _, Vt = np.linalg.svd(M)
    d = np.sign(np.linalg.det(U @ Vt))
    d = np.where(d == 0, 1.0, d)
    D = np.zeros(M.shape)
    D[..., 0, 0] = 1.0
    D[..., 1, 1] = 1.0
    D[..., 2, 2] = d
    return U @ D @ Vt


def alpha_from_ry(ry, x, z) -> np.ndarray:
    """KITTI observation angle alpha = ry - atan2(x, z), wrapped to [-pi, pi).

    (x, z) is the object position relative to the camera the angle is observed from; KITTI
    labels use the rectified reference camera, i.e. the label frame's origin.
    """
    return wrap_angle(np.asarray(ry, float) - np.arctan2(x, z))
