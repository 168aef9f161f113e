"""Path-valued computed functions of Penrose (`pathFromPoints`, `arc`, `interpolatingSpline`...).

They return path data in the convention of `energies.library.paths`. `pathType` arguments are the
strings "open" or "closed" ("closed" appends a Z). Counts that shape a path (number of points,
`nSides`, `repeat`, `numTicks`) are static.
"""

from __future__ import annotations

import math

from . import pmath as am
from .fn_math import static_count
from .fn_ops import (
    Num,
    PathData,
    PathList,
    Points,
    Shape,
    Vector,
    select,
    vadd,
    vdist,
    vmove,
    vmul,
    vneg,
    vnormalize,
    vsub,
)
from .fn_ops import rot90 as _rot90
from .fn_vectors import line_points
from .paths import PathBuilder, concat_paths, line_from


def _closed(pathType: str, fn: str) -> bool:
    if pathType not in ("open", "closed"):
        raise ValueError(f'{fn}: pathType must be "open" or "closed", got {pathType!r}')
    return pathType == "closed"


def _points(pts: Points, at_least: int, fn: str) -> list[list]:
    if len(pts) < at_least:
        raise ValueError(f"{fn} needs at least {at_least} points, got {len(pts)}")
    return [list(p) for p in pts]


def makePath(start: Vector, end: Vector, curveHeight: Num, padding: Num) -> PathData:
    """A quadratic curve from start to end bulging `curveHeight` sideways, both ends pulled in by
    `padding`."""
    u = vnormalize(vsub(start, end))
    normal = _rot90(u)
    half = vdist(start, end) / 2.0
    control = vmove(vmove(end, half, u), curveHeight, normal)
    return (
        PathBuilder()
        .move_to(vmove(start, padding, vneg(u)))
        .quadratic_to(control, vmove(end, padding, u))
        .path()
    )


def pathFromPoints(pathType: str, pts: Points) -> PathData:
    closed = _closed(pathType, "pathFromPoints")
    pts = _points(pts, 1, "pathFromPoints")
    b = PathBuilder().move_to(pts[0])
    for p in pts[1:]:
        b.line_to(p)
    return b.close().path() if closed else b.path()


def quadraticCurveFromPoints(pathType: str, pts: Points) -> PathData:
    """M p0 Q p1 p2, then T through every further point."""
    closed = _closed(pathType, "quadraticCurveFromPoints")
    pts = _points(pts, 3, "quadraticCurveFromPoints")
    b = PathBuilder().move_to(pts[0]).quadratic_to(pts[1], pts[2])
    for p in pts[3:]:
        b.quadratic_join(p)
    return b.close().path() if closed else b.path()


def interpolateQuadraticFromPoints(pathType: str, p0: Vector, p1: Vector, p2: Vector) -> PathData:
    """The quadratic Bezier from p0 to p2 that passes through p1 (at t = 1/2)."""
    closed = _closed(pathType, "interpolateQuadraticFromPoints")
    control = vsub(vmul(2.0, p1), vmul(0.5, vadd(p0, p2)))
    b = PathBuilder().move_to(p0).quadratic_to(control, p2)
    return b.close().path() if closed else b.path()


def cubicCurveFromPoints(pathType: str, pts: Points) -> PathData:
    """M p0 C p1 p2 p3, then S with each further (control, point) pair."""
    closed = _closed(pathType, "cubicCurveFromPoints")
    pts = _points(pts, 4, "cubicCurveFromPoints")
    b = PathBuilder().move_to(pts[0]).cubic_to(pts[1], pts[2], pts[3])
    tail = pts[4:]
    if len(tail) % 2:
        raise ValueError(
            "cubicCurveFromPoints: after the first 4 points, points come in (control, end) pairs"
        )
    for k in range(0, len(tail), 2):
        b.cubic_join(tail[k], tail[k + 1])
    return b.close().path() if closed else b.path()


def connectPaths(pathType: str, pathDataList: PathList) -> PathData:
    """Paths joined by straight lines (each next path's first move becomes a line); "closed" also
    lines back to the very first point."""
    closed = _closed(pathType, "connectPaths")
    return concat_paths(pathDataList, line_from, closed)


def concatenatePaths(pathDataList: PathList) -> PathData:
    return concat_paths(pathDataList)


def joinPaths(pathDataList: PathList) -> PathData:
    """Paths one after another with every path's first command (its move) dropped but the first's."""
    return concat_paths(pathDataList, lambda _cmd: None)


def interpolatingSpline(pathType: str, points: Points, tension: Num = 0.25) -> PathData:
    """A Catmull-Rom spline through the points as cubic Beziers; tangents are tension times the
    difference of the neighbors (one-sided at the ends of an open spline)."""
    closed = _closed(pathType, "interpolatingSpline")
    pts = _points(points, 2, "interpolatingSpline")
    n = len(pts)
    tangents = [vmul(tension, vsub(pts[(j + 1) % n], pts[(j - 1) % n])) for j in range(n)]
    if not closed:
        tangents[0] = vmul(tension, vsub(pts[1], pts[0]))
        tangents[-1] = vmul(tension, vsub(pts[-1], pts[-2]))
    b = PathBuilder().move_to(pts[0])
    for i in range(n if closed else n - 1):
        j = (i + 1) % n
        b.cubic_to(vadd(pts[i], tangents[i]), vsub(pts[j], tangents[j]), pts[j])
    return b.close().path() if closed else b.path()


def arc(
    pathType: str, start: Vector, end: Vector, radius: Vector, rotation: Num, largeArc: Num, arcSweep: Num
) -> PathData:
    closed = _closed(pathType, "arc")
    b = PathBuilder().move_to(start).arc_to(radius, end, rotation, largeArc, arcSweep)
    return b.close().path() if closed else b.path()


def circularArc(pathType: str, center: Vector, r: Num, theta0: Num, theta1: Num) -> PathData:
    """The arc of the circle (center, r) from angle theta0 to theta1 (radians); "closed" adds the
    two radii (a pie slice)."""
    closed = _closed(pathType, "circularArc")
    x0 = vadd(center, [r * am.cos(theta0), r * am.sin(theta0)])
    x1 = vadd(center, [r * am.cos(theta1), r * am.sin(theta1)])
    large = select(am.abs(theta1 - theta0) > math.pi, 1.0, 0.0)
    sweep = select(theta0 > theta1, 1.0, 0.0)
    b = PathBuilder().move_to(x0).arc_to([r, r], x1, 0.0, large, sweep)
    return b.line_to(center).close().path() if closed else b.path()


def repeatedArcs(
    innerStart: Vector,
    innerEnd: Vector,
    outerStart: Vector,
    outerEnd: Vector,
    innerRadius: Vector,
    repeat: int,
    spacing: Num,
    arcSweep: Num,
) -> PathData:
    """`repeat` concentric arcs (angle marks), each `spacing` further out than the previous."""
    count = static_count(repeat, "repeatedArcs' repeat")
    start_dir = vnormalize(vsub(outerStart, innerStart))
    end_dir = vnormalize(vsub(outerEnd, innerEnd))
    start, end, radius = list(innerStart), list(innerEnd), list(innerRadius)
    b = PathBuilder()
    for _ in range(count):
        b.move_to(start).arc_to(radius, end, 0.0, 0.0, arcSweep)
        start, end = vmove(start, spacing, start_dir), vmove(end, spacing, end_dir)
        radius = vadd(radius, [spacing, spacing])
    return b.path()


def wedge(
    center: Vector, start: Vector, end: Vector, radius: Vector, rotation: Num, largeArc: Num, arcSweep: Num
) -> PathData:
    b = PathBuilder().move_to(start).arc_to(radius, end, rotation, largeArc, arcSweep).line_to(center)
    return b.close().path()


def _tick_offsets(spacing: Num, count: int) -> list:
    """Offsets of `count` ticks spaced `spacing` apart, centered on 0 (Penrose's tickPlacement)."""
    if count <= 0:
        raise ValueError(f"ticksOnLine: number of ticks must be greater than 0, got {count}")
    even = count % 2 == 0
    offsets: list = [spacing / 2.0] if even else [0.0]
    sign = 1.0
    for i in range(1, count):
        if even and i == 1:
            sign = -sign
        shift = spacing * (-i * sign) if i % 2 == 0 else spacing * (i * sign)
        offsets.append(offsets[-1] + shift)
    return offsets


def ticksOnLine(pt1: Vector, pt2: Vector, spacing: Num, numTicks: int, tickLength: Num) -> PathData:
    """`numTicks` tick marks across the middle of segment pt1-pt2, each 2 * tickLength long."""
    count = static_count(numTicks, "ticksOnLine's numTicks")
    u = vnormalize(vsub(pt2, pt1))
    normal = vneg(_rot90(u))
    mid = vmul(0.5, vadd(pt1, pt2))
    top, bottom = vmove(mid, tickLength, normal), vmove(mid, tickLength, vneg(normal))
    b = PathBuilder()
    for offset in _tick_offsets(spacing, count):
        b.move_to(vmove(top, offset, u)).line_to(vmove(bottom, offset, u))
    return b.path()


def orientedSquare(s1: Shape, s2: Shape, intersection: Vector, len: Num) -> PathData:  # noqa: A002
    """A right-angle mark of side `len` in the corner between lines s1 and s2 (from s1's start)."""
    start_r, end_r = line_points(s1)
    start_l, end_l = line_points(s2)
    dir_r, dir_l = vnormalize(vsub(end_r, start_r)), vnormalize(vsub(end_l, start_l))
    pt_l = vmove(start_r, len, dir_l)
    pt_r = vmove(start_r, len, dir_r)
    pt_lr = vadd(pt_l, vmul(len, dir_r))
    return PathBuilder().move_to(pt_l).line_to(pt_lr).line_to(pt_r).line_to(intersection).close().path()


def triangle(l1: Shape, l2: Shape, l3: Shape) -> PathData:
    """The closed triangle through the start points of three lines."""
    b = PathBuilder().move_to(line_points(l1)[0]).line_to(line_points(l2)[0]).line_to(line_points(l3)[0])
    return b.close().path()


def Penrose(
    center: Vector = [0.0, 0.0],  # noqa: B006 - never mutated; a list, as every Vector
    radius: Num = 50.0,
    holeSize: Num = 0.35,
    angle: Num = 0.0,
    nSides: int = 5,
    chirality: str = "ccw",
) -> PathData:
    """Penrose's impossible-polygon logo: n closed hexagonal bars around a hole of relative size
    holeSize, turned by `angle`, wound clockwise when chirality is "cw"."""
    n = int(math.floor(max(static_count(math.floor(nSides), "Penrose's nSides"), 3)))
    outer = radius
    inner = holeSize * outer
    interior = math.pi * (n - 2) / n  # interior angle of the regular n-gon
    half_width = (outer - inner) / (4.0 * math.cos(interior / 2.0))
    s = 1.0 if chirality == "cw" else -1.0
    a, b = [], []
    for k in range(n):
        theta = angle + 2.0 * k * math.pi / n
        direction = [s * am.sin(theta), am.cos(theta)]
        a.append(vadd(center, vmul(inner, direction)))
        b.append(vadd(center, vmul(outer, direction)))
    u = [vnormalize(vsub(a[(i + 1) % n], a[i])) for i in range(n)]
    c = [vsub(a[i], vmul(half_width, u[i])) for i in range(n)]
    d = [vsub(b[i], vmul(half_width, u[(i - 1) % n])) for i in range(n)]
    path = PathBuilder()
    for i in range(n):
        j, k = (i + 1) % n, (i + 2) % n
        path.move_to(d[i]).line_to(b[i]).line_to(d[j]).line_to(c[k]).line_to(a[k]).line_to(c[j]).close()
    return path.path()
