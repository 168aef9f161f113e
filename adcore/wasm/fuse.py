"""Loop fusion: consecutive passes over the same index range become one pass.

Reverse mode leaves a gradient as a chain of loops over each table: the forward pass stores values,
a second loop sums penalties, a third forms cotangents, a fourth adds incoming cotangents, a fifth
scatters into the gradient. Each reads the arrays the previous one wrote, element by element. Fused,
they become one loop whose body keeps those elements in locals (the arrays nobody else reads
disappear), and common-subexpression elimination then shares the recomputed gathers and square roots.

`fuse_program` walks the call graph once, before code generation:
- a function with a loop that is called from exactly one place, outside any loop, is inlined there
  (code does not grow), so the loops of a derivative's forward and transposed halves meet in one
  block;
- `fuse_block` merges a loop into an earlier loop over the same range when everything it reads is
  either available before that loop or an element of that loop's results at the same index
  (`own_index_sums_as_elements` first turns transposed elementwise scatters back into elements).
Semantics are unchanged up to the order of floating-point sums.
"""

from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Callable

from ..ir import LOOPS, Atom, Block, Eqn, Function, Var, call_graph, free_vars, has_loop
from ..types import VecT, accumulated
from .simplify import rename_block, simplify_function


def fuse_program(f: Function) -> Function:
    """f (already simplified) with single-use looping callees inlined and loops fused, everywhere."""
    graph = call_graph(f)
    if not any(map(has_loop, graph)):  # loops nest only in loops: nothing to inline or fuse
        return f
    calls = Counter(id(e.params["fn"]) for g in graph if g.body for e in _calls(g.body))
    done: dict[int, Function] = {}

    def visit(g: Function) -> Function:
        if g.body is None or id(g) in done:
            return done.get(id(g), g)
        eqns: list[Eqn] = []
        inlined = False
        sub: dict[Var, Atom] = {}  # an inlined call's results, read from the callee's variables
        for e in g.body.eqns:
            if sub:
                e = _substitute(e, sub)
            callee = e.params.get("fn") if e.prim == "call" else None
            if callee is not None and callee.body is not None and calls[id(callee)] == 1 and has_loop(callee):
                body = visit(callee).body
                assert body is not None
                eqns.extend(_bind(body, e.args, e.outs, sub))
                inlined = True
            else:
                eqns.append(_with_callees(e, visit))
        fused = fuse_block(eqns)
        if len(fused) == len(g.body.eqns) and all(map(operator.is_, fused, g.body.eqns)):
            done[id(g)] = g  # unchanged: keep the function itself, so no caller sees two copies
            return g
        results = tuple(sub.get(r, r) if isinstance(r, Var) else r for r in g.body.results)
        h = Function(g.name, g.params, g.result_types, Block(g.body.params, tuple(fused), results))
        h.signature, h.custom_jvp, h.linear_mask = g.signature, g.custom_jvp, g.linear_mask
        if inlined or len(fused) != len(eqns) or not all(map(operator.is_, fused, eqns)):
            # CSE shares what fusion brought together
            h = simplify_function(h)
        h.cache["simplified"] = h  # its callers' simplification must not redo it
        done[id(g)] = h
        return h

    return visit(f)


def _with_callees(e: Eqn, visit: Callable[[Function], Function]) -> Eqn:
    """e calling the transformed callees, also inside its loop bodies (e itself if none changed)."""
    if e.prim == "call":
        callee = visit(e.params["fn"])
        return e if callee is e.params["fn"] else Eqn(e.outs, "call", e.args, {**e.params, "fn": callee})
    if e.prim not in LOOPS:
        return e
    b: Block = e.params["body"]
    eqns = [x if x.prim != "call" and x.prim not in LOOPS else _with_callees(x, visit) for x in b.eqns]
    if all(map(operator.is_, eqns, b.eqns)):
        return e
    return Eqn(e.outs, e.prim, e.args, {**e.params, "body": Block(b.params, tuple(eqns), b.results)})


def _calls(b: Block) -> list[Eqn]:
    """The call equations of a block and of the loop bodies inside it."""
    found: list[Eqn] = []
    blocks = [b]
    while blocks:
        for e in blocks.pop().eqns:
            if e.prim == "call":
                found.append(e)
            elif e.prim in LOOPS:
                blocks.append(e.params["body"])
    return found


def _bind(body: Block, args: tuple[Atom, ...], outs: tuple[Var, ...], sub: dict[Var, Atom]) -> list[Eqn]:
    """A callee's body in its caller, with fresh variables (derivative halves share variable names
    across functions); the call's outputs become the callee's results through `sub`."""
    block = rename_block(body, dict(zip(body.params, args)), fresh_params=False)
    sub.update(zip(outs, block.results))
    return list(block.eqns)


def _substitute(e: Eqn, sub: dict[Var, Atom]) -> Eqn:
    args = tuple(sub.get(a, a) if isinstance(a, Var) else a for a in e.args)
    if e.prim not in LOOPS:
        return Eqn(e.outs, e.prim, args, e.params)
    b: Block = e.params["body"]
    body = Block(
        b.params,
        tuple(_substitute(x, sub) for x in b.eqns),
        tuple(sub.get(r, r) if isinstance(r, Var) else r for r in b.results),
    )
    return Eqn(e.outs, e.prim, args, {**e.params, "body": body})


class _Reads:
    """Free variables of equations, memoized: legality checks ask for them many times."""

    def __init__(self) -> None:
        self.known: dict[int, tuple[Eqn, set[Var]]] = {}  # keeps each eqn alive, so ids stay unique

    def __call__(self, e: Eqn) -> set[Var]:
        found = self.known.get(id(e))
        if found is None:
            reads = {a for a in e.args if isinstance(a, Var)}  # (a loop's: its count, initial carries)
            if e.prim in LOOPS:
                reads.update(free_vars(e.params["body"]))
            found = self.known[id(e)] = (e, reads)
        return found[1]

    def merged(self, fused: Eqn, early: Eqn, late: Eqn) -> None:
        elems = set(early.outs)
        self.known[id(fused)] = (fused, self(early) | (self(late) - elems))


def fuse_block(eqns: list[Eqn]) -> list[Eqn]:
    out: list[Eqn] = []
    reads = _Reads()
    loops = Counter[tuple[object, ...]]()  # loops in `out` by range: most have no earlier partner
    for e in eqns:
        if e.prim == "for":
            e = own_index_sums_as_elements(e)
            r = _range(e)
            if loops[r] and _fuse_into_earlier(out, e, reads, loops[r]):
                continue
            loops[r] += 1
        out.append(e)
    return out


def _range(e: Eqn) -> tuple[object, ...]:
    """The indices a loop runs over: its static n and its run-time count (the same variable), if any."""
    return (e.params["n"], *e.args)


def own_index_sums_as_elements(loop: Eqn) -> Eqn:
    """A loop that accumulates into an array only at its own index (`accum(acc, v, i)`, once per
    iteration, as transposed elementwise code does) computes that array element by element: make it
    an element result, which later loops can read without the array."""
    body: Block = loop.params["body"]
    i, *refs = body.params
    n = loop.params["n"]
    value: dict[Atom, Atom | None] = {}  # ref -> the value accumulated at the loop's index (None: other)
    nested = {a for e in body.eqns if e.prim in LOOPS for a in free_vars(e.params["body"])}
    for e in body.eqns:
        if e.prim == "accum" and e.args[0] in refs and len(e.args) == 3:
            value[e.args[0]] = e.args[1] if e.args[2] is i and e.args[0] not in value else None
    own: dict[Var, Atom] = {}  # ref -> its element value, in the order of refs
    for r in refs:
        v = value.get(r)
        # (accumulated at an index: an array)
        if v is not None and r not in nested and isinstance(t := accumulated(r.ty), VecT) and t.n == n:
            own[r] = v
    if not own:
        return loop
    n_elems = len(body.results)
    totals = dict(zip(refs, loop.outs[n_elems:]))
    kept = [r for r in refs if r not in own]
    eqns = tuple(e for e in body.eqns if not (e.prim == "accum" and e.args[0] in own))
    new_body = Block((i, *kept), eqns, body.results + tuple(own.values()))
    outs = loop.outs[:n_elems] + tuple(totals[r] for r in own) + tuple(totals[r] for r in kept)
    return Eqn(outs, "for", loop.args, {**loop.params, "body": new_body})


def _fuse_into_earlier(out: list[Eqn], late: Eqn, reads: _Reads, candidates: int) -> bool:
    """Merge `late` into the nearest earlier loop over the same range where that is legal.

    One backward walk: the equations `late` needs (transitively) are collected on the way, to be
    moved before the loop it joins. Joining `early` is legal when none of them reads `early`'s
    results (they were needed closed under dependence, so none depends on `early` through another)
    and `late` reads only `early`'s elements, at its own index (checked by `_merge`)."""
    own = reads(late)
    needed = set(own)  # what `late` and the equations moved with it read
    moved_reads: set[Var] = set()  # what the equations moved with it read
    moved: list[Eqn] = []
    for p in range(len(out) - 1, -1, -1):
        x = out[p]
        if x.prim == "for" and _range(x) == _range(late):
            candidates -= 1
            totals = x.outs[len(x.params["body"].results) :]
            fused = _merge(x, late) if moved_reads.isdisjoint(x.outs) and own.isdisjoint(totals) else None
            if fused is not None:
                reads.merged(fused, x, late)
                moved.reverse()
                moved_ids = {id(m) for m in moved}
                out[p:] = [*moved, fused, *(m for m in out[p + 1 :] if id(m) not in moved_ids)]
                return True
            if not candidates:
                return False
        if not needed.isdisjoint(x.outs):
            moved.append(x)
            r = reads(x)
            needed |= r
            moved_reads |= r
    return False


def _merge(early: Eqn, late: Eqn) -> Eqn | None:
    """One loop running both bodies; `late`'s reads of `early`'s elements at its own index become the
    values `early`'s body computes. None if `late` reads those elements any other way."""
    b1: Block = early.params["body"]
    b2: Block = late.params["body"]
    i1, i2 = b1.params[0], b2.params[0]
    element = dict(zip(early.outs[: len(b1.results)], b1.results))
    sub: dict[Var, Atom] = {i2: i1}
    eqns = _take_elements(b2, element, i2, sub)
    if eqns is None:
        return None
    n1, n2 = len(b1.results), len(b2.results)
    body = Block(
        (i1, *b1.params[1:], *b2.params[1:]),
        b1.eqns + eqns,
        b1.results + tuple(sub.get(r, r) if isinstance(r, Var) else r for r in b2.results),
    )
    outs = early.outs[:n1] + late.outs[:n2] + early.outs[n1:] + late.outs[n2:]
    return Eqn(outs, "for", early.args, {**early.params, "body": body})


def _take_elements(
    b: Block, element: dict[Var, Atom], i2: Var, sub: dict[Var, Atom]
) -> tuple[Eqn, ...] | None:
    """b's equations with `index(a, i2)` of an early array `a` replaced by its element (via `sub`)."""
    eqns: list[Eqn] = []
    for e in b.eqns:
        if e.prim == "index" and e.args[0] in element and e.args[1] is i2:
            sub[e.outs[0]] = element[e.args[0]]
            continue
        if any(a in element for a in e.args):
            return None
        if e.prim in LOOPS:
            inner: Block = e.params["body"]
            inner_eqns = _take_elements(inner, element, i2, sub)
            if inner_eqns is None or any(r in element for r in inner.results):
                return None
            inner = Block(
                inner.params,
                inner_eqns,
                tuple(sub.get(r, r) if isinstance(r, Var) else r for r in inner.results),
            )
            args = tuple(sub.get(a, a) if isinstance(a, Var) else a for a in e.args)
            eqns.append(Eqn(e.outs, e.prim, args, {**e.params, "body": inner}))
            continue
        eqns.append(_substitute(e, sub))
    if any(r in element for r in b.results):
        return None
    return tuple(eqns)
