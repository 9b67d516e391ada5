"""Batched IoU kernels for 2D boxes, bird's-eye footprints and oriented 3D cuboids.

Shared by every evaluator (WildBox, Omni3D-style, KITTI). Boxes follow docs/reference/wildbox.md ("Box conventions"):
camera frame +x right, +y down, +z forward; a cuboid is ``center`` (N, 3), ``dims`` = [W, H, L]
(N, 3) and ``R`` (N, 3, 3) whose columns are the box's local axes; the local extents along
(x, y, z) are (L, H, W). 2D boxes are xyxy; their area is the continuous (x2 - x1) * (y2 - y1)
(COCO and the KITTI devkit both use it; no +1).

Every ``*_pairs`` function is element-wise over two aligned batches (pair k = a[k] vs b[k]);
``iou_2d_matrix`` is the all-pairs form. The evaluators build candidate pairs per image first,
so the kernels never see the full cross product of a dataset.

Degenerate boxes (a dimension <= 0, or a non-finite value) have IoU 0 with everything.

Bird's-eye (BEV) footprint: the convex hull of a cuboid's 8 corners projected on the camera
x-z plane. The projection of a box is a zonotope with three generators (the projected half
axes), so its hull is a hexagon built in closed form (``geometry.bev_hexagons``) -- no per-box hull
call. For a yaw-only box it degenerates to KITTI's rotated rectangle (two vertices repeat).

3D IoU is exact for arbitrary rotations: box A, as a closed polyhedron in B's local frame (where
B's six planes are axis-aligned), is clipped by each of B's planes in turn -- a batched
Sutherland-Hodgman pass over all its faces plus a cap face on the plane -- and the volume is the
signed sum of tetrahedra over the faces. Faces share every vertex bit for bit, so the surface
stays closed under rounding and nearly coplanar faces (boxes whose rotations differ by 1e-12 rad
or by 1e-3) need no special case; checked against scipy's half-space intersection.
"""
from __future__ import annotations

import numpy as np

from benchwright.formats import geometry

__all__ = [
    "iou_2d_matrix", "iou_2d_pairs", "bev_area", "bev_iou_pairs",
    "bev_intersection_pairs", "bev_intersection_from_footprints", "bev_iou_from_footprints", "box_volume", "iou_3d_pairs", "intersection_3d_pairs",
    "bounding_radius", "valid_boxes",
]

# Relative tolerance (times the pair's size) for BEV "on the line" tests.
_REL_EPS = 1e-10
# 3D clipping moves the clipping box's planes out by this much (times the pair's extent): far above
# the rounding noise of the arithmetic (~1e-15), so a face lying on a plane is kept whole, and far
# below anything the metrics resolve.
_CLIP_TOL = 1e-12
# Faces of a cuboid as corner indices (CONVENTIONS corner order), counter-clockwise seen from
# outside (-x, +x, -y, +y, -z, +z).
_FACES = np.array([[0, 4, 7, 3], [1, 2, 6, 5], [0, 1, 5, 4], [3, 7, 6, 2], [0, 3, 2, 1], [4, 5, 6, 7]])
_CORNER_SIGNS = np.array(
    [[-1, -1, -1], [1, -1, -1], [1, 1, -1], [-1, 1, -1],
     [-1, -1, 1], [1, -1, 1], [1, 1, 1], [-1, 1, 1]], dtype=float)
# Default number of pairs per vectorised chunk of the 3D kernel (bounds peak memory ~100 MB).
_CHUNK_3D = 8192


# ----------------------------------------------------------------------------------------- 2D
def _as_xyxy(b) -> np.ndarray:
    return np.asarray(b, float).reshape(-1, 4)


def iou_2d_matrix(a, b) -> np.ndarray:
    """(N, M) IoU of every box in ``a`` (N, 4) with every box in ``b`` (M, 4), xyxy."""
    a, b = _as_xyxy(a), _as_xyxy(b)
    iw = np.minimum(a[:, None, 2], b[None, :, 2]) - np.maximum(a[:, None, 0], b[None, :, 0])
    ih = np.minimum(a[:, None, 3], b[None, :, 3]) - np.maximum(a[:, None, 1], b[None, :, 1])
    inter = np.clip(iw, 0, None) * np.clip(ih, 0, None)
    area_a = np.clip(a[:, 2] - a[:, 0], 0, None) * np.clip(a[:, 3] - a[:, 1], 0, None)
    area_b = np.clip(b[:, 2] - b[:, 0], 0, None) * np.clip(b[:, 3] - b[:, 1], 0, None)
    union = area_a[:, None] + area_b[None, :] - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = np.where(union > 0, inter / union, 0.0)
    return np.nan_to_num(iou, nan=0.0)


def iou_2d_pairs(a, b) -> np.ndarray:
    """(K,) IoU of a[k] with b[k] (both (K, 4) xyxy)."""
    a, b = _as_xyxy(a), _as_xyxy(b)
    iw = np.minimum(a[:, 2], b[:, 2]) - np.maximum(a[:, 0], b[:, 0])
    ih = np.minimum(a[:, 3], b[:, 3]) - np.maximum(a[:, 1], b[:, 1])
    inter = np.clip(iw, 0, None) * np.clip(ih, 0, None)
    area_a = np.clip(a[:, 2] - a[:, 0], 0, None) * np.clip(a[:, 3] - a[:, 1], 0, None)
    area_b = np.clip(b[:, 2] - b[:, 0], 0, None) * np.clip(b[:, 3] - b[:, 1], 0, None)
    union = area_a + area_b - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = np.where(union > 0, inter / union, 0.0)
    return np.nan_to_num(iou, nan=0.0)


# ------------------------------------------------------------------------------ box helpers
def _boxes(center, dims, R):
    center = np.asarray(center, float).reshape(-1, 3)
    dims = np.asarray(dims, float).reshape(-1, 3)
    R = np.asarray(R, float).reshape(-1, 3, 3)
    return center, dims, R


def valid_boxes(center, dims, R) -> np.ndarray:
    """(N,) True where every dimension is > 0 and all values are finite."""
    center, dims, R = _boxes(center, dims, R)
    return (np.all(dims > 0, axis=1) & np.all(np.isfinite(dims), axis=1)
            & np.all(np.isfinite(center), axis=1) & np.all(np.isfinite(R), axis=(1, 2)))


def box_volume(dims) -> np.ndarray:
    """(N,) W * H * L, 0 for degenerate boxes."""
    dims = np.asarray(dims, float).reshape(-1, 3)
    vol = np.prod(dims, axis=1)
    return np.where(np.all(dims > 0, axis=1) & np.isfinite(vol), vol, 0.0)


def bounding_radius(dims) -> np.ndarray:
    """(N,) radius of the sphere about the centre that holds the box (half the space diagonal)."""
    return 0.5 * np.linalg.norm(np.asarray(dims, float).reshape(-1, 3), axis=1)


# -------------------------------------------------------------------------- polygon clipping
def _clip(poly: np.ndarray, count: np.ndarray, dist: np.ndarray, snap=None):
    """One batched Sutherland-Hodgman step on convex polygons, in place.

    poly (M, C, D) padded vertex buffers (C must exceed the largest count by one: a convex
    polygon gains at most one vertex), count (M,), dist (M, W) each vertex's signed distance to
    the clipping plane (>= 0: kept; W >= the largest count). Only rows that straddle the plane
    are rewritten; rows entirely outside get count 0; slots past a count are left as they are.
    ``snap`` = (axis, values (M,)): the plane is x[axis] = value, and cut points are put exactly
    on it. Returns the rows that were cut and, for each, the point where its boundary enters the
    kept side (for a polyhedron, the vertices of the cap polygon on the plane).

    A cut point is always interpolated from the kept vertex towards the dropped one, so the two
    faces of a polyhedron sharing an edge compute it bit for bit alike.
    """
    w_all = dist.shape[1]
    idx = np.arange(w_all)
    valid = idx[None, :] < count[:, None]
    n_in = (valid & (dist >= 0)).sum(axis=1)
    count[n_in == 0] = 0
    sub = np.flatnonzero((n_in > 0) & (n_in < count))
    if len(sub) == 0:
        return sub, np.zeros((0, poly.shape[2]))
    cnt = count[sub]
    w = int(cnt.max())
    if w + 1 > poly.shape[1]:
        raise AssertionError("polygon buffer too small")  # cannot happen for convex input
    p, dd = poly[sub, :w], dist[sub, :w]
    rows = np.arange(len(sub))
    dn = np.roll(dd, -1, axis=1)  # the next vertex's distance (cyclic within each count)
    dn[rows, cnt - 1] = dd[:, 0]
    ok = idx[None, :w] < cnt[:, None]
    cur_in, nxt_in = dd >= 0, dn >= 0
    emit_cur = ok & cur_in
    emit_cut = ok & (cur_in != nxt_in)
    # the cuts only: from the kept vertex (d_in >= 0) towards the dropped one (d_out < 0)
    r, c = np.nonzero(emit_cut)
    nc = np.where(c + 1 < cnt[r], c + 1, 0)
    ci = cur_in[r, c]
    a, b = p[r, c], p[r, nc]
    p_in = np.where(ci[:, None], a, b)
    p_out = np.where(ci[:, None], b, a)
    da, db = dd[r, c], dd[r, nc]
    d_in = np.where(ci, da, db)
    d_out = np.where(ci, db, da)
    cut = p_in + (d_in / (d_in - d_out))[:, None] * (p_out - p_in)
    if snap is not None:
        cut[:, snap[0]] = snap[1][sub[r]]
    # Output slot of each emitted vertex (the current vertex first, then the edge's cut); ``p`` is a
    # copy, so the polygons are rewritten in place. Slots past the new count are left as they are.
    n_emit = emit_cur.astype(np.int64) + emit_cut
    start = np.cumsum(n_emit, axis=1) - n_emit
    rc, cc = np.nonzero(emit_cur)
    poly[sub[rc], start[rc, cc]] = p[rc, cc]
    poly[sub[r], start[r, c] + emit_cur[r, c]] = cut
    count[sub] = n_emit.sum(axis=1)
    # The entering cut: the edge from a dropped vertex to a kept one (one per convex face).
    enter = np.zeros((len(sub), poly.shape[2]))
    e = ~ci
    enter[r[e]] = cut[e]
    return sub, enter


def _polygon_area_2d(poly: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Signed shoelace area of padded 2D polygons (N, V, 2)."""
    v = poly.shape[1]
    idx = np.arange(v)
    valid = idx[None, :] < count[:, None]
    nxt_idx = np.where(idx[None, :] + 1 < count[:, None], idx[None, :] + 1, 0)
    nxt = np.take_along_axis(poly, nxt_idx[..., None], axis=1)
    cross = poly[..., 0] * nxt[..., 1] - poly[..., 1] * nxt[..., 0]
    return 0.5 * np.where(valid, cross, 0.0).sum(axis=1)


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cross product over the last axis (np.cross is several times slower on small vectors)."""
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    out[..., 0] = a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1]
    out[..., 1] = a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2]
    out[..., 2] = a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    return out


def bev_area(dims, R) -> np.ndarray:
    """(N,) area of the BEV footprint (zonotope area = sum over generator pairs of 4|det|)."""
    dims = np.asarray(dims, float).reshape(-1, 3)
    R = np.asarray(R, float).reshape(-1, 3, 3)
    half = dims[:, ::-1] / 2
    g = np.swapaxes((R * half[:, None, :])[:, [0, 2], :], 1, 2)  # (N, 3, 2)
    area = np.zeros(len(dims))
    for i, j in ((0, 1), (0, 2), (1, 2)):
        area += 4 * np.abs(g[:, i, 0] * g[:, j, 1] - g[:, i, 1] * g[:, j, 0])
    return np.where(np.all(dims > 0, axis=1), area, 0.0)


def _convex_intersection_area(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """(K,) area of the intersection of CCW convex polygons p[k] (K, n, 2) and q[k] (K, m, 2).

    p is clipped by each edge of q; zero-length edges of q (repeated vertices) clip nothing.
    """
    k, m = len(p), q.shape[1]
    if k == 0:
        return np.zeros(0)
    scale = np.maximum(np.abs(p).max(axis=(1, 2)), np.abs(q).max(axis=(1, 2)))
    eps = _REL_EPS * np.maximum(scale, 1e-300) ** 2
    poly = np.zeros((k, p.shape[1] + m + 1, 2))
    poly[:, :p.shape[1]] = p
    count = np.full(k, p.shape[1])
    for i in range(m):
        a = q[:, i]
        e = q[:, (i + 1) % m] - a
        rel = poly - a[:, None, :]
        dist = e[:, None, 0] * rel[..., 1] - e[:, None, 1] * rel[..., 0] + eps[:, None]
        _clip(poly, count, dist)
    return np.clip(_polygon_area_2d(poly, count), 0, None)


def bev_intersection_from_footprints(fa: np.ndarray, fb: np.ndarray) -> np.ndarray:
    """(K,) intersection area of footprints fa[k] and fb[k] (each (K, 6, 2) from ``geometry.bev_hexagons``)."""
    fa = np.asarray(fa, float)
    fb = np.asarray(fb, float)
    inter = np.zeros(len(fa))
    if len(fa) == 0:
        return inter
    lo = np.maximum(fa.min(axis=1), fb.min(axis=1))
    hi = np.minimum(fa.max(axis=1), fb.max(axis=1))
    touch = np.all(hi > lo, axis=1) & np.all(np.isfinite(lo) & np.isfinite(hi), axis=1)
    if touch.any():
        inter[touch] = _convex_intersection_area(fa[touch], fb[touch])
    return inter


def bev_iou_from_footprints(fa, area_a, fb, area_b) -> np.ndarray:
    """(K,) IoU of aligned footprints; ``area_*`` from ``bev_area`` (0 marks a degenerate box)."""
    area_a = np.asarray(area_a, float)
    area_b = np.asarray(area_b, float)
    ok = (area_a > 0) & (area_b > 0)
    inter = np.zeros(len(area_a))
    if ok.any():
        inter[ok] = bev_intersection_from_footprints(np.asarray(fa)[ok], np.asarray(fb)[ok])
    union = area_a + area_b - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = np.where((inter > 0) & (union > 0), inter / union, 0.0)
    return np.clip(iou, 0.0, 1.0)


def bev_intersection_pairs(ca, da, Ra, cb, db, Rb) -> np.ndarray:
    """(K,) BEV footprint intersection area of box a[k] and box b[k]."""
    ca, da, Ra = _boxes(ca, da, Ra)
    cb, db, Rb = _boxes(cb, db, Rb)
    out = np.zeros(len(ca))
    ok = valid_boxes(ca, da, Ra) & valid_boxes(cb, db, Rb)
    if ok.any():
        out[ok] = bev_intersection_from_footprints(geometry.bev_hexagons(ca[ok], da[ok], Ra[ok]),
                                                   geometry.bev_hexagons(cb[ok], db[ok], Rb[ok]))
    return out


def bev_iou_pairs(ca, da, Ra, cb, db, Rb) -> np.ndarray:
    """(K,) IoU of the BEV footprints (convex hull of the 8 corners on x-z) of a[k] and b[k]."""
    ca, da, Ra = _boxes(ca, da, Ra)
    cb, db, Rb = _boxes(cb, db, Rb)
    area_a = np.where(valid_boxes(ca, da, Ra), bev_area(da, Ra), 0.0)
    area_b = np.where(valid_boxes(cb, db, Rb), bev_area(db, Rb), 0.0)
    return bev_iou_from_footprints(geometry.bev_hexagons(ca, da, Ra), area_a,
                                   geometry.bev_hexagons(cb, db, Rb), area_b)


# ----------------------------------------------------------------------------------------- 3D
def _separated(ca, ha, Ra, cb, hb, Rb) -> np.ndarray:
    """(K,) True where the separating axis theorem proves two cuboids disjoint (15 axes)."""
    t = ca - cb
    axes = [Ra[:, :, i] for i in range(3)] + [Rb[:, :, i] for i in range(3)]
    axes += [_cross(Ra[:, :, i], Rb[:, :, j]) for i in range(3) for j in range(3)]
    sep = np.zeros(len(ca), bool)
    for ax in axes:
        norm = np.linalg.norm(ax, axis=1)
        use = norm > 1e-9
        ra = np.einsum("kj,kj->k", np.abs(np.einsum("kij,ki->kj", Ra, ax)), ha)
        rb = np.einsum("kj,kj->k", np.abs(np.einsum("kij,ki->kj", Rb, ax)), hb)
        # Touching within rounding (a relative 1e-10) counts as separated: the overlap is empty.
        sep |= use & (np.abs(np.einsum("ki,ki->k", t, ax)) >= (ra + rb) * (1 - 1e-10))
    return sep


def _intersection_volume(ca, ha, Ra, cb, hb, Rb) -> np.ndarray:
    """(K,) intersection volume of cuboids with half extents h (local x, y, z).

    Box A, as a closed polyhedron in B's frame (where B is the axis-aligned box [-hb, hb]), is
    clipped by B's six planes in turn: every face is clipped (``_clip``) and the cut
    adds a cap face on the plane through the cut points. Faces share their vertices bit for bit,
    so the surface stays closed whatever the rounding, and the volume is the signed sum of the
    tetrahedra from an inner point to the fan-triangulated faces -- no face of A is ever matched
    to a face of B, so nearly coplanar faces need no special case. B's planes are moved out by
    a relative 1e-12 so that a face of A lying on a face of B (identical boxes) is kept whole
    instead of cut by rounding noise (an error of 1e-12 of the box size, far below any metric).
    """
    k = len(ca)
    n_faces, cap = 12, 13  # 6 faces + one cap per plane; a face of the overlap has <= 11 vertices
    Rrel = np.einsum("kji,kjl->kil", Rb, Ra)  # Rb^T Ra: columns = A's axes in B's frame
    t_ab = np.einsum("kji,kj->ki", Rb, ca - cb)  # A's centre in B's frame
    corners = t_ab[:, None, :] + np.einsum("kij,kcj->kci", Rrel, _CORNER_SIGNS[None] * ha[:, None, :])
    scale = np.maximum(ha.max(axis=1), hb.max(axis=1)) + np.abs(t_ab).max(axis=1)
    bound = hb + (_CLIP_TOL * scale)[:, None]  # (K, 3)
    poly = np.zeros((k, n_faces, cap, 3))
    poly[:, :6, :4] = corners[:, _FACES]
    count = np.zeros((k, n_faces), np.int64)
    count[:, :6] = 4
    flat_p = poly.reshape(k * n_faces, cap, 3)  # views: the clipping works on every face at once
    flat_c = count.reshape(k * n_faces)
    for plane in range(6):
        axis, side = plane % 3, (1.0 if plane < 3 else -1.0)
        w = int(flat_c.max())
        plane_at = np.repeat(side * bound[:, axis], n_faces)
        dist = side * (plane_at[:, None] - flat_p[:, :w, axis])  # inside: side * x <= bound
        sub, enter = _clip(flat_p, flat_c, dist, snap=(axis, plane_at))
        if len(sub) == 0:
            continue
        # The cap: per pair, the entering points, counter-clockwise seen from outside (+side * axis).
        pair, face = np.divmod(sub, n_faces)
        rows, first = np.unique(pair, return_index=True)
        n_cap = np.diff(np.r_[first, len(pair)])
        pts = np.zeros((len(rows), n_faces, 3))
        has = np.zeros((len(rows), n_faces), bool)
        slot = np.searchsorted(rows, pair)
        pts[slot, face] = enter
        has[slot, face] = True
        u, v = (axis + 1) % 3, (axis + 2) % 3
        centre = pts.sum(axis=1) / n_cap[:, None]
        ang = side * np.arctan2(pts[..., v] - centre[:, None, v], pts[..., u] - centre[:, None, u])
        order = np.argsort(np.where(has, ang, np.inf), axis=1, kind="stable")
        poly[rows, 6 + plane, :n_faces] = np.take_along_axis(pts, order[..., None], axis=1)
        count[rows, 6 + plane] = np.where(n_cap >= 3, n_cap, 0)
    count[count < 3] = 0
    # Signed volume: tetrahedra from A's centre to each face's fan (v0, vi, vi+1); the surface is
    # closed, so any origin gives the same sum, and one near the overlap keeps the terms small.
    w = int(count.max()) if k else 0
    if w < 3:
        return np.zeros(k)
    x, y, z = np.moveaxis(poly[:, :, :w] - t_ab[:, None, None, :], 3, 0)  # (K, 12, w) each
    bx, by, bz = x[..., 1:-1], y[..., 1:-1], z[..., 1:-1]
    cx, cy, cz = x[..., 2:], y[..., 2:], z[..., 2:]
    det = (x[..., :1] * (by * cz - bz * cy) + y[..., :1] * (bz * cx - bx * cz)
           + z[..., :1] * (bx * cy - by * cx))
    tri = np.arange(2, w)[None, None, :] < count[..., None]  # triangle (0, i, i+1) exists
    vol = np.where(tri, det, 0.0).sum(axis=(1, 2)) / 6.0
    vmax = 8 * np.minimum(ha.prod(axis=1), hb.prod(axis=1))
    return np.clip(vol, 0.0, vmax)


def intersection_3d_pairs(ca, da, Ra, cb, db, Rb, chunk: int = _CHUNK_3D) -> np.ndarray:
    """(K,) exact intersection volume of oriented cuboids a[k] and b[k] (full rotations)."""
    ca, da, Ra = _boxes(ca, da, Ra)
    cb, db, Rb = _boxes(cb, db, Rb)
    out = np.zeros(len(ca))
    ok = valid_boxes(ca, da, Ra) & valid_boxes(cb, db, Rb)
    # Cheap rejection: bounding spheres apart.
    gap = np.linalg.norm(ca - cb, axis=1)
    ok &= gap < bounding_radius(da) + bounding_radius(db)
    idx = np.flatnonzero(ok)
    if len(idx):
        ha, hb = da[idx, ::-1] / 2, db[idx, ::-1] / 2
        sep = _separated(ca[idx], ha, Ra[idx], cb[idx], hb, Rb[idx])
        idx = idx[~sep]
    for s in range(0, len(idx), chunk):
        sl = idx[s:s + chunk]
        out[sl] = _intersection_volume(ca[sl], da[sl, ::-1] / 2, Ra[sl], cb[sl], db[sl, ::-1] / 2, Rb[sl])
    return out


def _nearest_rotations(R: np.ndarray) -> np.ndarray:
    """R with every matrix more than 1e-12 off SO(3) replaced by its nearest rotation (the SVD is
    the costly part of a 3D IoU call, and rotations are usually exact already)."""
    ortho, det_pos = geometry.check_rotations(R, atol=1e-12)
    fix = ~(ortho & det_pos)
    if not fix.any():
        return R
    R = R.copy()
    R[fix] = geometry.project_to_so3(R[fix])
    return R


def iou_3d_pairs(ca, da, Ra, cb, db, Rb, chunk: int = _CHUNK_3D) -> np.ndarray:
    """(K,) exact oriented 3D IoU of cuboids a[k] and b[k].

    The clipping assumes exact rotations: matrices a few ulps off SO(3) (rotations stored as text,
    products of rotations) are replaced by their nearest rotation first.
    """
    ca, da, Ra = _boxes(ca, da, Ra)
    cb, db, Rb = _boxes(cb, db, Rb)
    Ra, Rb = _nearest_rotations(Ra), _nearest_rotations(Rb)
    inter = intersection_3d_pairs(ca, da, Ra, cb, db, Rb, chunk=chunk)
    union = box_volume(da) + box_volume(db) - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = np.where((inter > 0) & (union > 0), inter / union, 0.0)
    return np.clip(iou, 0.0, 1.0)
