"""adcore: a small language for differentiable scalar programs, in the style of Rose.

    f = fn([Vec2], Real, lambda v: am.pow(v[0], v[1]))
    g = fn([Vec2], Vec2, lambda v: vjp(f)(v).grad(1.0))
    interp(g)([2.0, 3.0])

Functions are traced once into an IR (adcore.ir); forward mode (adcore.jvp), unzipping
(adcore.unzip) and transposition (adcore.transpose) are IR-to-IR transformations, so derivatives
of derivatives work. `interp` runs the IR in Python; `compile` runs it as WebAssembly.
"""

from . import math
from .api import Fn, and_, eq, fn, jvp, neq, not_, opaque, or_, select, sum, to_real, vec, vjp
from .errors import AdcoreError, AdcoreTypeError, DomainError, LinearityError, TraceError, WasmCompileError
from .interpreter import interp
from .types import Bool, Dual, Int, Real, Tan, Vec


def compile(f: Fn, **options: object):  # noqa: A001 - the language's name
    """A Python callable running `f` as WebAssembly (same values in and out as `interp`)."""
    from .wasm.compiled import compile_fn

    return compile_fn(f, **options)


__all__ = [
    "AdcoreError",
    "AdcoreTypeError",
    "Bool",
    "DomainError",
    "Dual",
    "Fn",
    "Int",
    "LinearityError",
    "Real",
    "Tan",
    "TraceError",
    "Vec",
    "WasmCompileError",
    "and_",
    "compile",
    "eq",
    "fn",
    "interp",
    "jvp",
    "math",
    "neq",
    "not_",
    "opaque",
    "or_",
    "select",
    "sum",
    "to_real",
    "vec",
    "vjp",
]
