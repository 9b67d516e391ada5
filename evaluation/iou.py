"""Batched IoU kernels for 2D boxes, bird's-eye footprints and oriented 3D cuboids.

Shared by every evaluator (WildBox, Omni3D-style, KITTI). Boxes follow docs/CONVENTIONS.md:
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

3D IoU is exact for arbitrary rotations: the intersection of two convex cuboids is a convex
polyhedron whose faces are (faces of A clipped by B) and (faces of B clipped by A). Each face
is clipped with a batched Sutherland-Hodgman pass against the other box's six slabs (in the
other box's local frame, where they are axis-aligned), and the volume follows from the
divergence theorem, V = 1/3 sum_f d_f * area_f, with d_f the signed distance of face f's
plane from a common origin (B's centre). A face of A that coincides with a face of B (same
plane and outward normal) is counted once.
"""
from __future__ import annotations

import numpy as np

from benchwright import geometry

__all__ = [
    "iou_2d_matrix", "iou_2d_pairs", "bev_area", "bev_iou_pairs",
    "bev_intersection_pairs", "bev_intersection_from_footprints", "bev_iou_from_footprints", "box_volume", "iou_3d_pairs", "intersection_3d_pairs",
    "bounding_radius", "valid_boxes",
]

# Relative tolerance (times the pair's size) for BEV "on the line" tests.
_REL_EPS = 1e-10
# Relative tolerance (times the pair's extent) for 3D "on the plane" tests: far above the rounding
# noise of stored boxes (1e-9), far below any overlap the metrics can resolve.
_PLANE_TOL = 1e-7
# Faces of a cuboid as corner indices (CONVENTIONS corner order), counter-clockwise seen from
# outside, with the local axis and side of their outward normal.
_FACES = np.array([[0, 4, 7, 3], [1, 2, 6, 5], [0, 1, 5, 4], [3, 7, 6, 2], [0, 3, 2, 1], [4, 5, 6, 7]])
_FACE_AXIS = np.array([0, 0, 1, 1, 2, 2])
_FACE_SIGN = np.array([-1.0, 1.0, -1.0, 1.0, -1.0, 1.0])
# The two local axes spanning each face (its edge directions).
_FACE_TAN_U = np.array([1, 1, 0, 0, 0, 0])
_FACE_TAN_V = np.array([2, 2, 2, 2, 1, 1])
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
def _clip(poly: np.ndarray, count: np.ndarray, dist: np.ndarray):
    """One batched Sutherland-Hodgman step, in place.

    poly (N, C, D) vertices in a buffer of capacity C (rows padded past ``count``), dist
    (N, C) signed distance of each vertex to the clipping plane, >= 0 inside. A convex polygon
    gains at most one vertex per step, so C must exceed the largest count by one. Only rows
    that straddle the plane are recomputed; rows entirely outside get count 0.
    """
    cap = poly.shape[1]
    idx = np.arange(cap)
    valid = idx[None, :] < count[:, None]
    inside = dist >= 0
    n_in = (valid & inside).sum(axis=1)
    count[n_in == 0] = 0
    sub = np.flatnonzero((n_in > 0) & (n_in < count))
    if len(sub) == 0:
        return poly, count
    cnt = count[sub]
    w = int(cnt.max())
    p = poly[sub, :w]
    dd = dist[sub, :w]
    last = cnt - 1
    rows = np.arange(len(sub))
    nxt = np.roll(p, -1, axis=1)
    nxt[rows, last] = p[:, 0]
    dist_nxt = np.roll(dd, -1, axis=1)
    dist_nxt[rows, last] = dd[:, 0]
    ok = idx[None, :w] < cnt[:, None]
    cur_in = dd >= 0
    emit_cur = ok & cur_in
    emit_cut = ok & (cur_in != (dist_nxt >= 0))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(emit_cut, dd / (dd - dist_nxt), 0.0)
    cut = p + t[..., None] * (nxt - p)
    # Output slot of each emitted vertex: the current vertex first, then the edge's cut.
    n_emit = emit_cur.astype(np.int64) + emit_cut
    start = np.cumsum(n_emit, axis=1) - n_emit
    out = np.zeros((len(sub), w + 1, poly.shape[2]))
    r, c = np.nonzero(emit_cur)
    out[r, start[r, c]] = p[r, c]
    r, c = np.nonzero(emit_cut)
    out[r, start[r, c] + emit_cur[r, c]] = cut[r, c]
    if w + 1 > cap:
        raise AssertionError("polygon buffer too small")  # cannot happen for convex input
    poly[sub, :w + 1] = out
    count[sub] = n_emit.sum(axis=1)
    return poly, count


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
        poly, count = _clip(poly, count, dist)
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
    """(K,) exact intersection volume of cuboids with half extents h (local x, y, z).

    Each face is clipped in its own 2D coordinates (u, v) along its two edge directions, where
    a slab plane of the other box is the line alpha + beta u + gamma v >= 0 and the area is a
    plain shoelace (the face axes are orthonormal, so areas are preserved).
    """
    k = len(ca)
    Rrel = np.einsum("kji,kjl->kil", Rb, Ra)  # Rb^T Ra: columns = A's axes in B's frame
    t_ab = np.einsum("kji,kj->ki", Rb, ca - cb)  # A's centre in B's frame
    t_ba = -np.einsum("kji,kj->ki", Rrel, t_ab)  # B's centre in A's frame
    axes_a = np.swapaxes(Rrel, 1, 2)  # (K, 3, 3): A's local axis n in B's frame is axes_a[:, n]
    axes_b = Rrel  # B's local axis n in A's frame is Rrel[:, n, :] (a row of Rrel)
    n, i, j, sgn = _FACE_AXIS, _FACE_TAN_U, _FACE_TAN_V, _FACE_SIGN
    # Face centre, in-plane axes and half sizes; A's 6 faces (in B's frame), then B's (in A's).
    centre = np.concatenate([t_ab[:, None] + (sgn * ha[:, n])[..., None] * axes_a[:, n],
                             t_ba[:, None] + (sgn * hb[:, n])[..., None] * axes_b[:, n]], axis=1)
    U = np.concatenate([axes_a[:, i], axes_b[:, i]], axis=1)  # (K, 12, 3)
    V = np.concatenate([axes_a[:, j], axes_b[:, j]], axis=1)
    half_u = np.concatenate([ha[:, i], hb[:, i]], axis=1).reshape(-1)
    half_v = np.concatenate([ha[:, j], hb[:, j]], axis=1).reshape(-1)
    box = np.concatenate([np.repeat(hb[:, None], 6, 1), np.repeat(ha[:, None], 6, 1)], 1)  # clipping box
    scale = np.maximum(ha.max(axis=1), hb.max(axis=1)) + np.abs(t_ab).max(axis=1)
    eps = _REL_EPS * scale
    # Plane p = (axis m, side s): inside when s * x_m <= box_m, i.e. alpha + beta u + gamma v >= 0.
    side = np.array([1.0, 1.0, 1.0, -1.0, -1.0, -1.0])
    axis = np.array([0, 1, 2, 0, 1, 2])
    offset = box[..., axis] - side * centre[..., axis]  # (K, 12, 6): plane distance of each face centre
    # A face lying on one of the other box's planes (same outward normal, within _PLANE_TOL) is not
    # cut by that plane: rounding can tilt it by ~1e-9 and would otherwise cut it in half.
    normals = np.concatenate([axes_a[:, n], axes_b[:, n]], axis=1) * np.concatenate([sgn, sgn])[None, :, None]
    on_plane = ((side * normals[..., axis] > 1 - 1e-9)
                & (np.abs(offset) <= _PLANE_TOL * scale[:, None, None]))
    slack = eps[:, None, None] + np.where(on_plane, _PLANE_TOL * scale[:, None, None], 0.0)
    alpha = (offset + slack).reshape(-1, 6)
    beta = (-side * U[..., axis]).reshape(-1, 6)
    gamma = (-side * V[..., axis]).reshape(-1, 6)
    quad = np.stack([np.stack([-half_u, half_u, half_u, -half_u], 1),
                     np.stack([-half_v, -half_v, half_v, half_v], 1)], axis=2)  # (M, 4, 2)
    dist0 = alpha[:, None, :] + beta[:, None, :] * quad[..., 0:1] + gamma[:, None, :] * quad[..., 1:2]
    inside = dist0 >= 0  # (M, 4, 6)
    all_in = inside.all(axis=1)  # (M, 6): the plane does not cut the face
    all_out = (~inside).all(axis=1).any(axis=1)  # some plane has the whole face outside
    full = all_in.all(axis=1)
    area = np.where(full, 4 * half_u * half_v, 0.0)
    todo = np.flatnonzero(~full & ~all_out)
    if len(todo):
        poly = np.zeros((len(todo), 11, 2))  # a quad clipped by 6 lines has at most 10 vertices
        poly[:, :4] = quad[todo]
        count = np.full(len(todo), 4)
        need = ~all_in[todo]
        a_t, b_t, g_t = alpha[todo], beta[todo], gamma[todo]
        for plane in range(6):
            rows = np.flatnonzero(need[:, plane] & (count > 0))
            if len(rows) == 0:
                continue
            w = int(count[rows].max()) + 1
            sub, cnt = poly[rows, :w], count[rows]
            dist = (a_t[rows, plane, None] + b_t[rows, plane, None] * sub[..., 0]
                    + g_t[rows, plane, None] * sub[..., 1])
            sub, cnt = _clip(sub, cnt, dist)
            poly[rows, :w] = sub
            count[rows] = cnt
        area[todo] = np.abs(_polygon_area_2d(poly, count))
    area = area.reshape(k, 12)
    # Outward normals of A's faces in B's frame and their planes' distance from B's centre.
    normals_a = axes_a[:, n] * sgn[None, :, None]  # (K, 6, 3)
    d_a = np.einsum("kfi,ki->kf", normals_a, t_ab) + ha[:, n]
    d_b = hb[:, n]
    # A face of B coplanar with a face of A (same outward normal) is the same face: count once.
    same_dir = np.swapaxes(normals_a[:, :, n], 1, 2) * sgn[None, :, None]  # (K, 6 B-faces, 6 A-faces)
    coplanar = (same_dir > 1 - 1e-9) & (
        np.abs(d_a[:, None, :] - d_b[:, :, None]) <= _PLANE_TOL * scale[:, None, None])
    # The shared region counts once, as the larger of the two clipped faces: boxes that agree to
    # ~1e-9 (rounded copies) can leave one of the twins clipped away as just outside the other box.
    area_a = np.maximum(area[:, :6], np.max(np.where(coplanar, area[:, 6:, None], 0.0), axis=1))
    area_b = np.where(coplanar.any(axis=2), 0.0, area[:, 6:])
    vol = (np.einsum("kf,kf->k", d_a, area_a) + np.einsum("kf,kf->k", d_b, area_b)) / 3.0
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


def iou_3d_pairs(ca, da, Ra, cb, db, Rb, chunk: int = _CHUNK_3D) -> np.ndarray:
    """(K,) exact oriented 3D IoU of cuboids a[k] and b[k].

    The clipping assumes exact rotations: matrices a few ulps off SO(3) (rotations stored as text,
    products of rotations) are replaced by their nearest rotation first.
    """
    ca, da, Ra = _boxes(ca, da, Ra)
    cb, db, Rb = _boxes(cb, db, Rb)
    Ra, Rb = geometry.project_to_so3(Ra), geometry.project_to_so3(Rb)
    inter = intersection_3d_pairs(ca, da, Ra, cb, db, Rb, chunk=chunk)
    union = box_volume(da) + box_volume(db) - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = np.where((inter > 0) & (union > 0), inter / union, 0.0)
    return np.clip(iou, 0.0, 1.0)
