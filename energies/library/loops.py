"""Library functions over long lists, as loops.

A goal's argument that is a long list of plain slots (a polygon's points, a list of unknowns)
reaches library code as a list that also carries `array`: the same values as one adcore array
(`energies.expr.LoopList`). The helpers here run over that array with one loop (adcore's `fold`),
so compiled code does not grow with the list; elsewhere (plain numbers, short lists, lazy values)
the callers run their unrolled code. Both do every operation in the same order: a left fold that
starts from the first term, Penrose's `x > y ? x : y` for max (`pmath`), so the numbers are the
same bit for bit, and so is the derivative at ties (the later element's).

Such a list longer than `energies.expr.MAX_UNROLLED` may only reach functions written for loops:
any other one gets a clear error as it reads the elements, not a module too large to compile.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from adcore import fold

from . import pmath as am


def written_as_loop(f: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a computed function returning one number that reads long lists through `array_of`: the
    Style evaluator defers its calls on long lists of unknowns (`energies.expr.Deferred`), so that
    it runs on the list as an array when its goal is compiled."""
    f.loops = True  # type: ignore[attr-defined]
    return f


def array_of(xs: Any) -> Any | None:
    """The adcore array of a list replayed as a loop, or None (plain numbers, short lists)."""
    return getattr(xs, "array", None)


def element(arr: Any, i: Any) -> Any:
    """Element i of an array as the unrolled code sees it: a scalar, or a list of its coordinates."""
    e = arr[i]
    return list(e) if hasattr(e, "leaves") else e


def left_fold(n: int, term: Callable[[Any], Any], combine: Callable[[Any, Any], Any]) -> Any:
    """combine(...combine(term(0), term(1))..., term(n-1)) by one loop (n >= 1)."""
    return fold(n - 1, term(0), lambda acc, i: combine(acc, term(i + 1)))


def total(n: int, term: Callable[[Any], Any]) -> Any:
    """term(0) + ... + term(n-1), from the left (0.0 for n = 0, as `add_n`)."""
    return left_fold(n, term, lambda a, b: a + b) if n else 0.0


def maximum(n: int, term: Callable[[Any], Any]) -> Any:
    return left_fold(n, term, am.max)


def minimum(n: int, term: Callable[[Any], Any]) -> Any:
    return left_fold(n, term, am.min)


def following(i: Any, k: int, n: int) -> Any:
    """Index i + k of a closed chain of n elements (wrapping around)."""
    return (i + k) % n


def chain(
    points: Any, closed: bool, k: int, term: Callable[..., Any]
) -> tuple[int, Callable[[Any], Any]] | None:
    """For a list replayed as a loop: (m, t), t(i) = term(p_i, ..., p_{i+k-1}) over its m
    consecutive k-tuples (wrapping around a closed chain), as `fn_ops.consecutive_pairs` and
    `consecutive_triples` list them; None for any other list."""
    arr = array_of(points)
    if arr is None:
        return None
    n = len(points)
    m = max(n if closed else n - (k - 1), 0)
    return m, lambda i: term(*(element(arr, i if j == 0 else following(i, j, n)) for j in range(k)))


__all__ = [
    "array_of",
    "chain",
    "element",
    "following",
    "left_fold",
    "maximum",
    "minimum",
    "total",
    "written_as_loop",
]
