"""The IR: a few small records.

A `Function` has leaf-typed parameters and a body `Block`: a list of equations in SSA form ending in a
tuple of results. An `Eqn` applies a primitive to atoms (variables or scalar literals). Two primitives
carry structure: `call` names another Function (the program is a DAG of functions, never inlined), and
`for` carries a nested Block that runs once per index and may read any variable in scope (lexical
scoping, like Rose). A `for` produces one array per body result plus the sums of what the body
`accum`ulated into its reference parameters.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .types import Bool, Int, Real, Scalar, Type

_ids = itertools.count()


class Var:
    __slots__ = ("ty", "id")

    def __init__(self, ty: Type):
        self.ty = ty
        self.id = next(_ids)

    def __repr__(self) -> str:
        return f"v{self.id}"


@dataclass(frozen=True)
class Lit:
    val: float | int | bool
    ty: Scalar

    def __repr__(self) -> str:
        if self.ty == Bool:
            return "true" if self.val else "false"
        return repr(float(self.val)) if self.ty == Real else str(int(self.val))


Atom = Var | Lit


class Eqn:
    """outs = prim(args; params). Immutable by convention (a plain class: one is made per
    instruction emitted, and frozen dataclasses are slow to construct)."""

    __slots__ = ("outs", "prim", "args", "params")

    def __init__(
        self, outs: tuple[Var, ...], prim: str, args: tuple[Atom, ...], params: dict[str, Any] | None = None
    ):
        self.outs = outs
        self.prim = prim
        self.args = args
        self.params = {} if params is None else params

    def __repr__(self) -> str:
        return f"Eqn({self.outs!r} = {self.prim}{self.args!r})"


@dataclass(frozen=True, eq=False)
class Block:
    params: tuple[Var, ...]
    eqns: tuple[Eqn, ...]
    results: tuple[Atom, ...]


class Function:
    """A function of the call graph. `body` is None for opaque functions, which have `impl` instead."""

    def __init__(
        self,
        name: str,
        params: tuple[Var, ...],
        result_types: tuple[Type, ...],
        body: Block | None,
        *,
        impl: Callable[..., Any] | None = None,
        signature: tuple[tuple[Type, ...], Type] | None = None,
    ):
        self.name = name
        self.params = params
        self.result_types = result_types
        self.body = body
        self.impl = impl
        self.signature = signature  # user-level (param types, return type), if built by `fn`/`opaque`
        self.custom_jvp: Function | None = None  # leaf-level: (x, dx per Real leaf) -> (y, dy)
        self.cache: dict[Any, Any] = {}  # per-function transform results (jvp, unzip, transpose...)
        self.linear_mask: tuple[bool, ...] | None = None  # set on jvp results: which params are tangents

    @property
    def param_types(self) -> tuple[Type, ...]:
        return tuple(p.ty for p in self.params)

    @property
    def is_opaque(self) -> bool:
        return self.body is None

    def __repr__(self) -> str:
        return f"<adcore function {self.name}>"

    def __str__(self) -> str:
        from .printer import show_program

        return show_program(self)


def callees(f: Function) -> tuple[Function, ...]:
    """Functions called directly by f (also in its loop bodies), without duplicates (memoized, with
    `has_loop`: one scan of the body answers both)."""
    found = f.cache.get("callees")
    if found is None:
        seen: dict[int, Function] = {}
        loop = False
        blocks = [f.body] if f.body is not None else []
        while blocks:
            for e in blocks.pop().eqns:
                prim = e.prim
                if prim == "call":
                    seen.setdefault(id(e.params["fn"]), e.params["fn"])
                elif prim == "for":
                    loop = True
                    blocks.append(e.params["body"])
        found = f.cache["callees"] = tuple(seen.values())
        f.cache["has_loop"] = loop
    return found


def has_loop(f: Function) -> bool:
    """Whether f's body has a `for` (memoized)."""
    if "has_loop" not in f.cache:
        callees(f)
    return f.cache["has_loop"]


def call_graph(f: Function) -> tuple[Function, ...]:
    """All functions reachable from f, callees before callers (memoized: functions are immutable)."""
    graph = f.cache.get("call_graph")
    if graph is None:
        graph = f.cache["call_graph"] = tuple(_reachable(f))
    return graph


def _reachable(f: Function) -> list[Function]:
    order: list[Function] = []
    seen: set[int] = set()

    def visit(g: Function) -> None:
        if id(g) in seen:
            return
        seen.add(id(g))
        for h in callees(g):
            visit(h)
        order.append(g)

    visit(f)
    return order


def count_eqns(block: Block) -> int:
    return sum(1 + (count_eqns(e.params["body"]) if e.prim == "for" else 0) for e in block.eqns)


__all__ = [
    "Atom",
    "Block",
    "Eqn",
    "Function",
    "Int",
    "Lit",
    "Real",
    "Var",
    "call_graph",
    "callees",
    "has_loop",
]
