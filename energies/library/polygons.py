"""Polygons: convex partition, Minkowski-sum signed distances and point-polygon distances (Penrose's
lib/Minkowski.ts and the polygon parts of lib/Queries.ts, written as polymorphic macros).

Convex partition is a combinatorial choice made on numbers, as Penrose makes it on the initial vertex
positions: on plain floats we run a Hertel-Mehlhorn partition (ear clipping, then greedy removal of
diagonals); on traced vertices the values are unknown at trace time, so the polygon is taken as one
convex piece (exact for convex polygons, an approximation for concave ones).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from adcore import and_, fold, not_, or_, select

from . import pmath as am
from .fn_ops import (
    add_n,
    clamp,
    div,
    max_n,
    min_n,
    msign,
    pt,
    rot90,
    sqr,
    vdot,
    vmul,
    vneg,
    vnorm,
    vnormalize,
    vsub,
)
from .geometry import Pt, Scalar
from .lipschitz import lipschitz_fn, planar_move
from .loops import array_of, element
from .pmath import sqrt


def is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


# -- convex partition on numbers -------------------------------------------------------------------


def _cross(o: Sequence[float], a: Sequence[float], b: Sequence[float]) -> float:
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def _signed_area(pts: Sequence[Sequence[float]]) -> float:
    n = len(pts)
    return 0.5 * sum(pts[i][0] * pts[(i + 1) % n][1] - pts[(i + 1) % n][0] * pts[i][1] for i in range(n))


def _in_triangle(p: Sequence[float], a: Sequence[float], b: Sequence[float], c: Sequence[float]) -> bool:
    return _cross(a, b, p) >= 0 and _cross(b, c, p) >= 0 and _cross(c, a, p) >= 0


def _triangulate(pts: Sequence[Sequence[float]], order: list[int]) -> list[list[int]]:
    """Ear clipping of a counterclockwise simple polygon (indices into pts)."""
    rest, triangles = list(order), []
    guard = 0
    while len(rest) > 3 and guard < 10 * len(order) ** 2:
        guard += 1
        m = len(rest)
        for k in range(m):
            i, j, l = rest[k - 1], rest[k], rest[(k + 1) % m]
            if _cross(pts[i], pts[j], pts[l]) <= 0:
                continue
            if any(_in_triangle(pts[q], pts[i], pts[j], pts[l]) for q in rest if q not in (i, j, l)):
                continue
            triangles.append([i, j, l])
            rest.pop(k)
            break
        else:  # degenerate (collinear or self-touching) input: fan the rest
            triangles += [[rest[0], rest[q], rest[q + 1]] for q in range(1, len(rest) - 1)]
            return triangles
    triangles.append(rest)
    return triangles


def _is_convex(pts: Sequence[Sequence[float]], poly: list[int]) -> bool:
    n = len(poly)
    return all(_cross(pts[poly[i - 1]], pts[poly[i]], pts[poly[(i + 1) % n]]) >= -1e-12 for i in range(n))


def _merge(a: list[int], b: list[int], u: int, v: int) -> list[int]:
    """Glue two CCW pieces along their shared edge: a has u->v, b has v->u."""
    ia = a.index(v)
    a_rot = a[ia:] + a[:ia]  # starts at v, ends at u
    ib = b.index(u)
    b_rot = b[ib:] + b[:ib]  # starts at u, ends at v
    return a_rot[:-1] + b_rot[:-1]


def convex_partition_indices(coords: Sequence[Sequence[float]]) -> list[list[int]]:
    """Hertel-Mehlhorn convex partition of a simple polygon, as counterclockwise index lists."""
    n = len(coords)
    order = list(range(n))
    if _signed_area(coords) < 0:
        order.reverse()
    if n <= 3:
        return [order]
    pieces = _triangulate(coords, order)
    merged = True
    while merged:
        merged = False
        for x in range(len(pieces)):
            for y in range(x + 1, len(pieces)):
                a, b = pieces[x], pieces[y]
                for k in range(len(a)):
                    u, v = a[k], a[(k + 1) % len(a)]
                    if u in b and b[(b.index(u) - 1) % len(b)] == v:
                        glued = _merge(a, b, u, v)
                        if _is_convex(coords, glued):
                            pieces[x] = glued
                            pieces.pop(y)
                            merged = True
                            break
                if merged:
                    break
            if merged:
                break
    return pieces


def convex_partitions(points: Sequence[Sequence[Scalar]]) -> list[list[Pt]]:
    """Convex pieces of a simple polygon (see the module docstring for traced vertices)."""
    pts = [pt(p) for p in points]
    if len(pts) <= 3 or not all(is_number(c) for p in pts for c in p):
        return [pts]
    return [[pts[i] for i in piece] for piece in convex_partition_indices(pts)]


# -- half-planes and Minkowski sums ----------------------------------------------------------------


def centroid(points: Sequence[Pt]) -> Pt:
    n = float(len(points))
    return [add_n([p[0] for p in points]) / n, add_n([p[1] for p in points]) / n]


def outward_unit_normal(segment: Sequence[Pt], inside: Pt) -> Pt:
    normal = vnormalize(rot90(vsub(segment[1], segment[0])))
    inside_value = vdot(vsub(inside, segment[0]), normal)
    return vmul(-msign(inside_value), normal)


def _sides(poly: Sequence[Pt]) -> list[list[Pt]]:
    return [[poly[i], poly[i - 1]] for i in range(len(poly))]


def half_plane_sdf(segment: Sequence[Pt], others: Sequence[Pt], inside: Pt, padding: Scalar) -> Scalar:
    normal = outward_unit_normal(segment, inside)
    alpha = vdot(normal, segment[0])
    alpha_other = max_n([vdot(normal, p) for p in others])
    return padding - (alpha + alpha_other)


def _minkowski_sdf_one_sided(p1: Sequence[Pt], p2: Sequence[Pt], padding: Scalar) -> Scalar:
    center = centroid(p1)
    return max_n([half_plane_sdf(s, p2, center, padding) for s in _sides(p1)])


def convex_polygon_minkowski_sdf(p1: Sequence[Pt], p2: Sequence[Pt], padding: Scalar) -> Scalar:
    """SDF at the origin of the Minkowski sum of two convex polygons."""
    return am.max(_minkowski_sdf_one_sided(p1, p2, padding), _minkowski_sdf_one_sided(p2, p1, padding))


def overlapping_polygon_points(pts1: Sequence[Pt], pts2: Sequence[Pt], overlap: Scalar = 0.0) -> Scalar:
    """Signed distance between two polygons (<= -overlap when they overlap by `overlap`)."""
    cp1 = convex_partitions(pts1)
    cp2 = convex_partitions([vneg(pt(p)) for p in pts2])
    return max_n([min_n([convex_polygon_minkowski_sdf(a, b, -overlap) for b in cp2]) for a in cp1])


def contains_convex_polygon_points(poly: Sequence[Pt], point: Pt, padding: Scalar) -> Scalar:
    center = centroid(poly)
    return max_n([half_plane_sdf(s, [vneg(point)], center, padding) for s in _sides(poly)])


def rectangle_difference(rect1: Sequence[Pt], rect2: Sequence[Pt], padding: Scalar) -> list[Pt]:
    """Bottom-left and top-right corners of the AABB sum of box 1 and the negated box 2."""
    tl1, br1, tl2, br2 = rect1[1], rect1[3], rect2[1], rect2[3]
    xa1, xa2, ya1, ya2 = tl1[0], br1[0], br1[1], tl1[1]
    xb1, xb2, yb1, yb2 = tl2[0], br2[0], br2[1], tl2[1]
    xs = [xa1 - xb1, xa2 - xb2, xa1 - xb2, xa2 - xb1]
    ys = [ya1 - yb1, ya2 - yb2, ya1 - yb2, ya2 - yb1]
    return [[min_n(xs) - padding, min_n(ys) - padding], [max_n(xs) + padding, max_n(ys) + padding]]


def rectangle_signed_distance(bottom_left: Pt, top_right: Pt) -> Scalar:
    """Signed distance from the origin to an axis-aligned rectangle."""
    xp, yp = am.abs((bottom_left[0] + top_right[0]) * 0.5), am.abs((bottom_left[1] + top_right[1]) * 0.5)
    xr, yr = (top_right[0] - bottom_left[0]) * 0.5, (top_right[1] - bottom_left[1]) * 0.5
    outside = sqrt(sqr(am.max(xp - xr, 0.0)) + sqr(am.max(yp - yr, 0.0)))
    inside = am.min(am.max(xp - xr, yp - yr), 0.0)
    return outside + inside


def _rect_line_dist(
    x0: Scalar, y0: Scalar, x1: Scalar, y1: Scalar, lxs: Scalar, lys: Scalar, lxe: Scalar, lye: Scalar
) -> Scalar:
    """Signed distance between the box [x0, x1] x [y0, y1] and the segment from (lxs, lys) to
    (lxe, lye): their gap, or minus how far the segment must move to leave the box (the signed
    distance from the origin to the box less the segment, a hexagon). The box's corners are sorted
    first, which changes nothing for a box given as (bottom left, top right) and makes the value
    that of a box for any two corners, so that it moves with the corners by at most their move
    (the interval rule below relies on it).

    The hexagon's edges are normal to x, y and the segment's normal n, and its support along each
    of those six directions is read off the coordinates: how far the segment lies beyond each side
    of the box, and how far the box's two corners extreme along n lie beyond the segment's line.
    The largest of the six, `apart`, is the exact signed distance where the two meet (apart <= 0:
    every edge of a convex polygon lies on one of these lines, and the nearest line is the way
    out), and is positive exactly where they do not. There a nearest pair of points holds an
    endpoint of the segment, or a point inside it. The first is an endpoint's distance to the box.
    In the second the segment's line misses the box, and the pair is the corner nearest that line
    and its foot on the line, which then lies within the segment: their distance is |beyond_n|,
    computed as that rather than as the difference of two nearby points, so that its derivative
    keeps its direction however close the two come. The gap is the least of these, one square
    root; it is at least `apart`, and taking the larger of the two changes only rounding but
    keeps the formula's interval above apart's. The segment's length takes one more square root
    (with its exact derivative: the library's sqrt flattens its derivative below 1e-5, and a
    segment may be shorter) and one division; the rest is arithmetic and selects.

    A segment of (nearly) no length is taken as its start (at length 0 it has no normal): the
    box's signed distance to that point. That and the segment's value differ by at most the
    segment's length, so the value moves continuously with the segment, as the interval rule
    needs. The long case then divides by 1 instead, and the gap's square root has a zero
    derivative at 0, so no infinity or NaN reaches the value or its derivative."""
    rx0, rx1 = am.min(x0, x1), am.max(x0, x1)
    ry0, ry1 = am.min(y0, y1), am.max(y0, y1)
    # how far each endpoint lies beyond each side of the box (positive: outside that side)
    left_s, right_s, below_s, above_s = rx0 - lxs, lxs - rx1, ry0 - lys, lys - ry1
    left_e, right_e, below_e, above_e = rx0 - lxe, lxe - rx1, ry0 - lye, lye - ry1
    dx, dy = lxe - lxs, lye - lys
    length_sq = dx * dx + dy * dy
    scale = 1.0 + am.max(am.max(am.abs(lxs), am.abs(lys)), am.max(am.abs(lxe), am.abs(lye)))
    short = length_sq <= sqr(SHORTEST * scale)
    inv_length = div(1.0, am.raw_sqrt(select(short, 1.0, length_sq)))
    # both endpoints beyond one side of the box
    beyond_x = am.max(am.min(left_s, left_e), am.min(right_s, right_e))
    beyond_y = am.max(am.min(below_s, below_e), am.min(above_s, above_e))
    # from the start to the corner with the largest cross(d, corner), and to the opposite one
    hi_x, lo_x = select(dy > 0.0, left_s, -right_s), select(dy > 0.0, -right_s, left_s)
    hi_y, lo_y = select(dx > 0.0, -above_s, below_s), select(dx > 0.0, below_s, -above_s)
    # how far those corners lie beyond the segment's line, times the segment's length
    beyond_hi, beyond_lo = dy * hi_x - dx * hi_y, dx * lo_y - dy * lo_x
    beyond_n = am.max(beyond_hi, beyond_lo) * inv_length
    apart = am.max(am.max(beyond_x, beyond_y), beyond_n)
    # the gap's candidates, squared: each endpoint to the box, and the corner nearest the line
    # where its foot falls within the segment (elsewhere an endpoint is no farther)
    out_x, out_y = am.max(left_s, right_s), am.max(below_s, above_s)
    gap_s = sqr(am.max(out_x, 0.0)) + sqr(am.max(out_y, 0.0))
    gap_e = sqr(am.max(am.max(left_e, right_e), 0.0)) + sqr(am.max(am.max(below_e, above_e), 0.0))
    toward_hi = beyond_hi > beyond_lo
    along = select(toward_hi, hi_x, lo_x) * dx + select(toward_hi, hi_y, lo_y) * dy
    foot_within = and_(along > 0.0, along < length_sq)
    gap_corner = select(foot_within, sqr(beyond_n), gap_s)
    gap_sq = select(short, gap_s, am.min(am.min(gap_s, gap_e), gap_corner))
    gap = select(gap_sq > 0.0, am.raw_sqrt(gap_sq), 0.0)
    point = gap + am.min(am.max(out_x, out_y), 0.0)
    return select(short, point, select(apart > 0.0, am.max(gap, apart), apart))


SHORTEST = 1e-9  # shorter segments (relative to the coordinates) are taken as points


def _rect_line_moves(half: Sequence[Scalar]) -> Scalar:
    """How far rect_line_dist's set moves on a box: its rectangle (corners sorted) by the larger
    moves of its two corners in x and in y, its segment by its larger endpoint move (see
    `lipschitz`); a segment shorter than SHORTEST, taken as a point, adds at most its length."""
    rect = planar_move(am.max(half[0], half[2]), am.max(half[1], half[3]))
    segment = am.max(planar_move(half[4], half[5]), planar_move(half[6], half[7]))
    return rect + segment


RECT_LINE_DIST = lipschitz_fn(
    "rectLineDist",
    8,
    lambda v: _rect_line_dist(*[v[i] for i in range(8)]),
    _rect_line_moves,
    extra_slack=2.0 * SHORTEST,
)


def rect_line_dist(
    rx0: Scalar, ry0: Scalar, rx1: Scalar, ry1: Scalar, lxs: Scalar, lys: Scalar, lxe: Scalar, lye: Scalar
) -> Scalar:
    """Signed distance between a box and a segment (from the origin to the box less the segment, a
    hexagon): one call of a function of the call graph, which carries its interval rule."""
    return RECT_LINE_DIST([rx0, ry0, rx1, ry1, lxs, lys, lxe, lye])


def signed_distance_polygon(pts: Sequence[Pt], p: Pt) -> Scalar:
    """Signed distance from point p to a simple polygon (negative inside; Inigo Quilez's formula)."""
    arr = array_of(pts)
    if arr is not None:  # a long list as one array: the same steps, by one fold
        n = len(pts)
        first = vsub(p, element(arr, 0))
        init = {"d": vdot(first, first), "s": 1.0}
        c = fold(n, init, lambda c, i: _sdf_step(c, element(arr, i), element(arr, (i + (n - 1)) % n), p))
        return c["s"] * sqrt(c["d"])
    v = [pt(q) for q in pts]
    d = vdot(vsub(p, v[0]), vsub(p, v[0]))
    s: Scalar = 1.0
    j = len(v) - 1
    for i in range(len(v)):
        c = _sdf_step({"d": d, "s": s}, v[i], v[j], p)
        d, s = c["d"], c["s"]
        j = i
    return s * sqrt(d)


def _sdf_step(c: dict[str, Any], vi: Pt, vj: Pt, p: Pt) -> dict[str, Any]:
    """One edge (vj, vi) of the polygon distance: the nearest squared distance and the winding sign."""
    e, w = vsub(vj, vi), vsub(p, vi)
    b = vsub(w, vmul(clamp(0.0, 1.0, div(vdot(w, e), vdot(e, e))), e))
    c1, c2, c3 = p[1] >= vi[1], p[1] < vj[1], e[0] * w[1] > e[1] * w[0]
    flip = or_(and_(and_(c1, c2), c3), and_(and_(not_(c1), not_(c2)), not_(c3)))
    return {"d": am.min(c["d"], vdot(b, b)), "s": select(flip, -c["s"], c["s"])}


def point_segment_distance(p: Pt, a: Pt, b: Pt) -> Scalar:
    """|p - closest point of segment ab| (Inigo Quilez's exact segment distance)."""
    u, v = vsub(p, a), vsub(b, a)
    h = am.max(0.0, am.min(1.0, div(vdot(u, v), vdot(v, v))))
    return vnorm(vsub(u, vmul(h, v)))


__all__ = [
    "centroid",
    "contains_convex_polygon_points",
    "convex_partition_indices",
    "convex_partitions",
    "convex_polygon_minkowski_sdf",
    "half_plane_sdf",
    "outward_unit_normal",
    "overlapping_polygon_points",
    "point_segment_distance",
    "rect_line_dist",
    "rectangle_difference",
    "rectangle_signed_distance",
    "signed_distance_polygon",
]
