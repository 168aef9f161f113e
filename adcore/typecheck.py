"""A type checker over the IR: every transformation's output goes through it in the tests."""

from __future__ import annotations

from .errors import AdcoreTypeError
from .ir import Block, Function, Lit, Var
from .prims import result_types
from .types import RefT


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
            if isinstance(a, RefT):
                raise AdcoreTypeError(f"{f.name}: a type is not a value")
        if any(isinstance(a.ty, RefT) for a in e.args[1 if e.prim == "accum" else 0 :]):
            raise AdcoreTypeError(f"{f.name}: a reference can only be the target of accum")
        want = result_types(e.prim, [a.ty for a in e.args], e.params)
        if tuple(o.ty for o in e.outs) != want:
            raise AdcoreTypeError(
                f"{f.name}: {e.prim} produces {want}, outputs typed {[o.ty for o in e.outs]}"
            )
        if e.prim == "for":
            _check_block(f, e.params["body"], local)
        for o in e.outs:
            _define(f, o, local)
    for r in block.results:
        if isinstance(r, Var) and r not in local:
            raise AdcoreTypeError(f"{f.name}: result {r!r} out of scope")
        if isinstance(r, Lit) or isinstance(r.ty, RefT):
            continue


def _define(f: Function, v: Var, scope: set[Var]) -> None:
    if v in scope:
        raise AdcoreTypeError(f"{f.name}: {v!r} defined twice")
    scope.add(v)
