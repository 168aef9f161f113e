"""adcore: a small language for differentiable scalar programs, in the style of Rose.

    f = fn([Vec2], Real, lambda v: am.pow(v[0], v[1]))
    g = fn([Vec2], Vec2, lambda v: vjp(f)(v).grad(1.0))
    interp(g)([2.0, 3.0])

Functions are traced once into an IR (adcore.ir); forward mode (adcore.jvp), unzipping
(adcore.unzip), transposition (adcore.transpose) and interval evaluation (`interval`: bounds of f
over a box, adcore/intervals.py) are IR-to-IR transformations, so derivatives of derivatives work.
`interp` runs the IR in Python; `compile` runs it as WebAssembly.

This module is adcore's public surface: other packages import from it (and `adcore.math`) only.
Besides the language it offers what libraries built on it need: `Compiled` (a compiled function with
numpy views on its memory and raw calls), the errors compiled code raises (`WasmTrap` and its
subclasses), primitives applied by name to numbers, symbolic or lazy values (`binary`, `unary`,
`eager`), `LbfgsTwoLoop` (the L-BFGS direction as a Wasm kernel), the type classes (`Scalar`,
`StructT`, `VecT`), `cyclic_gc_paused`, the cache helper `LRU` and `MODULES`, the compiled modules'
cache (an LRU bounded in bytes: a host sets its budget).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from . import math
from .api import Fn, and_, eq, floor_int, fn, jvp, neq, not_, opaque, or_, select, sum, to_real, vec, vjp
from .errors import (
    AdcoreError,
    AdcoreTypeError,
    DomainError,
    LinearityError,
    OpaqueCallError,
    RangeError,
    TraceError,
    WasmCompileError,
)
from .gc_pause import cyclic_gc_paused
from .interpreter import interp
from .intervals import has_near_rules, interval
from .loops import associative, fold, reduce, scan, segment_sum
from .lru import LRU
from .types import Bool, Dual, Int, Real, Scalar, StructT, Tan, Vec, VecT
from .values import binary, eager, unary

# The Wasm backend's names load on first use: wasmtime and numpy take half a second to import, which a
# program that only traces and interprets should not pay.
_BACKEND = {
    "Compiled": ".wasm.compiled",
    "LbfgsTwoLoop": ".wasm.kernels",
    "MODULES": ".wasm.runtime",
    "WasmHostError": ".wasm.runtime",
    "WasmOutOfMemory": ".wasm.runtime",
    "WasmRangeError": ".wasm.runtime",
    "WasmTimeout": ".wasm.runtime",
    "WasmTrap": ".wasm.runtime",
}


def __getattr__(name: str) -> object:
    if name not in _BACKEND:
        raise AttributeError(f"module 'adcore' has no attribute {name!r}")
    value = getattr(importlib.import_module(_BACKEND[name], __name__), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:
    from .wasm.compiled import Compiled
    from .wasm.kernels import LbfgsTwoLoop
    from .wasm.runtime import MODULES, WasmHostError, WasmOutOfMemory, WasmRangeError, WasmTimeout, WasmTrap


def compile(f: Fn, **options: Any) -> Compiled:  # noqa: A001 - the language's name
    """A Python callable running `f` as WebAssembly (same values in and out as `interp`)."""
    from .wasm.compiled import Compiled

    return Compiled(f, **options)


__all__ = [
    "AdcoreError",
    "AdcoreTypeError",
    "Bool",
    "Compiled",
    "DomainError",
    "Dual",
    "Fn",
    "Int",
    "LRU",
    "LbfgsTwoLoop",
    "LinearityError",
    "MODULES",
    "OpaqueCallError",
    "RangeError",
    "Real",
    "Scalar",
    "StructT",
    "Tan",
    "TraceError",
    "Vec",
    "VecT",
    "WasmCompileError",
    "WasmHostError",
    "WasmOutOfMemory",
    "WasmRangeError",
    "WasmTimeout",
    "WasmTrap",
    "and_",
    "associative",
    "binary",
    "compile",
    "cyclic_gc_paused",
    "eager",
    "eq",
    "floor_int",
    "fn",
    "fold",
    "interp",
    "has_near_rules",
    "interval",
    "jvp",
    "math",
    "neq",
    "not_",
    "opaque",
    "or_",
    "reduce",
    "scan",
    "segment_sum",
    "select",
    "sum",
    "to_real",
    "unary",
    "vec",
    "vjp",
]
