"""Opaque functions with a Python implementation compile: they are host functions of the module.

Oracles: values and derivatives derived by hand, and the interpreter (which runs the same Python
implementation on the same values, so compiled results must be equal, not just close).
"""

from __future__ import annotations

import math

import pytest

import adcore
from adcore import Bool, Dual, Int, Real, Vec, fn, interp, jvp, opaque, vjp
from adcore import math as am
from adcore.wasm.codegen import build_module
from adcore.wasm.runtime import WasmHostError


def cube_family() -> adcore.Fn:
    """x^3 whose custom JVP calls two more opaque functions (3x^2, and 6x for the second order)."""
    d2 = opaque([Real], Real, lambda x: 6.0 * x, name="cube_dd")
    d2.jvp = fn([Dual], Dual, lambda d: {"re": d2(d["re"]), "du": d["du"] * 6.0})
    d1 = opaque([Real], Real, lambda x: 3.0 * x * x, name="cube_d")
    d1.jvp = fn([Dual], Dual, lambda d: {"re": d1(d["re"]), "du": d["du"] * d2(d["re"])})
    cube = opaque([Real], Real, lambda x: x**3, name="cube")
    cube.jvp = fn([Dual], Dual, lambda d: {"re": cube(d["re"]), "du": d["du"] * d1(d["re"])})
    return cube


def test_values_gradients_and_hessians_through_host_calls() -> None:
    cube = cube_family()
    f = fn([Real, Real], Real, lambda x, y: cube(x * y) + x)  # (xy)^3 + x
    grad = fn([Real, Real], Vec(2, Real), lambda x, y: list(vjp(f)(x, y).grad(1.0)))

    def rows(x: object, y: object) -> list[list[object]]:
        r = vjp(grad)(x, y)
        return [list(r.grad([1.0, 0.0])), list(r.grad([0.0, 1.0]))]

    hess = fn([Real, Real], Vec(2, Vec(2, Real)), rows)
    x, y = 1.5, 2.0
    assert adcore.compile(f)(x, y) == (x * y) ** 3 + x
    by_hand_grad = [3 * x**2 * y**3 + 1, 3 * x**3 * y**2]
    by_hand_hess = [[6 * x * y**3, 9 * x**2 * y**2], [9 * x**2 * y**2, 6 * x**3 * y]]
    assert adcore.compile(grad)(x, y) == pytest.approx(by_hand_grad, rel=1e-15)
    got = adcore.compile(hess)(x, y)
    assert [got[0], got[1]] == [
        pytest.approx(by_hand_hess[0], rel=1e-15),
        pytest.approx(by_hand_hess[1], rel=1e-15),
    ]
    for g in (f, grad, hess):
        assert adcore.compile(g)(x, y) == interp(g)(x, y)
    dual = adcore.compile(jvp(f))({"re": x, "du": 1.0}, {"re": y, "du": 0.0})
    assert dual == {"re": (x * y) ** 3 + x, "du": by_hand_grad[0]}
    _, plan = build_module(hess.ir)
    assert {g.name for g in plan.host} == {"cube", "cube_d", "cube_dd"}


def test_arrays_ints_and_bools_cross_the_host_boundary() -> None:
    def scaled(v: list[float], k: int, flip: bool) -> list[float]:
        assert isinstance(k, int) and isinstance(flip, bool)  # the interpreter's Python types
        norm = math.sqrt(sum(a * a for a in v))
        return [(-a if flip else a) * k / norm for a in v]

    norm_k = opaque([Vec(3, Real), Int, Bool], Vec(3, Real), scaled, name="norm_k")
    f = fn([Vec(3, Real), Int, Bool], Vec(3, Real), lambda v, k, flip: norm_k(v, k, flip))
    c = adcore.compile(f)
    assert c([1.0, 2.0, 2.0], 3, False) == pytest.approx([1.0, 2.0, 2.0], rel=1e-15)
    assert c([1.0, 2.0, 2.0], 3, True) == [-a for a in c([1.0, 2.0, 2.0], 3, False)]
    assert c([0.5, -4.0, 8.0], 7, True) == interp(f)([0.5, -4.0, 8.0], 7, True)


def test_a_python_exception_is_a_trap_naming_the_function() -> None:
    mylog = opaque([Real], Real, math.log, name="mylog")
    c = adcore.compile(fn([Real], Real, lambda x: mylog(x) + 1.0))
    assert c(math.e) == 2.0
    with pytest.raises(WasmHostError, match=r"opaque function mylog raised ValueError") as caught:
        c(-1.0)
    assert isinstance(caught.value.__cause__, ValueError)
    assert c(1.0) == 1.0  # the instance goes on working, and the error does not resurface
    with pytest.raises(WasmHostError, match="mylog"):
        c.instance.call("main", -2.0)  # the checked call path says the same
    assert c.instance.call("main", 1.0) == 1.0


def test_a_result_of_the_wrong_shape_is_an_error_naming_the_function() -> None:
    pair = opaque([Real], Vec(2, Real), lambda x: [x, x, x], name="pair")
    c = adcore.compile(fn([Real], Real, lambda x: pair(x)[0]))
    with pytest.raises(WasmHostError, match=r"pair raised AdcoreError: result of pair: expected a list of 2"):
        c(1.0)


def test_math_library_functions_keep_their_wasm_bodies() -> None:
    f = fn([Real, Real], Real, lambda x, y: am.sin(x) * am.pow(y, x) + am.atan2(x, y))
    grad = fn([Real, Real], Vec(2, Real), lambda x, y: list(vjp(f)(x, y).grad(1.0)))
    _, plan = build_module(grad.ir)
    assert plan.host == []


def test_scalar_host_calls_take_ints_and_bools_and_return_several_results() -> None:
    def split(x: float, k: int, flip: bool) -> dict[str, object]:
        assert isinstance(k, int) and isinstance(flip, bool)  # the interpreter's Python types
        return {"scaled": -x * k if flip else x * k, "rounded": round(x), "big": x > 1.0}

    op = opaque([Real, Int, Bool], {"scaled": Real, "rounded": Int, "big": Bool}, split, name="split")
    f = fn([Real, Int, Bool], {"scaled": Real, "rounded": Int, "big": Bool}, lambda x, k, b: op(x, k, b))
    c = adcore.compile(f)
    assert c(2.5, 3, True) == {"scaled": -7.5, "rounded": 2, "big": True}
    for args in ((0.25, -4, False), (7.5, 0, True)):
        assert c(*args) == interp(f)(*args)
