"""`fold` and `scan`, loops that carry state: values against plain Python loops, the interpreter
against Wasm, jvp/vjp against finite differences and the transpose identity, Hessians against finite
differences of the gradient, module size independent of the number of steps, and what reverse mode
keeps of the carries."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import adcore
from adcore import Int, Real, Vec, compile, fn, fold, interp, jvp, scan, select, vec, vjp
from adcore import math as am
from adcore.reverse import reverse_pair
from adcore.wasm.codegen import build_module

from .programs import N_INPUTS, OPS, programs, run


def flat(v) -> list[float]:
    if isinstance(v, dict):
        return [y for k in sorted(v) for y in flat(v[k])]
    return [y for x in v for y in flat(x)] if isinstance(v, list) else [v]


def grad_of(f: adcore.Fn, wrt: int = 0) -> adcore.Fn:
    def body(*args):
        grads = vjp(f, wrt=[wrt])(*args).grad(1.0)
        return grads if len(f.params) == 1 else grads[wrt]

    return fn(f.params, f.params[wrt], body, name=f"grad_{f.name}")


def fd_grad(fun, x: list[float], h: float = 1e-6) -> list[float]:
    out = []
    for k in range(len(x)):
        plus = [a + (h if j == k else 0.0) for j, a in enumerate(x)]
        minus = [a - (h if j == k else 0.0) for j, a in enumerate(x)]
        out.append((fun(plus) - fun(minus)) / (2 * h))
    return out


# -- a branchy recurrence (Futhark's loop workload, small) -------------------------------------------


def step_py(x: float, y: float, p: list[float], i: int) -> tuple[float, float]:
    a, b, c = p
    t = a * x - b * y + c * (i % 7 - 3) * 0.01
    nx = 0.5 * t + 0.3 * y if t > 0.0 else 0.25 * t - 0.2 * y
    ny = 0.6 * y + 0.1 * math.sqrt(nx * nx + 1.0)
    return nx, ny


def step_ad(carry, p, i):
    x, y = carry["x"], carry["y"]
    a, b, c = p[0], p[1], p[2]
    t = a * x - b * y + c * (adcore.to_real(i % 7) - 3.0) * 0.01
    nx = select(t > 0.0, 0.5 * t + 0.3 * y, 0.25 * t - 0.2 * y)
    ny = 0.6 * y + 0.1 * am.sqrt(nx * nx + 1.0)
    return {"x": nx, "y": ny}


def branchy(n: int) -> adcore.Fn:
    def body(p):
        out = fold(n, {"x": 1.0, "y": 0.5}, lambda c, i: step_ad(c, p, i))
        return out["x"] + 2.0 * out["y"]

    return fn([Vec(3, Real)], Real, body, name=f"branchy{n}")


def branchy_py(n: int, p: list[float]) -> float:
    x, y = 1.0, 0.5
    for i in range(n):
        x, y = step_py(x, y, p, i)
    return x + 2.0 * y


P = [0.9, 0.4, 1.3]


def test_branchy_loop_value_is_plain_pythons_bit_for_bit() -> None:
    f = branchy(200)
    want = branchy_py(200, P)
    assert interp(f)(P) == want
    assert compile(f)(P) == want


def test_branchy_loop_derivatives_match_finite_differences() -> None:
    n = 200
    f = branchy(n)
    g = interp(grad_of(f))(P)
    assert compile(grad_of(f))(P) == pytest.approx(g, rel=1e-13)
    assert g == pytest.approx(fd_grad(lambda p: branchy_py(n, p), P), rel=1e-6, abs=1e-9)
    for k in range(3):
        e = [1.0 if j == k else 0.0 for j in range(3)]
        dual = [{"re": a, "du": b} for a, b in zip(P, e)]
        jv = fn([Vec(3, {"re": Real, "du": Real})], Real, lambda d: jvp(f)(d)["du"])
        assert compile(jv)(dual) == pytest.approx(g[k], rel=1e-13)


def test_module_size_does_not_grow_with_the_steps() -> None:
    small, large = branchy(100), branchy(100_000)
    for make in (lambda f: f, grad_of):
        a, b = len(build_module(make(small).ir)[0]), len(build_module(make(large).ir)[0])
        assert abs(a - b) <= 16  # only the encoded constants differ
    assert len(build_module(grad_of(large).ir)[0]) < 40_000


def test_long_loop_value_and_gradient() -> None:
    """100,000 steps: the value is plain Python's, the gradient finite differences'."""
    n = 100_000
    f = branchy(n)
    assert compile(f)(P) == branchy_py(n, P)
    g = compile(grad_of(f))(P)
    assert g == pytest.approx(fd_grad(lambda p: branchy_py(n, p), P), rel=1e-5, abs=1e-8)


# -- semantics -------------------------------------------------------------------------------------


def test_fold_and_scan_of_scalars_structs_and_arrays() -> None:
    x = [0.5, -1.0, 2.0, 0.25]

    def body(x):
        total = fold(4, 0.0, lambda c, i: c * 0.5 + x[i])
        prods = scan(4, 1.0, lambda c, i: c * x[i])
        pair = fold(
            4, {"s": 0.0, "k": 0}, lambda c, i: {"s": c["s"] + x[i] * adcore.to_real(c["k"]), "k": c["k"] + 2}
        )
        arr = fold(4, [0.0, 1.0], lambda c, i: [c[1], c[0] + x[i]])  # an array carry, its elements swapped
        return {"total": total, "prods": prods, "pair": pair, "arr": arr}

    ret = {"total": Real, "prods": Vec(4, Real), "pair": {"s": Real, "k": Int}, "arr": Vec(2, Real)}
    f = fn([Vec(4, Real)], ret, body)
    total, prods, s, k, arr = 0.0, [], 0.0, 0, [0.0, 1.0]
    p = 1.0
    for v in x:
        total = total * 0.5 + v
        p *= v
        prods.append(p)
        s, k = s + v * k, k + 2
        arr = [arr[1], arr[0] + v]
    want = {"total": total, "prods": prods, "pair": {"s": s, "k": k}, "arr": arr}
    assert interp(f)(x) == want
    assert compile(f)(x) == want
    # outside a trace: plain Python numbers
    assert fold(4, 0.0, lambda c, i: c * 0.5 + x[i]) == total
    assert scan(4, 1.0, lambda c, i: c * x[i]) == prods


def test_array_carries_are_swapped_through_copies() -> None:
    """Two array carries exchanged every step (each copied into the buffer it does not point to)."""

    def body(x):
        c = fold(
            5,
            {"a": [1.0, 2.0], "b": [3.0, 4.0]},
            lambda c, i: {"a": c["b"], "b": [c["a"][0] * x[i], c["a"][1] + c["b"][0]]},
        )
        return [c["a"][0], c["a"][1], c["b"][0], c["b"][1]]

    f = fn([Vec(5, Real)], Vec(4, Real), body)
    x = [0.3, 0.7, -0.2, 1.1, 0.4]
    a, b = [1.0, 2.0], [3.0, 4.0]
    for v in x:
        a, b = b, [a[0] * v, a[1] + b[0]]
    assert interp(f)(x) == compile(f)(x) == a + b
    s = fn([Vec(5, Real)], Real, lambda x: adcore.sum(body(x)))
    g = interp(grad_of(s))(x)
    assert compile(grad_of(s))(x) == g
    assert g == pytest.approx(fd_grad(lambda y: interp(s)(y), x), rel=1e-7, abs=1e-9)


def test_counted_fold_and_scan() -> None:
    x = [1.5, 2.0, -0.5, 3.0, 0.25, 1.0]

    def body(x, k):
        return {
            "f": fold(6, 1.0, lambda c, i: c * x[i] + 1.0, count=k),
            "s": scan(6, 0.0, lambda c, i: c + x[i] * x[i], count=k),
        }

    f = fn([Vec(6, Real), Int], {"f": Real, "s": Vec(6, Real)}, body)
    c = compile(f)
    for k in (6, 0, 3, 1, 6):
        acc, s, col = 1.0, 0.0, []
        for v in x[:k]:
            acc = acc * v + 1.0
            s += v * v
            col.append(s)
        want = {"f": acc, "s": col + [0.0] * (6 - k)}
        assert interp(f)(x, k) == c(x, k) == want
    with pytest.raises(adcore.RangeError, match="loop count 7 is outside 0..6"):
        interp(f)(x, 7)
    with pytest.raises(adcore.WasmRangeError, match="loop count -2 is outside 0..6"):
        c(x, -2)
    # gradient over the first k steps only
    fk = fn([Vec(6, Real), Int], Real, lambda x, k: fold(6, 1.0, lambda c, i: c * x[i] + am.sin(c), count=k))
    gk = grad_of(fk)
    for k in (0, 2, 6):
        g = interp(gk)(x, k)
        assert compile(gk)(x, k) == pytest.approx(g, rel=1e-13, abs=1e-300)
        assert g == pytest.approx(fd_grad(lambda y, k=k: interp(fk)(y, k), x), rel=1e-6, abs=1e-8)
        assert all(v == 0.0 for v in g[k:])


def test_type_errors_name_the_construct() -> None:
    with pytest.raises(adcore.AdcoreTypeError, match="fold's body returns"):
        fn([Real], Real, lambda x: fold(3, 0, lambda c, i: c + x))  # an Int carry given a Real
    with pytest.raises(adcore.AdcoreTypeError, match="needs a Python int n"):
        fn([Real], Real, lambda x: fold(2.5, x, lambda c, i: c))


def test_printer_shows_the_carries() -> None:
    f = fn([Real], Real, lambda x: fold(3, x, lambda c, i: c * c))
    assert "fold v" in str(f) and "in 0..3 with v" in str(f)


# -- nesting ---------------------------------------------------------------------------------------


def test_folds_nested_in_loops_and_loops_in_folds() -> None:
    n, m = 4, 5

    def body(x, y):
        rows = vec(
            n, Real, lambda i: fold(m, x[i], lambda c, j: c * 0.8 + am.sin(c * y[j]))
        )  # fold in a loop
        acc = fold(
            n, [0.0, 0.0, 0.0, 0.0, 0.0], lambda c, i: vec(m, Real, lambda j: c[j] * 0.5 + rows[i] * y[j])
        )
        inner = fold(3, 1.0, lambda c, i: fold(2, c, lambda d, j: d * x[i] + 0.1))  # fold in a fold
        return adcore.sum(rows) + adcore.sum(acc) + inner

    f = fn([Vec(n, Real), Vec(m, Real)], Real, body)
    x, y = [0.3, -0.5, 0.9, 0.1], [0.2, 0.7, -0.4, 1.1, 0.5]
    assert compile(f)(x, y) == pytest.approx(interp(f)(x, y), rel=1e-14)
    for wrt, point, fun in ((0, x, lambda v: interp(f)(v, y)), (1, y, lambda v: interp(f)(x, v))):
        g = grad_of(f, wrt)
        got = interp(g)(x, y)
        assert compile(g)(x, y) == pytest.approx(got, rel=1e-12)
        assert got == pytest.approx(fd_grad(fun, point), rel=1e-6, abs=1e-8)


def test_hessian_of_a_fold_is_the_finite_differences_of_its_gradient() -> None:
    n = 6
    f = fn(
        [Vec(3, Real)],
        Real,
        lambda p: fold(n, 0.5, lambda c, i: am.sin(c * p[0]) + p[1] * c * c * 0.1 + p[2]),
    )
    g = grad_of(f)

    def rows(p):
        r = vjp(g)(p)
        return [r.grad([1.0 if j == k else 0.0 for j in range(3)]) for k in range(3)]

    hess = fn([Vec(3, Real)], Vec(3, Vec(3, Real)), rows)
    p = [0.7, 0.3, 0.2]
    h = interp(hess)(p)
    assert flat(compile(hess)(p)) == pytest.approx(flat(h), rel=1e-11)
    for k in range(3):
        e = [1.0 if j == k else 0.0 for j in range(3)]
        column = [
            (a - b) / 2e-6
            for a, b in zip(
                interp(g)([v + 1e-6 * d for v, d in zip(p, e)]),
                interp(g)([v - 1e-6 * d for v, d in zip(p, e)]),
            )
        ]
        assert h[k] == pytest.approx(column, rel=1e-5, abs=1e-7)
        for j in range(3):
            assert h[k][j] == pytest.approx(h[j][k], rel=1e-12)


# -- what reverse mode keeps -----------------------------------------------------------------------


def _kept(f: adcore.Fn) -> list:
    fwd, _ = reverse_pair(f.ir)
    return [t for t in fwd.result_types[1:] if isinstance(t, adcore.VecT) and t.n == 1000]


def test_reverse_mode_keeps_only_the_carries_its_linear_part_reads() -> None:
    """A carry the derivative needs (sin(c)) is kept, one value per step; a sum's is not (its
    derivative does not read it), nor a counter's (an Int)."""
    n = 1000
    nonlinear = fn([Vec(n, Real)], Real, lambda x: fold(n, 0.0, lambda c, i: am.sin(c) + x[i]))
    linear = fn([Vec(n, Real)], Real, lambda x: fold(n, 0.0, lambda c, i: c * 0.5 + x[i]))
    counter = fn(
        [Vec(n, Real)],
        Real,
        lambda x: fold(n, {"s": 0.0, "k": 0}, lambda c, i: {"s": c["s"] * 0.5 + x[i], "k": c["k"] + 1})["s"],
    )
    assert len(_kept(nonlinear)) == 1
    assert _kept(linear) == [] and _kept(counter) == []


# -- random step functions -------------------------------------------------------------------------

STEPS = 4
points = st.lists(st.floats(-1.0, 1.0), min_size=N_INPUTS, max_size=N_INPUTS)


def carried(program) -> adcore.Fn:
    """A fold of STEPS steps carrying 3 values: each step runs the program on (carry + x * 0.1)
    and carries (0.5 tanh of its last value, the carry's second and first values)."""

    def step(c, x, i):
        values = run(program, [c[0] + 0.1 * x[0], c[1] - 0.1 * x[1], c[2] * x[2]], 1)
        return [0.5 * am.tanh(values[-1]), c[2], c[0]]

    return fn(
        [Vec(N_INPUTS, Real)],
        Real,
        lambda x: adcore.sum(fold(STEPS, [x[0], x[1], x[2]], lambda c, i: step(c, x, i))),
    )


def carried_py(program, x: list[float]) -> float:
    c = list(x)
    for _ in range(STEPS):
        values = run(program, [c[0] + 0.1 * x[0], c[1] - 0.1 * x[1], c[2] * x[2]], 2)
        c = [0.5 * math.tanh(values[-1]), c[2], c[0]]
    return sum(c)


@settings(max_examples=25, deadline=None)
@given(programs(max_steps=5), points, points)
def test_random_steps_against_finite_differences(program, x, v) -> None:
    f = carried(program)
    assert interp(f)(x) == pytest.approx(carried_py(program, x), rel=1e-12, abs=1e-12)
    g = grad_of(f)
    got = interp(g)(x)
    assert compile(g)(x) == pytest.approx(got, rel=1e-10, abs=1e-12)
    assert got == pytest.approx(fd_grad(lambda y: carried_py(program, y), x), rel=1e-5, abs=1e-6)
    dual = [{"re": a, "du": b} for a, b in zip(x, v)]
    jv = interp(jvp(f))(dual)["du"]
    assert jv == pytest.approx(sum(a * b for a, b in zip(got, v)), rel=1e-9, abs=1e-9)


assert "tanh" in OPS  # the step functions use the programs' operations and tanh


def test_backward_carries_flush_subnormal_cotangents_to_zero() -> None:
    """c <- c / 2 + x_i: d c_n / d x_i = 2^-(n-1-i), exactly, while it is a normal number; below
    2^-1022 the backward fold's carry is flushed to zero (so no step runs on subnormals)."""
    n = 1200
    f = fn([Vec(n, Real)], Real, lambda x: fold(n, 0.0, lambda c, i: c * 0.5 + x[i]))
    g = grad_of(f)
    want = [2.0 ** -(n - 1 - i) if n - 1 - i <= 1022 else 0.0 for i in range(n)]
    x = [math.sin(i) for i in range(n)]
    assert interp(g)(x) == compile(g)(x) == want


def test_carries_too_large_to_keep_are_refused_at_compile_time() -> None:
    """Reverse mode keeps every step's carry: 100,000 steps of a 20,000-element array would be 16 GB."""
    m, n = 20_000, 100_000
    f = fn(
        [Vec(m, Real)],
        Real,
        lambda x: adcore.sum(fold(n, x, lambda c, i: vec(m, Real, lambda j: am.sin(c[j])))),
    )
    g = fn([Vec(m, Real)], Vec(m, Real), lambda x: vjp(f)(x).grad(1.0))
    with pytest.raises(adcore.AdcoreError, match="memory plan of 16,?001,?440,?016 bytes exceeds the limit"):
        build_module(g.ir)
