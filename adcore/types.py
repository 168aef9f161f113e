"""Types of adcore, at two levels.

User types describe function signatures: scalars, fixed-size arrays and structs (written as dicts).
The IR knows only *leaf* types: scalars and (nested) arrays of one scalar kind. A struct never reaches
the IR: the tracer keeps struct values as Python dicts and flattens signatures into lists of leaves,
and an array of structs becomes one array per field (struct of arrays). That keeps every
transformation (jvp, unzip, transpose, codegen) free of aggregates: a variable is linear or not as a
whole, never field by field.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class Scalar:
    """A scalar type. There is one object per scalar type, so equality is identity (fast: types are
    compared for every instruction emitted)."""

    __slots__ = ("name",)

    def __init__(self, name: str):  # "Real" | "Int" | "Bool"
        self.name = name

    def __repr__(self) -> str:
        return self.name

    def __reduce__(self) -> tuple[Any, ...]:
        return (_scalar_named, (type(self).__name__, self.name))


@dataclass(frozen=True)
class VecT:
    n: int
    elem: Type

    def __repr__(self) -> str:
        return f"[{self.elem!r}; {self.n}]"


@dataclass(frozen=True)
class StructT:
    fields: tuple[tuple[str, Type], ...]

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{k}: {t!r}" for k, t in self.fields) + "}"


@dataclass(frozen=True)
class RefT:
    """An accumulator: only loop bodies receive one, and only `accum` writes to it."""

    of: Type

    def __repr__(self) -> str:
        return f"&{self.of!r}"


class TanT(Scalar):
    """A tangent. It is a Real in the IR; the name documents intent in signatures like Dual."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "Tan"


Type = Scalar | VecT | StructT | RefT


def accumulated(t: Type) -> Type:
    """The type an accumulator of type t (a RefT: a loop body's ref parameter) accumulates."""
    assert isinstance(t, RefT), t
    return t.of


Real = Scalar("Real")
Int = Scalar("Int")
Bool = Scalar("Bool")
Tan = TanT("Real")


def _scalar_named(kind: str, name: str) -> Scalar:
    if kind == "TanT":
        return Tan
    return {"Real": Real, "Int": Int, "Bool": Bool}[name]


Dual = StructT((("re", Real), ("du", Tan)))


def Vec(n: int, elem: Any) -> VecT:
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise TypeError(f"Vec size must be a non-negative int, got {n!r}")
    return VecT(n, as_type(elem))


def as_type(t: Any) -> Type:
    """Accept the user spellings of types: type objects and dicts for structs."""
    if isinstance(t, (Scalar, VecT, StructT)):
        return t
    if isinstance(t, dict):
        return StructT(tuple((str(k), as_type(v)) for k, v in t.items()))
    raise TypeError(f"not an adcore type: {t!r} (use Real, Int, Bool, Vec(n, T) or a dict of types)")


def scalar_of(t: Type) -> Scalar:
    while isinstance(t, VecT):
        t = t.elem
    assert isinstance(t, Scalar), t
    return Real if t.name == "Real" else t


def is_real_leaf(t: Type) -> bool:
    """Leaves that carry derivatives: Real and arrays of Real."""
    return scalar_of(t) == Real


def leaf_types(t: Type) -> list[Type]:
    """The IR leaves of a user type, in a fixed order (struct fields in declaration order)."""
    if isinstance(t, Scalar):
        return [Real if t.name == "Real" else t]
    if isinstance(t, StructT):
        return [leaf for _, ft in t.fields for leaf in leaf_types(ft)]
    if isinstance(t, VecT):
        return [VecT(t.n, leaf) for leaf in leaf_types(t.elem)]
    raise TypeError(f"no leaves for {t!r}")


def same_ir_type(a: Type, b: Type) -> bool:
    """Tan and Real are one type in the IR."""
    return leaf_types(a) == leaf_types(b) if not isinstance(a, RefT) else a == b
