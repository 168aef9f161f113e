"""The IR: a few small records.

A `Function` has leaf-typed parameters and a body `Block`: a list of equations in SSA form ending in a
tuple of results. An `Eqn` applies a primitive to atoms (variables or scalar literals). Two primitives
carry structure: `call` names another Function (the program is a DAG of functions, never inlined), and
`for` carries a nested Block that runs once per index and may read any variable in scope (lexical
scoping, like Rose). A `for` produces one array per body result plus the sums of what the body
`accum`ulated into its reference parameters.

`fold` is a loop that carries state: its body's parameters are (index, carried values, refs), its
results the next carried values then its elements, and its arguments the initial carried values
(then its count, if it has one); it produces the last carried values, one array per element result
and the sums of its refs. Iterations run in order, each seeing the carries of the one before.

A loop's trip count is static (`n`, the length of the arrays it makes) or given at run time: a `for`
with one argument, an Int k with 0 <= k <= n, runs the indices i < k only; the elements of the
iterations that do not run are zero, and so is what they would have accumulated. A k outside [0, n]
is an error (the interpreter raises, compiled code stops with a trap naming the loop), never a read
or write out of bounds. The count is an ordinary primal value: transformations pass it on unchanged,
so the derivative of a counted loop is a loop over the same k.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, final

from .types import Bool, Int, Real, RefT, Scalar, Type

_ids = itertools.count()

LOOPS = frozenset({"for", "fold"})  # the primitives with a body Block


@final  # no subclasses: code tests `type(a) is Var` (faster than isinstance; mypy narrows it)
class Var:
    __slots__ = ("ty", "id")

    def __init__(self, ty: Type):
        self.ty = ty
        self.id = next(_ids)

    def __repr__(self) -> str:
        return f"v{self.id}"


@final  # as Var
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
    params: tuple[Var, ...]  # a function's parameters, or a loop's index then its accumulator refs
    eqns: tuple[Eqn, ...]  # SSA: each variable is defined once, before it is read
    results: tuple[Atom, ...]  # a function's results, or a loop's per-iteration elements


class Function:
    """A function of the call graph: plain data, immutable once built except `custom_jvp` and the
    interval rules (set by the user before the function is transformed; setting one clears the memos).

    Fields and their invariants:
    - name: for messages and the printer; not unique.
    - params: leaf-typed variables, the same objects as `body.params` (when there is a body).
    - result_types: leaf types, those of `body.results`.
    - body: None exactly for opaque functions, which have `impl` (or a Wasm body in adcore.math).
    - impl: an opaque function's Python implementation, on user-level values (`signature`).
    - signature: the user-level (param types, return type) of a function built by `fn`/`opaque`.
    - custom_jvp: leaf-level (x, dx per Real leaf, ...) -> (y, dy, ...), replacing derived JVPs.
    - custom_interval: leaf-level (lo, hi per Real leaf, ...) -> (lo, hi per result leaf), replacing
      the derived interval function (adcore.interval); like `custom_jvp`, set before transforming.
    - custom_interval_near: the same signature, a rule that is cheaper and need be tight only on
      small boxes (adcore.interval(near=True) prefers it); it too encloses f on every box.
    - linear_mask: for functions linear in some parameters (jvp results, linear parts, custom
      JVPs): which parameters are tangents. None: no parameter is declared a tangent.
    - linear_results: with `linear_mask`, which results are tangents, when declared rather than
      inferred (jvp results, custom JVPs, linear parts); None: inferred by dependence.
    - cache: memos only (transform results, analyses), each recomputable from the fields above.
    """

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
        self.signature = signature
        self.custom_jvp: Function | None = None
        self.custom_interval: Function | None = None
        self.custom_interval_near: Function | None = None
        self.linear_mask: tuple[bool, ...] | None = None
        self.linear_results: tuple[bool, ...] | None = None
        self.cache: dict[Any, Any] = {}

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
                elif prim in LOOPS:
                    loop = True
                    blocks.append(e.params["body"])
        found = f.cache["callees"] = tuple(seen.values())
        f.cache["has_loop"] = loop
    return found


def has_loop(f: Function) -> bool:
    """Whether f's body has a loop (memoized)."""
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


def free_vars(block: Block) -> list[Var]:
    """Variables a block reads but does not define, in order of first use."""
    defined: set[Var] = set()
    seen: dict[Var, None] = {}

    def visit(b: Block) -> None:
        defined.update(b.params)
        for e in b.eqns:
            for a in e.args:
                if isinstance(a, Var) and a not in defined:
                    seen.setdefault(a)
            if e.prim in LOOPS:
                visit(e.params["body"])
            defined.update(e.outs)
        for r in b.results:
            if isinstance(r, Var) and r not in defined:
                seen.setdefault(r)

    visit(block)
    return list(seen)


def loop_carries(e: Eqn) -> int:
    """How many values a loop carries from one iteration to the next (a `for`: none)."""
    if e.prim != "fold":
        return 0
    params = e.params["body"].params
    c = 1
    while c < len(params) and not isinstance(params[c].ty, RefT):
        c += 1
    return c - 1


def loop_count(e: Eqn) -> Atom | None:
    """The run-time trip count of a loop equation (None: it runs its static `n` times)."""
    c = loop_carries(e)
    return e.args[c] if len(e.args) > c else None


def count_eqns(block: Block) -> int:
    return sum(1 + (count_eqns(e.params["body"]) if e.prim in LOOPS else 0) for e in block.eqns)


__all__ = [
    "Atom",
    "Block",
    "Eqn",
    "Function",
    "Int",
    "LOOPS",
    "Lit",
    "Real",
    "Var",
    "call_graph",
    "callees",
    "free_vars",
    "has_loop",
    "loop_carries",
    "loop_count",
]
