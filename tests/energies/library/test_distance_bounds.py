"""The library's distance functions that carry interval rules (rectLineDist, the rectangle
distance): their values against exact geometry, their rules against the values they must enclose.

Oracles: the signed distance from the origin to the convex hull of the box's corners minus the
segment's endpoints, computed here with scipy's convex hull (the Minkowski sum of the box and the
negated segment is that hull); boxes' signed distance by hand; sampled values of the compiled
function inside each box.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from scipy.spatial import ConvexHull

import adcore
from adcore import Real, Vec, fn, interval
from energies.library.distance import RECTS_DISTANCE
from energies.library.polygons import RECT_LINE_DIST


def exact(v: list[float]) -> float:
    x0, y0, x1, y1, sx, sy, ex, ey = v
    corners = np.array([[x, y] for x in (x0, x1) for y in (y0, y1)], dtype=float)
    points = np.concatenate([corners - [sx, sy], corners - [ex, ey]])
    hull = points[ConvexHull(points).vertices]  # counterclockwise
    nearest, inside = math.inf, True
    for a, b in zip(hull, np.roll(hull, -1, axis=0)):
        edge = b - a
        t = min(1.0, max(0.0, float(-a @ edge) / float(edge @ edge)))
        nearest = min(nearest, float(np.linalg.norm(a + t * edge)))
        inside &= edge[0] * -a[1] - edge[1] * -a[0] >= 0
    return -nearest if inside else nearest


def random_arguments(rng: np.random.Generator, shortest: float = 1e-3) -> list[float]:
    x0, y0 = rng.uniform(-60, 60, 2)
    w, h = rng.uniform(1, 40, 2)
    sx, sy = rng.uniform(-90, 90, 2)
    length, angle = 10 ** rng.uniform(math.log10(shortest), 2.3), rng.uniform(0, 2 * math.pi)
    return [x0, y0, x0 + w, y0 + h, sx, sy, sx + length * math.cos(angle), sy + length * math.sin(angle)]


def test_the_value_is_the_signed_distance_to_the_minkowski_hexagon() -> None:
    rng = np.random.default_rng(0)
    f = adcore.compile(RECT_LINE_DIST)
    for _ in range(400):
        v = random_arguments(rng)
        assert f(v) == pytest.approx(exact(v), abs=1e-9)
        # the box's corners in any order: the same box
        swapped = [v[2], v[3], v[0], v[1], *v[4:]]
        assert f(swapped) == f(v)


@pytest.mark.parametrize("near", [False, True])  # the rule, and the one for small boxes (Lipschitz alone)
def test_the_interval_rule_encloses_every_value_of_its_box(near: bool) -> None:
    rng = np.random.default_rng(1)
    f = adcore.compile(RECT_LINE_DIST)
    bounds = adcore.compile(interval(fn([Vec(8, Real)], Real, lambda v: RECT_LINE_DIST(v)), near))
    finite = 0
    for _ in range(300):
        center = random_arguments(rng)
        radius = rng.uniform(0, 25, 8) * (rng.random(8) < 0.8)  # some coordinates fixed
        box = [{"lo": c - r, "hi": c + r} for c, r in zip(center, radius)]
        r = bounds(box)
        finite += math.isfinite(r["lo"])
        for k in range(60):  # the box's corners first, then random points
            u = np.array([(k >> j) & 1 for j in range(8)], float) * 2 - 1 if k < 16 else rng.uniform(-1, 1, 8)
            x = [c + t * rr for c, t, rr in zip(center, u, radius)]
            assert r["lo"] <= f(x) <= r["hi"]
    assert finite == 300


def test_a_segment_of_no_length_is_a_point() -> None:
    """The box less the point: continuous as the segment shrinks to nothing (at length 0 the
    segment has no normal, and the formula for segments would divide by its length)."""
    f = adcore.compile(RECT_LINE_DIST)
    box = [0.0, 0.0, 10.0, 10.0]
    for length in (0.0, 1e-300, 1e-15, 1e-9, 1e-6, 1e-3):
        v = [*box, 30.0, 30.0, 30.0 + length, 30.0]
        assert f(v) == pytest.approx(math.hypot(20.0, 20.0), abs=2 * length + 1e-12)


def test_the_gradient_is_the_finite_differences_one() -> None:
    """Inside and outside: the compiled gradient against central differences of the exact value
    (points where the two step sizes disagree sit on a kink of the distance, where no derivative
    exists, and are skipped; most are kept). Axis-parallel segments are left out: beside a box's
    edge they are a kink whose central differences agree at every step size."""
    rng = np.random.default_rng(7)

    def body(v: Any) -> Any:
        r = adcore.vjp(RECT_LINE_DIST)(v)
        return r.grad(1.0)

    grad = adcore.compile(fn([Vec(8, Real)], Vec(8, Real), body))
    kept = 0
    for _ in range(300):
        v = random_arguments(rng, shortest=0.5)
        g = np.array(grad(v))
        fd = []
        for h in (1e-4, 1e-5):
            fd.append(
                np.array(
                    [
                        (exact(v[:i] + [v[i] + h] + v[i + 1 :]) - exact(v[:i] + [v[i] - h] + v[i + 1 :]))
                        / (2 * h)
                        for i in range(8)
                    ]
                )
            )
        if np.abs(fd[0] - fd[1]).max() > 1e-6:
            continue
        kept += 1
        np.testing.assert_allclose(g, fd[1], atol=1e-6)
    assert kept > 250


def test_boxes_where_the_segment_may_vanish_are_bounded_too() -> None:
    rng = np.random.default_rng(4)
    f = adcore.compile(RECT_LINE_DIST)
    g = adcore.compile(interval(fn([Vec(8, Real)], Real, lambda v: RECT_LINE_DIST(v))))
    for _ in range(100):
        v = random_arguments(rng, shortest=1e-3)
        v[6:] = [v[4] + rng.uniform(-1, 1), v[5] + rng.uniform(-1, 1)]  # at most 1.5 long
        radius = rng.uniform(0, 2, 8)
        r = g([{"lo": c - h, "hi": c + h} for c, h in zip(v, radius)])
        assert math.isfinite(r["lo"]) and math.isfinite(r["hi"])
        for _ in range(40):
            x = [c + h * rng.uniform(-1, 1) for c, h in zip(v, radius)]
            assert r["lo"] <= f(x) <= r["hi"]


def box_distance(a: list[float], b: list[float]) -> float:
    """Signed distance between axis-aligned boxes (x0, y0, x1, y1), by hand: the gap along the
    axes outside, minus the smaller overlap inside."""
    ax0, ax1 = sorted(a[0::2])
    ay0, ay1 = sorted(a[1::2])
    bx0, bx1 = sorted(b[0::2])
    by0, by1 = sorted(b[1::2])
    gx, gy = max(bx0 - ax1, ax0 - bx1), max(by0 - ay1, ay0 - by1)
    if gx > 0 or gy > 0:
        return math.hypot(max(gx, 0.0), max(gy, 0.0))
    return max(gx, gy)


@pytest.mark.parametrize("near", [False, True])
def test_rects_distance_is_the_boxes_signed_distance_and_its_rule_encloses_it(near: bool) -> None:
    rng = np.random.default_rng(5)
    f = adcore.compile(RECTS_DISTANCE)
    g = adcore.compile(interval(fn([Vec(8, Real)], Real, lambda v: RECTS_DISTANCE(v)), near))
    for _ in range(300):
        a = [*rng.uniform(-50, 50, 2)]
        a += [a[0] + rng.uniform(1, 30), a[1] - rng.uniform(1, 30)]  # top left, bottom right
        b = [*rng.uniform(-50, 50, 2)]
        b += [b[0] + rng.uniform(1, 30), b[1] - rng.uniform(1, 30)]
        assert f(a + b) == pytest.approx(box_distance(a, b), abs=1e-9)
        radius = rng.uniform(0, 20, 8)
        r = g([{"lo": c - h, "hi": c + h} for c, h in zip(a + b, radius)])
        for _ in range(30):
            x = [c + h * rng.uniform(-1, 1) for c, h in zip(a + b, radius)]
            assert r["lo"] <= f(x) <= r["hi"]


def test_far_apart_clusters_of_boxes_are_proved_apart() -> None:
    """Two clusters 400 px wide, 300 px apart in y: the Lipschitz bound alone (centre value less
    the moves, 600 px) cannot prove them apart; with the formula's interval the rule does."""
    g = adcore.compile(interval(fn([Vec(8, Real)], Real, lambda v: RECTS_DISTANCE(v))))
    f = adcore.compile(RECTS_DISTANCE)
    rng = np.random.default_rng(6)
    # boxes 40 x 14 whose top-left corners range over 400 x 400 squares, 300 px apart vertically
    a_lo, b_lo = np.array([0.0, 0.0]), np.array([0.0, 714.0])
    box = []
    for lo in (a_lo, b_lo):
        box += [{"lo": lo[0], "hi": lo[0] + 400}, {"lo": lo[1] + 14, "hi": lo[1] + 414}]
        box += [{"lo": lo[0] + 40, "hi": lo[0] + 440}, {"lo": lo[1], "hi": lo[1] + 400}]
    r = g(box)
    assert 5.0 < r["lo"] <= 300.0  # apart by more than a padding; the closest two can be 714 - 414
    for _ in range(200):
        (ax, ay), (bx, by) = rng.uniform(0, 400, 2) + a_lo, rng.uniform(0, 400, 2) + b_lo
        v = [ax, ay + 14, ax + 40, ay, bx, by + 14, bx + 40, by]
        assert r["lo"] <= f(v) <= r["hi"]


@pytest.mark.parametrize("scale", [1.0, 1e6])
def test_a_rotated_rectangles_box_over_ranges_encloses_its_values_and_keeps_its_size(scale: float) -> None:
    """bbox_rotated_rect's rule: every sampled box lies within it, and over a wide range of centres
    its width is the rectangle's (|w cos| + |h sin| plus the stroke, by hand), not the range's."""
    from energies.library.bbox import bbox_rotated_rect

    f = adcore.compile(bbox_rotated_rect)
    g = adcore.compile(interval(bbox_rotated_rect))
    rng = np.random.default_rng(7)
    for _ in range(100):
        c = rng.uniform(-1, 1, 2) * scale
        spread = rng.uniform(0, 500, 2)
        w, h, sw = rng.uniform(1, 60), rng.uniform(1, 30), rng.uniform(0, 3)
        dw, dh = rng.uniform(0, 5, 2)
        angle = rng.uniform(-180, 180) * (rng.random() < 0.7)  # most texts are not rotated
        dangle = rng.uniform(0, 10) * (rng.random() < 0.5)
        ranges = (
            [{"lo": c[k] - spread[k], "hi": c[k] + spread[k]} for k in (0, 1)],
            {"lo": w - dw, "hi": w + dw},
            {"lo": h - dh, "hi": h + dh},
            {"lo": angle - dangle, "hi": angle + dangle},
            {"lo": sw, "hi": sw},
        )
        r = g(*ranges)
        if dangle == 0.0:
            t = math.radians(angle)
            widest = (w + dw + sw) * abs(math.cos(t)) + (h + dh + sw) * abs(math.sin(t))
            assert r["width"]["hi"] <= widest + 1e-6 * (1 + scale)
        for k in range(40):
            u = rng.uniform(-1, 1, 5) if k >= 4 else np.array([(k & 1) * 2 - 1, (k >> 1) * 2 - 1, 1, 1, 1.0])
            x = (
                [c[0] + u[0] * spread[0], c[1] + u[1] * spread[1]],
                w + u[2] * dw,
                h + u[3] * dh,
                angle + u[4] * dangle,
                sw,
            )
            b = f(*x)
            for side in ("width", "height"):
                assert r[side]["lo"] <= b[side] <= r[side]["hi"]
            for j in (0, 1):
                assert r["center"][j]["lo"] <= b["center"][j] <= r["center"][j]["hi"]
