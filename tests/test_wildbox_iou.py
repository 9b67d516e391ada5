"""IoU kernels against independent implementations (plain formula, shapely, scipy half-spaces, the hull of the
half-spaces' feasible vertices)."""
from itertools import combinations

import numpy as np
import pytest
from scipy.optimize import linprog
from scipy.spatial import ConvexHull, HalfspaceIntersection, QhullError
from scipy.spatial.transform import Rotation
from shapely.geometry import MultiPoint

from benchwright.formats import geometry
from benchwright.evaluation import iou

TOL = 1e-5


def _random_boxes(rng, n, spread=0.4):
    c = rng.normal(size=(n, 3)) * spread
    d = rng.uniform(0.2, 1.5, size=(n, 3))
    R = Rotation.random(n, random_state=rng).as_matrix()
    return c, d, R


def _halfspaces(c, d, R):
    """Six half-spaces A x + b <= 0 of one cuboid (scipy's convention [A | b])."""
    h = np.asarray(d)[::-1] / 2  # local (x, y, z) half extents = (L, H, W) / 2
    rows = []
    for i in range(3):
        n = R[:, i]
        rows.append(np.r_[n, -(n @ c + h[i])])
        rows.append(np.r_[-n, n @ c - h[i]])
    return np.array(rows)


PLANE_TRIPLES = np.array(list(combinations(range(12), 3)))  # every vertex candidate of two cuboids' 12 faces


def _reference_intersection_3d(c1, d1, R1, c2, d2, R2):
    """scipy: HalfspaceIntersection of the 12 half-spaces, ConvexHull volume."""
    if min(d1) <= 0 or min(d2) <= 0:
        return 0.0
    # In units of the smallest dimension, about the first box's centre: the LP's and Qhull's
    # tolerances are absolute.
    unit = min(min(d1), min(d2))
    hs = np.vstack([_halfspaces(np.zeros(3), np.asarray(d1) / unit, R1),
                    _halfspaces((np.asarray(c2) - c1) / unit, np.asarray(d2) / unit, R2)])
    A, b = hs[:, :3], -hs[:, 3]
    norm = np.linalg.norm(A, axis=1)
    # An interior point for Qhull: the mean of the points where three planes meet inside all twelve, when it
    # lies 1e-7 inside every one (then so does the Chebyshev centre below, which a linprog call costs ~10x more).
    meet = hs[PLANE_TRIPLES, :3]
    solvable = np.abs(np.linalg.det(meet)) > 1e-12
    vertices = np.linalg.solve(meet[solvable], b[PLANE_TRIPLES][solvable][..., None])[..., 0]
    vertices = vertices[(vertices @ A.T <= b + 1e-10).all(axis=1)]
    if len(vertices) >= 4 and np.min((b - A @ vertices.mean(axis=0)) / norm) >= 1e-7:
        return ConvexHull(HalfspaceIntersection(hs, vertices.mean(axis=0)).intersections).volume * unit ** 3
    # Chebyshev centre: an interior point, if the intersection has one. Thinner than 1e-7 of the
    # smallest dimension (a volume below 2e-7 of the smaller box): empty.
    point = None
    # HiGHS's default feasibility tolerance (1e-7) can leave a thin overlap's centre just outside
    # a half-space; then solve again with tighter tolerances.
    for options in ({}, {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}):
        res = linprog(np.r_[0, 0, 0, -1], A_ub=np.c_[A, norm], b_ub=b, bounds=[(None, None)] * 3 + [(0, None)],
                      options=options)
        if res.status != 0 or res.x[3] < 1e-7:  # infeasible (disjoint), or HiGHS gave up on a sliver
            return 0.0
        if np.min((b - A @ res.x[:3]) / norm) >= 1e-7:
            point = res.x[:3]
            break
    assert point is not None, "no interior point found"
    return ConvexHull(HalfspaceIntersection(hs, point).intersections).volume * unit ** 3


def _vertex_intersection_3d(c1, d1, R1, c2, d2, R2, tol=1e-10):
    """(n,) intersection volumes by vertex enumeration, every pair at once: each triple of the 12 face planes
    that meets in one point gives a candidate vertex; the candidates inside all 12 half-spaces (to ``tol`` of the
    smallest dimension) span the intersection, whose volume is their convex hull's (Qhull; flat or fewer than 4
    points: 0). Independent of the kernel's clipping and of the LP and half-space intersection above."""
    n = len(c1)
    unit = np.minimum(d1.min(1), d2.min(1))  # in units of the smallest dimension, about the first box's centre

    def faces(c, d, R):  # (n, 6, 3) unit normals and (n, 6) offsets: the cuboid is normal . x <= offset
        h = np.concatenate([d[:, ::-1], d[:, ::-1]], axis=1) / 2 / unit[:, None]
        normals = np.concatenate([np.swapaxes(R, 1, 2), -np.swapaxes(R, 1, 2)], axis=1)
        return normals, np.einsum("nki,ni->nk", normals, c / unit[:, None]) + h

    (n1, o1), (n2, o2) = faces(np.zeros((n, 3)), d1, R1), faces(c2 - c1, d2, R2)
    normals, offsets = np.concatenate([n1, n2], axis=1), np.concatenate([o1, o2], axis=1)
    A, b = normals[:, PLANE_TRIPLES], offsets[:, PLANE_TRIPLES]  # (n, 220, 3, 3), (n, 220, 3)
    meet = np.abs(np.linalg.det(A)) > 1e-12
    points = np.zeros(b.shape)
    points[meet] = np.linalg.solve(A[meet], b[meet][..., None])[..., 0]
    inside = meet & (np.einsum("nki,nti->ntk", normals, points) <= offsets[:, None, :] + tol).all(axis=-1)
    out = np.zeros(n)
    for k in np.flatnonzero((np.minimum(d1.min(1), d2.min(1)) > 0) & (inside.sum(axis=1) >= 4)):
        try:
            out[k] = ConvexHull(points[k][inside[k]]).volume * unit[k] ** 3
        except QhullError:  # the candidates lie in a plane: touching boxes
            pass
    return out


def _reference_iou_3d(c1, d1, R1, c2, d2, R2):
    inter = _reference_intersection_3d(c1, d1, R1, c2, d2, R2)
    return inter / (np.prod(d1) + np.prod(d2) - inter)


def _hull_xz(c, d, R):
    pts = geometry.corners(c, d, R)[0][:, [0, 2]]
    return MultiPoint([tuple(p) for p in pts]).convex_hull


def _reference_iou_bev(c1, d1, R1, c2, d2, R2):
    if min(d1) <= 0 or min(d2) <= 0:
        return 0.0
    p, q = _hull_xz(c1, d1, R1), _hull_xz(c2, d2, R2)
    return p.intersection(q).area / p.union(q).area


# ----------------------------------------------------------------------------------------- 2D
def _plain_iou_2d(a, b):
    iw = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    ih = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = iw * ih
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def test_iou_2d_matches_plain_formula():
    rng = np.random.default_rng(0)
    xy = rng.uniform(0, 100, (60, 2))
    a = np.c_[xy, xy + rng.uniform(1, 60, (60, 2))]
    xy = rng.uniform(0, 100, (40, 2))
    b = np.c_[xy, xy + rng.uniform(1, 60, (40, 2))]
    ref = np.array([[_plain_iou_2d(x, y) for y in b] for x in a])
    assert np.abs(iou.iou_2d_matrix(a, b) - ref).max() < 1e-12
    pick = rng.integers(0, 40, 60)
    assert np.abs(iou.iou_2d_pairs(a, b[pick]) - ref[np.arange(60), pick]).max() < 1e-12
    assert (ref > 0).sum() > 100  # the random set really overlaps


def test_iou_2d_special_cases():
    box = np.array([[10.0, 10, 20, 30]])
    touching = np.array([[20.0, 10, 30, 30]])
    nested = np.array([[12.0, 12, 16, 20]])
    degenerate = np.array([[10.0, 10, 10, 30]])
    assert iou.iou_2d_pairs(box, box)[0] == 1.0
    assert iou.iou_2d_pairs(box, touching)[0] == 0.0
    assert iou.iou_2d_pairs(box, nested)[0] == pytest.approx(4 * 8 / (10 * 20))
    assert iou.iou_2d_pairs(box, degenerate)[0] == 0.0
    assert iou.iou_2d_pairs(degenerate, degenerate)[0] == 0.0


# ---------------------------------------------------------------------------------------- BEV
def test_bev_footprint_is_the_convex_hull():
    rng = np.random.default_rng(1)
    c, d, R = _random_boxes(rng, 100)
    fp = geometry.bev_hexagons(c, d, R)
    area = iou.bev_area(d, R)
    for k in range(len(c)):
        hull = _hull_xz(c[k], d[k], R[k])
        poly_area = 0.5 * np.sum(fp[k, :, 0] * np.roll(fp[k, :, 1], -1) - fp[k, :, 1] * np.roll(fp[k, :, 0], -1))
        assert poly_area == pytest.approx(hull.area, abs=1e-9)  # counter-clockwise, same area
        assert area[k] == pytest.approx(hull.area, abs=1e-9)
        # Every footprint vertex lies on the hull.
        assert max(hull.exterior.distance(MultiPoint([tuple(v)])) for v in fp[k]) < 1e-9


def test_bev_iou_matches_shapely_on_full_rotations():
    rng = np.random.default_rng(2)
    n = 400
    c1, d1, R1 = _random_boxes(rng, n)
    c2, d2, R2 = _random_boxes(rng, n)
    got = iou.bev_iou_pairs(c1, d1, R1, c2, d2, R2)
    ref = np.array([_reference_iou_bev(c1[k], d1[k], R1[k], c2[k], d2[k], R2[k]) for k in range(n)])
    assert np.abs(got - ref).max() < TOL
    assert (ref > 0.05).sum() > 100


def test_bev_iou_special_cases():
    R = Rotation.from_euler("yxz", [0.4, 0.3, -0.2]).as_matrix()[None]
    c = np.array([[0.2, 0.1, 5.0]])
    d = np.array([[1.0, 2.0, 3.0]])
    assert iou.bev_iou_pairs(c, d, R, c, d, R)[0] == pytest.approx(1.0, abs=1e-12)
    # Touching: yaw-only boxes side by side along x (extent L = 3).
    Ry = geometry.yaw_only_rotation([0.0])
    assert iou.bev_iou_pairs(c, d, Ry, c + [[3.0, 0, 0]], d, Ry)[0] == 0.0
    # Nested footprints: IoU = small area / large area.
    small = np.array([[0.5, 2.0, 1.0]])
    assert iou.bev_iou_pairs(c, small, Ry, c, d, Ry)[0] == pytest.approx(0.5 * 1.0 / (1.0 * 3.0), abs=1e-12)
    # Degenerate box.
    assert iou.bev_iou_pairs(c, d * [[1, 0, 1]], R, c, d, R)[0] == 0.0
    # Pitch makes the footprint a hexagon; it still matches shapely.
    c2 = c + [[0.3, 0, 0.4]]
    assert iou.bev_iou_pairs(c, d, R, c2, d, Ry)[0] == pytest.approx(
        _reference_iou_bev(c[0], d[0], R[0], c2[0], d[0], Ry[0]), abs=TOL)


# ----------------------------------------------------------------------------------------- 3D
def test_iou_3d_matches_scipy_halfspace_intersection():
    rng = np.random.default_rng(3)
    n = 300
    c1, d1, R1 = _random_boxes(rng, n)
    c2, d2, R2 = _random_boxes(rng, n)
    got = iou.iou_3d_pairs(c1, d1, R1, c2, d2, R2)
    ref = np.array([_reference_iou_3d(c1[k], d1[k], R1[k], c2[k], d2[k], R2[k]) for k in range(n)])
    assert np.abs(got - ref).max() < TOL
    assert (ref > 0.05).sum() > 60


def test_iou_3d_close_pairs_match_scipy():
    """Near-duplicates (the pairs that decide AP-3D) stress coplanar and nearly coplanar faces."""
    rng = np.random.default_rng(4)
    n = 200
    c1, d1, R1 = _random_boxes(rng, n)
    c2 = c1 + rng.normal(0, 0.05, (n, 3))
    d2 = d1 * rng.uniform(0.9, 1.1, (n, 3))
    R2 = R1 @ Rotation.from_rotvec(rng.normal(0, 0.05, (n, 3))).as_matrix()
    got = iou.iou_3d_pairs(c1, d1, R1, c2, d2, R2)
    ref = np.array([_reference_iou_3d(c1[k], d1[k], R1[k], c2[k], d2[k], R2[k]) for k in range(n)])
    assert np.abs(got - ref).max() < TOL
    assert np.median(ref) > 0.5


def test_iou_3d_special_cases():
    rng = np.random.default_rng(5)
    c, d, R = _random_boxes(rng, 20)
    # Identical boxes.
    assert np.abs(iou.iou_3d_pairs(c, d, R, c, d, R) - 1).max() < 1e-9
    # Nested: a box scaled by 0.6 about its centre; IoU = 0.6^3.
    assert np.abs(iou.iou_3d_pairs(c, d * 0.6, R, c, d, R) - 0.6 ** 3).max() < 1e-9
    # Nested and rotated: a small box rotated inside a big one (fits whatever the rotation).
    big = np.full((20, 3), 4.0)
    small = np.full((20, 3), 1.0)
    other = Rotation.random(20, random_state=rng).as_matrix()
    assert np.abs(iou.iou_3d_pairs(c, small, other, c, big, R) - 1 / 64).max() < 1e-9
    # Touching along a face: shifted by exactly the L extent along the box's own x axis.
    shift = R[:, :, 0] * d[:, 2:3]
    assert np.all(iou.iou_3d_pairs(c, d, R, c + shift, d, R) == 0.0)
    # Half overlap along the box's own y axis (H extent): IoU = 0.5 / 1.5.
    shift = R[:, :, 1] * d[:, 1:2] / 2
    assert np.abs(iou.iou_3d_pairs(c, d, R, c + shift, d, R) - 1 / 3).max() < 1e-9
    # Degenerate (a zero dimension) and non-finite boxes.
    flat = d.copy()
    flat[:, 0] = 0
    assert np.all(iou.iou_3d_pairs(c, flat, R, c, d, R) == 0.0)
    assert np.all(iou.iou_3d_pairs(c, flat, R, c, flat, R) == 0.0)
    bad = c.copy()
    bad[0, 0] = np.nan
    assert iou.iou_3d_pairs(bad, d, R, c, d, R)[0] == 0.0
    # Far apart.
    assert np.all(iou.iou_3d_pairs(c, d, R, c + 100, d, R) == 0.0)


def test_iou_3d_is_symmetric_and_chunking_invariant():
    rng = np.random.default_rng(6)
    c1, d1, R1 = _random_boxes(rng, 150)
    c2, d2, R2 = _random_boxes(rng, 150)
    a = iou.iou_3d_pairs(c1, d1, R1, c2, d2, R2)
    b = iou.iou_3d_pairs(c2, d2, R2, c1, d1, R1)
    small_chunks = iou.iou_3d_pairs(c1, d1, R1, c2, d2, R2, chunk=7)
    assert np.abs(a - b).max() < 1e-9
    assert np.abs(a - small_chunks).max() < 1e-12


def test_kitti_3d_reduces_to_bev_times_height_for_yaw_only_boxes():
    """For yaw-only boxes the exact 3D IoU equals KITTI's BEV-intersection x y-overlap formula."""
    rng = np.random.default_rng(7)
    n = 100
    c1 = rng.normal(size=(n, 3)) * 0.5
    c2 = c1 + rng.normal(size=(n, 3)) * 0.4
    d1, d2 = rng.uniform(0.5, 2, (n, 3)), rng.uniform(0.5, 2, (n, 3))
    R1, R2 = geometry.yaw_only_rotation(rng.uniform(-3, 3, n)), geometry.yaw_only_rotation(rng.uniform(-3, 3, n))
    inter_bev = iou.bev_intersection_pairs(c1, d1, R1, c2, d2, R2)
    y_overlap = np.clip(np.minimum(c1[:, 1] + d1[:, 1] / 2, c2[:, 1] + d2[:, 1] / 2)
                        - np.maximum(c1[:, 1] - d1[:, 1] / 2, c2[:, 1] - d2[:, 1] / 2), 0, None)
    inter = inter_bev * y_overlap
    expected = inter / (d1.prod(1) + d2.prod(1) - inter)
    # 1e-8: the BEV kernel clips with a relative 1e-10 slack, the 3D one with 1e-12
    assert np.abs(iou.iou_3d_pairs(c1, d1, R1, c2, d2, R2) - expected).max() < 1e-8


def test_rotations_a_few_ulps_off_so3_still_give_iou_one():
    # rotations stored as text or composed (R_ext @ R_world) are off SO(3) by ~1e-9: IoU must not care
    rng = np.random.default_rng(3)
    R = geometry.rotation_from_ypr(rng.uniform(-1, 1, (20, 3))) + 1e-9 * rng.standard_normal((20, 3, 3))
    c = rng.uniform(0, 1, (20, 3))
    d = rng.uniform(0.02, 0.07, (20, 3))  # WildBox boxes are small in normalised units
    np.testing.assert_allclose(iou.iou_3d_pairs(c, d, R, c, d, R), 1.0, atol=1e-9)


def test_boxes_rounded_to_nine_digits_keep_iou_one():
    # predictions written as text (9 significant digits) must match their ground truth exactly
    rng = np.random.default_rng(4)
    R = geometry.rotation_from_ypr(rng.uniform(-1, 1, (200, 3)))
    c = rng.uniform(0, 1, (200, 3))
    d = rng.uniform(0.02, 0.07, (200, 3))
    rounded = np.vectorize(lambda v: float(f"{v:.9g}"))
    v = iou.iou_3d_pairs(c, d, R, rounded(c), rounded(d), rounded(R))
    np.testing.assert_allclose(v, 1.0, atol=1e-6)


def _axis_angle(axis, angle):
    """(n, 3, 3) rotations by ``angle`` (n,) about unit ``axis`` (n, 3)."""
    return Rotation.from_rotvec(np.asarray(axis) * np.asarray(angle)[:, None]).as_matrix()


def _stress_pairs(rng, n_per_regime=300):
    """Box pairs covering the regimes where clipping is fragile, at scales 1e-3 .. 1e2.

    Each regime yields (c1, d1, R1, c2, d2, R2) arrays; boxes sit up to 20 box sizes from the
    camera origin. Rotation differences are log-uniform in 1e-12 .. 1e-3 rad about random axes.
    """
    n = n_per_regime

    def base():
        scale = 10 ** rng.uniform(-3, 2, n)
        d = rng.uniform(0.2, 1.5, (n, 3)) * scale[:, None]
        c = rng.normal(0, 8, (n, 3)) * scale[:, None]
        R = Rotation.random(n, random_state=rng).as_matrix()
        axis = rng.normal(size=(n, 3))
        axis /= np.linalg.norm(axis, axis=1, keepdims=True)
        tiny = _axis_angle(axis, 10 ** rng.uniform(-12, -3, n))
        return scale, c, d, R, tiny

    def local_shift(R, v):
        return np.einsum("kij,kj->ki", R, v)

    def face_shift(d):
        """(n, 3) local shift by the full extent along one random local axis, either way."""
        ext = np.zeros((n, 3))
        k = rng.integers(0, 3, n)
        ext[np.arange(n), k] = d[:, ::-1][np.arange(n), k] * np.sign(rng.normal(size=n))
        return ext

    out = {}
    # 1. the same box, rotated by a tiny angle about its centre (the case)
    scale, c, d, R, tiny = base()
    out["rotated copy"] = (c, d, R, c.copy(), d.copy(), R @ tiny)
    # 2. ... about one of its own axes (one pair of faces stays exactly coplanar)
    scale, c, d, R, _ = base()
    face_axis = np.eye(3)[rng.integers(0, 3, n)]
    out["rotated about a box axis"] = (c, d, R, c.copy(), d.copy(), R @ _axis_angle(face_axis, 10 ** rng.uniform(-12, -3, n)))
    # 3. near duplicates: tiny rotation, centre and size changes of the same order
    scale, c, d, R, tiny = base()
    eps = 10 ** rng.uniform(-12, -3, (n, 1))
    out["near duplicate"] = (c, d, R, c + rng.normal(size=(n, 3)) * eps * scale[:, None],
                             d * (1 + rng.normal(size=(n, 3)) * eps), R @ tiny)
    # 4. nested: a smaller box inside, half of them pushed against a face (exactly coplanar),
    #    with the same rotation or a tiny rotation away from it
    scale, c, d, R, tiny = base()
    small = d * rng.uniform(0.2, 0.9, (n, 3))
    slack = (d - small)[:, ::-1] / 2  # local (x, y, z) room on each side
    push = rng.uniform(-1, 1, (n, 3)) * slack
    against = rng.random(n) < 0.5
    k = rng.integers(0, 3, n)
    push[against, k[against]] = np.sign(rng.normal(size=against.sum())) * slack[against, k[against]]
    R_small = np.where((rng.random(n) < 0.5)[:, None, None], R, R @ tiny)
    out["nested"] = (c + local_shift(R, push), small, R_small, c, d, R)
    # 5. touching along a face (shifted by exactly the extent along a local axis), tiny rotation
    scale, c, d, R, tiny = base()
    ext = face_shift(d)
    out["touching"] = (c, d, R, c + local_shift(R, ext), d.copy(), np.where((rng.random(n) < 0.5)[:, None, None], R, R @ tiny))
    # 6. disjoint: just apart along a local axis, or far away
    scale, c, d, R, tiny = base()
    ext = face_shift(d)
    gap = 1 + 10 ** rng.uniform(-9, 1, n)
    out["disjoint"] = (c, d, R, c + local_shift(R, ext * gap[:, None]), d.copy(), R @ tiny)
    # 7. generic overlaps at every rotation
    scale, c, d, R, _ = base()
    out["generic"] = (c, d, R, c + rng.normal(0, 0.3, (n, 3)) * scale[:, None],
                      rng.uniform(0.2, 1.5, (n, 3)) * scale[:, None], Rotation.random(n, random_state=rng).as_matrix())
    # 8. partial overlap along a local axis with a tiny rotation (coplanar side faces)
    scale, c, d, R, tiny = base()
    ext = face_shift(d)
    frac = rng.uniform(0.05, 0.95, n)
    out["sliding"] = (c, d, R, c + local_shift(R, ext * frac[:, None]), d.copy(), R @ tiny)
    return out


def test_iou_3d_matches_exact_reference_on_near_degenerate_pairs():
    """>= 2,000 pairs: tiny rotation differences (1e-12 .. 1e-3 rad), nested, touching, disjoint,
    scales 1e-3 .. 1e2; the intersection volume agrees with the hull of the feasible face-triple vertices
    (every pair) and with scipy's half-space intersection (every 10th pair of each regime: the vertex
    reference checked too) to 1e-6 of the smaller box's volume."""
    rng = np.random.default_rng(20)
    regimes = _stress_pairs(rng)
    n_total, n_scipy, worst, worst_iou, worst_scipy = 0, 0, {}, {}, {}
    for name, (c1, d1, R1, c2, d2, R2) in regimes.items():
        got = iou.intersection_3d_pairs(c1, d1, R1, c2, d2, R2)
        ref = _vertex_intersection_3d(c1, d1, R1, c2, d2, R2)
        smaller = np.minimum(d1.prod(1), d2.prod(1))
        worst[name] = float(np.max(np.abs(got - ref) / smaller))
        every_10th = np.arange(0, len(c1), 10)
        scipy_ref = np.array([_reference_intersection_3d(c1[k], d1[k], R1[k], c2[k], d2[k], R2[k]) for k in every_10th])
        worst_scipy[name] = float(np.max(np.maximum(np.abs(got[every_10th] - scipy_ref),
                                                    np.abs(ref[every_10th] - scipy_ref)) / smaller[every_10th]))
        # and the IoU as the evaluators see it (rotations projected to SO(3) first)
        union = d1.prod(1) + d2.prod(1) - ref
        worst_iou[name] = float(np.max(np.abs(iou.iou_3d_pairs(c1, d1, R1, c2, d2, R2) - ref / union)))
        n_total += len(c1)
        n_scipy += len(every_10th)
        if name in ("rotated copy", "rotated about a box axis", "near duplicate"):
            assert np.median(ref / union) > 0.999  # the regime really is near-coincident boxes
    assert n_total >= 2000 and n_scipy >= 200
    assert max(worst.values()) < 1e-6, worst
    assert max(worst_scipy.values()) < 1e-6, worst_scipy
    assert max(worst_iou.values()) < 1e-6, worst_iou


@pytest.mark.parametrize("angle", [1e-12, 1e-10, 1e-8, 1e-6, 1e-5, 1e-4, 1e-3, 0.1])
def test_unit_cube_rotated_about_z_has_the_closed_form_iou(angle):
    # The overlap of a unit square and its copy rotated by a about the centre: the square minus
    # four corner triangles with legs (1 - tan(a/2)) / 2 and (cos a + sin a - 1) / (2 cos a).
    tri = 0.5 * (0.5 * (1 - np.tan(angle / 2))) * (0.5 * (np.cos(angle) + np.sin(angle) - 1) / np.cos(angle))
    inter = 1 - 4 * tri
    want = inter / (2 - inter)
    c, d = np.zeros((1, 3)), np.ones((1, 3))
    Rz = Rotation.from_rotvec([0, 0, angle]).as_matrix()[None]
    assert iou.iou_3d_pairs(c, d, np.eye(3)[None], c, d, Rz)[0] == pytest.approx(want, abs=1e-11)
    # about the axis (1, 2, 3): no face stays coplanar; the scipy reference decides
    axis = np.array([1.0, 2, 3]) / np.sqrt(14)
    Ra = Rotation.from_rotvec(axis * angle).as_matrix()
    want = _reference_iou_3d(c[0], d[0], np.eye(3), c[0], d[0], Ra)
    assert iou.iou_3d_pairs(c, d, np.eye(3)[None], c, d, Ra[None])[0] == pytest.approx(want, abs=1e-11)
    assert want > 1 - 10 * angle
