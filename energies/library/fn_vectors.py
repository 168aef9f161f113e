"""Vectors and point constructions of Penrose's computed functions (norms, angles, triangle centers,
line marks).

Functions taking a `Line` read its `start` and `end` properties, as Penrose's `linePts`.
"""

from __future__ import annotations

from . import pmath as am
from .fn_ops import (
    Matrix,
    Num,
    Points,
    Shape,
    Vector,
    angle_between,
    angle_from,
    cross2,
    cross3,
    div,
    select,
    vadd,
    vdist,
    vdistsq,
    vdot,
    vmove,
    vmul,
    vneg,
    vnorm,
    vnormalize,
    vnormsq,
    vrot,
    vsub,
)
from .fn_ops import rot90 as _rot90


def line_points(s: Shape, what: str = "a Line") -> tuple[Vector, Vector]:
    """A line-like shape's [start, end] (Penrose's linePts)."""
    props = getattr(s, "props", None)
    if props is None or "start" not in props or "end" not in props:
        kind = getattr(s, "kind", type(s).__name__)
        raise ValueError(f"expected {what} (a shape with start and end), got {kind}")
    return list(props["start"]), list(props["end"])


def _pt(v: Vector) -> Vector:
    if len(v) != 2:
        raise ValueError(f"expected a 2D point, got {len(v)} components")
    return [v[0], v[1]]


# -- vectors --------------------------------------------------------------------------------------------


def dot(v: Vector, w: Vector) -> Num:
    return vdot(v, w)


def norm(v: Vector) -> Num:
    return vnorm(v)


def normsq(v: Vector) -> Num:
    return vnormsq(v)


def vdist_(v: Vector, w: Vector) -> Num:
    return vdist(v, w)


def vdistsq_(v: Vector, w: Vector) -> Num:
    return vdistsq(v, w)


def vmul_(s: Num, v: Vector) -> Vector:
    return vmul(s, v)


def unit(v: Vector) -> Vector:
    return vnormalize(v)


def normalize(v: Vector) -> Vector:
    return vnormalize(v)


def rot90(v: Vector) -> Vector:
    return _rot90(v)


def rotateBy(v: Vector, theta: Num) -> Vector:
    """v rotated clockwise by theta radians (Penrose's rotateBy turns the other way from vrot)."""
    x, y = _pt(v)
    c, s = am.cos(theta), am.sin(theta)
    return [c * x + s * y, -(s * x) + c * y]


def unitVector(theta: Num) -> Vector:
    return [am.cos(theta), am.sin(theta)]


def angleOf(v: Vector) -> Num:
    return am.atan2(v[1], v[0])


def angleBetween(u: Vector, v: Vector) -> Num:
    return angle_between(u, v)


def angleFrom(u: Vector, v: Vector) -> Num:
    return angle_from(u, v)


def cross2D(u: Vector, v: Vector) -> Num:
    return cross2(u, v)


def cross(u: Vector, v: Vector) -> Vector:
    return cross3(u, v)


def mul(m: Matrix, v: Vector) -> Vector:
    """Matrix times vector."""
    if not m:
        raise ValueError("mul: empty matrix")
    if not v:
        raise ValueError("mul: empty vector")
    return [vdot(row, v) for row in m]


def sumVectors(vecs: Points) -> Vector:
    if not vecs:
        raise ValueError("sumVectors expects a non-empty list of vectors")
    total = [0.0] * len(vecs[0])
    for v in vecs:
        total = vadd(total, list(v))
    return total


# -- points ---------------------------------------------------------------------------------------------


def midpoint(start: Vector, end: Vector) -> Vector:
    return vmul(0.5, vadd(start, end))


def ptOnLine(p1: Vector, p2: Vector, r: Num) -> Vector:
    """The point at distance r from p1 toward p2."""
    return vmove(p1, r, vnormalize(vsub(p2, p1)))


def lineLineIntersection(a0: Vector, a1: Vector, b0: Vector, b1: Vector) -> Vector:
    """Where line a0a1 meets line b0b1, by homogeneous coordinates (inf/NaN for parallel lines)."""
    la = cross3([a0[0], a0[1], 1.0], [a1[0], a1[1], 1.0])
    lb = cross3([b0[0], b0[1], 1.0], [b1[0], b1[1], 1.0])
    x = cross3(la, lb)
    return [div(x[0], x[2]), div(x[1], x[2])]


def firstPoint(points: Points) -> Vector:
    return list(points[0])


def lastPoint(points: Points) -> Vector:
    return list(points[-1])


def averagePoint(points: Points) -> Vector:
    return [c / float(len(points)) for c in sumVectors(points)]


def centerOfMass(points: Points) -> Vector:
    n = float(len(points))
    return [sum_of([p[0] for p in points]) / n, sum_of([p[1] for p in points]) / n]


def sum_of(xs: list) -> Num:
    total: Num = 0.0
    for x in xs:
        total = total + x
    return total


# -- triangle centers -----------------------------------------------------------------------------------


def _sides(p: Vector, q: Vector, r: Vector) -> tuple[Num, Num, Num]:
    """Lengths opposite p, q and r."""
    return vnorm(vsub(r, q)), vnorm(vsub(p, r)), vnorm(vsub(q, p))


def _weighted(wp: Num, p: Vector, wq: Num, q: Vector, wr: Num, r: Vector) -> Vector:
    return _pt(vadd(vadd(vmul(wp, p), vmul(wq, q)), vmul(wr, r)))


def barycenter(a: Vector, b: Vector, c: Vector) -> Vector:
    return _pt(vmul(1.0 / 3.0, vadd(a, vadd(b, c))))


def circumcenter(p: Vector, q: Vector, r: Vector) -> Vector:
    """Barycentric weights proportional to a^2 (b^2 + c^2 - a^2), written with edge dot products."""
    u, v, w = vsub(r, q), vsub(p, r), vsub(q, p)
    a, b, c = vnorm(u), vnorm(v), vnorm(w)
    hp = -(div(a, b * c) * vdot(w, v))
    hq = -(div(b, c * a) * vdot(u, w))
    hr = -(div(c, a * b) * vdot(v, u))
    total = hp + hq + hr
    return _weighted(div(hp, total), p, div(hq, total), q, div(hr, total), r)


def circumradius(p: Vector, q: Vector, r: Vector) -> Num:
    """abc / (4 area), the area by Heron's formula."""
    a, b, c = _sides(p, q, r)
    s = 0.5 * (a + b + c)
    return div(a * b * c, 4.0 * am.sqrt(s * (a + b - s) * (a + c - s) * (b + c - s)))


def incenter(p: Vector, q: Vector, r: Vector) -> Vector:
    a, b, c = _sides(p, q, r)
    s = a + b + c
    return _weighted(div(a, s), p, div(b, s), q, div(c, s), r)


def inradius(p: Vector, q: Vector, r: Vector) -> Num:
    a, b, c = _sides(p, q, r)
    s = 0.5 * (a + b + c)
    return am.sqrt(div((s - a) * (s - b) * (s - c), s))


# -- marks on lines -------------------------------------------------------------------------------------


def length(shape: Shape) -> Num:
    start, end = line_points(shape, "a Line for length")
    return vdist(start, end)


def midpointOffset(s1: Shape, padding: Num) -> Vector:
    start, end = line_points(s1)
    normal = _rot90(vnormalize(vsub(end, start)))
    return _pt(vmove(vmul(0.5, vadd(start, end)), padding, normal))


def chevron(s1: Shape, padding: Num) -> Points:
    """Three points of a chevron at the middle of a line, its arms `padding` long."""
    start, end = line_points(s1)
    d = vnormalize(vsub(end, start))
    center = vmul(0.5, vadd(start, end))
    return [
        _pt(vmove(center, padding, vrot(d, 135.0))),
        _pt(center),
        _pt(vmove(center, padding, vrot(d, 225.0))),
    ]


def unitMark(s1: Shape, s2: Shape, padding: Num) -> Points:
    """s1 moved by `padding` against the direction of s2."""
    start1, end1 = line_points(s1)
    start2, end2 = line_points(s2)
    against = vneg(vnormalize(vsub(end2, start2)))
    return [_pt(vmove(start1, padding, against)), _pt(vmove(end1, padding, against))]


def unitMark2(points: Points, t: str, size: Num) -> Points:
    """A tick of half-length `size` across the segment [start, end], at its start or its end."""
    if len(points) != 2:
        raise ValueError(f"unitMark2 expects [start, end], got {len(points)} points")
    start, end = list(points[0]), list(points[1])
    normal = _rot90(vnormalize(vsub(end, start)))
    base = start if t == "start" else end
    return [_pt(vmove(base, size, normal)), _pt(vmove(base, -size, normal))]


def arcSweepFlag(center: Vector, start: Vector, end: Vector) -> Num:
    """SVG's sweep flag for an arc about `center` from start to end: 0 when the turn is
    counterclockwise in diagram coordinates, else 1."""
    x1, y1 = center[0], center[1]
    st = vnormalize([start[0] - x1, start[1] - y1])
    en = vnormalize([end[0] - x1, end[1] - y1])
    return select(cross2(st, en) > 0.0, 0.0, 1.0)


def innerPointOffset(pt1: Vector, pt2: Vector, pt3: Vector, padding: Num) -> Vector:
    """A point near the corner pt1 of the angle pt2-pt1-pt3, offset `padding` along pt1->pt2 and
    `padding` to whichever side of that edge faces the inside of the angle (Penrose's test)."""
    along = vnormalize(vsub(pt2, pt1))
    normal = vneg(_rot90(along))
    ref = vmove(pt1, padding, along)
    plus = vmove(ref, padding, normal)
    minus = vmove(ref, padding, vneg(normal))
    end = vmove(pt1, padding, vnormalize(vsub(pt3, pt1)))
    into_end = vnormalize(vsub(plus, end))
    cond = vdot(along, into_end) > 0.95
    return [select(cond, plus[0], minus[0]), select(cond, plus[1], minus[1])]
