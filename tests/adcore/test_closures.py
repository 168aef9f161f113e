"""Closures: functions traced inside another may read its values (lifted to parameters). The
perturbation-confusion examples of the AD literature against their hand-derived answers, nesting
three deep, derivatives of the outer function through the captured values, and the errors that
remain (a loop body's value used after the loop, a closure called outside its trace)."""

from __future__ import annotations

import pytest

import adcore
from adcore import Real, Vec, compile, fn, fold, interp, jvp, vec, vjp
from adcore import math as am


def derivative(f: adcore.Fn) -> adcore.Fn:
    return fn([Real], Real, lambda x: vjp(f)(x).grad(1.0), name=f"d_{f.name}")


def test_siskind_pearlmutter_perturbation_confusion() -> None:
    """d/dx [x * (d/dy (x + y))(y = 3)] = d/dx [x * 1] = 1 (a confused implementation gives 2)."""

    def outer(x):
        inner = fn([Real], Real, lambda y: x + y, name="inner")
        return x * jvp(inner)({"re": 3.0, "du": 1.0})["du"]

    f = fn([Real], Real, outer)
    for run in (interp, compile):
        assert run(jvp(f))({"re": 2.0, "du": 1.0}) == {"re": 2.0, "du": 1.0}
        assert run(derivative(f))(2.0) == 1.0


def test_derivative_of_a_derivative_through_a_captured_value() -> None:
    """g(x) = d/dy (x y^2) at y = x is 2 x^2, so g'(x) = 4 x: the outer derivative sees x both as
    the captured constant and as the point."""

    def outer(x):
        inner = fn([Real], Real, lambda y: x * y * y)
        return vjp(inner)(x).grad(1.0)

    g = fn([Real], Real, outer)
    for run in (interp, compile):
        assert run(g)(1.5) == 2 * 1.5**2
        assert run(derivative(g))(1.5) == 4 * 1.5
        assert run(derivative(derivative(g)))(1.5) == 4.0


def test_three_levels_and_values_captured_inside_loops() -> None:
    def level1(x):
        def level2(y):
            level3 = fn([Real], Real, lambda z: x * y * z + am.sin(x))
            return level3(2.0) + x

        inner = fn([Real], Real, level2)
        # a closure traced inside a loop body reads that body's value (s) and the function's (x)
        per_step = vec(
            3, Real, lambda i: (lambda s: fn([Real], Real, lambda t: s * t + x)(s))(adcore.to_real(i) + x)
        )
        return inner(x * 3.0) + adcore.sum(per_step)

    f = fn([Real], Real, level1)
    x = 0.7
    steps = sum((i + x) * (i + x) + x for i in range(3))
    want = x * 3 * x * 2 + __import__("math").sin(x) + x + steps
    assert interp(f)(x) == pytest.approx(want, rel=1e-15)
    assert compile(f)(x) == pytest.approx(want, rel=1e-15)
    dwant = 12 * x + __import__("math").cos(x) + 1 + sum(2 * (i + x) + 1 for i in range(3))
    assert interp(derivative(f))(x) == pytest.approx(dwant, rel=1e-14)
    assert compile(derivative(f))(x) == pytest.approx(dwant, rel=1e-14)


def test_a_fold_whose_step_is_a_closure() -> None:
    """A step function made once, reading the parameters, then used by a fold; its gradient."""

    def body(p):
        step = fn([Real], Real, lambda c: c * p[0] + am.sin(c) * p[1])
        return fold(5, 0.5, lambda c, i: step(c))

    f = fn([Vec(2, Real)], Real, body)
    p = [0.9, 0.3]
    c, dc = 0.5, [0.0, 0.0]
    for _ in range(5):
        import math

        dc = [dc[0] * (p[0] + math.cos(c) * p[1]) + c, dc[1] * (p[0] + math.cos(c) * p[1]) + math.sin(c)]
        c = c * p[0] + math.sin(c) * p[1]
    g = fn([Vec(2, Real)], Vec(2, Real), lambda p: vjp(f)(p).grad(1.0))
    assert interp(f)(p) == pytest.approx(c, rel=1e-15)
    assert compile(g)(p) == pytest.approx(dc, rel=1e-13)


def test_what_stays_an_error() -> None:
    kept = []

    def outer(x):
        kept.append(fn([Real], Real, lambda y: x * y))
        return x

    fn([Real], Real, outer)
    with pytest.raises(adcore.TraceError, match="reads values of the function traced around it"):
        kept[0](2.0)
    with pytest.raises(adcore.TraceError, match="outside the function or loop body"):
        fn([Real], Real, lambda z: kept[0](z))  # its captured x belongs to a finished trace
    with pytest.raises(adcore.AdcoreError, match="runs only there"):
        interp(kept[0])(2.0)
    with pytest.raises(adcore.AdcoreTypeError, match="custom jvp"):
        kept[0].jvp = fn([adcore.Dual], adcore.Dual, lambda d: d)
