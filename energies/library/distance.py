"""Signed distance between two shapes, with Penrose's dispatch on shape kinds (lib/Queries.ts
shapeDistance): negative when they overlap. Pairs without an exact formula fall back to the distance
between bounding boxes and emit a `BBoxApproximationWarning` (Python's warnings machinery, so callers
can record it with `warnings.catch_warnings(record=True)`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

from . import pmath as am
from .bbox import bbox_of, bbox_pts, corners_extent, rectlike_corners
from .ellipses import overlapping_polygon_points_ellipse
from .fn_ops import (
    min_n,
    pt,
    vdist,
    vsub,
)
from .geometry import Pt, Scalar, is_polygonlike, is_rectlike, points_of, prop
from .lipschitz import lipschitz_fn, planar_move
from .polygons import (
    convex_partitions,
    overlapping_polygon_points,
    point_segment_distance,
    rect_line_dist,
    rectangle_difference,
    rectangle_signed_distance,
    signed_distance_polygon,
)


class BBoxApproximationWarning(UserWarning):
    """A shape query used axis-aligned bounding boxes because no exact formula exists for the pair."""


def warn_bbox(signature: str) -> None:
    warnings.warn(BBoxApproximationWarning(f"{signature}: approximated with bounding boxes"), stacklevel=3)


# -- pair formulas ---------------------------------------------------------------------------------


def distance_circles(c1: Pt, r1: Scalar, c2: Pt, r2: Scalar) -> Scalar:
    return vdist(c1, c2) - (r1 + r2)


def _rects_distance(v: Any) -> Scalar:
    """The signed distance between the boxes spanned by (v0, v1)-(v2, v3) and (v4, v5)-(v6, v7),
    two opposite corners each: the origin to their Minkowski difference."""
    rect1: list[Any] = [None, [v[0], v[1]], None, [v[2], v[3]]]  # rectangle_difference reads tl and br only
    rect2: list[Any] = [None, [v[4], v[5]], None, [v[6], v[7]]]
    bl, tr = rectangle_difference(rect1, rect2, 0.0)
    return rectangle_signed_distance(bl, tr)


def _rects_moves(half: Sequence[Scalar]) -> Scalar:
    """How far the Minkowski difference moves on a box: each box's edges by its corners' larger
    move in x and in y (the difference takes minima and maxima of every corner pairing, so the
    corners' order does not matter)."""
    first = planar_move(am.max(half[0], half[2]), am.max(half[1], half[3]))
    second = planar_move(am.max(half[4], half[6]), am.max(half[5], half[7]))
    return first + second


RECTS_DISTANCE = lipschitz_fn("rectsDistance", 8, _rects_distance, _rects_moves)


def distance_rects(rect1: Sequence[Pt], rect2: Sequence[Pt]) -> Scalar:
    """Penrose's rectangle distance (their corners [tr, tl, bl, br]): one call of the call graph,
    which carries its interval rule."""
    (tl1, br1), (tl2, br2) = (rect1[1], rect1[3]), (rect2[1], rect2[3])
    return RECTS_DISTANCE([tl1[0], tl1[1], br1[0], br1[1], tl2[0], tl2[1], br2[0], br2[1]])


def distance_rect_line(rect: Sequence[Pt], start: Pt, end: Pt) -> Scalar:
    x0, y0, x1, y1 = corners_extent(rect)
    return rect_line_dist(x0, y0, x1, y1, start[0], start[1], end[0], end[1])


def distance_rect_polyline(rect: Sequence[Pt], points: Sequence[Pt]) -> Scalar:
    tr, bl = rect[0], rect[2]
    out: Scalar = math.inf
    for a, b in zip(points, points[1:]):
        out = am.min(out, rect_line_dist(bl[0], bl[1], tr[0], tr[1], a[0], a[1], b[0], b[1]))
    return out


def distance_polys(pts1: Sequence[Pt], pts2: Sequence[Pt]) -> Scalar:
    return overlapping_polygon_points(pts1, pts2, 0.0)


def distance_rect_circle(rect: Sequence[Pt], c: Pt, r: Scalar) -> Scalar:
    x0, y0, x1, y1 = corners_extent(rect)
    hw, hh = (x1 - x0) * 0.5, (y1 - y0) * 0.5
    x, y = (x0 + x1) * 0.5 - c[0], (y0 + y1) * 0.5 - c[1]
    return rectangle_signed_distance([x - hw, y - hh], [x + hw, y + hh]) - r


def distance_poly_ellipse(pts: Sequence[Pt], c: Pt, rx: Scalar, ry: Scalar) -> Scalar:
    return min_n([overlapping_polygon_points_ellipse(p, c, rx, ry, 0.0) for p in convex_partitions(pts)])


def distance_circle_line(c: Pt, r: Scalar, start: Pt, end: Pt) -> Scalar:
    return point_segment_distance(c, start, end) - r


def distance_circle_polyline(c: Pt, r: Scalar, points: Sequence[Pt]) -> Scalar:
    out: Scalar = math.inf
    for a, b in zip(points, points[1:]):
        out = am.min(out, distance_circle_line(c, r, a, b))
    return out


def distance_lines(s1: Pt, e1: Pt, s2: Pt, e2: Pt) -> Scalar:
    """How far the Minkowski difference of the two segments is from containing the origin."""
    poly = [vsub(s1, s2), vsub(s1, e2), vsub(e1, e2), vsub(e1, s2)]
    return signed_distance_polygon(poly, [0.0, 0.0])


# -- dispatch --------------------------------------------------------------------------------------


def _center(s: Any) -> Pt:
    return pt(prop(s, "center", f"shapeDistance({s.kind})"))


def _ends(s: Any) -> tuple[Pt, Pt]:
    return pt(prop(s, "start")), pt(prop(s, "end"))


def shape_distance(s1: Any, s2: Any) -> Scalar:
    """Penrose's shapeDistance: signed distance between two shapes (<= 0 when they overlap)."""
    t1, t2 = s1.kind, s2.kind
    if t1 == "Circle" and t2 == "Circle":
        return distance_circles(_center(s1), prop(s1, "r"), _center(s2), prop(s2, "r"))
    if is_rectlike(s1) and is_rectlike(s2):
        return distance_rects(rectlike_corners(s1), rectlike_corners(s2))
    if is_rectlike(s1) and t2 == "Line":
        return distance_rect_line(rectlike_corners(s1), *_ends(s2))
    if t1 == "Line" and is_rectlike(s2):
        return distance_rect_line(rectlike_corners(s2), *_ends(s1))
    if is_polygonlike(s1) and is_polygonlike(s2):
        return distance_polys(points_of(s1), points_of(s2))
    if is_rectlike(s1) and t2 == "Circle":
        return distance_rect_circle(rectlike_corners(s1), _center(s2), prop(s2, "r"))
    if t1 == "Circle" and is_rectlike(s2):
        return distance_rect_circle(rectlike_corners(s2), _center(s1), prop(s1, "r"))
    if is_polygonlike(s1) and t2 == "Ellipse":
        return distance_poly_ellipse(points_of(s1), _center(s2), prop(s2, "rx"), prop(s2, "ry"))
    if t1 == "Ellipse" and is_polygonlike(s2):
        return distance_poly_ellipse(points_of(s2), _center(s1), prop(s1, "rx"), prop(s1, "ry"))
    if t1 == "Circle" and t2 == "Line":
        return distance_circle_line(_center(s1), prop(s1, "r"), *_ends(s2))
    if t1 == "Line" and t2 == "Circle":
        return distance_circle_line(_center(s2), prop(s2, "r"), *_ends(s1))
    if t1 == "Line" and t2 == "Line":
        return distance_lines(*_ends(s1), *_ends(s2))
    if t1 == "Polyline" and t2 == "Circle":
        return distance_circle_polyline(_center(s2), prop(s2, "r"), points_of(s1))
    if t1 == "Circle" and t2 == "Polyline":
        return distance_circle_polyline(_center(s1), prop(s1, "r"), points_of(s2))
    if t1 == "Polyline" and is_rectlike(s2):
        return distance_rect_polyline(bbox_pts(bbox_of(s2)), points_of(s1))
    if is_rectlike(s1) and t2 == "Polyline":
        return distance_rect_polyline(bbox_pts(bbox_of(s1)), points_of(s2))
    warn_bbox(f"shapeDistance({t1}, {t2})")
    return distance_rects(bbox_pts(bbox_of(s1)), bbox_pts(bbox_of(s2)))


__all__ = [
    "BBoxApproximationWarning",
    "distance_circle_line",
    "distance_circle_polyline",
    "distance_circles",
    "distance_lines",
    "distance_poly_ellipse",
    "distance_polys",
    "distance_rect_circle",
    "distance_rect_line",
    "distance_rect_polyline",
    "distance_rects",
    "shape_distance",
]
