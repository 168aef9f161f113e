"""Run-time trip counts and the zero values of the elements a counted loop does not compute.

A loop's count is a Python int (checked now) or a traced Int (checked when the loop runs: see
adcore/ir.py); `vec`, `sum` and the loops of `adcore.loops` take it the same way.
"""

from __future__ import annotations

from typing import Any

from .errors import AdcoreTypeError, RangeError, count_message
from .ir import Atom, Lit
from .types import Int, Scalar, StructT, Type, VecT
from .values import Sym, current_name, lift


def traced_count(what: str, n: int, count: Any) -> Atom | None:
    """The atom of a loop's run-time trip count (None: n), checked where it is known now."""
    if count is None:
        return None
    if isinstance(count, int) and not isinstance(count, bool):
        eager_count(what, n, count)
        return Lit(count, Int)
    if not isinstance(count, Sym) or count.ty != Int:
        raise AdcoreTypeError(f"in {current_name()}: the count of {what} must be an Int, got {count!r}")
    return lift(count)


def eager_count(what: str, n: int, count: Any) -> int:
    """A trip count given as a Python int (None: n), checked: 0 <= count <= n."""
    if count is None:
        return n
    if not isinstance(count, int) or isinstance(count, bool):
        raise AdcoreTypeError(f"{what}: the count must be an int, got {count!r}")
    if not 0 <= count <= n:
        raise RangeError(count_message(current_name(), count, n))
    return count


def zero_value(t: Type) -> Any:
    """The user-level zero of a type (the elements of a counted `vec` beyond its count)."""
    if isinstance(t, Scalar):
        return 0.0 if t.name == "Real" else 0 if t == Int else False
    if isinstance(t, VecT):
        return [zero_value(t.elem) for _ in range(t.n)]
    if isinstance(t, StructT):
        return {k: zero_value(ft) for k, ft in t.fields}
    raise AdcoreTypeError(f"no zero of type {t!r}")
