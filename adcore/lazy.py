"""Lazy values: a protocol through which another library can record adcore operations.

Outside a trace, adcore operations on Python numbers compute right away. An object whose class sets
`__adcore_lazy__ = True` (a symbolic expression of another library) takes over instead: adcore calls
its class's `lazy_prim(prim, args)`, `lazy_select(cond, a, b)` and `lazy_call(fn, args)`. adcore does
not know what such values mean; it only hands them back.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, cast


class LazyClass(Protocol):
    """The class of lazy values: what adcore calls on it (its classmethods)."""

    __adcore_lazy__: bool

    def lazy_prim(self, prim: str, args: Sequence[Any]) -> Any: ...
    def lazy_select(self, cond: Any, a: Any, b: Any) -> Any: ...
    def lazy_call(self, fn: Any, args: Sequence[Any]) -> Any: ...


def find_lazy(*values: Any) -> LazyClass | None:
    """The class of the first lazy value inside `values` (searching lists, tuples and dicts)."""
    stack = list(values)
    while stack:
        v = stack.pop()
        if getattr(type(v), "__adcore_lazy__", False):
            return cast(LazyClass, type(v))
        if isinstance(v, (list, tuple)):
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
    return None
