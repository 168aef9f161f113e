"""A type checker over the IR.

Emission already types every instruction (`Builder.record`), so checking is for tests and debugging:
with `CHECK_TYPES` on (the environment variable ADCORE_CHECK_TYPES=1, or the tests' conftest) every
function the builder finishes and every function dead-code elimination rebuilds (the last step of
unzipping, transposing and simplifying) goes through `check_function`.
"""

from __future__ import annotations

import os

from .errors import AdcoreTypeError
from .ir import LOOPS, Block, Function, Var
from .prims import result_types
from .types import RefT

CHECK_TYPES = os.environ.get("ADCORE_CHECK_TYPES", "") not in ("", "0")


def checked(f: Function) -> Function:
    """f, type-checked first when `CHECK_TYPES` is on."""
    if CHECK_TYPES:
        check_function(f)
    return f


def check_function(f: Function) -> None:
    if f.body is None:
        return
    if tuple(p.ty for p in f.params) != tuple(p.ty for p in f.body.params):
        raise AdcoreTypeError(f"{f.name}: parameters differ from its body's parameters")
    scope: set[Var] = set()
    _check_block(f, f.body, scope)
    got = tuple(a.ty for a in f.body.results)
    if got != f.result_types:
        raise AdcoreTypeError(f"{f.name}: returns {got}, declared {f.result_types}")


def _check_block(f: Function, block: Block, scope: set[Var]) -> None:
    local = set(scope)
    for p in block.params:
        _define(f, p, local)
    for e in block.eqns:
        for a in e.args:
            if isinstance(a, Var) and a not in local:
                raise AdcoreTypeError(f"{f.name}: {a!r} used out of scope in {e.prim}")
        if any(isinstance(a.ty, RefT) for a in e.args[1 if e.prim == "accum" else 0 :]):
            raise AdcoreTypeError(f"{f.name}: a reference can only be the target of accum")
        want = result_types(e.prim, [a.ty for a in e.args], e.params)
        if tuple(o.ty for o in e.outs) != want:
            raise AdcoreTypeError(
                f"{f.name}: {e.prim} produces {want}, outputs typed {[o.ty for o in e.outs]}"
            )
        if e.prim in LOOPS:
            _check_block(f, e.params["body"], local)
        for o in e.outs:
            _define(f, o, local)
    for r in block.results:
        if isinstance(r, Var) and r not in local:
            raise AdcoreTypeError(f"{f.name}: result {r!r} out of scope")


def _define(f: Function, v: Var, scope: set[Var]) -> None:
    if v in scope:
        raise AdcoreTypeError(f"{f.name}: {v!r} defined twice")
    scope.add(v)
