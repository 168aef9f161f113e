"""Penrose's min and max are selects: NaN handling and derivatives follow that, not IEEE min/max."""

import math

from adcore import Real, fn, interp, vjp
from energies.library import pmath


def test_min_max_pick_like_penrose_selects() -> None:
    nan = math.nan
    assert pmath.min(nan, 2.0) == 2.0 and math.isnan(pmath.min(2.0, nan))  # x < y ? x : y
    assert pmath.max(nan, 2.0) == 2.0 and math.isnan(pmath.max(2.0, nan))  # x > y ? x : y
    assert pmath.min(1.0, 2.0) == 1.0 and pmath.max(1.0, 2.0) == 2.0


def test_min_discards_a_nan_candidate_in_traced_code_too() -> None:
    f = fn([Real], Real, lambda x: pmath.min(pmath.raw_sqrt(-x * x - 1.0), x * 3.0))
    assert interp(f)(2.0) == 6.0
    g = fn([Real], Real, lambda x: vjp(f)(x).grad(1.0))
    assert interp(g)(2.0) == 3.0
