"""Tiered compilation: large modules start on baseline (Winch) code and move to optimized code.

The oracle is the interpreter (whose sums may associate differently: 1e-9 relative); baseline and
optimized code must agree bit for bit (the same Wasm, whose float semantics leave no freedom for
finite values).
"""

from __future__ import annotations

import gc
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import adcore
from adcore import Int, Real, Vec, compile, fn, interp, vjp
from adcore import math as am
from adcore.wasm import compiled, runtime
from adcore.wasm.compiled import module_for
from adcore.wasm.runtime import WasmTimeout

N = 8
ROOT = Path(__file__).resolve().parents[2]


def long_gradient(seed: int) -> adcore.Fn:
    """The gradient of a random straight-line program: tens of kilobytes of Wasm."""
    rng = random.Random(seed)

    def energy(x):
        values = [x[k] for k in range(N)]
        for _ in range(400):
            a, b = rng.choice(values[-20:]), rng.choice(values)
            values.append(am.sin(a) * b + a / (1.0 + b * b))
        return adcore.sum(values[-40:])

    f = fn([Vec(N, Real)], Real, energy, name=f"long{seed}")
    return fn([Vec(N, Real)], Vec(N, Real), lambda v: vjp(f)(v).grad(1.0), name=f"long_grad{seed}")


TEST_THRESHOLD = 16 * 1024  # the policy's threshold is larger; these tests are about the mechanism


@pytest.fixture(autouse=True)
def nothing_compiled_yet(monkeypatch: pytest.MonkeyPatch) -> None:
    runtime.clear_memory_cache()
    monkeypatch.setattr(compiled, "BASELINE_MIN_BYTES", TEST_THRESHOLD)


def points(k: int) -> list[list[float]]:
    rng = np.random.default_rng(k)
    return [list(rng.uniform(-2.0, 2.0, N)) for _ in range(3)]


def test_a_large_module_starts_on_baseline_code_and_moves_with_its_inputs() -> None:
    g = long_gradient(1)
    wasm, _ = module_for(g.ir)
    assert len(wasm) >= TEST_THRESHOLD
    c = compile(g)
    assert c.tier == "baseline"
    held = c.inputs  # the list is kept and refilled with views on the new memory
    x0, x1, x2 = points(1)
    assert np.allclose(c(x0), interp(g)(x0), rtol=1e-9, atol=0)
    c.inputs[0][...] = x1  # written into the baseline instance's memory
    c.call_raw()
    on_baseline, stale = c.outputs[0].copy(), c.outputs[0]
    runtime.optimize_in_background(wasm).result(timeout=120)
    c.inputs[0][...] = x1
    c.call_raw()  # the optimized module is ready: this call moves to it first
    assert c.tier == "optimized" and held is c.inputs
    assert np.array_equal(c.outputs[0], on_baseline)
    gc.collect()
    assert np.array_equal(stale, on_baseline)  # an array kept from before reads the old memory, alive
    assert np.allclose(c(x2), interp(g)(x2), rtol=1e-9, atol=0)


def test_inputs_written_before_the_move_are_carried_over() -> None:
    g = long_gradient(2)
    c = compile(g)
    x0, _, _ = points(2)
    c.inputs[0][...] = x0
    assert c.wait_optimized(timeout=120) and c.tier == "optimized"
    c.call_raw()  # no new write: the inputs must have come along with the memory
    assert np.allclose(c.outputs[0], interp(g)(x0), rtol=1e-9, atol=0)


def test_optimized_code_once_compiled_is_where_the_next_instance_starts(tmp_path: Path) -> None:
    g = long_gradient(3)
    first = compile(g, cache_dir=tmp_path)
    wasm, _ = module_for(g.ir)
    assert runtime.cached_module(wasm, tier="baseline") is not None
    assert first.tier == "baseline" and first.wait_optimized(timeout=120)
    assert runtime.cached_module(wasm, tier="baseline") is None  # not kept once optimized code exists
    assert compile(g).tier == "optimized"  # from memory
    runtime.clear_memory_cache()
    assert compile(g, cache_dir=tmp_path).tier == "optimized"  # from disk, written by the background
    runtime.clear_memory_cache()
    assert compile(g).tier == "baseline"  # neither cache: the disk one was not named


def test_a_failed_optimizing_compile_leaves_the_function_on_its_baseline_code(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = runtime.load_module

    def refusing(wasm: bytes, cache_dir: object = None, tier: str = "optimized") -> object:
        if tier == "optimized":
            raise ValueError("no optimized code today")
        return real(wasm, cache_dir, tier)  # type: ignore[arg-type]

    monkeypatch.setattr(runtime, "load_module", refusing)
    g = long_gradient(6)
    c = compile(g)
    assert c.tier == "baseline" and not c.wait_optimized(timeout=120)
    x0, x1, _ = points(6)
    assert np.allclose(c(x0), interp(g)(x0), rtol=1e-9, atol=0)
    assert np.allclose(c(x1), interp(g)(x1), rtol=1e-9, atol=0) and c.tier == "baseline"


def test_small_modules_and_explicit_tiers_do_not_move() -> None:
    small = compile(fn([Real], Real, lambda x: am.sin(x) * 2.0))
    assert small.tier == "optimized" and small(0.5) == interp(small.fn)(0.5)
    g = long_gradient(4)
    x0, _, _ = points(4)
    pinned = compile(g, tier="baseline")
    assert not pinned.wait_optimized(timeout=0.0) and pinned.tier == "baseline"
    eager = compile(g, tier="optimized")
    assert eager.tier == "optimized"
    assert np.array_equal(pinned(x0), eager(x0))


def test_baseline_code_keeps_the_time_limit() -> None:
    n = 100_000
    inner = fn([Real], Real, lambda x: adcore.sum(n, lambda i: am.sin(x + adcore.to_real(i))))
    outer = fn([Real], Real, lambda x: adcore.sum(n, lambda i: inner(x * adcore.to_real(i))))
    c = compile(outer, time_limit=0.2, tier="baseline")
    with pytest.raises(WasmTimeout):
        c(1.0)
    small = compile(fn([Real], Real, lambda x: x * 2.0), time_limit=0.2, tier="baseline")
    assert small(3.0) == 6.0


def test_a_process_exits_cleanly_while_optimized_code_is_still_compiling() -> None:
    script = (
        "import sys; sys.path.insert(0, 'tests/adcore');"
        "from test_tiers import TEST_THRESHOLD, long_gradient; from adcore import compile;"
        "from adcore.wasm import compiled; compiled.BASELINE_MIN_BYTES = TEST_THRESHOLD;"
        "c = compile(long_gradient(5)); print(c.tier, c.wait_optimized(timeout=0))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["baseline", "False"]


def test_a_deferred_function_is_optimized_only_after_its_calls_cost_about_a_compile(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(compiled, "BASELINE_MIN_BYTES", 1 << 30)  # so its module counts as small
    g = long_gradient(7)
    x0, x1, x2 = points(7)
    # a budget no call can exhaust: baseline code for good, and no compile begun behind it
    monkeypatch.setattr(compiled, "DEFERRED_SECONDS_PER_BYTE", 1.0)
    patient = compile(g, tier="deferred")
    values = [patient(x) for x in (x0, x1, x2)]
    assert patient.tier == "baseline" and patient._optimizing is None
    for x, v in zip((x0, x1, x2), values):
        assert np.allclose(v, interp(g)(x), rtol=1e-9, atol=0)
    # a budget of a nanosecond a byte: spent within a few calls, then optimized code, same numbers
    runtime.clear_memory_cache()
    monkeypatch.setattr(compiled, "DEFERRED_SECONDS_PER_BYTE", 1e-9)
    eager = compile(g, tier="deferred")
    assert eager.tier == "baseline"
    for _ in range(200):
        eager(x0)
        if eager._optimizing is not None:
            break
    assert eager._optimizing is not None and eager.wait_optimized(timeout=120)
    assert eager.tier == "optimized"
    assert [eager(x) for x in (x0, x1, x2)] == values  # bit for bit, as the baseline code
    # once optimized code is cached, a deferred function starts on it
    assert compile(g, tier="deferred").tier == "optimized"


def test_a_large_deferred_module_is_compiled_in_the_background_at_once() -> None:
    g = long_gradient(8)
    c = compile(g, tier="deferred")  # above the (test) threshold: "auto"'s background compile
    assert c.tier == "baseline" and c._optimizing is not None
    assert c.wait_optimized(timeout=120)


def test_a_module_with_a_host_import_moves_to_optimized_code() -> None:
    """Each tier has its own engine, and a host import's function type is bound to the engine it is
    first used with: the optimized instance must import with a type of its own (this aborted)."""
    n = 300
    f = fn(
        [Vec(n, Real), Int],
        Real,
        lambda x, k: adcore.sum(n, lambda i: x[i] * x[i], count=k),  # the count's check is a host import
    )
    c = adcore.Compiled(f, tier="deferred", bounds_checks=False)
    c.inputs[0][...] = np.arange(n, dtype=float)
    assert c.call_raw(10) == sum(i * i for i in range(10))
    assert c.wait_optimized(timeout=120) and c.tier == "optimized"
    assert c.call_raw(10) == sum(i * i for i in range(10))
