"""Interval rules from Lipschitz bounds, for the library's distance functions.

`adcore.interval` bounds a function over a box from its formula, operation by operation. For the
signed distances between shapes that formula is a chain of region tests and min/max of corner
combinations, each using the same coordinates twice, and over a box a few pixels wide its bounds
loosen to nothing (the dependency problem). What the value means bounds it far better: the signed
distance from the origin to a convex set moves by at most the Hausdorff distance the set moves
(its support function does), so over a box it lies within its value at the box's midpoint plus or
minus how far the box lets the set move. Such a function is one adcore function of the call graph
(so the energy calls it, and its interval is taken once) carrying that rule (`Fn.interval`).

    lipschitz_fn(name, n, body, moves) -> f = body over n coordinates, whose interval is
        f(mid) -/+ (moves(half) + slack), intersected with the formula's own interval
        (the Lipschitz bound alone for small boxes: `Fn.interval_near`)

The bound is tight on a small box and loose on a wide one (two shapes' clusters far apart: the
moves add up to more than the gap), where the formula's interval is tight instead (the coordinates'
ranges are narrow beside the distance between them). Both enclose f, so their intersection does; a
NaN end of the formula's interval (a range it cannot bound) leaves the Lipschitz end.

`moves(half)` gets the box's half-widths per coordinate and returns how far the set can move.
Slack covers the rounding of f at the midpoint and at the point compared with it, relative to the
coordinates' magnitude (`SLACK`), and the few roundings of the bound itself (`WIDEN`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import adcore
from adcore import Real, Vec, fn, select

from . import pmath as am
from .fn_ops import max_n

RANGE = {"lo": Real, "hi": Real}
SLACK = 2.0**-40  # two evaluations' rounding, relative to the coordinates' magnitude
WIDEN = 1.0 + 2.0**-48  # the roundings of the bound's own few operations


def lipschitz_fn(
    name: str,
    n: int,
    body: Callable[[Any], Any],
    moves: Callable[[Sequence[Any]], Any],
    extra_slack: float = 0.0,
) -> adcore.Fn:
    """`body` as an adcore function of one Vec(n) parameter with a Real result, whose interval over
    a box with midpoint m and half-widths h is f(m) -/+ (moves(h) widened, plus (SLACK + extra_slack)
    times the coordinates' magnitude), intersected with its formula's interval."""
    f = fn([Vec(n, Real)], Real, body, name=name)
    formula = adcore.interval(fn([Vec(n, Real)], Real, body, name=f"{name}_formula"))

    def near(box: Any) -> dict[str, Any]:
        lo = [box[i]["lo"] for i in range(n)]
        hi = [box[i]["hi"] for i in range(n)]
        mid = [(a + b) * 0.5 for a, b in zip(lo, hi)]
        half = [am.max(b - m, m - a) for a, b, m in zip(lo, hi, mid)]
        magnitude = 1.0 + max_n([am.abs(m) + h for m, h in zip(mid, half)])
        reach = moves(half) * WIDEN + (SLACK + extra_slack) * magnitude
        d = f(mid)
        return {"lo": d - reach, "hi": d + reach}

    def rule(box: Any) -> dict[str, Any]:
        lipschitz, own = near(box), formula(box)
        lo, hi = lipschitz["lo"], lipschitz["hi"]
        return {"lo": select(own["lo"] > lo, own["lo"], lo), "hi": select(own["hi"] < hi, own["hi"], hi)}

    f.interval = fn([Vec(n, RANGE)], RANGE, rule, name=f"{name}_bounds")
    # on small boxes the Lipschitz bound is the tight one: the formula's interval, the costlier
    # part, is left out (adcore.interval(near=True), culling's inner boxes)
    f.interval_near = fn([Vec(n, RANGE)], RANGE, near, name=f"{name}_near")
    return f


def planar_move(dx: Any, dy: Any) -> Any:
    """How far a point moves when its coordinates move by at most dx and dy."""
    return am.sqrt(dx * dx + dy * dy)
