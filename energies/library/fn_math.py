"""Scalar math and list reductions of Penrose's computed functions (`sin`, `mod`, `sum`, `maxList`...).

Names and argument orders are Penrose's; note `atan2(x, y)` is the angle of the vector (x, y), i.e.
C's atan2(y, x), as in Penrose's Style library.
"""

from __future__ import annotations

import builtins
import math
from typing import Any

from energies.limits import MAX_LIST_LENGTH, check_size

from . import pmath as am
from .fn_ops import Matrix, Num, Vector, add_n, max_n, min_n
from .fn_ops import sqr as sqr  # Penrose's `sqr`, one of the computed functions (functions.py)
from .loops import array_of, maximum, minimum, total, written_as_loop


def static_index(i: Any, what: str) -> int:
    """An index argument as a Python int (it fixes which element is read, so it must be a constant)."""
    if isinstance(i, bool) or not isinstance(i, (int, float)):
        raise ValueError(f"{what} must be a constant integer, got {i!r}")
    if isinstance(i, float) and not i.is_integer():
        raise ValueError(f"{what} must be an integer, got {i!r}")
    return int(i)


def static_count(n: Any, what: str, limit: int = MAX_LIST_LENGTH) -> int:
    """A count argument that sizes a list the function builds: a constant integer, at most `limit`."""
    k = static_index(n, what)
    check_size(what, k, limit)
    return k


def _unary(f: Any) -> Any:
    def apply(x: Num) -> Num:
        return f(x)

    return apply


acos, acosh, asin, asinh, atan, atanh = map(_unary, (am.acos, am.acosh, am.asin, am.asinh, am.atan, am.atanh))
cbrt, cos, cosh, exp, expm1 = map(_unary, (am.cbrt, am.cos, am.cosh, am.exp, am.expm1))
log, log2, log10, log1p = map(_unary, (am.log, am.log2, am.log10, am.log1p))
sin, sinh, tan, tanh = map(_unary, (am.sin, am.sinh, am.tan, am.tanh))


def ceil(x: Num) -> Num:
    return am.ceil(x)


def floor(x: Num) -> Num:
    return am.floor(x)


def trunc(x: Num) -> Num:
    return am.trunc(x)


def round(x: Num) -> Num:  # noqa: A001 - Penrose's name
    """JavaScript's Math.round: halves round up (toward +inf)."""
    return am.floor(x + 0.5)


def sign(x: Num) -> Num:
    return am.sign(x)


def mod(a: Num, n: Num) -> Num:
    """a - n floor(a / n): the result has the sign of n (unlike JavaScript's %)."""
    return a - n * am.floor(a / n)


def atan2(x: Num, y: Num) -> Num:
    return am.atan2(y, x)


def pow(x: Num, y: Num) -> Num:  # noqa: A001 - Penrose's name
    return am.pow(x, y)


def sqrt(x: Num) -> Num:
    return am.sqrt(x)


def max(x: Num, y: Num) -> Num:  # noqa: A001 - Penrose's name
    return am.max(x, y)


def min(x: Num, y: Num) -> Num:  # noqa: A001 - Penrose's name
    return am.min(x, y)


def abs(x: Num) -> Num:  # noqa: A001 - Penrose's name
    return am.abs(x)


def toRadians(theta: Num) -> Num:
    return (math.pi / 180.0) * theta


def toDegrees(theta: Num) -> Num:
    return (180.0 / math.pi) * theta


def MathE() -> Num:
    return math.e


def MathPI() -> Num:
    return math.pi


@written_as_loop
def sum(xs: Vector) -> Num:  # noqa: A001 - Penrose's name
    arr = array_of(xs)
    return add_n(list(xs)) if arr is None else total(len(xs), arr.__getitem__)


@written_as_loop
def maxList(xs: Vector) -> Num:
    arr = array_of(xs)
    return max_n(list(xs)) if arr is None else maximum(len(xs), arr.__getitem__)


@written_as_loop
def minList(xs: Vector) -> Num:
    arr = array_of(xs)
    return min_n(list(xs)) if arr is None else minimum(len(xs), arr.__getitem__)


def count(xs: Vector) -> Num:
    return float(len(xs))


@written_as_loop
def average(xs: Vector) -> Num:
    return sum(xs) / float(builtins.max(1, len(xs)))


def average2(x: Num, y: Num) -> Num:
    return (x + y) / 2.0


def get(xs: Vector, i: int) -> Num:
    k = static_index(i, "get's index")
    if not 0 <= k < len(xs):
        raise ValueError(f"get: index {k} out of range for a list of {len(xs)}")
    return xs[k]


def oneBasedElement(points: Matrix, i: int) -> Vector:
    """The i-th element of a list, counting from 1."""
    k = static_index(i, "oneBasedElement's index")
    if not 1 <= k <= len(points):
        raise ValueError(f"oneBasedElement: index {k} out of range 1..{len(points)}")
    return list(points[k - 1])


def repeat(n: int, k: Num) -> Vector:
    count_ = static_count(n, "repeat's count n")
    if count_ < 0:
        raise ValueError(f"repeat: count must be non-negative, got {count_}")
    # a repeated list is as many lists: repeat(1000, repeat(1000, 1)) is a million numbers
    check_size("repeat's result", count_ * _flat_size(k), MAX_LIST_LENGTH)
    return [k] * count_


def _flat_size(v: Any) -> int:
    return builtins.sum(map(_flat_size, v)) if isinstance(v, list | tuple) else 1


def TeXify(s: str) -> str:
    """`a_b_c` -> `{a}_{{b}_{{c}}}`: every underscore opens a nested subscript."""
    if not isinstance(s, str):
        raise ValueError(f"TeXify expects a string, got {s!r}")
    parts = s.split("_")
    out = "{" + parts[-1] + "}"
    for part in reversed(parts[:-1]):
        out = "{" + part + "}_{" + out + "}"
    return out
