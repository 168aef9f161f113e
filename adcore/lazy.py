"""Lazy values: a protocol through which another library can record adcore operations.

Outside a trace, adcore operations on Python numbers compute right away. An object whose class sets
`__adcore_lazy__ = True` (a symbolic expression of another library) takes over instead: adcore calls
its class's `lazy_prim(prim, args)`, `lazy_select(cond, a, b)` and `lazy_call(fn, args)`. adcore does
not know what such values mean; it only hands them back.
"""

from __future__ import annotations

from typing import Any


def find_lazy(*values: Any) -> type | None:
    """The class of the first lazy value inside `values` (searching lists, tuples and dicts)."""
    stack = list(values)
    while stack:
        v = stack.pop()
        if getattr(type(v), "__adcore_lazy__", False):
            return type(v)
        if isinstance(v, (list, tuple)):
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
    return None
