"""Interval evaluation of real goal kinds, built as the energy compiler builds them (`kind_function`).

The penalty of a constraint is the energy's term max(c, 0)^2 (energies/compile/energy.py). Oracles:
hand-derived geometry (two circles 100 apart with radii near 10 are disjoint on any box of radius 1,
so the penalty is exactly 0 there), and the plain kind function at many points of each box.
"""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

import adcore
from adcore import Real, Vec, fn, interp, interval
from adcore import math as am
from energies.compile.energy import kind_function
from energies.compile.kinds import group_goals
from energies.diagram import GoalInstance, ShapeInstance
from energies.expr import input_node


def shape(kind: str, name: str, first: int) -> ShapeInstance:
    x = [input_node(first + k) for k in range(4)]
    if kind == "Circle":
        return ShapeInstance(name, kind, {"center": x[:2], "r": x[2], "fillColor": [0, 0, 0, 1]})
    return ShapeInstance(name, kind, {"center": x[:2], "width": x[2], "height": x[3]})


def penalty_of(kind: str) -> tuple[adcore.Fn, adcore.Fn]:
    """(disjoint between two shapes of a kind, its energy term max(c, 0)^2), over the kind's inputs
    (one vector: the first shape's, then the second's) and no constants."""
    goal = GoalInstance("constraint", "disjoint", [shape(kind, "A", 0), shape(kind, "B", 4)])
    (k,) = group_goals([goal], "constraint")
    assert k.n_consts == 0
    kf = kind_function(k, 0)
    widths = [col.width for col in k.columns]

    def columns(x: Any) -> list[Any]:
        out, at = [], 0
        for w in widths:
            out += [adcore.vec(w, Real, lambda j, at=at: x[at + j]), adcore.vec(0, Real, lambda j: 0.0)]
            at += w
        return out

    params = [Vec(k.n_inputs, Real), Vec(0, Real)]
    c = fn(params, Real, lambda x, cs: kf(*columns(x)))
    term = fn(params, Real, lambda x, cs: am.max(kf(*columns(x)), 0.0) ** 2)
    return c, term


def circles(
    a: tuple[float, float, float], b: tuple[float, float, float], radius: float
) -> list[dict[str, float]]:
    """The box of two circles (center x, center y, r) with every input within `radius`."""
    return [{"lo": v - radius, "hi": v + radius} for v in (*a, *b)]


def enclosed(f: adcore.Fn, box: list[dict[str, float]], n: int = 300) -> dict[str, float]:
    """f's interval over the box, interpreted and compiled (the same bits, no math functions in
    these goals), enclosing the interpreted and compiled f at n points of the box."""
    r = interp(interval(f))(box, [])
    assert adcore.compile(interval(f))(box, []) == r
    rng = random.Random(11)
    plain, compiled = interp(f), adcore.compile(f)
    for k in range(n):
        x = [b["lo"] if k == 0 else b["hi"] if k == 1 else rng.uniform(b["lo"], b["hi"]) for b in box]
        for v in (plain(x, []), compiled(x, [])):
            assert r["lo"] <= v <= r["hi"], (x, v, r)
    return r


def test_disjoint_circles_far_apart_have_exactly_zero_penalty() -> None:
    c, term = penalty_of("Circle")
    box = circles((0.0, 0.0, 10.0), (100.0, 0.0, 10.0), 1.0)
    # c = r1 + r2 - |c1 - c2| lies in [18 - 102.02, 22 - 98] < 0 on the box: the term is 0 everywhere
    assert enclosed(term, box) == {"lo": 0.0, "hi": 0.0}
    r = enclosed(c, box)
    assert -76.0 <= r["hi"] < -76.0 + 1e-9 and -math.hypot(102.0, 2.0) + 18.0 - 1e-9 < r["lo"]  # 22 - 98


@pytest.mark.parametrize(
    ("b", "radius", "lo", "hi"),
    [
        # overlapping by 5 +- 0.4 (centers 15 apart, radii 10): the term is in [4.6^2, 5.4^2] and more
        ((15.0, 0.0, 10.0), 0.1, 4.6**2, 5.4**2),
        # touching: c changes sign on the box, so the term's range starts at 0
        ((20.0, 0.0, 10.0), 0.5, 0.0, 2.0**2),
    ],
)
def test_disjoint_circles_overlapping_give_a_range(b: Any, radius: float, lo: float, hi: float) -> None:
    _, term = penalty_of("Circle")
    r = enclosed(term, circles((0.0, 0.0, 10.0), b, radius))
    assert r["lo"] <= lo and r["hi"] >= hi and r["lo"] < r["hi"]


def test_disjoint_rectangles_far_apart_have_exactly_zero_penalty() -> None:
    """A goal made of selects (Penrose's min and max) and bounding-box arithmetic."""
    _, term = penalty_of("Rectangle")
    near = [{"lo": v - 0.5, "hi": v + 0.5} for v in (0.0, 0.0, 10.0, 10.0, 8.0, 3.0, 10.0, 10.0)]
    assert enclosed(
        term, [{"lo": v - 1.0, "hi": v + 1.0} for v in (0.0, 0.0, 10.0, 10.0, 50.0, 0.0, 10.0, 10.0)]
    ) == {
        "lo": 0.0,
        "hi": 0.0,
    }
    r = enclosed(term, near)
    assert r["lo"] < 4.0 < r["hi"]  # overlapping by 2 in x at the box's center: the term is 4 there
