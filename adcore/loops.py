"""Loops that carry state, reduce or scatter: `fold`, `scan`, `reduce`, `segment_sum`.

Each is one loop in the IR (a `fold` primitive, or a `for` with accumulators), so its code does not
grow with n; each takes a run-time `count` as `vec` and `sum` do. `reduce` and `scan` are folds;
`segment_sum` is a `for` accumulating into an array at a `checked` index (a segment outside 0..m-1 is
a RangeError, never a write), whose derivative is a gather.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from .api import Fn, sum
from .counts import eager_count, traced_count, zero_value
from .errors import AdcoreTypeError, RangeError, segment_message
from .ir import Atom, Block, Var
from .types import Bool, Int, RefT, VecT
from .values import STATE, Index, Sym, current_builder, current_name, flatten, lift, type_of, unflatten


def fold(n: int, init: Any, body: Callable[[Any, Index], Any], *, count: Any = None) -> Any:
    """The value carried through `carry = body(carry, i)` for i < n, starting from `init` (Futhark's
    `loop`): one loop whatever n is. The carry may be of any type (a scalar, an array, a struct),
    the type of `init` (a Python int is an Int: write 0.0 for a Real). `count`: as in `vec`, the
    steps from count on do not run."""
    return _carry_loop("fold", n, init, body, count, keep=False)


def scan(n: int, init: Any, body: Callable[[Any, Index], Any], *, count: Any = None) -> Any:
    """As `fold`, returning the n carries after each step, as an array (with `count`, the ones from
    count on are zero)."""
    return _carry_loop("scan", n, init, body, count, keep=True)


def associative(op: Fn) -> Fn:
    """Declare `op`, an `fn([T, T], T)`, associative, so that `reduce` accepts it (adcore reduces
    from left to right whatever the operator; the declaration is the promise Futhark asks for)."""
    if not isinstance(op, Fn) or len(op.params) != 2 or not op.params[0] == op.params[1] == op.ret:
        raise AdcoreTypeError(f"associative expects an fn([T, T], T), got {op!r}")
    op.associative = True
    return op


def reduce(
    n: int,
    op: Callable[[Any, Any], Any],
    body: Callable[[Index], Any],
    *,
    count: Any = None,
    identity: Any = None,
) -> Any:
    """The reduction of body(0), ..., body(n-1) by `op`, from left to right: `adcore.math.max`,
    `adcore.math.min` (identities -inf, +inf), `operator.mul` (1), `operator.add` (a `sum`), or an
    `fn([T, T], T)` declared `associative` (its `identity` given, or n >= 1 and no `count`).

    One loop whatever n is. The derivative of max and min goes to the later of tied elements (as
    Penrose's maxList, a left fold of `x > y ? x : y`); NaN propagates (IEEE max and min)."""
    import operator

    from . import math as am

    if op is operator.add:
        return sum(n, body, count=count)
    known = {id(am.max): -math.inf, id(am.min): math.inf, id(operator.mul): 1.0}
    if id(op) in known:
        identity = known[id(op)] if identity is None else identity
    elif not getattr(op, "associative", False):
        raise AdcoreTypeError(
            f"in {current_name()}: reduce's operator must be adcore.math.max, adcore.math.min, "
            f"operator.add, operator.mul or an fn([T, T], T) declared adcore.associative, got {op!r}"
        )
    if identity is None:
        if count is not None or n < 1:
            raise AdcoreTypeError(
                f"in {current_name()}: reducing {'a run-time count of' if count is not None else 'no'} "
                f"elements by {op!r} needs its identity (reduce(..., identity=e))"
            )
        return fold(n - 1, body(0), lambda acc, i: op(acc, body(i + 1)))
    if isinstance(op, Fn) and STATE.stack:
        identity = unflatten(op.ret, flatten(op.ret, identity, f"identity of {op.name}"))
    return fold(n, identity, lambda acc, i: op(acc, body(i)), count=count)


def segment_sum(n: int, m: int, body: Callable[[Index], Any], *, count: Any = None) -> Any:
    """The m sums out[s] = sum of the values body(i) = (s, value) sends to segment s, for i < n
    (Futhark's reduce_by_index with +; a scatter-add): one loop, its derivative a gather. A segment
    outside 0..m-1 is an error (RangeError, WasmRangeError compiled), never a write."""
    if not isinstance(m, int) or isinstance(m, bool) or m < 1:
        raise AdcoreTypeError(f"in {current_name()}: segment_sum needs a Python int m >= 1, got {m!r}")
    if not STATE.stack:
        k = eager_count("segment_sum", n, count)
        out: list[Any] = [None] * m
        for i in range(k):
            s, value = body(i)
            if not isinstance(s, int) or not 0 <= s < m:
                raise RangeError(segment_message(current_name(), s, m - 1))
            out[s] = value if out[s] is None else out[s] + value
        zero = next((zero_value(type_of(v)) for v in out if v is not None), 0.0)
        return [zero if v is None else v for v in out]
    b = current_builder("segment_sum")
    index = Var(Int)
    b.open_block()
    try:
        found = body(Sym(index, b))
        if not isinstance(found, (tuple, list)) or len(found) != 2:
            raise AdcoreTypeError(f"in {current_name()}: segment_sum's body must return (segment, value)")
        s, value = found
        seg = lift(s, Int, b)
        if seg.ty != Int:
            raise AdcoreTypeError(
                f"in {current_name()}: a segment must be an Int, got {seg.ty!r} (adcore.floor_int makes one)"
            )
        ty = type_of(value)
        leaves = flatten(ty, value, "value of segment_sum")
        if any(a.ty == Bool for a in leaves):
            raise AdcoreTypeError(f"in {current_name()}: cannot sum Bool values")
        seg = b.emit1("checked", seg, n=m, kind="segment")
        refs = [Var(RefT(VecT(m, a.ty))) for a in leaves]
        for r, a in zip(refs, leaves):
            b.emit("accum", (r, a, seg))
    finally:
        eqns = b.close_block()
    k_atom = traced_count("segment_sum", n, count)
    outs = b.emit(
        "for", () if k_atom is None else (k_atom,), n=n, body=Block((index, *refs), tuple(eqns), ())
    )
    return unflatten(VecT(m, ty), outs)


def _carry_loop(what: str, n: int, init: Any, body: Callable[..., Any], count: Any, keep: bool) -> Any:
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise AdcoreTypeError(f"in {current_name()}: {what} needs a Python int n >= 0, got {n!r}")
    if not STATE.stack:  # plain Python values (or another library's lazy ones)
        k = eager_count(what, n, count)
        carry, steps = init, []
        for i in range(k):
            carry = body(carry, i)
            steps.append(carry)
        if not keep:
            return carry
        zero = zero_value(type_of(init)) if k < n else None
        return steps + [zero] * (n - k)
    b = current_builder(what)
    ty = type_of(init)
    inits = flatten(ty, init, f"initial value of {what}")
    carries = [Var(a.ty) for a in inits]

    def step(i: Var, _: Sequence[Var]) -> list[Atom]:
        value = body(unflatten(ty, carries), Sym(i, b))
        nexts = flatten(ty, value, f"the value {what}'s body returns (the carry has type {ty!r})")
        return [*nexts, *nexts] if keep else nexts  # a scan's elements are its carries

    outs = b.fold(n, inits, carries, step, (), traced_count(what, n, count))
    if keep:
        return unflatten(VecT(n, ty), outs[len(inits) :])
    return unflatten(ty, outs)


__all__ = ["associative", "fold", "reduce", "scan", "segment_sum"]
