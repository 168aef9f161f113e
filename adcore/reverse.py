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
