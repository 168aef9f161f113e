"""Loop fusion: the fused program computes what the original computes, with fewer passes.

Oracle: the interpreter running the original (unsimplified, unfused) program.
"""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import adcore
from adcore import Int, Real, Vec, fn, vjp
from adcore import math as am
from adcore.convert import argument_leaves
from adcore.interpreter import Interpreter
from adcore.ir import Function, call_graph
from adcore.typecheck import check_function
from adcore.wasm.fuse import fuse_program
from adcore.wasm.simplify import simplify_program

N = 12  # above the unrolling limit


def optimized(f: adcore.Fn) -> Function:
    g = fuse_program(simplify_program(f.ir))
    for h in call_graph(g):
        if h.body is not None:
            check_function(h)
    return g


def run_both(f: adcore.Fn, *args: Any) -> tuple[list[Any], list[Any]]:
    leaves = argument_leaves(f, args)
    return Interpreter(False).run(f.ir, leaves), Interpreter(False).run(optimized(f), leaves)


def close(a: Any, b: Any) -> bool:
    if isinstance(a, list):
        return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b))
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


def top_loops(g: Function) -> list[int]:
    assert g.body is not None
    return [e.params["n"] for e in g.body.eqns if e.prim == "for"]


def test_elementwise_chain_becomes_one_loop() -> None:
    def body(x: Any, w: Any) -> Any:
        a = adcore.vec(N, Real, lambda i: am.sin(x[i]) * w)
        b = adcore.vec(N, Real, lambda i: a[i] * a[i] + x[i])
        return adcore.sum(N, lambda i: b[i] - a[i])

    f = fn([Vec(N, Real), Real], Real, body)
    xs = [0.3 * k - 1.0 for k in range(N)]
    before, after = run_both(f, xs, 1.7)
    assert close(before, after)
    assert top_loops(optimized(f)) == [N]  # three passes, one loop, no array left
    assert close(before[0], sum(math.sin(x) * 1.7 * math.sin(x) * 1.7 + x - math.sin(x) * 1.7 for x in xs))


def test_reads_that_are_not_elementwise_keep_loops_apart() -> None:
    def body(x: Any) -> Any:
        a = adcore.vec(N, Real, lambda i: x[i] * 2.0)
        return adcore.sum(N, lambda i: a[N - 1 - i] * x[i])  # another element of a

    f = fn([Vec(N, Real)], Real, body)
    xs = [float(k) for k in range(N)]
    before, after = run_both(f, xs)
    assert close(before, after)
    assert before[0] == sum(2.0 * (N - 1 - k) * k for k in range(N))
    assert top_loops(optimized(f)) == [N, N]


def test_a_loop_needing_an_earlier_total_waits_for_it() -> None:
    def body(x: Any) -> Any:
        mean = adcore.sum(N, lambda i: x[i]) / float(N)
        return adcore.sum(N, lambda i: (x[i] - mean) ** 2)

    f = fn([Vec(N, Real)], Real, body)
    xs = [2.0**k for k in range(N)]
    before, after = run_both(f, xs)
    m = sum(xs) / N
    assert close(after[0], sum((x - m) ** 2 for x in xs))
    assert close(before, after)
    assert top_loops(optimized(f)) == [N, N]


def test_gradient_of_a_gathered_energy_is_one_pass_per_table() -> None:
    m = 15

    def energy(x: Any, rows: Any) -> Any:
        d = adcore.vec(m, Real, lambda r: am.sqrt((x[rows[r][0]] - x[rows[r][1]]) ** 2 + 1.0))
        return adcore.sum(m, lambda r: am.max(3.0 - d[r], 0.0) ** 2)

    e = fn([Vec(N, Real), Vec(m, Vec(2, Int))], Real, energy)
    g = fn(e.params, Vec(N, Real), lambda x, rows: vjp(e, wrt=[0])(x, rows).grad(1.0)[0])
    xs = [0.5 * k for k in range(N)]
    rows = [[r % N, (3 * r + 1) % N] for r in range(m)]
    before, after = run_both(g, xs, rows)
    assert close(before, after)
    # finite differences of the energy as an independent check of the fused gradient
    h = 1e-6
    for k in range(N):
        up, down = list(xs), list(xs)
        up[k] += h
        down[k] -= h
        fd = (adcore.interp(e)(up, rows) - adcore.interp(e)(down, rows)) / (2 * h)
        assert math.isclose(after[0][k], fd, rel_tol=1e-6, abs_tol=1e-6)
    loops = [h.body for h in call_graph(optimized(g)) if h.body is not None]
    assert sum(n == m for b in loops for n in [e.params["n"] for e in b.eqns if e.prim == "for"]) == 1


def test_a_structurally_zero_cotangent_costs_no_pass_over_its_array() -> None:
    """An energy that also returns its per-row values (as the diagram energy does), pulled back
    with the values' cotangent None: the same gradient as with zeros passed in (and as finite
    differences), and one loop over the table after fusion, where zeros passed in leave more
    (one adds them over the whole table, whatever the count)."""
    m = 15

    def energy(x: Any, rows: Any, count: Any) -> Any:
        d = adcore.vec(m, Real, lambda r: am.sqrt((x[rows[r][0]] - x[rows[r][1]]) ** 2 + 1.0), count=count)
        return {"e": adcore.sum(m, lambda r: am.max(3.0 - d[r], 0.0) ** 2, count=count), "values": d}

    e = fn([Vec(N, Real), Vec(m, Vec(2, Int)), Int], {"e": Real, "values": Vec(m, Real)}, energy)
    none = fn(e.params, Vec(N, Real), lambda *a: vjp(e, wrt=[0])(*a).grad({"e": 1.0, "values": None})[0])
    zeros = fn(
        [*e.params, Vec(m, Real)],
        Vec(N, Real),
        lambda x, rows, count, z: vjp(e, wrt=[0])(x, rows, count).grad({"e": 1.0, "values": z})[0],
    )
    xs = [0.5 * k for k in range(N)]
    rows = [[r % N, (3 * r + 1) % N] for r in range(m)]
    for count in (m, 9):
        a = adcore.interp(none)(xs, rows, count)
        assert a == adcore.interp(zeros)(xs, rows, count, [0.0] * m)
        h = 1e-6
        for k in range(N):
            up, down = list(xs), list(xs)
            up[k] += h
            down[k] -= h
            fd = (adcore.interp(e)(up, rows, count)["e"] - adcore.interp(e)(down, rows, count)["e"]) / (2 * h)
            assert math.isclose(a[k], fd, rel_tol=1e-6, abs_tol=1e-6)

    def table_loops(f: adcore.Fn) -> int:
        bodies = [h.body for h in call_graph(optimized(f)) if h.body is not None]
        return sum(e.prim == "for" and e.params["n"] == m for b in bodies for e in b.eqns)

    assert table_loops(none) == 1 < table_loops(zeros)


STAGES = st.lists(
    st.sampled_from(["map", "mix", "reverse", "sum", "center", "scatter"]), min_size=1, max_size=6
)


@settings(max_examples=60, deadline=None)
@given(STAGES, st.lists(st.floats(-2, 2), min_size=N, max_size=N))
def test_random_loop_pipelines_agree(stages: list[str], xs: list[float]) -> None:
    """Chains of loops that read each other elementwise, backwards, through totals and scatters,
    interpreted after fusion and compiled to Wasm."""

    def body(x: Any, perm: Any) -> Any:
        arrays = [x]
        total: Any = 0.0
        for s in stages:
            a = arrays[-1]
            if s == "map":
                arrays.append(adcore.vec(N, Real, lambda i, a=a: am.tanh(a[i]) + 0.5))
            elif s == "mix":
                arrays.append(adcore.vec(N, Real, lambda i, a=a: a[i] * x[i] - arrays[0][i]))
            elif s == "reverse":
                arrays.append(adcore.vec(N, Real, lambda i, a=a: a[N - 1 - i]))
            elif s == "sum":
                total = total + adcore.sum(N, lambda i, a=a: a[i] * a[i])
            elif s == "center":
                t = total
                arrays.append(adcore.vec(N, Real, lambda i, a=a, t=t: a[i] - t))
            else:
                arrays.append(adcore.vec(N, Real, lambda i, a=a: a[perm[i]]))
        return total + adcore.sum(N, lambda i: arrays[-1][i])

    f = fn([Vec(N, Real), Vec(N, Int)], Real, body)
    g = fn(f.params, Vec(N, Real), lambda x, p: vjp(f, wrt=[0])(x, p).grad(1.0)[0])
    perm = [(3 * k + 2) % N for k in range(N)]
    for h in (f, g):
        before, after = run_both(h, xs, perm)
        assert close(before, after)
        assert close(before[0], adcore.compile(h)(xs, perm))  # the fused program, in Wasm


def test_a_callee_stays_one_function_wherever_it_is_called() -> None:
    """A function called both outside and inside loops is transformed once, never duplicated."""

    def long_body(x: Any) -> Any:
        for k in range(40):  # too long to inline into a loop
            x = am.sin(x) * (1.0 + 0.01 * k)
        return x

    big = fn([Real], Real, long_body, name="big")

    def body(xs: Any) -> Any:
        return big(xs[0]) + adcore.sum(N, lambda i: big(xs[i]) * xs[i])

    f = fn([Vec(N, Real)], Real, body)
    g = fn(f.params, Vec(N, Real), lambda xs: vjp(f)(xs).grad(1.0))
    xs = [0.1 * k for k in range(N)]
    before, after = run_both(g, xs)
    assert close(before, after)
    names = [h.name for h in call_graph(optimized(g))]
    assert len(names) == len(set(names)), names
