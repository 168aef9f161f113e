"""Test support: sampling oracles and a gradient check against central finite differences (the test
shapes and the flattening of arguments are fn_support's)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from adcore import Real, Vec, fn, interp, vjp

from .fn_support import Shape, floats_in, rebuild  # noqa: F401 (the tests import Shape from here)


def traced(f: Callable[..., Any], args: Sequence[Any]) -> tuple[Any, Any, list[float]]:
    """(value fn, gradient fn, flat inputs): `f(*args)` traced with every float of `args` an input."""
    flat = floats_in(list(args))
    n = len(flat)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = fn([Vec(n, Real)], Real, lambda x: f(*rebuild(list(args), iter([x[i] for i in range(n)]))))
        grad = fn([Vec(n, Real)], Vec(n, Real), lambda x: vjp(value)(x).grad(1.0))
    return value, grad, flat


def eager(f: Callable[..., Any], args: Sequence[Any], flat: Sequence[float]) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(f(*rebuild(list(args), iter(list(flat)))))


def check_gradient(
    f: Callable[..., Any], *args: Any, h: float = 1e-6, rtol: float = 1e-5, atol: float = 1e-6
) -> None:
    """Reverse-mode gradient (adcore vjp, interpreted) against central finite differences of the eager
    function, and the traced value against the eager value."""
    value, grad, flat = traced(f, args)
    v_eager = eager(f, args, flat)
    v_traced = interp(value)(flat)
    assert math.isclose(v_traced, v_eager, rel_tol=1e-12, abs_tol=1e-12), (v_traced, v_eager)
    g = interp(grad)(flat)
    for i in range(len(flat)):
        up, down = list(flat), list(flat)
        up[i] += h
        down[i] -= h
        fd = (eager(f, args, up) - eager(f, args, down)) / (2 * h)
        # truncation (relative) plus rounding (eps |f| / h) error of the central difference
        tol = atol + rtol * max(1.0, abs(fd)) + 1e-15 * abs(v_eager) / h * 10
        assert abs(g[i] - fd) <= tol, (i, g[i], fd)


# -- sampling oracles ------------------------------------------------------------------------------


def circle_boundary(c: Sequence[float], r: float, n: int = 4000) -> np.ndarray:
    t = np.linspace(0, 2 * np.pi, n, endpoint=False)
    return np.stack([c[0] + r * np.cos(t), c[1] + r * np.sin(t)], axis=1)


def ellipse_boundary(c: Sequence[float], rx: float, ry: float, n: int = 4000) -> np.ndarray:
    t = np.linspace(0, 2 * np.pi, n, endpoint=False)
    return np.stack([c[0] + rx * np.cos(t), c[1] + ry * np.sin(t)], axis=1)


def polygon_boundary(
    pts: Sequence[Sequence[float]], n_per_edge: int = 400, closed: bool = True
) -> np.ndarray:
    p = np.asarray(pts, dtype=float)
    edges = range(len(p)) if closed else range(len(p) - 1)
    t = np.linspace(0, 1, n_per_edge, endpoint=False)[:, None]
    out = [p[i] + t * (p[(i + 1) % len(p)] - p[i]) for i in edges]
    if not closed:
        out.append(p[-1:])
    return np.concatenate(out)


def rect_corners(c: Sequence[float], w: float, h: float, clockwise_deg: float = 0.0) -> np.ndarray:
    a = -math.radians(clockwise_deg)
    rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    local = np.array([[w / 2, h / 2], [-w / 2, h / 2], [-w / 2, -h / 2], [w / 2, -h / 2]])
    return local @ rot.T + np.asarray(c)


def extent(points: np.ndarray) -> tuple[float, float, float, float]:
    return points[:, 0].min(), points[:, 1].min(), points[:, 0].max(), points[:, 1].max()


def box_extent(b: dict) -> tuple[float, float, float, float]:
    cx, cy = b["center"]
    return cx - b["width"] / 2, cy - b["height"] / 2, cx + b["width"] / 2, cy + b["height"] / 2


def inside_polygon(p: np.ndarray, poly: np.ndarray) -> np.ndarray:
    """Even-odd rule, vectorized over the points p (k x 2)."""
    x, y = p[:, 0][:, None], p[:, 1][:, None]
    a, b = poly, np.roll(poly, -1, axis=0)
    crosses = (a[:, 1] > y) != (b[:, 1] > y)
    xint = a[:, 0] + (y - a[:, 1]) * (b[:, 0] - a[:, 0]) / np.where(
        b[:, 1] == a[:, 1], 1e-300, b[:, 1] - a[:, 1]
    )
    return (crosses & (x < xint)).sum(axis=1) % 2 == 1


def origin_signed_distance(poly: np.ndarray) -> float:
    """Signed distance from the origin to a polygon (negative inside), by brute force over its edges."""
    a, b = poly, np.roll(poly, -1, axis=0)
    ab = b - a
    t = np.clip(-(a * ab).sum(1) / np.maximum((ab * ab).sum(1), 1e-300), 0, 1)
    d = np.sqrt(((a + t[:, None] * ab) ** 2).sum(1)).min()
    return -d if inside_polygon(np.zeros((1, 2)), poly)[0] else d


def minkowski_signed_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Signed distance between two convex point sets: origin vs. the hull of {a - b}."""
    from scipy.spatial import ConvexHull

    diff = (a[:, None, :] - b[None, :, :]).reshape(-1, 2)
    hull = ConvexHull(diff)
    return origin_signed_distance(diff[hull.vertices])


def grid_minimum(
    fun: Callable[[np.ndarray, np.ndarray], np.ndarray], center: Sequence[float], span: float
) -> float:
    """min over the plane of fun(X, Y), by repeatedly zooming a 201 x 201 grid on the best cell."""
    c = np.asarray(center, dtype=float)
    best = math.inf
    for _ in range(6):
        xs = np.linspace(c[0] - span, c[0] + span, 201)
        ys = np.linspace(c[1] - span, c[1] + span, 201)
        X, Y = np.meshgrid(xs, ys)
        V = fun(X, Y)
        k = np.unravel_index(np.argmin(V), V.shape)
        c, best = np.array([X[k], Y[k]]), float(V[k])
        span /= 10
    return best
