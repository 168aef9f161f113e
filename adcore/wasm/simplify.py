"""Simplification before code generation: inline small callees in loops, unroll tiny loops, forward
array literals, remove dead code.

Derivative code is made of many small functions (one per primitive rule, per kind, per shape); in a
loop over a goal table each call costs more than its body, and each small array passed through
memory costs loads and stores. These passes make a loop body straight-line scalar code:

- a call to a function of at most `INLINE_LIMIT` equations (with no loop of its own) made inside a
  loop body is replaced by the callee's body; calls outside loops stay calls, so the call graph of
  the program survives into Wasm (Rose's tower compiles to one Wasm function per adcore function);
- a loop of at most `UNROLL_LIMIT` iterations is unrolled;
- both under a budget on the size they produce, accumulated through nesting (`inlined_size`: a
  callee inlined k times counts k times, with its own inlined callees and unrolled loops): a call
  whose callee would expand to more than `INLINE_BUDGET` equations stays a call, and a loop whose
  unrolled copies would exceed `UNROLL_BUDGET` stays a loop. Without it a call DAG (each level
  calling the one below twice) or a nest of small loops would grow exponentially; with it compiled
  size stays linear in the size of the program;
- `index(vec(a, b, ...), k)` with a literal k becomes the element itself.
Semantics are unchanged (the interpreter gives identical results before and after).

A function without loops is left as it is (only its calls are redirected to simplified callees):
the builder numbered its values and forwarded its array literals as they were emitted, and the code
generator drops dead code in the same pass that allocates and emits.
"""

from __future__ import annotations

from typing import Any

from ..builder import fold, in_scope, literal_key
from ..dce import dce_function
from ..gc_pause import gc_paused
from ..ir import LOOPS, Atom, Block, Eqn, Function, Lit, Var, callees, has_loop
from ..prims import PURE
from ..types import Int, Real, RefT, VecT

INLINE_LIMIT = 400  # own equations of a callee inlined into loop bodies (a goal kind's distance function)
INLINE_BUDGET = 4000  # equations a callee may expand to, its own inlined callees included
UNROLL_LIMIT = 8  # iterations of a loop unrolled
UNROLL_BUDGET = 4096  # equations an unrolled loop may expand to, nested unrolling included


@gc_paused  # its value-numbering tables hold a tuple per instruction
def simplify_program(f: Function) -> Function:
    """f with every function it calls simplified (memoized on each function)."""
    cached = f.cache.get("simplified")
    if cached is not None:
        return cached
    if f.body is None:
        return f
    g = simplify_function(f)
    f.cache["simplified"] = g
    return g


def simplify_function(f: Function) -> Function:
    """f's own body simplified (its callees are simplified on the way, memoized)."""
    assert f.body is not None
    if not has_loop(f):
        return _with_simplified_callees(f)
    body = Simplifier(f).block(f.body, in_loop=False)
    g = Function(f.name, f.params, f.result_types, body, signature=f.signature)
    g.custom_jvp = f.custom_jvp
    g = dce_function(g)
    g.cache["simplified"] = g
    return g


def _with_simplified_callees(f: Function) -> Function:
    """Straight-line code is left as it is: the builder already numbered its values and folded its
    constants, and the code generator removes dead code as it goes. Only its calls change, to the
    simplified callees."""
    assert f.body is not None
    new = {id(g): simplify_program(g) for g in callees(f)}
    if all(h is g for g, h in zip(callees(f), new.values())):
        return f
    eqns = tuple(
        Eqn(e.outs, "call", e.args, {"fn": new[id(e.params["fn"])]}) if e.prim == "call" else e
        for e in f.body.eqns
    )
    g = Function(
        f.name, f.params, f.result_types, Block(f.body.params, eqns, f.body.results), signature=f.signature
    )
    g.custom_jvp = f.custom_jvp
    return g


def _inlinable(f: Function) -> bool:
    return (
        f.body is not None
        and len(f.body.eqns) <= INLINE_LIMIT
        and not has_loop(f)
        and inlined_size(f) <= INLINE_BUDGET
    )


def inlined_size(f: Function) -> int:
    """Equations f's body expands to when its inlinable callees are inlined and its small loops
    unrolled (memoized: functions are immutable)."""
    size = f.cache.get("inlined_size")
    if size is None:
        size = f.cache["inlined_size"] = block_size(f.body) if f.body is not None else 1
    return size


def block_size(b: Block) -> int:
    """Equations b expands to under simplification (see `inlined_size`)."""
    total = 0
    for e in b.eqns:
        if e.prim == "call":
            g = e.params["fn"]
            total += inlined_size(g) if _inlinable(g) else 1
        elif e.prim == "for":
            inner = block_size(e.params["body"])
            total += e.params["n"] * inner if _unrollable(e, inner) else 1 + inner
        elif e.prim == "fold":  # never unrolled
            total += 1 + block_size(e.params["body"])
        else:
            total += 1
    return total


def _unrollable(e: Eqn, body_size: int) -> bool:
    """Whether loop e, whose body expands to `body_size` equations, is unrolled."""
    body: Block = e.params["body"]
    n = e.params["n"]
    return (
        n <= UNROLL_LIMIT
        and not e.args  # a loop whose count is known at run time only stays a loop
        and n * body_size <= UNROLL_BUDGET
        and not any(isinstance(p.ty, RefT) and not _scalar_ref(p) for p in body.params[1:])
    )


class Simplifier:
    def __init__(self, f: Function):
        self.f = f
        self.sub: dict[Var, Atom] = {}
        self.vec_lits: dict[Var, tuple[Atom, ...]] = {}
        self.known: list[dict[tuple[Any, ...], Var]] = []  # value numbering, one scope per block

    def atom(self, a: Atom) -> Atom:
        while isinstance(a, Var) and a in self.sub:
            a = self.sub[a]
        return a

    def block(self, b: Block, in_loop: bool) -> Block:
        out: list[Eqn] = []
        self.known.append({})  # values computed in this block are not visible after it
        for e in b.eqns:
            self.eqn(e, in_loop, out)
        self.known.pop()
        return Block(b.params, tuple(out), tuple(self.atom(r) for r in b.results))

    def reuse(self, key: tuple[Any, ...], out: Var) -> bool:
        """Common subexpressions: a pure scalar instruction already computed in scope is reused.
        `key` is the primitive and its operands (a literal as its value, type and sign: 0.0 == -0.0)."""
        found = in_scope(self.known, key)
        if found is not None:
            self.sub[out] = found
            return True
        self.known[-1][key] = out
        return False

    def eqn(self, e: Eqn, in_loop: bool, out: list[Eqn]) -> None:
        # One lookup resolves a variable: what `sub` maps to is itself resolved when it is stored
        get = self.sub.get
        args = e.args
        unchanged = False  # then e itself is kept: no new equation to make
        if len(args) == 2:  # spelled out: a comprehension costs a call, more than the work here
            x, y = args
            x2 = x if type(x) is Lit else get(x, x)
            y2 = y if type(y) is Lit else get(y, y)
            unchanged = x2 is x and y2 is y
            args = (x2, y2)
        else:
            args = tuple([a if type(a) is Lit else get(a, a) for a in args])
        prim = e.prim
        if prim in PURE:  # most instructions: fold, reuse, or keep
            if prim == "index" and type(args[1]) is Lit and args[0] in self.vec_lits:
                self.sub[e.outs[0]] = self.vec_lits[args[0]][int(args[1].val)]
                return
            key: tuple[Any, ...] = (prim, *args)  # variables hash by identity, quickly
            for a in args:
                if type(a) is Lit:  # every folding rule needs a literal operand
                    folded = fold(prim, args)
                    if folded is not None:
                        self.sub[e.outs[0]] = folded
                        return
                    key = (prim, *[x if type(x) is Var else literal_key(x) for x in args])
                    break
            if not self.reuse(key, e.outs[0]):
                out.append(e if unchanged else Eqn(e.outs, prim, args, e.params))
            return
        if prim == "call":
            callee: Function = e.params["fn"]
            if in_loop and _inlinable(callee):
                self.inline(callee, args, e.outs, out)
                return
            out.append(Eqn(e.outs, "call", args, {"fn": simplify_program(callee)}))
            return
        if e.prim == "for":
            body: Block = e.params["body"]
            if e.params["n"] <= UNROLL_LIMIT and _unrollable(e, block_size(body)):
                self.unroll(e, out)
                return
            out.append(Eqn(e.outs, "for", args, {**e.params, "body": self.block(body, in_loop=True)}))
            return
        if e.prim == "fold":
            body = self.block(e.params["body"], in_loop=True)
            out.append(Eqn(e.outs, "fold", args, {**e.params, "body": body}))
            return
        new = e if unchanged else Eqn(e.outs, e.prim, args, e.params)
        if e.prim == "vec":
            self.vec_lits[e.outs[0]] = args
        out.append(new)

    def inline(self, callee: Function, args: tuple[Atom, ...], outs: tuple[Var, ...], out: list[Eqn]) -> None:
        assert callee.body is not None
        body = simplify_program(callee).body
        assert body is not None
        rename: dict[Var, Atom] = dict(zip(body.params, args))
        for e in body.eqns:
            new_outs = tuple(Var(o.ty) for o in e.outs)
            rename.update(zip(e.outs, new_outs))
            copied = Eqn(
                new_outs,
                e.prim,
                tuple(rename.get(a, a) if isinstance(a, Var) else a for a in e.args),
                e.params,
            )
            self.eqn(copied, True, out)
        for o, r in zip(outs, body.results):
            self.sub[o] = self.atom(rename.get(r, r) if isinstance(r, Var) else r)

    def unroll(self, e: Eqn, out: list[Eqn]) -> None:
        """for i < n (n small): the body n times with i a literal; scalar accumulators become sums."""
        body: Block = e.params["body"]
        i, *refs = body.params
        n = e.params["n"]
        totals: dict[Var, list[Atom]] = {r: [] for r in refs}
        columns: list[list[Atom]] = [[] for _ in body.results]
        for k in range(n):
            rename: dict[Var, Atom] = {i: Lit(k, Int)}
            for be in body.eqns:
                args = tuple(rename.get(a, a) if isinstance(a, Var) else a for a in be.args)
                if be.prim == "accum" and args[0] in totals:
                    totals[args[0]].append(self.atom(args[1]))
                    continue
                new_outs = tuple(Var(o.ty) for o in be.outs)
                rename.update(zip(be.outs, new_outs))
                params = be.params
                if be.prim in LOOPS:
                    params = {**params, "body": rename_block(params["body"], rename)}
                self.eqn(Eqn(new_outs, be.prim, args, params), True, out)
            for col, r in zip(columns, body.results):
                col.append(self.atom(rename.get(r, r) if isinstance(r, Var) else r))
        n_elems = len(body.results)
        for o, col, r in zip(e.outs[:n_elems], columns, body.results):
            self.eqn(Eqn((o,), "vec", tuple(col), {"elem": r.ty}), True, out)
        for o, ref in zip(e.outs[n_elems:], refs):
            self.sub[o] = self.sum(totals[ref], o, out)

    def sum(self, atoms: list[Atom], like: Var, out: list[Eqn]) -> Atom:
        ty = like.ty
        if not atoms:
            if not isinstance(ty, VecT):
                return Lit(0.0, ty) if ty == Real else Lit(0, ty)  # type: ignore[arg-type]  # a leaf, not an array: a Scalar
            zero = Var(ty)
            out.append(Eqn((zero,), "zeros", (), {"ty": ty}))
            return zero
        total = atoms[0]
        for a in atoms[1:]:
            v = Var(ty)
            out.append(Eqn((v,), "add", (total, a)))
            total = v
        return total


def _scalar_ref(p: Var) -> bool:
    return isinstance(p.ty, RefT) and not isinstance(p.ty.of, VecT)


def rename_block(b: Block, rename: dict[Var, Atom], *, fresh_params: bool = True) -> Block:
    """A copy of b whose own variables are fresh (a nested loop body copied for one unrolled
    iteration, an inlined function body whose parameters `rename` binds to arguments)."""
    return _renamed(b, dict(rename), fresh_params)


def _renamed(b: Block, local: dict[Var, Atom], fresh_params: bool) -> Block:
    # one mapping for all nesting levels: variables are defined once, so scopes never clash
    params = tuple(Var(p.ty) for p in b.params) if fresh_params else b.params
    if fresh_params:
        local.update(zip(b.params, params))
    get = local.get
    eqns = []
    for e in b.eqns:
        outs = tuple(Var(o.ty) for o in e.outs)
        local.update(zip(e.outs, outs))
        p = e.params
        if e.prim in LOOPS:
            p = {**p, "body": _renamed(p["body"], local, True)}
        eqns.append(Eqn(outs, e.prim, tuple(get(a, a) if isinstance(a, Var) else a for a in e.args), p))
    return Block(params, tuple(eqns), tuple(get(r, r) if isinstance(r, Var) else r for r in b.results))
