"""Penrose's constraint dictionary (lib/Constraints.ts and the curve constraints of lib/Curves.ts).

Each entry takes Penrose's arguments in Penrose's order, with Penrose's defaults, and returns a scalar
that is <= 0 exactly when the constraint holds. All are polymorphic macros (docs/energies-design.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from adcore import and_, or_, select

from . import pmath as am
from .bbox import (
    bbox_from_points,
    bbox_of,
    bbox_pts,
    max_x,
    max_y,
    min_x,
    min_y,
    polygon_like_points,
    x_range,
    y_range,
)
from .distance import BBoxApproximationWarning, shape_distance, warn_bbox
from .ellipses import PI_OVER_3, circle_to_implicit, ellipse_to_implicit, overlapping_implicit_ellipses
from .fn_ops import (
    add_n,
    angle_from,
    consecutive_pairs,
    consecutive_triples,
    cross2,
    div,
    max_n,
    min_n,
    pt,
    relu,
    sqr,
    vdist,
    vdot,
    vsub,
)
from .geometry import Pt, Scalar, ShapeQueryError, is_rectlike, prop
from .loops import chain, total
from .pmath import sqrt
from .polygons import contains_convex_polygon_points, convex_partitions

# -- scalars ---------------------------------------------------------------------------------------


def equal(x: Scalar, y: Scalar) -> Scalar:
    return am.abs(x - y)


def less_than(x: Scalar, y: Scalar, padding: Scalar = 0.0) -> Scalar:
    return x - y + padding


def greater_than(x: Scalar, y: Scalar, padding: Scalar = 0.0) -> Scalar:
    return y - x + padding


def less_than_sq(x: Scalar, y: Scalar) -> Scalar:
    return select(x < y, 0.0, sqr(x - y))


def greater_than_sq(x: Scalar, y: Scalar) -> Scalar:
    return select(y < x, 0.0, sqr(y - x))


def in_range(x: Scalar, x0: Scalar, x1: Scalar) -> Scalar:
    return select(x < x1, 0.0, x - x1) + select(x0 < x, 0.0, x0 - x)


def contains_1d(interval1: Sequence[Scalar], interval2: Sequence[Scalar]) -> Scalar:
    """[l1, r1] contains [l2, r2]."""
    l1, r1 = interval1[0], interval1[1]
    l2, r2 = interval2[0], interval2[1]
    return am.max(0.0, l1 - l2) + am.max(0.0, r2 - r1)


def disjoint_scalar(c: Scalar, left: Scalar, right: Scalar) -> Scalar:
    inside = and_(c > left, c < right)
    return select(inside, am.min(am.abs(c - left), am.abs(c - right)), 0.0)


def perpendicular(q: Sequence[Scalar], p: Sequence[Scalar], r: Sequence[Scalar]) -> Scalar:
    return am.abs(vdot(vsub(q, p), vsub(r, p)))


def collinear(c1: Sequence[Scalar], c2: Sequence[Scalar], c3: Sequence[Scalar]) -> Scalar:
    return am.abs(cross2(vsub(c2, c1), vsub(c2, c3)))


def collinear_ordered(c1: Sequence[Scalar], c2: Sequence[Scalar], c3: Sequence[Scalar]) -> Scalar:
    """Triangle inequality: |c1 c2| + |c2 c3| <= |c1 c3| only when c2 lies between c1 and c3."""
    return am.max(0.0, vdist(c1, c2) + vdist(c2, c3) - vdist(c1, c3))


# -- shapes ----------------------------------------------------------------------------------------


def on_canvas(shape: Any, canvas_width: Scalar, canvas_height: Scalar) -> Scalar:
    box = bbox_of(shape)
    xs = [canvas_width * -0.5, canvas_width * 0.5]
    ys = [canvas_height * -0.5, canvas_height * 0.5]
    return contains_1d(xs, x_range(box)) + contains_1d(ys, y_range(box))


def overlapping(s1: Any, s2: Any, overlap: Scalar = 0.0) -> Scalar:
    return shape_distance(s1, s2) + overlap


def overlapping_ellipses(
    c1: Pt, rx1: Scalar, ry1: Scalar, c2: Pt, rx2: Scalar, ry2: Scalar, overlap: Scalar = 0.0
) -> Scalar:
    factor = div(1.0, 1.0 + vdist(c1, c2))
    e1 = ellipse_to_implicit(pt(c1), rx1, ry1, -overlap, PI_OVER_3 * factor)
    e2 = ellipse_to_implicit(pt(c2), rx2, ry2, 0.0, factor)
    return overlapping_implicit_ellipses(e1, e2)


def overlapping_circle_ellipse(
    c1: Pt, r1: Scalar, c2: Pt, rx2: Scalar, ry2: Scalar, overlap: Scalar = 0.0
) -> Scalar:
    factor = div(1.0, 1.0 + vdist(c1, c2))
    e1 = circle_to_implicit(pt(c1), r1, -overlap, PI_OVER_3 * factor)
    e2 = ellipse_to_implicit(pt(c2), rx2, ry2, 0.0, factor)
    return overlapping_implicit_ellipses(e1, e2)


def disjoint(s1: Any, s2: Any, padding: Scalar = 0.0) -> Scalar:
    return -overlapping(s1, s2, -padding)


def touching(s1: Any, s2: Any, padding: Scalar = 0.0) -> Scalar:
    return am.abs(overlapping(s1, s2, -padding))


def contains_circles(c1: Pt, r1: Scalar, c2: Pt, r2: Scalar, padding: Scalar = 0.0) -> Scalar:
    return vdist(c1, c2) - (r1 - r2 - padding)


def contains_poly_point(pts: Sequence[Pt], point: Pt, padding: Scalar = 0.0) -> Scalar:
    return max_n([contains_convex_polygon_points(p, pt(point), padding) for p in convex_partitions(pts)])


def contains_polys(pts1: Sequence[Pt], pts2: Sequence[Pt], padding: Scalar = 0.0) -> Scalar:
    return max_n([contains_poly_point(pts1, p, padding) for p in pts2])


def contains_poly_circle(pts: Sequence[Pt], c: Pt, r: Scalar, padding: Scalar = 0.0) -> Scalar:
    return contains_poly_point(pts, c, padding + r)


def contains_circle_point(c: Pt, r: Scalar, point: Pt, padding: Scalar = 0.0) -> Scalar:
    return vdist(point, c) + padding - r


def contains_circle_poly(c: Pt, r: Scalar, pts: Sequence[Pt], padding: Scalar = 0.0) -> Scalar:
    return max_n([contains_circle_point(c, r, p, padding) for p in pts])


def _check_rect(rect: Sequence[Any], name: str) -> None:
    if len(rect) != 4:
        raise ShapeQueryError(f"{name}: a rectangle must be a list of four 2D points [tr, tl, bl, br]")


def contains_circle_rect(c: Pt, r: Scalar, rect: Sequence[Pt], padding: Scalar = 0.0) -> Scalar:
    """Penrose's (admittedly crude) version: the rectangle counts as a circle of radius max(w, h) at its
    center, and the padding is ignored."""
    _check_rect(rect, "containsCircleRect")
    box = bbox_from_points([pt(p) for p in rect])
    return contains_circles(c, r, box["center"], am.max(box["width"], box["height"]), 0.0)


def contains_rect_circle(rect: Sequence[Pt], c: Pt, r: Scalar, padding: Scalar = 0.0) -> Scalar:
    _check_rect(rect, "containsRectCircle")
    tl, br = rect[1], rect[3]
    half_w, half_h = (br[0] - tl[0]) * 0.5, (tl[1] - br[1]) * 0.5
    rx, ry = (tl[0] + br[0]) * 0.5, (tl[1] + br[1]) * 0.5
    return am.max(
        am.abs(c[0] - rx) - (half_w - r - padding),
        am.abs(c[1] - ry) - (half_h - r - padding),
    )


def contains_rects(rect1: Sequence[Pt], rect2: Sequence[Pt], padding: Scalar = 0.0) -> Scalar:
    _check_rect(rect1, "containsRects")
    _check_rect(rect2, "containsRects")
    tl1, br1, tl2, br2 = rect1[1], rect1[3], rect2[1], rect2[3]
    xl1, xr1, yl1, yr1 = tl1[0], br1[0], br1[1], tl1[1]
    xl2, xr2, yl2, yr2 = tl2[0], br2[0], br2[1], tl2[1]
    return add_n(
        [
            select(xl1 < xl2 - padding, 0.0, sqr(xl1 - (xl2 - padding))),
            select(xr2 + padding < xr1, 0.0, sqr(xr2 + padding - xr1)),
            select(yl1 < yl2 - padding, 0.0, sqr(yl1 - (yl2 - padding))),
            select(yr2 + padding < yr1, 0.0, sqr(yr2 + padding - yr1)),
        ]
    )


def and_constraint(*xs: Scalar) -> Scalar:
    """Penrose's andConstraint: sqrt(sum relu(x)^2), <= 0 iff every x is."""
    return sqrt(add_n([sqr(relu(x)) for x in xs]))


def _center(s: Any) -> Pt:
    return pt(prop(s, "center", f"contains({s.kind})"))


def contains(s1: Any, s2: Any, padding: Scalar = 0.0) -> Scalar:
    """Shape s1 contains shape s2, dispatched on their kinds as Penrose does."""
    t1, t2 = s1.kind, s2.kind
    if t1 == "Circle" and t2 == "Circle":
        return contains_circles(_center(s1), prop(s1, "r"), _center(s2), prop(s2, "r"), padding)
    if t1 == "Polygon" and t2 == "Polygon":
        return contains_polys(polygon_like_points(s1), polygon_like_points(s2), padding)
    if t1 == "Polygon" and t2 == "Circle":
        return contains_poly_circle(polygon_like_points(s1), _center(s2), prop(s2, "r"), padding)
    if t1 == "Circle" and t2 == "Polygon":
        return contains_circle_poly(_center(s1), prop(s1, "r"), polygon_like_points(s2), padding)
    if t1 == "Circle" and is_rectlike(s2):
        return contains_circle_rect(_center(s1), prop(s1, "r"), bbox_pts(bbox_of(s2)), padding)
    if is_rectlike(s1) and t2 == "Circle":
        return contains_rect_circle(bbox_pts(bbox_of(s1)), _center(s2), prop(s2, "r"), padding)
    if t1 == "Group":
        return _contains_group_shape(s1, s2, padding)
    if is_rectlike(s1) and is_rectlike(s2):
        return contains_rects(bbox_pts(bbox_of(s1)), bbox_pts(bbox_of(s2)), padding)
    warn_bbox(f"contains({t1}, {t2})")
    return contains_rects(bbox_pts(bbox_of(s1)), bbox_pts(bbox_of(s2)), padding)


def _contains_group_shape(group: Any, s2: Any, padding: Scalar) -> Scalar:
    """Some member contains s2 (and, with a clip path, the clip shape contains it too)."""
    members = list(prop(group, "shapes", "contains(Group)"))
    if not members:
        raise ShapeQueryError("contains: the Group has no shapes")
    some = min_n([contains(m, s2, padding) for m in members])
    clip = group.props.get("clipPath")
    if clip is None or not hasattr(clip, "kind"):
        return some
    return and_constraint(some, contains(clip, s2))  # Penrose checks the clip without padding


def distribute_horizontally(
    shapes: Sequence[Any], padding: Scalar = 0.0, left_to_right: bool = True
) -> Scalar:
    ordered = list(shapes) if left_to_right else list(reversed(shapes))
    boxes = [bbox_of(s) for s in ordered]
    # Penrose sums these from 0 in a loop, not with addN (fn_ops' summation order)
    return add_n([0.0, *(am.abs(max_x(a) + padding - min_x(b)) for a, b in zip(boxes, boxes[1:]))])


def distribute_vertically(shapes: Sequence[Any], padding: Scalar = 0.0, top_to_bottom: bool = True) -> Scalar:
    ordered = list(reversed(shapes)) if top_to_bottom else list(shapes)
    boxes = [bbox_of(s) for s in ordered]
    # Penrose sums these from 0 in a loop, not with addN (fn_ops' summation order)
    return add_n([0.0, *(am.abs(max_y(a) + padding - min_y(b)) for a, b in zip(boxes, boxes[1:]))])


def overlap_1d(interval1: Sequence[Scalar], interval2: Sequence[Scalar]) -> Scalar:
    """Length of the overlap of two intervals given as [l, r] (0 when disjoint)."""
    l1, r1, l2, r2 = interval1[0], interval1[1], interval2[0], interval2[1]
    apart = or_(r1 < l2, r2 < l1)
    return select(apart, 0.0, am.min(am.abs(l2 - r1), am.abs(l1 - r2)))


def disjoint_intervals(s1: Any, s2: Any) -> Scalar:
    """Two horizontal Lines sharing a y-coordinate have disjoint x-intervals."""
    for s in (s1, s2):
        if s.kind != "Line":
            raise ShapeQueryError(f"disjointIntervals expects two Lines, got a {s.kind}")
    return overlap_1d([prop(s1, "start")[0], prop(s1, "end")[0]], [prop(s2, "start")[0], prop(s2, "end")[0]])


# -- curves (points of a polygonal chain, `closed` says whether it wraps around) -------------------


def _turning_angle(a: Pt, b: Pt, c: Pt) -> Scalar:
    return angle_from(vsub(b, a), vsub(c, b))


def _turning_angles(points: Sequence[Pt], closed: bool) -> list[Scalar]:
    return [_turning_angle(a, b, c) for a, b, c in consecutive_triples(list(points), closed)]


def _equivalued_terms(m: int, term: Any) -> Scalar:
    """equivalued of term(0), ..., term(m-1) by two loops (the terms are recomputed)."""
    mean = total(m, term) / float(m)
    return total(m, lambda i: sqr(term(i) - mean))


def equivalued(xs: Sequence[Scalar]) -> Scalar:
    """Sum of squared deviations from the mean (0 iff all equal)."""
    mean = add_n(xs) / float(len(xs))
    return add_n([sqr(x - mean) for x in xs])


def is_locally_convex(points: Sequence[Pt], closed: bool) -> Scalar:
    loop = chain(points, closed, 3, _turning_angle)
    if loop is not None:
        m, angle = loop
        mean_sign = am.sign(total(m, angle))
        return total(m, lambda i: (lambda a: select(mean_sign * a <= 0.0, sqr(a), 0.0))(angle(i)))
    angles = _turning_angles(points, closed)
    mean_sign = am.sign(add_n(angles))
    return add_n([select(mean_sign * a <= 0.0, sqr(a), 0.0) for a in angles])


def turning_number(points: Sequence[Pt], closed: bool) -> Scalar:
    loop = chain(points, closed, 3, _turning_angle)
    if loop is not None:
        return total(*loop) / (2.0 * math.pi)
    return add_n(_turning_angles(points, closed)) / (2.0 * math.pi)


def is_convex(points: Sequence[Pt], closed: bool) -> Scalar:
    return is_locally_convex(points, closed) + sqr(am.abs(turning_number(points, closed)) - 1.0)


def is_equilateral(points: Sequence[Pt], closed: bool) -> Scalar:
    loop = chain(points, closed, 2, vdist)
    if loop is not None:
        return _equivalued_terms(*loop)
    return equivalued([vdist(a, b) for a, b in consecutive_pairs(list(points), closed)])


def is_equiangular(points: Sequence[Pt], closed: bool) -> Scalar:
    loop = chain(points, closed, 3, _turning_angle)
    if loop is not None:
        return _equivalued_terms(*loop)
    return equivalued(_turning_angles(points, closed))


CONSTRAINTS: dict[str, Callable[..., Scalar]] = {
    "equal": equal,
    "lessThan": less_than,
    "greaterThan": greater_than,
    "lessThanSq": less_than_sq,
    "greaterThanSq": greater_than_sq,
    "inRange": in_range,
    "contains1D": contains_1d,
    "disjointScalar": disjoint_scalar,
    "perpendicular": perpendicular,
    "collinear": collinear,
    "collinearOrdered": collinear_ordered,
    "onCanvas": on_canvas,
    "overlapping": overlapping,
    "overlappingEllipses": overlapping_ellipses,
    "overlappingCircleEllipse": overlapping_circle_ellipse,
    "disjoint": disjoint,
    "touching": touching,
    "contains": contains,
    "containsCircles": contains_circles,
    "containsPolys": contains_polys,
    "containsPolyCircle": contains_poly_circle,
    "containsPolyPoint": contains_poly_point,
    "containsCirclePoint": contains_circle_point,
    "containsCirclePoly": contains_circle_poly,
    "containsCircleRect": contains_circle_rect,
    "containsRectCircle": contains_rect_circle,
    "containsRects": contains_rects,
    "distributeHorizontally": distribute_horizontally,
    "distributeVertically": distribute_vertically,
    "disjointIntervals": disjoint_intervals,
    "isLocallyConvex": is_locally_convex,
    "isConvex": is_convex,
    "isEquilateral": is_equilateral,
    "isEquiangular": is_equiangular,
}

__all__ = ["CONSTRAINTS", "BBoxApproximationWarning", "and_constraint", "equivalued", "overlap_1d"]
