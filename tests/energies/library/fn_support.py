"""Test support for computed functions: every float of the arguments becomes an adcore input; the
output (number, vector, matrix, point list, path, color) is flattened to a vector of floats.

`trace_check` runs a function eagerly and traced (adcore.fn + interp) and compares; `grad_check`
compares the reverse-mode gradient of a fixed random weighting of the outputs with central finite
differences of the eager function.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from adcore import Real, Vec, fn, interp, vjp
from energies.library.paths import PathCmd


@dataclass
class Shape:
    kind: str
    props: dict[str, Any] = field(default_factory=dict)
    name: str = "s"


def floats_in(obj: Any) -> list[float]:
    """Float leaves of a nested argument or result, in order (ints, bools and strings are static)."""
    if obj is None or isinstance(obj, (bool, int, str)):
        return []
    if isinstance(obj, float):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [x for o in obj for x in floats_in(o)]
    if isinstance(obj, dict):
        return [x for v in obj.values() for x in floats_in(v)]
    if isinstance(obj, Shape):
        return floats_in(obj.props)
    if isinstance(obj, PathCmd):
        return floats_in(obj.contents)
    if hasattr(obj, "is_none"):  # energies.shapes.Color.none()
        return []
    raise TypeError(f"cannot flatten {obj!r}")


def leaves_out(obj: Any) -> list[Any]:
    """Scalar leaves (floats or traced) of a result, in order."""
    if obj is None or isinstance(obj, (bool, str)) or hasattr(obj, "is_none"):
        return []
    if isinstance(obj, (list, tuple)):
        return [x for o in obj for x in leaves_out(o)]
    if isinstance(obj, PathCmd):
        return leaves_out(obj.contents)
    return [obj]


def rebuild(obj: Any, values: Any) -> Any:
    if obj is None or isinstance(obj, (bool, int, str)):
        return obj
    if isinstance(obj, float):
        return next(values)
    if isinstance(obj, (list, tuple)):
        return [rebuild(o, values) for o in obj]
    if isinstance(obj, dict):
        return {k: rebuild(v, values) for k, v in obj.items()}
    if isinstance(obj, Shape):
        return Shape(obj.kind, rebuild(obj.props, values), obj.name)
    if isinstance(obj, PathCmd):
        return PathCmd(obj.cmd, rebuild(obj.contents, values))
    raise TypeError(f"cannot rebuild {obj!r}")


def _call(f: Callable[..., Any], args: Sequence[Any], xs: Sequence[Any]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*rebuild(list(args), iter(list(xs))))


def eager_out(f: Callable[..., Any], args: Sequence[Any], xs: Sequence[float]) -> list[float]:
    return [float(v) for v in leaves_out(_call(f, args, xs))]


def trace_check(f: Callable[..., Any], *args: Any) -> tuple[Any, list[float]]:
    """Traced and eager results agree (bit for bit up to 1e-12); returns (value fn, flat inputs)."""
    flat = floats_in(list(args))
    want = eager_out(f, args, flat)
    n, m = len(flat), len(want)
    value = fn([Vec(n, Real)], Vec(m, Real), lambda x: leaves_out(_call(f, args, [x[i] for i in range(n)])))
    got = interp(value)(flat)
    assert len(got) == m
    for g, w in zip(got, want):
        assert (math.isnan(g) and math.isnan(w)) or math.isclose(g, w, rel_tol=1e-12, abs_tol=1e-12), (
            got,
            want,
        )
    return value, flat


def grad_check(
    f: Callable[..., Any], *args: Any, h: float = 1e-6, rtol: float = 1e-5, atol: float = 1e-6
) -> None:
    """vjp of w . f(x) (interpreted) against central differences of the eager f, w fixed random."""
    flat = floats_in(list(args))
    m = len(eager_out(f, args, flat))
    w = list(np.random.default_rng(7).uniform(0.5, 1.5, m))
    n = len(flat)

    def weighted(x: Any) -> Any:
        outs = leaves_out(_call(f, args, [x[i] for i in range(n)]))
        total: Any = 0.0
        for wi, o in zip(w, outs):
            total = total + wi * o
        return total

    value = fn([Vec(n, Real)], Real, weighted)
    grad = fn([Vec(n, Real)], Vec(n, Real), lambda x: vjp(value)(x).grad(1.0))
    g = interp(grad)(flat)

    def scalar(xs: list[float]) -> float:
        return float(np.dot(w, eager_out(f, args, xs)))

    f0 = scalar(flat)
    for i in range(n):
        up, down = list(flat), list(flat)
        up[i] += h
        down[i] -= h
        fd = (scalar(up) - scalar(down)) / (2 * h)
        tol = atol + rtol * max(1.0, abs(fd)) + 1e-14 * abs(f0) / h
        assert abs(g[i] - fd) <= tol, f"d/dx[{i}]: adcore {g[i]} vs finite difference {fd}"
