"""Reverse mode = forward mode, unzipped, with the linear half transposed."""

from __future__ import annotations

from .forward import jvp_function
from .gc_pause import gc_paused
from .ir import Function
from .transpose import transpose_function
from .unzip import Unzipped, unzip_function


@gc_paused
def reverse_pair(f: Function, wrt: tuple[bool, ...] | None = None) -> tuple[Function, Function]:
    """(fwd, bwd): fwd(x) -> (f(x), residuals); bwd(residuals, ct of each Real result leaf) -> ct of
    each Real parameter leaf (only the leaves `wrt` marks, if given)."""
    key = ("reverse", wrt)
    cached = f.cache.get(key)
    if cached is None:
        u = _unzipped(f, wrt)
        cached = f.cache[key] = (u.fwd, transpose_function(u.lin))
    return cached


@gc_paused
def backward(f: Function, wrt: tuple[bool, ...] | None, zero: tuple[bool, ...]) -> Function:
    """`reverse_pair(f, wrt)`'s bwd for cotangents structurally zero where `zero` marks (one mark
    per Real result leaf of f): bwd(residuals, ct of each unmarked leaf) -> the same gradients."""
    return transpose_function(_unzipped(f, wrt).lin, zero)


def _unzipped(f: Function, wrt: tuple[bool, ...] | None) -> Unzipped:
    """f's derivative, unzipped (both steps cached on the functions)."""
    df = jvp_function(f, wrt)
    assert df.linear_mask is not None
    return unzip_function(df, df.linear_mask)
