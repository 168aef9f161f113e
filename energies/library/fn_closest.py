"""Closest points and closest silhouette points of Penrose's library, per shape kind and dispatched.

A silhouette point of a shape, seen from p, is a boundary point where the line of sight from p
grazes the shape (a tangent point of a circle or ellipse, a corner whose two edges lie on the same
side of the sight line). Raw silhouette queries give [inf, inf] when there is none; the public ones
then return p itself (Penrose's safeCSP), and `closestSilhouetteDistance` returns inf.
"""

from __future__ import annotations

from adcore import or_

from . import bbox as _bbox
from . import pmath as am
from .fn_ops import (
    INF,
    Num,
    Points,
    Shape,
    ShapeList,
    Vector,
    clamp,
    cross2,
    div,
    eq,
    first_minimum,
    select,
    vadd,
    vdist,
    vdistsq,
    vmul,
    vnorm,
    vsub,
)
from .fn_ops import pt as _pt
from .geometry import RECTLIKE, prop
from .geometry import unsupported_kind as _kind_error

# -- closest points -------------------------------------------------------------------------------------


def closestPointCircle(c: Vector, r: Num, pt: Vector) -> Vector:
    offset = vsub(pt, c)
    n = vnorm(offset)
    return vadd(c, vmul(r, [div(offset[0], n), div(offset[1], n)]))


def closestPointLine(start: Vector, end: Vector, pt: Vector) -> Vector:
    ab = vsub(end, start)
    t = clamp(
        0.0, 1.0, div((pt[0] - start[0]) * ab[0] + (pt[1] - start[1]) * ab[1], ab[0] * ab[0] + ab[1] * ab[1])
    )
    return [start[0] + ab[0] * t, start[1] + ab[1] * t]


def closestPointRect(rect: Points, pt: Vector) -> Vector:
    """Clamp into the box, then push to the nearest side (corners [tr, tl, bl, br])."""
    tr, tl, bl = rect[0], rect[1], rect[2]
    left, bottom = tl[0], bl[1]
    right, top = left + (tr[0] - tl[0]), bottom + (tl[1] - bl[1])
    x, y = clamp(left, right, pt[0]), clamp(bottom, top, pt[1])
    dl, dr = am.abs(x - left), am.abs(x - right)
    db, dt = am.abs(y - bottom), am.abs(y - top)
    m = am.min(am.min(am.min(dl, dr), db), dt)
    rx = select(eq(m, dl), left, select(or_(eq(m, db), eq(m, dt)), x, right))
    ry = select(eq(m, dt), top, select(or_(eq(m, dl), eq(m, dr)), y, bottom))
    return [rx, ry]


def closestPointEllipse(c: Vector, rx: Num, ry: Num, pt: Vector) -> Vector:
    """Two Newton steps on the angle parameter t of (rx cos t, ry sin t), from the polar guess."""
    p = vsub(pt, c)
    a, b = rx, ry
    t = am.atan2(a * p[1], b * p[0])
    for _ in range(2):
        a2_b2 = a * a - b * b
        num = am.cos(t) * (b * p[1] + a2_b2 * am.sin(t)) - a * p[0] * am.sin(t)
        den = a2_b2 * am.cos(2.0 * t) - b * (p[1] * am.sin(t)) - a * (p[0] * am.cos(t))
        t = t - div(num, den)
    return vadd([a * am.cos(t), b * am.sin(t)], c)


def closestPointPoly(pts: Points, closed: bool, pt: Vector) -> Vector:
    ps = [_pt(q) for q in pts] + ([_pt(pts[0])] if closed else [])
    candidates = [closestPointLine(ps[i], ps[i + 1], pt) for i in range(len(ps) - 1)]
    return first_minimum([(vdist(pt, q), q) for q in candidates], [INF, INF])


def closestPoint(shape: Shape, p: Vector) -> Vector:
    k = shape.kind
    if k == "Circle":
        return closestPointCircle(_pt(prop(shape, "center")), prop(shape, "r"), p)
    if k in RECTLIKE:
        return closestPointRect(_bbox.bbox_pts(_bbox.bbox_rectlike(shape)), p)
    if k == "Line":
        return closestPointLine(_pt(prop(shape, "start")), _pt(prop(shape, "end")), p)
    if k in ("Polyline", "Polygon"):
        return closestPointPoly(prop(shape, "points"), k == "Polygon", p)
    if k == "Ellipse":
        return closestPointEllipse(_pt(prop(shape, "center")), prop(shape, "rx"), prop(shape, "ry"), p)
    if k == "Group":
        return closestPointGroup(prop(shape, "shapes"), p)
    raise _kind_error("closestPoint", shape)


def closestPointGroup(shapes: ShapeList, pt: Vector) -> Vector:
    candidates = [closestPoint(s, pt) for s in shapes]
    return first_minimum([(vdist(q, pt), q) for q in candidates], [INF, INF])


# -- silhouettes ----------------------------------------------------------------------------------------


def _silhouette_ellipse_coords(p0: Vector, a0: Num, b0: Num) -> Vector:
    """Tangent points from p0 to the origin-centered ellipse with radii a0, b0 (the nearer one)."""
    b = b0 / a0
    b2 = b * b
    x, y = p0[0] / a0, p0[1] / a0
    x2, y2 = x * x, y * y
    d = b2 * x2 + y2
    e = b2 * (x2 - 1.0) * y2 + y2 * y2
    f, g = b2 * x, b2 * y2
    root = am.sqrt(e)
    none = e < 0.0
    u = [select(none, INF, a0 * div(f - root, d)), select(none, INF, a0 * div(g + x * b2 * root, d * y))]
    v = [select(none, INF, a0 * div(f + root, d)), select(none, INF, a0 * div(g - x * b2 * root, d * y))]
    nearer = vdist(u, p0) < vdist(v, p0)
    return [select(nearer, u[0], v[0]), select(nearer, u[1], v[1])]


def _silhouette_corner(p: Vector, a: Vector, b: Vector, c: Vector) -> Vector:
    """b when p sees both edges ab and bc from the same side, else [inf, inf]."""
    s = cross2(vsub(b, a), vsub(p, a)) * cross2(vsub(c, b), vsub(p, b))
    return [select(s < 0.0, b[0], INF), select(s < 0.0, b[1], INF)]


def _silhouette_nearest(candidates: list, p: Vector) -> Vector:
    return first_minimum([(vdist(p, q), q) for q in candidates], [INF, INF])


def _raw_silhouette_circle(c: Vector, r: Num, p: Vector) -> Vector:
    return vadd(_silhouette_ellipse_coords(vsub(p, c), r, r), c)


def _raw_silhouette_ellipse(c: Vector, rx: Num, ry: Num, p: Vector) -> Vector:
    return vadd(_silhouette_ellipse_coords(vsub(p, c), rx, ry), c)


def _raw_silhouette_line(start: Vector, end: Vector, p: Vector) -> Vector:
    nearer = vdistsq(p, start) < vdistsq(p, end)
    return [select(nearer, start[0], end[0]), select(nearer, start[1], end[1])]


def _raw_silhouette_rect(rect: Points, p: Vector) -> Vector:
    tr, tl, bl = rect[0], rect[1], rect[2]
    x0, x1, y0, y1 = tl[0], tr[0], bl[1], tl[1]
    pts = [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]
    return _silhouette_nearest(
        [_silhouette_corner(p, pts[i], pts[(i + 1) % 4], pts[(i + 2) % 4]) for i in range(4)], p
    )


def _raw_silhouette_polyline(points: Points, p: Vector) -> Vector:
    pts = [_pt(q) for q in points]
    corners = [_silhouette_corner(p, pts[i], pts[i + 1], pts[i + 2]) for i in range(len(pts) - 2)]
    return _silhouette_nearest([*corners, pts[0], pts[-1]], p)


def _raw_silhouette_polygon(points: Points, p: Vector) -> Vector:
    pts = [_pt(q) for q in points]
    n = len(pts)
    return _silhouette_nearest(
        [_silhouette_corner(p, pts[i], pts[(i + 1) % n], pts[(i + 2) % n]) for i in range(n)], p
    )


def _raw_silhouette(s: Shape, p: Vector) -> Vector:
    k = s.kind
    if k == "Circle":
        return _raw_silhouette_circle(_pt(prop(s, "center")), prop(s, "r"), p)
    if k in RECTLIKE:
        return _raw_silhouette_rect(_bbox.rectlike_corners(s), p)
    if k == "Line":
        return _raw_silhouette_line(_pt(prop(s, "start")), _pt(prop(s, "end")), p)
    if k == "Polyline":
        return _raw_silhouette_polyline(prop(s, "points"), p)
    if k == "Polygon":
        return _raw_silhouette_polygon(prop(s, "points"), p)
    if k == "Ellipse":
        return _raw_silhouette_ellipse(_pt(prop(s, "center")), prop(s, "rx"), prop(s, "ry"), p)
    if k == "Group":
        return _silhouette_nearest([_raw_silhouette(m, p) for m in prop(s, "shapes")], p)
    raise _kind_error("closestSilhouettePoint", s)


def _safe(q: Vector, p: Vector) -> Vector:
    return [select(eq(q[0], INF), p[0], q[0]), select(eq(q[1], INF), p[1], q[1])]


def closestSilhouettePoint(s: Shape, p: Vector) -> Vector:
    return _safe(_raw_silhouette(s, p), p)


def closestSilhouettePointCircle(c: Vector, r: Num, p: Vector) -> Vector:
    return _safe(_raw_silhouette_circle(c, r, p), p)


def closestSilhouettePointEllipse(c: Vector, rx: Num, ry: Num, p: Vector) -> Vector:
    """Penrose returns the closest point of the ellipse here (not a tangent point); kept as is."""
    return _safe(closestPointEllipse(c, rx, ry, p), p)


def closestSilhouettePointLine(start: Vector, end: Vector, p: Vector) -> Vector:
    return _safe(_raw_silhouette_line(start, end, p), p)


def closestSilhouettePointRect(rect: Points, p: Vector) -> Vector:
    return _safe(_raw_silhouette_rect(rect, p), p)


def closestSilhouettePointPolyline(points: Points, p: Vector) -> Vector:
    return _safe(_raw_silhouette_polyline(points, p), p)


def closestSilhouettePointPolygon(points: Points, p: Vector) -> Vector:
    return _safe(_raw_silhouette_polygon(points, p), p)


def closestSilhouettePointGroup(shapes: ShapeList, p: Vector) -> Vector:
    return _safe(_silhouette_nearest([_raw_silhouette(m, p) for m in shapes], p), p)


def closestSilhouetteDistance(s: Shape, p: Vector) -> Num:
    q = _raw_silhouette(s, p)
    return select(eq(q[0], INF), INF, vdist(p, q))
