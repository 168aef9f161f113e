"""Dead code elimination, including unused loop results and accumulators.

Unzipping and transposing recompute and copy freely; this pass removes what nobody reads.
"""

from __future__ import annotations

from .ir import LOOPS, Block, Eqn, Function, Var, free_vars, loop_carries
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
        loop = prim == "for" or prim == "fold"
        if len(outs) == 1 and outs[0] not in live and not loop:  # most: one result, dead
            continue
        if loop:
            new = dce_loop(e, live, live_refs)
            if new is not None:
                kept.append(new)
                live.update(free_vars(new.params["body"]))
                live.update(a for a in new.args if type(a) is Var)  # its initial carries and count
        elif (e.args[0] in live_refs) if prim == "accum" else len(outs) == 1 or not live.isdisjoint(outs):
            kept.append(e)
            for a in e.args:  # a loop, not a comprehension: cheaper for the usual two operands
                if type(a) is Var:
                    mark(a)
    kept.reverse()
    return kept


def dce_loop(e: Eqn, live: set[Var], live_refs: set[Var]) -> Eqn | None:
    """The loop without its dead elements, refs and (a fold's) carries: a carry is live if its
    final value is, or if the body reads it to compute something live (until that set stops growing)."""
    body: Block = e.params["body"]
    c = loop_carries(e)
    i, carries, refs = body.params[0], body.params[1 : 1 + c], body.params[1 + c :]
    n_results = len(body.results)
    keep_carry = [o in live for o in e.outs[:c]]
    keep_elem = [o in live for o in e.outs[c:n_results]]
    keep_ref = [o in live for o in e.outs[n_results:]]
    inner_refs = live_refs | {r for r, k in zip(refs, keep_ref) if k}
    while True:
        results = tuple(r for r, k in zip(body.results, keep_carry + keep_elem) if k)
        eqns = dce_eqns(body.eqns, {r for r in results if isinstance(r, Var)}, inner_refs)
        if not c:
            break
        read = set(free_vars(Block((), tuple(eqns), results)))
        grown = [k or p in read for p, k in zip(carries, keep_carry)]
        if grown == keep_carry:
            break
        keep_carry = grown
    if not any(keep_carry + keep_elem + keep_ref) and not _writes_outer(eqns, live_refs):
        return None
    outs = tuple(o for o, k in zip(e.outs, keep_carry + keep_elem + keep_ref) if k)
    kept_carries = tuple(p for p, k in zip(carries, keep_carry) if k)
    args = (*(a for a, k in zip(e.args, keep_carry) if k), *e.args[c:])
    new_body = Block((i, *kept_carries, *(r for r, k in zip(refs, keep_ref) if k)), tuple(eqns), results)
    prim = "fold" if kept_carries else "for"
    return Eqn(outs, prim, args, {**e.params, "body": new_body})


def _writes_outer(eqns: list[Eqn], refs: set[Var]) -> bool:
    for e in eqns:
        if e.prim == "accum" and e.args[0] in refs:
            return True
        if e.prim in LOOPS and _writes_outer(list(e.params["body"].eqns), refs):
            return True
    return False
