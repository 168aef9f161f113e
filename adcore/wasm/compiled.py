"""Compiled functions: a Wasm module per adcore function, called from Python.

`compile_fn(f)(*args)` takes and returns the same Python values as `interp(f)`. For hot loops,
`Compiled.inputs`/`Compiled.outputs` are numpy views on the module's memory for the array leaves,
and `Compiled.call_raw(*scalars)` runs the function with one raw call.

Tiers: a large module (`BASELINE_MIN_BYTES`) not yet in the caches starts on baseline code (Winch
compiles it in milliseconds) while Cranelift compiles it in the background; the first call after
that compile ends moves the memory to an optimized instance and goes on there. The views are
rebuilt in the same lists at that moment: index `inputs`/`outputs` at each use rather than keeping
an array. Tier "deferred" (for a function whose number of calls is unknown, such as an energy an
optimizer runs) starts a smaller module on baseline code too, but begins the optimizing compile only
once its calls have taken about a third of what that compile would (`DEFERRED_SECONDS_PER_BYTE`):
a function called a few hundred times never pays for Cranelift, and one called for long pays a
little more than on optimized code from the start. Both tiers compute the same numbers.
"""

from __future__ import annotations

import ctypes
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import numpy as np
import wasmtime

from ..convert import argument_leaves, to_python
from ..ir import Function
from ..types import Bool, Real, Type
from .codegen import Plan, build_module, is_array
from .host import check_function, dtype_shape, host_function
from .runtime import WASM_PAGE, Instance, cached_module, optimize_in_background


def module_for(f: Function, bounds_checks: bool = True) -> tuple[bytes, Plan]:
    key = ("wasm", bounds_checks)
    if key not in f.cache:
        f.cache[key] = build_module(f, bounds_checks=bounds_checks)
    return f.cache[key]


# Cranelift compiles ~1 MB of our Wasm a second. Below this size that is under ~250 ms, and the
# baseline code, five times slower, tends to lose more than it saves: measured on the registry with a
# process per core, starting at 16 KB made the median layout 3x slower to optimize (the background
# compile had no free core) and saved little compile time.
BASELINE_MIN_BYTES = 256 * 1024
# Seconds of baseline calls per byte of Wasm a deferred function runs before it is optimized: about a
# third of Cranelift's compile (0.8-1.3 µs a byte on registry energies of 9-64 KB; Winch's 0.2-0.5).
# Registry layouts make a median of 480 energy evaluations, a third of them over 2,400: waiting for a
# whole compile's worth (1 µs) cost those long layouts more CPU than the short ones saved.
DEFERRED_SECONDS_PER_BYTE = 0.3e-6
# Linear memory one instance may hold unless its caller says otherwise.
MEMORY_LIMIT = 1 << 30


def starting_tier(wasm: bytes, tier: str, cache_dir: str | Path | None) -> str:
    """The tier to start on: "auto" and "deferred" start optimized if the module is cached, "auto"
    also if it is small; otherwise on baseline code."""
    if tier == "auto" and len(wasm) < BASELINE_MIN_BYTES:
        return "optimized"
    if tier in ("auto", "deferred"):
        return "optimized" if cached_module(wasm, cache_dir) is not None else "baseline"
    return tier


class Compiled:
    """One instance of a compiled function (with its own Store: use one per thread).

    ``tier``: "auto", "deferred" (see the module docstring), "optimized" or "baseline" (no tier-up).
    """

    def __init__(
        self,
        f: Any,
        *,
        time_limit: float | None = 10.0,
        memory_limit: int | None = MEMORY_LIMIT,
        bounds_checks: bool = True,
        tier: str = "auto",
        cache_dir: str | Path | None = None,
    ):
        self.fn = f
        ir: Function = f.ir if hasattr(f, "ir") else f
        self.ir = ir
        wasm, self.plan = module_for(ir, bounds_checks)
        self._bounds_checks = bounds_checks
        self.wasm_bytes = len(wasm)
        self.inputs: list[np.ndarray | None] = []
        self.outputs: list[np.ndarray | None] = []
        if tier == "deferred" and len(wasm) >= BASELINE_MIN_BYTES:
            tier = "auto"  # a large module is compiled in the background from the start
        start = starting_tier(wasm, tier, cache_dir)
        disk = cache_dir if start == "optimized" else None  # baseline code is never worth keeping
        checks = [] if self.plan.checks is None else [check_function(self.plan.checks)]  # imported first
        self.host = checks + [host_function(g) for g in self.plan.host]
        instance = Instance(
            wasm, self.host, cache_dir=disk, tier=start, time_limit=time_limit, memory_limit=memory_limit
        )
        # Started once the baseline code exists, so the two compiles never compete for the cores.
        self._optimizing: Future[wasmtime.Module] | None = None
        self._cache_dir = cache_dir
        # "deferred": seconds of baseline calls left before the optimizing compile begins
        self._deferred = (
            len(wasm) * DEFERRED_SECONDS_PER_BYTE if start == "baseline" and tier == "deferred" else None
        )
        if start == "baseline" and tier == "auto":
            self._optimizing = optimize_in_background(wasm, cache_dir)
        self._bind(instance)

    @property
    def tier(self) -> str:
        return self.instance.tier

    def _bind(self, instance: Instance) -> None:
        self.instance = instance
        fast = instance.fast("main")
        # While an optimized module is due or on its way, calls go through a check; afterwards, straight in.
        self.call_raw = fast if self._optimizing is None and self._deferred is None else self._call_checking
        self._fast = fast
        ir, plan = self.ir, self.plan
        self.inputs[:] = [self._view(p.ty, a) for p, a in zip(ir.params, plan.param_addrs)]
        self.outputs[:] = [self._view(t, a) for t, a in zip(ir.result_types, plan.result_addrs)]

    def input(self, k: int) -> np.ndarray:
        """Parameter k's array in the module's memory (look it up at each use: see the docstring)."""
        view = self.inputs[k]
        if view is None:
            raise TypeError(f"parameter {k} of {self.ir.name} is not an array")
        return view

    def output(self, k: int) -> np.ndarray:
        """Result k's array in the module's memory (look it up at each use: see the docstring). Read
        it only: the next call relies on it holding what the last call wrote (the code generator
        zeroes only what a smaller count leaves behind, `emit.FunctionGen.zero_tail_since`)."""
        view = self.outputs[k]
        if view is None:
            raise TypeError(f"result {k} of {self.ir.name} is not an array")
        return view

    def _call_checking(self, *args: float | int) -> Any:
        if self._deferred is not None:
            start = time.perf_counter()
            result = self._fast(*args)
            self._deferred -= time.perf_counter() - start
            if self._deferred <= 0:
                self._start_optimizing()
            return result
        if self._optimizing is not None and self._optimizing.done():
            self._tier_up()
        return self._fast(*args)

    def _start_optimizing(self) -> None:
        self._deferred = None
        self._optimizing = optimize_in_background(
            module_for(self.ir, self._bounds_checks)[0], self._cache_dir
        )

    def wait_optimized(self, timeout: float | None = None) -> bool:
        """Block until the optimized code runs this function (True), or `timeout` seconds pass."""
        if self._deferred is not None:
            self._start_optimizing()
        if self._optimizing is not None:
            try:
                self._optimizing.result(timeout)
            except TimeoutError:
                return False
            except Exception:  # noqa: BLE001 - _tier_up keeps the baseline code
                pass
            self._tier_up()
        return self.tier == "optimized"

    def _tier_up(self) -> None:
        future, self._optimizing = self._optimizing, None
        assert future is not None
        old = self.instance
        try:
            module = future.result()
            new = Instance(
                module, self.host, time_limit=old.time_limit, memory_limit=old.memory_limit, tier="optimized"
            )
            _copy_memory(old, new)
        except Exception:  # noqa: BLE001 - the baseline code runs the same program: stay on it
            self._bind(old)
            return
        self._bind(new)

    def _view(self, t: Type, addr: int | None) -> np.ndarray | None:
        if addr is None or not is_array(t):
            return None
        dtype, shape = dtype_shape(t)
        n = int(np.prod(shape))
        return self.instance.view(addr, n, dtype).array.reshape(shape)

    def call_leaves(self, leaves: list[Any]) -> list[Any]:
        scalars = []
        for view, leaf in zip(self.inputs, leaves):
            if view is None:
                scalars.append(leaf)
            else:
                view[...] = leaf
        out = self.call_raw(*scalars)
        scalar_out = iter([] if out is None else out if isinstance(out, list) else [out])
        return [next(scalar_out) if view is None else view.tolist() for view in self.outputs]

    def __call__(self, *args: Any) -> Any:
        f = self.fn
        results = self.call_leaves(argument_leaves(f, args))
        fixed = [_python_scalar(r, t) for r, t in zip(results, self.ir.result_types)]
        return to_python(f.ret, fixed)


def _copy_memory(src: Instance, dst: Instance) -> None:
    """The whole linear memory (inputs written, tables, constants) into a fresh instance."""
    source, target = src.memory(), dst.memory()
    n = source.data_len(src.store)
    missing = n - target.data_len(dst.store)
    if missing > 0:
        dst.grow_memory(-(-missing // WASM_PAGE))
    ctypes.memmove(target.data_ptr(dst.store), source.data_ptr(src.store), n)


def _python_scalar(value: Any, t: Type) -> Any:
    """Wasm gives i32 for Bool and f64 for Real: the Python value the interpreter would give."""
    if t is Bool:
        return bool(value)
    if t is Real:
        return float(value)
    return value


def compile_fn(f: Any, **options: Any) -> Compiled:
    return Compiled(f, **options)
