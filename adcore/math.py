"""The math library: opaque functions with custom JVPs (their VJPs come from transposition).

Each function has a Python implementation for the interpreter (IEEE results: NaN outside the domain,
inf on overflow, as C99 and our Wasm library give) and a Wasm implementation of the same name in
`adcore.wasm` for compiled code. sqrt, abs, floor, ceil, trunc, min, max and copysign are primitives.
"""

from __future__ import annotations

import math as _m
from collections.abc import Callable
from typing import Any

from .api import Fn, fn, opaque, select
from .types import Dual, Real
from .values import Sym, binary, unary

NAN, INF = _m.nan, _m.inf
SQRT_EPSILON = 1e-5  # Penrose clamps sqrt's derivative at this denominator so that sqrt(0) stays usable


def _ieee(
    f: Callable[[float], float], low: float | None = None, at_low: float = NAN
) -> Callable[[float], float]:
    """`f` with math-module exceptions replaced by IEEE results."""

    def g(x: float) -> float:
        if low is not None and x == low:
            return at_low
        try:
            return f(x)
        except OverflowError:
            return INF if f is not _m.sinh else _m.copysign(INF, x)
        except ValueError:
            return NAN

    return g


def _is_odd_integer(y: float) -> bool:
    return _m.isfinite(y) and y.is_integer() and _m.fabs(y) < 2**53 and int(y) % 2 == 1


def py_pow(x: float, y: float) -> float:
    try:
        return _m.pow(x, y)
    except OverflowError:
        return -INF if x < 0 and _is_odd_integer(y) else INF
    except ValueError:
        if x == 0 and y < 0:
            return _m.copysign(INF, x) if _is_odd_integer(y) else INF
        return NAN


def py_atanh(x: float) -> float:
    if x in (1.0, -1.0):
        return _m.copysign(INF, x)
    return _ieee(_m.atanh)(x)


def _unary(name: str, impl: Callable[[float], float]) -> Fn:
    return opaque([Real], Real, impl, name=name)


exp = _unary("exp", _ieee(_m.exp))
expm1 = _unary("expm1", _ieee(_m.expm1))
log = _unary("log", _ieee(_m.log, 0.0, -INF))
log1p = _unary("log1p", _ieee(_m.log1p, -1.0, -INF))
log2 = _unary("log2", _ieee(_m.log2, 0.0, -INF))
log10 = _unary("log10", _ieee(_m.log10, 0.0, -INF))
sin = _unary("sin", _ieee(_m.sin))
cos = _unary("cos", _ieee(_m.cos))
tan = _unary("tan", _ieee(_m.tan))
asin = _unary("asin", _ieee(_m.asin))
acos = _unary("acos", _ieee(_m.acos))
atan = _unary("atan", _ieee(_m.atan))
sinh = _unary("sinh", _ieee(_m.sinh))
cosh = _unary("cosh", _ieee(_m.cosh))
tanh = _unary("tanh", _ieee(_m.tanh))
asinh = _unary("asinh", _ieee(_m.asinh))
acosh = _unary("acosh", _ieee(_m.acosh))
atanh = _unary("atanh", py_atanh)
cbrt = _unary("cbrt", _ieee(_m.cbrt))
atan2 = opaque([Real, Real], Real, _m.atan2, name="atan2")
pow = opaque([Real, Real], Real, py_pow, name="pow")  # noqa: A001 - the language's name
hypot = opaque([Real, Real], Real, _m.hypot, name="hypot")

LN2 = _m.log(2.0)
LN10 = _m.log(10.0)


def _set_unary_jvp(f: Fn, derivative: Callable[[Any, Any], Any]) -> None:
    """f.jvp from f'(x) written in terms of x and y = f(x)."""

    def body(d: dict[str, Any]) -> dict[str, Any]:
        x = d["re"]
        y = f(x)
        return {"re": y, "du": d["du"] * derivative(x, y)}

    f.jvp = fn([Dual], Dual, body, name=f"{f.name}_jvp")


_set_unary_jvp(exp, lambda x, y: y)
_set_unary_jvp(expm1, lambda x, y: exp(x))
_set_unary_jvp(log, lambda x, y: 1.0 / x)
_set_unary_jvp(log1p, lambda x, y: 1.0 / (1.0 + x))
_set_unary_jvp(log2, lambda x, y: 1.0 / (x * LN2))
_set_unary_jvp(log10, lambda x, y: 1.0 / (x * LN10))
_set_unary_jvp(sin, lambda x, y: cos(x))
_set_unary_jvp(cos, lambda x, y: -sin(x))
_set_unary_jvp(tan, lambda x, y: 1.0 + y * y)
_set_unary_jvp(asin, lambda x, y: 1.0 / unary("sqrt", 1.0 - x * x))
_set_unary_jvp(acos, lambda x, y: -1.0 / unary("sqrt", 1.0 - x * x))
_set_unary_jvp(atan, lambda x, y: 1.0 / (1.0 + x * x))
_set_unary_jvp(sinh, lambda x, y: cosh(x))
_set_unary_jvp(cosh, lambda x, y: sinh(x))
_set_unary_jvp(tanh, lambda x, y: 1.0 - y * y)
_set_unary_jvp(asinh, lambda x, y: 1.0 / unary("sqrt", x * x + 1.0))
_set_unary_jvp(acosh, lambda x, y: 1.0 / unary("sqrt", x * x - 1.0))
_set_unary_jvp(atanh, lambda x, y: 1.0 / (1.0 - x * x))
_set_unary_jvp(cbrt, lambda x, y: 1.0 / (3.0 * y * y))


def _atan2_jvp(dy: dict[str, Any], dx: dict[str, Any]) -> dict[str, Any]:
    y, x = dy["re"], dx["re"]
    r2 = x * x + y * y
    return {"re": atan2(y, x), "du": (dy["du"] * x - dx["du"] * y) / r2}


def _pow_jvp(dx: dict[str, Any], dy: dict[str, Any]) -> dict[str, Any]:
    x, y = dx["re"], dy["re"]
    z = pow(x, y)
    return {"re": z, "du": dx["du"] * (y * pow(x, y - 1.0)) + dy["du"] * (z * log(x))}


def _hypot_jvp(dx: dict[str, Any], dy: dict[str, Any]) -> dict[str, Any]:
    x, y = dx["re"], dy["re"]
    h = hypot(x, y)
    return {"re": h, "du": (dx["du"] * x + dy["du"] * y) / h}


atan2.jvp = fn([Dual, Dual], Dual, _atan2_jvp, name="atan2_jvp")
pow.jvp = fn([Dual, Dual], Dual, _pow_jvp, name="pow_jvp")
hypot.jvp = fn([Dual, Dual], Dual, _hypot_jvp, name="hypot_jvp")


def _sqrt_jvp(d: dict[str, Any]) -> dict[str, Any]:
    y = unary("sqrt", d["re"])
    return {"re": y, "du": d["du"] / (2.0 * binary("max", y, SQRT_EPSILON))}


sqrt = fn([Real], Real, lambda x: unary("sqrt", x), name="sqrt")
sqrt.jvp = fn([Dual], Dual, _sqrt_jvp, name="sqrt_jvp")


# -- primitives as functions of the library (inlined: they are single instructions) ---------------


def abs(x: Any) -> Sym:  # noqa: A001
    return unary("abs", x)


def floor(x: Any) -> Sym:
    return unary("floor", x)


def ceil(x: Any) -> Sym:
    return unary("ceil", x)


def trunc(x: Any) -> Sym:
    return unary("trunc", x)


def min(a: Any, b: Any) -> Sym:  # noqa: A001
    return binary("min", a, b)


def max(a: Any, b: Any) -> Sym:  # noqa: A001
    return binary("max", a, b)


def copysign(a: Any, b: Any) -> Sym:
    return binary("copysign", a, b)


def sign(x: Any) -> Any:
    """-1, 0 or 1 (0 at zero, as Penrose's sign)."""
    return select(binary("gt", x, 0.0), 1.0, select(binary("lt", x, 0.0), -1.0, 0.0))


def raw_sqrt(x: Any) -> Sym:
    """sqrt with the exact derivative 1 / (2 sqrt x) (infinite at 0)."""
    return unary("sqrt", x)


UNARY = {
    f.name: f
    for f in (
        exp,
        expm1,
        log,
        log1p,
        log2,
        log10,
        sin,
        cos,
        tan,
        asin,
        acos,
        atan,
        sinh,
        cosh,
        tanh,
        asinh,
        acosh,
        atanh,
        cbrt,
    )
}
BINARY = {f.name: f for f in (atan2, pow, hypot)}
