"""Transposition: a function linear in some parameters becomes its adjoint.

    lin(r, dx) -> dy      becomes      bwd(r, ct_dy) -> ct_dx

Primal equations (those not reading a tangent) are copied first; then the linear equations are
visited in reverse, each sending its output's cotangent to its linear inputs. A value used k times
receives k contributions, summed once when read. Inside a loop, contributions to values defined
outside the loop are accumulated into references (`accum`), so a gather `x[i]` transposes into a
scatter-add and a sum into a broadcast. A linear fold becomes a fold that runs backwards over the
same iterations (k-1 down to 0), carrying the cotangents of its carries.

NaN safety: every scaling of a cotangent uses `zmul`/`zdiv` (0 * anything = 0), so a branch that
`select` did not take passes back exactly zero even where its primal value is inf or NaN.
A backward fold's scalar cotangent carries are flushed to zero below the smallest normal number
(`flush_subnormal`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, final

from .builder import Builder
from .dce import dce_function
from .errors import LinearityError
from .ir import LOOPS, Atom, Block, Eqn, Function, Lit, Var, free_vars, loop_carries, loop_count
from .linearity import Linearity, call_mask
from .types import Int, Real, RefT, Scalar, Type, VecT


@final  # no subclasses: code tests `type(c) is OneHot`
@dataclass(frozen=True)
class OneHot:
    """A cotangent that is zero except for `value` at position `idx` of an array."""

    idx: tuple[Atom, ...]
    value: Atom


Contribution = Atom | OneHot


def transpose_function(f: Function, zero: tuple[bool, ...] | None = None) -> Function:
    """f's adjoint: (f's primal params, a cotangent per result) -> a cotangent per linear param.
    `zero` marks results whose cotangent is structurally zero: they get no parameter, and nothing
    flows back from them (no work over them, where a zero array passed in would be read)."""
    key = ("transpose", zero if zero is not None and any(zero) else None)
    cached = f.cache.get(key)
    if cached is not None:
        return cached
    assert f.body is not None and f.linear_mask is not None, f"{f.name} is not a linear function"
    t = Transposer(f, key[1])
    result = dce_function(t.run())
    f.cache[key] = result
    return result


class Transposer:
    def __init__(self, f: Function, zero: tuple[bool, ...] | None = None):
        self.f = f
        self.zero = zero  # results whose cotangent is structurally zero (`transpose_function`)
        self.b = Builder()
        mask = f.linear_mask
        assert mask is not None, f"{f.name} is not a linear function"
        self.info = Linearity(f, mask)
        self.ct: dict[Var, list[Contribution]] = {}
        self.ref_ct: dict[Var, Atom | None] = {}
        self.acc_for: dict[Var, Var] = {}  # captured linear value -> accumulator of its cotangent

    def run(self) -> Function:
        f = self.f
        assert f.body is not None and f.linear_mask is not None
        primal_params = [p for p, m in zip(f.body.params, f.linear_mask) if not m]
        linear_params = [p for p, m in zip(f.body.params, f.linear_mask) if m]
        live = [r for k, r in enumerate(f.body.results) if self.zero is None or not self.zero[k]]
        ct_params = [Var(r.ty) for r in live]
        for r, c in zip(live, ct_params):
            self.contribute(r, c)
        self.block(f.body.eqns)
        results = [self.read(p) for p in linear_params]
        params = (*primal_params, *ct_params)
        return self.b.finish(f"{f.name}_T", params, results, [p.ty for p in linear_params])

    # -- cotangent bookkeeping ------------------------------------------------------------------
    def contribute(self, a: Atom, c: Contribution) -> None:
        if self.info.is_linear(a):
            self.ct.setdefault(a, []).append(c)

    def read(self, v: Var) -> Atom:
        """The total cotangent of v (zero if nothing flowed back)."""
        return materialize(self.b, v.ty, self.ct.pop(v, []))

    def has_ct(self, v: Var) -> bool:
        return bool(self.ct.get(v))

    # -- blocks ------------------------------------------------------------------------------------
    def block(self, eqns: tuple[Eqn, ...]) -> None:
        linear = []
        for e in eqns:
            if self.info.eqn_is_linear(e):
                linear.append(e)
            else:
                self.b.blocks[-1].append(e)  # primal work is copied as it is
        for e in reversed(linear):
            if e.prim in LOOPS:
                self.loop(e)
            elif e.prim == "accum":
                self.accum(e)
            elif e.prim == "call":
                self.call(e)
            else:
                if not self.has_ct(e.outs[0]):
                    continue
                if e.prim in ("vec", "index"):
                    TRANSPOSE[e.prim](self, e, self.ct.pop(e.outs[0]))
                else:
                    TRANSPOSE[e.prim](self, e, self.read(e.outs[0]))

    def call(self, e: Eqn) -> None:
        if not any(self.has_ct(o) for o in e.outs):
            return
        g: Function = e.params["fn"]
        mask = call_mask(g, [self.info.is_linear(a) for a in e.args], self.f.name)
        gt = transpose_function(g) if g.linear_mask == mask else _not_linear(g, self.f)
        args = [a for a, m in zip(e.args, mask) if not m] + [self.read(o) for o in e.outs]
        for a, c in zip([a for a, m in zip(e.args, mask) if m], self.b.call(gt, args)):
            self.contribute(a, c)

    def accum(self, e: Eqn) -> None:
        ref, value, *idx = e.args
        target = self.ref_ct.get(ref)  # type: ignore[arg-type]  # accum's first argument: its ref, a Var
        if target is None:
            return
        for i in idx:
            target = self.b.emit1("index", target, i)
        self.contribute(value, target)

    def loop(self, e: Eqn) -> None:
        """A linear loop runs again over the same indices (a fold backwards, k-1 down to 0, carrying
        the cotangents of its carries); cotangents of values captured from outside are accumulated
        into refs, those of its elements are read at each index."""
        body: Block = e.params["body"]
        c = loop_carries(e)
        i, carries, refs = body.params[0], body.params[1 : 1 + c], body.params[1 + c :]
        n_results = len(body.results)
        if any(not self.info.is_linear(p) for p in carries):
            raise LinearityError(f"in {self.f.name}: a fold carries primal values through linear code")
        finals_ct = [self.read(o) for o in e.outs[:c]]  # (zero where nothing flowed back)
        elem_ct = [self.read(o) if self.has_ct(o) else None for o in e.outs[c:n_results]]
        ref_ct = {r: (self.read(o) if self.has_ct(o) else None) for r, o in zip(refs, e.outs[n_results:])}
        captured = [v for v in free_vars(body) if self.info.is_linear(v) and not isinstance(v.ty, RefT)]
        # a value captured from outside an enclosing loop too already has that loop's accumulator:
        # add into it directly, so a gather x[idx] in a nested loop scatters in O(1), not O(len x)
        own = [v for v in captured if v not in self.acc_for]
        saved_ct, saved_refs, saved_acc = self.ct, dict(self.ref_ct), dict(self.acc_for)
        self.ref_ct.update(ref_ct)
        count = loop_count(e)
        ct_carries = [Var(p.ty) for p in carries]
        # iteration j of the backward fold is iteration i = k - 1 - j of the fold
        last = (
            self.b.emit1("sub", count, Lit(1, Int))
            if c and count is not None
            else Lit(e.params["n"] - 1, Int)
        )

        def transposed_body(j: Var, acc_refs: Sequence[Var]) -> list[Atom]:
            self.ct = {}
            self.acc_for.update(zip(own, acc_refs))
            if c:
                self.b.blocks[-1].append(Eqn((i,), "sub", (last, j)))
                for res, carry_ct in zip(body.results, ct_carries):
                    self.contribute(res, carry_ct)
            self.block_with_seeds(body, i, c, elem_ct)
            next_ct = [flush_subnormal(self.b, self.read(p)) for p in carries]
            for v in captured:
                acc = self.acc_for[v]
                for ct in self.ct.pop(v, []):
                    if isinstance(ct, OneHot):
                        self.b.emit("accum", (acc, ct.value, *ct.idx))
                    else:
                        self.b.emit("accum", (acc, ct))
            return next_ct

        if c:
            outs = self.b.fold(
                e.params["n"], finals_ct, ct_carries, transposed_body, [v.ty for v in own], count
            )
        else:  # the same iterations, so a counted loop's transpose runs over the same count
            outs = self.b.loop(e.params["n"], transposed_body, [v.ty for v in own], index=i, count=count)
        self.ct, self.ref_ct, self.acc_for = saved_ct, saved_refs, saved_acc
        for a, ct in zip(e.args[:c], outs[:c]):
            self.contribute(a, ct)
        for v, total in zip(own, outs[c:]):
            self.contribute(v, total)

    def block_with_seeds(self, body: Block, i: Var, c: int, elem_ct: list[Atom | None]) -> None:
        for r, ct in zip(body.results[c:], elem_ct):
            if ct is not None:
                self.contribute(r, self.b.emit1("index", ct, i))
        self.block(body.eqns)


SMALLEST_NORMAL = 2.2250738585072014e-308


def flush_subnormal(b: Builder, ct: Atom) -> Atom:
    """A scalar cotangent a backward fold carries, zero where it is subnormal (|ct| < 2^-1022).

    Through a contracting loop the cotangent shrinks step by step into subnormal numbers, and the
    smallest of them times a factor above 1/2 stays itself: every later step would run on
    subnormals, each operation tens of times slower (Wasm has no flush-to-zero mode; XLA's CPU
    code sets one). Zeroing the carry changes the derivative by less than 2^-1022 per step."""
    if ct.ty != Real or type(ct) is Lit:
        return ct
    tiny = b.emit1("lt", b.emit1("abs", ct), Lit(SMALLEST_NORMAL, Real))
    return b.emit1("select", tiny, Lit(0.0, Real), ct)


def _not_linear(g: Function, f: Function) -> Function:
    raise LinearityError(f"in {f.name}: {g.name} is called with tangents in positions it is not linear in")


# -- materializing cotangents -----------------------------------------------------------------------


def materialize(b: Builder, ty: Type, contributions: list[Contribution]) -> Atom:
    if len(contributions) == 1 and type(contributions[0]) is not OneHot:
        return contributions[0]  # the usual case: one use, nothing to add
    full = [c for c in contributions if not isinstance(c, OneHot)]
    hots = [c for c in contributions if isinstance(c, OneHot)]
    if hots and isinstance(ty, VecT) and ty.n <= SMALL and _literal_paths(hots):
        elems = [element(b, ty, contributions, k) for k in range(ty.n)]
        return b.emit("vec", elems, elem=ty.elem)[0]
    total = b.sum(full, ty) if full else None
    if hots:

        def scatter(_: Var, refs: Sequence[Var]) -> list[Atom]:
            for h in hots:
                b.emit("accum", (refs[0], h.value, *h.idx))
            return []

        (scattered,) = b.loop(1, scatter, [ty])
        total = scattered if total is None else b.vadd(total, scattered)
    return total if total is not None else b.zero(ty)


SMALL = 16  # arrays up to this size get cotangents built element by element, without a loop


def _literal_paths(hots: list[OneHot]) -> bool:
    return all(len(h.idx) == 1 and isinstance(h.idx[0], Lit) for h in hots)


def element(b: Builder, ty: VecT, contributions: list[Contribution], k: int) -> Atom:
    """Cotangent of element k, without building the whole array when the pieces are one-hots."""
    if _literal_paths([c for c in contributions if isinstance(c, OneHot)]):
        parts = [
            b.emit1("index", c, Lit(k, Int)) if not isinstance(c, OneHot) else c.value
            for c in contributions
            if not isinstance(c, OneHot) or c.idx[0].val == k  # type: ignore[union-attr]  # a Lit: _literal_paths
        ]
        return b.sum(parts, ty.elem)
    return b.emit1("index", materialize(b, ty, contributions), Lit(k, Int))


# -- rules: (transposer, eqn, cotangent of the output) ---------------------------------------------


def _t_add(t: Transposer, e: Eqn, ct: Atom) -> None:
    for a in e.args:
        t.contribute(a, ct)


def _t_sub(t: Transposer, e: Eqn, ct: Atom) -> None:
    a, b = e.args
    t.contribute(a, ct)
    if t.info.is_linear(b):
        t.contribute(b, t.b.emit1("neg", ct))


def _t_neg(t: Transposer, e: Eqn, ct: Atom) -> None:
    t.contribute(e.args[0], t.b.emit1("neg", ct))


def _t_mul(t: Transposer, e: Eqn, ct: Atom) -> None:
    a, b = e.args
    lin, other = (a, b) if t.info.is_linear(a) else (b, a)
    t.contribute(lin, t.b.emit1("zmul", ct, other))


def _t_div(t: Transposer, e: Eqn, ct: Atom) -> None:
    t.contribute(e.args[0], t.b.emit1("zdiv", ct, e.args[1]))


def _t_select(t: Transposer, e: Eqn, ct: Atom) -> None:
    c, a, b = e.args
    zero = Lit(0.0, Real) if isinstance(ct.ty, Scalar) else t.b.zero(ct.ty)
    if t.info.is_linear(a):
        t.contribute(a, t.b.emit1("select", c, ct, zero))
    if t.info.is_linear(b):
        t.contribute(b, t.b.emit1("select", c, zero, ct))


def _t_vec(t: Transposer, e: Eqn, cts: list[Contribution]) -> None:
    ty = e.outs[0].ty
    assert isinstance(ty, VecT)
    for k, a in enumerate(e.args):
        if t.info.is_linear(a):
            t.contribute(a, element(t.b, ty, cts, k))


def _t_index(t: Transposer, e: Eqn, cts: list[Contribution]) -> None:
    arr, i = e.args
    for c in cts:  # paths compose: (arr[i])[j] = v is arr[i, j] = v
        if isinstance(c, OneHot):
            t.contribute(arr, OneHot((i, *c.idx), c.value))
        else:
            t.contribute(arr, OneHot((i,), c))


# the third argument: the output's cotangent (an Atom), for vec and index its contributions
TRANSPOSE: dict[str, Callable[[Transposer, Eqn, Any], None]] = {
    "add": _t_add,
    "sub": _t_sub,
    "neg": _t_neg,
    "mul": _t_mul,
    "zmul": _t_mul,
    "div": _t_div,
    "zdiv": _t_div,
    "select": _t_select,
    "vec": _t_vec,
    "index": _t_index,
}

__all__ = ["TRANSPOSE", "transpose_function"]
