"""rectLineDist's formula (support lines and nearest vertex) against the hexagon it replaced.

Oracles:
- the hexagon: the box less the segment built as six vertices and measured by Penrose's edge
  regions (`convex_polygon_origin_signed_distance`), with the same short-segment rule; written
  here as the library wrote it before, interpreted and compiled, values and reverse-mode
  gradients. On a flat box (zero width or height) the hexagon has edges of no length and the
  edge regions go wrong (a vertical box edge at x = 1 and a segment 2 to its right came out as
  -2), so flat boxes are left to the next oracle.
- the convex hull of the box's corners less the segment's endpoints, by a monotone chain in plain
  Python (collinear points dropped, so flat boxes and axis-parallel segments are fine), and the
  origin's signed distance to it.
- central differences of the compiled value at two step sizes, for gradients away from kinks
  (where the two step sizes disagree the point sits on a kink, and is skipped).

Both formulas are run interpreted (adcore.interp) and compiled (Wasm), on boxes and segments in
every configuration: apart, crossing, the segment inside the box, touching, axis-parallel, on
integer grids (collinear and touching everywhere), corners in any order, (nearly) no length,
around the short-segment threshold, and a million pixels from the origin.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import adcore
from adcore import Real, Vec, and_, fn, interp, not_, or_, select, vjp
from energies.library import pmath as am
from energies.library.fn_ops import div, max_n, sqr
from energies.library.pmath import sqrt
from energies.library.polygons import (
    RECT_LINE_DIST,
    SHORTEST,
    rectangle_signed_distance,
)

Args = list[float]


def convex_polygon_origin_signed_distance(p: list[list[Any]]) -> Any:
    """Signed distance from the origin to a counterclockwise convex polygon by Penrose's edge regions
    (the library's before the support lines)."""
    n = len(p)
    parts = []
    for i in range(n):
        x0, y0 = p[i][0], p[i][1]
        x1, y1 = p[(i + 1) % n][0], p[(i + 1) % n][1]
        dx, dy = x1 - x0, y1 - y0
        sq_len = dx * dx + dy * dy
        along = -(x0 * dx + y0 * dy)
        parts.append(
            {
                "good_left": along >= 0.0,
                "good_right": along < sq_len,
                "from_start": sqrt(x0 * x0 + y0 * y0),
                "edge": div(dx * y0 - x0 * dy, sqrt(sq_len)),
            }
        )
    terms = []
    for i, s in enumerate(parts):
        nxt = parts[(i + 1) % n]
        corner = select(nxt["good_left"], -math.inf, nxt["from_start"])
        terms.append(select(s["good_left"], select(s["good_right"], s["edge"], corner), -math.inf))
    return max_n(terms)


def _hexagon(v: Any) -> Any:
    """The signed distance from the origin to the box less the segment, as a hexagon's six vertices
    measured by edge regions (the library's formula before the support lines); a segment shorter
    than SHORTEST (relative) is its start."""
    x0, y0, x1, y1, lxs, lys, lxe, lye = (v[i] for i in range(8))
    rx0, rx1 = am.min(x0, x1), am.max(x0, x1)
    ry0, ry1 = am.min(y0, y1), am.max(y0, y1)
    px, py = lxs > lxe, lys > lye
    lx0, lx1 = select(px, lxs, lxe), select(px, lxe, lxs)
    ly0, ly1 = select(py, lys, lye), select(py, lye, lys)
    x00, x01, x10, x11 = rx0 - lx0, rx0 - lx1, rx1 - lx0, rx1 - lx1
    y00, y01, y10, y11 = ry0 - ly0, ry0 - ly1, ry1 - ly0, ry1 - ly1
    neg_slope = or_(and_(px, not_(py)), and_(not_(px), py))
    xs = [select(neg_slope, x01, x00), select(neg_slope, x11, x10), x11, select(neg_slope, x10, x11)]
    xs += [select(neg_slope, x00, x01), x00]
    ys = [y00, y00, select(neg_slope, y10, y01), y11, y11, select(neg_slope, y01, y10)]
    hexagon = convex_polygon_origin_signed_distance([[x, y] for x, y in zip(xs, ys)])
    scale = 1.0 + am.max(am.max(am.abs(lxs), am.abs(lys)), am.max(am.abs(lxe), am.abs(lye)))
    short = sqr(lxe - lxs) + sqr(lye - lys) <= sqr(SHORTEST * scale)
    point = rectangle_signed_distance([rx0 - lxs, ry0 - lys], [rx1 - lxs, ry1 - lys])
    return select(short, point, hexagon)


HEXAGON = fn([Vec(8, Real)], Real, _hexagon, name="rect_line_hexagon")
VG = {"v": Real, "g": Vec(8, Real)}


def _value_and_gradient(f: adcore.Fn) -> adcore.Fn:
    def body(v: Any) -> dict[str, Any]:
        r = vjp(f)(v)
        return {"v": r.ret, "g": r.grad(1.0)}

    return fn([Vec(8, Real)], VG, body, name=f"{f.name}_vg")


NEW_VG, OLD_VG = _value_and_gradient(RECT_LINE_DIST), _value_and_gradient(HEXAGON)


@pytest.fixture(scope="module")
def compiled() -> dict[str, Callable[[Args], Any]]:
    return {
        "new": adcore.compile(NEW_VG),
        "old": adcore.compile(OLD_VG),
        "value": adcore.compile(RECT_LINE_DIST),
    }


# -- the hull oracle -----------------------------------------------------------------------------------


def _cross(o: tuple[float, float], a: tuple[float, float], b: tuple[float, float]) -> float:
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def _point_segment(a: tuple[float, float], b: tuple[float, float]) -> float:
    """Distance from the origin to the segment ab."""
    ex, ey = b[0] - a[0], b[1] - a[1]
    length_sq = ex * ex + ey * ey
    t = 0.0 if length_sq == 0.0 else min(1.0, max(0.0, -(a[0] * ex + a[1] * ey) / length_sq))
    return math.hypot(a[0] + t * ex, a[1] + t * ey)


def hull_distance(v: Args) -> float:
    """Signed distance from the origin to the convex hull of the box's corners less the segment's
    endpoints (Andrew's monotone chain, collinear points dropped)."""
    x0, y0, x1, y1, sx, sy, ex, ey = map(float, v)
    ends = ((sx, sy), (ex, ey))
    pts = sorted({(cx - px, cy - py) for cx in (x0, x1) for cy in (y0, y1) for px, py in ends})
    if len(pts) == 1:
        return math.hypot(*pts[0])
    lower: list[tuple[float, float]] = []
    upper: list[tuple[float, float]] = []
    for chain, seq in ((lower, pts), (upper, pts[::-1])):
        for p in seq:
            while len(chain) >= 2 and _cross(chain[-2], chain[-1], p) <= 0:
                chain.pop()
            chain.append(p)
    hull = lower[:-1] + upper[:-1]  # counterclockwise
    edges = list(zip(hull, hull[1:] + hull[:1]))
    nearest = min(_point_segment(a, b) for a, b in edges)
    inside = len(hull) >= 3 and all(_cross(a, b, (0.0, 0.0)) > 0 for a, b in edges)
    return -nearest if inside else nearest


# -- the cases -----------------------------------------------------------------------------------------


def _box(rng: np.random.Generator, scale: float = 50.0) -> Args:
    x0, y0 = rng.uniform(-1, 1, 2) * scale
    w, h = rng.uniform(0.02, 0.8, 2) * scale
    return [x0, y0, x0 + w, y0 + h]


def _segment_from(start: Args, length: float, angle: float) -> Args:
    return [start[0], start[1], start[0] + length * math.cos(angle), start[1] + length * math.sin(angle)]


def _angle(rng: np.random.Generator) -> float:
    return float(rng.uniform(0, 2 * math.pi))


def _through_corner(rng: np.random.Generator, box: Args, offset: float) -> Args:
    """A segment through one of the box's corners, moved `offset` along its normal."""
    corner = [box[int(rng.integers(0, 2)) * 2], box[int(rng.integers(0, 2)) * 2 + 1]]
    a, before, after = _angle(rng), rng.uniform(1, 30), rng.uniform(1, 30)
    cx, cy = corner[0] - offset * math.sin(a), corner[1] + offset * math.cos(a)
    return [
        cx - before * math.cos(a),
        cy - before * math.sin(a),
        cx + after * math.cos(a),
        cy + after * math.sin(a),
    ]


def _case(rng: np.random.Generator, kind: str) -> Args:
    box = _box(rng)
    x0, y0, x1, y1 = box
    inside = [rng.uniform(x0, x1), rng.uniform(y0, y1)]
    if kind == "random":  # apart, crossing or inside
        seg = _segment_from(list(rng.uniform(-80, 80, 2)), rng.uniform(0.1, 90), _angle(rng))
    elif kind == "inside":
        seg = [*inside, rng.uniform(x0, x1), rng.uniform(y0, y1)]
    elif kind == "crossing":  # through a point of the box, both ends out
        a = _angle(rng)
        far = 2 * (x1 - x0 + y1 - y0)
        seg = [inside[0] - far * math.cos(a), inside[1] - far * math.sin(a)]
        seg += [inside[0] + far * math.cos(a), inside[1] + far * math.sin(a)]
    elif kind == "touching":  # an endpoint on a side, or the segment through a corner, or nearly
        if rng.random() < 0.5:
            side = int(rng.integers(0, 4))
            on_side = [box[side], rng.uniform(y0, y1)] if side % 2 == 0 else [rng.uniform(x0, x1), box[side]]
            seg = _segment_from(on_side, rng.uniform(0.1, 60), _angle(rng))
        else:
            seg = _through_corner(rng, box, [0.0, 1e-13, -1e-13, 1e-9, -1e-9][int(rng.integers(0, 5))])
    elif kind == "axis":  # axis-parallel, sometimes along a side of the box or on its line
        start = list(rng.uniform(-80, 80, 2))
        if rng.random() < 0.3:
            start[rng.integers(0, 2)] = box[rng.integers(0, 4)]
        length = rng.uniform(0.1, 90) * (1 if rng.random() < 0.5 else -1)
        seg = [*start, start[0] + length, start[1]]
        if rng.random() < 0.5:
            seg = [*start, start[0], start[1] + length]
    elif kind == "grid":  # small integers: ties, collinear and touching configurations everywhere
        g = [float(k) for k in rng.integers(-3, 4, 8)]
        while g[0] == g[2] or g[1] == g[3]:  # flat boxes: see test_flat_boxes
            g = [float(k) for k in rng.integers(-3, 4, 8)]
        box, seg = g[:4], g[4:]
    elif kind == "short":  # (nearly) no length, on either side of SHORTEST
        start = list(rng.uniform(-80, 80, 2)) if rng.random() < 0.7 else inside
        scale = 1.0 + max(abs(start[0]), abs(start[1]))
        length = 0.0 if rng.random() < 0.1 else SHORTEST * scale * 10 ** rng.uniform(-8, 4)
        seg = _segment_from(start, length, _angle(rng))
    elif kind == "huge":  # any of the first five a million pixels out
        v = _case(rng, KINDS[int(rng.integers(0, 5))])
        dx, dy = rng.uniform(-1, 1, 2) * 1e6
        return [c + (dx, dy)[k % 2] for k, c in enumerate(v)]
    else:
        raise ValueError(kind)
    if rng.random() < 0.5:  # corners in any order
        box = [box[2], box[1], box[0], box[3]]
    if rng.random() < 0.5:
        box = [box[0], box[3], box[2], box[1]]
    return [float(c) for c in [*box, *seg]]


KINDS = ("random", "inside", "crossing", "touching", "axis", "grid", "short", "huge")


def cases(seed: int, per_kind: int) -> list[tuple[str, Args]]:
    rng = np.random.default_rng(seed)
    return [(kind, _case(rng, kind)) for kind in KINDS for _ in range(per_kind)]


def close(a: float, b: float) -> bool:
    """Equal to 1e-9 relative, or 1e-9 absolute near 0."""
    return abs(a - b) <= 1e-9 * max(1.0, abs(b))


# -- values --------------------------------------------------------------------------------------------


def test_compiled_values_are_the_hexagons_and_the_hulls(compiled: dict[str, Callable[[Args], Any]]) -> None:
    """4,000 draws, every configuration: the value is the hexagon's and the hull's (a segment under
    SHORTEST is its start: within its length of the hull's), its gradient finite."""
    worst = 0.0
    for kind, v in cases(seed=0, per_kind=500):
        new, old = compiled["new"](v), compiled["old"](v)
        assert math.isfinite(new["v"]) and all(map(math.isfinite, new["g"])), (kind, v, new)
        assert close(new["v"], old["v"]), (kind, v, new["v"], old["v"])
        slack = math.dist(v[4:6], v[6:8]) if kind == "short" else 0.0
        assert abs(new["v"] - hull_distance(v)) <= slack + 1e-9 * max(1.0, abs(new["v"])), (kind, v)
        assert compiled["value"](v) == new["v"]
        worst = max(worst, abs(new["v"] - old["v"]) / max(1.0, abs(old["v"])))
    assert worst < 1e-12  # in fact a few ulps of the coordinates


def test_interpreted_values_and_gradients_are_the_compiled_ones(
    compiled: dict[str, Callable[[Args], Any]],
) -> None:
    """The interpreter computes the compiled numbers, and the hexagon's value."""
    new, old = interp(NEW_VG), interp(OLD_VG)
    for kind, v in cases(seed=1, per_kind=40):
        got, want = new(v), compiled["new"](v)
        assert got["v"] == want["v"], (kind, v)
        np.testing.assert_allclose(got["g"], want["g"], rtol=1e-12, atol=1e-15)
        assert close(got["v"], old(v)["v"]), (kind, v, got["v"])


def test_flat_boxes() -> None:
    """A box of no width or height (a segment or a point) against the hull, where the hexagon's edge
    regions fail; the segment-box distance by hand for one of them."""
    f = adcore.compile(RECT_LINE_DIST)
    assert f([1.0, -2.0, 1.0, 1.0, 3.0, 1.0, 3.0, 3.0]) == 2.0  # the hexagon gave -2
    rng = np.random.default_rng(2)
    for _ in range(600):
        g = [float(k) for k in rng.integers(-3, 4, 8)]
        g[2 * int(rng.integers(0, 2))] = g[0] if rng.random() < 0.5 else g[2]
        g[1 + 2 * int(rng.integers(0, 2))] = g[1] if rng.random() < 0.3 else g[3]
        assert close(f(g), hull_distance(g)), (g, f(g), hull_distance(g))


def test_short_segments_are_continuous_across_the_threshold() -> None:
    """Just under SHORTEST (relative) the segment is its start; just over, a segment: the two values
    differ by no more than the segment's length (plus rounding)."""
    f = adcore.compile(RECT_LINE_DIST)
    rng = np.random.default_rng(3)
    for _ in range(300):
        box = _box(rng)
        start = list(rng.uniform(-80, 80, 2))
        limit = SHORTEST * (1.0 + max(abs(start[0]), abs(start[1])))
        a = _angle(rng)
        below = f([*box, *_segment_from(start, limit * (1 - 1e-6), a)])
        above = f([*box, *_segment_from(start, limit * (1 + 1e-6), a)])
        assert abs(below - above) <= 1.01 * limit + 1e-12 * (1 + abs(below))


# -- gradients -----------------------------------------------------------------------------------------


def test_gradients_are_the_hexagons_and_the_finite_differences_ones(
    compiled: dict[str, Callable[[Args], Any]],
) -> None:
    """On configurations in general position (no axis-parallel segments, no grids), away from
    kinks: the compiled gradient equals the hexagon's and central differences of the value. Among
    them segments through a box's corner, and 1e-13 to either side of it: the value's derivative
    there is the line's normal, not the direction of two nearly equal points' rounded difference."""
    value = compiled["value"]
    kept = total = 0
    for kind, v in cases(seed=4, per_kind=60):
        if kind in ("axis", "grid", "short", "huge"):
            continue
        total += 1
        fds = []
        for h in (1e-5, 1e-6):
            steps = [[*v[:i], v[i] + h, *v[i + 1 :]] for i in range(8)]
            downs = [[*v[:i], v[i] - h, *v[i + 1 :]] for i in range(8)]
            fds.append(np.array([(value(u) - value(d)) / (2 * h) for u, d in zip(steps, downs)]))
        if np.abs(fds[0] - fds[1]).max() > 1e-6:
            continue  # a kink: touching, a tie between two sides or corners
        kept += 1
        g = np.array(compiled["new"](v)["g"])
        np.testing.assert_allclose(g, compiled["old"](v)["g"], atol=1e-9, err_msg=f"{kind} {v}")
        np.testing.assert_allclose(g, fds[1], atol=1e-6, err_msg=f"{kind} {v}")
    assert kept > 0.7 * total


def test_gradients_of_short_and_far_segments_are_the_hexagons(
    compiled: dict[str, Callable[[Args], Any]],
) -> None:
    """Segments of every length down to none, and boxes a million pixels out in general position
    (apart, inside, crossing): the gradient is the hexagon's. Central differences do not serve
    here: a step longer than the segment meets the kink at length 0 (the nearer endpoint changes),
    and a million pixels out they drown in the coordinates' rounding."""
    rng = np.random.default_rng(5)
    draws = [_case(rng, "short") for _ in range(600)]
    for _ in range(600):
        v = _case(rng, ("random", "inside", "crossing")[int(rng.integers(0, 3))])
        dx, dy = rng.uniform(-1, 1, 2) * 1e6
        draws.append([c + (dx, dy)[k % 2] for k, c in enumerate(v)])
    for v in draws:
        g = compiled["new"](v)["g"]
        np.testing.assert_allclose(g, compiled["old"](v)["g"], atol=1e-7, err_msg=f"{v}")
