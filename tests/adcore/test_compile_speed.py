"""Shortcuts taken to compile faster must not change what the compiled code computes."""

from __future__ import annotations

import gc
import random

import pytest

import adcore
from adcore import Int, Real, Vec, fn, interp, vjp
from adcore import math as am
from adcore.gc_pause import gc_paused
from adcore.wasm import emit
from adcore.wasm.codegen import build_module, spilled
from adcore.wasm.compiled import Compiled
from adcore.wasm.encode import ModuleBuilder
from adcore.wasm.libm import add_libm


def test_a_wide_calls_results_reach_a_wide_call_by_one_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    """The residuals of a wide gradient go from the forward call's buffer to the backward call's
    buffer. Copied as one block, the values must be those the interpreter computes, and the module
    must be smaller than with a load and a store per residual."""
    n = 260  # residuals: over the parameter limit, so both halves take them through memory
    f = fn([Real] * n, Real, lambda *xs: adcore.sum([xs[k] * xs[k] * xs[k] * (k + 1) for k in range(n)]))

    def gradient(*xs):
        return list(vjp(f)(*xs).grad(1.0))

    g = fn([Real] * n, Vec(n, Real), gradient)
    fwd, bwd = adcore.reverse.reverse_pair(f.ir)
    assert spilled(fwd) and spilled(bwd)
    xs = [0.37 * k - 40.0 for k in range(n)]
    expected = [3 * x * x * (k + 1) for k, x in enumerate(xs)]  # by hand
    got = Compiled(g)(*xs)
    assert list(got) == pytest.approx(expected, rel=1e-14)
    assert list(got) == list(interp(g)(*xs))  # the same IEEE operations in the same order
    copied, _ = build_module(g.ir)

    monkeypatch.setattr(emit.FunctionGen, "slot_address", lambda self, a: None)
    one_by_one, _ = build_module(fn([Real] * n, Vec(n, Real), gradient).ir)
    assert len(one_by_one) - len(copied) >= 8 * n


def test_collection_is_paused_only_while_a_transformation_runs() -> None:
    seen: list[bool] = []

    @gc_paused
    def inner() -> None:
        seen.append(gc.isenabled())

    @gc_paused
    def outer() -> None:
        inner()
        seen.append(gc.isenabled())
        raise ValueError("boom")

    assert gc.isenabled()
    with pytest.raises(ValueError):
        outer()
    assert seen == [False, False]
    assert gc.isenabled()  # restored after an exception, and by the outermost call only

    gc.disable()
    try:
        inner()
        assert not gc.isenabled()  # a caller that paused collection keeps it paused
    finally:
        gc.enable()


def test_shared_libm_bodies_follow_each_modules_function_indices() -> None:
    """libm bodies are reused between modules that link the same functions at the same indices; a
    module that links them elsewhere gets bodies calling its own indices."""
    alone, other = ModuleBuilder(), ModuleBuilder()
    other.reserve_function("first", [], [])  # shifts every libm index by one
    a, b = add_libm(alone, ["sin"]), add_libm(other, ["sin"])
    assert all(b[name] == a[name] + 1 for name in a)
    body_a = {f.name: f.body for f in alone.functions}
    body_b = {f.name: f.body for f in other.functions}
    calls = [name for name in body_a if body_a[name] != body_b[name]]
    assert calls  # sin calls its argument reduction, whose index moved
    again = ModuleBuilder()
    add_libm(again, ["sin"])
    assert {f.name: f.body for f in again.functions} == body_a


def test_a_wide_functions_calls_with_two_results_keep_both() -> None:
    """A wide forward half (over the result limit) stores its residuals where they are made. sin's
    forward call gives two of them (sin and cos) at once: each needs its own local until stored."""
    rng = random.Random(1)

    def energy(x):
        values = [x[k] for k in range(3)]
        for _ in range(17):  # 65 residuals: one over the limit
            a, b = rng.choice(values[-20:]), rng.choice(values)
            values.append(am.sin(a) * b + a / (1.0 + b * b))
        return adcore.sum(values[-4:])

    f = fn([Vec(3, Real)], Real, energy)
    g = fn([Vec(3, Real)], Vec(3, Real), lambda v: vjp(f)(v).grad(1.0))
    assert any(spilled(h) for h in adcore.ir.call_graph(adcore.reverse.reverse_pair(f.ir)[0]))
    x = [0.3, -0.7, 1.1]
    assert list(Compiled(g)(x)) == pytest.approx(list(interp(g)(x)), rel=1e-13)


def test_dead_straight_line_code_emits_nothing() -> None:
    """Straight-line functions reach the code generator unsimplified; its backward walk drops what
    nothing reads, so dead work costs no bytes."""

    def clean(x, y):
        return am.sin(x) * y

    def with_dead_work(x, y):
        unused = x * y + x / y
        _ = unused * unused - y  # read by nothing
        return am.sin(x) * y

    a, b = fn([Real, Real], Real, clean, name="f"), fn([Real, Real], Real, with_dead_work, name="f")
    assert len(b.ir.body.eqns) == len(a.ir.body.eqns) + 5  # the dead work is in the IR
    assert build_module(b.ir)[0] == build_module(a.ir)[0]
    assert Compiled(b)(0.4, 2.0) == interp(a)(0.4, 2.0)


def test_a_wide_functions_array_and_integer_parameters_load_as_addresses_and_integers() -> None:
    """A wide function's parameters are read from its buffer: reals as f64, arrays (their address)
    and integers as i32. Parameters of every kind, in slots spread over the buffer, must give the
    interpreter's values (by hand here: a weighted sum)."""
    n = 230  # over the parameter limit: the callee takes its arguments through memory

    def weighted(*a):
        return adcore.sum([a[k] * (k + 1) for k in range(n)]) + a[n][2] * 1000.0 + adcore.to_real(a[n + 1])

    inner = fn([Real] * n + [Vec(3, Real), Int], Real, weighted)
    outer = fn([Vec(3, Real), Int], Real, lambda v, i: inner(*[v[k % 3] for k in range(n)], v, i))
    assert spilled(inner.ir)
    v, i = [0.5, -1.25, 2.0], 7
    expected = sum([v[k % 3] * (k + 1) for k in range(n)]) + v[2] * 1000.0 + i  # by hand
    assert Compiled(outer)(v, i) == pytest.approx(expected, rel=1e-14)
    assert Compiled(outer)(v, i) == interp(outer)(v, i)
