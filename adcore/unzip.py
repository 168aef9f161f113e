"""Unzipping: split a function with tangent parameters into a primal part and a linear part.

    f(x, dx) -> (y, dy)     becomes     fwd(x) -> (y, residuals)     lin(residuals, dx) -> dy

as in "You Only Linearize Once". Top-level primal work goes to `fwd` and is passed to `lin` as
residuals. Inside loops, `lin` recomputes the primal part of each iteration instead of storing it
(iterations are independent, so this costs one extra primal pass and no tape memory). A fold's
iterations depend on the carries before them, which an iteration cannot recompute: its primal loop
keeps, one per step, the carries the linear part reads (n values per carry, all of them rather than
checkpoints: a scalar carry of 100,000 steps is 0.8 MB, and recomputing from checkpoints would cost
another primal pass), and the linear fold reads them back. A call with tangent arguments is split
the same way, recursively, so the call graph is preserved.

Residuals stay bounded through calls. A callee's residuals become its caller's, so in a call DAG whose
functions call the level below twice they would double with every level (2^30 values at depth 30).
A top-level call whose callee leaves more than `RESIDUAL_LIMIT` residuals (and more than its primal
arguments) is checkpointed instead: the caller keeps only the primal arguments, and the linear part calls the
callee's `recompute` function, which reruns the callee's primal part before its linear part. Each
function is then at most `RESIDUAL_LIMIT` plus its own residuals wide, at the price of one extra
primal pass of such callees per derivative.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .dce import dce_eqns, dce_function
from .errors import LinearityError
from .ir import LOOPS, Atom, Block, Eqn, Function, Lit, Var, free_vars, loop_carries
from .linearity import Linearity, call_mask
from .types import VecT

RESIDUAL_LIMIT = 64  # residual leaves a call may hand to its caller before it is checkpointed


@dataclass(frozen=True)
class Unzipped:
    fwd: Function  # (primal params) -> (primal results, residuals)
    lin: Function  # (residuals, linear params) -> linear results
    out_mask: tuple[bool, ...]  # which results of the unzipped function are linear

    @property
    def n_residuals(self) -> int:
        return len(self.fwd.result_types) - self.out_mask.count(False)


def unzip_function(f: Function, mask: tuple[bool, ...]) -> Unzipped:
    key = ("unzip", mask)
    if key in f.cache:
        return f.cache[key]
    if f.body is None:
        raise LinearityError(f"opaque function {f.name} is called with tangent arguments")
    result = Unzipper(f, mask).run()
    f.cache[key] = result
    return result


class Unzipper:
    def __init__(self, f: Function, mask: tuple[bool, ...]):
        self.f = f
        self.mask = mask
        self.lin_info = Linearity(f, mask)

    def linear(self, a: Atom) -> bool:
        return self.lin_info.is_linear(a)

    def run(self) -> Unzipped:
        f = self.f
        assert f.body is not None
        fwd_eqns: list[Eqn] = []
        lin_eqns: list[Eqn] = []
        for e in f.body.eqns:
            if not self.lin_info.eqn_is_linear(e):
                fwd_eqns.append(e)
            else:
                primal, linear = self.split(e, top=True)
                fwd_eqns.extend(primal)
                lin_eqns.extend(linear)
        declared = f.linear_results if self.mask == f.linear_mask else None
        out_mask = declared or tuple(self.linear(r) for r in f.body.results)
        for k, (r, m) in enumerate(zip(f.body.results, out_mask)):
            if self.linear(r) and not m:
                raise LinearityError(f"in {f.name}: primal result {k} depends on a tangent")
        lin_params = [p for p, m in zip(f.body.params, self.mask) if m]
        lin_results = [r for r, m in zip(f.body.results, out_mask) if m]
        lin_block = Block(tuple(lin_params), tuple(lin_eqns), tuple(lin_results))
        residual_sources = [v for v in free_vars(lin_block) if v not in lin_params]
        residual_params = {v: Var(v.ty) for v in residual_sources}
        lin_body = substitute_block(
            Block((*residual_params.values(), *lin_params), lin_block.eqns, lin_block.results),
            residual_params,
        )
        lin = Function(f"{f.name}_lin", lin_body.params, tuple(a.ty for a in lin_body.results), lin_body)
        lin.linear_mask = (False,) * len(residual_params) + (True,) * len(lin_params)
        lin.linear_results = (True,) * len(lin_results)
        fwd_params = tuple(p for p, m in zip(f.body.params, self.mask) if not m)
        fwd_results = tuple(r for r, m in zip(f.body.results, out_mask) if not m) + tuple(residual_sources)
        fwd = Function(
            f"{f.name}_fwd",
            fwd_params,
            tuple(a.ty for a in fwd_results),
            Block(fwd_params, tuple(fwd_eqns), fwd_results),
        )
        return Unzipped(dce_function(fwd), dce_function(lin), out_mask)

    # -- one equation with something linear -> (primal equations, linear equations) --------------
    def split(self, e: Eqn, top: bool = False) -> tuple[list[Eqn], list[Eqn]]:
        """`top`: e is in the function's body, not in a loop (whose primal part the linear part
        recomputes, so the residuals of its calls never become the function's)."""
        if e.prim == "call":
            return self.split_call(e, top)
        if e.prim in LOOPS:
            return self.split_loop(e)
        return [], [e]

    def split_call(self, e: Eqn, top: bool) -> tuple[list[Eqn], list[Eqn]]:
        g: Function = e.params["fn"]
        mask = call_mask(g, [self.linear(a) for a in e.args], self.f.name)
        u = unzip_function(g, mask)
        residuals = [Var(t) for t in u.fwd.result_types[u.out_mask.count(False) :]]
        primal_outs = [o for o, m in zip(e.outs, u.out_mask) if not m]
        linear_outs = [o for o, m in zip(e.outs, u.out_mask) if m]
        primal_args = [a for a, m in zip(e.args, mask) if not m]
        linear_args = [a for a, m in zip(e.args, mask) if m]
        if top and u.n_residuals > RESIDUAL_LIMIT and u.n_residuals > len(primal_args):
            primal_only, recompute = checkpointed(g, mask, u)
            fwd_call = Eqn(tuple(primal_outs), "call", tuple(primal_args), {"fn": primal_only})
            lin_call = Eqn(tuple(linear_outs), "call", (*primal_args, *linear_args), {"fn": recompute})
            return [fwd_call], [lin_call]
        fwd_call = Eqn((*primal_outs, *residuals), "call", tuple(primal_args), {"fn": u.fwd})
        lin_call = Eqn(tuple(linear_outs), "call", (*residuals, *linear_args), {"fn": u.lin})
        return [fwd_call], [lin_call]

    def split_loop(self, e: Eqn) -> tuple[list[Eqn], list[Eqn]]:
        """A loop becomes a primal loop and a linear loop over the same indices (and count). The
        linear loop recomputes each iteration's primal work; a fold's primal carries, which an
        iteration cannot recompute, are kept by the primal loop, one array element per iteration,
        for those the linear part reads (n values per carry: the memory reverse mode costs)."""
        body: Block = e.params["body"]
        c = loop_carries(e)
        i, carries, refs = body.params[0], body.params[1 : 1 + c], body.params[1 + c :]
        inits, count = e.args[:c], e.args[c:]
        nexts, elems = body.results[:c], body.results[c:]
        n = e.params["n"]
        carry_lin = [self.linear(p) for p in carries]
        elem_lin = [self.linear(r) for r in elems]
        ref_lin = [self.linear(r) for r in refs]
        lin_results = tuple(r for r, m in zip(body.results, carry_lin + elem_lin) if m)
        l_eqns = self.linear_part(body.eqns)
        kept: list[Var] = []  # the primal carries the linear part reads
        if not all(carry_lin):
            live = {r for r in lin_results if isinstance(r, Var)}
            l_eqns = dce_eqns(tuple(l_eqns), live, accum_targets(l_eqns))
            read = set(free_vars(Block((), tuple(l_eqns), lin_results)))
            kept = [p for p, m in zip(carries, carry_lin) if not m and p in read]
        saved = [Var(VecT(n, p.ty)) for p in kept]
        finals, elem_outs, ref_outs = e.outs[:c], e.outs[c : len(body.results)], e.outs[len(body.results) :]
        primal: list[Eqn] = []
        if not all(carry_lin) or not all(elem_lin) or not all(ref_lin):
            p_body = Block(
                (i, *_unmarked(carries, carry_lin), *_unmarked(refs, ref_lin)),
                tuple(self.primal_part(body.eqns)),
                (*_unmarked(nexts, carry_lin), *_unmarked(elems, elem_lin), *kept),
            )
            outs = (*_unmarked(finals, carry_lin), *_unmarked(elem_outs, elem_lin), *saved)
            outs += _unmarked(ref_outs, ref_lin)
            args = (*_unmarked(inits, carry_lin), *count)
            p_carried = len(carries) - sum(carry_lin)
            primal.append(Eqn(outs, "fold" if p_carried else "for", args, {"n": n, "body": p_body}))
        loads = tuple(Eqn((p,), "index", (a, i)) for p, a in zip(kept, saved))
        l_body = Block(
            (i, *_marked(carries, carry_lin), *_marked(refs, ref_lin)), loads + tuple(l_eqns), lin_results
        )
        outs = (*_marked(finals, carry_lin), *_marked(elem_outs, elem_lin), *_marked(ref_outs, ref_lin))
        args = (*_marked(inits, carry_lin), *count)
        linear = [Eqn(outs, "fold" if any(carry_lin) else "for", args, {"n": n, "body": l_body})]
        return primal, linear

    def primal_part(self, eqns: tuple[Eqn, ...]) -> list[Eqn]:
        """The equations of a loop body that compute its primal values."""
        out: list[Eqn] = []
        for e in eqns:
            if not self.lin_info.eqn_is_linear(e):
                out.append(e)
            elif e.prim == "call" or e.prim in LOOPS:
                out.extend(self.split(e)[0])
        return out

    def linear_part(self, eqns: tuple[Eqn, ...]) -> list[Eqn]:
        """A loop body's linear equations, preceded by the primal work they need (recomputed)."""
        out: list[Eqn] = []
        for e in eqns:
            if not self.lin_info.eqn_is_linear(e):
                if e.prim != "accum":
                    out.append(e)
                continue
            primal, linear = self.split(e)
            out.extend(primal)
            out.extend(linear)
        return out


def _marked(xs: tuple[Atom, ...] | list[Any], mask: list[bool]) -> tuple[Any, ...]:
    return tuple(x for x, m in zip(xs, mask) if m)


def _unmarked(xs: tuple[Atom, ...] | list[Any], mask: list[bool]) -> tuple[Any, ...]:
    return tuple(x for x, m in zip(xs, mask) if not m)


def accum_targets(eqns: list[Eqn]) -> set[Var]:
    """The refs that `accum`s of these equations (and of their loop bodies) write into."""
    found: set[Var] = set()
    blocks = [eqns]
    while blocks:
        for e in blocks.pop():
            if e.prim == "accum":
                found.add(e.args[0])  # type: ignore[arg-type]  # accum's first argument: its ref, a Var
            elif e.prim in LOOPS:
                blocks.append(list(e.params["body"].eqns))
    return found


def checkpointed(g: Function, mask: tuple[bool, ...], u: Unzipped) -> tuple[Function, Function]:
    """g's primal part without residuals, and its linear part taking g's primal arguments instead of
    its residuals (it recomputes them): (primal params, linear params) -> linear results."""
    key = ("checkpoint", mask)
    found = g.cache.get(key)
    if found is not None:
        return found
    n_primal = u.out_mask.count(False)
    fwd_body = u.fwd.body
    assert fwd_body is not None
    primal_only = dce_function(
        Function(
            f"{g.name}_primal",
            u.fwd.params,
            u.fwd.result_types[:n_primal],
            Block(fwd_body.params, fwd_body.eqns, fwd_body.results[:n_primal]),
        )
    )
    xs = tuple(Var(p.ty) for p in u.fwd.params)
    dxs = tuple(Var(p.ty) for p in u.lin.params[u.n_residuals :])
    primal_outs = tuple(Var(t) for t in u.fwd.result_types[:n_primal])
    residuals = tuple(Var(t) for t in u.fwd.result_types[n_primal:])
    douts = tuple(Var(t) for t in u.lin.result_types)
    body = Block(
        (*xs, *dxs),
        (
            Eqn((*primal_outs, *residuals), "call", xs, {"fn": u.fwd}),
            Eqn(douts, "call", (*residuals, *dxs), {"fn": u.lin}),
        ),
        douts,
    )
    recompute = Function(f"{g.name}_recompute", body.params, u.lin.result_types, body)
    recompute.linear_mask = (False,) * len(xs) + (True,) * len(dxs)
    recompute.linear_results = (True,) * len(douts)
    found = g.cache[key] = (primal_only, recompute)
    return found


def substitute_block(block: Block, sub: dict[Var, Var]) -> Block:
    def atom(a: Atom) -> Atom:
        return sub.get(a, a) if isinstance(a, Var) else a

    eqns: list[Eqn] = []
    for e in block.eqns:
        params = e.params
        if e.prim in LOOPS:
            params = {**params, "body": substitute_block(params["body"], sub)}
        args = e.args
        for a in args:  # most equations read no substituted variable: keep those as they are
            if type(a) is Var and a in sub:
                args = tuple([atom(x) for x in args])
                break
        eqns.append(e if args is e.args and params is e.params else Eqn(e.outs, e.prim, args, params))
    return Block(block.params, tuple(eqns), tuple(atom(r) for r in block.results))


__all__ = ["Unzipped", "unzip_function", "Lit"]
