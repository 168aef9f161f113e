"""Property-based checks on random programs: JVP vs central differences, the transpose identity
<J v, u> = <v, J^T u>, Hessian symmetry, and finite differences over the whole math library."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adcore import Real, Vec, fn, interp, jvp, vjp
from adcore import math as am

from .programs import N_INPUTS, as_vector_fn, oracle, programs

points = st.lists(st.floats(-2.0, 2.0), min_size=N_INPUTS, max_size=N_INPUTS)
directions = st.lists(st.floats(-1.0, 1.0), min_size=N_INPUTS, max_size=N_INPUTS)
cotangents = st.lists(st.floats(-1.0, 1.0), min_size=2, max_size=2)


def central(fun, x, v, h=1e-6):
    plus = fun([a + h * b for a, b in zip(x, v)])
    minus = fun([a - h * b for a, b in zip(x, v)])
    return [(p - m) / (2 * h) for p, m in zip(plus, minus)]


@settings(max_examples=60, deadline=None)
@given(programs(), points, directions)
def test_jvp_matches_central_differences(program, x, v) -> None:
    f = as_vector_fn(program)
    assert interp(f)(x) == pytest.approx(oracle(program, x), rel=1e-12, abs=1e-12)
    dual = [{"re": a, "du": b} for a, b in zip(x, v)]
    got = [d["du"] for d in interp(jvp(f))(dual)]
    want = central(lambda y: oracle(program, y), x, v)
    assert got == pytest.approx(want, rel=1e-5, abs=1e-5)


@settings(max_examples=60, deadline=None)
@given(programs(), points, directions, cotangents)
def test_transpose_identity(program, x, v, u) -> None:
    f = as_vector_fn(program)
    dual = [{"re": a, "du": b} for a, b in zip(x, v)]
    jv = [d["du"] for d in interp(jvp(f))(dual)]
    vjp_fn = fn([Vec(N_INPUTS, Real), Vec(2, Real)], Vec(N_INPUTS, Real), lambda y, c: vjp(f)(y).grad(c))
    jtu = interp(vjp_fn)(x, u)
    lhs = sum(a * b for a, b in zip(jv, u))
    rhs = sum(a * b for a, b in zip(v, jtu))
    assert lhs == pytest.approx(rhs, rel=1e-10, abs=1e-10)


@settings(max_examples=30, deadline=None)
@given(programs(max_steps=5), points)
def test_hessian_is_symmetric(program, x) -> None:
    f = as_vector_fn(program)
    scalar = fn([Vec(N_INPUTS, Real)], Real, lambda y: f(y)[0])
    grad = fn([Vec(N_INPUTS, Real)], Vec(N_INPUTS, Real), lambda y: vjp(scalar)(y).grad(1.0))

    def rows(y):
        r = vjp(grad)(y)
        return [r.grad([1.0 if j == k else 0.0 for j in range(N_INPUTS)]) for k in range(N_INPUTS)]

    hess = interp(fn([Vec(N_INPUTS, Real)], Vec(N_INPUTS, Vec(N_INPUTS, Real)), rows))(x)
    for a in range(N_INPUTS):
        for b in range(N_INPUTS):
            assert hess[a][b] == pytest.approx(hess[b][a], rel=1e-9, abs=1e-9)
    # and the Hessian's rows are the finite differences of the gradient
    g = interp(grad)
    for k in range(N_INPUTS):
        e = [1.0 if j == k else 0.0 for j in range(N_INPUTS)]
        assert hess[k] == pytest.approx(central(g, x, e), rel=1e-4, abs=1e-4)


# (function, points inside its domain) for every function of the math library
LIBRARY = [
    (am.exp, [-3.0, 0.1, 2.5]),
    (am.expm1, [-1.0, 1e-3, 2.0]),
    (am.log, [0.2, 1.0, 30.0]),
    (am.log1p, [-0.5, 0.0, 4.0]),
    (am.log2, [0.3, 2.0, 9.0]),
    (am.log10, [0.3, 2.0, 9.0]),
    (am.sin, [-2.0, 0.3, 5.0]),
    (am.cos, [-2.0, 0.3, 5.0]),
    (am.tan, [-1.0, 0.3, 1.2]),
    (am.asin, [-0.7, 0.0, 0.9]),
    (am.acos, [-0.7, 0.0, 0.9]),
    (am.atan, [-3.0, 0.5, 10.0]),
    (am.sinh, [-2.0, 0.5, 3.0]),
    (am.cosh, [-2.0, 0.5, 3.0]),
    (am.tanh, [-2.0, 0.5, 3.0]),
    (am.asinh, [-2.0, 0.5, 3.0]),
    (am.acosh, [1.5, 2.0, 7.0]),
    (am.atanh, [-0.8, 0.1, 0.6]),
    (am.cbrt, [-8.0, 0.5, 27.0]),
    (am.sqrt, [0.5, 2.0, 9.0]),
]


@pytest.mark.parametrize(("f", "xs"), LIBRARY, ids=[f.name for f, _ in LIBRARY])
def test_math_library_derivatives(f, xs) -> None:
    d = fn([Real], Real, lambda x: vjp(f)(x).grad(1.0))
    run, df = interp(f), interp(d)
    for x in xs:
        h = 1e-6 * max(1.0, abs(x))
        fd = (run(x + h) - run(x - h)) / (2 * h)
        assert df(x) == pytest.approx(fd, rel=1e-6, abs=1e-7)


@pytest.mark.parametrize("f", [am.atan2, am.pow, am.hypot], ids=lambda f: f.name)
def test_binary_math_derivatives(f) -> None:
    g = fn([Real, Real], Vec(2, Real), lambda x, y: list(vjp(f)(x, y).grad(1.0)))
    run, grad = interp(f), interp(g)
    for x, y in [(1.5, 0.7), (2.0, -1.3), (0.4, 2.2)]:
        h = 1e-6
        fx = (run(x + h, y) - run(x - h, y)) / (2 * h)
        fy = (run(x, y + h) - run(x, y - h)) / (2 * h)
        assert grad(x, y) == pytest.approx([fx, fy], rel=1e-6, abs=1e-7)


def test_math_values_follow_ieee_outside_the_domain() -> None:
    cases = [
        (am.log, 0.0, -math.inf),
        (am.log, -1.0, math.nan),
        (am.exp, 1000.0, math.inf),
        (am.asin, 2.0, math.nan),
    ]
    for f, x, want in cases:
        got = interp(f)(x)
        assert (math.isnan(got) and math.isnan(want)) or got == want
    assert interp(am.pow)(0.0, -1.0) == math.inf
    assert interp(am.pow)(-2.0, 3.0) == -8.0


@settings(max_examples=30, deadline=None)
@given(programs(max_steps=6))
def test_every_transformed_function_type_checks(program) -> None:
    from adcore.ir import call_graph
    from adcore.typecheck import check_function
    from adcore.wasm.simplify import simplify_program

    f = as_vector_fn(program)
    g = fn([Vec(N_INPUTS, Real)], Vec(N_INPUTS, Real), lambda y: vjp(f)(y).grad([1.0, 0.5]))
    h = fn([Vec(N_INPUTS, Real)], Vec(N_INPUTS, Real), lambda y: vjp(g)(y).grad([1.0, 0.0, 0.0]))
    for root in (g, h, jvp(h)):
        for func in call_graph(root.ir) + call_graph(simplify_program(root.ir)):
            check_function(func)
