"""Loops with a run-time trip count (`vec`/`sum` with `count=k`): values against plain Python, the
interpreter against Wasm (one instance called with counts going down and up, so stale elements would
show), derivatives against finite differences and the transpose identity, and out-of-range counts as
clear errors in both backends, derivatives included."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import adcore
from adcore import Int, Real, Vec, compile, fn, interp, jvp, vec, vjp
from adcore import math as am
from adcore.wasm.runtime import WasmRangeError, WasmUnreachable

from .programs import N_INPUTS, oracle, programs, run

N = 7


def flat(v) -> list[float]:
    return [y for x in v for y in flat(x)] if isinstance(v, list) else [v]


def central(fun, x, v, h=1e-6):
    plus = fun([a + h * b for a, b in zip(x, v)])
    minus = fun([a - h * b for a, b in zip(x, v)])
    return (plus - minus) / (2 * h)


def counted(n: int = N) -> adcore.Fn:
    """ys[i] = sin(x[i]) x[i] for i < k (zero beyond), and s = sum of ys[i]^2 over i < k."""

    def body(x, k):
        ys = vec(n, Real, lambda i: am.sin(x[i]) * x[i], count=k)
        return {"ys": ys, "s": adcore.sum(n, lambda i: ys[i] * ys[i], count=k)}

    return fn([Vec(n, Real), Int], {"ys": Vec(n, Real), "s": Real}, body, name="counted")


def plain(x: list[float], k: int) -> dict:
    ys = [math.sin(a) * a if i < k else 0.0 for i, a in enumerate(x)]
    return {"ys": ys, "s": sum(y * y for y in ys[:k])}


X = [0.3 + 0.25 * i for i in range(N)]


def test_values_match_plain_python_and_wasm_for_every_count() -> None:
    f = counted()
    c = compile(f)
    for k in [*range(N, -1, -1), *range(N + 1)]:  # one instance: stale elements would show
        want, got = plain(X, k), interp(f)(X, k)
        assert got["ys"] == pytest.approx(want["ys"], rel=1e-15)
        assert got["s"] == pytest.approx(want["s"], rel=1e-15)
        assert c(X, k) == got


def test_printer_shows_the_count() -> None:
    text = str(counted())
    assert "for v" in text and "(of 7)" in text


def test_count_must_be_an_int() -> None:
    with pytest.raises(adcore.AdcoreTypeError, match="count of vec must be an Int"):
        fn([Vec(3, Real), Real], Vec(3, Real), lambda x, k: vec(3, Real, lambda i: x[i], count=k))
    with pytest.raises(adcore.AdcoreTypeError, match="takes no count"):
        fn([Vec(3, Real), Int], Real, lambda x, k: adcore.sum(x, count=k))


def test_literal_count_is_checked_when_traced_and_eagerly() -> None:
    with pytest.raises(adcore.RangeError, match="loop count 4 is outside 0..3"):
        fn([Vec(3, Real)], Real, lambda x: adcore.sum(3, lambda i: x[i], count=4))
    f = fn([Vec(3, Real)], Real, lambda x: adcore.sum(3, lambda i: x[i], count=2))
    assert interp(f)([1.0, 2.0, 4.0]) == compile(f)([1.0, 2.0, 4.0]) == 3.0
    # on plain numbers (library code runs outside traces too)
    assert vec(3, Real, lambda i: i + 1.0, count=2) == [1.0, 2.0, 0.0]
    assert vec(2, {"a": Real, "b": Vec(2, Int)}, lambda i: {"a": 1.0, "b": [i, i]}, count=1) == [
        {"a": 1.0, "b": [0, 0]},
        {"a": 0.0, "b": [0, 0]},
    ]
    assert adcore.sum(4, lambda i: i + 1.0, count=3) == 6.0
    with pytest.raises(adcore.RangeError):
        adcore.sum(4, lambda i: 1.0, count=-1)


@pytest.mark.parametrize("bad", [N + 1, -1, 2**31 - 1, -(2**31)])
def test_out_of_range_count_is_a_clear_error_never_a_memory_access(bad: int) -> None:
    f = counted()
    grad = fn(
        [Vec(N, Real), Int],
        Vec(N, Real),
        lambda x, k: vjp(f, wrt=[0])(x, k).grad({"ys": vec(N, Real, lambda i: 1.0), "s": 1.0})[0],
    )
    message = f"loop count {bad} is outside 0..{N}"
    for g in (f, grad):
        with pytest.raises(adcore.RangeError, match=message):
            interp(g)(X, bad)
        for checks in (True, False):  # the energy compiles without index checks: counts are still checked
            c = compile(g, bounds_checks=checks)
            with pytest.raises(WasmRangeError, match=message):
                c(X, bad)
            assert c(X, 3) == interp(g)(X, 3)  # the instance is still usable


def test_jvp_and_vjp_match_finite_differences() -> None:
    f = counted()
    s = fn([Vec(N, Real), Int], Real, lambda x, k: f(x, k)["s"] + 0.5 * adcore.sum(f(x, k)["ys"]))
    grad = fn([Vec(N, Real), Int], Vec(N, Real), lambda x, k: vjp(s, wrt=[0])(x, k).grad(1.0)[0])
    for k in (0, 1, 4, N):
        g = interp(grad)(X, k)
        assert compile(grad)(X, k) == pytest.approx(g, rel=1e-14, abs=1e-300)
        for j in range(N):
            e = [1.0 if m == j else 0.0 for m in range(N)]
            fd = central(lambda y, k=k: interp(s)(y, k), X, e)
            assert g[j] == pytest.approx(fd, rel=1e-6, abs=1e-8)
            if j >= k:
                assert g[j] == 0.0  # what does not run has no derivative
            dual = [{"re": a, "du": b} for a, b in zip(X, e)]
            assert interp(jvp(s))(dual, k)["du"] == pytest.approx(g[j], rel=1e-12, abs=1e-300)


def test_hessian_of_a_counted_sum() -> None:
    """sum_{i<k} x_i^3: gradient 3 x_i^2 and Hessian diag(6 x_i) for i < k, zero beyond."""
    cube = fn([Vec(N, Real), Int], Real, lambda x, k: adcore.sum(N, lambda i: x[i] * x[i] * x[i], count=k))
    grad = fn([Vec(N, Real), Int], Vec(N, Real), lambda x, k: vjp(cube, wrt=[0])(x, k).grad(1.0)[0])

    def rows(x, k):
        r = vjp(grad, wrt=[0])(x, k)
        return [r.grad([1.0 if j == m else 0.0 for j in range(N)])[0] for m in range(N)]

    hess = fn([Vec(N, Real), Int], Vec(N, Vec(N, Real)), rows)
    k = 4
    h = interp(hess)(X, k)
    assert flat(compile(hess)(X, k)) == pytest.approx(flat(h), rel=1e-14)
    for a in range(N):
        for b in range(N):
            want = 6 * X[a] if a == b and a < k else 0.0
            assert h[a][b] == pytest.approx(want, rel=1e-14)


def test_counts_depending_on_the_outer_index_give_prefix_sums() -> None:
    """p[i] = sum_{j <= i} x[j] as a counted inner loop (count i + 1); the gradient of sum_i w_i p_i
    is the suffix sums of w."""
    n = 6
    prefix = fn(
        [Vec(n, Real)],
        Vec(n, Real),
        lambda x: vec(n, Real, lambda i: adcore.sum(n, lambda j: x[j], count=i + 1)),
    )
    x = [1.0, -2.0, 0.5, 4.0, 3.0, -1.5]
    want = [sum(x[: i + 1]) for i in range(n)]
    assert interp(prefix)(x) == compile(prefix)(x) == want
    w = [0.5, 1.0, -1.0, 2.0, 0.25, 3.0]
    grad = fn([Vec(n, Real), Vec(n, Real)], Vec(n, Real), lambda x, w: vjp(prefix)(x).grad(w))
    suffix = [sum(w[j:]) for j in range(n)]
    assert interp(grad)(x, w) == compile(grad)(x, w) == suffix


def test_loops_of_one_size_with_different_counts_stay_apart() -> None:
    """Fusion merges loops over the same indices only: ys over k1 and a sum over k2 differ."""

    def body(x, k1, k2):
        ys = vec(N, Real, lambda i: x[i] * 2.0, count=k1)
        return adcore.sum(N, lambda i: ys[i] + 1.0, count=k2)

    f = fn([Vec(N, Real), Int, Int], Real, body)
    c = compile(f)
    for k1, k2 in [(2, 5), (5, 2), (3, 3), (0, N), (N, 0)]:
        want = sum(2.0 * X[i] for i in range(min(k1, k2))) + k2
        assert interp(f)(X, k1, k2) == pytest.approx(want, rel=1e-15)
        assert c(X, k1, k2) == interp(f)(X, k1, k2)


def test_active_row_list_like_the_energy() -> None:
    """The energy's use: a kind's loop over an active row list `order[:k]` of its table, gathering
    x[rows[order[j]]]; its gradient equals the dense loop's with the inactive rows masked out."""
    n_rows, n_x = 6, 5
    rows_t = Vec(n_rows, Vec(2, Int))
    term = fn([Real, Real], Real, lambda a, b: (a - b) ** 2 * am.exp(0.1 * a))

    def active(x, rows, order, k):
        return adcore.sum(n_rows, lambda j: term(x[rows[order[j]][0]], x[rows[order[j]][1]]), count=k)

    def masked(x, rows, mask):
        return adcore.sum(n_rows, lambda r: mask[r] * term(x[rows[r][0]], x[rows[r][1]]))

    f = fn([Vec(n_x, Real), rows_t, Vec(n_rows, Int), Int], Real, active)
    m = fn([Vec(n_x, Real), rows_t, Vec(n_rows, Real)], Real, masked)
    gf = fn(f.params, Vec(n_x, Real), lambda x, r, o, k: vjp(f, wrt=[0])(x, r, o, k).grad(1.0)[0])
    gm = fn(m.params, Vec(n_x, Real), lambda x, r, mk: vjp(m, wrt=[0])(x, r, mk).grad(1.0)[0])
    x = [0.1, 0.7, -0.4, 1.3, 0.9]
    rows = [[0, 1], [1, 2], [2, 3], [3, 4], [4, 0], [1, 3]]
    order = [4, 1, 5, 0, 2, 3]
    cf, cg = compile(f), compile(gf)
    for k in (6, 3, 0, 2):
        mask = [1.0 if r in order[:k] else 0.0 for r in range(n_rows)]
        assert interp(f)(x, rows, order, k) == pytest.approx(interp(m)(x, rows, mask), rel=1e-14)
        assert cf(x, rows, order, k) == interp(f)(x, rows, order, k)
        assert cg(x, rows, order, k) == pytest.approx(interp(gm)(x, rows, mask), rel=1e-14, abs=1e-300)


def test_struct_elements_beyond_the_count_are_zero() -> None:
    elem = {"a": Real, "b": Vec(2, Real)}

    def body(x, k):
        return vec(4, elem, lambda i: {"a": x[i], "b": [x[i] * 2.0, -x[i]]}, count=k)

    f = fn([Vec(4, Real), Int], Vec(4, elem), body)
    c = compile(f)
    for k in (4, 1, 3, 0):
        want = [
            {"a": v, "b": [2 * v, -v]} if i < k else {"a": 0.0, "b": [0.0, 0.0]}
            for i, v in enumerate([1.0, 2.0, 3.0, 4.0])
        ]
        assert interp(f)([1.0, 2.0, 3.0, 4.0], k) == c([1.0, 2.0, 3.0, 4.0], k) == want


# -- random programs run over the first k rows of a table ------------------------------------------

ROWS = 5
tables = st.lists(
    st.lists(st.floats(-2.0, 2.0), min_size=N_INPUTS, max_size=N_INPUTS), min_size=ROWS, max_size=ROWS
)


def table_fn(program) -> adcore.Fn:
    """Each of the first k rows through the program: the sum of the last values, and the rows' sums."""

    def body(xs, k):
        def row(i):
            values = run(program, [xs[i][0], xs[i][1], xs[i][2]], 1)
            return [values[-1], adcore.sum(values)]

        per_row = vec(ROWS, Vec(2, Real), row, count=k)
        return adcore.sum(ROWS, lambda i: per_row[i][0] + 0.5 * per_row[i][1], count=k)

    return fn([Vec(ROWS, Vec(N_INPUTS, Real)), Int], Real, body)


def table_oracle(program, xs, k) -> float:
    return sum(o[0] + 0.5 * o[1] for o in (oracle(program, row) for row in xs[:k]))


@settings(max_examples=25, deadline=None)
@given(programs(max_steps=6), tables, st.integers(0, ROWS), st.data())
def test_random_programs_over_counted_rows(program, xs, k, data) -> None:
    f = table_fn(program)
    value = interp(f)(xs, k)
    assert value == pytest.approx(table_oracle(program, xs, k), rel=1e-12, abs=1e-12)
    assert compile(f)(xs, k) == pytest.approx(value, rel=1e-12, abs=1e-12)
    grad = fn(f.params, f.params[0], lambda x, k: vjp(f, wrt=[0])(x, k).grad(1.0)[0])
    g = interp(grad)(xs, k)
    assert flat(compile(grad)(xs, k)) == pytest.approx(flat(g), rel=1e-12, abs=1e-12)
    r, j = data.draw(st.integers(0, ROWS - 1)), data.draw(st.integers(0, N_INPUTS - 1))

    def at(t):
        ys = [list(row) for row in xs]
        ys[r][j] += t
        return table_oracle(program, ys, k)

    h = 1e-6
    fd = (at(h) - at(-h)) / (2 * h)
    assert g[r][j] == pytest.approx(fd, rel=1e-5, abs=1e-5)
    if r >= k:
        assert g[r][j] == 0.0


def test_a_call_stopped_inside_a_loop_leaves_no_stale_element() -> None:
    """The root function's arrays keep their memory from call to call and only what a smaller count
    leaves behind is zeroed (codegen's `zero_tail_since`): a call stopped by an error after writing
    five elements of eight must not leave them to a later call with a count of two."""
    f = fn(
        [Vec(8, Real), Vec(8, Int), Int],
        Vec(8, Real),
        lambda x, idx, k: vec(8, Real, lambda i: 2.0 * x[idx[i]], count=k),
    )
    c = compile(f)
    x = [1.0 + i for i in range(8)]
    good = list(range(8))
    assert c(x, good, 3) == [2.0, 4.0, 6.0] + [0.0] * 5
    with pytest.raises(WasmUnreachable):  # an index out of range
        c(x, [0, 1, 2, 3, 4, 99, 6, 7], 8)  # stops at element 5, after writing 0..4
    assert c(x, good, 2) == interp(f)(x, good, 2) == [2.0, 4.0] + [0.0] * 6
    assert c(x, good, 8) == [2.0 * v for v in x]
    assert c(x, good, 0) == [0.0] * 8
