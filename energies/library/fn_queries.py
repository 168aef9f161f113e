"""Geometric queries of Penrose's library: signed distances, ray intersections, closest points and
silhouette points, per shape kind and dispatched on a shape (Penrose's Functions.ts / Queries.ts).

Bounding boxes, shape-pair distances, `rectLineDist` and the polygon SDF come from the geometry
modules (`bbox`, `distance`, `polygons`); this module adds the point queries. "No hit" follows
Penrose: raw queries give infinite coordinates ([inf, inf] exactly here, where Penrose may also get
NaN), then the safe forms fall back to the query point (hit), a zero normal, or an infinite
distance. Scans over candidates keep Penrose's tie rule (see `fn_ops.first_minimum`).
"""

from __future__ import annotations

import math
from typing import Any

from . import bbox as _bbox
from . import pmath as am
from . import polygons as _polygons
from .bbox import polygon_like_points
from .fn_ops import (
    INF,
    Num,
    Points,
    Shape,
    ShapeList,
    Vector,
    and_,
    clamp,
    cross2,
    div,
    first_minimum,
    min_n,
    msign,
    not_,
    select,
    vabs,
    vadd,
    vdist,
    vdot,
    vmax,
    vmul,
    vnorm,
    vnormalize,
    vsub,
)
from .fn_ops import pt as _pt
from .fn_ops import rot90 as _rot90
from .geometry import RECTLIKE, prop
from .geometry import unsupported_kind as _kind_error
from .loops import array_of, written_as_loop

# -- signed distances -----------------------------------------------------------------------------------


def signedDistanceRect(rect: Points, pt: Vector) -> Num:
    """SDF of an axis-aligned box given by corners [tr, tl, bl, br]."""
    if len(rect) != 4:
        raise ValueError(f"signedDistanceRect expects 4 corner points, got {len(rect)}")
    tr, tl, bl = rect[0], rect[1], rect[2]
    center = vmul(0.5, vadd(tr, bl))
    half = [(tr[0] - tl[0]) / 2.0, (tl[1] - bl[1]) / 2.0]
    d = vsub(vabs(vsub(pt, center)), half)
    return vnorm(vmax(d, [0.0, 0.0])) + am.min(am.max(d[0], d[1]), 0.0)


def signedDistanceCircle(c: Vector, r: Num, pt: Vector) -> Num:
    return vnorm(vsub(pt, c)) - r


@written_as_loop
def signedDistancePolygon(pts: Points, pt: Vector) -> Num:
    long = array_of(pts) is not None  # a long list as one array: passed as it is
    return _polygons.signed_distance_polygon(pts if long else [_pt(p) for p in pts], _pt(pt))


def signedDistanceLine(start: Vector, end: Vector, pt: Vector) -> Num:
    """Distance to the segment (never negative)."""
    pa, ba = vsub(pt, start), vsub(end, start)
    h = clamp(0.0, 1.0, div(vdot(pa, ba), vdot(ba, ba)))
    return vnorm(vsub(pa, vmul(h, ba)))


def signedDistancePolyline(pts: Points, pt: Vector) -> Num:
    return min_n([signedDistanceLine(pts[i], pts[i + 1], pt) for i in range(len(pts) - 1)])


def signedDistanceEllipse(c: Vector, rx: Num, ry: Num, pt: Vector) -> Num:
    """Exact ellipse SDF by the closed-form root of the quartic (Inigo Quilez's method), written
    branch-free: both roots are computed and `select` keeps the valid one."""
    q = vabs(vsub(pt, c))
    swap = q[0] > q[1]
    p = [select(swap, q[1], q[0]), select(swap, q[0], q[1])]
    ab = [select(swap, ry, rx), select(swap, rx, ry)]
    l = ab[1] * ab[1] - ab[0] * ab[0]
    m = div(ab[0] * p[0], l)
    n = div(ab[1] * p[1], l)
    m2, n2 = m * m, n * n
    cc = (m2 + n2 - 1.0) / 3.0
    c3 = cc * cc * cc
    qq = c3 + m2 * (n2 * 2.0)
    d = c3 + m2 * n2
    g = m + m * n2
    # d < 0: three real roots, trigonometric form
    h_ang = am.acos(div(qq, c3)) / 3.0
    s_ang, t_ang = am.cos(h_ang) + 2.0, am.sin(h_ang) * math.sqrt(3.0)
    rx_in = am.sqrt(m2 - cc * (s_ang + t_ang))
    ry_in = am.sqrt(m2 - cc * (s_ang - t_ang))
    co_in = ry_in + am.sign(l) * rx_in + div(am.abs(g), rx_in * ry_in)
    # d >= 0: one real root, Cardano's form
    h = 2.0 * (m * (n * am.sqrt(d)))
    s = msign(qq + h) * am.pow(am.abs(qq + h), 1.0 / 3.0)
    t = msign(qq - h) * am.pow(am.abs(qq - h), 1.0 / 3.0)
    rx_out = -(s + t) - cc * 4.0 + 2.0 * m2
    ry_out = (s - t) * math.sqrt(3.0)
    rm = am.sqrt(rx_out * rx_out + ry_out * ry_out)
    co_out = div(ry_out, am.sqrt(rm - rx_out)) + 2.0 * div(g, rm)
    co = (select(d < 0.0, co_in, co_out) - m) / 2.0
    si = am.sqrt(am.max(1.0 - co * co, 0.0))
    r = [ab[0] * co, ab[1] * si]
    return vnorm(vsub(r, p)) * msign(p[1] - r[1])


def signedDistanceGroup(shapes: ShapeList, pt: Vector) -> Num:
    return min_n([signedDistance(s, pt) for s in shapes])


def signedDistance(shape: Shape, pt: Vector) -> Num:
    k = shape.kind
    if k in RECTLIKE:
        return signedDistanceRect(_bbox.bbox_pts(_bbox.bbox_of(shape)), pt)
    if k == "Circle":
        return signedDistanceCircle(_pt(prop(shape, "center")), prop(shape, "r"), pt)
    if k == "Polygon":
        return signedDistancePolygon(polygon_like_points(shape), pt)
    if k == "Line":
        return signedDistanceLine(_pt(prop(shape, "start")), _pt(prop(shape, "end")), pt)
    if k == "Polyline":
        return signedDistancePolyline(polygon_like_points(shape), pt)
    if k == "Group":
        return signedDistanceGroup(prop(shape, "shapes"), pt)
    raise _kind_error("signedDistance", shape)


# -- ray intersection: each raw query returns [hit point, unit normal] ---------------------------------


def _no_hit_unless(hit: Any, x: Vector) -> Vector:
    """x where `hit`, else [inf, inf]. Penrose forms p + inf * v, whose coordinates are inf or NaN
    (inf * 0); NaN would poison the nearest-hit scans, so a miss is exactly [inf, inf] here."""
    return [select(hit, x[0], INF), select(hit, x[1], INF)]


def _ray_circle(p: Vector, v: Vector, c: Vector, r: Num) -> list:
    w = vnormalize(v)
    u = vsub(p, c)
    b = -vdot(u, w)
    disc = b * b - (vdot(u, u) - r * r)
    root = am.sqrt(disc)
    t1 = select(disc < 0.0, INF, b - root)
    t2 = select(disc < 0.0, INF, b + root)
    t = select(t1 > 0.0, t1, select(t2 > 0.0, t2, INF))
    x = _no_hit_unless(t < INF, vadd(p, vmul(t, w)))
    return [x, vnormalize(vsub(x, c))]


def _ray_segment(p: Vector, v: Vector, a: Vector, b: Vector) -> list:
    """Solve p + t v = a + s (b - a); a hit needs t >= 0 and s in [0, 1] (NaN from parallel
    lines fails these tests, so it is a miss)."""
    u, w = vsub(b, a), vsub(p, a)
    d = cross2(v, u)
    s = div(cross2(v, w), d)
    t = div(cross2(u, w), d)
    hit = and_(and_(t >= 0.0, t < INF), and_(s >= 0.0, s <= 1.0))
    x = _no_hit_unless(hit, vadd(p, vmul(t, v)))
    n = vnormalize(_rot90(u))
    return [x, [select(hit, n[0], 0.0), select(hit, n[1], 0.0)]]


def _nearest_hit(hits: list, p: Vector, start_normal: Vector) -> list:
    """The hit closest to p among [point, normal] candidates (Penrose's scan)."""
    merged = first_minimum([(vdist(p, h[0]), [*h[0], *h[1]]) for h in hits], [INF, INF, *start_normal])
    return [merged[:2], merged[2:]]


def _ray_box(x0: Num, x1: Num, y0: Num, y1: Num, p: Vector, v: Vector) -> list:
    corners = [[x0, y0], [x1, y0], [x1, y1], [x0, y1], [x0, y0]]
    hits = [_ray_segment(p, v, corners[i], corners[i + 1]) for i in range(4)]
    return _nearest_hit(hits, p, [INF, INF])


def _ray_rect(rect: Points, p: Vector, v: Vector) -> list:
    tr, tl, bl = rect[0], rect[1], rect[2]
    return _ray_box(tl[0], tr[0], bl[1], tl[1], p, v)


def _ray_poly(points: Points, closed: bool, p: Vector, v: Vector) -> list:
    pts = [_pt(q) for q in points] + ([_pt(points[0])] if closed else [])
    hits = [_ray_segment(p, v, pts[i], pts[i + 1]) for i in range(len(pts) - 1)]
    return _nearest_hit(hits, p, [0.0, 0.0])


def _ray_ellipse(c: Vector, rx: Num, ry: Num, p: Vector, v: Vector) -> list:
    """Scale space so the ellipse is a unit circle, intersect, scale back; the normal is the
    gradient direction of the implicit ellipse."""
    hit = _ray_circle(
        [div(p[0], rx), div(p[1], ry)], [div(v[0], rx), div(v[1], ry)], [div(c[0], rx), div(c[1], ry)], 1.0
    )
    x = [hit[0][0] * rx, hit[0][1] * ry]
    n = vnormalize([div(ry, rx) * (x[0] - c[0]), div(rx, ry) * (x[1] - c[1])])
    return [x, n]


def _ray_shape(s: Shape, p: Vector, v: Vector) -> list:
    k = s.kind
    if k == "Circle":
        return _ray_circle(p, v, _pt(prop(s, "center")), prop(s, "r"))
    if k in RECTLIKE:
        c, w, h = _pt(prop(s, "center")), prop(s, "width"), prop(s, "height")
        return _ray_box(c[0] - w / 2.0, c[0] + w / 2.0, c[1] - h / 2.0, c[1] + h / 2.0, p, v)
    if k == "Line":
        return _ray_segment(p, v, _pt(prop(s, "start")), _pt(prop(s, "end")))
    if k in ("Polyline", "Polygon"):
        return _ray_poly(prop(s, "points"), k == "Polygon", p, v)
    if k == "Ellipse":
        return _ray_ellipse(_pt(prop(s, "center")), prop(s, "rx"), prop(s, "ry"), p, v)
    if k == "Group":
        return _ray_group(prop(s, "shapes"), p, v)
    raise _kind_error("rayIntersect", s)


def _ray_group(shapes: ShapeList, p: Vector, v: Vector) -> list:
    return _nearest_hit([_ray_shape(s, p, v) for s in shapes], p, [INF, INF])


def _missed(x: Vector) -> Any:
    """True when the hit point is not finite. Penrose tests for +-inf only; a miss can also give
    NaN (inf times a zero direction component), which we treat as the miss it is."""
    return not_(and_(am.abs(x[0]) < INF, am.abs(x[1]) < INF))


def _safe_hit(hit: list, p: Vector) -> Vector:
    x = hit[0]
    missed = _missed(x)
    return [select(missed, p[0], x[0]), select(missed, p[1], x[1])]


def _safe_normal(hit: list, p: Vector) -> Vector:
    """The normal turned to face p (zero when there is no hit)."""
    x, n = hit
    missed = _missed(x)
    facing = vdot(n, vsub(p, x)) < 0.0
    return [select(missed, 0.0, select(facing, -n[i], n[i])) for i in range(2)]


def _hit_distance(hit: list, p: Vector) -> Num:
    x = hit[0]
    return select(_missed(x), INF, vdist(p, x))


def rayIntersect(S: Shape, p: Vector, v: Vector) -> Vector:
    """Where the ray from p along v first meets S (p itself when it misses)."""
    return _safe_hit(_ray_shape(S, p, v), p)


def rayIntersectDistance(S: Shape, p: Vector, v: Vector) -> Num:
    return _hit_distance(_ray_shape(S, p, v), p)


def rayIntersectNormal(S: Shape, p: Vector, v: Vector) -> Vector:
    return _safe_normal(_ray_shape(S, p, v), p)


def rayIntersectCircle(c: Vector, r: Num, p: Vector, v: Vector) -> Vector:
    return _safe_hit(_ray_circle(p, v, c, r), p)


def rayIntersectCircleDistance(c: Vector, r: Num, p: Vector, v: Vector) -> Num:
    return _hit_distance(_ray_circle(p, v, c, r), p)


def rayIntersectNormalCircle(c: Vector, r: Num, p: Vector, v: Vector) -> Vector:
    return _safe_normal(_ray_circle(p, v, c, r), p)


def rayIntersectEllipse(c: Vector, rx: Num, ry: Num, p: Vector, v: Vector) -> Vector:
    return _safe_hit(_ray_ellipse(c, rx, ry, p, v), p)


def rayIntersectEllipseDistance(c: Vector, rx: Num, ry: Num, p: Vector, v: Vector) -> Num:
    return _hit_distance(_ray_ellipse(c, rx, ry, p, v), p)


def rayIntersectNormalEllipse(c: Vector, rx: Num, ry: Num, p: Vector, v: Vector) -> Vector:
    return _safe_normal(_ray_ellipse(c, rx, ry, p, v), p)


def rayIntersectLine(start: Vector, end: Vector, p: Vector, v: Vector) -> Vector:
    return _safe_hit(_ray_segment(p, v, start, end), p)


def rayIntersectLineDistance(start: Vector, end: Vector, p: Vector, v: Vector) -> Num:
    return _hit_distance(_ray_segment(p, v, start, end), p)


def rayIntersectNormalLine(start: Vector, end: Vector, p: Vector, v: Vector) -> Vector:
    return _safe_normal(_ray_segment(p, v, start, end), p)


def rayIntersectRect(rect: Points, p: Vector, v: Vector) -> Vector:
    return _safe_hit(_ray_rect(rect, p, v), p)


def rayIntersectRectDistance(rect: Points, p: Vector, v: Vector) -> Num:
    return _hit_distance(_ray_rect(rect, p, v), p)


def rayIntersectNormalRect(rect: Points, p: Vector, v: Vector) -> Vector:
    return _safe_normal(_ray_rect(rect, p, v), p)


def rayIntersectPoly(pts: Points, closed: bool, p: Vector, v: Vector) -> Vector:
    return _safe_hit(_ray_poly(pts, closed, p, v), p)


def rayIntersectPolyDistance(pts: Points, closed: bool, p: Vector, v: Vector) -> Num:
    return _hit_distance(_ray_poly(pts, closed, p, v), p)


def rayIntersectNormalPoly(pts: Points, closed: bool, p: Vector, v: Vector) -> Vector:
    return _safe_normal(_ray_poly(pts, closed, p, v), p)


def rayIntersectGroup(shapes: ShapeList, p: Vector, v: Vector) -> Vector:
    return _safe_hit(_ray_group(shapes, p, v), p)


def rayIntersectGroupDistance(shapes: ShapeList, p: Vector, v: Vector) -> Num:
    return _hit_distance(_ray_group(shapes, p, v), p)


def rayIntersectNormalGroup(shapes: ShapeList, p: Vector, v: Vector) -> Vector:
    return _safe_normal(_ray_group(shapes, p, v), p)
