"""Primitives and their typing rules (the "abstract evaluation" table).

Every other transformation keeps its own rule table keyed by the same names: `interp.EVAL`,
`jvp.JVP`, `transpose.TRANSPOSE`, and the Wasm code generator's table.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .errors import AdcoreTypeError
from .types import Bool, Int, Real, RefT, Scalar, Type, VecT

NUMERIC_BINARY = ("add", "sub", "mul", "min", "max")
REAL_BINARY = ("div", "copysign", "zmul", "zdiv")  # zmul/zdiv: 0 * anything = 0 (see transpose.py)
INT_BINARY = ("idiv", "imod")
NUMERIC_UNARY = ("neg", "abs")
REAL_UNARY = ("sqrt", "floor", "ceil", "trunc")
COMPARE = ("lt", "le", "gt", "ge", "eq", "ne")
LOGIC = ("and", "or")

# single-output instructions whose value depends only on their arguments (arrays are immutable)
PURE = frozenset(
    {*NUMERIC_BINARY, *REAL_BINARY, *INT_BINARY, *NUMERIC_UNARY, *REAL_UNARY, *COMPARE, *LOGIC}
    | {"not", "i2f", "floor_int", "select", "index"}
)

Rule = Callable[[Sequence[Type], dict[str, Any]], tuple[Type, ...]]
TYPE_RULES: dict[str, Rule] = {}


def _fail(prim: str, types: Sequence[Type], why: str) -> AdcoreTypeError:
    shown = ", ".join(map(repr, types))
    return AdcoreTypeError(f"primitive {prim}({shown}): {why}")


def _same_scalar(prim: str, types: Sequence[Type], allowed: tuple[Scalar, ...]) -> Scalar:
    first = types[0]
    for t in types:
        if t is not first:
            raise _fail(prim, types, f"expects {len(types)} scalars of one type among {allowed}")
    for a in allowed:
        if first is a:
            return first
    raise _fail(prim, types, f"expects {len(types)} scalars of one type among {allowed}")


def _scalars(prim: str, allowed: tuple[Scalar, ...], result: Scalar | None = None) -> Rule:
    """The rule of a primitive on scalars of one type among `allowed`: its result has that type,
    or `result` when given."""

    def rule(ts: Sequence[Type], ps: dict[str, Any]) -> tuple[Type, ...]:
        t = _same_scalar(prim, ts, allowed)
        return (t if result is None else result,)

    return rule


for _p in NUMERIC_BINARY + NUMERIC_UNARY:
    TYPE_RULES[_p] = _scalars(_p, (Real, Int))
for _p in REAL_BINARY + REAL_UNARY:
    TYPE_RULES[_p] = _scalars(_p, (Real,))
for _p in INT_BINARY:
    TYPE_RULES[_p] = _scalars(_p, (Int,))
for _p in COMPARE:
    TYPE_RULES[_p] = _scalars(_p, (Real, Int, Bool), Bool)
for _p in LOGIC:
    TYPE_RULES[_p] = _scalars(_p, (Bool,))
TYPE_RULES["not"] = _scalars("not", (Bool,))
TYPE_RULES["i2f"] = _scalars("i2f", (Int,), Real)
# floor to an Int, saturated to the Int range (NaN: 0), as Wasm's i32.trunc_sat_f64_s of f64.floor
TYPE_RULES["floor_int"] = _scalars("floor_int", (Real,), Int)


def _select(ts: Sequence[Type], ps: dict[str, Any]) -> tuple[Type, ...]:
    if len(ts) != 3 or ts[0] != Bool or ts[1] != ts[2] or not isinstance(ts[1], Scalar):
        raise _fail("select", ts, "expects (Bool, T, T) with T a scalar")
    return (ts[1],)


def _vec(ts: Sequence[Type], ps: dict[str, Any]) -> tuple[Type, ...]:
    elem = ps["elem"]
    if any(t != elem for t in ts):
        raise _fail("vec", ts, f"all elements must have type {elem!r}")
    return (VecT(len(ts), elem),)


def _index(ts: Sequence[Type], ps: dict[str, Any]) -> tuple[Type, ...]:
    if len(ts) != 2 or not isinstance(ts[0], VecT) or ts[1] != Int:
        raise _fail("index", ts, "expects (Vec, Int)")
    return (ts[0].elem,)


def _zeros(ts: Sequence[Type], ps: dict[str, Any]) -> tuple[Type, ...]:
    return (ps["ty"],)


def _checked(ts: Sequence[Type], ps: dict[str, Any]) -> tuple[Type, ...]:
    """checked(i; n, kind) is i, or the run-time error of `kind` (errors.RANGE_MESSAGES) unless 0 <= i < n."""
    if len(ts) != 1 or ts[0] != Int or not isinstance(ps.get("n"), int) or ps["n"] < 1:
        raise _fail("checked", ts, "expects one Int and a bound n >= 1")
    return (Int,)


def _call(ts: Sequence[Type], ps: dict[str, Any]) -> tuple[Type, ...]:
    f = ps["fn"]
    if tuple(ts) != f.param_types:
        raise _fail("call", ts, f"{f.name} expects {f.param_types}")
    return f.result_types


def _for(ts: Sequence[Type], ps: dict[str, Any]) -> tuple[Type, ...]:
    body = ps["body"]
    n = ps["n"]
    idx, *refs = body.params
    if idx.ty != Int or any(not isinstance(r.ty, RefT) for r in refs):
        raise _fail("for", ts, "body parameters must be (Int, refs...)")
    if len(ts) > 1 or (ts and ts[0] != Int):
        raise _fail("for", ts, "expects no argument, or its run-time trip count (an Int)")
    return tuple(VecT(n, r.ty) for r in body.results) + tuple(r.ty.of for r in refs)


def _fold(ts: Sequence[Type], ps: dict[str, Any]) -> tuple[Type, ...]:
    body = ps["body"]
    n = ps["n"]
    idx, *rest = body.params
    c = 0
    while c < len(rest) and not isinstance(rest[c].ty, RefT):
        c += 1
    carries, refs = rest[:c], rest[c:]
    if idx.ty != Int or any(not isinstance(r.ty, RefT) for r in refs):
        raise _fail("fold", ts, "body parameters must be (Int, carried values..., refs...)")
    types = tuple(p.ty for p in carries)
    if tuple(ts[:c]) != types or len(ts) > c + 1 or (len(ts) == c + 1 and ts[c] != Int):
        raise _fail("fold", ts, f"expects the initial values {types}, then optionally a count (an Int)")
    if len(body.results) < c or tuple(r.ty for r in body.results[:c]) != types:
        raise _fail("fold", ts, f"its body must return the next carried values {types} first")
    elems = body.results[c:]
    return types + tuple(VecT(n, r.ty) for r in elems) + tuple(r.ty.of for r in refs)


def _accum(ts: Sequence[Type], ps: dict[str, Any]) -> tuple[Type, ...]:
    ref, value, *idx = ts
    if not isinstance(ref, RefT) or any(i != Int for i in idx):
        raise _fail("accum", ts, "expects (Ref, value, Int...)")
    target = ref.of
    for _ in idx:
        if not isinstance(target, VecT):
            raise _fail("accum", ts, "more indices than array dimensions")
        target = target.elem
    if target != value:
        raise _fail("accum", ts, f"value must have type {target!r}")
    return ()


TYPE_RULES.update(
    select=_select,
    vec=_vec,
    index=_index,
    zeros=_zeros,
    call=_call,
    accum=_accum,
    fold=_fold,
    checked=_checked,
    **{"for": _for},
)


def result_types(prim: str, types: Sequence[Type], params: dict[str, Any]) -> tuple[Type, ...]:
    rule = TYPE_RULES.get(prim)
    if rule is None:
        raise AdcoreTypeError(f"unknown primitive {prim!r}")
    return rule(types, params)
