"""Typed expression trees over ``Asm``, so numeric kernels read like the C they are modeled on.

A ``Val`` is a lazily emitted expression of one Wasm value type; Python operators build bigger
expressions (``x * x + 1.0``) and a statement (``v.set(...)``, ``fn.ret(...)``, ``fn.if_(...)``) emits
them into the function body in program order.  A ``Val`` that reads a local is re-read wherever it
is used, so snapshot a value with ``fn.let(expr)`` before the local is overwritten.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from adcore.wasm.encode import F64, I32, I64, VALTYPE_NAMES, Asm, ModuleBuilder

Emit = Callable[[Asm], object]


class Val:
    def __init__(self, t: int, emit: Emit) -> None:
        self.t = t
        self.emit = emit

    @property
    def _p(self) -> str:  # opcode prefix
        return VALTYPE_NAMES[self.t]

    def _coerce(self, other: Val | int | float) -> Val:
        if isinstance(other, Val):
            if other.t != self.t:
                raise TypeError(f"type mismatch: {VALTYPE_NAMES[self.t]} vs {VALTYPE_NAMES[other.t]}")
            return other
        return const(self.t, other)

    def _bin(self, op: str, other: Val | int | float, result_t: int | None = None) -> Val:
        b = self._coerce(other)
        name = f"{self._p}_{op}"

        def emit(a: Asm) -> None:
            self.emit(a)
            b.emit(a)
            getattr(a, name)()

        return Val(self.t if result_t is None else result_t, emit)

    def _rbin(self, op: str, other: int | float) -> Val:
        return const(self.t, other)._bin(op, self)

    def _un(self, name: str, result_t: int) -> Val:
        def emit(a: Asm) -> None:
            self.emit(a)
            getattr(a, name)()

        return Val(result_t, emit)

    # arithmetic (signed division for ints)
    def __add__(self, o: Val | int | float) -> Val:
        return self._bin("add", o)

    def __radd__(self, o: int | float) -> Val:
        return self._rbin("add", o)

    def __sub__(self, o: Val | int | float) -> Val:
        return self._bin("sub", o)

    def __rsub__(self, o: int | float) -> Val:
        return self._rbin("sub", o)

    def __mul__(self, o: Val | int | float) -> Val:
        return self._bin("mul", o)

    def __rmul__(self, o: int | float) -> Val:
        return self._rbin("mul", o)

    def __truediv__(self, o: Val | int | float) -> Val:
        return self._bin("div" if self.t == F64 else "div_s", o)

    def __rtruediv__(self, o: int | float) -> Val:
        return const(self.t, o) / self

    def __neg__(self) -> Val:
        return self._un("f64_neg", F64) if self.t == F64 else 0 - self

    # bitwise (integers)
    def __and__(self, o: Val | int) -> Val:
        return self._bin("and", o)

    def __or__(self, o: Val | int) -> Val:
        return self._bin("or", o)

    def __xor__(self, o: Val | int) -> Val:
        return self._bin("xor", o)

    def __lshift__(self, o: Val | int) -> Val:
        return self._bin("shl", o)

    def __rshift__(self, o: Val | int) -> Val:
        return self._bin("shr_s", o)

    def shr_u(self, o: Val | int) -> Val:
        return self._bin("shr_u", o)

    # comparisons -> i32 (signed for ints; *_u variants for unsigned)
    def _cmp(self, op: str, o: Val | int | float) -> Val:
        return self._bin(op if self.t == F64 or op in ("eq", "ne") else f"{op}_s", o, I32)

    def lt(self, o: Val | int | float) -> Val:
        return self._cmp("lt", o)

    def le(self, o: Val | int | float) -> Val:
        return self._cmp("le", o)

    def gt(self, o: Val | int | float) -> Val:
        return self._cmp("gt", o)

    def ge(self, o: Val | int | float) -> Val:
        return self._cmp("ge", o)

    def eq(self, o: Val | int | float) -> Val:
        return self._cmp("eq", o)

    def ne(self, o: Val | int | float) -> Val:
        return self._cmp("ne", o)

    def lt_u(self, o: Val | int) -> Val:
        return self._bin("lt_u", o, I32)

    def le_u(self, o: Val | int) -> Val:
        return self._bin("le_u", o, I32)

    def gt_u(self, o: Val | int) -> Val:
        return self._bin("gt_u", o, I32)

    def ge_u(self, o: Val | int) -> Val:
        return self._bin("ge_u", o, I32)


class Var(Val):
    """A local variable: reading it is an expression, ``set`` is a statement."""

    def __init__(self, fn: Fn, index: int, t: int) -> None:
        super().__init__(t, lambda a: a.local_get(index))
        self.fn = fn
        self.index = index

    def set(self, value: Val | int | float) -> None:
        self._coerce(value).emit(self.fn.asm)
        self.fn.asm.local_set(self.index)


def const(t: int, v: int | float) -> Val:
    if t == F64:
        return Val(F64, lambda a: a.f64_const(float(v)))
    if isinstance(v, float):
        raise TypeError(f"float constant {v} used as {VALTYPE_NAMES[t]}")
    return Val(t, (lambda a: a.i32_const(v)) if t == I32 else (lambda a: a.i64_const(v)))


def f64(v: Val | float) -> Val:
    """Float constant, or conversion of a signed i32/i64 to f64."""
    if not isinstance(v, Val):
        return const(F64, v)
    if v.t == F64:
        return v
    return v._un("f64_convert_i32_s" if v.t == I32 else "f64_convert_i64_s", F64)


def _f64_unary(name: str) -> Callable[[Val], Val]:
    return lambda x: x._un(name, F64)


sqrt, fabs, floor, ceil, trunc, nearest = map(
    _f64_unary, ["f64_sqrt", "f64_abs", "f64_floor", "f64_ceil", "f64_trunc", "f64_nearest"]
)


def copysign(x: Val, y: Val) -> Val:
    return x._bin("copysign", y)


def fmin(x: Val, y: Val | float) -> Val:
    return x._bin("min", y)


def fmax(x: Val, y: Val | float) -> Val:
    return x._bin("max", y)


def bits(x: Val) -> Val:
    return x._un("i64_reinterpret_f64", I64)


def from_bits(i: Val) -> Val:
    return i._un("f64_reinterpret_i64", F64)


def wrap(i: Val) -> Val:
    return i._un("i32_wrap_i64", I32)


def extend_u(i: Val) -> Val:
    return i._un("i64_extend_i32_u", I64)


def extend_s(i: Val) -> Val:
    return i._un("i64_extend_i32_s", I64)


def trunc_i32(x: Val) -> Val:
    """f64 -> i32, truncating; traps if out of range, so callers clamp first."""
    return x._un("i32_trunc_f64_s", I32)


def hi_word(x: Val) -> Val:
    """Upper 32 bits of a double (sign, exponent, top of mantissa) as i32, like fdlibm's GET_HIGH_WORD."""
    return wrap(bits(x).shr_u(32))


def lo_word(x: Val) -> Val:
    return wrap(bits(x))


def from_words(hi: Val, lo: Val | int) -> Val:
    lo_v = lo if isinstance(lo, Val) else const(I32, lo)
    return from_bits((extend_u(hi) << 32) | extend_u(lo_v))


def clear_lo(x: Val) -> Val:
    """x with its low 32 mantissa bits zeroed: an exactly-representable 'hi' part for splitting."""
    return from_bits(bits(x) & -(1 << 32))


def select(cond: Val, if_true: Val | float, if_false: Val | float) -> Val:
    if isinstance(if_true, Val):
        t = if_true
    elif isinstance(if_false, Val):
        t = if_false
    else:  # two Python constants: ints are i32, floats f64
        t = const(F64 if isinstance(if_true, float) else I32, if_true)
    a_, b_ = t._coerce(if_true), t._coerce(if_false)

    def emit(a: Asm) -> None:
        a_.emit(a)
        b_.emit(a)
        cond.emit(a)
        a.select()

    return Val(t.t, emit)


def scalbn_exact(k: Val) -> Val:
    """2**k as a double for a normal-range i32 exponent k (-1022 <= k <= 1023)."""
    return from_bits(extend_s(k + 1023) << 52)


def poly(x: Val, coeffs: Sequence[float]) -> Val:
    """Horner: coeffs[0] + x*(coeffs[1] + x*(...)).  x is re-read, so pass a local."""
    acc: Val = const(F64, coeffs[-1])
    for c in reversed(coeffs[:-1]):
        acc = c + x * acc
    return acc


# --- double-double building blocks (statements: they need locals) -------------------------------------


def two_sum(fn: Fn, a: Val, b: Val) -> tuple[Var, Var]:
    """s + e == a + b exactly (Knuth), s = fl(a + b)."""
    av, bv = fn.let(a), fn.let(b)
    s = fn.let(av + bv)
    bb = fn.let(s - av)
    return s, fn.let((av - (s - bb)) + (bv - bb))


def split(fn: Fn, a: Val) -> tuple[Var, Var]:
    """Veltkamp: a = hi + lo with 26-bit halves, so hi*hi, hi*lo, lo*lo are exact."""
    av = fn.let(a)
    c = fn.let(av * 134217729.0)
    hi = fn.let(c - (c - av))
    return hi, fn.let(av - hi)


class Fn:
    """Builds one function body with named locals and structured control flow."""

    def __init__(self, params: Sequence[int], results: Sequence[int] = (F64,)) -> None:
        self.params = list(params)
        self.results = list(results)
        self.local_types: list[int] = []
        self.asm = Asm()

    def param(self, i: int) -> Var:
        return Var(self, i, self.params[i])

    def local(self, t: int = F64, init: Val | int | float | None = None) -> Var:
        self.local_types.append(t)
        v = Var(self, len(self.params) + len(self.local_types) - 1, t)
        if init is not None:
            v.set(init)
        return v

    def let(self, value: Val | float) -> Var:
        value = value if isinstance(value, Val) else const(F64, value)
        return self.local(value.t, value)

    def ret(self, value: Val | float) -> None:
        (value if isinstance(value, Val) else const(F64, value)).emit(self.asm)
        self.asm.return_()

    def ret_many(self, *values: Val) -> None:
        for v in values:
            v.emit(self.asm)
        self.asm.return_()

    def call_into(self, func_index: int, args: Sequence[Val], targets: Sequence[Var]) -> None:
        """Call a multi-result function and store its results into ``targets`` (a statement)."""
        for arg in args:
            arg.emit(self.asm)
        self.asm.call(func_index)
        for t in reversed(targets):
            self.asm.local_set(t.index)

    @contextmanager
    def if_(self, cond: Val) -> Iterator[None]:
        cond.emit(self.asm)
        self.asm.if_()
        yield
        self.asm.end()

    def else_(self) -> None:
        """Switch to the else arm of the innermost ``if_`` block."""
        self.asm.else_()

    def call(self, func_index: int, *args: Val, result: int = F64) -> Val:
        def emit(a: Asm) -> None:
            for arg in args:
                arg.emit(a)
            a.call(func_index)

        return Val(result, emit)

    def define(self, builder: ModuleBuilder, index: int) -> None:
        # A trailing 'unreachable' lets bodies end in if/else arms that both return.
        builder.define_function(index, self.local_types, self.asm.unreachable())
