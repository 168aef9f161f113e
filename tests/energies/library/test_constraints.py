"""Every constraint of Penrose's dictionary: values against independent numeric oracles (hand-derived
numbers, numpy, brute-force sampling), gradients against finite differences, a few through Wasm."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import adcore
from energies.library.bbox import rect_pts
from energies.library.constraints import CONSTRAINTS
from energies.library.distance import BBoxApproximationWarning
from energies.library.geometry import ShapeQueryError
from energies.library.polygons import convex_partition_indices

from .support import Shape, check_gradient, grid_minimum, traced

C = CONSTRAINTS

PENROSE_CONSTRAINTS = [
    "equal",
    "lessThan",
    "greaterThan",
    "lessThanSq",
    "greaterThanSq",
    "inRange",
    "contains1D",
    "disjointScalar",
    "perpendicular",
    "collinear",
    "collinearOrdered",
    "onCanvas",
    "overlapping",
    "overlappingEllipses",
    "overlappingCircleEllipse",
    "disjoint",
    "touching",
    "contains",
    "containsCircles",
    "containsPolys",
    "containsPolyCircle",
    "containsPolyPoint",
    "containsCirclePoint",
    "containsCirclePoly",
    "containsCircleRect",
    "containsRectCircle",
    "containsRects",
    "distributeHorizontally",
    "distributeVertically",
    "disjointIntervals",
    "isLocallyConvex",
    "isConvex",
    "isEquilateral",
    "isEquiangular",
]


def circle(c, r, sw=0.0):
    return Shape("Circle", {"center": list(c), "r": r, "strokeWidth": sw})


def rect(c, w, h, rot=0.0, sw=0.0):
    return Shape(
        "Rectangle", {"center": list(c), "width": w, "height": h, "rotation": rot, "strokeWidth": sw}
    )


def text(c, w, h):
    return Shape("Text", {"center": list(c), "width": w, "height": h, "rotation": 0})


def line(s, e, sw=1.0):
    return Shape("Line", {"start": list(s), "end": list(e), "strokeWidth": sw})


def polygon(pts):
    return Shape("Polygon", {"points": [list(p) for p in pts], "scale": 1.0})


def test_all_34_constraints_by_penrose_names() -> None:
    assert len(PENROSE_CONSTRAINTS) == 34
    assert set(C) == set(PENROSE_CONSTRAINTS)


# -- scalar constraints: hand-derived values -------------------------------------------------------


def test_scalar_constraints_values() -> None:
    assert C["equal"](3.0, 5.5) == 2.5
    assert C["lessThan"](3.0, 5.0) == -2.0 and C["lessThan"](3.0, 5.0, 4.0) == 2.0
    assert C["greaterThan"](3.0, 5.0) == 2.0 and C["greaterThan"](7.0, 5.0, 1.0) == -1.0
    assert C["lessThanSq"](3.0, 5.0) == 0.0 and C["lessThanSq"](8.0, 5.0) == 9.0
    assert C["greaterThanSq"](7.0, 5.0) == 0.0 and C["greaterThanSq"](1.0, 5.0) == 16.0
    assert C["inRange"](2.0, 1.0, 3.0) == 0.0
    assert C["inRange"](5.0, 1.0, 3.0) == 2.0 and C["inRange"](-1.0, 1.0, 3.0) == 2.0
    assert C["contains1D"]([0.0, 10.0], [2.0, 3.0]) == 0.0
    assert C["contains1D"]([0.0, 10.0], [-2.0, 13.0]) == 5.0
    assert C["disjointScalar"](2.0, 1.0, 4.0) == 1.0  # nearer the left end
    assert C["disjointScalar"](3.5, 1.0, 4.0) == 0.5
    assert C["disjointScalar"](5.0, 1.0, 4.0) == 0.0


def test_vector_constraints_values() -> None:
    q, p, r = [1.0, 2.0], [3.0, 1.0], [4.0, 5.0]
    assert C["perpendicular"](q, p, r) == pytest.approx(abs(np.dot(np.subtract(q, p), np.subtract(r, p))))
    assert C["perpendicular"]([0.0, 3.0], [0.0, 0.0], [5.0, 0.0]) == 0.0
    u, v = np.subtract(p, q), np.subtract(p, r)
    assert C["collinear"](q, p, r) == pytest.approx(abs(u[0] * v[1] - u[1] * v[0]))
    assert C["collinear"]([0.0, 0.0], [2.0, 1.0], [6.0, 3.0]) == 0.0
    # ordered: the middle point must lie between the others
    assert C["collinearOrdered"]([0.0, 0.0], [2.0, 1.0], [6.0, 3.0]) == pytest.approx(0.0, abs=1e-12)
    assert C["collinearOrdered"]([2.0, 1.0], [0.0, 0.0], [6.0, 3.0]) == pytest.approx(2 * math.hypot(2, 1))


def test_on_canvas_uses_the_bounding_box() -> None:
    assert C["onCanvas"](circle([0.0, 0.0], 10.0, 2.0), 100.0, 80.0) == 0.0
    # box x in [35, 57], y in [-11, 11]: sticks out 7 on the right of a 100-wide canvas
    assert C["onCanvas"](circle([46.0, 0.0], 10.0, 2.0), 100.0, 80.0) == pytest.approx(7.0)
    assert C["onCanvas"](rect([0.0, -39.0], 10.0, 4.0), 100.0, 80.0) == pytest.approx(1.0)


# -- shape constraints -----------------------------------------------------------------------------


def test_overlapping_disjoint_touching_relate_to_the_distance() -> None:
    a, b = circle([0.0, 0.0], 5.0), circle([13.0, 0.0], 3.0)  # gap 5
    assert C["overlapping"](a, b) == pytest.approx(5.0)
    assert C["overlapping"](a, b, 2.0) == pytest.approx(7.0)
    assert C["disjoint"](a, b) == pytest.approx(-5.0)
    assert C["disjoint"](a, b, 6.0) == pytest.approx(1.0)
    assert C["touching"](a, b) == pytest.approx(5.0)
    assert C["touching"](a, b, 5.0) == pytest.approx(0.0)


def ellipse_minimax(c1, rx1, ry1, c2, rx2, ry2, overlap, circle_first=False) -> float:
    """min over the plane of max(f1, f2), Penrose's implicit functions (scaled as it scales them)."""
    factor = 1.0 / (1.0 + math.dist(c1, c2))
    k1 = math.pi / 3 * factor
    a1, b1 = rx1 - overlap, ry1 - overlap
    if circle_first:
        f1 = lambda X, Y: k1 * ((X - c1[0]) ** 2 + (Y - c1[1]) ** 2 - a1**2)
    else:
        f1 = lambda X, Y: k1 * ((b1 / a1) * (X - c1[0]) ** 2 + (a1 / b1) * (Y - c1[1]) ** 2 - a1 * b1)
    f2 = lambda X, Y: factor * ((ry2 / rx2) * (X - c2[0]) ** 2 + (rx2 / ry2) * (Y - c2[1]) ** 2 - rx2 * ry2)
    mid = [(c1[0] + c2[0]) / 2, (c1[1] + c2[1]) / 2]
    return grid_minimum(lambda X, Y: np.maximum(f1(X, Y), f2(X, Y)), mid, 60.0)


@pytest.mark.parametrize(
    ("c2", "overlap"), [([12.0, 1.0], 0.0), ([30.0, 0.0], 0.0), ([5.0, 8.0], 1.5), ([14.5, 6.0], 0.0)]
)
def test_overlapping_ellipses_is_the_minimax_of_their_implicit_functions(c2, overlap) -> None:
    got = C["overlappingEllipses"]([0.0, 0.0], 10.0, 5.0, c2, 4.0, 8.0, overlap)
    want = ellipse_minimax([0.0, 0.0], 10.0, 5.0, c2, 4.0, 8.0, overlap)
    assert got == pytest.approx(want, abs=1e-6 + 1e-5 * abs(want))


def test_overlapping_ellipses_sign_is_geometric_overlap() -> None:
    t = np.linspace(0, 2 * np.pi, 3000)
    for cx in (5.0, 12.0, 13.9, 14.1, 20.0):
        # axis-aligned: ellipse 1 reaches x = 10, ellipse 2 (rx 4) starts at cx - 4
        got = C["overlappingEllipses"]([0.0, 0.0], 10.0, 5.0, [cx, 0.0], 4.0, 8.0)
        assert (got < 0) == (cx - 4 < 10)
    p = np.stack([3 + 4 * np.cos(t), 2 + 4 * np.sin(t)], 1)
    inside_ellipse = ((p[:, 0] - 9) / 5) ** 2 + ((p[:, 1] - 2) / 2) ** 2 < 1
    assert inside_ellipse.any() == (C["overlappingCircleEllipse"]([3.0, 2.0], 4.0, [9.0, 2.0], 5.0, 2.0) < 0)


def test_overlapping_circle_ellipse_is_the_minimax() -> None:
    got = C["overlappingCircleEllipse"]([0.0, 0.0], 6.0, [9.0, 4.0], 5.0, 2.0, 0.5)
    want = ellipse_minimax([0.0, 0.0], 6.0, 6.0, [9.0, 4.0], 5.0, 2.0, 0.5, circle_first=True)
    assert got == pytest.approx(want, abs=1e-6 + 1e-5 * abs(want))


def test_contains_dispatch_values() -> None:
    big, small = circle([0.0, 0.0], 10.0), circle([3.0, 4.0], 2.0)
    assert C["contains"](big, small) == pytest.approx(5.0 - 8.0)
    assert C["contains"](big, small, 4.0) == pytest.approx(5.0 - 4.0)
    square = polygon([[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0]])
    # circle at (8, 5) r 1 with padding 2: deepest violation is the right side, 8 + 1 + 2 - 10 = 1
    assert C["contains"](square, circle([8.0, 5.0], 1.0), 2.0) == pytest.approx(1.0, abs=1e-3)
    # circle containing polygon: farthest vertex (10, 10) from (5, 5) is 7.07 away
    assert C["contains"](circle([5.0, 5.0], 6.0), square) == pytest.approx(math.hypot(5, 5) - 6.0)
    # rect-like containing a circle: max(|dx| - (w/2 - r - pad), |dy| - (h/2 - r - pad))
    assert C["contains"](text([0.0, 0.0], 20.0, 10.0), circle([6.0, 1.0], 2.0)) == pytest.approx(
        max(6 - 8, 1 - 3)
    )
    # rect-likes: squared overhangs, here 2 on the right only
    assert C["contains"](rect([0.0, 0.0], 20.0, 10.0), text([9.0, 0.0], 6.0, 2.0)) == pytest.approx(4.0)
    # circle containing a rect-like: the rect counts as a circle of radius max(w, h) at its center
    assert C["contains"](circle([0.0, 0.0], 30.0), text([3.0, 4.0], 20.0, 10.0)) == pytest.approx(5 - 10)


def test_contains_group_and_bbox_fallback() -> None:
    group = Shape("Group", {"shapes": [circle([0.0, 0.0], 10.0), circle([40.0, 0.0], 5.0)], "clipPath": None})
    inner = circle([41.0, 0.0], 1.0)
    assert C["contains"](group, inner) == pytest.approx(min(41 - 9, 1 - 4))
    clipped = Shape("Group", {"shapes": group.props["shapes"], "clipPath": circle([30.0, 0.0], 10.5)})
    # member part satisfied (-3); clip part violated by 41 + 1 - 40.5 = 1.5 -> sqrt(0 + 1.5^2)
    assert C["contains"](clipped, inner) == pytest.approx(1.5)
    with pytest.warns(BBoxApproximationWarning, match=r"contains\(Line, Circle\)"):
        got = C["contains"](line([0.0, 0.0], [10.0, 0.0], 2.0), circle([5.0, 0.0], 3.0))
    assert got == pytest.approx(2 * 2**2)  # box y in [-1, 1] vs [-3, 3]: 2 over on both sides, squared


def convex_oracle(poly: np.ndarray, point: np.ndarray, padding: float) -> float:
    """max over the sides of a counterclockwise convex polygon of the point's outward distance + padding."""
    a, b = poly, np.roll(poly, -1, axis=0)
    e = b - a
    n = np.stack([e[:, 1], -e[:, 0]], 1) / np.linalg.norm(e, axis=1)[:, None]
    return float(((point - a) * n).sum(1).max() + padding)


def test_polygon_containment_values() -> None:
    tri = np.array([[0.0, 0.0], [12.0, 1.0], [5.0, 9.0]])
    quad = np.array([[2.0, 1.0], [6.0, 1.5], [5.0, 4.0]])
    for pt_ in ([4.0, 3.0], [11.0, 6.0], [-2.0, 0.5]):
        want = convex_oracle(tri, np.array(pt_), 0.5)
        assert C["containsPolyPoint"](tri.tolist(), pt_, 0.5) == pytest.approx(want, abs=1e-3)
    want = max(convex_oracle(tri, q, 0.3) for q in quad)
    assert C["containsPolys"](tri.tolist(), quad.tolist(), 0.3) == pytest.approx(want, abs=1e-3)
    want = convex_oracle(tri, np.array([5.0, 3.0]), 1.5 + 2.0)
    assert C["containsPolyCircle"](tri.tolist(), [5.0, 3.0], 2.0, 1.5) == pytest.approx(want, abs=1e-3)
    # a concave "L": Penrose takes the max over its convex pieces (so a point must lie in all of them)
    ell = [[0.0, 0.0], [10.0, 0.0], [10.0, 3.0], [3.0, 3.0], [3.0, 10.0], [0.0, 10.0]]
    pieces = convex_partition_indices(ell)
    assert len(pieces) == 2
    for pt_ in ([7.0, 7.0], [1.5, 8.0], [1.5, 1.5]):
        want = max(convex_oracle(np.array(ell)[piece], np.array(pt_), 0.0) for piece in pieces)
        assert C["containsPolyPoint"](ell, pt_) == pytest.approx(want, abs=1e-3)
    assert C["containsPolyPoint"](ell, [1.5, 8.0]) > 0  # inside the L, yet outside one of its pieces


def test_circle_and_rect_containment_values() -> None:
    assert C["containsCirclePoint"]([0.0, 0.0], 5.0, [3.0, 4.0], 1.0) == pytest.approx(1.0)
    pts = [[1.0, 1.0], [4.0, -2.0], [0.0, 6.0]]
    assert C["containsCirclePoly"]([0.0, 0.0], 5.0, pts, 0.5) == pytest.approx(6.5 - 5.0)
    r = [[3.0, 2.0], [-1.0, 2.0], [-1.0, -1.0], [3.0, -1.0]]  # 4 x 3 at (1, 0.5): radius max(4, 3) = 4
    assert C["containsCircleRect"]([0.0, 0.0], 10.0, r) == pytest.approx(math.hypot(1, 0.5) - 6.0)
    big = [[30.0, 20.0], [-10.0, 20.0], [-10.0, -10.0], [30.0, -10.0]]
    assert C["containsRectCircle"](big, [28.0, 2.0], 3.0, 1.0) == pytest.approx(max(18 - 16, 3 - 11))
    inner = [[35.0, 2.0], [-1.0, 2.0], [-1.0, -1.0], [35.0, -1.0]]
    assert C["containsRects"](big, inner) == pytest.approx(25.0)
    assert C["containsRects"](big, inner, 1.0) == pytest.approx(36.0)
    with pytest.raises(ShapeQueryError, match="four 2D points"):
        C["containsRects"](big[:3], inner)


def test_distribute_and_intervals() -> None:
    shapes = [circle([0.0, 0.0], 5.0), circle([20.0, 3.0], 2.0), rect([40.0, -6.0], 10.0, 4.0)]
    # boxes x: [-5, 5], [18, 22], [35, 45]; gaps with padding 2: |5 + 2 - 18| + |22 + 2 - 35|
    assert C["distributeHorizontally"](shapes, 2.0) == pytest.approx(22.0)
    assert C["distributeHorizontally"](shapes, 2.0, False) == pytest.approx(
        abs(45 + 2 - 18) + abs(22 + 2 - (-5))
    )
    # y boxes: [-5, 5], [1, 5], [-8, -4]; top to bottom walks the list backwards
    assert C["distributeVertically"](shapes) == pytest.approx(abs(-4 - 1) + abs(5 + 5))
    assert C["distributeVertically"](shapes, 0.0, False) == pytest.approx(abs(5 - 1) + abs(5 + 8))
    a, b = line([0.0, 1.0], [10.0, 1.0]), line([7.0, 1.0], [20.0, 1.0])
    assert C["disjointIntervals"](a, b) == pytest.approx(3.0)
    assert C["disjointIntervals"](a, line([12.0, 1.0], [20.0, 1.0])) == 0.0


def turning_angles(pts: np.ndarray, closed: bool) -> np.ndarray:
    n = len(pts)
    idx = range(n) if closed else range(n - 2)
    out = []
    for i in idx:
        u, v = pts[(i + 1) % n] - pts[i], pts[(i + 2) % n] - pts[(i + 1) % n]
        out.append(math.atan2(u[0] * v[1] - u[1] * v[0], u @ v))
    return np.array(out)


def test_curve_constraints_values() -> None:
    hexagon = [[math.cos(k * math.pi / 3), math.sin(k * math.pi / 3)] for k in range(6)]
    for name in ("isLocallyConvex", "isConvex", "isEquilateral", "isEquiangular"):
        assert C[name](hexagon, True) == pytest.approx(0.0, abs=1e-20 if name == "isLocallyConvex" else 1e-9)
    pts = np.array([[0.0, 0.0], [10.0, 1.0], [5.0, 3.0], [12.0, 8.0], [-1.0, 6.0]])
    ang = turning_angles(pts, True)
    bad = ang[np.sign(ang.sum()) * ang <= 0]
    assert C["isLocallyConvex"](pts.tolist(), True) == pytest.approx((bad**2).sum())
    tn = ang.sum() / (2 * math.pi)
    assert C["isConvex"](pts.tolist(), True) == pytest.approx((bad**2).sum() + (abs(tn) - 1) ** 2)
    sides = np.linalg.norm(np.diff(pts, axis=0), axis=1)  # open chain
    assert C["isEquilateral"](pts.tolist(), False) == pytest.approx(((sides - sides.mean()) ** 2).sum())
    assert C["isEquiangular"](pts.tolist(), True) == pytest.approx(((ang - ang.mean()) ** 2).sum())


def test_shape_errors_name_the_function() -> None:
    with pytest.raises(ShapeQueryError, match="disjointIntervals expects two Lines, got a Circle"):
        C["disjointIntervals"](circle([0.0, 0.0], 1.0), line([0.0, 0.0], [1.0, 0.0]))


# -- gradients -------------------------------------------------------------------------------------

POLY = [[0.0, 0.0], [20.0, 1.0], [18.0, 15.0], [2.0, 12.0]]
TRI = [[10.0, 5.0], [30.0, 6.0], [25.0, 20.0]]
CHAIN = [[0.0, 0.0], [10.0, 1.0], [5.0, 3.0], [12.0, 8.0], [-1.0, 6.0]]
CIRCLE = circle([1.0, 2.0], 10.0, 2.0)
RECT = rect([5.0, 1.0], 20.0, 10.0, 30.0, 1.5)
TEXT = text([15.0, 11.0], 20.0, 10.0)

GRADIENT_CASES = {
    "equal": (1.0, 3.0),
    "lessThan": (1.0, 3.0, 0.5),
    "greaterThan": (1.0, 3.0, 0.5),
    "lessThanSq": (4.0, 3.0),
    "greaterThanSq": (1.0, 3.0),
    "inRange": (5.0, 1.0, 3.0),
    "contains1D": ([0.0, 5.0], [-1.0, 6.0]),
    "disjointScalar": (2.0, 1.0, 4.0),
    "perpendicular": ([1.0, 2.0], [3.0, 1.0], [4.0, 5.0]),
    "collinear": ([1.0, 2.0], [3.0, 1.0], [4.0, 5.0]),
    "collinearOrdered": ([1.0, 2.0], [3.0, 1.0], [4.0, 5.0]),
    "onCanvas": (RECT, 30.0, 20.0),
    "overlapping": (CIRCLE, RECT, 1.0),
    "overlappingEllipses": ([0.0, 0.0], 10.0, 5.0, [12.0, 1.0], 4.0, 8.0, 0.5),
    "overlappingCircleEllipse": ([0.0, 0.0], 10.0, [12.0, 1.0], 4.0, 8.0, 0.5),
    "disjoint": (CIRCLE, circle([25.0, -3.0], 8.0), 1.0),
    "touching": (line([-20.0, 3.0], [17.0, 9.0]), TEXT, 0.5),
    "contains": (polygon(POLY), circle([9.0, 7.0], 3.0), 1.0),
    "containsCircles": ([0.0, 0.0], 10.0, [1.0, 2.0], 3.0, 1.0),
    "containsPolys": (POLY, TRI, 1.0),
    "containsPolyCircle": (POLY, [5.0, 6.0], 2.0, 1.0),
    "containsPolyPoint": (POLY, [5.0, 6.0], 1.0),
    "containsCirclePoint": ([0.0, 0.0], 10.0, [1.0, 2.0], 1.0),
    "containsCirclePoly": ([0.0, 0.0], 10.0, TRI, 1.0),
    "disjointIntervals": (line([-20.0, 3.0], [17.0, 9.0]), line([0.0, 3.0], [30.0, 3.0])),
    "distributeHorizontally": ([CIRCLE, RECT, TEXT], 2.0, True),
    "distributeVertically": ([CIRCLE, RECT, TEXT], 2.0, False),
    "isLocallyConvex": (CHAIN, True),
    "isConvex": (CHAIN, True),
    "isEquilateral": (CHAIN, False),
    "isEquiangular": (CHAIN, True),
}


def with_rects(name):
    """Rect-point constraints get a rectangle built from center/size, so the corners move together."""
    f = C[name]
    if name == "containsCircleRect":
        return lambda c, r, rc, w, h, pad: f(c, r, rect_pts(rc, w, h), pad)
    if name == "containsRectCircle":
        return lambda rc, w, h, c, r, pad: f(rect_pts(rc, w, h), c, r, pad)
    return lambda c1, w1, h1, c2, w2, h2, pad: f(rect_pts(c1, w1, h1), rect_pts(c2, w2, h2), pad)


RECT_CASES = {
    "containsCircleRect": ([0.0, 1.0], 10.0, [1.0, 0.5], 4.0, 3.0, 1.0),
    "containsRectCircle": ([1.0, 0.5], 40.0, 30.0, [18.0, 2.0], 3.0, 1.0),
    "containsRects": ([1.0, 0.5], 40.0, 30.0, [18.0, 2.0], 6.0, 3.0, 1.0),
}


@pytest.mark.parametrize("name", sorted(GRADIENT_CASES) + sorted(RECT_CASES))
def test_constraint_gradient_matches_finite_differences(name: str) -> None:
    if name in RECT_CASES:
        check_gradient(with_rects(name), *RECT_CASES[name])
    else:
        check_gradient(C[name], *GRADIENT_CASES[name])


def test_every_constraint_has_a_gradient_case() -> None:
    assert set(GRADIENT_CASES) | set(RECT_CASES) == set(C)


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("disjoint", (CIRCLE, RECT, 1.0)),
        ("overlappingEllipses", GRADIENT_CASES["overlappingEllipses"]),
        ("containsPolys", GRADIENT_CASES["containsPolys"]),
        ("touching", GRADIENT_CASES["touching"]),
    ],
)
def test_wasm_agrees_with_the_interpreter(name: str, args: tuple) -> None:
    value, grad, flat = traced(C[name], args)
    assert adcore.compile(value)(flat) == pytest.approx(adcore.interp(value)(flat), rel=1e-12, abs=1e-12)
    assert adcore.compile(grad)(flat) == pytest.approx(adcore.interp(grad)(flat), rel=1e-9, abs=1e-12)


def test_disjoint_fallback_warns_but_still_traces() -> None:
    e = Shape("Ellipse", {"center": [0.0, 0.0], "rx": 5.0, "ry": 3.0, "strokeWidth": 0.0})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = C["disjoint"](e, RECT)
    assert any(issubclass(w.category, BBoxApproximationWarning) for w in caught)
    assert math.isfinite(value)
