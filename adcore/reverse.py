"""Reverse mode = forward mode, unzipped, with the linear half transposed."""

from __future__ import annotations

from .forward import jvp_function
from .gc_pause import gc_paused
from .ir import Function
from .transpose import transpose_function
from .unzip import unzip_function


@gc_paused
def reverse_pair(f: Function, wrt: tuple[bool, ...] | None = None) -> tuple[Function, Function]:
    """(fwd, bwd): fwd(x) -> (f(x), residuals); bwd(residuals, ct of each Real result leaf) -> ct of
    each Real parameter leaf (only the leaves `wrt` marks, if given)."""
    key = ("reverse", wrt)
    cached = f.cache.get(key)
    if cached is None:
        df = jvp_function(f, wrt)
        assert df.linear_mask is not None
        u = unzip_function(df, df.linear_mask)
        cached = f.cache[key] = (u.fwd, transpose_function(u.lin))
    return cached


@gc_paused
def backward(f: Function, wrt: tuple[bool, ...] | None, zero: tuple[bool, ...]) -> Function:
    """`reverse_pair(f, wrt)`'s bwd for cotangents structurally zero where `zero` marks (one mark
    per Real result leaf of f): bwd(residuals, ct of each unmarked leaf) -> the same gradients."""
    if not any(zero):
        return reverse_pair(f, wrt)[1]
    df = jvp_function(f, wrt)  # (cached, as the unzipped function is)
    assert df.linear_mask is not None
    return transpose_function(unzip_function(df, df.linear_mask).lin, zero)
