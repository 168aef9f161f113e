"""Forward mode: each function f gets a function f' over primal and tangent leaves.

Calling convention (the same as a user's custom JVP over `Dual`s): every Real leaf parameter x is
followed by its tangent dx, and likewise for results. Tangents that are known to be zero are `None`
while transforming, so derivative code is only emitted for values that depend on the inputs' tangents.
Results are cached on the function, and callees are transformed once each: a tower of k functions
gives k derivative functions. A fold carries the tangents of the carries that need one (those whose
initial or next value has one, found by transforming its body until that set stops growing).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .builder import Builder
from .errors import AdcoreError
from .gc_pause import gc_paused
from .ir import Atom, Block, Eqn, Function, Lit, Var, loop_carries
from .types import Real, RefT, Type, accumulated, is_real_leaf

Tangent = Atom | None
Rule = Callable[["JvpState", Eqn, list[Atom], list[Tangent]], list[tuple[Atom, Tangent]]]


@gc_paused
def jvp_function(f: Function, wrt: tuple[bool, ...] | None = None) -> Function:
    """f' over (x, dx) pairs; with `wrt`, only the parameter leaves it marks get a tangent (the
    others are held constant), so no derivative work is spent on data such as index tables."""
    key = ("jvp", wrt)
    cached = f.cache.get(key)
    if cached is not None:
        return cached
    if f.custom_jvp is not None and wrt is None:
        f.cache[key] = f.custom_jvp
        return f.custom_jvp
    if f.body is None:
        raise AdcoreError(
            f"opaque function {f.name} is differentiated but has no custom jvp (set {f.name}.jvp)"
        )
    state = JvpState()
    params: list[Var] = []
    mask: list[bool] = []
    for k, p in enumerate(f.body.params):
        x = Var(p.ty)
        params.append(x)
        mask.append(False)
        tangent: Tangent = None
        if is_real_leaf(p.ty) and (wrt is None or wrt[k]):
            tangent = Var(p.ty)
            params.append(tangent)
            mask.append(True)
        state.primal[p], state.tangent[p] = x, tangent
    state.block(f.body)
    results: list[Atom] = []
    result_mask: list[bool] = []
    for r in f.body.results:
        results.append(state.p(r))
        result_mask.append(False)
        if is_real_leaf(r.ty):
            results.append(state.t_or_zero(r))
            result_mask.append(True)
    g = state.b.finish(f"{f.name}_jvp", params, results)
    g.linear_mask = tuple(mask)
    g.linear_results = tuple(result_mask)
    f.cache[key] = g
    return g


class _RealLeaves(dict):  # type -> whether values of that type carry tangents, memoized
    def __missing__(self, ty: Type) -> bool:
        self[ty] = value = is_real_leaf(ty) if not isinstance(ty, RefT) else False
        return value


_REAL_OUT = _RealLeaves()


class JvpState:
    def __init__(self) -> None:
        self.b = Builder()
        self.primal: dict[Var, Atom] = {}
        self.tangent: dict[Var, Tangent] = {}
        self.used_refs: set[Atom] = set()

    def p(self, a: Atom) -> Atom:
        return self.primal[a] if isinstance(a, Var) else a

    def t(self, a: Atom) -> Tangent:
        return self.tangent.get(a) if isinstance(a, Var) else None

    def t_or_zero(self, a: Atom) -> Atom:
        dt = self.t(a)
        return dt if dt is not None else self.b.zero(a.ty)

    def block(self, block: Block) -> None:
        primal, tangent = self.primal, self.tangent
        for e in block.eqns:
            args: list[Atom] = []
            tangents: list[Tangent] = []
            for a in e.args:  # a loop, not two comprehensions: each would cost a call
                if type(a) is Var:
                    args.append(primal[a])
                    tangents.append(tangent.get(a))
                else:
                    args.append(a)
                    tangents.append(None)
            prim = e.prim
            if prim in _STRUCTURED:
                pairs = _STRUCTURED[prim](self, e, args, tangents)
            elif tangents.count(None) == len(tangents) or not _REAL_OUT[e.outs[0].ty]:
                for o, out in zip(e.outs, self.b.record(prim, tuple(args), e.params)):  # no derivative
                    primal[o], tangent[o] = out, None
                continue
            else:
                pairs = JVP[prim](self, e, args, tangents)
            for o, (x, dx) in zip(e.outs, pairs):
                primal[o], tangent[o] = x, dx

    def call(self, e: Eqn, args: list[Atom], tangents: list[Tangent]) -> list[tuple[Atom, Tangent]]:
        f: Function = e.params["fn"]
        if all(dt is None for dt in tangents):
            return [(o, None) for o in self.b.call(f, args)]
        active = tuple(dt is not None or not is_real_leaf(a.ty) for a, dt in zip(e.args, tangents))
        # specialize the callee to the arguments that carry tangents (custom JVPs take them all)
        wrt = None if all(active) or f.custom_jvp is not None else active
        g = jvp_function(f, wrt)
        ins: list[Atom] = []
        for a, x, dx, on in zip(e.args, args, tangents, active):
            ins.append(x)
            if is_real_leaf(a.ty) and (wrt is None or on):
                ins.append(dx if dx is not None else self.b.zero(a.ty))
        outs = iter(self.b.call(g, ins))
        return [(next(outs), next(outs) if is_real_leaf(o.ty) else None) for o in e.outs]

    def loop(self, e: Eqn, args: list[Atom], tangents: list[Tangent]) -> list[tuple[Atom, Tangent]]:
        """A loop of the primal and tangent values: elements, accumulators and (a fold's) carries.
        A carry has a tangent if its initial value has one or if its next value gets one in the
        body; that set is found by transforming the body until it stops growing (the trial
        transformations are thrown away)."""
        c = loop_carries(e)
        carries = e.params["body"].params[1 : 1 + c]
        active = [j for j in range(c) if tangents[j] is not None and is_real_leaf(carries[j].ty)]
        while c:
            saved, self.b = self.b, Builder()
            try:
                next_tangents = self.loop_body(e, active)[1]
            finally:
                self.b = saved
            grown = sorted({*active, *(j for j, dt in enumerate(next_tangents) if dt is not None)})
            if grown == active:
                break
            active = grown
        body, _, delems, used = self.loop_body(e, active)
        d_inits = [dt if (dt := tangents[j]) is not None else self.b.zero(carries[j].ty) for j in active]
        # arguments: the initial carries and their tangents, then the count (if any)
        outs = iter(self.b.emit(e.prim, [*args[:c], *d_inits, *args[c:]], n=e.params["n"], body=body))
        finals = [next(outs) for _ in range(c)]
        d_finals = {j: next(outs) for j in active}
        elem_outs = [next(outs) for _ in delems]
        delem_outs = [next(outs) if d is not None else None for d in delems]
        refs = e.params["body"].params[1 + c :]
        acc_outs = [next(outs) for _ in refs]
        dacc = {r: next(outs) for r in used}
        return [
            *((x, d_finals.get(j)) for j, x in enumerate(finals)),
            *zip(elem_outs, delem_outs),
            *((a, dacc.get(r)) for a, r in zip(acc_outs, refs)),
        ]

    def loop_body(self, e: Eqn, active: list[int]) -> tuple[Block, list[Tangent], list[Tangent], list[Var]]:
        """The body of loop e's derivative, with tangents for the carries in `active`: (the block,
        the tangents of the next carries, those of the elements, the refs whose tangent refs the
        block accumulates into)."""
        body: Block = e.params["body"]
        c = loop_carries(e)
        i, carries, refs = body.params[0], body.params[1 : 1 + c], body.params[1 + c :]
        new_i = Var(i.ty)
        self.primal[i], self.tangent[i] = new_i, None
        xs = [Var(p.ty) for p in carries]
        dxs = {j: Var(carries[j].ty) for j in active}
        for j, (p, x) in enumerate(zip(carries, xs)):
            self.primal[p], self.tangent[p] = x, dxs.get(j)
        new_refs = [Var(r.ty) for r in refs]
        tan_refs = {r: Var(r.ty) for r in refs if is_real_leaf(accumulated(r.ty))}
        for r, nr in zip(refs, new_refs):
            self.primal[r], self.tangent[r] = nr, tan_refs.get(r)
        self.b.open_block()
        self.block(body)
        nexts, elems = body.results[:c], body.results[c:]
        next_tangents = [self.t(r) for r in nexts]
        results = [self.p(r) for r in nexts] + [self.t_or_zero(nexts[j]) for j in active]
        delems = [self.t(r) for r in elems]
        results += [self.p(r) for r in elems] + [d for d in delems if d is not None]
        used = [r for r in refs if r in tan_refs and tan_refs[r] in self.used_refs]
        eqns = self.b.close_block()
        params = (new_i, *xs, *(dxs[j] for j in active), *new_refs, *(tan_refs[r] for r in used))
        return Block(params, tuple(eqns), tuple(results)), next_tangents, delems, used

    def accum(self, e: Eqn, args: list[Atom], tangents: list[Tangent]) -> list[tuple[Atom, Tangent]]:
        ref, value, *idx = e.args
        self.b.emit("accum", args)
        dv = tangents[1]
        dref = self.tangent.get(ref)  # type: ignore[arg-type]  # accum's first argument: its ref, a Var
        if dv is not None and dref is not None:
            self.used_refs.add(dref)
            self.b.emit("accum", [dref, dv, *args[2:]])
        return []


_STRUCTURED: dict[str, Rule] = {
    "for": JvpState.loop,
    "fold": JvpState.loop,
    "accum": JvpState.accum,
    "call": JvpState.call,
}


# -- rules for scalar primitives: (state, eqn, primals, tangents) -> [(primal out, tangent out)] ---------


def _zeros_for(s: JvpState, args: Sequence[Atom], tangents: Sequence[Tangent]) -> list[Atom]:
    return [dt if dt is not None else s.b.zero(a.ty) for a, dt in zip(args, tangents)]


def _add_tangents(s: JvpState, *terms: Tangent) -> Tangent:
    live = [t for t in terms if t is not None]
    if not live:
        return None
    total = live[0]
    for t in live[1:]:
        total = s.b.add(total, t)
    return total


def _scale(s: JvpState, dx: Tangent, factor: Atom) -> Tangent:
    return None if dx is None else s.b.emit1("zmul", dx, factor)


def _add_sub(s: JvpState, e: Eqn, xs: list[Atom], dxs: list[Tangent]) -> list[tuple[Atom, Tangent]]:
    """d(a ± b) = da ± db, without materializing a zero tangent (the commonest rule, kept lean)."""
    b = s.b
    y = b.emit1(e.prim, xs[0], xs[1])
    da, db = dxs
    if db is None:
        return [(y, da)]
    if da is None:
        return [(y, db if e.prim == "add" else b.emit1("neg", db))]
    return [(y, b.emit1(e.prim, da, db))]


def _mul(s: JvpState, e: Eqn, xs: list[Atom], dxs: list[Tangent]) -> list[tuple[Atom, Tangent]]:
    """d(ab) = da b + a db, for mul and zmul (zmul(a, b) is a b except that a = 0 gives 0 whatever b
    is; its derivative follows the product rule the same way)."""
    (a, b), (da, db) = xs, dxs
    y = s.b.emit1(e.prim, a, b)
    return [(y, _add_tangents(s, _scale(s, da, b), _scale(s, db, a)))]


def _div(s: JvpState, e: Eqn, xs: list[Atom], dxs: list[Tangent]) -> list[tuple[Atom, Tangent]]:
    (a, b), (da, db) = xs, dxs
    y = s.b.emit1(e.prim, a, b)
    num = da
    if db is not None:
        scaled = s.b.emit1("zmul", db, y)
        num = s.b.emit1("neg", scaled) if da is None else s.b.emit1("sub", da, scaled)
    return [(y, s.b.emit1("zdiv", num, b))]  # type: ignore[arg-type]  # num: da or a sum, not None


def _neg(s: JvpState, e: Eqn, xs: list[Atom], dxs: list[Tangent]) -> list[tuple[Atom, Tangent]]:
    return [(s.b.emit1("neg", xs[0]), s.b.emit1("neg", dxs[0]))]  # type: ignore[arg-type]  # run: dxs[0] set


def _abs(s: JvpState, e: Eqn, xs: list[Atom], dxs: list[Tangent]) -> list[tuple[Atom, Tangent]]:
    sign = s.b.emit1("copysign", Lit(1.0, Real), xs[0])
    return [(s.b.emit1("abs", xs[0]), _scale(s, dxs[0], sign))]


def _sqrt(s: JvpState, e: Eqn, xs: list[Atom], dxs: list[Tangent]) -> list[tuple[Atom, Tangent]]:
    y = s.b.emit1("sqrt", xs[0])
    twice = s.b.emit1("mul", Lit(2.0, Real), y)
    return [(y, s.b.emit1("zdiv", dxs[0], twice))]  # type: ignore[arg-type]  # run: dxs[0] set


def _minmax(s: JvpState, e: Eqn, xs: list[Atom], dxs: list[Tangent]) -> list[tuple[Atom, Tangent]]:
    a, b = xs
    y = s.b.emit1(e.prim, a, b)
    first = s.b.emit1("lt" if e.prim == "min" else "gt", a, b)
    da, db = _zeros_for(s, xs, dxs)
    return [(y, s.b.emit1("select", first, da, db))]


def _copysign(s: JvpState, e: Eqn, xs: list[Atom], dxs: list[Tangent]) -> list[tuple[Atom, Tangent]]:
    a, b = xs
    y = s.b.emit1("copysign", a, b)
    ratio = s.b.emit1(
        "mul", s.b.emit1("copysign", Lit(1.0, Real), a), s.b.emit1("copysign", Lit(1.0, Real), b)
    )
    return [(y, _scale(s, dxs[0], ratio))]


def _constant(s: JvpState, e: Eqn, xs: list[Atom], dxs: list[Tangent]) -> list[tuple[Atom, Tangent]]:
    return [(o, None) for o in s.b.emit(e.prim, xs, **e.params)]


def _select(s: JvpState, e: Eqn, xs: list[Atom], dxs: list[Tangent]) -> list[tuple[Atom, Tangent]]:
    c, a, b = xs
    y = s.b.emit1("select", c, a, b)
    if dxs[1] is None and dxs[2] is None:
        return [(y, None)]
    da, db = _zeros_for(s, xs[1:], dxs[1:])
    return [(y, s.b.emit1("select", c, da, db))]


def _vec(s: JvpState, e: Eqn, xs: list[Atom], dxs: list[Tangent]) -> list[tuple[Atom, Tangent]]:
    (y,) = s.b.emit("vec", xs, **e.params)
    return [(y, s.b.emit("vec", _zeros_for(s, xs, dxs), **e.params)[0])]


def _index(s: JvpState, e: Eqn, xs: list[Atom], dxs: list[Tangent]) -> list[tuple[Atom, Tangent]]:
    arr, i = xs
    y = s.b.emit1("index", arr, i)
    return [(y, None if dxs[0] is None else s.b.emit1("index", dxs[0], i))]


JVP: dict[str, Rule] = {
    "add": _add_sub,
    "sub": _add_sub,
    "mul": _mul,
    "zmul": _mul,
    "div": _div,
    "zdiv": _div,
    "neg": _neg,
    "abs": _abs,
    "sqrt": _sqrt,
    "min": _minmax,
    "max": _minmax,
    "copysign": _copysign,
    "select": _select,
    "vec": _vec,
    "index": _index,
    **{p: _constant for p in ("floor", "ceil", "trunc", "i2f", "zeros")},
}

__all__ = ["JVP", "jvp_function", "RefT", "Type"]
