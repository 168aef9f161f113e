"""Opaque functions with a Python implementation, called from Wasm as wasmtime host functions.

An opaque function that has no Wasm body (adcore.math's have one, in `libm.py`) is imported by the
module under `HOST_MODULE` with the usual calling convention (`layout.py`): scalars as values, arrays
as pointers into linear memory, one output pointer per array result. Its host function reads the
arrays from the caller's memory, runs the implementation on the same Python values as `interp`
gives it (`convert.call_impl`), and writes array results back.

An exception raised by the implementation (or a result of the wrong shape) stops the Wasm call with
a trap; the runtime raises it as a `WasmHostError` naming the function, from the original exception.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import wasmtime

from ..convert import call_impl, from_python
from ..errors import RANGE_MESSAGES, OpaqueCallError, RangeError
from ..ir import Function
from ..types import Bool, Int, Real, Type, VecT
from .layout import is_array, size_of, wasm_signature
from .runtime import HostFunction

HOST_MODULE = "host"  # the import module name of opaque functions' host functions
CHECK_IMPORT = "adcore:check"  # the import reporting a failed run-time check (`codegen.Plan.checks`)


def dtype_shape(t: Type) -> tuple[type, tuple[int, ...]]:
    """The numpy dtype and shape of an array leaf as laid out in linear memory."""
    shape = []
    while isinstance(t, VecT):
        shape.append(t.n)
        t = t.elem
    return (np.float64 if t == Real else np.int32), tuple(shape)


def _read_array(memory: wasmtime.Memory, caller: wasmtime.Caller, addr: int, t: Type) -> Any:
    dtype, shape = dtype_shape(t)
    raw = memory.read(caller, addr, addr + size_of(t))
    values: np.ndarray = np.frombuffer(raw, dtype=dtype).reshape(shape)
    elem = t
    while isinstance(elem, VecT):
        elem = elem.elem
    return values.astype(bool).tolist() if elem is Bool else values.tolist()


def _write_array(memory: wasmtime.Memory, caller: wasmtime.Caller, addr: int, t: Type, value: Any) -> None:
    dtype, shape = dtype_shape(t)
    memory.write(caller, np.asarray(value, dtype=dtype).reshape(shape).tobytes(), addr)


def host_function(g: Function) -> HostFunction:
    """g's import: its Wasm type and the callback implementing it (on Wasm numbers; with the caller
    first when arrays cross, through linear memory)."""
    params, results = wasm_signature(g)
    val = {0x7C: wasmtime.ValType.f64(), 0x7F: wasmtime.ValType.i32()}
    functype = wasmtime.FuncType([val[p] for p in params], [val[r] for r in results])
    param_types = [p.ty for p in g.params]
    arrays_in = any(map(is_array, param_types))
    arrays_out = [t for t in g.result_types if is_array(t)]
    n = len(param_types)
    name = g.name
    impl, signature = g.impl, g.signature
    if impl is not None and signature is not None and all(t is Real for t in (*signature[0], signature[1])):
        where = f"result of {name}"

        def real_callback(*raw: float) -> float:
            # Reals in, a Real out (most opaque functions): the implementation is called directly
            try:
                out = impl(*raw)
                return out if out.__class__ is float else from_python(Real, out, where)[0]
            except Exception as e:  # noqa: BLE001 - any failure of user code becomes a trap naming it
                raise OpaqueCallError(name, e) from e

        return HostFunction(functype, real_callback, scalar=True)

    if not arrays_in and not arrays_out:

        def scalar_callback(*raw: Any) -> Any:
            try:
                out = call_impl(g, [bool(v) if t is Bool else v for t, v in zip(param_types, raw)])
            except Exception as e:  # noqa: BLE001 - any failure of user code becomes a trap naming it
                raise OpaqueCallError(name, e) from e
            scalars = [int(v) if t is Int or t is Bool else v for t, v in zip(g.result_types, out)]
            return None if not scalars else scalars[0] if len(scalars) == 1 else scalars

        return HostFunction(functype, scalar_callback, scalar=True)

    def callback(caller: wasmtime.Caller, *raw: Any) -> Any:
        try:
            memory = caller["memory"] if arrays_in or arrays_out else None
            leaves = [
                _read_array(memory, caller, v, t)  # type: ignore[arg-type]  # memory: set, arrays_in
                if is_array(t)
                else bool(v)
                if t is Bool
                else v
                for t, v in zip(param_types, raw[:n])
            ]
            out = call_impl(g, leaves)
            scalars = []
            pointers = iter(raw[n:])
            for t, v in zip(g.result_types, out):
                if is_array(t):
                    _write_array(memory, caller, next(pointers), t, v)  # type: ignore[arg-type]  # memory: set, arrays_out
                else:
                    scalars.append(int(v) if t is Int or t is Bool else v)
        except Exception as e:  # noqa: BLE001 - any failure of user code becomes a trap naming it
            raise OpaqueCallError(name, e) from e
        return None if not scalars else scalars[0] if len(scalars) == 1 else scalars

    return HostFunction(functype, callback, scalar=False)


def check_function(sites: list[tuple[str, str, int]]) -> HostFunction:
    """The check import of a module whose run-time checks are `sites` (`codegen.Plan.checks`): it
    raises the failed check's RangeError (the runtime raises it as a `WasmRangeError`)."""

    def fail(site: int, value: int) -> None:
        kind, where, bound = sites[site]
        raise RangeError(RANGE_MESSAGES[kind](where, value, bound))

    i32 = wasmtime.ValType.i32()
    return HostFunction(wasmtime.FuncType([i32, i32], []), fail, scalar=True)


__all__ = ["CHECK_IMPORT", "HOST_MODULE", "check_function", "dtype_shape", "host_function"]
