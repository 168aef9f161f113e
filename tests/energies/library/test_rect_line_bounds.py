"""rectLineDist's value against exact geometry, and its interval rule (a Lipschitz bound) against
the values it must enclose.

Oracles: the signed distance from the origin to the convex hull of the box's corners minus the
segment's endpoints, computed here with scipy's convex hull (the Minkowski sum of the box and the
negated segment is that hull); sampled values of the compiled function inside each box.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial import ConvexHull

import adcore
from adcore import Real, Vec, fn, interval
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


def test_the_interval_rule_encloses_every_value_of_its_box() -> None:
    rng = np.random.default_rng(1)
    f = adcore.compile(RECT_LINE_DIST)
    bounds = adcore.compile(interval(fn([Vec(8, Real)], Real, lambda v: RECT_LINE_DIST(v))))
    finite = 0
    for _ in range(300):
        center = random_arguments(rng, shortest=30.0)
        radius = rng.uniform(0, 12, 8) * (rng.random(8) < 0.8)  # some coordinates fixed
        box = [{"lo": c - r, "hi": c + r} for c, r in zip(center, radius)]
        r = bounds(box)
        if math.isnan(r["lo"]):
            continue
        finite += 1
        for k in range(60):  # the box's corners first, then random points
            u = np.array([(k >> j) & 1 for j in range(8)], float) * 2 - 1 if k < 16 else rng.uniform(-1, 1, 8)
            x = [c + t * rr for c, t, rr in zip(center, u, radius)]
            assert r["lo"] <= f(x) <= r["hi"]
    assert finite > 200


def test_the_rule_gives_anything_where_the_segment_may_vanish() -> None:
    g = adcore.compile(interval(fn([Vec(8, Real)], Real, lambda v: RECT_LINE_DIST(v))))
    v = [0.0, 0.0, 10.0, 10.0, 30.0, 30.0, 31.0, 30.0]  # a segment 1 long
    near = g([{"lo": c - 0.1, "hi": c + 0.1} for c in v])
    assert near["lo"] < exact(v) < near["hi"] and near["hi"] - near["lo"] < 1.0
    assert all(math.isnan(g([{"lo": c - 0.6, "hi": c + 0.6} for c in v])[k]) for k in ("lo", "hi"))
