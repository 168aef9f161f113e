"""Logarithms and the functions built on them: log, log1p, log2, log10, asinh, acosh, atanh, cbrt.

All logarithms reduce x = 2^k * (1+f) with 1+f in [sqrt(2)/2, sqrt(2)) and evaluate
log(1+f) = f - f^2/2 + s*(f^2/2 + R(s^2)), s = f/(2+f), with fdlibm's Remez coefficients.
log2/log10 keep log(1+f) as an unevaluated sum hi + lo (hi with 21 significant bits) so that the
multiplication by 1/ln(2) or 1/ln(10) adds no visible error.
"""

from __future__ import annotations

from adcore.wasm.encode import I32
from adcore.wasm.fnbuild import (
    Fn,
    Val,
    Var,
    bits,
    clear_lo,
    copysign,
    extend_u,
    f64,
    fabs,
    from_bits,
    from_words,
    hi_word,
    lo_word,
    split,
    sqrt,
    two_sum,
)
from adcore.wasm.libm import libm_function

LN2_HI = 6.93147180369123816490e-01
LN2_LO = 1.90821492927058770002e-10
LG = [
    6.666666666666735130e-01,
    3.999999999940941908e-01,
    2.857142874366239149e-01,
    2.222219843214978396e-01,
    1.818357216161805012e-01,
    1.531383769920937332e-01,
    1.479819860511658591e-01,
]
IVLN10_HI, IVLN10_LO = 4.34294481878168880939e-01, 2.50829467116452752298e-11
LOG10_2_HI, LOG10_2_LO = 3.01029995663611771306e-01, 3.69423907715893078616e-13
IVLN2_HI, IVLN2_LO = 1.44269504072144627571e00, 1.67517131648865118353e-10
SQRT2_HALF_HI = 0x3FE6A09E  # high word of sqrt(2)/2


def log_special_or_reduce(fn: Fn, x: Var) -> tuple[Var, Var]:
    """Handle x <= 0, subnormal, inf/nan, 1; return (k, f) with x = 2^k (1+f)."""
    hx = fn.local(I32, hi_word(x))
    k = fn.local(I32, 0)
    with fn.if_(hx.lt_u(0x00100000) | hx.lt(0)):
        with fn.if_((bits(x) << 1).eq(0)):
            fn.ret(float("-inf"))  # log(+-0)
        with fn.if_(hx.lt(0)):
            fn.ret(float("nan"))  # log(negative)
        k.set(-54)  # subnormal: scale into the normal range
        x.set(x * 2.0**54)
        hx.set(hi_word(x))
    with fn.if_(hx.ge_u(0x7FF00000)):
        fn.ret(x)  # +inf or nan
    # Shift the split point of the exponent from 1 to sqrt(2)/2 by adding an offset to the high word.
    hx.set(hx + (0x3FF00000 - SQRT2_HALF_HI))
    k.set(k + (hx.shr_u(20) - 0x3FF))
    hx.set((hx & 0x000FFFFF) + SQRT2_HALF_HI)
    f = fn.let(from_words(hx, lo_word(x)) - 1.0)
    return k, f


def log1p_parts(fn: Fn, f: Var) -> tuple[Var, Var, Var]:
    """(hfsq, s, R) of the log kernel for log(1+f)."""
    hfsq = fn.let(0.5 * f * f)
    s = fn.let(f / (2.0 + f))
    z = fn.let(s * s)
    w = fn.let(z * z)
    t1 = w * (LG[1] + w * (LG[3] + w * LG[5]))
    t2 = z * (LG[0] + w * (LG[2] + w * (LG[4] + w * LG[6])))
    r = fn.let(t2 + t1)
    return hfsq, s, r


def log_hi_lo(fn: Fn, f: Var) -> tuple[Var, Var]:
    """log(1+f) = hi + lo with hi having its low word cleared (so hi * constant_hi is exact)."""
    hfsq, s, r = log1p_parts(fn, f)
    hi = fn.let(clear_lo(f - hfsq))
    lo = fn.let(f - hi - hfsq + s * (hfsq + r))
    return hi, lo


@libm_function("log")
def build_log(fn: Fn, idx: dict[str, int]) -> None:
    x = fn.let(fn.param(0))
    k, f = log_special_or_reduce(fn, x)
    hfsq, s, r = log1p_parts(fn, f)
    dk = fn.let(f64(k))
    fn.ret(s * (hfsq + r) + dk * LN2_LO - hfsq + f + dk * LN2_HI)


@libm_function("log2")
def build_log2(fn: Fn, idx: dict[str, int]) -> None:
    x = fn.let(fn.param(0))
    k, f = log_special_or_reduce(fn, x)
    hi, lo = log_hi_lo(fn, f)
    val_hi = fn.let(hi * IVLN2_HI)
    val_lo = fn.let((lo + hi) * IVLN2_LO + lo * IVLN2_HI)
    y = fn.let(f64(k))
    w = fn.let(y + val_hi)
    val_lo.set(val_lo + ((y - w) + val_hi))
    fn.ret(val_lo + w)


@libm_function("log10")
def build_log10(fn: Fn, idx: dict[str, int]) -> None:
    x = fn.let(fn.param(0))
    k, f = log_special_or_reduce(fn, x)
    hi, lo = log_hi_lo(fn, f)
    dk = fn.let(f64(k))
    val_hi = fn.let(hi * IVLN10_HI)
    y = fn.let(dk * LOG10_2_HI)
    val_lo = fn.let(dk * LOG10_2_LO + (lo + hi) * IVLN10_LO + lo * IVLN10_HI)
    w = fn.let(y + val_hi)
    val_lo.set(val_lo + ((y - w) + val_hi))
    fn.ret(val_lo + w)


@libm_function("log1p")
def build_log1p(fn: Fn, idx: dict[str, int]) -> None:
    x = fn.param(0)
    hx = fn.local(I32, hi_word(x))
    k, f, c = fn.local(I32, 1), fn.local(), fn.local()
    with fn.if_(hx.lt_u(0x3FDA827A) | hx.lt(0)):  # 1+x < sqrt(2)
        with fn.if_(hx.ge_u(0xBFF00000)):  # x <= -1
            with fn.if_(x.eq(-1.0)):
                fn.ret(float("-inf"))
            fn.ret(float("nan"))  # also for nan inputs with the sign bit set
        with fn.if_((hx << 1).lt_u(0x3CA00000 << 1)):  # |x| < 2^-53
            fn.ret(x)
        with fn.if_(hx.le_u(0xBFD2BEC4)):  # sqrt(2)/2 <= 1+x: no reduction needed
            k.set(0)
            c.set(0.0)
            f.set(x)
    fn_hi_ge = hx.ge_u(0x7FF00000)
    with fn.if_(fn_hi_ge & hx.ge(0)):
        fn.ret(x)
    with fn.if_(k):
        u = fn.let(1.0 + x)
        hu = fn.local(I32, hi_word(u) + (0x3FF00000 - SQRT2_HALF_HI))
        k.set(hu.shr_u(20) - 0x3FF)
        # c ~ log(1+x) - log(u): the rounding error of 1+x, relative to u.
        with fn.if_(k.lt(54)):
            with fn.if_(k.ge(2)):
                c.set(1.0 - (u - x))
                fn.else_()
                c.set(x - (u - 1.0))
            c.set(c / u)
            fn.else_()
            c.set(0.0)
        hu.set((hu & 0x000FFFFF) + SQRT2_HALF_HI)
        f.set(from_words(hu, lo_word(u)) - 1.0)
    hfsq, s, r = log1p_parts(fn, f)
    dk = fn.let(f64(k))
    fn.ret(s * (hfsq + r) + (dk * LN2_LO + c) - hfsq + f + dk * LN2_HI)


def biased_exponent(x: Var) -> Var:
    return x.fn.local(I32, hi_word(x).shr_u(20) & 0x7FF)


@libm_function("asinh", deps=("log", "log1p"))
def build_asinh(fn: Fn, idx: dict[str, int]) -> None:
    x0 = fn.param(0)
    x = fn.let(fabs(x0))
    e = biased_exponent(x)
    with fn.if_(e.ge_u(0x3FF + 26)):  # |x| >= 2^26 (and inf/nan): log(2|x|)
        fn.ret(copysign(fn.call(idx["log"], x) + 0.693147180559945309417232121458176568, x0))
    with fn.if_(e.ge_u(0x3FF + 1)):  # |x| >= 2
        fn.ret(copysign(fn.call(idx["log"], 2.0 * x + 1.0 / (sqrt(x * x + 1.0) + x)), x0))
    with fn.if_(e.ge_u(0x3FF - 26)):
        # log1p(x + (sqrt(1 + x^2) - 1)) with the square root in double-double: s - 1 is exact.
        a, a_lo = square_plus(fn, x, f64(1.0))
        s, s_lo = sqrt_dd(fn, a, a_lo)
        u, u_err = two_sum(fn, x, s - 1.0)
        fn.ret(copysign(log1p_dd(fn, idx, u, u_err + s_lo), x0))
    fn.ret(x0)  # tiny: asinh x = x


@libm_function("acosh", deps=("log", "log1p"))
def build_acosh(fn: Fn, idx: dict[str, int]) -> None:
    x = fn.param(0)
    e = biased_exponent(x)
    with fn.if_(x.lt(1.0)):
        fn.ret(float("nan"))
    with fn.if_(e.lt_u(0x3FF + 1)):  # 1 <= x < 2: acosh = log1p(t + sqrt(t^2 + 2t)), t = x-1 exact
        t = fn.let(x - 1.0)
        with fn.if_(t.eq(0.0)):
            fn.ret(0.0)  # acosh(1) = +0 (the correction below would divide by sqrt(0))
        fn.ret(acosh_near_one(fn, idx, t))
    with fn.if_(e.lt_u(0x3FF + 26)):
        fn.ret(fn.call(idx["log"], 2.0 * x - 1.0 / (x + sqrt(x * x - 1.0))))
    fn.ret(fn.call(idx["log"], x) + 0.693147180559945309417232121458176568)


def square_plus(fn: Fn, t: Var, c: Val) -> tuple[Var, Var]:
    """t^2 + c as an unevaluated double-double sum (hi, lo)."""
    th, tl = split(fn, t)
    sq = fn.let(t * t)
    sq_lo = fn.let(((th * th - sq) + 2.0 * th * tl) + tl * tl)  # t^2 = sq + sq_lo exactly
    a, a_err = two_sum(fn, c, sq)
    return a, fn.let(a_err + sq_lo)


def sqrt_dd(fn: Fn, a: Var, a_lo: Var) -> tuple[Var, Var]:
    """sqrt(a + a_lo) ~ s + s_lo: one Newton correction (a - s^2 + a_lo)/(2s), a - s^2 exact."""
    s = fn.let(sqrt(a))
    sh, sl = split(fn, s)
    return s, fn.let((((a - sh * sh) - 2.0 * sh * sl) - sl * sl + a_lo) / (2.0 * s))


def log1p_dd(fn: Fn, idx: dict[str, int], hi: Val, lo: Val) -> Val:
    """log1p(hi + lo) ~ log1p(hi) + lo/(1 + hi) for |lo| << |hi|."""
    h, l = two_sum(fn, hi, lo)
    return fn.call(idx["log1p"], h) + l / (1.0 + h)


def acosh_near_one(fn: Fn, idx: dict[str, int], t: Var) -> Val:
    """log1p(t + sqrt(t^2 + 2t)) with t^2 + 2t, its square root and the sum kept in double-double,
    so only log1p's own error remains (the plain formula loses up to 2 ulp near x = 1)."""
    a, a_lo = square_plus(fn, t, 2.0 * t)
    s, s_lo = sqrt_dd(fn, a, a_lo)
    u, u_err = two_sum(fn, t, s)
    return log1p_dd(fn, idx, u, u_err + s_lo)


@libm_function("atanh", deps=("log1p",))
def build_atanh(fn: Fn, idx: dict[str, int]) -> None:
    x0 = fn.param(0)
    y = fn.let(fabs(x0))
    e = biased_exponent(y)
    with fn.if_(e.lt_u(0x3FF - 32)):
        fn.ret(x0)  # tiny (and +-0, subnormal): atanh x = x
    with fn.if_(y.ge(1.0) | y.ne(y)):  # 1 -> inf, beyond -> nan
        fn.ret(copysign(0.5 * fn.call(idx["log1p"], 2.0 * (y / (1.0 - y))), x0))
    # atanh y = log1p(q)/2 with q = 2y/(1-y) carried as q + q_lo: the rounding of 1-y and of the
    # quotient are recovered exactly (two_sum, Dekker's remainder), leaving only log1p's error.
    d, d_err = two_sum(fn, f64(1.0), -y)
    q = fn.let(2.0 * y / d)
    qh, ql = split(fn, q)
    dh, dl = split(fn, d)
    remainder = fn.let((((2.0 * y - qh * dh) - qh * dl) - ql * dh) - ql * dl)
    q_lo = fn.let((remainder - q * d_err) / d)
    fn.ret(copysign(0.5 * (fn.call(idx["log1p"], q) + q_lo / (1.0 + q)), x0))


CBRT_B1 = 715094163  # (1023 - 1023/3 - 0.03306235651) * 2^20: exponent/3 with a bias for the first guess
CBRT_B2 = 696219795  # the same for subnormals pre-scaled by 2^54
CBRT_P = [1.87595182427177009643, -1.88497979543377169875, 1.621429720105354466140]
CBRT_P34 = [-0.758397934778766047437, 0.145996192886612446982]


@libm_function("cbrt")
def build_cbrt(fn: Fn, idx: dict[str, int]) -> None:
    x = fn.param(0)
    hx = fn.local(I32, hi_word(x) & 0x7FFFFFFF)
    with fn.if_(hx.ge_u(0x7FF00000)):
        fn.ret(x + x)
    with fn.if_(hx.lt_u(0x00100000)):
        hx.set(hi_word(x * 2.0**54) & 0x7FFFFFFF)
        with fn.if_(hx.eq(0)):
            fn.ret(x)  # +-0
        hx.set(hx._bin("div_u", 3) + CBRT_B2)
        fn.else_()
        hx.set(hx._bin("div_u", 3) + CBRT_B1)
    # First guess to ~5 bits from the exponent, then a polynomial step to ~23 bits.
    sign = bits(x) & (1 << 63)
    t = fn.let(from_bits(sign | (extend_u(hx) << 32)))
    r = fn.let((t * t) * (t / x))
    t.set(
        t * ((CBRT_P[0] + r * (CBRT_P[1] + r * CBRT_P[2])) + ((r * r) * r) * (CBRT_P34[0] + r * CBRT_P34[1]))
    )
    # Round t away from zero to 23 bits so t*t is exact, then one Newton step to 53 bits.
    t.set(from_bits((bits(t) + 0x80000000) & -0x40000000))
    s = fn.let(t * t)
    r.set(x / s)
    w = fn.let(t + t)
    r.set((r - t) / (w + r))
    fn.ret(t + t * r)
