"""The AD language against hand-derived values (the acceptance values of the adcore issue)."""

from __future__ import annotations

import math

import pytest

import adcore
from adcore import Dual, Int, Real, Vec, fn, interp, jvp, opaque, select, vec, vjp
from adcore import math as am

Vec2 = Vec(2, Real)


def grad_fn(f: adcore.Fn) -> adcore.Fn:
    return fn(f.params, f.params[0], lambda x: vjp(f)(x).grad(1.0), name=f"grad_{f.name}")


def test_polynomial_value_and_gradient() -> None:
    f = fn([Vec2], Real, lambda v: v[0] * v[0] + v[0] * v[1])
    assert interp(f)([2.0, 3.0]) == 10.0
    assert interp(grad_fn(f))([2.0, 3.0]) == [7.0, 2.0]


def test_rose_readme_example_jvp_and_vjp() -> None:
    f = fn([Real, Real], Real, lambda x, y: y * x * x + (2 + 2))
    assert interp(f)(3.0, 2.0) == 22.0
    df = jvp(f)
    out = interp(df)({"re": 3.0, "du": 1.0}, {"re": 2.0, "du": 0.0})
    assert out == {"re": 22.0, "du": 12.0}
    g = fn([Real, Real], Vec2, lambda x, y: list(vjp(f)(x, y).grad(1.0)))
    assert interp(g)(3.0, 2.0) == [12.0, 9.0]


def test_exp_plus_tan_through_log() -> None:
    def body(x):
        y = am.exp(x)
        z = am.log(y)
        return y + am.sin(z) / am.cos(z)

    f = fn([Real], Real, body)
    d = fn([Real], Real, lambda x: vjp(f)(x).grad(1.0))
    for x, want in [(0.5, 2.947168), (1.0, 6.143801)]:
        assert interp(d)(x) == pytest.approx(want, abs=5e-7)
        assert interp(jvp(f))({"re": x, "du": 1.0})["du"] == pytest.approx(want, abs=5e-7)
        assert want == pytest.approx(math.exp(x) + 1 / math.cos(x) ** 2, abs=5e-7)  # the oracle itself


def test_pow_value_gradient_and_hessian() -> None:
    f = fn([Vec2], Real, lambda v: am.pow(v[0], v[1]))
    g = fn([Vec2], Vec2, lambda v: vjp(f)(v).grad(1.0))
    h = fn([Vec2], Vec(2, Vec2), lambda v: (lambda r: [r.grad([1.0, 0.0]), r.grad([0.0, 1.0])])(vjp(g)(v)))
    assert interp(f)([2.0, 3.0]) == 8.0
    gx, gy = interp(g)([2.0, 3.0])
    assert gx == 12.0 and gy == pytest.approx(8 * math.log(2), rel=1e-15)
    (hxx, hxy), (hyx, hyy) = interp(h)([2.0, 3.0])
    cross = 4 + 12 * math.log(2)
    assert hxx == pytest.approx(12.0, rel=1e-15)
    assert hxy == pytest.approx(cross, rel=1e-15) and hyx == pytest.approx(cross, rel=1e-15)
    assert hyy == pytest.approx(8 * math.log(2) ** 2, rel=1e-15)


def test_python_loop_is_a_macro() -> None:
    def body(n):
        y = n
        for _ in range(3):
            y = y * n
        return y

    f = fn([Real], Real, body)
    assert interp(f)(3.0) == 81.0
    assert interp(grad_fn(f))(3.0) == 108.0
    assert sum(1 for e in f.ir.body.eqns if e.prim == "mul") == 3


def tower(height: int, shared: bool) -> adcore.Fn:
    f = fn([Real], Real, lambda x: x, name="f0")
    for k in range(1, height + 1):
        prev = f
        if shared:
            f = fn([Real], Real, lambda x, p=prev: (lambda y: y + y)(p(x)), name=f"f{k}")
        else:
            f = fn([Real], Real, lambda x, p=prev: p(x) + p(x), name=f"f{k}")
    return f


def test_tower_jvp_is_linear_in_height_and_exact() -> None:
    f = tower(20, shared=True)
    out = interp(jvp(f))({"re": 2.0, "du": 3.0})
    assert out == {"re": 2.0**20 * 2, "du": 2.0**20 * 3}
    # one derivative function per level: the call graph is preserved, never inlined
    names = [g.name for g in adcore.ir.call_graph(adcore.jvp(f).ir)]
    assert len(names) == 21
    assert all(len(g.body.eqns) <= 3 for g in adcore.ir.call_graph(jvp(f).ir) if g.body)


def test_tower_reverse_mode_is_linear_in_height() -> None:
    f = tower(20, shared=False)
    g = fn([Real], Real, lambda x: vjp(f)(x).grad(1.0))
    graph = adcore.ir.call_graph(g.ir)
    assert len(graph) <= 3 * 21 + 2
    assert sum(adcore.ir.count_eqns(h.body) for h in graph if h.body) < 12 * 21
    small = tower(8, shared=False)
    d = fn([Real], Real, lambda x: vjp(small)(x).grad(1.0))
    assert interp(d)(2.0) == 2.0**8


def test_shared_value_gets_sum_of_cotangents() -> None:
    def body(x):
        y = am.sin(x)
        return y * y + 3.0 * y + y

    f = fn([Real], Real, body)
    x = 0.7
    assert interp(grad_fn(f))(x) == pytest.approx((2 * math.sin(x) + 4) * math.cos(x), rel=1e-14)
    backward = adcore.reverse.reverse_pair(f.ir)[1]
    assert sum(1 for e in backward.body.eqns if e.prim == "call") == 1  # sin's pullback runs once


def test_arrays_stay_loops_and_gather_transposes_to_scatter() -> None:
    n = 1000
    table = Vec(n, Int)

    def energy(x, idx):
        return adcore.sum(n, lambda i: (x[idx[i]] - 1.0) ** 2)

    f = fn([Vec(n, Real), table], Real, energy)
    assert adcore.ir.count_eqns(f.ir.body) < 10
    g = fn([Vec(n, Real), table], Vec(n, Real), lambda x, idx: vjp(f)(x, idx).grad(1.0)[0])
    assert adcore.ir.count_eqns(g.ir.body) < 10
    xs = [0.001 * k for k in range(n)]
    idx = [(7 * k) % 10 for k in range(n)]  # only the first 10 entries are read, 100 times each
    grad = interp(g)(xs, idx)
    for k in range(10):
        assert grad[k] == pytest.approx(100 * 2 * (xs[k] - 1.0), rel=1e-12)
    assert all(v == 0.0 for v in grad[10:])


def test_vec_and_struct_values() -> None:
    P = {"x": Real, "y": Real}

    def norm2(p):
        return p["x"] * p["x"] + p["y"] * p["y"]

    f = fn([Vec(3, P)], Real, lambda ps: adcore.sum(3, lambda i: norm2(ps[i])))
    pts = [{"x": 1.0, "y": 2.0}, {"x": 3.0, "y": 4.0}, {"x": 5.0, "y": 6.0}]
    assert interp(f)(pts) == 91.0
    g = fn([Vec(3, P)], Vec(3, P), lambda ps: vjp(f)(ps).grad(1.0))
    assert interp(g)(pts) == [{"x": 2 * p["x"], "y": 2 * p["y"]} for p in pts]
    doubled = fn(
        [Vec(3, P)], Vec(3, P), lambda ps: vec(3, P, lambda i: {"x": 2.0 * ps[i]["x"], "y": ps[i]["y"]})
    )
    assert interp(doubled)(pts)[2] == {"x": 10.0, "y": 6.0}


def test_select_untaken_branch_has_exactly_zero_derivative() -> None:
    f = fn([Real], Real, lambda x: select(x > 0.0, am.raw_sqrt(x), 0.0 * x))
    g = grad_fn(f)
    assert interp(g)(-1.0) == 0.0
    assert interp(jvp(f))({"re": -1.0, "du": 1.0})["du"] == 0.0
    assert interp(g)(4.0) == 0.25
    # also through the log, whose derivative at 0 is infinite
    h = fn([Real], Real, lambda x: select(x > 0.0, am.log(x), x))
    assert interp(grad_fn(h))(0.0) == 1.0


def test_sqrt_derivative_is_clamped_near_zero() -> None:
    g = grad_fn(am.sqrt)
    assert interp(g)(0.0) == 1.0 / (2 * am.SQRT_EPSILON)
    assert interp(g)(4.0) == 0.25


def test_custom_jvp_on_a_traced_function_and_opaque() -> None:
    cube = opaque([Real], Real, lambda x: x**3, name="cube")
    with pytest.raises(adcore.AdcoreError, match="cube"):
        fn([Real], Real, lambda x: vjp(cube)(x).grad(1.0))
    cube.jvp = fn([Dual], Dual, lambda d: {"re": cube(d["re"]), "du": 3.0 * d["re"] * d["re"] * d["du"]})
    g = fn([Real], Real, lambda x: vjp(cube)(x).grad(1.0))
    assert interp(g)(2.0) == 12.0
    hess = fn([Real], Real, lambda x: vjp(g)(x).grad(1.0))
    assert interp(hess)(2.0) == 12.0


def test_nonlinear_custom_jvp_is_refused() -> None:
    bad = opaque([Real], Real, math.sin, name="bad")
    bad.jvp = fn([Dual], Dual, lambda d: {"re": bad(d["re"]), "du": d["du"] * d["du"]})
    with pytest.raises(adcore.LinearityError, match="product of two tangents"):
        fn([Real], Real, lambda x: vjp(bad)(x).grad(1.0))


def test_errors_name_function_and_parameter() -> None:
    f = fn([Real, Real], Real, lambda x, y: x + y, name="plus")
    with pytest.raises(adcore.AdcoreTypeError, match="plus expects 2"):
        fn([Real], Real, lambda x: f(x))
    with pytest.raises(adcore.AdcoreTypeError, match="argument 1 of plus"):
        fn([Real], Real, lambda x: f(x, [x, x]))
    with pytest.raises(adcore.TraceError, match="select"):
        fn([Real], Real, lambda x: x if x > 0.0 else -x)
    with pytest.raises(adcore.AdcoreTypeError, match="body of two"):
        fn([Real, Real], Real, lambda x: x, name="two")
    leaked = []  # a loop body's value used after the loop
    with pytest.raises(adcore.TraceError, match="outside the function or loop body"):
        fn([Vec2], Real, lambda x: adcore.sum(2, lambda i: leaked.append(x[i]) or x[i]) + leaked[0])
    assert f(1.0, 2.0) == 3.0  # outside a trace, a function runs on Python values
    with pytest.raises(adcore.AdcoreError, match="argument 0 of plus"):
        interp(f)("a", 1.0)


def test_int_arithmetic_and_indices() -> None:
    f = fn([Vec(4, Real), Int], Real, lambda xs, k: xs[(k + 1) % 4] * adcore.to_real(k // 2))
    assert interp(f)([1.0, 2.0, 3.0, 4.0], 3) == 1.0
    assert interp(f)([1.0, 2.0, 3.0, 4.0], 2) == 4.0
    assert interp(fn([Int, Int], Int, lambda a, b: a // b))(-7, 2) == -3  # truncation, as Wasm


def test_library_code_runs_on_plain_numbers_too() -> None:
    def smooth_max(a, b):  # a macro written once for numbers and traces
        return am.log(am.exp(a) + am.exp(b)) + select(a > b, 0.0, 0.0 * a) + am.max(a, b) * 0.0

    assert smooth_max(1.0, 2.0) == pytest.approx(math.log(math.e + math.e**2))
    f = fn([Real, Real], Real, smooth_max)
    assert interp(f)(1.0, 2.0) == smooth_max(1.0, 2.0)
    assert adcore.sum(3, lambda i: adcore.to_real(i)) == 3.0
    assert vec(3, Real, lambda i: 2 * i) == [0, 2, 4]


def test_printing_shows_the_call_graph() -> None:
    f = fn([Real], Real, lambda x: am.sin(x) * 2.0, name="twice_sin")
    text = str(f)
    assert "fn twice_sin(" in text and "sin(" in text and "opaque" in text


def test_strict_interpreter_reports_domain_errors() -> None:
    f = fn([Real], Real, lambda x: am.log(x))
    assert math.isnan(interp(f)(-1.0))
    with pytest.raises(adcore.DomainError, match="log"):
        interp(f, strict=True)(-1.0)


def test_nested_gather_scatters_into_the_outer_accumulator() -> None:
    n, m = 200, 3
    f = fn(
        [Vec(n, Real), Vec(n, Vec(m, Int))],
        Real,
        lambda x, rows: adcore.sum(n, lambda r: adcore.sum(vec(m, Real, lambda j: x[rows[r][j]] ** 2))),
    )
    g = fn(
        [Vec(n, Real), Vec(n, Vec(m, Int))],
        Vec(n, Real),
        lambda x, rows: vjp(f, wrt=[0])(x, rows).grad(1.0)[0],
    )
    backward = adcore.reverse.reverse_pair(f.ir, (True, False))[1]
    refs = [p for e in backward.body.eqns if e.prim == "for" for p in e.params["body"].params[1:]]
    assert [r.ty.of for r in refs] == [Vec(n, Real)]  # one accumulator for x, none per inner loop
    xs = [0.01 * k for k in range(n)]
    rows = [[k, (k + 1) % n, k] for k in range(n)]
    want = [2 * xs[k] * 3 for k in range(n)]  # x[k] is read twice by row k and once by row k - 1
    assert interp(g)(xs, rows) == pytest.approx(want, rel=1e-14)


def test_functions_defined_during_a_trace_with_explicit_parameters() -> None:
    """The classic perturbation-confusion example with x an explicit parameter of the inner
    function (tests/adcore/test_closures.py has it with x captured)."""

    def jvp_inner(x):  # d/dy (x + y) at y = 3, with x an explicit parameter of the inner function
        plus = fn([Real, Real], Real, lambda a, y: a + y, name="plus")
        return jvp(plus)({"re": x, "du": 0.0}, {"re": 3.0, "du": 1.0})["du"]

    outer = fn([Real], Real, jvp_inner)

    d = interp(jvp(outer))({"re": 2.0, "du": 1.0})
    assert d == {"re": 1.0, "du": 0.0}  # inner derivative 1, outer derivative 0
