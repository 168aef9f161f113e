"""Which values of a function depend on its tangent ("linear") parameters.

Linearity is decided per IR variable by dependence; types do not need to say it. That is what keeps
the IR closed under nesting: the tangents of an inner derivative are ordinary Reals to an outer one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeGuard

from .errors import LinearityError
from .ir import LOOPS, Atom, Block, Eqn, Function, Var, loop_carries

# Primitives that may take tangents, and which argument positions may be tangents.
LINEAR_POSITIONS: dict[str, tuple[int, ...]] = {
    "add": (0, 1),
    "sub": (0, 1),
    "neg": (0,),
    "mul": (0, 1),
    "zmul": (0, 1),
    "div": (0,),
    "zdiv": (0,),
    "select": (1, 2),
    "vec": (),  # any position
    "index": (0,),
    "accum": (0, 1),
}


def call_mask(g: Function, arg_linear: Sequence[bool], caller: str) -> tuple[bool, ...]:
    """The linear parameters a call uses: the callee's own tangent positions when it has them."""
    if g.linear_mask is not None:
        if any(a and not m for a, m in zip(arg_linear, g.linear_mask)):
            k = next(j for j, (a, m) in enumerate(zip(arg_linear, g.linear_mask)) if a and not m)
            raise LinearityError(
                f"in {caller}: a tangent is passed to parameter {k} of {g.name}, which is not a tangent"
            )
        return g.linear_mask
    return tuple(arg_linear)


def call_out_mask(g: Function, mask: tuple[bool, ...]) -> tuple[bool, ...]:
    """Which results of g are linear when the parameters `mask` marks are (memoized per mask)."""
    if g.linear_results is not None and mask == g.linear_mask:
        return g.linear_results
    key = ("out_mask", mask)
    found = g.cache.get(key)
    if found is None:
        if g.body is None:
            raise LinearityError(f"opaque function {g.name} is called with tangent arguments")
        info = Linearity(g, mask)
        found = g.cache[key] = tuple(info.is_linear(r) for r in g.body.results)
    return found


class Linearity:
    """The set of linear variables (and accumulator references) of one function."""

    def __init__(self, f: Function, mask: Sequence[bool]):
        assert f.body is not None
        self.f = f
        self.linear: set[Var] = {p for p, m in zip(f.body.params, mask) if m}
        self.linear_eqns: set[int] = set()  # ids of equations that read or make a linear value
        self.block(f.body)

    def is_linear(self, a: Atom) -> TypeGuard[Var]:
        return a in self.linear if type(a) is Var else False

    def eqn_is_linear(self, e: Eqn) -> bool:
        return id(e) in self.linear_eqns

    def loop_touches_linear(self, body: Block) -> bool:
        return any(id(e) in self.linear_eqns for e in body.eqns)

    def block(self, block: Block) -> bool:
        """Analyze a block; whether any of its equations is linear."""
        touched = False
        linear = self.linear
        for e in block.eqns:
            for a in e.args:
                if type(a) is Var and a in linear:
                    break
            else:
                if e.prim != "for" and e.prim != "call" and e.prim != "fold":
                    continue  # primal work (most of it): reads no tangent, so makes none
            lin_args = [a in linear if type(a) is Var else False for a in e.args]
            self.equation(e, lin_args)
            if (
                True in lin_args
                or any(o in linear for o in e.outs)
                or (e.prim in LOOPS and self.loop_touches_linear(e.params["body"]))
            ):
                self.linear_eqns.add(id(e))
                touched = True
        return touched

    def equation(self, e: Eqn, lin_args: list[bool]) -> None:
        """Propagate linearity through one equation; refuse nonlinear uses of tangents."""
        if e.prim in LOOPS:
            body: Block = e.params["body"]
            c = loop_carries(e)
            carries, refs = body.params[1 : 1 + c], body.params[1 + c :]
            # a carry is linear if its initial value is, or (until nothing changes) its next value
            self.linear.update(p for p, m in zip(carries, lin_args) if m)
            while True:
                self.block(body)
                grown = [
                    p for p, r in zip(carries, body.results) if p not in self.linear and self.is_linear(r)
                ]
                if not grown:
                    break
                self.linear.update(grown)
            flags = [p in self.linear for p in carries]
            flags += [self.is_linear(r) for r in body.results[c:]] + [r in self.linear for r in refs]
            self.linear.update(o for o, m in zip(e.outs, flags) if m)
        elif e.prim == "call":
            if any(lin_args):
                g = e.params["fn"]
                mask = call_mask(g, lin_args, self.f.name)
                self.linear.update(o for o, m in zip(e.outs, call_out_mask(g, mask)) if m)
        elif True in lin_args:
            if len(lin_args) <= 4:  # scalar primitives: a few patterns, each checked once
                key: tuple[str | bool, ...] = (e.prim, *lin_args)
                why = _NOT_LINEAR.get(key, "")
                if why == "":
                    why = _NOT_LINEAR[key] = _why_not_linear(e.prim, lin_args)
            else:
                why = _why_not_linear(e.prim, lin_args)
            if why is not None:
                raise LinearityError(f"in {self.f.name}: {why}")
            if e.prim == "accum":
                self.linear.add(e.args[0])  # type: ignore[arg-type]  # accum's first argument: its ref, a Var
            else:
                self.linear.update(e.outs)


def _why_not_linear(prim: str, lin_args: list[bool]) -> str | None:
    """Why prim applied to tangents in the positions `lin_args` marks is not linear (None if it is)."""
    allowed = LINEAR_POSITIONS.get(prim)
    if prim in ("mul", "zmul") and all(lin_args):
        return "a product of two tangents is not linear"
    if allowed is None or (allowed and any(m and k not in allowed for k, m in enumerate(lin_args))):
        return (
            f"{prim} applied to a tangent; a derivative must be linear in its tangents (a custom jvp "
            "may only add, subtract, negate, select tangents and scale them by primal values)"
        )
    return None


_NOT_LINEAR: dict[tuple[str | bool, ...], str | None] = {}  # (prim, *linear args) -> _why_not_linear
