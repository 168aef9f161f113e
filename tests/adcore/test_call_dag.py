"""Compiled size follows the size of the program, whatever its call graph's sharing.

The programs are call DAGs in which level k+1 calls level k twice with different arguments, so
nothing can merge the two calls: unrolled, level k would be 2^k copies of level 0. Oracles: the
same recursion evaluated with Python floats (values), central differences (derivatives), and the
interpreter (compiled code computes the same IEEE operations).
"""

from __future__ import annotations

import math

import pytest

import adcore
from adcore import Real, Vec, fn, interp, vjp
from adcore.wasm.codegen import build_module

from .call_dag import dag, forward, gradient, hessian

X, Y = 0.3, 0.7


def by_hand(depth: int, x: float, y: float) -> float:
    if depth == 0:
        return math.sin(x) + math.cos(y)
    return (by_hand(depth - 1, x / 2 + y, y - x / 4) + by_hand(depth - 1, y, x)) / 2


@pytest.mark.parametrize("depth", [0, 1, 3, 6])
def test_derivatives_of_a_call_dag_match_the_recursion_by_hand(depth: int) -> None:
    eps = 1e-5
    fx = (by_hand(depth, X + eps, Y) - by_hand(depth, X - eps, Y)) / (2 * eps)
    fy = (by_hand(depth, X, Y + eps) - by_hand(depth, X, Y - eps)) / (2 * eps)
    h = dag(depth)
    value, dx, dy = adcore.compile(gradient(h))(X, Y)
    assert value == pytest.approx(by_hand(depth, X, Y), rel=1e-14, abs=1e-15)
    assert [dx, dy] == pytest.approx([fx, fy], rel=1e-7, abs=1e-9)
    assert adcore.compile(forward(h))(X, Y) == pytest.approx([value, dx], rel=1e-14, abs=1e-15)
    g = fn([Real, Real], Vec(2, Real), lambda x, y: list(vjp(h)(x, y).grad(1.0)))
    run_g = interp(g)
    hxx_yx = [(a - b) / (2 * eps) for a, b in zip(run_g(X + eps, Y), run_g(X - eps, Y))]
    hxy_yy = [(a - b) / (2 * eps) for a, b in zip(run_g(X, Y + eps), run_g(X, Y - eps))]
    got = adcore.compile(hessian(h))(X, Y)
    assert got[0] == pytest.approx(hxx_yx, rel=1e-6, abs=1e-8)
    assert got[1] == pytest.approx(hxy_yy, rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("transform", [forward, gradient, hessian])
def test_compiled_call_dag_is_the_interpreters(transform: object) -> None:
    f = transform(dag(9))  # type: ignore[operator]
    assert adcore.compile(f)(X, Y) == interp(f)(X, Y)


@pytest.mark.parametrize("transform", [forward, gradient, hessian])
def test_module_size_is_linear_in_the_depth_of_a_call_dag(transform: object) -> None:
    """Depth 30 is 2^30 calls unrolled; the module must grow with the 30 functions instead."""
    sizes = {d: len(build_module(transform(dag(d)).ir)[0]) for d in (10, 20, 30)}  # type: ignore[operator]
    assert sizes[30] <= 4 * sizes[10]
    assert sizes[30] - sizes[20] <= 1.5 * (sizes[20] - sizes[10]) + 2048  # a straight line, not a curve
    adcore.compile(transform(dag(30)))  # type: ignore[operator]  # wasmtime accepts it (not run: 2^30 calls)


def test_a_call_dag_in_a_loop_is_inlined_within_a_budget() -> None:
    """Inside loops small callees are inlined; the budget keeps a DAG from being inlined whole."""
    n = 4
    for depth, run in ((5, True), (30, False)):
        h = dag(depth)
        f = fn(
            [Vec(n, Real), Vec(n, Real)], Real, lambda xs, ys, h=h: adcore.sum(n, lambda i: h(xs[i], ys[i]))
        )
        g = fn([Vec(n, Real), Vec(n, Real)], Vec(n, Real), lambda xs, ys, f=f: vjp(f)(xs, ys).grad(1.0)[0])
        assert len(build_module(g.ir)[0]) < 100_000
        if run:
            xs, ys = [0.1 * k for k in range(n)], [0.3 - 0.05 * k for k in range(n)]
            assert adcore.compile(g)(xs, ys) == interp(g)(xs, ys)


def test_nested_small_loops_are_unrolled_within_a_budget() -> None:
    """Loops of 8 iterations are unrolled; nested five deep that would be 8^5 copies of the body."""
    n = 8

    def nested(depth: int) -> adcore.Fn:
        def level(v: object, d: int, acc: object) -> object:
            if d == 0:
                return acc
            return adcore.sum(n, lambda i: level(v, d - 1, acc * v[i] + 1.0))  # type: ignore[index, operator]

        return fn([Vec(n, Real)], Real, lambda v: level(v, depth, v[0]))

    sizes = {d: len(build_module(nested(d).ir)[0]) for d in (3, 5)}
    assert sizes[5] <= 2 * sizes[3]
    xs = [0.1 * k - 0.3 for k in range(n)]
    f = nested(4)
    assert adcore.compile(f)(xs) == pytest.approx(interp(f)(xs), rel=1e-13)
