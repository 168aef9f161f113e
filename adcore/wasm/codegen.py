"""IR -> WebAssembly: one Wasm function per adcore function, arrays in a static memory plan.

`build_module(f)` simplifies the program's loops (`adcore/simplify.py`, `adcore/fuse.py`; straight-line
code comes from the builder already value-numbered), links the math functions it uses from our Wasm
libm, emits every function (`emit.py`), lays out the memory (the entry's arrays first, then one
static frame per function) and exports `main` and `memory`. Representation and calling convention:
`layout.py`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..gc_pause import gc_paused
from ..ir import Function, call_graph
from .emit import FunctionGen, runtime_checked
from .encode import I32, Asm, ModuleBuilder
from .fuse import fuse_program
from .host import CHECK_IMPORT, HOST_MODULE
from .layout import (
    MAX_MEMORY,
    CodegenError,
    _align,
    buffer_slots,
    emit_call,
    is_array,
    size_of,
    spilled,
    wasm_signature,
    wasm_type,
)
from .libm import add_libm
from .simplify import simplify_program

__all__ = ["CodegenError", "FunctionGen", "Plan", "build_module", "is_array", "size_of", "spilled"]


def libm_name(f: Function) -> str | None:
    """The Wasm library function implementing an opaque math function of adcore.math, if any."""
    from .. import math as am

    for table in (am.UNARY, am.BINARY):
        g = table.get(f.name)
        if g is not None and g.ir is f:
            return f.name
    return None


@dataclass
class Plan:
    """Where the entry function's array arguments and results live in memory, and the opaque
    functions the module imports as host functions (`host.py`), in import order.

    `checks`: None, or the module's run-time range checks (a loop's count, ...) by site number, as
    (kind, function, bound); a failing check calls the import `CHECK_IMPORT` (imported first) with
    its site and the value, which raises the error `host.check_function` words."""

    host: list[Function] = field(default_factory=list)
    param_addrs: list[int | None] = field(default_factory=list)
    result_addrs: list[int | None] = field(default_factory=list)
    memory_bytes: int = 0
    checks: list[tuple[str, str, int]] | None = None


@gc_paused
def build_module(f: Function, *, bounds_checks: bool = True) -> tuple[bytes, Plan]:
    """A module exporting `main` (scalar parameters in, scalar results out; arrays at `Plan` addresses)
    and `memory`."""
    f = fuse_program(simplify_program(f))
    mod = ModuleBuilder()
    graph = call_graph(f)
    opaque = [g for g in graph if g.body is None]
    plan = Plan()
    index: dict[int, int] = {}
    check_index = None
    if any(map(runtime_checked, graph)):
        check_index = mod.add_import(HOST_MODULE, CHECK_IMPORT, [I32, I32], [])
        plan.checks = []
    # imports come first in a module: opaque functions without a Wasm body are host functions
    for g in opaque:
        if libm_name(g) is None:
            if g.impl is None:
                raise CodegenError(
                    f"opaque function {g.name} has neither a Wasm body nor a Python implementation"
                )
            params, results = wasm_signature(g)
            if spilled(g):
                raise CodegenError(
                    f"opaque function {g.name} has too many parameters or results for a host call"
                )
            index[id(g)] = mod.add_import(HOST_MODULE, f"{len(plan.host)}:{g.name}", params, results)
            plan.host.append(g)
    libm = add_libm(mod, sorted({name for g in opaque if (name := libm_name(g)) is not None}))
    index.update((id(g), libm[name]) for g in opaque if (name := libm_name(g)) is not None)
    bodies = [g for g in graph if g.body is not None]
    for g in bodies:
        params, results = wasm_signature(g)
        index[id(g)] = mod.reserve_function(g.name, params, results)
    offset = 16  # address 0 stays unused so that a null pointer is never valid data
    for p in f.params:
        plan.param_addrs.append(offset if is_array(p.ty) else None)
        offset += _align(size_of(p.ty)) if is_array(p.ty) else 0
    for t in f.result_types:
        plan.result_addrs.append(offset if is_array(t) else None)
        offset += _align(size_of(t)) if is_array(t) else 0
    for g in bodies:
        gen = FunctionGen(g, index, offset, bounds_checks, (check_index, plan.checks), entry=g is f)
        gen.emit_body()
        mod.define_function(index[id(g)], gen.local_types, gen.asm)
        offset = _align(gen.frame_end)
        if offset > MAX_MEMORY:
            raise CodegenError(
                f"memory plan of {offset} bytes exceeds the limit of {MAX_MEMORY} bytes (in {g.name})"
            )
    entry_buffer = offset
    offset += 8 * buffer_slots(f)
    plan.memory_bytes = offset
    mod.add_function("main", *_entry(f, plan, index[id(f)], entry_buffer), export=True)
    pages = max(1, -(-offset // 65536))
    mod.add_memory(pages, pages)
    return mod.to_bytes(), plan


def _entry(f: Function, plan: Plan, target: int, buffer: int) -> tuple[list[int], list[int], list[int], Asm]:
    params = [wasm_type(p.ty) for p in f.params if not is_array(p.ty)]
    results = [wasm_type(t) for t in f.result_types if not is_array(t)]
    a = Asm()
    k = 0
    args: list[tuple[bool, int]] = []  # (in a local, index or address)
    for addr in plan.param_addrs:
        if addr is None:
            args.append((True, k))
            k += 1
        else:
            args.append((False, addr))
    outs = [addr for addr in plan.result_addrs if addr is not None]
    push = lambda arg: a.local_get(arg[1]) if arg[0] else a.i32_const(arg[1])
    emit_call(a, f, target, args, push, outs, buffer, lambda t: None)
    return params, results, [], a
