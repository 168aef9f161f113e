"""The library's one set of scalar, vector and matrix helpers (Penrose's `ops` and `ad` helpers).

Polymorphic macros over lists of scalars: each runs on Python floats and on traced adcore values.
Type aliases name the value kinds of docs/energies-design.md; `functions.py` reads them from the
annotations of each computed function to describe its parameters.

Summation order is part of the contract, because floating-point sums depend on it and our results
follow Penrose's to the last bit where its own do:

- `vdot`, `vnormsq` fold left from 0: ((0 + a0·b0) + a1·b1) + ..., as Penrose's `ops.vdot` and
  `ops.vnormsq` (`_.reduce(terms, add, 0)`);
- `add_n` folds left from the first term: (x0 + x1) + x2 + ..., 0 for no terms, as Penrose's `addN`
  (its code generator reduces the terms without a start). A Penrose function that instead sums
  from 0 in a loop (`distributeHorizontally`) writes `add_n([0.0, *terms])`;
- `max_n`, `min_n` fold left from the first term with Penrose's select-based max and min (`pmath`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from adcore import and_, binary, eq, not_, or_, select
from energies.limits import MAX_MATRIX_PRODUCT, check_size

from . import pmath as am

Num = Any  # a float or a traced scalar
Vector = list  # list of Num
Matrix = list  # list of rows (lists of Num)
Points = list  # list of 2-element lists
Color = Any  # rgba list of 4 Num, or energies.shapes.Color.none()
PathData = list  # list of energies.library.paths.PathCmd
PathList = list  # list of PathData
Shape = Any  # object with .kind and .props
ShapeList = list  # list of Shape
ClipData = Any  # a Shape, or None for Penrose's NoClip

EPS_DENOM = 1e-5  # Penrose's vnormalize adds this to the norm so a zero vector stays finite
INF = math.inf

__all__ = ["and_", "eq", "not_", "or_", "select"]


def div(a: Num, b: Num) -> Num:
    """a / b with IEEE results (inf, NaN) on plain floats too, as Penrose's numbers behave."""
    return binary("div", a, b, real=True)


def sqr(x: Num) -> Num:
    """Penrose's `squared`."""
    return x * x


def relu(x: Num) -> Num:
    return am.max(x, 0.0)


def pt(v: Sequence[Num]) -> Vector:
    """The first two coordinates of a point, as a fresh list (accepts tuples and traced arrays)."""
    return [v[0], v[1]]


def vadd(u: Sequence[Num], v: Sequence[Num]) -> Vector:
    _same_length(u, v)
    return [a + b for a, b in zip(u, v)]


def vsub(u: Sequence[Num], v: Sequence[Num]) -> Vector:
    _same_length(u, v)
    return [a - b for a, b in zip(u, v)]


def vmul(c: Num, v: Sequence[Num]) -> Vector:
    return [c * a for a in v]


def vdiv(v: Sequence[Num], c: Num) -> Vector:
    return [div(a, c) for a in v]


def vneg(v: Sequence[Num]) -> Vector:
    return [-a for a in v]


def vdot(u: Sequence[Num], v: Sequence[Num]) -> Num:
    _same_length(u, v)
    total: Num = 0.0
    for a, b in zip(u, v):
        total = total + a * b
    return total


def vnormsq(v: Sequence[Num]) -> Num:
    total: Num = 0.0
    for a in v:
        total = total + a * a
    return total


def vnorm(v: Sequence[Num]) -> Num:
    return am.sqrt(vnormsq(v))


def vdist(u: Sequence[Num], v: Sequence[Num]) -> Num:
    return vnorm(vsub(u, v))


def vdistsq(u: Sequence[Num], v: Sequence[Num]) -> Num:
    return vnormsq(vsub(u, v))


def vnormalize(v: Sequence[Num]) -> Vector:
    """v / (|v| + 1e-5), as Penrose (a zero vector maps to zero instead of NaN)."""
    size = vnorm(v) + EPS_DENOM
    return vdiv(v, size)


def vmove(v: Sequence[Num], c: Num, u: Sequence[Num]) -> Vector:
    """v + c u."""
    return vadd(v, vmul(c, u))


def rot90(v: Sequence[Num]) -> Vector:
    """[x, y] rotated a quarter turn counterclockwise."""
    x, y = _two(v)
    return [-y, x]


def vrot(v: Sequence[Num], degrees: Num) -> Vector:
    """[x, y] rotated counterclockwise by an angle in degrees."""
    return rotate(v, rotation(degrees))


def rotation(degrees: Num) -> tuple[Num, Num]:
    """(cos, sin) of an angle in degrees: computed once for the points one rotation moves (a sine
    or cosine is a call the compiler cannot merge)."""
    a = degrees * (math.pi / 180.0)
    return am.cos(a), am.sin(a)


def rotate(v: Sequence[Num], cos_sin: tuple[Num, Num]) -> Vector:
    """[x, y] rotated counterclockwise by the angle of `rotation(...)`."""
    x, y = _two(v)
    c, s = cos_sin
    return [c * x - s * y, s * x + c * y]


def cross2(u: Sequence[Num], v: Sequence[Num]) -> Num:
    (a, b), (c, d) = _two(u), _two(v)
    return a * d - b * c


def cross3(u: Sequence[Num], v: Sequence[Num]) -> Vector:
    if len(u) != 3 or len(v) != 3:
        raise ValueError(f"cross product expects two 3-vectors, got lengths {len(u)} and {len(v)}")
    return [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]]


def angle_between(u: Sequence[Num], v: Sequence[Num]) -> Num:
    """Unsigned angle in [0, pi]; the cosine is shrunk by 1e-10 so rounding never leaves acos's domain."""
    return am.acos((1.0 - 1e-10) * vdot(vnormalize(u), vnormalize(v)))


def angle_from(u: Sequence[Num], v: Sequence[Num]) -> Num:
    """Signed angle from u to v in [-pi, pi] (2D)."""
    return am.atan2(cross2(u, v), vdot(u, v))


def clamp(lo: Num, hi: Num, x: Num) -> Num:
    return am.max(lo, am.min(hi, x))


def vabs(v: Sequence[Num]) -> Vector:
    return [am.abs(a) for a in v]


def vmax(u: Sequence[Num], v: Sequence[Num]) -> Vector:
    return [am.max(a, b) for a, b in zip(u, v)]


def msign(x: Num) -> Num:
    """-1 for negative x, else 1 (never 0)."""
    return select(x < 0.0, -1.0, 1.0)


def add_n(xs: Sequence[Num]) -> Num:
    """Penrose's addN: a left fold from the first term (module docstring), 0 for no terms."""
    return _fold(xs, lambda a, b: a + b) if xs else 0.0


def max_n(xs: Sequence[Num]) -> Num:
    if not xs:
        raise ValueError("maximum of an empty list")
    return _fold(xs, am.max)


def min_n(xs: Sequence[Num]) -> Num:
    if not xs:
        raise ValueError("minimum of an empty list")
    return _fold(xs, am.min)


def _fold(xs: Sequence[Num], op: Any) -> Num:
    """op(op(op(x0, x1), x2), ...): the left fold from the first term all of Penrose's n-ary sums,
    maxima and minima use."""
    out = xs[0]
    for x in xs[1:]:
        out = op(out, x)
    return out


def mvmul(a: Sequence[Sequence[Num]], v: Sequence[Num]) -> Vector:
    return [vdot(row, v) for row in a]


def mmmul(a: Sequence[Sequence[Num]], b: Sequence[Sequence[Num]]) -> Matrix:
    if not a or len(a[0]) != len(b):
        raise ValueError(f"matrix product of {len(a)}x{len(a[0]) if a else 0} and {len(b)}x? matrices")
    work = len(a) * len(b) * (len(b[0]) if b else 0)
    check_size("a matrix product's multiply-adds", work, MAX_MATRIX_PRODUCT)
    cols = list(zip(*b))
    return [[vdot(row, col) for col in cols] for row in a]


def mmadd(a: Sequence[Sequence[Num]], b: Sequence[Sequence[Num]]) -> Matrix:
    return [vadd(r, s) for r, s in zip(a, b)]


def smmul(c: Num, a: Sequence[Sequence[Num]]) -> Matrix:
    return [vmul(c, row) for row in a]


def select_vec(cond: Any, u: Sequence[Num], v: Sequence[Num]) -> Vector:
    return [select(cond, a, b) for a, b in zip(u, v)]


def first_minimum(candidates: Sequence[tuple[Num, Sequence[Num]]], start: Sequence[Num]) -> Vector:
    """The payload of the smallest key (the first on ties), starting from `start` at key +inf.

    Penrose's queries scan candidates keeping the running minimum and overwrite the payload whenever
    the key equals that minimum; this keeps the same tie rule (the last equal key wins, as there)."""
    best: Num = INF
    payload = list(start)
    for key, value in candidates:
        best = select(best < key, best, key)
        payload = select_vec(eq(best, key), value, payload)
    return payload


def consecutive_pairs(items: Sequence[Any], closed: bool) -> list[tuple[Any, Any]]:
    n = len(items) if closed else len(items) - 1
    return [(items[i], items[(i + 1) % len(items)]) for i in range(max(n, 0))]


def consecutive_triples(items: Sequence[Any], closed: bool) -> list[tuple[Any, Any, Any]]:
    n = len(items) if closed else len(items) - 2
    m = len(items)
    return [(items[i], items[(i + 1) % m], items[(i + 2) % m]) for i in range(max(n, 0))]


def _two(v: Sequence[Num]) -> tuple[Num, Num]:
    if len(v) != 2:
        raise ValueError(f"expected a 2D vector, got {len(v)} components")
    return v[0], v[1]


def _same_length(u: Sequence[Num], v: Sequence[Num]) -> None:
    if len(u) != len(v):
        raise ValueError(f"expected vectors of the same length, got {len(u)} and {len(v)}")
