"""Shape-level functions of Penrose's library backed by the geometry modules: bounding-box corners,
rectangle corners, shape-pair signed distances, `rectLineDist`, and clip data.

Clip data is the clipping shape itself, or None for Penrose's `noClip()` (as `energies.shapes`
stores a Group's `clipPath`).
"""

from __future__ import annotations

from . import bbox as _bbox
from . import distance as _distance
from . import polygons as _polygons
from .fn_ops import ClipData, Num, Points, Shape, Vector
from .geometry import RECTLIKE, ShapeQueryError, prop


def _pt(v: Vector) -> list:
    return [v[0], v[1]]


def _pts(ps: Points) -> list:
    return [_pt(p) for p in ps]


def bboxPts(s: Shape) -> Points:
    """Corners [topRight, topLeft, bottomLeft, bottomRight] of the shape's bounding box."""
    return _bbox.bbox_pts(_bbox.bbox_of(s))


def rectPts(s: Shape) -> Points:
    """Corners [tr, tl, bl, br] of a rectangle-like shape, turned by its rotation (degrees, clockwise)."""
    if s.kind not in RECTLIKE:
        raise ShapeQueryError(f"rectPts: expected a rectangle-like shape, got {s.kind}")
    rotation = s.props.get("rotation", 0.0)
    return _bbox.rect_pts(_pt(prop(s, "center")), prop(s, "width"), prop(s, "height"), rotation)


def rectLineDist(bottomLeft: Vector, topRight: Vector, start: Vector, end: Vector) -> Num:
    """Signed distance between the box [bottomLeft, topRight] and the segment start-end."""
    return _polygons.rect_line_dist(
        bottomLeft[0], bottomLeft[1], topRight[0], topRight[1], start[0], start[1], end[0], end[1]
    )


def shapeDistance(s1: Shape, s2: Shape) -> Num:
    return _distance.shape_distance(s1, s2)


def shapeDistanceCircles(c1: Vector, r1: Num, c2: Vector, r2: Num) -> Num:
    return _distance.distance_circles(_pt(c1), r1, _pt(c2), r2)


def shapeDistanceRects(rect1: Points, rect2: Points) -> Num:
    return _distance.distance_rects(_pts(rect1), _pts(rect2))


def shapeDistanceRectLine(rect: Points, start: Vector, end: Vector) -> Num:
    return _distance.distance_rect_line(_pts(rect), _pt(start), _pt(end))


def shapeDistanceRectlikePolyline(rect: Points, points: Points) -> Num:
    return _distance.distance_rect_polyline(_pts(rect), _pts(points))


def shapeDistancePolys(pts1: Points, pts2: Points) -> Num:
    return _distance.distance_polys(_pts(pts1), _pts(pts2))


def shapeDistanceRectCircle(rect: Points, c: Vector, r: Num) -> Num:
    return _distance.distance_rect_circle(_pts(rect), _pt(c), r)


def shapeDistancePolyEllipse(pts: Points, c: Vector, rx: Num, ry: Num) -> Num:
    return _distance.distance_poly_ellipse(_pts(pts), _pt(c), rx, ry)


def shapeDistanceCircleLine(c: Vector, r: Num, start: Vector, end: Vector) -> Num:
    return _distance.distance_circle_line(_pt(c), r, _pt(start), _pt(end))


def shapeDistanceLines(start1: Vector, end1: Vector, start2: Vector, end2: Vector) -> Num:
    return _distance.distance_lines(_pt(start1), _pt(end1), _pt(start2), _pt(end2))


def noClip() -> ClipData:
    return None


def clip(shape: Shape) -> ClipData:
    return shape
