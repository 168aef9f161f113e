"""Dead code elimination, including unused loop results and accumulators.

Unzipping and transposing recompute and copy freely; this pass removes what nobody reads.
"""

from __future__ import annotations

from .ir import Block, Eqn, Function, Var, free_vars
from .typecheck import checked


def dce_function(f: Function) -> Function:
    if f.body is None:
        return f
    live = {r for r in f.body.results if isinstance(r, Var)}
    eqns = dce_eqns(f.body.eqns, live, set())
    g = Function(f.name, f.params, f.result_types, Block(f.body.params, tuple(eqns), f.body.results))
    g.linear_mask = f.linear_mask
    g.linear_results = f.linear_results
    g.signature = f.signature
    return checked(g)


def dce_eqns(eqns: tuple[Eqn, ...], live: set[Var], live_refs: set[Var]) -> list[Eqn]:
    kept: list[Eqn] = []
    mark = live.add
    for e in reversed(eqns):
        outs, prim = e.outs, e.prim
        if len(outs) == 1 and outs[0] not in live and prim != "for":  # most: one result, dead
            continue
        if prim == "for":
            loop = dce_loop(e, live, live_refs)
            if loop is not None:
                kept.append(loop)
                live.update(free_vars(loop.params["body"]))
                live.update(a for a in loop.args if a.__class__ is Var)  # its run-time count
        elif (e.args[0] in live_refs) if prim == "accum" else len(outs) == 1 or not live.isdisjoint(outs):
            kept.append(e)
            for a in e.args:  # a loop, not a comprehension: cheaper for the usual two operands
                if a.__class__ is Var:
                    mark(a)
    kept.reverse()
    return kept


def dce_loop(e: Eqn, live: set[Var], live_refs: set[Var]) -> Eqn | None:
    body: Block = e.params["body"]
    i, *refs = body.params
    n_elems = len(body.results)
    keep_elem = [o in live for o in e.outs[:n_elems]]
    keep_ref = [o in live for o in e.outs[n_elems:]]
    inner_refs = live_refs | {r for r, k in zip(refs, keep_ref) if k}
    results = tuple(r for r, k in zip(body.results, keep_elem) if k)
    inner_live = {r for r in results if isinstance(r, Var)}
    eqns = dce_eqns(body.eqns, inner_live, inner_refs)
    if not any(keep_elem) and not any(keep_ref) and not _writes_outer(eqns, live_refs):
        return None
    outs = tuple(o for o, k in zip(e.outs, keep_elem + keep_ref) if k)
    new_body = Block((i, *(r for r, k in zip(refs, keep_ref) if k)), tuple(eqns), results)
    return Eqn(outs, "for", e.args, {**e.params, "body": new_body})


def _writes_outer(eqns: list[Eqn], refs: set[Var]) -> bool:
    for e in eqns:
        if e.prim == "accum" and e.args[0] in refs:
            return True
        if e.prim == "for" and _writes_outer(list(e.params["body"].eqns), refs):
            return True
    return False
