"""Bounding boxes and shape-pair signed distances against densely sampled geometry (numpy)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import adcore
from adcore import Real, Vec, fn, interp
from energies.library import bbox as B
from energies.library.distance import BBoxApproximationWarning, shape_distance
from energies.library.ellipses import quartic_real_roots
from energies.library.geometry import GEOMETRIC_PROPS, ShapeQueryError
from energies.library.paths import PathCmd, concrete_path
from energies.library.polygons import convex_partition_indices, convex_partitions, signed_distance_polygon

from .support import (
    Shape,
    box_extent,
    check_gradient,
    circle_boundary,
    ellipse_boundary,
    extent,
    grid_minimum,
    inside_polygon,
    minkowski_signed_distance,
    polygon_boundary,
    rect_corners,
)


def circle(c, r, sw=0.0):
    return Shape("Circle", {"center": list(c), "r": r, "strokeWidth": sw})


def ellipse(c, rx, ry, sw=0.0):
    return Shape("Ellipse", {"center": list(c), "rx": rx, "ry": ry, "strokeWidth": sw})


def rect(c, w, h, rot=0.0, sw=0.0):
    return Shape(
        "Rectangle", {"center": list(c), "width": w, "height": h, "rotation": rot, "strokeWidth": sw}
    )


def text(c, w, h, rot=0.0, kind="Text"):
    return Shape(kind, {"center": list(c), "width": w, "height": h, "rotation": rot})


def line(s, e, sw=1.0):
    return Shape("Line", {"start": list(s), "end": list(e), "strokeWidth": sw})


def polygon(pts, kind="Polygon", scale=1.0):
    return Shape(kind, {"points": [list(p) for p in pts], "scale": scale})


def assert_box(box: dict, want: tuple[float, float, float, float], tol: float = 1e-3) -> None:
    assert box_extent(box) == pytest.approx(want, abs=tol)


# -- bounding boxes --------------------------------------------------------------------------------


def test_circle_and_ellipse_boxes_cover_the_stroke() -> None:
    assert_box(B.bbox_of(circle([3.0, -2.0], 10.0, 2.0)), extent(circle_boundary([3, -2], 11.0)))
    assert_box(B.bbox_of(ellipse([1.0, 2.0], 7.0, 3.0, 1.0)), extent(ellipse_boundary([1, 2], 7.5, 3.5)))


@pytest.mark.parametrize("rotation", [0.0, 30.0, -75.0, 200.0])
def test_rotated_rectangle_box_matches_its_sampled_outline(rotation: float) -> None:
    sampled = polygon_boundary(rect_corners([5, 1], 22.0, 12.0, rotation))  # stroke 2 grows both sides by 1
    assert_box(B.bbox_of(rect([5.0, 1.0], 20.0, 10.0, rotation, 2.0)), extent(sampled))


@pytest.mark.parametrize("kind", ["Text", "Equation", "Image"])
def test_rectlike_boxes_ignore_stroke_and_rotate(kind: str) -> None:
    sampled = polygon_boundary(rect_corners([0, 4], 30.0, 8.0, 40.0))
    assert_box(B.bbox_of(text([0.0, 4.0], 30.0, 8.0, 40.0, kind)), extent(sampled))


def test_line_box_is_its_stroked_segment() -> None:
    s, e, sw = np.array([-20.0, 3.0]), np.array([17.0, 9.0]), 4.0
    d = (e - s) / np.linalg.norm(e - s)
    n = np.array([-d[1], d[0]]) * sw / 2
    outline = polygon_boundary([s + n, e + n, e - n, s - n])
    # Penrose normalizes with |v| + 1e-5, so the stroke is a hair thinner than sw
    assert_box(B.bbox_of(line(s, e, sw)), extent(outline), tol=1e-5)


def test_polygon_and_polyline_boxes_use_scale() -> None:
    pts = [[0.0, 0.0], [20.0, 1.0], [18.0, 15.0], [2.0, -12.0]]
    for kind in ("Polygon", "Polyline"):
        assert_box(B.bbox_of(polygon(pts, kind, 0.5)), extent(0.5 * np.array(pts)))


def bezier(p0, p1, p2, p3=None, n=2000):
    t = np.linspace(0, 1, n)[:, None]
    p0, p1, p2 = map(np.asarray, (p0, p1, p2))
    if p3 is None:
        return (1 - t) ** 2 * p0 + 2 * (1 - t) * t * p1 + t**2 * p2
    p3 = np.asarray(p3)
    return (1 - t) ** 3 * p0 + 3 * (1 - t) ** 2 * t * p1 + 3 * (1 - t) * t**2 * p2 + t**3 * p3


def test_path_box_bounds_curves_by_their_control_points() -> None:
    d = [
        PathCmd("M", [[0.0, 0.0]]),
        PathCmd("Q", [[10.0, 20.0], [20.0, 0.0]]),
        PathCmd("T", [[40.0, 0.0]]),  # reflected control (30, -20)
        PathCmd("C", [[45.0, 5.0], [50.0, -30.0], [60.0, 0.0]]),
        PathCmd("S", [[80.0, 25.0], [90.0, 0.0]]),  # reflected first control (70, 30)
        PathCmd("L", [[90.0, -5.0]]),
        PathCmd("Z", []),
    ]
    box = B.bbox_of(Shape("Path", {"d": d}))
    controls = np.array(
        [[0, 0], [10, 20], [20, 0], [30, -20], [40, 0], [45, 5], [50, -30], [60, 0], [70, 30]]
    )
    controls = np.vstack([controls, [[80, 25], [90, 0], [90, -5]]])
    assert_box(box, extent(controls), tol=1e-9)
    curve = np.vstack([bezier([0, 0], [10, 20], [20, 0]), bezier([20, 0], [30, -20], [40, 0])])
    lo_x, lo_y, hi_x, hi_y = box_extent(box)
    assert (curve[:, 0] >= lo_x).all() and (curve[:, 1] <= hi_y).all() and (curve[:, 1] >= lo_y).all()


def test_path_arc_box_is_the_circle_of_its_major_radius() -> None:
    # a circular arc of radius 5 from (0, 0) to (8, 0): centers at (4, +-3); flags pick one of them
    for large, sweep in [(0.0, 0.0), (0.0, 1.0), (1.0, 0.0), (1.0, 1.0)]:
        d = [PathCmd("M", [[0.0, 0.0]]), PathCmd("A", [[5.0, 5.0, 0.0, large, sweep], [8.0, 0.0]])]
        box = box_extent(B.bbox_of(Shape("Path", {"d": d})))
        assert any(box == pytest.approx((4 - 5, cy - 5, 4 + 5, cy + 5), abs=1e-6) for cy in (3.0, -3.0))
    # radii too small to reach the end point are scaled up (SVG's rule): the circle has the chord as diameter
    d = [PathCmd("M", [[0.0, 0.0]]), PathCmd("A", [[1.0, 1.0, 0.0, 0.0, 1.0], [8.0, 0.0]])]
    assert box_extent(B.bbox_of(Shape("Path", {"d": d}))) == pytest.approx((0, -4, 8, 4), abs=1e-6)


def test_path_box_of_concrete_commands_and_bad_paths() -> None:
    d = concrete_path([PathCmd("M", [[1, 2]]), PathCmd("L", [[5, -3]])])  # as the renderer holds them
    assert box_extent(B.bbox_of(Shape("Path", {"d": d}))) == pytest.approx((1, -3, 5, 2))
    with pytest.raises(ShapeQueryError, match="start with M"):
        B.bbox_of(Shape("Path", {"d": [PathCmd("L", [[0.0, 0.0]])]}))
    with pytest.raises(ShapeQueryError, match="unsupported path command H"):
        B.bbox_of(Shape("Path", {"d": [PathCmd("M", [[0.0, 0.0]]), PathCmd("H", [[3.0]])]}))


def nested_group(depth: int) -> Shape:
    g = Shape("Group", {"shapes": [circle([0.0, 0.0], 1.0)], "clipPath": None})
    for k in range(1, depth + 1):
        members = [g, circle([3.0 * k, -2.0 * k], 1.0 + k), rect([-4.0 * k, k], 2.0, 3.0, 10.0 * k)]
        g = Shape("Group", {"shapes": members, "clipPath": None})
    return g


def group_points(g: Shape) -> np.ndarray:
    out = []
    for s in g.props["shapes"]:
        if s.kind == "Group":
            out.append(group_points(s))
        elif s.kind == "Circle":
            out.append(circle_boundary(s.props["center"], s.props["r"]))
        else:
            p = s.props
            out.append(polygon_boundary(rect_corners(p["center"], p["width"], p["height"], p["rotation"])))
    return np.vstack(out)


def test_group_box_is_the_union_of_nested_members_and_a_small_call_graph() -> None:
    g = nested_group(6)
    assert_box(B.bbox_of(g), extent(group_points(g)))
    f = fn([Real], Vec(4, Real), lambda t: box_list(B.bbox_of(scaled(g, t))))
    names = {h.name for h in adcore.ir.call_graph(f.ir)}
    # one function per kind plus the union, however deep the nesting: not one per member
    assert names <= {f.name, "bbox_circle", "bbox_rotated_rect", "bbox_union", "sin", "cos"}
    assert len(names) <= 6
    got = interp(f)(2.0)
    want = B.bbox_of(scaled(g, 2.0))
    assert got == pytest.approx(box_list(want), rel=1e-12)


def scaled(g: Shape, t):
    if g.kind == "Group":
        return Shape("Group", {"shapes": [scaled(s, t) for s in g.props["shapes"]], "clipPath": None})
    props = dict(g.props)
    props["center"] = [t * props["center"][0], props["center"][1]]
    return Shape(g.kind, props)


def box_list(b: dict) -> list:
    return [b["width"], b["height"], b["center"][0], b["center"][1]]


def test_group_box_is_cut_by_its_clip_path() -> None:
    members = [circle([0.0, 0.0], 10.0), circle([30.0, 0.0], 5.0)]
    g = Shape("Group", {"shapes": members, "clipPath": rect([20.0, 5.0], 20.0, 40.0)})
    assert_box(B.bbox_of(g), (10.0, -10.0, 30.0, 10.0), tol=1e-12)
    far = Shape("Group", {"shapes": members, "clipPath": rect([200.0, 5.0], 2.0, 2.0)})
    assert box_list(B.bbox_of(far)) == [0.0, 0.0, 0.0, 0.0]  # Penrose's empty intersection


def test_geometric_props_cover_every_kind_the_library_reads() -> None:
    from energies.shapes import SHAPE_TYPES

    assert set(GEOMETRIC_PROPS) == set(SHAPE_TYPES)
    for kind, props in GEOMETRIC_PROPS.items():
        assert set(props) <= set(SHAPE_TYPES[kind].props), kind


# -- signed distances between shapes ---------------------------------------------------------------


def outline(s: Shape) -> np.ndarray:
    """Dense boundary samples of a convex shape, as the distance functions see it."""
    p = s.props
    if s.kind == "Circle":
        return circle_boundary(p["center"], p["r"], 800)
    if s.kind == "Ellipse":
        return ellipse_boundary(p["center"], p["rx"], p["ry"], 800)
    if s.kind in ("Text", "Equation", "Image", "Rectangle"):
        # distances use the axis-aligned box of the (possibly rotated) shape, without stroke
        c = rect_corners(p["center"], p["width"], p["height"], p["rotation"])
        lo_x, lo_y, hi_x, hi_y = extent(c)
        return polygon_boundary([[hi_x, hi_y], [lo_x, hi_y], [lo_x, lo_y], [hi_x, lo_y]], 200)
    if s.kind == "Line":
        return polygon_boundary([p["start"], p["end"]], 200, closed=False)
    return polygon_boundary(p["points"], 200, closed=s.kind == "Polygon")


CONVEX_PAIRS = [
    ("circle-circle apart", circle([0, 0], 5.0), circle([13, 4], 3.0)),
    ("circle-circle overlap", circle([0, 0], 5.0), circle([4, 3], 3.0)),
    ("rect-rect apart", rect([0, 0], 10.0, 4.0), text([12, 9], 6.0, 2.0)),
    ("rect-rect overlap", rect([0, 0], 10.0, 4.0, 25.0), text([3, 1], 6.0, 2.0)),
    ("rect-line apart", text([0, 0], 10.0, 4.0), line([3, 8], [15, 4])),
    ("line-rect crossing", line([-9, -6], [8, 5]), rect([0, 0], 10.0, 4.0)),
    ("rect-circle corner", rect([0, 0], 10.0, 4.0), circle([9, 6], 2.0)),
    ("circle-rect inside", circle([1, 0.5], 1.0), text([0, 0], 10.0, 4.0, kind="Equation")),
    ("circle-line", circle([0, 0], 3.0), line([4, -5], [6, 7])),
    ("line-circle end", line([4, 1], [10, 1]), circle([0, 0], 3.0)),
    ("line-line apart", line([0, 0], [10, 2]), line([3, 5], [8, 12])),
    ("line-line crossing", line([0, 0], [10, 2]), line([3, -5], [6, 7])),
    ("polygon-polygon", polygon([[0, 0], [8, 1], [6, 7]]), polygon([[10, 2], [16, 3], [14, 9], [9, 8]])),
    (
        "polygon-polygon overlap",
        polygon([[0, 0], [8, 1], [6, 7]]),
        polygon([[5, 2], [16, 3], [14, 9], [9, 8]]),
    ),
    ("polyline-circle", polygon([[0, 0], [8, 1], [9, 9]], "Polyline"), circle([2, 6], 2.0)),
    ("circle-polyline", circle([20, 6], 2.0), polygon([[0, 0], [8, 1], [9, 9]], "Polyline")),
    ("polyline-rect", polygon([[0, 0], [8, 1], [9, 9]], "Polyline"), rect([15, 5], 4.0, 6.0)),
]


def polyline_to_convex_oracle(a: Shape, b: Shape) -> float:
    """Polyline distances are min over segments (each segment is convex)."""
    pl, other = (a, b) if a.kind == "Polyline" else (b, a)
    pts = pl.props["points"]
    segs = [polygon_boundary([pts[i], pts[i + 1]], 200, closed=False) for i in range(len(pts) - 1)]
    return min(minkowski_signed_distance(s, outline(other)) for s in segs)


@pytest.mark.parametrize(("label", "a", "b"), CONVEX_PAIRS, ids=[c[0] for c in CONVEX_PAIRS])
def test_shape_distance_matches_sampled_minkowski_difference(label: str, a: Shape, b: Shape) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every pair here has an exact formula
        got = shape_distance(a, b)
    if "Polyline" in (a.kind, b.kind) and {a.kind, b.kind} != {"Polyline", "Polygon"}:
        want = polyline_to_convex_oracle(a, b)
    else:
        want = minkowski_signed_distance(outline(a), outline(b))
    assert got == pytest.approx(want, abs=2e-3), label


def test_polygon_ellipse_distance_is_the_minimax_of_half_planes_and_ellipse() -> None:
    """Penrose's polygon-ellipse value: max over the polygon's sides of min over the plane of
    max(side's signed distance, ellipse's implicit function (rx ry ((x/rx)^2 + (y/ry)^2 - 1)))."""
    pts = np.array([[0, 0], [8, 1], [6, 7]], dtype=float)
    poly = polygon(pts.tolist())
    rx, ry = 5.0, 2.0
    for c in ([16.0, 3.0], [10.0, 4.0], [4.0, 3.0]):
        f = lambda X, Y, c=c: (ry / rx) * (X - c[0]) ** 2 + (rx / ry) * (Y - c[1]) ** 2 - rx * ry
        values = []
        for i in range(3):
            a, b = pts[i], pts[i - 1]
            n = np.array([-(b - a)[1], (b - a)[0]]) / np.linalg.norm(b - a)
            n = -n if np.dot(pts.mean(0) - a, n) > 0 else n
            h = lambda X, Y, n=n, a=a: n[0] * (X - a[0]) + n[1] * (Y - a[1])
            values.append(grid_minimum(lambda X, Y, h=h, f=f: np.maximum(f(X, Y), h(X, Y)), c, 40.0))
        e = ellipse(c, rx, ry)
        assert shape_distance(poly, e) == pytest.approx(max(values), abs=1e-4)
        assert shape_distance(e, poly) == pytest.approx(max(values), abs=1e-4)
    # the sign is the geometric truth: apart, overlapping, overlapping
    assert [shape_distance(poly, ellipse(c, rx, ry)) > 0 for c in ([16.0, 3.0], [10.0, 4.0], [4.0, 3.0])] == [
        True,
        False,
        False,
    ]


def test_unsupported_pairs_fall_back_to_boxes_with_a_warning() -> None:
    a, b = ellipse([0, 0], 5.0, 3.0), rect([12, 0], 4.0, 4.0)
    with pytest.warns(BBoxApproximationWarning, match=r"shapeDistance\(Ellipse, Rectangle\)"):
        got = shape_distance(a, b)
    assert got == pytest.approx(12 - 2 - 5, abs=1e-12)


@pytest.mark.parametrize(("label", "a", "b"), CONVEX_PAIRS[::3], ids=[c[0] for c in CONVEX_PAIRS[::3]])
def test_shape_distance_gradients_match_finite_differences(label: str, a: Shape, b: Shape) -> None:
    check_gradient(shape_distance, jitter(a), jitter(b))


def jitter(s: Shape) -> Shape:
    """Float copies of a shape's numbers, nudged off the ties of integer test data."""
    from .support import floats_in, rebuild

    def as_float(o):
        if isinstance(o, list):
            return [as_float(x) for x in o]
        return float(o) if isinstance(o, (int, float)) and not isinstance(o, bool) else o

    s = Shape(s.kind, {k: as_float(v) for k, v in s.props.items()})
    vals = floats_in(s)
    return rebuild(s, iter([v + 0.0137 * (i % 5) for i, v in enumerate(vals)]))


# -- polygons --------------------------------------------------------------------------------------


def test_convex_partition_of_a_concave_polygon_is_convex_and_covers_it() -> None:
    star = [
        [
            math.cos(k * math.pi / 5) * (10 if k % 2 == 0 else 4),
            math.sin(k * math.pi / 5) * (10 if k % 2 == 0 else 4),
        ]
        for k in range(10)
    ]
    pieces = convex_partition_indices(star)
    pts = np.array(star)
    area = 0.0
    for piece in pieces:
        p = pts[piece]
        e1, e2 = np.roll(p, -1, 0) - p, np.roll(p, -2, 0) - np.roll(p, -1, 0)
        assert (e1[:, 0] * e2[:, 1] - e1[:, 1] * e2[:, 0] >= -1e-9).all()  # convex, counterclockwise
        area += 0.5 * np.sum(p[:, 0] * np.roll(p[:, 1], -1) - np.roll(p[:, 0], -1) * p[:, 1])
    total = 0.5 * np.sum(pts[:, 0] * np.roll(pts[:, 1], -1) - np.roll(pts[:, 0], -1) * pts[:, 1])
    assert area == pytest.approx(total, rel=1e-12)
    assert 2 <= len(pieces) <= 8  # Hertel-Mehlhorn: at most 4x the optimum (5 for a star)
    assert len(convex_partitions(star)) == len(pieces)


def test_signed_distance_polygon_against_sampling() -> None:
    poly = [[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [5.0, 3.0], [0.0, 10.0]]  # concave
    boundary = polygon_boundary(poly, 2000)
    rng = np.random.default_rng(1)
    for p in rng.uniform(-3, 13, size=(25, 2)):
        d = np.sqrt(((boundary - p) ** 2).sum(1)).min()
        want = -d if inside_polygon(p[None, :], np.array(poly))[0] else d
        assert signed_distance_polygon(poly, list(p)) == pytest.approx(want, abs=1e-2)


def test_quartic_roots_match_numpy() -> None:
    rng = np.random.default_rng(7)
    for _ in range(40):
        roots = rng.normal(size=4) * rng.uniform(0.1, 5)
        kind = rng.integers(3)
        if kind == 1:  # one complex pair
            roots[2:] = [np.nan, np.nan]
            poly = np.poly(np.r_[roots[:2], [complex(0.7, 1.3), complex(0.7, -1.3)]]).real
        elif kind == 2:  # two complex pairs
            roots[:] = np.nan
            poly = np.poly([complex(1, 2), complex(1, -2), complex(-3, 0.5), complex(-3, -0.5)]).real
        else:
            poly = np.poly(roots)
        got = quartic_real_roots(poly[4], poly[3], poly[2], poly[1])
        want = sorted(np.where(np.isnan(roots), 0.0, roots))
        assert sorted(got) == pytest.approx(want, abs=1e-7 * max(1, np.nanmax(np.abs(np.r_[roots, 1]))))


def test_bbox_rejects_unknown_kinds_and_missing_props() -> None:
    with pytest.raises(ShapeQueryError, match="unknown shape kind Blob"):
        B.bbox_of(Shape("Blob", {}))
    with pytest.raises(ShapeQueryError, match="no property 'r'"):
        B.bbox_of(Shape("Circle", {"center": [0.0, 0.0], "strokeWidth": 1.0}))
