"""Compiled functions: a Wasm module per adcore function, called from Python.

`compile_fn(f)(*args)` takes and returns the same Python values as `interp(f)`. For hot loops,
`Compiled.inputs`/`Compiled.outputs` are numpy views on the module's memory for the array leaves,
and `Compiled.call_raw(*scalars)` runs the function with one raw call.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..interpreter import argument_leaves, to_python
from ..ir import Function
from ..runtime import Instance
from ..types import Bool, Real, Type, VecT
from .codegen import Plan, build_module, is_array


def module_for(f: Function, bounds_checks: bool = True) -> tuple[bytes, Plan]:
    key = ("wasm", bounds_checks)
    if key not in f.cache:
        f.cache[key] = build_module(f, bounds_checks=bounds_checks)
    return f.cache[key]


def _dtype_shape(t: Type) -> tuple[type, tuple[int, ...]]:
    shape = []
    while isinstance(t, VecT):
        shape.append(t.n)
        t = t.elem
    return (np.float64 if t == Real else np.int32), tuple(shape)


class Compiled:
    """One instance of a compiled function (with its own Store: use one per thread)."""

    def __init__(
        self,
        f: Any,
        *,
        time_limit: float | None = 10.0,
        memory_limit: int | None = 1 << 30,
        bounds_checks: bool = True,
    ):
        self.fn = f
        ir: Function = f.ir if hasattr(f, "ir") else f
        self.ir = ir
        wasm, self.plan = module_for(ir, bounds_checks)
        self.wasm_bytes = len(wasm)
        self.instance = Instance(wasm, time_limit=time_limit, memory_limit=memory_limit)
        self.call_raw = self.instance.fast("main")
        self.inputs = [self._view(p.ty, a) for p, a in zip(ir.params, self.plan.param_addrs)]
        self.outputs = [self._view(t, a) for t, a in zip(ir.result_types, self.plan.result_addrs)]

    def _view(self, t: Type, addr: int | None) -> np.ndarray | None:
        if addr is None or not is_array(t):
            return None
        dtype, shape = _dtype_shape(t)
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


def _python_scalar(value: Any, t: Type) -> Any:
    """Wasm gives i32 for Bool and f64 for Real: the Python value the interpreter would give."""
    if t is Bool:
        return bool(value)
    if t is Real:
        return float(value)
    return value


def compile_fn(f: Any, **options: Any) -> Compiled:
    return Compiled(f, **options)
