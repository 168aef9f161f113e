"""Random sampling functions of Penrose's library (`random`, `diskRandom`, `normalRandom`...).

Each draws uniform numbers from `ctx.rng` eagerly: the draws are constants of the diagram (fixed by
its variation), like Penrose's sampled inputs, which belong to no optimization stage. Arguments that
only transform the draws (`triangleRandom`'s corners, `diffusionProcess`'s matrix) may be traced.
"""

from __future__ import annotations

import math
from typing import Any

from energies.limits import MAX_LIST_LENGTH, check_size
from energies.shapes.specs import uniform_float

from .context import FunctionContext
from .fn_ops import Matrix, Num, Points, Vector, mvmul, vadd, vmul


def _constant(x: Any, what: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise ValueError(f"{what} must be a constant number (not computed from unknowns), got {x!r}")
    return float(x)


def _uniform(ctx: FunctionContext, lo: float, hi: float) -> float:
    return uniform_float(ctx.rng, lo, hi)


def random(ctx: FunctionContext, minVal: Num, maxVal: Num) -> Num:
    """A number uniform in [minVal, maxVal) (both must be constants)."""
    return _uniform(ctx, _constant(minVal, "random's minimum"), _constant(maxVal, "random's maximum"))


def unitRandom(ctx: FunctionContext) -> Num:
    return _uniform(ctx, 0.0, 1.0)


def diskRandom(ctx: FunctionContext) -> Vector:
    """A point uniform in the unit disk (radius sqrt(u1), angle 2 pi u2)."""
    u1, u2 = _uniform(ctx, 0.0, 1.0), _uniform(ctx, 0.0, 1.0)
    r, t = math.sqrt(u1), 2.0 * math.pi * u2
    return [r * math.cos(t), r * math.sin(t)]


def circleRandom(ctx: FunctionContext) -> Vector:
    """A point uniform on the unit circle."""
    t = _uniform(ctx, 0.0, 2.0 * math.pi)
    return [math.cos(t), math.sin(t)]


def sphereRandom(ctx: FunctionContext) -> Vector:
    """A point uniform on the unit sphere (z uniform in [-1, 1], azimuth uniform)."""
    u1, u2 = _uniform(ctx, 0.0, 1.0), _uniform(ctx, 0.0, 1.0)
    z = 1.0 - 2.0 * u1
    r = math.sqrt(min(max(1.0 - z * z, 0.0), 1.0))
    phi = 2.0 * math.pi * u2
    return [r * math.cos(phi), r * math.sin(phi), z]


def _randn(ctx: FunctionContext) -> float:
    """A standard normal draw by the Box-Muller transform of two uniforms (as Penrose)."""
    u1, u2 = _uniform(ctx, 0.0, 1.0), _uniform(ctx, 0.0, 1.0)
    if u1 == 0.0:  # log(0): Penrose would return an infinite draw (probability 2^-53); we return 0
        return 0.0
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)


def normalRandom(ctx: FunctionContext) -> Num:
    return _randn(ctx)


def triangleRandom(ctx: FunctionContext, a: Vector, b: Vector, c: Vector) -> Vector:
    """A point uniform in the triangle abc: (1 - s) a + s (1 - t) b + s t c with s = sqrt(u1)."""
    u1, u2 = _uniform(ctx, 0.0, 1.0), _uniform(ctx, 0.0, 1.0)
    s, t = math.sqrt(u1), u2
    return vadd(vadd(vmul(1.0 - s, a), vmul(s * (1.0 - t), b)), vmul(s * t, c))


def randomIndex(ctx: FunctionContext, minIndex: Num, maxIndex: Num) -> Num:
    """floor of a number uniform in [minIndex, maxIndex) (both constants)."""
    lo = _constant(minIndex, "randomIndex's minimum")
    hi = _constant(maxIndex, "randomIndex's maximum")
    return float(math.floor(_uniform(ctx, lo, hi)))


def diffusionProcess(ctx: FunctionContext, n: int, X0: Vector, A: Matrix, omega: Vector) -> Points:
    """n points of the 2D random walk X[i] = X[i-1] + A w[i] + omega with w[i] standard normal."""
    steps = int(_constant(n, "diffusionProcess's n"))
    check_size("diffusionProcess's n", steps, MAX_LIST_LENGTH)
    if steps < 1:
        raise ValueError(f"diffusionProcess: n must be at least 1, got {steps}")
    xs = [list(X0)]
    for _ in range(1, steps):
        w = [_randn(ctx), _randn(ctx)]
        xs.append(vadd(vadd(xs[-1], mvmul(A, w)), list(omega)))
    return xs
