"""Interval rules from Lipschitz bounds, for the library's distance functions.

`adcore.interval` bounds a function over a box from its formula, operation by operation. For the
signed distances between shapes that formula is a chain of region tests and min/max of corner
combinations, each using the same coordinates twice, and over a box a few pixels wide its bounds
loosen to nothing (the dependency problem). What the value means bounds it far better: the signed
distance from the origin to a convex set moves by at most the Hausdorff distance the set moves
(its support function does), so over a box it lies within its value at the box's midpoint plus or
minus how far the box lets the set move. Such a function is one adcore function of the call graph
(so the energy calls it, and its interval is taken once) carrying that rule (`Fn.interval`).

    lipschitz_rule(f, n, moves) -> the rule of f over n coordinates: f(mid) -/+ (moves(half) + slack)

`moves(half)` gets the box's half-widths per coordinate and returns how far the set can move.
Slack covers the rounding of f at the midpoint and at the point compared with it, relative to the
coordinates' magnitude (`SLACK`), and the few roundings of the bound itself (`WIDEN`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import adcore
from adcore import Real, Vec, fn

from . import pmath as am
from .fn_ops import max_n

RANGE = {"lo": Real, "hi": Real}
SLACK = 2.0**-40  # two evaluations' rounding, relative to the coordinates' magnitude
WIDEN = 1.0 + 2.0**-48  # the roundings of the bound's own few operations


def lipschitz_rule(
    f: adcore.Fn, n: int, moves: Callable[[Sequence[Any]], Any], extra_slack: float = 0.0
) -> adcore.Fn:
    """The interval rule of f (one Vec(n) parameter, a Real result) from its Lipschitz bound:
    over a box with midpoint m and half-widths h, f lies within f(m) -/+ (moves(h) widened, plus
    (SLACK + extra_slack) times the coordinates' magnitude)."""

    def rule(box: Any) -> dict[str, Any]:
        lo = [box[i]["lo"] for i in range(n)]
        hi = [box[i]["hi"] for i in range(n)]
        mid = [(a + b) * 0.5 for a, b in zip(lo, hi)]
        half = [am.max(b - m, m - a) for a, b, m in zip(lo, hi, mid)]
        magnitude = 1.0 + max_n([am.abs(m) + h for m, h in zip(mid, half)])
        reach = moves(half) * WIDEN + (SLACK + extra_slack) * magnitude
        d = f(mid)
        return {"lo": d - reach, "hi": d + reach}

    return fn([Vec(n, RANGE)], RANGE, rule, name=f"{f.name}_bounds")


def planar_move(dx: Any, dy: Any) -> Any:
    """How far a point moves when its coordinates move by at most dx and dy."""
    return am.sqrt(dx * dx + dy * dy)
