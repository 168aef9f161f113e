"""Per-call overhead of wasmtime-py's checked ``Func.__call__`` vs ``adcore.wasm.runtime.FastFunc``.

Measured in one run on the same instance: a trivial f64 add (pure call overhead), a 1-argument
libm call (sin) and a 2-argument one (pow).  Then, for scale, the in-Wasm cost per point of every
libm function (one batched call over 100k points in linear memory).

    .venv/bin/python benchmarks/runtime_calls.py
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from adcore.wasm.encode import F64, Asm, ModuleBuilder
from adcore.wasm.libm import LIBM, add_libm, libm_module, public_names
from adcore.wasm.runtime import Instance


def build_module() -> bytes:
    b = ModuleBuilder()
    index = add_libm(b, ["sin", "pow"])
    b.export_function("sin", index["sin"])
    b.export_function("pow", index["pow"])
    b.add_function("add", [F64, F64], [F64], [], Asm().local_get(0).local_get(1).f64_add(), export=True)
    return b.to_bytes()


def per_call_us(call: Callable[[], object], repeats: int) -> float:
    """Best of 5 runs of ``repeats`` calls, in microseconds per call."""
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(repeats):
            call()
        best = min(best, (time.perf_counter() - t0) / repeats)
    return best * 1e6


def main() -> None:
    inst = Instance(build_module())
    store = inst.store
    print("| function | checked Func.__call__ (µs) | FastFunc (µs) | ratio |")
    print("| --- | ---: | ---: | ---: |")
    cases = {"add": (1.5, 2.5), "sin": (0.7,), "pow": (1.3, 2.7)}
    for name, args in cases.items():
        checked_func, fast = inst.func(name), inst.fast(name)
        assert checked_func(store, *args) == fast(*args)
        checked = per_call_us(lambda f=checked_func, a=args: f(store, *a), 2_000)
        quick = per_call_us(lambda f=fast, a=args: f(*a), 20_000)
        print(f"| {name} | {checked:.2f} | {quick:.2f} | {checked / quick:.1f}x |")
    # For scale: a Python loop over numpy values with FastFunc.
    xs = np.random.default_rng(0).uniform(-10, 10, 100_000).tolist()
    sin = inst.fast("sin")
    t0 = time.perf_counter()
    for x in xs:
        sin(x)
    print(f"\nFastFunc sin over 100k Python floats: {(time.perf_counter() - t0) * 1e3:.0f} ms")
    libm_throughput()


def libm_throughput(n: int = 100_000) -> None:
    """Cost per point of each libm function inside Wasm (one map_<name> call over n points)."""
    names = public_names()
    inst = Instance(libm_module(names), time_limit=None)
    rng = np.random.default_rng(1)
    print(f"\n| libm function | ns per point (batch of {n}) |")
    print("| --- | ---: |")
    for name in names:
        arity = LIBM[name].arity
        args = rng.uniform(0.1, 3.0, (n, arity))
        inst.view(0, n * arity).array[:] = args.ravel()
        run = inst.fast(f"map_{name}")
        best = min(_timed(run, n, n * arity * 8) for _ in range(3))
        print(f"| {name} | {best / n * 1e9:.1f} |")


def _timed(run: Callable[..., object], n: int, out_offset: int) -> float:
    t0 = time.perf_counter()
    run(n, 0, out_offset)
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
