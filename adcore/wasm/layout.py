"""The Wasm side of adcore's values: sizes, types, and the calling convention.

Real is f64; Int and Bool are i32. Arrays live in linear memory, row-major and contiguous, so a
nested array's element is a pointer into its parent (no copy); array values are i32 pointers. A
caller passes one output pointer per array result; scalar results are Wasm multi-value results,
except for functions too wide for the engine's limits, which take everything through a buffer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from ..errors import AdcoreError
from ..ir import Function
from ..types import Real, RefT, Type, VecT
from .encode import F64, I32, Asm, i32_const_code

T = TypeVar("T")

ALIGN = 8
MAX_MEMORY = 2**30  # a memory plan larger than this is refused at compile time


class CodegenError(AdcoreError):
    """An IR construct or size the Wasm backend cannot compile."""


def size_of(t: Type) -> int:
    if isinstance(t, VecT):
        return t.n * size_of(t.elem)
    if isinstance(t, RefT):
        return size_of(t.of)
    return 8 if t == Real else 4


def wasm_type(t: Type) -> int:
    return F64 if t == Real else I32


def is_array(t: Type) -> bool:
    cls = t.__class__  # classes compared by identity: asked for every operand emitted
    return cls is VecT or (cls is RefT and t.of.__class__ is VecT)  # type: ignore[union-attr]  # t: a RefT


def _align(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


MAX_PARAMS = 200  # engines cap parameters and results (1,000 in wasmtime); bigger calls go through memory
MAX_RESULTS = 64


def spilled(f: Function) -> bool:
    """Whether f takes its arguments and returns its scalars through a buffer in memory."""
    known = f.cache.get("spilled")
    if known is None:
        n_arrays = sum(map(is_array, f.result_types))
        n_in = len(f.params) + n_arrays
        known = f.cache["spilled"] = n_in > MAX_PARAMS or len(f.result_types) - n_arrays > MAX_RESULTS
    return known


def buffer_slots(f: Function) -> int:
    """8-byte slots of a spilled call: parameters, output pointers, then scalar results."""
    return len(f.params) + len(f.result_types)


def wasm_signature(f: Function) -> tuple[list[int], list[int]]:
    if spilled(f):
        return [I32], []
    params = [I32 if is_array(p.ty) else wasm_type(p.ty) for p in f.params]
    params += [I32 for t in f.result_types if is_array(t)]  # output pointers
    results = [wasm_type(t) for t in f.result_types if not is_array(t)]
    return params, results


def emit_call(
    a: Asm,
    g: Function,
    target: int,
    args: Sequence[T],
    push: Callable[[T], object],
    out_addrs: Sequence[int],
    buffer: int | None,
    take_result: Callable[[Type], None] | None,
    address_of: Callable[[T], int | None] = lambda x: None,
) -> None:
    """Call g: arguments (`push(arg)` puts each on the stack), output pointers, then scalar results
    left on the stack (direct call) or loaded from the buffer and handed to `take_result` in order
    (left in the buffer if it is None). `address_of(arg)` is the static address of the 8-byte slot
    holding arg, if it is in memory: consecutive slots go to a spilled call's buffer in one copy."""
    if not spilled(g):
        for x in args:
            push(x)
        for addr in out_addrs:
            a.i32_const(addr)
        a.call(target)
        return
    assert buffer is not None
    address = i32_const_code(buffer)
    k = 0
    while k < len(args):
        # a wide call's arguments are often a wide call's results, slot after slot (residuals)
        src = address_of(args[k])
        run = 1
        while src is not None and k + run < len(args) and address_of(args[k + run]) == src + 8 * run:
            run += 1
        if run > 1:
            a.i32_const(buffer + 8 * k)
            a.i32_const(src)  # type: ignore[arg-type]  # not None: run > 1
            a.i32_const(8 * run)
            a.memory_copy()
        else:
            a.code += address
            push(args[k])
            _store_slot(a, g.params[k].ty, 8 * k)
        k += run
    for j, addr in enumerate(out_addrs):
        a.i32_const(buffer)
        a.i32_const(addr)
        a.i32_store(8 * (len(g.params) + j))
    a.i32_const(buffer)
    a.call(target)
    if take_result is None:
        return
    first = len(g.params) + len(out_addrs)
    for j, t in enumerate(t for t in g.result_types if not is_array(t)):
        a.i32_const(buffer)
        _load_slot(a, t, 8 * (first + j))
        take_result(t)


def _store_slot(a: Asm, t: Type, offset: int) -> None:
    (a.f64_store if t == Real else a.i32_store)(offset)


def _load_slot(a: Asm, t: Type, offset: int) -> None:
    (a.f64_load if t == Real else a.i32_load)(offset)
