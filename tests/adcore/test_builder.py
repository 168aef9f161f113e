"""The builder numbers pure values as they are emitted (so straight-line code needs no separate
common-subexpression pass) and forwards the elements of array literals."""

from __future__ import annotations

import math

import adcore
from adcore import Real, Vec, fn, interp
from adcore.builder import Builder
from adcore.ir import Lit, Var
from adcore.types import VecT


def prims(f: adcore.Fn) -> list[str]:
    assert f.ir.body is not None
    return [e.prim for e in f.ir.body.eqns]


def test_a_pure_value_is_emitted_once() -> None:
    f = fn([Real, Real], Real, lambda x, y: (x + y) * (x + y) + (y + x))
    assert prims(f) == ["add", "mul", "add", "add"]  # x + y once; y + x is another expression
    assert interp(f)(1.5, 2.0) == 3.5 * 3.5 + 3.5


def test_zeros_of_both_signs_stay_apart() -> None:
    """0.0 == -0.0 as numbers, but x * 0.0 and x * -0.0 differ in sign."""
    f = fn([Real], Vec(2, Real), lambda x: [x * 0.0, x * -0.0])
    assert prims(f).count("mul") == 2
    pos, neg = interp(f)(3.0)
    assert math.copysign(1.0, pos) == 1.0 and math.copysign(1.0, neg) == -1.0
    assert [math.copysign(1.0, v) for v in adcore.compile(f)(3.0)] == [1.0, -1.0]


def test_a_value_made_in_a_loop_body_is_not_reused_after_it() -> None:
    def body(x, y):
        inside = adcore.sum(3, lambda i: x * y)  # x * y inside the loop body
        return inside + x * y  # after the loop: the body's x * y is out of scope

    f = fn([Real, Real], Real, body)
    assert prims(f) == ["for", "mul", "add"]
    loop = f.ir.body.eqns[0].params["body"]
    assert [e.prim for e in loop.eqns] == ["mul", "accum"]
    assert adcore.compile(f)(2.0, 5.0) == interp(f)(2.0, 5.0) == 40.0


def test_a_value_made_before_a_loop_is_reused_inside_it() -> None:
    f = fn([Real, Real], Real, lambda x, y: x * y + adcore.sum(3, lambda i: x * y))
    loop = next(e for e in f.ir.body.eqns if e.prim == "for").params["body"]
    assert [e.prim for e in loop.eqns] == ["accum"]
    assert adcore.compile(f)(2.0, 5.0) == 40.0


def test_an_array_literals_element_is_forwarded() -> None:
    b = Builder()
    x, y = Var(Real), Var(Real)
    (v,) = b.emit("vec", (x, y), elem=Real)
    assert b.emit1("index", v, Lit(1, adcore.Int)) is y
    assert isinstance(b.emit1("index", v, Var(adcore.Int)), Var)  # a dynamic index reads memory
    assert v.ty == VecT(2, Real)
    assert [e.prim for e in b.blocks[0]] == ["vec", "index"]
