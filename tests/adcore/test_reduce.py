"""`reduce` (max, min, product, sum, user operators declared associative), `segment_sum` and prefix
sums by `scan`: values against plain Python, numpy and mpmath, gradients against closed forms and
finite differences, Penrose's convention at ties, range errors, and module sizes independent of n."""

from __future__ import annotations

import itertools
import math
import operator

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import adcore
from adcore import Int, Real, Vec, compile, fn, interp, jvp, reduce, scan, segment_sum, vjp
from adcore import math as am
from adcore.wasm.codegen import build_module


def gradient(f: adcore.Fn) -> adcore.Fn:
    def body(*args):
        g = vjp(f, wrt=[0])(*args).grad(1.0)
        return g if len(f.params) == 1 else g[0]

    return fn(f.params, f.params[0], body, name=f"grad_{f.name}")


def fd(fun, x: list[float], h: float = 1e-6) -> list[float]:
    return [
        (
            fun([a + (h if j == k else 0.0) for j, a in enumerate(x)])
            - fun([a - (h if j == k else 0.0) for j, a in enumerate(x)])
        )
        / (2 * h)
        for k in range(len(x))
    ]


def penrose_max(xs):
    """Penrose's maxList: a left fold of x > y ? x : y."""
    m = xs[0]
    for x in xs[1:]:
        m = adcore.select(m > x, m, x)
    return m


# -- max and min -----------------------------------------------------------------------------------


def test_max_of_10000_is_one_loop_with_a_one_hot_gradient() -> None:
    n = 10_000
    f = fn([Vec(n, Real)], Real, lambda x: reduce(n, am.max, lambda i: x[i] * x[i]))
    g = gradient(f)
    assert len(build_module(g.ir)[0]) <= 20_000
    x = [math.sin(0.37 * k) * (1 + k % 13) for k in range(n)]
    best = max(range(n), key=lambda k: (x[k] * x[k], k))
    assert compile(f)(x) == interp(f)(x) == x[best] * x[best]
    got = compile(g)(x)
    assert got == interp(g)(x)
    assert [k for k, v in enumerate(got) if v != 0.0] == [best]
    assert got[best] == 2 * x[best]


@pytest.mark.parametrize("op, py", [(am.max, max), (am.min, min)])
def test_ties_send_the_derivative_to_the_later_element_as_penrose(op, py) -> None:
    x = [1.0, 3.0, -2.0, 3.0, 0.5, 3.0, -2.0]
    n = len(x)
    f = fn([Vec(n, Real)], Real, lambda x: reduce(n, op, lambda i: x[i]))
    sel = "gt" if py is max else "lt"
    unrolled = fn([Vec(n, Real)], Real, lambda x: _left_fold(x, sel))  # Penrose's expansion
    assert interp(f)(x) == py(x)
    for point in (x, [-v for v in x]):
        want = interp(gradient(unrolled))(point)
        assert interp(gradient(f))(point) == compile(gradient(f))(point) == want
        assert sum(1 for v in want if v != 0.0) == 1


def _left_fold(xs, sel):
    m = xs[0]
    for k in range(1, len(xs)):
        m = adcore.select(adcore.binary(sel, m, xs[k]), m, xs[k])
    return m


def test_max_with_a_count_and_its_identity() -> None:
    x = [0.5, 4.0, -1.0, 7.0, 2.0]
    f = fn([Vec(5, Real), Int], Real, lambda x, k: reduce(5, am.max, lambda i: x[i], count=k))
    c = compile(f)
    for k in range(6):
        want = max(x[:k]) if k else -math.inf
        assert interp(f)(x, k) == c(x, k) == want


def test_max_propagates_nan() -> None:
    f = fn([Vec(3, Real)], Real, lambda x: reduce(3, am.max, lambda i: x[i]))
    for x in ([math.nan, 1.0, 2.0], [1.0, math.nan, 0.5]):
        assert math.isnan(interp(f)(x)) and math.isnan(compile(f)(x))


# -- products, sums, user operators ----------------------------------------------------------------


def test_product_against_mpmath_with_exact_gradients() -> None:
    x = [1.5, -0.25, 3.0, 0.7, -2.2, 1.1, 0.9]
    n = len(x)
    f = fn([Vec(n, Real)], Real, lambda x: reduce(n, operator.mul, lambda i: x[i]))
    mpmath.mp.dps = 50
    want = mpmath.fprod([mpmath.mpf(v) for v in x])
    assert interp(f)(x) == compile(f)(x) == pytest.approx(float(want), rel=1e-15)
    g = compile(gradient(f))(x)
    for k in range(n):
        others = mpmath.fprod([mpmath.mpf(v) for j, v in enumerate(x) if j != k])
        assert g[k] == pytest.approx(float(others), rel=1e-14)
    # a zero factor: the gradient is the product of the others, exactly, with no division
    z = [2.0, 0.0, 3.0, 0.5]
    fz = fn([Vec(4, Real)], Real, lambda x: reduce(4, operator.mul, lambda i: x[i]))
    assert compile(gradient(fz))(z) == [0.0, 3.0, 0.0, 0.0]


def test_hessian_of_a_product() -> None:
    x = [1.5, -0.5, 2.0, 0.8]
    n = len(x)
    f = fn([Vec(n, Real)], Real, lambda x: reduce(n, operator.mul, lambda i: x[i] + 0.1))
    g = gradient(f)
    h = fn(
        [Vec(n, Real)],
        Vec(n, Vec(n, Real)),
        lambda x: [vjp(g)(x).grad([float(j == k) for j in range(n)]) for k in range(n)],
    )
    got = compile(h)(x)
    for a in range(n):
        for b in range(n):
            want = 0.0 if a == b else math.prod(v + 0.1 for j, v in enumerate(x) if j not in (a, b))
            assert got[a][b] == pytest.approx(want, rel=1e-13, abs=1e-15)


def test_addition_is_a_sum() -> None:
    f = fn([Vec(4, Real)], Real, lambda x: reduce(4, operator.add, lambda i: x[i] * 2.0))
    assert interp(f)([1.0, 2.0, 3.0, 4.0]) == 20.0
    assert all(e.prim != "fold" for e in f.ir.body.eqns)


def test_an_associative_user_operator() -> None:
    """Composing rotations (complex multiplication): the product of e^{i x_k} is e^{i sum x}."""
    rot = adcore.associative(
        fn(
            [Vec(2, Real), Vec(2, Real)],
            Vec(2, Real),
            lambda a, b: [a[0] * b[0] - a[1] * b[1], a[0] * b[1] + a[1] * b[0]],
        )
    )
    n = 6
    x = [0.3, -1.2, 0.8, 2.0, 0.05, -0.4]
    f = fn([Vec(n, Real)], Real, lambda x: reduce(n, rot, lambda i: [am.cos(x[i]), am.sin(x[i])])[0])
    fk = fn(
        [Vec(n, Real), Int],
        Real,
        lambda x, k: reduce(n, rot, lambda i: [am.cos(x[i]), am.sin(x[i])], count=k, identity=[1.0, 0.0])[1],
    )
    assert compile(f)(x) == pytest.approx(math.cos(sum(x)), rel=1e-14)
    assert compile(gradient(f))(x) == pytest.approx([-math.sin(sum(x))] * n, rel=1e-13)
    for k in (0, 3, n):
        assert compile(fk)(x, k) == pytest.approx(math.sin(sum(x[:k])), abs=1e-15)
    with pytest.raises(adcore.AdcoreTypeError, match="needs its identity"):
        fn([Vec(n, Real), Int], Vec(2, Real), lambda x, k: reduce(n, rot, lambda i: [x[i], x[i]], count=k))
    plain = fn([Vec(2, Real), Vec(2, Real)], Vec(2, Real), lambda a, b: a)
    with pytest.raises(adcore.AdcoreTypeError, match="declared adcore.associative"):
        fn([Vec(n, Real)], Vec(2, Real), lambda x: reduce(n, plain, lambda i: [x[i], x[i]]))
    assert reduce(3, operator.mul, lambda i: i + 1.0) == 6.0  # on plain numbers


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-5.0, 5.0), min_size=1, max_size=12), st.data())
def test_max_min_product_against_python_and_finite_differences(x, data) -> None:
    n = len(x)
    k = data.draw(st.integers(1, n))
    for op, py in ((am.max, max), (am.min, min), (operator.mul, math.prod)):
        f = fn([Vec(n, Real), Int], Real, lambda x, k, op=op: reduce(n, op, lambda i: x[i] * 1.5, count=k))
        want = py([v * 1.5 for v in x[:k]])
        assert interp(f)(x, k) == compile(f)(x, k) == pytest.approx(want, rel=1e-14)
        g = compile(gradient(f))(x, k)
        assert g == interp(gradient(f))(x, k)
        gaps = [b - a for a, b in itertools.pairwise(sorted(x[:k]))]
        if op is not operator.mul and gaps and min(gaps) < 1e-4:
            continue  # (near) ties: the derivative is one-sided (checked against Penrose above)
        assert g == pytest.approx(fd(lambda y, f=f: interp(f)(y, k), x), rel=1e-5, abs=1e-5)


# -- segment sums ----------------------------------------------------------------------------------


def test_5000_values_into_1000_segments_like_bincount() -> None:
    n, m = 5000, 1000
    rng = np.random.default_rng(3)
    values = rng.normal(size=n).tolist()
    segs = rng.integers(0, m, size=n).tolist()
    f = fn(
        [Vec(n, Real), Vec(n, Int)],
        Vec(m, Real),
        lambda x, s: segment_sum(n, m, lambda i: (s[i], x[i] * x[i])),
    )
    want = np.bincount(segs, weights=np.square(values), minlength=m).tolist()
    assert compile(f)(values, segs) == want
    weighted = fn(
        [Vec(n, Real), Vec(n, Int), Vec(m, Real)],
        Real,
        lambda x, s, w: adcore.sum(m, lambda j: f(x, s)[j] * w[j]),
    )
    g = gradient(weighted)
    w = rng.normal(size=m).tolist()
    assert compile(g)(values, segs, w) == [2 * v * w[s] for v, s in zip(values, segs)]
    for h in (f, g):
        assert len(build_module(h.ir)[0]) <= 20_000


def test_out_of_range_segments_are_errors_never_writes() -> None:
    f = fn([Vec(4, Real), Vec(4, Int)], Vec(3, Real), lambda x, s: segment_sum(4, 3, lambda i: (s[i], x[i])))
    g = fn(
        [Vec(4, Real), Vec(4, Int)], Vec(4, Real), lambda x, s: vjp(f, wrt=[0])(x, s).grad([1.0, 2.0, 3.0])[0]
    )
    x = [1.0, 2.0, 3.0, 4.0]
    assert compile(f)(x, [0, 2, 2, 1]) == [1.0, 4.0, 5.0]
    assert compile(g)(x, [0, 2, 2, 1]) == [1.0, 3.0, 3.0, 2.0]
    for bad in (3, -1):
        segs = [0, bad, 1, 1]
        for h in (f, g):
            with pytest.raises(adcore.RangeError, match=f"segment {bad} is outside 0..2"):
                interp(h)(x, segs)
            with pytest.raises(adcore.WasmRangeError, match=f"segment {bad} is outside 0..2"):
                compile(h, bounds_checks=False)(x, segs)
    with pytest.raises(adcore.RangeError, match="segment 5"):
        segment_sum(2, 3, lambda i: (5, 1.0))
    with pytest.raises(adcore.AdcoreTypeError, match="a segment must be an Int"):
        fn([Vec(4, Real)], Vec(3, Real), lambda x: segment_sum(4, 3, lambda i: (x[i], x[i])))


def test_histogram_of_computed_bins_with_struct_values() -> None:
    """Bins computed from Reals (floor_int), struct values: counts and sums per bin, first k values."""
    n, m = 8, 4
    x = [0.1, 0.9, 0.35, 0.6, 0.62, 0.05, 0.99, 0.3]

    def body(x, k):
        return segment_sum(n, m, lambda i: (adcore.floor_int(x[i] * m), {"count": 1.0, "sum": x[i]}), count=k)

    f = fn([Vec(n, Real), Int], Vec(m, {"count": Real, "sum": Real}), body)
    for k in (n, 5, 0):
        want = [{"count": 0.0, "sum": 0.0} for _ in range(m)]
        for v in x[:k]:
            b = math.floor(v * m)
            want[b] = {"count": want[b]["count"] + 1.0, "sum": want[b]["sum"] + v}
        assert interp(f)(x, k) == compile(f)(x, k) == want


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.floats(-3.0, 3.0)), min_size=1, max_size=15))
def test_segment_sums_against_python_and_their_jvp(pairs) -> None:
    n, m = len(pairs), 5
    segs = [s for s, _ in pairs]
    x = [v for _, v in pairs]
    f = fn(
        [Vec(n, Real), Vec(n, Int)],
        Vec(m, Real),
        lambda x, s: segment_sum(n, m, lambda i: (s[i], am.sin(x[i]))),
    )
    want = [0.0] * m
    for s, v in pairs:
        want[s] += math.sin(v)
    assert interp(f)(x, segs) == pytest.approx(want, rel=1e-15, abs=1e-15)
    assert compile(f)(x, segs) == pytest.approx(interp(f)(x, segs), rel=1e-15, abs=1e-15)
    dual = [{"re": v, "du": 1.0} for v in x]
    jv = fn(
        [Vec(n, {"re": Real, "du": Real}), Vec(n, Int)],
        Vec(m, Real),
        lambda d, s: [jvp(f)(d, s)[j]["du"] for j in range(m)],
    )
    dwant = [0.0] * m
    for s, v in pairs:
        dwant[s] += math.cos(v)
    assert interp(jv)(dual, segs) == pytest.approx(dwant, rel=1e-13, abs=1e-13)


# -- prefix sums -----------------------------------------------------------------------------------


def test_prefix_sums_of_2000_values() -> None:
    n = 2000
    x = [math.cos(0.1 * k) for k in range(n)]
    f = fn([Vec(n, Real)], Vec(n, Real), lambda x: scan(n, 0.0, lambda c, i: c + x[i]))
    assert compile(f)(x) == list(itertools.accumulate(x))
    g = fn([Vec(n, Real), Vec(n, Real)], Vec(n, Real), lambda x, w: vjp(f)(x).grad(w))
    w = [math.sin(0.3 * k) for k in range(n)]
    suffix = list(itertools.accumulate(reversed(w)))[::-1]
    assert compile(g)(x, w) == pytest.approx(suffix, rel=1e-12, abs=1e-12)
    for h in (f, g):
        assert len(build_module(h.ir)[0]) <= 20_000
