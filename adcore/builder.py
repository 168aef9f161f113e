"""Emitting IR: the one piece of state every transformation shares.

A `Builder` appends equations to the innermost open block. Transformations (jvp, unzip, transpose)
and the tracer all go through it, so typing happens at emission and constant folding of the trivial
cases (x + 0, x * 1, zero tangents) happens in one place.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from .ir import Atom, Block, Eqn, Function, Lit, Var
from .prims import PURE, result_types
from .typecheck import checked
from .types import Bool, Int, Real, RefT, Scalar, Type, VecT

_TYPED: dict[tuple[Any, ...], tuple[Type, ...]] = {}  # (prim, *argument types) -> result types


def is_lit(a: Atom, val: float | None = None) -> bool:
    return isinstance(a, Lit) and (val is None or a.val == val)


class Builder:
    def __init__(self) -> None:
        self.blocks: list[list[Eqn]] = [[]]
        # value numbering: a pure instruction already emitted in an open block is not emitted again
        self.known: list[dict[tuple[Any, ...], Var]] = [{}]
        self.vec_parts: dict[Var, tuple[Atom, ...]] = {}  # an array literal's elements

    def open_block(self) -> None:
        self.blocks.append([])
        self.known.append({})

    def close_block(self) -> list[Eqn]:
        self.known.pop()
        return self.blocks.pop()

    # -- emission -------------------------------------------------------------------------------
    def emit(self, prim: str, args: Sequence[Atom], **params: Any) -> tuple[Var, ...]:
        return self.record(prim, tuple(args), params)

    def emit1(self, prim: str, *args: Atom, **params: Any) -> Atom:
        for a in args:  # identities need a literal operand; most instructions have none
            if type(a) is Lit:
                parts = self.vec_parts.get(args[0]) if prim == "index" else None  # type: ignore[arg-type]  # a Lit: None
                if parts is not None and 0 <= a.val < len(parts):  # vec(a, b, ...)[k] is the element
                    return parts[int(a.val)]
                folded = fold(prim, args)
                if folded is not None:
                    return folded
                break
        return self.record(prim, args, params)[0]

    def record(self, prim: str, args: tuple[Atom, ...], params: dict[str, Any]) -> tuple[Var, ...]:
        """Type `prim(args; params)`, append it to the open block and return its fresh outputs (or the
        outputs of the same pure instruction emitted before, in scope)."""
        number: tuple[Any, ...] | None = None
        out_types: tuple[Type, ...] | None
        if prim in PURE and not params:
            if len(args) == 2:
                x, y = args
                number = (
                    prim,
                    x if type(x) is Var else literal_key(x),
                    y if type(y) is Var else literal_key(y),
                )
            else:
                number = (prim, *[a if type(a) is Var else literal_key(a) for a in args])
            found = in_scope(self.known, number)
            if found is not None:
                return (found,)
        if params:
            out_types = result_types(prim, [a.ty for a in args], params)
        else:  # most instructions: a scalar primitive, typed once per signature
            # spelled out for two operands: a comprehension costs a call
            key: tuple[Any, ...] = (
                (prim, args[0].ty, args[1].ty) if len(args) == 2 else (prim, *[a.ty for a in args])
            )
            out_types = _TYPED.get(key)
            if out_types is None:
                out_types = _TYPED[key] = result_types(prim, key[1:], params)
        outs = (Var(out_types[0]),) if len(out_types) == 1 else tuple([Var(t) for t in out_types])
        self.blocks[-1].append(Eqn(outs, prim, args, params))
        if number is not None:
            self.known[-1][number] = outs[0]
        elif prim == "vec":
            self.vec_parts[outs[0]] = args
        return outs

    def call(self, f: Function, args: Sequence[Atom]) -> tuple[Var, ...]:
        return self.emit("call", args, fn=f)

    def loop(
        self,
        n: int,
        body: Callable[[Var, Sequence[Var]], Sequence[Atom]],
        acc_types: Sequence[Type] = (),
        index: Var | None = None,
        count: Atom | None = None,
    ) -> tuple[Var, ...]:
        """A `for` over 0..n-1 (0..count-1 with a run-time `count`): `body(i, refs)` emits into a fresh
        block and returns its element results."""
        i = index if index is not None else Var(Int)
        refs = tuple(Var(RefT(t)) for t in acc_types)
        self.open_block()
        results = tuple(body(i, refs))
        eqns = self.close_block()
        args = () if count is None else (count,)
        return self.emit("for", args, n=n, body=Block((i, *refs), tuple(eqns), results))

    def fold(
        self,
        n: int,
        inits: Sequence[Atom],
        carries: Sequence[Var],
        body: Callable[[Var, Sequence[Var]], Sequence[Atom]],
        acc_types: Sequence[Type] = (),
        count: Atom | None = None,
    ) -> tuple[Var, ...]:
        """A `fold` over 0..n-1 (0..count-1) carrying `carries` from `inits`: `body(i, refs)` emits
        into a fresh block and returns the next carried values (then its element results)."""
        i = Var(Int)
        refs = tuple(Var(RefT(t)) for t in acc_types)
        self.open_block()
        results = tuple(body(i, refs))
        eqns = self.close_block()
        args = (*inits, *(() if count is None else (count,)))
        return self.emit("fold", args, n=n, body=Block((i, *carries, *refs), tuple(eqns), results))

    def finish(
        self,
        name: str,
        params: Sequence[Var],
        results: Sequence[Atom],
        result_types: Sequence[Type] | None = None,
        signature: tuple[tuple[Type, ...], Type] | None = None,
    ) -> Function:
        """The function of what was emitted (type-checked when `typecheck.CHECK_TYPES` is on)."""
        assert len(self.blocks) == 1, "unclosed loop body"
        types = tuple(a.ty for a in results) if result_types is None else tuple(result_types)
        body = Block(tuple(params), tuple(self.blocks[0]), tuple(results))
        return checked(Function(name, tuple(params), types, body, signature=signature))

    # -- small helpers ------------------------------------------------------------------------------
    def add(self, a: Atom, b: Atom) -> Atom:
        return self.emit1("add", a, b)

    def sum(self, atoms: Sequence[Atom], ty: Type) -> Atom:
        """Sum of contributions of one type; arrays are added elementwise by a loop."""
        if not atoms:
            return self.zero(ty)
        total = atoms[0]
        for a in atoms[1:]:
            total = self.add(total, a) if isinstance(ty, Scalar) else self.vadd(total, a)
        return total

    def vadd(self, a: Atom, b: Atom) -> Atom:
        ty = a.ty
        assert isinstance(ty, VecT)

        def body(i: Var, refs: Sequence[Var]) -> list[Atom]:
            x, y = self.emit1("index", a, i), self.emit1("index", b, i)
            return [self.add(x, y) if isinstance(ty.elem, Scalar) else self.vadd(x, y)]

        return self.loop(ty.n, body)[0]

    def zero(self, ty: Type) -> Atom:
        if ty == Real:
            return Lit(0.0, Real)
        if ty == Int:
            return Lit(0, Int)
        if ty == Bool:
            return Lit(False, Bool)
        return self.emit("zeros", (), ty=ty)[0]


def literal_key(a: Lit) -> tuple[Any, ...]:
    """A literal in a value-numbering key: 0.0 == -0.0 as values, but they are different constants."""
    return (a.val, a.ty.name, math.copysign(1.0, a.val) if a.ty is Real else 0)


def in_scope(known: list[dict[tuple[Any, ...], Var]], key: tuple[Any, ...]) -> Var | None:
    """The value numbered `key` in the innermost scope that has one (scopes are the open blocks,
    outermost first: a loop body sees what was computed around it, not the reverse)."""
    found = known[-1].get(key)
    if found is None and len(known) > 1:
        for scope in known[-2::-1]:
            found = scope.get(key)
            if found is not None:
                break
    return found


def fold(prim: str, args: Sequence[Atom]) -> Atom | None:
    """Algebraic identities that keep derivative code small; exact in IEEE arithmetic where it matters
    (x + 0 -> x is exact for x != -0, which only changes the sign of a zero)."""
    for a in args:
        if type(a) is Lit:
            break
    else:
        return None  # every rule below needs a literal operand (asked for every instruction)
    if prim == "index":
        return None  # the commonest with a literal (a constant position): arrays are never literals
    if prim == "add" and len(args) == 2:
        a, b = args
        if is_lit(a, 0) and a.ty == b.ty:
            return b
        if is_lit(b, 0) and a.ty == b.ty:
            return a
    if prim == "sub" and is_lit(args[1], 0):
        return args[0]
    if prim in ("zmul", "zdiv") and (is_lit(args[0], 0)):
        return args[0]
    if prim in ("mul", "zmul") and is_lit(args[1], 1):
        return args[0]
    if prim in ("mul", "zmul") and is_lit(args[0], 1):
        return args[1]
    if prim in ("div", "zdiv") and is_lit(args[1], 1):
        return args[0]
    if prim == "select" and isinstance(args[0], Lit):
        return args[1] if args[0].val else args[2]
    for a in args:
        if type(a) is not Lit:
            return None
    if args and prim not in ("idiv", "imod"):
        from .interpreter import EVAL  # constants fold with the interpreter's (IEEE) semantics

        if prim in EVAL:
            (ty,) = result_types(prim, [a.ty for a in args], {})
            val = EVAL[prim](*(a.val for a in args))  # type: ignore[union-attr]  # Lits: checked above
            return Lit(float(val) if ty == Real else val, ty)  # type: ignore[arg-type]  # a scalar prim's: Scalar
    return None
