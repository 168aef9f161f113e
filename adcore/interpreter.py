"""The reference interpreter: IR semantics in plain Python.

Reals follow IEEE double arithmetic as Wasm does (division by zero gives inf or NaN, sqrt of a
negative is NaN), so interpreter and compiled code agree bit for bit on the primitives. Arrays are
Python lists; an accumulator is a one-element list holding its running sum.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from .convert import argument_leaves, call_impl, to_python
from .errors import RANGE_MESSAGES, AdcoreError, DomainError, RangeError, count_message
from .ir import Block, Eqn, Function, Var, loop_carries, loop_count
from .types import Int, Real, Type, VecT, accumulated

NAN = math.nan
INF = math.inf


def fdiv(a: float, b: float) -> float:
    try:
        return a / b
    except ZeroDivisionError:
        if a != a or a == 0:
            return NAN
        return math.copysign(INF, a) * math.copysign(1.0, b)


def fsqrt(a: float) -> float:
    return math.sqrt(a) if a >= 0 or a != a else NAN


def fmin(a: float, b: float) -> float:
    if a != a or b != b:
        return NAN
    if a == b:  # -0 < +0, as Wasm's f64.min
        return a if math.copysign(1.0, a) < 0 else b
    return a if a < b else b


def fmax(a: float, b: float) -> float:
    if a != a or b != b:
        return NAN
    if a == b:
        return b if math.copysign(1.0, a) < 0 else a
    return a if a > b else b


def _rounding(op: Callable[[float], int]) -> Callable[[float], float]:
    return lambda a: float(op(a)) if math.isfinite(a) else a


def _idiv(a: int, b: int) -> int:
    if b == 0:
        raise DomainError("integer division by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _imod(a: int, b: int) -> int:
    return a - b * _idiv(a, b)


def floor_int(a: float) -> int:
    """floor(a) as an Int, saturated to [-2^31, 2^31 - 1], NaN as 0 (Wasm's i32.trunc_sat_f64_s)."""
    if a != a:
        return 0
    return -(2**31) if a < -(2**31) else 2**31 - 1 if a >= 2**31 else math.floor(a)


def _zmul(a: float, b: float) -> float:
    return 0.0 if a == 0 else a * b


def _zdiv(a: float, b: float) -> float:
    return 0.0 if a == 0 else fdiv(a, b)


EVAL: dict[str, Callable[..., Any]] = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": fdiv,
    "neg": lambda a: -a,
    "abs": abs,
    "min": lambda a, b: fmin(a, b) if isinstance(a, float) else min(a, b),
    "max": lambda a, b: fmax(a, b) if isinstance(a, float) else max(a, b),
    "sqrt": fsqrt,
    "floor": _rounding(math.floor),
    "ceil": _rounding(math.ceil),
    "trunc": _rounding(math.trunc),
    "copysign": math.copysign,
    "zmul": _zmul,
    "zdiv": _zdiv,
    "idiv": _idiv,
    "imod": _imod,
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "and": lambda a, b: a and b,
    "or": lambda a, b: a or b,
    "not": lambda a: not a,
    "i2f": float,
    "floor_int": floor_int,
    "select": lambda c, a, b: a if c else b,
}


def zeros(ty: Type) -> Any:
    if isinstance(ty, VecT):
        return [zeros(ty.elem) for _ in range(ty.n)]
    return 0.0 if ty == Real else (0 if ty == Int else False)


def _add_into(target: list[Any], k: int, value: Any) -> None:
    if isinstance(value, list):
        for j, v in enumerate(value):
            _add_into(target[k], j, v)
    else:
        target[k] += value


class Interpreter:
    """Runs functions; `strict` turns a NaN made from non-NaN inputs into a DomainError."""

    def __init__(self, strict: bool = False):
        self.strict = strict

    def run(self, f: Function, args: Sequence[Any]) -> list[Any]:
        if f.body is None:
            return self.run_opaque(f, args)
        env: dict[Var, Any] = dict(zip(f.body.params, args))
        self.block(f, f.body, env)
        return [env[r] if isinstance(r, Var) else r.val for r in f.body.results]

    def run_opaque(self, f: Function, args: Sequence[Any]) -> list[Any]:
        leaves = call_impl(f, args)
        if self.strict and any(_nan(v) for v in leaves) and not any(_nan(a) for a in args):
            raise DomainError(f"{f.name}{tuple(args)} is outside the function's domain (NaN)")
        return leaves

    def block(self, f: Function, block: Block, env: dict[Var, Any]) -> None:
        for e in block.eqns:
            args: list[Any] = [env[a] if isinstance(a, Var) else a.val for a in e.args]
            prim = e.prim
            if prim in EVAL:
                out = EVAL[prim](*args)
                if self.strict and out != out and not any(_nan(a) for a in args):
                    raise DomainError(f"in {f.name}: {prim}{tuple(args)} is NaN")
                env[e.outs[0]] = out
            elif prim == "index":
                arr, i = args
                if not 0 <= i < len(arr):
                    raise AdcoreError(f"in {f.name}: index {i} out of bounds for an array of {len(arr)}")
                env[e.outs[0]] = arr[i]
            elif prim == "vec":
                env[e.outs[0]] = list(args)
            elif prim == "zeros":
                env[e.outs[0]] = zeros(e.params["ty"])
            elif prim == "call":
                for o, v in zip(e.outs, self.run(e.params["fn"], args)):
                    env[o] = v
            elif prim == "for":
                self.loop(f, e, env)
            elif prim == "fold":
                self.fold(f, e, env)
            elif prim == "checked":
                (i,) = args
                if not 0 <= i < e.params["n"]:
                    raise RangeError(RANGE_MESSAGES[e.params["kind"]](f.name, i, e.params["n"] - 1))
                env[e.outs[0]] = i
            elif prim == "accum":
                ref, value, *idx = args
                target, k = ref, 0
                for i in idx:
                    target, k = target[k], i
                _add_into(target, k, value)
            else:
                raise AdcoreError(f"interpreter: unknown primitive {prim!r} in {f.name}")

    def loop(self, f: Function, e: Eqn, env: dict[Var, Any]) -> None:
        body: Block = e.params["body"]
        i_var, *refs = body.params
        accs = [[zeros(accumulated(r.ty))] for r in refs]
        env.update(zip(refs, accs))
        columns: list[list[Any]] = [[] for _ in body.results]
        n = e.params["n"]
        count = trip_count(f, e, env)
        for i in range(count):
            env[i_var] = i
            self.block(f, body, env)
            for col, r in zip(columns, body.results):
                col.append(env[r] if isinstance(r, Var) else r.val)
        for col, r in zip(columns, body.results):  # the iterations that did not run: zeros
            col.extend(zeros(r.ty) for _ in range(n - count))
        for o, v in zip(e.outs, [*columns, *(acc[0] for acc in accs)]):
            env[o] = v

    def fold(self, f: Function, e: Eqn, env: dict[Var, Any]) -> None:
        body: Block = e.params["body"]
        c = loop_carries(e)
        i_var, carries, refs = body.params[0], body.params[1 : 1 + c], body.params[1 + c :]
        state = [env[a] if isinstance(a, Var) else a.val for a in e.args[:c]]
        accs = [[zeros(accumulated(r.ty))] for r in refs]
        env.update(zip(refs, accs))
        results, elems = body.results[:c], body.results[c:]
        columns: list[list[Any]] = [[] for _ in elems]
        n = e.params["n"]
        count = trip_count(f, e, env)
        for i in range(count):
            env[i_var] = i
            env.update(zip(carries, state))
            self.block(f, body, env)
            state = [env[r] if isinstance(r, Var) else r.val for r in results]
            for col, r in zip(columns, elems):
                col.append(env[r] if isinstance(r, Var) else r.val)
        for col, r in zip(columns, elems):  # the iterations that did not run: zeros
            col.extend(zeros(r.ty) for _ in range(n - count))
        for o, v in zip(e.outs, [*state, *columns, *(acc[0] for acc in accs)]):
            env[o] = v


def trip_count(f: Function, e: Eqn, env: dict[Var, Any]) -> int:
    """The number of iterations loop e runs: its static n, or its run-time count (checked)."""
    n = e.params["n"]
    count = loop_count(e)
    if count is None:
        return n
    k: int = env[count] if isinstance(count, Var) else int(count.val)
    if not 0 <= k <= n:
        raise RangeError(count_message(f.name, k, n))
    return k


def _nan(v: Any) -> bool:
    return isinstance(v, float) and v != v


def interp(f: Any, *, strict: bool = False) -> Callable[..., Any]:
    """A Python callable running `f` (an `Fn`) on Python values: floats, ints, bools, lists, dicts."""
    machine = Interpreter(strict)

    def run(*args: Any) -> Any:
        return to_python(f.ret, machine.run(f.ir, argument_leaves(f, args)))

    run.__name__ = f"interp_{f.name}"
    return run


__all__ = ["EVAL", "Interpreter", "interp"]
