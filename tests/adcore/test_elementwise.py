"""Elementwise arithmetic on arrays (scalars broadcast) and floor to Int: values against plain
Python, the interpreter against Wasm, gradients against hand-derived ones, Wasm's saturating
conversion at the edges of the Int range."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import adcore
from adcore import Int, Real, Vec, compile, fn, interp, vjp
from adcore import math as am


def test_arithmetic_with_broadcast_scalars() -> None:
    f = fn(
        [Vec(3, Real), Vec(3, Real), Real],
        Vec(3, Real),
        lambda a, b, s: (a + b) * s - a / 2.0 + (-b) + 1 - 2 * abs(a),
    )
    a, b, s = [1.0, -2.0, 3.0], [4.0, 5.0, -6.0], 2.0
    want = [(x + y) * s - x / 2.0 + (-y) + 1 - 2 * abs(x) for x, y in zip(a, b)]
    assert interp(f)(a, b, s) == compile(f)(a, b, s) == want
    assert sum(1 for e in f.ir.body.eqns if e.prim == "for") == len(f.ir.body.eqns)  # one loop per operation
    nested = fn([Vec(2, Vec(2, Real)), Real], Vec(2, Vec(2, Real)), lambda m, s: s * m + m * m)
    assert interp(nested)([[1.0, 2.0], [3.0, 4.0]], 0.5) == [[1.5, 5.0], [10.5, 18.0]]
    ints = fn([Vec(3, Int)], Vec(3, Int), lambda k: k * 2 + 1)
    assert compile(ints)([1, -2, 5]) == [3, -3, 11]


def test_gradient_of_an_elementwise_expression() -> None:
    f = fn([Vec(4, Real), Real], Real, lambda x, s: adcore.sum(x * x * s - x / s))
    g = fn(f.params, Vec(4, Real), lambda x, s: vjp(f, wrt=[0])(x, s).grad(1.0)[0])
    x, s = [0.5, -1.0, 2.0, 3.0], 1.5
    assert compile(g)(x, s) == interp(g)(x, s) == pytest.approx([2 * v * s - 1 / s for v in x], rel=1e-15)
    gs = fn(f.params, Real, lambda x, s: vjp(f, wrt=[1])(x, s).grad(1.0)[1])
    assert compile(gs)(x, s) == pytest.approx(sum(v * v + v / s**2 for v in x), rel=1e-14)


def test_shapes_must_agree() -> None:
    with pytest.raises(adcore.AdcoreTypeError, match=r"add elementwise needs arrays of one length"):
        fn([Vec(3, Real), Vec(2, Real)], Vec(3, Real), lambda a, b: a + b)
    with pytest.raises(adcore.AdcoreTypeError, match="elementwise"):
        fn([Vec(2, {"a": Real})], Vec(2, {"a": Real}), lambda a: a * 2.0)


EDGES = [
    2.5,
    -2.5,
    -0.0,
    0.999999,
    -1e-300,
    math.nan,
    math.inf,
    -math.inf,
    1e300,
    -1e300,
    2**31 - 0.5,
    2**31,
    -(2**31) - 0.5,
]


@pytest.mark.parametrize("x", EDGES)
def test_floor_int_saturates_as_wasm(x: float) -> None:
    f = fn([Real], Int, adcore.floor_int)
    want = (
        0
        if x != x
        else max(-(2**31), min(2**31 - 1, math.floor(x)))
        if math.isfinite(x)
        else (2**31 - 1 if x > 0 else -(2**31))
    )
    assert interp(f)(x) == compile(f)(x) == adcore.floor_int(x) == want


def test_floor_int_indexes_and_has_no_derivative() -> None:
    table = [10.0, 20.0, 30.0, 40.0]
    f = fn([Vec(4, Real), Real], Real, lambda t, u: t[adcore.floor_int(u * 4.0)] * u)
    g = fn(f.params, Real, lambda t, u: vjp(f, wrt=[1])(t, u).grad(1.0)[1])
    for u in (0.1, 0.3, 0.74):
        assert compile(f)(table, u) == table[math.floor(u * 4)] * u
        assert compile(g)(table, u) == table[math.floor(u * 4)]  # the index's derivative is zero


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-1e3, 1e3), min_size=1, max_size=6), st.floats(-10.0, 10.0))
def test_elementwise_against_python(x, s) -> None:
    n = len(x)
    f = fn([Vec(n, Real), Real], Vec(n, Real), lambda a, s: (a * s + a) / (abs(a) + 1.0) - s)
    want = [(v * s + v) / (abs(v) + 1.0) - s for v in x]
    assert interp(f)(x, s) == want
    assert compile(f)(x, s) == want
    h = fn([Vec(n, Real), Real], Real, lambda a, s: adcore.sum(am.sin(a[0]) * a))
    assert interp(h)(x, s) == pytest.approx(sum(math.sin(x[0]) * v for v in x), rel=1e-12, abs=1e-9)
