"""Geometric queries against brute force over densely sampled boundaries: signed distances, ray
hits (on the boundary, on the ray, first along it), closest points and silhouette points."""

from __future__ import annotations

import math

import numpy as np
import pytest

from energies.library.functions import FUNCTIONS

from .fn_support import Shape


def f(name: str, *args: object) -> object:
    return FUNCTIONS[name].apply(None, *args)


def circle_pts(c: list[float], r: float, n: int = 20000) -> np.ndarray:
    t = np.linspace(0, 2 * np.pi, n, endpoint=False)
    return np.stack([c[0] + r * np.cos(t), c[1] + r * np.sin(t)], 1)


def ellipse_pts(c: list[float], rx: float, ry: float, n: int = 40000) -> np.ndarray:
    t = np.linspace(0, 2 * np.pi, n, endpoint=False)
    return np.stack([c[0] + rx * np.cos(t), c[1] + ry * np.sin(t)], 1)


def chain_pts(pts: list[list[float]], closed: bool, per_edge: int = 3000) -> np.ndarray:
    p = np.array(pts, dtype=float)
    edges = range(len(p)) if closed else range(len(p) - 1)
    t = np.linspace(0, 1, per_edge)[:, None]
    return np.concatenate([p[i] + t * (p[(i + 1) % len(p)] - p[i]) for i in edges])


def inside(poly: list[list[float]], q: list[float]) -> bool:
    x, y, hit = q[0], q[1], False
    for (x0, y0), (x1, y1) in zip(poly, poly[1:] + poly[:1]):
        if (y0 > y) != (y1 > y) and x < x0 + (y - y0) * (x1 - x0) / (y1 - y0):
            hit = not hit
    return hit


def nearest(boundary: np.ndarray, q: list[float]) -> tuple[float, np.ndarray]:
    d = np.linalg.norm(boundary - np.array(q), axis=1)
    k = int(d.argmin())
    return float(d[k]), boundary[k]


POLY = [[0.0, 0.0], [4.0, 0.0], [4.0, 3.0], [2.0, 1.2], [0.0, 3.0]]  # non-convex (notch at the top)
RECT = [[3.0, 2.0], [1.0, 2.0], [1.0, 1.0], [3.0, 1.0]]  # tr, tl, bl, br
QUERIES = [[5.0, 1.0], [2.0, 0.5], [1.0, 2.5], [-1.0, -2.0], [2.0, 2.0], [3.5, 2.9]]


# -- signed distances ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("q", QUERIES)
def test_signed_distances_match_brute_force(q: list[float]) -> None:
    d, _ = nearest(circle_pts([1.0, 0.5], 1.5), q)
    inside_circle = math.dist(q, [1.0, 0.5]) < 1.5
    assert f("signedDistanceCircle", [1.0, 0.5], 1.5, q) == pytest.approx(
        -d if inside_circle else d, abs=1e-6
    )
    d, _ = nearest(ellipse_pts([1.0, 0.5], 2.5, 1.2), q)
    inside_ellipse = ((q[0] - 1.0) / 2.5) ** 2 + ((q[1] - 0.5) / 1.2) ** 2 < 1
    assert f("signedDistanceEllipse", [1.0, 0.5], 2.5, 1.2, q) == pytest.approx(
        -d if inside_ellipse else d, abs=1e-6
    )
    d, _ = nearest(chain_pts(POLY, True), q)
    assert f("signedDistancePolygon", POLY, q) == pytest.approx(-d if inside(POLY, q) else d, abs=1e-3)
    d, _ = nearest(chain_pts(POLY, False), q)
    assert f("signedDistancePolyline", POLY, q) == pytest.approx(d, abs=1e-3)
    d, _ = nearest(chain_pts(RECT, True), q)
    assert f("signedDistanceRect", RECT, q) == pytest.approx(-d if inside(RECT, q) else d, abs=1e-3)
    d, _ = nearest(chain_pts(POLY[:2], False), q)
    assert f("signedDistanceLine", POLY[0], POLY[1], q) == pytest.approx(d, abs=1e-3)


def test_signed_distance_dispatches_on_shapes() -> None:
    circle = Shape("Circle", {"center": [0.0, 0.0], "r": 1.0, "strokeWidth": 0.0})
    rect = Shape(
        "Rectangle", {"center": [5.0, 0.0], "width": 2.0, "height": 2.0, "rotation": 0.0, "strokeWidth": 0.0}
    )
    poly = Shape("Polygon", {"points": POLY, "scale": 1.0})
    line = Shape("Line", {"start": [0.0, 0.0], "end": [4.0, 0.0], "strokeWidth": 1.0})
    q = [3.0, 0.5]
    assert f("signedDistance", circle, q) == pytest.approx(math.hypot(3, 0.5) - 1)
    assert f("signedDistance", rect, q) == pytest.approx(1.0)
    assert f("signedDistance", poly, q) == f("signedDistancePolygon", POLY, q)
    assert f("signedDistance", line, q) == pytest.approx(0.5)
    group = Shape("Group", {"shapes": [circle, rect], "clipPath": None})
    assert f("signedDistance", group, q) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="signedDistance: shape kind Ellipse"):
        f("signedDistance", Shape("Ellipse", {"center": [0.0, 0.0], "rx": 1.0, "ry": 2.0}), q)


# -- rays ---------------------------------------------------------------------------------------------------


def check_first_hit(sdf: object, p: list[float], v: list[float], hit: list[float], tol: float = 1e-9) -> None:
    """The hit is on the boundary, on the ray, and the boundary is not crossed before it."""
    p_, v_, x = np.array(p), np.array(v), np.array(hit)
    assert abs(sdf(hit)) < tol  # type: ignore[operator]
    t = (x - p_) @ v_ / (v_ @ v_)
    assert t > 0 and np.linalg.norm(p_ + t * v_ - x) < 1e-9
    start = np.sign(sdf(p))  # type: ignore[operator]
    for s in np.linspace(0, t, 400)[:-3]:
        assert np.sign(sdf(list(p_ + s * v_))) == start  # type: ignore[operator]


def test_ray_intersections_hit_first_boundary_point() -> None:
    p, v = [-3.0, 0.7], [1.0, 0.05]
    circle = lambda q: f("signedDistanceCircle", [1.0, 0.5], 1.5, q)  # noqa: E731
    hit = f("rayIntersectCircle", [1.0, 0.5], 1.5, p, v)
    # Penrose solves for t with the direction normalized by |v| + 1e-5: hits are within ~1e-5 |t|
    check_first_hit(circle, p, v, hit, tol=1e-4)
    assert f("rayIntersectCircleDistance", [1.0, 0.5], 1.5, p, v) == pytest.approx(math.dist(p, hit))
    n = np.array(f("rayIntersectNormalCircle", [1.0, 0.5], 1.5, p, v))
    assert n == pytest.approx((np.array(hit) - [1.0, 0.5]) / 1.5, rel=1e-4)  # outward, facing p here
    assert n @ (np.array(p) - hit) > 0

    ellipse = lambda q: f("signedDistanceEllipse", [1.0, 0.5], 2.0, 1.2, q)  # noqa: E731
    check_first_hit(ellipse, p, v, f("rayIntersectEllipse", [1.0, 0.5], 2.0, 1.2, p, v), tol=1e-4)
    polygon = lambda q: f("signedDistancePolygon", POLY, q)  # noqa: E731
    check_first_hit(polygon, p, v, f("rayIntersectPoly", POLY, True, p, v))
    rect = lambda q: f("signedDistanceRect", RECT, q)  # noqa: E731
    check_first_hit(rect, [-3.0, 1.3], v, f("rayIntersectRect", RECT, [-3.0, 1.3], v))
    assert f("rayIntersectNormalRect", RECT, [-3.0, 1.3], v) == pytest.approx([-1.0, 0.0], abs=1e-4)
    hit = f("rayIntersectLine", [0.0, -1.0], [0.0, 2.0], p, v)
    assert hit == pytest.approx([0.0, 0.85])
    assert f("rayIntersectNormalLine", [0.0, -1.0], [0.0, 2.0], p, v) == pytest.approx([-1.0, 0.0], abs=1e-4)


def test_ray_misses() -> None:
    p, away = [-3.0, 0.7], [-1.0, 0.0]
    assert f("rayIntersectCircle", [1.0, 0.5], 1.5, p, away) == p
    assert f("rayIntersectCircleDistance", [1.0, 0.5], 1.5, p, away) == math.inf
    assert f("rayIntersectNormalCircle", [1.0, 0.5], 1.5, p, away) == [0.0, 0.0]
    assert f("rayIntersectPoly", POLY, False, p, away) == p
    assert f("rayIntersectLineDistance", [0.0, -1.0], [0.0, 2.0], p, away) == math.inf


def test_axis_aligned_rays_and_parallel_edges() -> None:
    # edges parallel to the ray and misses along a zero direction component must not produce NaN
    assert f("rayIntersectRect", RECT, [-3.0, 1.5], [1.0, 0.0]) == pytest.approx([1.0, 1.5])
    assert f("rayIntersectRectDistance", RECT, [2.0, -3.0], [0.0, 1.0]) == pytest.approx(4.0)
    assert f("rayIntersectPoly", POLY, True, [2.0, -3.0], [0.0, 1.0]) == pytest.approx([2.0, 0.0])
    assert f("rayIntersectLine", [0.0, 0.0], [2.0, 0.0], [-1.0, 0.0], [1.0, 0.0]) == [-1.0, 0.0]  # collinear
    assert f("rayIntersectCircleDistance", [0.0, 5.0], 1.0, [0.0, 0.0], [1.0, 0.0]) == math.inf


def test_ray_intersect_on_shapes_picks_the_nearest_member() -> None:
    near = Shape("Circle", {"center": [0.0, 0.0], "r": 1.0})
    far = Shape("Rectangle", {"center": [5.0, 0.0], "width": 2.0, "height": 2.0})
    group = Shape("Group", {"shapes": [far, near]})
    assert f("rayIntersect", group, [-3.0, 0.0], [1.0, 0.0]) == pytest.approx([-1.0, 0.0], abs=1e-4)
    assert f("rayIntersectDistance", far, [-3.0, 0.0], [1.0, 0.0]) == pytest.approx(7.0)
    assert f("rayIntersectNormal", far, [-3.0, 0.0], [1.0, 0.0]) == pytest.approx([-1.0, 0.0], abs=1e-4)
    line = Shape("Line", {"start": [0.0, -1.0], "end": [0.0, 1.0]})
    assert f("rayIntersectGroupDistance", [line, far], [-3.0, 0.0], [1.0, 0.0]) == pytest.approx(3.0)


# -- closest points -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("q", QUERIES)
def test_closest_points_match_brute_force(q: list[float]) -> None:
    def same(got: object, boundary: np.ndarray, tol: float, at: list[float] = q) -> None:
        d, _ = nearest(boundary, at)
        assert math.dist(got, at) == pytest.approx(d, abs=tol)  # type: ignore[arg-type]
        assert nearest(boundary, got)[0] < tol  # type: ignore[arg-type]

    same(f("closestPointCircle", [1.0, 0.5], 1.5, q), circle_pts([1.0, 0.5], 1.5), 1e-3)
    same(f("closestPointPoly", POLY, True, q), chain_pts(POLY, True), 2e-3)
    same(f("closestPointPoly", POLY, False, q), chain_pts(POLY, False), 2e-3)
    same(f("closestPointLine", POLY[1], POLY[2], q), chain_pts(POLY[1:3], False), 2e-3)
    same(f("closestPointRect", RECT, q), chain_pts(RECT, True), 2e-3)
    # Penrose takes two Newton steps from the polar-angle guess: accurate near the ellipse only
    c, rx, ry = [1.0, 0.5], 2.5, 1.2
    direction = np.subtract(q, c) / np.linalg.norm(np.subtract(q, c))
    t = math.atan2(direction[1] * rx, direction[0] * ry)
    close_by = (np.array(c) + 1.05 * np.array([rx * math.cos(t), ry * math.sin(t)])).tolist()
    same(f("closestPointEllipse", c, rx, ry, close_by), ellipse_pts(c, rx, ry), 1e-3, close_by)


def test_closest_point_on_shapes() -> None:
    circle = Shape("Circle", {"center": [0.0, 0.0], "r": 1.0})
    rect = Shape("Rectangle", {"center": [5.0, 0.0], "width": 2.0, "height": 2.0, "rotation": 0.0})
    assert f("closestPoint", circle, [3.0, 0.0]) == pytest.approx([1.0, 0.0])
    assert f("closestPoint", rect, [3.0, 0.5]) == pytest.approx([4.0, 0.5])
    assert f("closestPointGroup", [circle, rect], [3.2, 0.0]) == pytest.approx([4.0, 0.0])
    assert f("closestPoint", Shape("Polyline", {"points": POLY}), [2.0, -1.0]) == pytest.approx([2.0, 0.0])


# -- silhouettes --------------------------------------------------------------------------------------------


def test_circle_silhouette_is_a_tangent_point() -> None:
    c, r, p = [1.0, 0.5], 1.5, [4.0, 3.0]
    q = np.array(f("closestSilhouettePointCircle", c, r, p))
    assert np.linalg.norm(q - c) == pytest.approx(r)
    assert (q - c) @ (q - p) == pytest.approx(0.0, abs=1e-9)  # the sight line grazes the circle
    assert f("closestSilhouettePointCircle", c, r, [1.2, 0.4]) == [1.2, 0.4]  # inside: none, p returned
    circle = Shape("Circle", {"center": c, "r": r})
    assert f("closestSilhouetteDistance", circle, [1.2, 0.4]) == math.inf
    assert f("closestSilhouetteDistance", circle, p) == pytest.approx(math.sqrt(math.dist(p, c) ** 2 - r * r))


def brute_silhouette(pts: list[list[float]], p: list[float], closed: bool) -> list[float]:
    """Nearest vertex whose two incident edges lie on one side of the sight line (plus open ends)."""
    a = np.array(pts)
    n = len(a)
    cands = []
    for i in range(n) if closed else range(1, n - 1):
        prev, cur, nxt = a[i - 1], a[i], a[(i + 1) % n]
        d = cur - np.array(p)
        sides = [d[0] * (w - cur)[1] - d[1] * (w - cur)[0] for w in (prev, nxt)]
        if sides[0] * sides[1] > 0:
            cands.append(cur)
    if not closed:
        cands += [a[0], a[-1]]
    if not cands:  # no silhouette (p inside a convex region of the outline): p itself
        return list(p)
    return min(cands, key=lambda c: np.linalg.norm(c - p)).tolist()


@pytest.mark.parametrize("p", [[5.0, 1.0], [-1.0, -2.0], [2.3, 5.0], [2.0, 1.0]])
def test_polygon_silhouettes_match_brute_force(p: list[float]) -> None:
    assert f("closestSilhouettePointPolygon", POLY, p) == pytest.approx(brute_silhouette(POLY, p, True))
    assert f("closestSilhouettePointPolyline", POLY, p) == pytest.approx(brute_silhouette(POLY, p, False))


def test_other_silhouettes() -> None:
    assert f("closestSilhouettePointLine", [0.0, 0.0], [2.0, 1.0], [0.3, 1.5]) == [0.0, 0.0]
    assert f("closestSilhouettePointRect", RECT, [0.0, 1.5]) == pytest.approx([1.0, 1.0])
    ell = f("closestSilhouettePointEllipse", [1.0, 0.5], 2.0, 1.2, [4.0, 3.0])  # Penrose: the closest point
    assert ell == f("closestPointEllipse", [1.0, 0.5], 2.0, 1.2, [4.0, 3.0])
    circle = Shape("Circle", {"center": [0.0, 0.0], "r": 1.0})
    far = Shape("Circle", {"center": [9.0, 0.0], "r": 1.0})
    q = f("closestSilhouettePointGroup", [far, circle], [0.0, 3.0])
    assert math.hypot(*q) == pytest.approx(1.0) and q[1] > 0
    assert f("closestSilhouettePoint", circle, [0.0, 3.0]) == pytest.approx(q)


# -- shape-level functions ----------------------------------------------------------------------------------


def test_shape_level_wrappers() -> None:
    rect = Shape(
        "Rectangle", {"center": [1.0, 2.0], "width": 4.0, "height": 2.0, "rotation": 90.0, "strokeWidth": 0.0}
    )
    # 90 degrees clockwise maps offsets (x, y) to (y, -x): tr (2, 1) -> (1, -2), tl (-2, 1) -> (1, 2), ...
    np.testing.assert_allclose(
        f("rectPts", rect), [[2.0, 0.0], [2.0, 4.0], [0.0, 4.0], [0.0, 0.0]], atol=1e-12
    )
    np.testing.assert_allclose(
        f("bboxPts", rect), [[2.0, 4.0], [0.0, 4.0], [0.0, 0.0], [2.0, 0.0]], atol=1e-12
    )
    assert f("shapeDistanceCircles", [0.0, 0.0], 1.0, [5.0, 0.0], 2.0) == 2.0
    assert f("shapeDistanceLines", [0.0, 0.0], [2.0, 0.0], [1.0, 1.0], [1.0, 3.0]) == pytest.approx(1.0)
    # box [1,3]x[1,2] against a segment left of and below it: brute force over both
    box, seg = chain_pts(RECT, True, 400), chain_pts([[-1.0, 0.3], [0.2, -0.7]], False, 400)
    brute = np.linalg.norm(box[:, None] - seg[None], axis=2).min()
    assert f("rectLineDist", [1.0, 1.0], [3.0, 2.0], [-1.0, 0.3], [0.2, -0.7]) == pytest.approx(
        brute, abs=1e-2
    )
    circle = Shape("Circle", {"center": [0.0, 0.0], "r": 1.0, "strokeWidth": 0.0})
    assert f("shapeDistance", circle, Shape("Circle", {"center": [3.0, 4.0], "r": 1.5})) == pytest.approx(2.5)
    assert f("noClip") is None and f("clip", circle) is circle


PENROSE_CLOSEST_CASES = [  # (shape, query, expected) from Penrose's ClosestPoint.test.ts
    (Shape("Circle", {"center": [0.0, 0.0], "r": 3.0}), [4.0, 0.0], [3.0, 0.0]),
    (Shape("Circle", {"center": [0.0, 0.0], "r": 3.0}), [-5.0, 0.0], [-3.0, 0.0]),
    (Shape("Rectangle", {"center": [0.0, 0.0], "width": 6.0, "height": 4.0}), [-6.0, 0.0], [-3.0, 0.0]),
    (Shape("Rectangle", {"center": [2.0, 3.0], "width": 4.0, "height": 6.0}), [-6.0, 0.0], [0.0, 0.0]),
    (Shape("Rectangle", {"center": [0.0, 0.0], "width": 6.0, "height": 4.0}), [6.0, -3.0], [3.0, -2.0]),
    (Shape("Rectangle", {"center": [0.0, 0.0], "width": 6.0, "height": 4.0}), [1.0, 1.0], [1.0, 2.0]),
    (Shape("Rectangle", {"center": [0.0, 0.0], "width": 6.0, "height": 4.0}), [0.0, 0.0], [0.0, 2.0]),
    (Shape("Line", {"start": [0.0, 0.0], "end": [6.0, 3.0]}), [1.0, 3.0], [2.0, 1.0]),
    (Shape("Line", {"start": [0.0, 0.0], "end": [3.0, 2.0]}), [1.0, 1.0], [1.153846, 0.7692307692307693]),
    (Shape("Line", {"start": [7.0, 0.0], "end": [0.0, 0.0]}), [8.0, 1.0], [7.0, 0.0]),
    (
        Shape("Polyline", {"points": [[0.0, 0.0], [3.0, 2.0], [5.0, 0.0], [5.0, -3.0]]}),
        [5.0, 2.0],
        [4.0, 1.0],
    ),
    (
        Shape("Polygon", {"points": [[4.0, 2.0], [4.0, -2.0], [-4.0, -2.0], [-4.0, 2.0]]}),
        [5.0, 0.0],
        [4.0, 0.0],
    ),
    # a tie between all four edges: Penrose's scan keeps the last one, the closing edge
    (
        Shape("Polygon", {"points": [[-4.0, -4.0], [-4.0, 0.0], [0.0, 0.0], [0.0, -4.0]]}),
        [-2.0, -2.0],
        [-2.0, -4.0],
    ),
    (
        Shape(
            "Polygon", {"points": [[4.0, 8.0], [8.0, 8.0], [8.0, 0.0], [0.0, 0.0], [0.0, 4.0], [4.0, 4.0]]}
        ),
        [3.0, 6.0],
        [4.0, 6.0],
    ),
]


@pytest.mark.parametrize(("shape", "query", "expected"), PENROSE_CLOSEST_CASES)
def test_closest_point_matches_penroses_own_cases(
    shape: Shape, query: list[float], expected: list[float]
) -> None:
    assert f("closestPoint", shape, query) == pytest.approx(expected, abs=1e-6)


PENROSE_ELLIPSE_SDF = [  # (rx, ry, point, expected) from Penrose's SDF.test.ts, ellipses centered at 0
    (100, 50, [0, 60], 10),
    (100, 50, [0, 0], -50),
    (100, 50, [0, 10], -40),
    (100, 50, [0, -50], 0),
    (50, 100, [0, -100], 0),
    (100, 50, [0, 110], 60),
    (100, 50, [200, 200], 208.06713155931837),
    (100, 50, [100, 100], 70.94005207582373),
    (50, 100, [10, 10], -39.68665679900546),
    (50, 100, [-10, -15], -39.292580918351725),
    (50, 100, [20, -30], -27.29927445733961),
    (50, 100, [10, -30], -37.1165176575388),
    (50, 100, [35, -30], -12.53117223937538),
    (100, 50, [200, 0], 100),
    (50, 100, [-60, 10], 10.238345931161755),
    (50, 100, [-40, 10], -9.736448344260499),
    (50, 100, [80, -30], 31.969826845944244),
    (100, 50, [100, 0], 0),
]


@pytest.mark.parametrize(("rx", "ry", "q", "expected"), PENROSE_ELLIPSE_SDF)
def test_ellipse_sdf_matches_penroses_own_cases(
    rx: float, ry: float, q: list[float], expected: float
) -> None:
    got = f("signedDistanceEllipse", [0.0, 0.0], float(rx), float(ry), [float(c) for c in q])
    assert got == pytest.approx(expected, abs=5e-3)  # Penrose's toBeCloseTo precision


PENROSE_SDF = [  # (shape, point, expected) from Penrose's SDF.test.ts
    (Shape("Rectangle", {"center": [0.0, 0.0], "width": 8.0, "height": 4.0}), [7.0, -6.0], 5.0),
    (Shape("Rectangle", {"center": [0.0, 0.0], "width": 8.0, "height": 4.0}), [0.0, 1.0], -1.0),
    (Shape("Rectangle", {"center": [0.0, 0.0], "width": 8.0, "height": 4.0}), [4.0, 2.0], 0.0),
    (Shape("Rectangle", {"center": [-2.0, -2.0], "width": 4.0, "height": 4.0}), [-1.0, -2.0], -1.0),
    (Shape("Circle", {"center": [3.0, 3.0], "r": 3.0}), [3.0, 3.0], -3.0),
    (Shape("Circle", {"center": [0.0, 0.0], "r": 3.0}), [-5.0, 0.0], 2.0),
    (Shape("Polygon", {"points": [[-4.0, -4.0], [-4.0, 0.0], [0.0, 0.0], [0.0, -4.0]]}), [-2.0, -2.0], -2.0),
    (
        Shape(
            "Polygon", {"points": [[4.0, 8.0], [8.0, 8.0], [8.0, 0.0], [0.0, 0.0], [0.0, 4.0], [4.0, 4.0]]}
        ),
        [3.0, 6.0],
        1.0,
    ),
    (Shape("Line", {"start": [0.0, 0.0], "end": [8.0, 8.0]}), [0.0, 4.0], math.cos(math.pi / 4) * 4),
]


@pytest.mark.parametrize(("shape", "q", "expected"), PENROSE_SDF)
def test_signed_distance_matches_penroses_own_cases(shape: Shape, q: list[float], expected: float) -> None:
    for name, value in (("rotation", 0.0), ("strokeWidth", 0.0), ("scale", 1.0)):
        shape.props.setdefault(name, value)
    assert f("signedDistance", shape, q) == pytest.approx(expected, abs=1e-9)
