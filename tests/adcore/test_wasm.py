"""The Wasm backend against the interpreter (differential), plus limits and traps."""

from __future__ import annotations

import math
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import adcore
from adcore import Bool, Int, Real, Vec, compile, fn, interp, jvp, select, vec, vjp
from adcore import math as am
from adcore.wasm.codegen import CodegenError
from adcore.wasm.compiled import Compiled
from adcore.wasm.runtime import WasmTimeout, WasmUnreachable

from .programs import N_INPUTS, as_vector_fn, programs
from .test_core import tower

Vec2 = Vec(2, Real)


def agree(f: adcore.Fn, *args) -> None:
    want = interp(f)(*args)
    got = compile(f)(*args)
    assert _close(got, want), (got, want)


def _close(a, b) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return a == b or abs(a - b) <= 1e-12 * max(abs(a), abs(b))


def test_acceptance_functions_agree() -> None:
    f = fn([Vec2], Real, lambda v: am.pow(v[0], v[1]))
    g = fn([Vec2], Vec2, lambda v: vjp(f)(v).grad(1.0))
    h = fn([Vec2], Vec(2, Vec2), lambda v: (lambda r: [r.grad([1.0, 0.0]), r.grad([0.0, 1.0])])(vjp(g)(v)))
    for F in (f, g, h):
        agree(F, [2.0, 3.0])
    agree(
        jvp(fn([Real, Real], Real, lambda x, y: y * x * x + 4.0)),
        {"re": 3.0, "du": 1.0},
        {"re": 2.0, "du": 0.0},
    )


def test_tower_compiles_small_and_runs() -> None:
    f = tower(20, shared=False)
    c = compile(jvp(f))
    assert c({"re": 2.0, "du": 3.0}) == {"re": 2.0**20 * 2, "du": 2.0**20 * 3}
    assert c.wasm_bytes < 20_000
    g = fn([Real], Real, lambda x: vjp(f)(x).grad(1.0))
    assert compile(g)(5.0) == 2.0**20


def test_loops_gather_scatter_and_structs() -> None:
    n = 50
    P = {"x": Real, "y": Real}

    def energy(ps, idx):
        return adcore.sum(n, lambda k: (ps[idx[k]]["x"] - ps[k]["y"]) ** 2 + am.sin(ps[k]["x"]))

    f = fn([Vec(n, P), Vec(n, Int)], Real, energy)
    g = fn([Vec(n, P), Vec(n, Int)], Vec(n, P), lambda ps, idx: vjp(f)(ps, idx).grad(1.0)[0])
    pts = [{"x": 0.1 * k, "y": 0.05 * k * k} for k in range(n)]
    idx = [(3 * k + 1) % n for k in range(n)]
    agree(f, pts, idx)
    agree(g, pts, idx)
    m = fn([Vec(3, Vec2)], Vec(3, Vec2), lambda a: vec(3, Vec2, lambda i: [a[i][1], a[i][0] * 2.0]))
    agree(m, [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])


def test_select_ints_and_nan_safety_agree() -> None:
    f = fn([Real], Real, lambda x: select(x > 0.0, am.raw_sqrt(x), 0.0 * x))
    g = fn([Real], Real, lambda x: vjp(f)(x).grad(1.0))
    for x in (-1.0, 0.0, 4.0):
        agree(g, x)
    h = fn([Vec(4, Real), Int], Real, lambda xs, k: xs[(k + 1) % 4] * adcore.to_real(k // 2) + am.abs(xs[0]))
    agree(h, [-1.0, 2.0, 3.0, 4.0], 3)


@pytest.mark.parametrize("name", sorted(am.UNARY))
def test_math_library_agrees_with_interpreter(name: str) -> None:
    f = am.UNARY[name]
    g = fn([Real], Vec2, lambda x: [f(x), vjp(f)(x).grad(1.0)])
    c, i = compile(g), interp(g)
    for x in (-3.7, -0.5, 0.0, 0.25, 0.9, 1.5, 12.0):
        got, want = c(x), i(x)
        for a, b in zip(got, want):
            assert (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=1e-12, abs=0.0)


@settings(max_examples=25, deadline=None)
@given(programs(), st.lists(st.floats(-2, 2), min_size=N_INPUTS, max_size=N_INPUTS))
def test_random_programs_agree_with_derivatives(program, x) -> None:
    f = as_vector_fn(program)
    agree(f, x)
    grad = fn([Vec(N_INPUTS, Real)], Vec(N_INPUTS, Real), lambda y: vjp(f)(y).grad([1.0, 0.5]))
    _approx(compile(grad)(x), interp(grad)(x))
    scalar = fn([Vec(N_INPUTS, Real)], Real, lambda y: f(y)[0])
    g1 = fn([Vec(N_INPUTS, Real)], Vec(N_INPUTS, Real), lambda y: vjp(scalar)(y).grad(1.0))
    hess = fn([Vec(N_INPUTS, Real)], Vec(N_INPUTS, Real), lambda y: vjp(g1)(y).grad([1.0, -1.0, 0.5]))
    _approx(compile(hess)(x), interp(hess)(x))


def _approx(got, want) -> None:
    assert got == pytest.approx(want, rel=1e-12, abs=1e-12)


def test_time_limit_stops_an_endless_computation_and_runtime_survives() -> None:
    n = 100_000
    inner = fn([Real], Real, lambda x: adcore.sum(n, lambda i: am.sin(x + adcore.to_real(i))))
    outer = fn([Real], Real, lambda x: adcore.sum(n, lambda i: inner(x * adcore.to_real(i))))
    c = compile(outer, time_limit=0.2)
    with pytest.raises(WasmTimeout):
        c(1.0)
    small = compile(fn([Real], Real, lambda x: x * 2.0), time_limit=0.2)
    assert small(3.0) == 6.0


def test_out_of_bounds_index_traps() -> None:
    f = fn([Vec(3, Real), Int], Real, lambda xs, k: xs[k])
    c = compile(f)
    assert c([1.0, 2.0, 3.0], 2) == 3.0
    with pytest.raises(WasmUnreachable):
        c([1.0, 2.0, 3.0], 3)
    assert c([1.0, 2.0, 3.0], 0) == 1.0


def test_oversized_memory_plan_is_refused() -> None:
    n = 2**28

    def body(x):
        v = vec(n, Real, lambda i: x * adcore.to_real(i))
        return adcore.sum(n, lambda i: v[n - 1 - i])  # read backwards: the array must exist

    big = fn([Real], Real, body)
    with pytest.raises(CodegenError, match="memory plan"):
        compile(big)


def test_many_variables_share_few_locals() -> None:
    def body(x):
        acc = x
        for k in range(3000):
            acc = acc * 1.0001 + am.sin(acc) * 1e-3 + float(k) * 1e-9
        return acc

    f = fn([Real], Real, body)
    c = compile(f)
    assert c(0.3) == pytest.approx(interp(f)(0.3), rel=1e-13)
    from adcore.wasm.codegen import FunctionGen

    gen = FunctionGen(f.ir, {id(g): 0 for g in adcore.ir.call_graph(f.ir)}, 0, True)
    assert len(gen.local_types) < 20


def test_functions_with_hundreds_of_scalars_go_through_memory() -> None:
    n = 300
    many = fn([Vec(n, Real)], Real, lambda xs: adcore.sum([xs[k] * xs[k] for k in range(n)]))
    grad = fn([Vec(n, Real)], Vec(n, Real), lambda xs: vjp(many)(xs).grad(1.0))  # residuals: n scalars
    from adcore.wasm.codegen import spilled

    assert any(spilled(g) for g in adcore.ir.call_graph(adcore.reverse.reverse_pair(many.ir)[0]))
    xs = [0.01 * k for k in range(n)]
    assert compile(grad)(xs) == pytest.approx([2 * v for v in xs], rel=1e-15)
    assert compile(many)(xs) == pytest.approx(interp(many)(xs), rel=1e-14)


def test_wide_calls_keep_arguments_and_results_in_memory() -> None:
    """Wide functions read parameters where used and write results where defined; a wide call's
    results are read from its buffer (at top level) or copied to locals (inside a loop)."""
    n = 260  # over the parameter and result limits

    def spread(xs):  # n scalars in, n + 2 scalars out: results that are parameters, repeated, reused
        ys = [am.sin(xs[k]) * float(k + 1) for k in range(n)]
        return [*ys, xs[0], ys[3] + ys[4]]

    names = [f"y{k}" for k in range(n + 2)]
    wide = fn([Vec(n, Real)], Vec(n + 2, Real), spread, name="wide")
    scalars = fn(
        [Real] * n, dict.fromkeys(names, Real), lambda *xs: dict(zip(names, spread(xs))), name="scalars"
    )

    def body(xs):
        once = scalars(*[xs[k] for k in range(n)])  # at top level: results stay in the buffer
        twice = scalars(*[once[y] * 0.5 for y in names[:n]])
        looped = adcore.sum(12, lambda i: scalars(*[xs[k] + adcore.to_real(i) for k in range(n)])[names[-1]])
        return adcore.sum([*once.values(), *twice.values()]) + looped + wide(xs)[n + 1]

    f = fn([Vec(n, Real)], Real, body)
    from adcore.wasm.codegen import spilled

    assert spilled(scalars.ir)
    xs = [0.01 * k - 1.0 for k in range(n)]
    agree(f, xs)
    g = fn([Vec(n, Real)], Vec(n, Real), lambda xs: vjp(f)(xs).grad(1.0))
    agree(g, xs)


def test_zero_guarded_products_agree_bit_for_bit_in_and_out_of_loops() -> None:
    """zmul/zdiv (derivative code's 0 * anything = 0) and float selects are lowered two ways, with a
    branch inside loops and with integer selects on the bits in straight-line code: both must match
    the interpreter's IEEE results, signs of zero included."""
    from adcore.interpreter import Interpreter
    from adcore.ir import Block, Eqn, Function, Var
    from adcore.types import VecT

    specials = [0.0, -0.0, 1.5, -2.0, math.inf, -math.inf, math.nan, 5e-324, 1e308]
    pairs = [(a, b) for a in specials for b in specials]
    xs, ys = Var(VecT(len(pairs), Real)), Var(VecT(len(pairs), Real))
    eqns, results = [], []
    for k in range(len(pairs)):  # straight line: one zmul and one zdiv per pair
        a, b, m, d, c, sel = Var(Real), Var(Real), Var(Real), Var(Real), Var(Bool), Var(Real)
        eqns += [
            Eqn((a,), "index", (xs, adcore.ir.Lit(k, Int))),
            Eqn((b,), "index", (ys, adcore.ir.Lit(k, Int))),
            Eqn((m,), "zmul", (a, b)),
            Eqn((d,), "zdiv", (a, b)),
            Eqn((c,), "lt", (a, b)),
            Eqn((sel,), "select", (c, a, b)),
        ]
        results += [m, d, sel]
    i, a, b, m, d = Var(Int), Var(Real), Var(Real), Var(Real), Var(Real)
    looped = Block(
        (i,),
        (
            Eqn((a,), "index", (xs, i)),
            Eqn((b,), "index", (ys, i)),
            Eqn((m,), "zmul", (a, b)),
            Eqn((d,), "zdiv", (a, b)),
        ),
        (m, d),
    )
    lm, ld = Var(VecT(len(pairs), Real)), Var(VecT(len(pairs), Real))
    eqns.append(Eqn((lm, ld), "for", (), {"n": len(pairs), "body": looped}))
    f = Function(
        "zero_guarded",
        (xs, ys),
        tuple(r.ty for r in results) + (lm.ty, ld.ty),
        Block((xs, ys), tuple(eqns), (*results, lm, ld)),
    )
    args = [[p[0] for p in pairs], [p[1] for p in pairs]]
    want = Interpreter(False).run(f, args)
    got = Compiled(f).call_leaves(args)

    def bits(v: float) -> bytes | str:  # NaN payloads are the engine's choice; zeros keep their sign
        return "nan" if math.isnan(v) else struct.pack("<d", v)

    def flat(values: list) -> list:
        return [bits(v) for r in values for v in (r if isinstance(r, list) else [r])]

    assert flat(got) == flat(want)
    assert bits(want[3 * specials.index(math.inf)]) == bits(0.0)  # zmul(0, inf): the case it exists for


def test_products_with_zeros_of_either_sign_are_not_merged() -> None:
    # 0.0 == -0.0, but x * 0.0 and x * -0.0 differ in sign: common subexpressions must not merge them
    f = fn([Real], Vec(2, Real), lambda x: [x * 0.0, x * -0.0])
    for x in (1.0, -1.0):
        want = interp(f)(x)
        got = compile(f)(x)
        assert [math.copysign(1.0, v) for v in got] == [math.copysign(1.0, v) for v in want]
        assert math.copysign(1.0, want[0]) != math.copysign(1.0, want[1])
