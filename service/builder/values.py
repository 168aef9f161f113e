"""Values of builder programs: Python's numbers, strings and sequences, lazy values, and `Vec`.

A builder program computes with what Python gives it: numbers, tuples, lists, numpy arrays, hex
colors, shapes (`service.builder.shapes.Shape`) and lazy values (`energies.expr.Node`: an input,
or anything computed from one; they have + - * / ** abs and comparisons). Shape properties read
back as `Vec`s where they are vectors, so `a.center - b.center` is a vector and `a.center[0] + 10`
a number. `to_style` turns any of them into the values the Style evaluator makes
(docs/energies-design.md: floats, lists, rgba lists, ShapeInstances, Nodes), which is all the
energy compiler and the renderer ever see.
"""

from __future__ import annotations

import numbers
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from energies.diagram import ShapeInstance
from energies.expr import Node
from energies.library.paths import PathCmd
from energies.shapes import Color

from .errors import BuilderError


def is_scalar(v: Any) -> bool:
    """A number or a lazy number (booleans are not numbers here)."""
    return isinstance(v, numbers.Real | Node) and not isinstance(v, bool | np.bool_)


class Vec(list):
    """A vector of numbers and lazy values. It is a list (the library and Python read it as one),
    with a vector's arithmetic: `+` and `-` between vectors of one length, `*` and `/` by a number,
    unary `-`, and `@` the dot product."""

    __slots__ = ()

    def _zip(self, other: Any, op: str) -> list[tuple[Any, Any]]:
        if is_scalar(other) or not isinstance(other, list | tuple | np.ndarray):
            raise BuilderError(
                f"vector {op} {describe(other)}: {op} takes two vectors of one length "
                "(scale a vector with * or /)"
            )
        if len(other) != len(self):
            raise BuilderError(f"vector {op} vector: lengths {len(self)} and {len(other)} differ")
        return list(zip(self, other))

    def _map2(self, other: Any, op: str, f: Callable[[Any, Any], Any]) -> Vec:
        return Vec(f(a, b) for a, b in self._zip(other, op))

    def __add__(self, other: Any) -> Vec:
        return self._map2(other, "+", operator.add)

    def __radd__(self, other: Any) -> Vec:
        return self._map2(other, "+", lambda a, b: b + a)

    def __sub__(self, other: Any) -> Vec:
        return self._map2(other, "-", operator.sub)

    def __rsub__(self, other: Any) -> Vec:
        return self._map2(other, "-", lambda a, b: b - a)

    def __mul__(self, k: Any) -> Vec:
        if not is_scalar(k):
            raise BuilderError(
                f"vector * {describe(k)}: * scales a vector by a number (@ is the dot product)"
            )
        return Vec(a * k for a in self)

    def __rmul__(self, k: Any) -> Vec:
        if not is_scalar(k):
            raise BuilderError(f"{describe(k)} * vector: * scales a vector by a number")
        return Vec(k * a for a in self)

    def __truediv__(self, k: Any) -> Vec:
        if not is_scalar(k):
            raise BuilderError(f"vector / {describe(k)}: / divides a vector by a number")
        return Vec(a / k for a in self)

    def __neg__(self) -> Vec:
        return Vec(-a for a in self)

    def __pos__(self) -> Vec:
        return self

    def __matmul__(self, other: Any) -> Any:
        total: Any = 0.0
        for a, b in self._zip(other, "@"):
            total = total + a * b
        return total

    def __rmatmul__(self, other: Any) -> Any:
        return self.__matmul__(other)

    # list's in-place + and * extend and repeat: a vector's are the arithmetic above
    __iadd__ = __add__
    __imul__ = __mul__

    def __repr__(self) -> str:
        return f"Vec({list.__repr__(self)})"


def describe(v: Any) -> str:
    """A value's kind with its article, in the words of the Style language's messages."""
    if isinstance(v, bool | np.bool_):
        return "a boolean"
    if is_scalar(v):
        return "a number"
    if isinstance(v, str):
        return "a string"
    if v is None:
        return "None"
    instance = v if isinstance(v, ShapeInstance) else getattr(v, "_instance", None)
    if isinstance(instance, ShapeInstance):
        return f"a {instance.kind} shape"
    if isinstance(v, PathCmd):
        return "a path command"
    if isinstance(v, Color):
        return "a color"
    if isinstance(v, list | tuple | np.ndarray):
        items = list(v)
        if items and all(is_scalar(x) for x in items):
            return "a vector"
        if items and all(isinstance(x, list | tuple | np.ndarray) for x in items):
            return "a list of points" if all(len(x) == 2 for x in items) else "a matrix"
        if items and all(isinstance(x, PathCmd) for x in items):
            return "path data"
        if items and all(describe(x).endswith(" shape") for x in items):
            return "a list of shapes"
        return "an empty list" if not items else "a list"
    if isinstance(v, dict):
        return "a dict"
    return f"a {type(v).__name__}"


def to_style(v: Any) -> Any:
    """`v` as the Style evaluator's value: shapes as ShapeInstances, numbers as floats, sequences
    as lists, colors as rgba lists (Penrose's none stays a Color). A BuilderError names a value no
    diagram can hold."""
    fast = _AS_IS.get(type(v))
    if fast is not None:
        return fast(v)
    if isinstance(v, Node | str | PathCmd | ShapeInstance) or v is None:
        return v
    if isinstance(v, bool | np.bool_):
        return bool(v)
    if isinstance(v, numbers.Real):
        return float(v)
    instance = getattr(v, "_instance", None)  # a builder Shape
    if isinstance(instance, ShapeInstance):
        return instance
    if isinstance(v, Color):
        return v if v.is_none else [v.r, v.g, v.b, v.a]
    if isinstance(v, list | tuple):
        return [to_style(x) for x in v]
    if isinstance(v, np.ndarray):
        return to_style(v.tolist())
    raise BuilderError(f"{describe(v)} cannot be a value of a diagram")


_AS_IS: dict[type, Callable[[Any], Any]] = {
    float: lambda v: v,
    int: float,
    bool: lambda v: v,
    str: lambda v: v,
    Node: lambda v: v,
    ShapeInstance: lambda v: v,
}


def from_style(v: Any, shape_of: Callable[[ShapeInstance], Any]) -> Any:
    """A Style value as a builder program reads it: vectors as `Vec`s, lists of points as lists of
    `Vec`s, ShapeInstances as the program's shapes (`shape_of`)."""
    if isinstance(v, ShapeInstance):
        return shape_of(v)
    if isinstance(v, list):
        if v and all(is_scalar(x) for x in v):
            return Vec(v)
        return [from_style(x, shape_of) for x in v]
    return v
