"""exp, expm1 and the hyperbolic functions built on them (fdlibm/musl algorithms and coefficients).

exp: x = k*ln2 + r with ln2 split in a 32-bit head (k*ln2_hi exact) and a tail; exp(r) from a
Remez rational form in r^2.  expm1: the same reduction, plus a correction term for the rounding of
hi - lo and a separate rational kernel so that tiny results keep full relative accuracy.
"""

from __future__ import annotations

import math
from fractions import Fraction

from adcore.wasm.encode import I32, I64
from adcore.wasm.fnbuild import (
    Fn,
    Val,
    Var,
    const,
    copysign,
    f64,
    fabs,
    from_bits,
    hi_word,
    poly,
    scalbn_exact,
    select,
    trunc_i32,
)
from adcore.wasm.libm import libm_function

LN2_HI = 6.93147180369123816490e-01  # 0x3fe62e42 fee00000: 32 bits, so k*LN2_HI is exact for |k| < 2^21
LN2_LO = 1.90821492927058770002e-10
INV_LN2 = 1.44269504088896338700e00
EXP_OVERFLOW = 7.09782712893383973096e02  # log(DBL_MAX)
EXP_UNDERFLOW = -7.45133219101941108420e02  # log(smallest subnormal) - half ulp
EXP_P = [
    1.66666666666666019037e-01,
    -2.77777777770155933842e-03,
    6.61375632143793436117e-05,
    -1.65339022054652515390e-06,
    4.13813679705723846039e-08,
]
EXPM1_Q = [
    -3.33333333333331316428e-02,
    1.58730158725481460165e-03,
    -7.93650757867487942473e-05,
    4.00821782732936239552e-06,
    -2.01099218183624371326e-07,
]
TWO_1023 = 2.0**1023


def ldexp(fn: Fn, y: Val, n: Val) -> Val:
    """y * 2**n for -2100 < n < 2100 without double rounding in the subnormal range (musl's scalbn)."""
    yv, nv = fn.let(y), fn.local(I32, n)
    with fn.if_(nv.gt(1023)):
        yv.set(yv * TWO_1023)
        nv.set(nv - 1023)
        nv.set(select(nv.gt(1023), 1023, nv))
    with fn.if_(nv.lt(-1022)):
        # Scale by 2^-1022 * 2^53 first: the intermediate stays normal, so only the last multiply rounds.
        yv.set(yv * 2.0**-969)
        nv.set(nv + 969)
        with fn.if_(nv.lt(-1022)):
            yv.set(yv * 2.0**-969)
            nv.set(nv + 969)
            nv.set(select(nv.lt(-1022), -1022, nv))
    return yv * scalbn_exact(nv)


def reduce_ln2(fn: Fn, x: Var, ax_hi: Val, hi: Var, lo: Var, k: Var) -> None:
    """k = round(x/ln2), hi - lo = x - k*ln2 (hi exact).  Callers ensure |x| > ln2/2."""
    with fn.if_(ax_hi.lt(0x3FF0A2B2)):  # |x| < 1.5 ln2: k = +-1
        k.set(select(x.lt(0.0), -1, 1))
        fn.else_()
        k.set(trunc_i32(x * INV_LN2 + copysign(f64(0.5), x)))
    hi.set(x - f64(k) * LN2_HI)
    lo.set(f64(k) * LN2_LO)


@libm_function("exp")
def build_exp(fn: Fn, idx: dict[str, int]) -> None:
    x = fn.param(0)
    ax_hi = fn.local(I32, hi_word(x) & 0x7FFFFFFF)
    with fn.if_(ax_hi.ge_u(0x40862E42)):  # |x| >= 709.78, or nan/inf
        with fn.if_(x.ne(x)):
            fn.ret(x + x)
        with fn.if_(x.gt(EXP_OVERFLOW)):
            fn.ret(float("inf"))
        with fn.if_(x.lt(EXP_UNDERFLOW)):
            fn.ret(0.0)
    with fn.if_(ax_hi.lt_u(0x3E300000)):  # |x| < 2^-28: exp(x) = 1 + x to within half an ulp
        fn.ret(1.0 + x)
    hi, lo, k = fn.local(), fn.local(), fn.local(I32)
    with fn.if_(ax_hi.gt_u(0x3FD62E42)):  # |x| > ln2/2
        reduce_ln2(fn, x, ax_hi, hi, lo, k)
        fn.else_()
        hi.set(x)
        lo.set(0.0)
        k.set(0)
    r = fn.let(hi - lo)
    z = fn.let(r * r)
    c = fn.let(r - z * poly(z, EXP_P))
    y = fn.let(1.0 + (r * c / (2.0 - c) - lo + hi))
    with fn.if_(k.eq(0)):
        fn.ret(y)
    fn.ret(ldexp(fn, y, k))


@libm_function("expm1")
def build_expm1(fn: Fn, idx: dict[str, int]) -> None:
    x0 = fn.param(0)
    x = fn.let(x0)
    hx = fn.local(I32, hi_word(x0) & 0x7FFFFFFF)
    neg = fn.local(I32, x0.lt(0.0))
    with fn.if_(hx.ge_u(0x4043687A)):  # |x| >= 56 ln2: result is -1 or exp(x)
        with fn.if_(x.ne(x)):
            fn.ret(x)
        with fn.if_(neg):
            fn.ret(-1.0)
        with fn.if_(x.gt(EXP_OVERFLOW)):
            fn.ret(float("inf"))
    hi, lo, c, k = fn.local(), fn.local(), fn.local(), fn.local(I32)
    with fn.if_(hx.gt_u(0x3FD62E42)):
        reduce_ln2(fn, x0, hx, hi, lo, k)
        x.set(hi - lo)
        c.set((hi - x) - lo)  # what the rounding of hi - lo lost
        fn.else_()
        with fn.if_(hx.lt_u(0x3C900000)):  # |x| < 2^-54 (also +-0, subnormals)
            fn.ret(x0)
        k.set(0)
        c.set(0.0)
    hfx = fn.let(0.5 * x)
    hxs = fn.let(x * hfx)
    r1 = fn.let(1.0 + hxs * poly(hxs, EXPM1_Q))
    t = fn.let(3.0 - r1 * hfx)
    e = fn.let(hxs * ((r1 - t) / (6.0 - x * t)))
    with fn.if_(k.eq(0)):
        fn.ret(x - (x * e - hxs))
    e.set(x * (e - c) - c)
    e.set(e - hxs)
    with fn.if_(k.eq(-1)):
        fn.ret(0.5 * (x - e) - 0.5)
    with fn.if_(k.eq(1)):
        with fn.if_(x.lt(-0.25)):
            fn.ret(-2.0 * (e - (x + 0.5)))
        fn.ret(1.0 + 2.0 * (x - e))
    with fn.if_(k.lt(0) | k.gt(56)):
        y = fn.let(x - e + 1.0)
        with fn.if_(k.eq(1024)):
            fn.ret(y * 2.0 * TWO_1023 - 1.0)
        fn.ret(y * scalbn_exact(k) - 1.0)
    two_minus_k = scalbn_exact(0 - k)
    with fn.if_(k.lt(20)):
        fn.ret((x - e + (1.0 - two_minus_k)) * scalbn_exact(k))
    fn.ret((x - (e + two_minus_k) + 1.0) * scalbn_exact(k))


# exp(x - K*ln2) * 2^(K/2) * 2^(K/2) reaches the top of the double range without overflowing early.
EXPO2_K = 2043
EXPO2_KLN2 = float.fromhex("0x1.62066151add8bp+10")


def expo2(fn: Fn, idx: dict[str, int], ax: Val, sign: Val) -> Val:
    scale = from_bits(const(I64, (0x3FF + EXPO2_K // 2) << 52))
    return fn.call(idx["exp"], ax - EXPO2_KLN2) * (sign * scale) * scale


def bernoulli(n: int) -> list[Fraction]:
    """B_0..B_n (B_1 = +1/2) by the Akiyama-Tanigawa algorithm, exactly."""
    out, row = [], [Fraction(0)] * (n + 1)
    for m in range(n + 1):
        row[m] = Fraction(1, m + 1)
        for j in range(m, 0, -1):
            row[j - 1] = j * (row[j - 1] - row[j])
        out.append(row[0])
    return out


# Taylor series, rounded once from exact rationals: sinh x = x + x*z*P(z), tanh x = x + x*z*Q(z), z = x^2.
# On |x| < 1 (sinh) and |x| < 0.55 (tanh) the truncation error is below 2^-60 relative, and the
# correction term is small next to x, so the result is within ~0.6 ulp; the expm1-based formulas
# they replace lose up to 2 ulp there.
SINH_TAYLOR = [1.0 / math.factorial(2 * k + 3) for k in range(9)]
_B = bernoulli(44)
TANH_TAYLOR = [
    float(Fraction(2 ** (2 * n) * (2 ** (2 * n) - 1), math.factorial(2 * n)) * _B[2 * n])
    for n in range(2, 23)
]


@libm_function("sinh", deps=("expm1", "exp"))
def build_sinh(fn: Fn, idx: dict[str, int]) -> None:
    x = fn.param(0)
    h = fn.let(copysign(f64(0.5), x))
    ax = fn.let(fabs(x))
    w = fn.local(I32, hi_word(ax))
    with fn.if_(w.lt_u(0x3FF00000)):  # |x| < 1
        with fn.if_(w.lt_u(0x3E500000)):  # |x| < 2^-26: sinh x = x
            fn.ret(x)
        z = fn.let(x * x)
        fn.ret(x + x * z * poly(z, SINH_TAYLOR))
    with fn.if_(w.lt_u(0x40862E42)):  # |x| < log(DBL_MAX)
        t = fn.let(fn.call(idx["expm1"], ax))
        fn.ret(h * (t + t / (t + 1.0)))
    fn.ret(expo2(fn, idx, ax, 2.0 * h))


@libm_function("cosh", deps=("expm1", "exp"))
def build_cosh(fn: Fn, idx: dict[str, int]) -> None:
    ax = fn.let(fabs(fn.param(0)))
    w = fn.local(I32, hi_word(ax))
    with fn.if_(w.lt_u(0x3FE62E42)):  # |x| < ln2
        with fn.if_(w.lt_u(0x3FF00000 - (26 << 20))):
            fn.ret(1.0)
        t = fn.let(fn.call(idx["expm1"], ax))
        fn.ret(1.0 + t * t / (2.0 * (1.0 + t)))
    with fn.if_(w.lt_u(0x40862E42)):
        t = fn.let(fn.call(idx["exp"], ax))
        fn.ret(0.5 * (t + 1.0 / t))
    fn.ret(expo2(fn, idx, ax, f64(1.0)))


@libm_function("tanh", deps=("expm1",))
def build_tanh(fn: Fn, idx: dict[str, int]) -> None:
    x = fn.param(0)
    ax = fn.let(fabs(x))
    w = fn.local(I32, hi_word(ax))
    with fn.if_(w.le_u(0x3FE193EA)):  # |x| <= log(3)/2 ~ 0.549
        with fn.if_(w.lt_u(0x3E300000)):  # |x| < 2^-28 (and +-0, subnormals): tanh x = x
            fn.ret(x)
        z = fn.let(x * x)
        fn.ret(x + x * z * poly(z, TANH_TAYLOR))
    t = fn.local()
    with fn.if_(w.gt_u(0x40340000)):  # |x| > 20: 1 (nan stays nan)
        t.set(1.0 - 0.0 / ax)
        fn.else_()
        t.set(fn.call(idx["expm1"], 2.0 * ax))
        t.set(1.0 - 2.0 / (t + 2.0))
    fn.ret(copysign(t, x))
