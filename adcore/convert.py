"""Python values <-> IR leaves, shared by `interp`, `compile` and host calls of opaque functions.

A user-level value (floats, ints, bools, lists, dicts for structs) of a type becomes the list of its
IR leaves (arrays of structs as structs of arrays) and back. `call_impl` runs an opaque function's
Python implementation on leaves, with the checks and messages both backends give.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .errors import AdcoreError
from .ir import Function
from .types import Bool, Int, Scalar, StructT, Type, VecT, leaf_types


def from_python(ty: Type, value: Any, where: str) -> list[Any]:
    """The IR leaves of a Python value of user type `ty` (struct of arrays for arrays of structs)."""
    if isinstance(ty, Scalar):
        if not isinstance(value, (bool, int, float)) and not hasattr(value, "__float__"):
            raise AdcoreError(f"{where}: expected {ty!r}, got {type(value).__name__} {value!r}")
        if ty == Bool:
            return [bool(value)]
        if ty == Int:
            if isinstance(value, float) and not value.is_integer():
                raise AdcoreError(f"{where}: expected an Int, got {value!r}")
            return [int(value)]
        return [float(value)]
    if isinstance(ty, VecT):
        if not isinstance(value, (list, tuple)) or len(value) != ty.n:
            raise AdcoreError(f"{where}: expected a list of {ty.n} for {ty!r}, got {value!r}")
        elems = [from_python(ty.elem, v, f"{where}[{k}]") for k, v in enumerate(value)]
        return [[e[j] for e in elems] for j in range(len(leaf_types(ty.elem)))]
    if isinstance(ty, StructT):
        if not isinstance(value, dict) or set(value) != {k for k, _ in ty.fields}:
            raise AdcoreError(
                f"{where}: expected a dict with fields {[k for k, _ in ty.fields]}, got {value!r}"
            )
        return [leaf for k, ft in ty.fields for leaf in from_python(ft, value[k], f"{where}[{k!r}]")]
    raise AdcoreError(f"{where}: unsupported type {ty!r}")


def to_python(ty: Type, leaves: Sequence[Any]) -> Any:
    if isinstance(ty, Scalar):
        (v,) = leaves
        return v
    if isinstance(ty, VecT):
        k = len(leaf_types(ty.elem))
        return [to_python(ty.elem, [leaves[j][i] for j in range(k)]) for i in range(ty.n)]
    if isinstance(ty, StructT):
        out, pos = {}, 0
        for name, ft in ty.fields:
            k = len(leaf_types(ft))
            out[name] = to_python(ft, leaves[pos : pos + k])
            pos += k
        return out
    raise AdcoreError(f"unsupported type {ty!r}")


def argument_leaves(f: Any, args: Sequence[Any]) -> list[Any]:
    """The IR leaves of Python arguments of `f` (an `Fn`), with errors naming the argument."""
    if len(args) != len(f.params):
        raise AdcoreError(f"{f.name} expects {len(f.params)} argument(s), got {len(args)}")
    if getattr(f, "captures", ()):
        raise AdcoreError(f"{f.name} reads values of the function traced around it: it runs only there")
    return [
        leaf
        for k, (t, a) in enumerate(zip(f.params, args))
        for leaf in from_python(t, a, f"argument {k} of {f.name}")
    ]


def call_impl(f: Function, leaves: Sequence[Any]) -> list[Any]:
    """The result leaves of opaque function f's Python implementation applied to argument leaves."""
    if f.impl is None or f.signature is None:
        raise AdcoreError(f"opaque function {f.name} has no Python implementation")
    ptypes, rtype = f.signature
    it = iter(leaves)
    user_args = [to_python(t, [next(it) for _ in leaf_types(t)]) for t in ptypes]
    return from_python(rtype, f.impl(*user_args), f"result of {f.name}")


__all__ = ["argument_leaves", "call_impl", "from_python", "to_python"]
