"""Interval evaluation (adcore.interval): soundness, exact points, math rules, calls and loops.

Oracles: the plain function itself run at many points of each box (the interpreter, and compiled
code for compiled intervals), hand-derived ranges, and mpmath (200 bits) for the exact extrema of
every math function over each range.
"""

from __future__ import annotations

import math
import random
from typing import Any

import mpmath
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import adcore
from adcore import (
    AdcoreError,
    AdcoreTypeError,
    Bool,
    Int,
    Real,
    Vec,
    and_,
    fn,
    interp,
    interval,
    opaque,
    select,
    to_real,
    vec,
)
from adcore import math as am
from adcore.intervals import PERIODIC_LIMIT
from adcore.ir import call_graph
from adcore.typecheck import check_function

from .programs import N_INPUTS, OPS

# -- random programs ----------------------------------------------------------------------------------


def pmax(a: Any, b: Any) -> Any:  # Penrose's max (energies.library.pmath): a select
    return select(a > b, a, b)


def pmin(a: Any, b: Any) -> Any:
    return select(a < b, a, b)


# Operations without math functions (intervals are then the same bits interpreted and compiled);
# unlike programs.OPS they may be non-smooth, NaN or infinite somewhere in a box.
EXACT_OPS: dict[str, tuple[int, Any]] = {
    "add": (2, lambda a, b: a + b),
    "sub": (2, lambda a, b: a - b),
    "mul": (2, lambda a, b: a * b),
    "div": (2, lambda a, b: a / b),
    "pdiv": (2, lambda a, b: a / (1.0 + b * b)),
    "sq": (1, lambda a: a * a),
    "neg": (1, lambda a: -a),
    "abs": (1, am.abs),
    "sqrt": (1, am.sqrt),
    "soft": (1, lambda a: am.sqrt(a * a + 1.0)),
    "max0": (1, lambda a: am.max(a, 0.0)),
    "penalty": (1, lambda a: am.max(a, 0.0) ** 2),
    "min": (2, am.min),
    "pmax": (2, pmax),
    "pmin": (2, pmin),
    "relu": (1, lambda a: pmax(a, 0.0)),
    "sel": (2, lambda a, b: select(a > b, a * b, a - b)),
    "both": (2, lambda a, b: select(and_(a > 0.0, b < 1.0), a, b)),
    "floor": (1, am.floor),
    "copysign": (2, am.copysign),
    "third": (1, lambda a: a / 3.0),
    "half": (1, lambda a: 0.5 * a),
    "zero": (1, lambda a: a * 0.0),
    "shift": (1, lambda a: a - 5.0),
    "int": (2, lambda a, b: to_real(select(a > b, 1, 2)) * a),
}
MATH_OPS: dict[str, tuple[int, Any]] = {
    **{k: OPS[k][:2] for k in ("sin", "cos", "tanh", "exps", "atan", "logp")},
    "exp": (1, am.exp),
    "log": (1, am.log),
    "tan": (1, am.tan),
    "asin": (1, am.asin),
    "cosh": (1, am.cosh),
    "atan2": (2, am.atan2),
    "hypot": (2, am.hypot),
    "pow": (2, lambda a, b: am.pow(am.abs(a), b)),
}
ALL_OPS = {**EXACT_OPS, **MATH_OPS}
# the operations that see the sign of a zero (not tracked: a point range [0, 0] may be -0)
ZERO_SIGN_OPS = {"div", "copysign", "atan2", "pow"}


def programs(ops: dict[str, tuple[int, Any]], max_steps: int = 8) -> st.SearchStrategy[Any]:
    @st.composite
    def draw_program(draw: Any) -> list[tuple[str, tuple[int, ...]]]:
        steps = []
        for k in range(draw(st.integers(1, max_steps))):
            name = draw(st.sampled_from(sorted(ops)))
            steps.append((name, tuple(draw(st.integers(0, N_INPUTS + k - 1)) for _ in range(ops[name][0]))))
        return steps

    return draw_program()


def traced(program: list[tuple[str, tuple[int, ...]]]) -> adcore.Fn:
    """R^3 -> R^2: the last value and the sum of all values (sums exercise fan-out)."""

    def body(x: Any) -> list[Any]:
        values = [x[0], x[1], x[2]]
        for name, args in program:
            values.append(ALL_OPS[name][1](*(values[a] for a in args)))
        return [values[-1], adcore.sum(values)]

    return fn([Vec(N_INPUTS, Real)], Vec(2, Real), body)


RADII = [0.0, 2.0**-40, 1e-6, 0.1, 1.0, 4.0]
boxes = st.lists(
    st.tuples(st.floats(-3.0, 3.0), st.sampled_from(RADII)), min_size=N_INPUTS, max_size=N_INPUTS
).map(lambda cs: [{"lo": c - r, "hi": c + r} for c, r in cs])


def samples(box: list[dict[str, float]], seed: int, n: int = 24) -> list[list[float]]:
    """The corners, the center and random points of a box."""
    rng = random.Random(seed)
    corners = [
        [b["lo"] if (k >> j) & 1 else b["hi"] for j, b in enumerate(box)] for k in range(2 ** len(box))
    ]
    center = [(b["lo"] + b["hi"]) / 2 for b in box]
    return corners + [center] + [[rng.uniform(b["lo"], b["hi"]) for b in box] for _ in range(n)]


def well_formed(r: dict[str, float]) -> bool:
    lo, hi = r["lo"], r["hi"]
    return math.isnan(lo) == math.isnan(hi) and (math.isnan(lo) or lo <= hi)


def encloses(r: dict[str, float], v: float) -> bool:
    """v lies in the range r (top, a NaN pair, holds anything)."""
    lo, hi = r["lo"], r["hi"]
    return math.isnan(lo) or (not math.isnan(v) and lo <= v <= hi)


def same_bits(a: list[dict[str, float]], b: list[dict[str, float]]) -> bool:
    return all(
        (x[k] == y[k] or (math.isnan(x[k]) and math.isnan(y[k]))) for x, y in zip(a, b) for k in ("lo", "hi")
    )


@settings(max_examples=120, deadline=None)
@given(programs(ALL_OPS), boxes, st.integers(0, 2**32))
def test_random_programs_enclose_their_values(program, box, seed) -> None:
    f = traced(program)
    ranges = interp(interval(f))(box)
    assert all(map(well_formed, ranges))
    run = interp(f)
    for x in samples(box, seed):
        for r, v in zip(ranges, run(x)):
            assert encloses(r, v), (x, v, r)


@settings(max_examples=30, deadline=None)
@given(programs(ALL_OPS, max_steps=6), boxes, st.integers(0, 2**32))
def test_compiled_intervals_enclose_compiled_values(program, box, seed) -> None:
    """Compiled, each side uses our Wasm libm: the compiled interval encloses the compiled values.
    Without math functions, interpreted and compiled intervals are the same bits."""
    f = traced(program)
    g = interval(f)
    ranges = adcore.compile(g)(box)
    if all(name in EXACT_OPS for name, _ in program):
        assert same_bits(ranges, interp(g)(box))
    run = adcore.compile(f)
    for x in samples(box, seed, 12):
        for r, v in zip(ranges, run(x)):
            assert encloses(r, v), (x, v, r)


POINT_OPS = {k: v for k, v in ALL_OPS.items() if k not in ZERO_SIGN_OPS}


@settings(max_examples=60, deadline=None)
@given(programs(POINT_OPS), st.lists(st.floats(-3.0, 3.0), min_size=N_INPUTS, max_size=N_INPUTS))
@example(program=[("asin", (0,)), ("abs", (0,)), ("int", (0, 3))], x=[2.0, 0.0, 0.0])  # 2 > asin(2)
def test_a_point_box_gives_the_value_itself(program, x) -> None:
    f = traced(program)
    # A NaN on the way is "any value" to what follows (docs/interval.md: `2 > NaN` is false, but a
    # range with a NaN end holds every value): past one, the result is only enclosed
    steps = [interp(traced(program[: k + 1]))(x)[0] for k in range(len(program))]
    exact = not any(math.isnan(v) for v in steps)
    for run, plain in ((interp(interval(f)), interp(f)), (adcore.compile(interval(f)), adcore.compile(f))):
        ranges = run([{"lo": v, "hi": v} for v in x])
        for r, v in zip(ranges, plain(x)):
            if math.isnan(v):
                assert math.isnan(r["lo"]) and math.isnan(r["hi"])
            elif exact:
                assert r["lo"] == v == r["hi"], (v, r)
            else:
                assert math.isnan(r["lo"]) or r["lo"] <= v, (v, r)
                assert math.isnan(r["hi"]) or v <= r["hi"], (v, r)


# -- exact points, by hand -------------------------------------------------------------------------------


def box1(f: adcore.Fn, lo: float, hi: float) -> dict[str, float]:
    return interp(interval(f))({"lo": lo, "hi": hi})


def test_clamps_give_exact_points() -> None:
    relu = fn([Real], Real, lambda x: am.max(0.0, x - 5.0))
    assert box1(relu, 0.0, 4.0) == {"lo": 0.0, "hi": 0.0}
    assert box1(relu, 0.0, 5.0) == {"lo": 0.0, "hi": 0.0}  # x - 5 = 0 at the end: still exactly 0
    penrose = fn([Real], Real, lambda x: pmax(x - 5.0, 0.0))
    assert box1(penrose, 0.0, 4.0) == {"lo": 0.0, "hi": 0.0}
    r = box1(penrose, 0.0, 6.0)  # select(x - 5 > 0, x - 5, 0) is max: its lower end is 0, not -5
    assert r["lo"] == 0.0 and 1.0 <= r["hi"] < 1.0 + 1e-14
    capped = fn([Real], Real, lambda x: am.min(5.0, x * x))
    assert box1(capped, 3.0, 4.0) == {"lo": 5.0, "hi": 5.0}
    assert box1(fn([Real], Real, lambda x: pmin(5.0, x * x)), -4.0, -3.0) == {"lo": 5.0, "hi": 5.0}
    assert box1(fn([Real], Real, lambda x: x * 0.0), -7.0, 3.0) == {"lo": 0.0, "hi": 0.0}


def test_a_clamp_whose_bound_is_read_twice_is_a_min_where_both_reads_are_one_point() -> None:
    """select(c0 < y, c1, y): a kind's table holds each occurrence of a constant in a slot of its
    own, so Penrose's min(5, y) reads 5 twice. Where both slots hold the same point it is min(c0, y)
    (upper end 5, not the hull's 9); where they differ, or are not points, the branches' hull."""
    f = fn([Vec(2, Real), Real], Real, lambda c, x: select(c[0] < x * x, c[1], x * x))
    swapped = fn([Vec(2, Real), Real], Real, lambda c, x: select(x * x > c[0], c[1], x * x))

    def at(g: adcore.Fn, c0: tuple[float, float], c1: tuple[float, float]) -> dict[str, float]:
        c = [{"lo": c0[0], "hi": c0[1]}, {"lo": c1[0], "hi": c1[1]}]
        return interp(interval(g))(c, {"lo": 1.0, "hi": 3.0})

    for g in (f, swapped):
        r = at(g, (5.0, 5.0), (5.0, 5.0))
        assert r["hi"] == 5.0 and 1.0 - 1e-14 < r["lo"] <= 1.0
        assert at(g, (5.0, 5.0), (6.0, 6.0))["hi"] >= 9.0  # another number: its own branch
        assert at(g, (4.0, 5.0), (4.0, 5.0))["hi"] >= 9.0  # ranges, not points: they may differ
    capped = fn([Vec(2, Real), Real], Real, lambda c, x: -select(c[0] < x * x, c[1], x * x))
    assert interp(interval(capped))([{"lo": 5.0, "hi": 5.0}] * 2, {"lo": -1e100, "hi": 1e100})["lo"] == -5.0


def test_squared_penalty_of_a_satisfied_constraint_is_exactly_zero() -> None:
    penalty = fn([Real, Real], Real, lambda x, y: am.max(x - y + 1.0, 0.0) ** 2)
    run = interp(interval(penalty))
    assert run({"lo": 0.0, "hi": 1.0}, {"lo": 3.0, "hi": 4.0}) == {"lo": 0.0, "hi": 0.0}
    r = run({"lo": 0.0, "hi": 1.0}, {"lo": -1.0, "hi": 0.5})  # violated somewhere: (x - y + 1)^2 in [0.25, 9]
    assert r["lo"] <= 0.25 <= 9.0 <= r["hi"] and r["hi"] < 9.0 * (1 + 1e-14) and r["lo"] > 0.25 * (1 - 1e-14)


def test_select_with_a_certain_condition_is_exactly_its_branch() -> None:
    f = fn([Real, Real], Real, lambda x, y: select(x > 2.0, y * 3.0, am.sqrt(-y)))
    run = interp(interval(f))
    assert run({"lo": 3.0, "hi": 4.0}, {"lo": 1.0, "hi": 2.0}) == interp(
        interval(fn([Real], Real, lambda y: y * 3.0))
    )({"lo": 1.0, "hi": 2.0})
    # the other branch is NaN on this box, the condition certain: the NaN is not taken
    assert not math.isnan(run({"lo": 3.0, "hi": 4.0}, {"lo": 1.0, "hi": 2.0})["lo"])
    r = run(
        {"lo": 1.0, "hi": 4.0}, {"lo": -2.0, "hi": -1.0}
    )  # uncertain: the join of [-6, -3] and [1, sqrt 2]
    assert r["lo"] <= -6.0 and r["hi"] >= math.sqrt(2.0) and r["lo"] > -6.0 - 1e-13 and r["hi"] < 1.5


def test_constant_arithmetic_is_a_point_and_absorption_is_not() -> None:
    f = fn([Real, Vec(2, Real)], Real, lambda x, c: am.max(c[0] * c[1] - 1.0, x))
    r = interp(interval(f))({"lo": -5.0, "hi": -4.0}, [{"lo": 0.1, "hi": 0.1}, {"lo": 3.0, "hi": 3.0}])
    assert r["lo"] == r["hi"] == 0.1 * 3.0 - 1.0
    absorbed = fn([Real], Real, lambda x: (x + 1e20) - 1e20)  # 0 in floats on [0, 1], x in reals
    r = box1(absorbed, 0.0, 1.0)
    assert r["lo"] < 0.0 < r["hi"] and r["hi"] - r["lo"] < 1e6  # a range holding 0, not the point 0
    terms = lambda x: vec(3, Real, lambda i: select(adcore.eq(i, 1), x, 1e20 - 1e20 * to_real(i)))  # noqa: E731
    summed = fn([Real], Real, lambda x: adcore.sum(terms(x)))
    r = box1(summed, 0.0, 1.0)  # 1e20 + x - 1e20 by a loop's sum
    assert r["lo"] < 0.0 and r["hi"] > 0.0


def test_nan_possibilities_are_never_points() -> None:
    hidden = fn([Real], Real, lambda x: am.max(0.0, am.sqrt(x) - 5.0))
    r = box1(hidden, -1.0, 1.0)  # bounds alone would say [0, 0]; sqrt(-1) is NaN and max keeps it
    assert math.isnan(r["lo"]) and math.isnan(r["hi"])
    assert interp(hidden)(-0.5) != interp(hidden)(-0.5)
    recip = fn([Real], Real, lambda x: 1.0 / x)
    assert math.isnan(box1(recip, -1.0, 1.0)["lo"])
    assert math.isnan(box1(recip, 0.0, 1.0)["hi"])  # 1 / -0 is -inf: zero's sign is not tracked
    r = box1(recip, 1.0, 2.0)
    assert r["lo"] <= 0.5 and r["hi"] >= 1.0 and r["lo"] > 0.5 - 1e-15 and r["hi"] < 1.0 + 1e-15
    inf_minus_inf = fn([Real], Real, lambda x: x * 1e300 * 1e10 - x * 1e300 * 1e10)
    assert math.isnan(box1(inf_minus_inf, 0.5, 1.0)["lo"])
    zero_times_inf = fn([Real, Real], Real, lambda x, y: x * (y * 1e300 * 1e300))
    r = interp(interval(zero_times_inf))({"lo": -1.0, "hi": 1.0}, {"lo": 1.0, "hi": 2.0})  # 0 * inf inside
    assert math.isnan(r["lo"]) and math.isnan(r["hi"])
    overflows = fn([Real, Real], Real, lambda x, y: x * 1e200 * 1e200 - y * 1e200 * 1e200)
    r = interp(interval(overflows))({"lo": 1e-300, "hi": 1.0}, {"lo": 1e-300, "hi": 1.0})
    assert math.isnan(interp(overflows)(1.0, 1.0)) and math.isnan(r["lo"]) and math.isnan(r["hi"])
    # comparing a range that may be NaN: possibly true and possibly false, whatever its bounds say
    test = fn([Real], Real, lambda y: select(am.sqrt(y) - 5.0 < 0.0, 1.0, 2.0))
    assert box1(test, -1.0, 1.0) == {"lo": 1.0, "hi": 2.0}
    assert {interp(test)(-1.0), interp(test)(1.0)} == {1.0, 2.0}
    # a NaN is not less than anything: the comparison is uncertain, and Penrose's min keeps the other side
    pick = fn([Real], Real, lambda x: pmin(am.sqrt(x), 3.0))
    r = box1(pick, -1.0, 1.0)
    assert math.isnan(r["lo"])


def test_bools_and_ints_depending_on_reals() -> None:
    f = fn(
        [Real],
        {"c": Bool, "n": Int, "t": Real},
        lambda x: {"c": x > 0.0, "n": select(x > 0.0, 1, 2), "t": to_real(select(x > 0.5, 3, 4))},
    )
    run = interp(interval(f))
    assert run({"lo": 1.0, "hi": 2.0})["c"] == {"lo": True, "hi": True}
    assert run({"lo": -2.0, "hi": -1.0})["c"] == {"lo": False, "hi": False}
    assert run({"lo": -2.0, "hi": 1.0}) == {
        "c": {"lo": False, "hi": True},
        "n": {"lo": 1, "hi": 2},
        "t": {"lo": 3.0, "hi": 4.0},
    }
    # an Int position that depends on a Real: its element when it is one position, else top
    g = fn([Real, Vec(3, Real)], Real, lambda x, v: v[select(x > 0.0, 2, 0)])
    v = [{"lo": k, "hi": k + 0.5} for k in (1.0, 2.0, 3.0)]
    assert interp(interval(g))({"lo": 1.0, "hi": 2.0}, v) == {"lo": 3.0, "hi": 3.5}
    assert math.isnan(interp(interval(g))({"lo": -1.0, "hi": 2.0}, v)["lo"])
    h = fn([Real, Int], Int, lambda x, k: select(x > 0.0, k, k + 3) * 2)  # Int parameters stay exact
    assert interval(h).params[1] == Int
    assert interp(interval(h))({"lo": -1.0, "hi": 1.0}, 5) == {"lo": 10, "hi": 16}
    assert adcore.compile(interval(h))({"lo": -1.0, "hi": 1.0}, 5) == {"lo": 10, "hi": 16}


def test_unsupported_uncertain_positions_are_refused() -> None:
    f = fn([Real, Vec(3, Int)], Int, lambda x, v: v[select(x > 0.0, 2, 0)])
    with pytest.raises(AdcoreError, match="depends on Real values"):
        interval(f)


# -- calls, loops, opaque functions -----------------------------------------------------------------------


def test_calls_stay_calls_and_loops_stay_loops() -> None:
    dist = fn(
        [Vec(2, Real), Vec(2, Real)],
        Real,
        lambda p, q: am.sqrt((p[0] - q[0]) ** 2 + (p[1] - q[1]) ** 2),
        name="dist",
    )
    ring = fn(
        [Vec(4, Vec(2, Real))],
        Real,
        lambda ps: (
            adcore.sum(4, lambda i: am.max(1.0 - dist(ps[i], ps[(i + 1) % 4]), 0.0))
            + adcore.sum(vec(4, Real, lambda i: dist(ps[i], [0.0, 0.0])))
        ),
        name="ring",
    )
    g = interval(ring)
    graph = call_graph(g.ir)
    assert [h.name for h in graph].count("dist_interval") == 1  # two call sites, one transformed callee
    for h in graph:
        check_function(h)
    assert any(e.prim == "for" for e in g.ir.body.eqns)
    assert "ring_interval" in str(g)
    points = [[0.0, 0.0], [1.0, 0.5], [3.0, 1.0], [0.5, 2.0]]
    rng = random.Random(3)
    for radius in (0.0, 0.01, 0.3):
        box = [[{"lo": c - radius, "hi": c + radius} for c in p] for p in points]
        r = interp(g)(box)
        assert same_bits([r], [adcore.compile(g)(box)])
        if radius == 0.0:
            assert r["lo"] == r["hi"] == interp(ring)(points)
        run = interp(ring)
        for _ in range(40):
            x = [[rng.uniform(c - radius, c + radius) for c in p] for p in points]
            assert encloses(r, run(x))


def check_sampled(f: adcore.Fn, box: Any, draw: Any, n: int = 40) -> Any:
    """f's interval over box, interpreted and compiled (the same bits), enclosing f at n points
    drawn by draw(rng); returns the interpreted interval."""
    r = interp(interval(f))(box)
    assert r == adcore.compile(interval(f))(box)
    rng = random.Random(5)
    for _ in range(n):
        x = draw(rng)
        got, v = r, interp(f)(x)
        if isinstance(v, list):
            assert all(encloses(gi, vi) for gi, vi in zip(got, v)), (x, v, got)
        else:
            assert (got["lo"] <= v <= got["hi"]) if isinstance(v, int) else encloses(got, v), (x, v, got)
    return r


def test_loop_accumulators_of_every_kind() -> None:
    spans = [(-1.0, 1.0), (1.0, 2.0), (-2.0, -1.0), (0.5, 3.0)]
    box = [{"lo": lo, "hi": hi} for lo, hi in spans]
    draw = lambda rng: [rng.uniform(lo, hi) for lo, hi in spans]  # noqa: E731
    # an Int sum of uncertain terms: the accumulator becomes a pair (the loop is transformed again)
    count = fn([Vec(4, Real)], Int, lambda v: adcore.sum(4, lambda i: select(v[i] > 0.0, 1, 0)))
    assert check_sampled(count, box, draw) == {"lo": 2, "hi": 3}
    # nested loops adding into the outer loop's Int accumulator
    above = fn(
        [Vec(4, Real)],
        Int,
        lambda v: adcore.sum(4, lambda i: adcore.sum(4, lambda j: select(v[i] > v[j], 1, 0))),
    )
    # certain: v1 > v2 and v3 > v2; possible: hi_i > lo_j, 12 pairs (v_i > v_i too: the two reads of
    # v_i are not known to be one value)
    assert check_sampled(above, box, draw) == {"lo": 2, "hi": 12}
    # a sum of squares through a loop stays >= 0, so its square root is a range, not top
    norm = fn([Vec(4, Real)], Real, lambda v: am.sqrt(adcore.sum(4, lambda i: v[i] * v[i])))
    r = check_sampled(norm, box, draw)  # exactly [sqrt(0 + 1 + 1 + 0.25), sqrt(1 + 4 + 4 + 9)]
    assert 1.5 * (1 - 1e-14) < r["lo"] <= 1.5 and math.sqrt(18.0) <= r["hi"] < math.sqrt(18.0) * (1 + 1e-14)
    # sums of arrays: array accumulators
    both = fn([Vec(4, Real)], Vec(2, Real), lambda v: adcore.sum(4, lambda i: [v[i] * 2.0, v[i] * v[i]]))
    r = check_sampled(both, box, draw)
    assert -3.0 - 1e-13 < r[0]["lo"] <= -3.0 and 10.0 <= r[0]["hi"] < 10.0 + 1e-13  # 2 (-1 + 1 - 2 + 0.5) ...
    assert 2.25 * (1 - 1e-14) < r[1]["lo"] <= 2.25 and 18.0 <= r[1]["hi"] < 18.0 * (1 + 1e-14)


def test_opaque_functions_use_their_rule_or_give_top() -> None:
    cube = opaque([Real], Real, lambda x: x**3, name="cube")
    f = fn([Real], Real, lambda x: cube(x) + 1.0)
    assert all(math.isnan(v) for v in box1(f, 1.0, 2.0).values())
    assert "cube" not in [h.name for h in call_graph(interval(f).ir)]  # without a rule, never called
    span = {"lo": Real, "hi": Real}
    cube.interval = fn([span], span, lambda r: {"lo": cube(r["lo"]), "hi": cube(r["hi"])}, name="cube_range")
    assert "-- interval: cube_range" in str(cube.ir)
    g = fn([Real], Real, lambda x: cube(x) * 2.0)
    assert box1(g, 1.0, 2.0) == {"lo": 2.0, "hi": 16.0}
    assert adcore.compile(interval(g))({"lo": 1.0, "hi": 2.0}) == {"lo": 2.0, "hi": 16.0}  # a host call
    with pytest.raises(AdcoreTypeError, match="expected signature"):
        cube.interval = fn([Real], Real, lambda x: x)
    two = opaque([Real], Vec(2, Real), lambda x: [x, 2 * x], name="two")
    r = adcore.compile(interval(fn([Real], Real, lambda x: two(x)[1] * 0.0)))({"lo": 0.0, "hi": 1.0})
    assert math.isnan(r["lo"]) and math.isnan(r["hi"])  # an array of top: even times 0 (inf * 0 is NaN)


def test_a_rule_for_small_boxes_is_used_only_when_asked_for_and_through_calls() -> None:
    """`interval(f, near=True)` uses a function's `interval_near` rule, in calls nested in other
    functions too; `interval(f)` keeps `interval`; both are sampled sound and cached apart."""
    span = {"lo": Real, "hi": Real}
    sq = opaque([Real], Real, lambda x: x * x, name="sq")
    # hand-made rules: `interval` the exact range on [lo, hi] >= 0, `interval_near` a cruder one
    sq.interval = fn(
        [span], span, lambda r: {"lo": r["lo"] * r["lo"], "hi": r["hi"] * r["hi"]}, name="sq_exact"
    )
    sq.interval_near = fn([span], span, lambda r: {"lo": 0.0, "hi": r["hi"] * r["hi"] + 1.0}, name="sq_near")
    assert "near: sq_near" in str(sq.ir)
    inner = fn([Real], Real, lambda x: sq(x) + 1.0, name="inner")
    outer = fn([Real], Real, lambda x: inner(x) * 2.0, name="outer")
    box = {"lo": 1.0, "hi": 2.0}

    def ends(r: dict[str, float]) -> tuple[float, float]:  # (the additions widen by a few ulps)
        return pytest.approx(r["lo"], rel=1e-13), pytest.approx(r["hi"], rel=1e-13)

    assert ends(adcore.compile(interval(outer))(box)) == (4.0, 10.0)  # 2 (x^2 + 1) on [1, 2]
    assert ends(adcore.compile(interval(outer, near=True))(box)) == (2.0, 12.0)  # 2 ([0, 5] + 1)
    assert ends(adcore.compile(interval(outer))(box)) == (4.0, 10.0)  # not the cached near one
    for near in (False, True):
        r = interp(interval(outer, near=near))(box)
        for k in range(11):
            x = 1.0 + k / 10
            assert r["lo"] <= 2.0 * (x * x + 1.0) <= r["hi"]
    plain = fn([Real], Real, lambda x: x * 3.0)  # no rule anywhere: the same function either way
    a, b = interval(plain, near=True).ir.body, interval(plain).ir.body
    assert a is not None and b is not None and [e.prim for e in a.eqns] == [e.prim for e in b.eqns]
    assert adcore.has_near_rules(outer) and adcore.has_near_rules(sq) and not adcore.has_near_rules(plain)
    assert not adcore.has_near_rules(fn([Real], Real, lambda x: plain(x) + 1.0))
    with pytest.raises(AdcoreTypeError, match="expected signature"):
        sq.interval_near = fn([Real], Real, lambda x: x)


# -- math functions against mpmath --------------------------------------------------------------------

mpmath.mp.prec = 200
PI = mpmath.pi
UNARY_MP = {
    "exp": (mpmath.exp, None),
    "expm1": (mpmath.expm1, None),
    "log": (mpmath.log, (0.0, math.inf)),
    "log1p": (mpmath.log1p, (-1.0, math.inf)),
    "log2": (lambda x: mpmath.log(x, 2), (0.0, math.inf)),
    "log10": (mpmath.log10, (0.0, math.inf)),
    "sin": (mpmath.sin, None),
    "cos": (mpmath.cos, None),
    "tan": (mpmath.tan, None),
    "asin": (mpmath.asin, (-1.0, 1.0)),
    "acos": (mpmath.acos, (-1.0, 1.0)),
    "atan": (mpmath.atan, None),
    "sinh": (mpmath.sinh, None),
    "cosh": (mpmath.cosh, None),
    "tanh": (mpmath.tanh, None),
    "asinh": (mpmath.asinh, None),
    "acosh": (mpmath.acosh, (1.0, math.inf)),
    "atanh": (mpmath.atanh, (-1.0, 1.0)),
    "cbrt": (lambda x: mpmath.sign(x) * mpmath.cbrt(abs(x)), None),  # the real root
}


MAX, TINY = 1.7976931348623157e308, 2.0**-1022


def below(bound: float, x: Any) -> bool:
    """bound <= the exact x as the program can see it: beyond the largest double x is an infinity,
    and below the normal range it rounds to a subnormal (the bounds there rest on monotonicity)."""
    if abs(x) > MAX:
        return bound <= float(x)
    return bound <= x + (2.0**-1073 if abs(x) < TINY else 0.0)


def above(bound: float, x: Any) -> bool:
    return below(-bound, -x)


def critical_points(name: str, lo: float, hi: float) -> list[Any]:
    """Where f may have an extremum (or a pole, for tan) strictly inside [lo, hi], exactly."""
    if name in ("sin", "cos", "tan"):
        shift = {"sin": PI / 2, "cos": 0, "tan": PI / 2}[name]
        k = mpmath.ceil((mpmath.mpf(lo) - shift) / PI)
        found = []
        while shift + k * PI <= hi and len(found) < 8:
            found.append(shift + k * PI)
            k += 1
        return found
    if name == "cosh" and lo < 0 < hi:
        return [mpmath.mpf(0)]
    return []


def exact_range(name: str, lo: float, hi: float) -> tuple[Any, Any] | None:
    """The exact [min, max] of f over [lo, hi]; None where f is NaN somewhere (outside its domain)."""
    f, domain = UNARY_MP[name]
    if domain is not None and (lo < domain[0] or hi > domain[1]):
        return None
    inside = critical_points(name, lo, hi)
    if name == "tan" and inside:
        return (mpmath.mpf("-inf"), mpmath.mpf("inf"))
    values = [f(mpmath.mpf(x)) for x in (lo, hi)] + [f(c) for c in inside]
    return min(values), max(values)


def random_ranges(name: str, rng: random.Random, n: int) -> list[tuple[float, float]]:
    domain = UNARY_MP[name][1]
    out = []
    for _ in range(n):
        kind = rng.random()
        if kind < 0.3:
            c = rng.choice([-1, 1]) * 10 ** rng.uniform(-8, 7)
        elif kind < 0.6 and name in ("sin", "cos", "tan"):
            c = rng.randint(-40, 40) * math.pi / 2 + rng.choice([0.0, 1e-9, -1e-9, 1e-3, -1e-3])
        elif domain is not None and kind < 0.8:
            c = rng.choice([d for d in domain if math.isfinite(d)]) + rng.uniform(-0.1, 0.1)
        else:
            c = rng.uniform(-4.0, 4.0)
        r = rng.choice([0.0, 1e-12, 1e-6, 0.01, 0.5, 2.0, 8.0]) * (1.0 if rng.random() < 0.7 else abs(c))
        out.append((c - r, c + r))
    return out


@pytest.mark.parametrize("name", sorted(UNARY_MP))
def test_math_rules_enclose_the_exact_range_and_every_implementation(name) -> None:
    f = am.UNARY[name]
    g = interval(f)
    run_i, run_c = interp(g), adcore.compile(g)
    plain_i, plain_c = interp(f), adcore.compile(f)
    rng = random.Random(name)
    for lo, hi in random_ranges(name, rng, 150):
        box = {"lo": lo, "hi": hi}
        for r, plain in ((run_i(box), plain_i), (run_c(box), plain_c)):
            assert well_formed(r)
            for x in [lo, hi, (lo + hi) / 2] + [rng.uniform(lo, hi) for _ in range(6)]:
                assert encloses(r, plain(x)), (name, lo, hi, x, plain(x), r)
            if lo == hi:
                v = plain(lo)
                assert (r["lo"] == v == r["hi"]) or (math.isnan(v) and math.isnan(r["lo"])), (lo, r)
                continue
            exact = exact_range(name, lo, hi)
            if exact is None:
                assert math.isnan(r["lo"]) and math.isnan(r["hi"]), (name, lo, hi, r)
                continue
            assert below(r["lo"], exact[0]) and above(r["hi"], exact[1]), (name, lo, hi, r, exact)
            # tight: a few ulps beyond the exact range (periodic rules may add an extremum within
            # 2^-20 periods of an end; tan near a pole may give the whole line)
            slack = 2.0**-44 * max(abs(float(exact[0])), abs(float(exact[1])), 1e-300)
            if name in ("sin", "cos", "tan") and max(-lo, hi) > PERIODIC_LIMIT:
                continue  # far from 0: the whole [-1, 1] (or line)
            if name in ("sin", "cos"):
                slack += 1e-10
            if name == "tan" and critical_points(name, lo - 1e-5, hi + 1e-5):
                continue
            if math.isfinite(float(exact[0])):
                assert r["lo"] >= exact[0] - slack, (name, lo, hi, r, exact)
            if math.isfinite(float(exact[1])):
                assert r["hi"] <= exact[1] + slack, (name, lo, hi, r, exact)


def binary_cases(rng: random.Random, n: int) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    def one() -> tuple[float, float]:
        c = rng.choice([rng.uniform(-3, 3), rng.choice([-1, 1]) * 10 ** rng.uniform(-5, 3), 0.0])
        r = rng.choice([0.0, 1e-9, 0.01, 0.5, 3.0])
        return (c - r, c + r)

    return [(one(), one()) for _ in range(n)]


def test_binary_math_rules_enclose_the_exact_range_and_every_implementation() -> None:
    rng = random.Random(7)
    cases = binary_cases(rng, 200)
    for f in (am.atan2, am.hypot, am.pow):
        g = interval(f)
        runs = [(interp(g), interp(f)), (adcore.compile(g), adcore.compile(f))]
        for (alo, ahi), (blo, bhi) in cases:
            if f is am.pow:
                alo, ahi = sorted((abs(alo), abs(ahi))) if alo * ahi > 0 else (0.0, max(-alo, ahi))
            a, b = {"lo": alo, "hi": ahi}, {"lo": blo, "hi": bhi}
            for run, plain in runs:
                r = run(a, b)
                assert well_formed(r)
                for _ in range(8):
                    p, q = rng.uniform(alo, ahi), rng.uniform(blo, bhi)
                    assert encloses(r, plain(p, q)), (f.name, a, b, p, q, r)
                if (alo, blo) == (ahi, bhi):
                    v = plain(alo, blo)
                    assert (
                        r["lo"] == v == r["hi"] or math.isnan(r["lo"]) or (f is am.atan2 and blo <= 0 == alo)
                    )
                    continue
                corners = [(p, q) for p in (alo, ahi) for q in (blo, bhi)]
                if f is am.atan2:
                    if alo <= 0 <= ahi and blo <= 0:
                        exact = (-PI, PI)
                    else:
                        vals = [mpmath.atan2(p, q) for p, q in corners]
                        exact = (min(vals), max(vals))
                elif f is am.hypot:
                    near = [
                        0.0 if lo <= 0 <= hi else min(abs(lo), abs(hi)) for lo, hi in ((alo, ahi), (blo, bhi))
                    ]
                    far = [max(abs(lo), abs(hi)) for lo, hi in ((alo, ahi), (blo, bhi))]
                    exact = (mpmath.hypot(*near), mpmath.hypot(*far))
                else:
                    if not (alo > 0 or blo > 0):
                        continue  # zero bases with exponents <= 0: top or the value at a point
                    vals = [mpmath.power(mpmath.mpf(p), q) for p, q in corners]
                    exact = (min(vals), max(vals))
                assert below(r["lo"], exact[0]) and above(r["hi"], exact[1]), (f.name, a, b, r, exact)
                if math.isfinite(float(exact[1])):
                    slack = 2.0**-44 * max(abs(float(exact[0])), abs(float(exact[1])), 1e-300)
                    assert r["lo"] >= exact[0] - slack and r["hi"] <= exact[1] + slack, (
                        f.name,
                        a,
                        b,
                        r,
                        exact,
                    )
