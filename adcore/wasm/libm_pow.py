"""pow(x, y) with C99 special cases (fdlibm's algorithm and coefficients).

pow = 2^(y * log2|x|), with log2|x| carried as t1 + t2 (t1 with its low word cleared, ~20 extra
bits) and y split the same way, so y*log2|x| = p_h + p_l nearly exactly; then 2^(p_h + p_l) by
reduction to [-1/2, 1/2] and exp's rational kernel.  log2|x| uses |x| = 2^n * ax with ax in
[1, sqrt(3)) and s = (ax - b)/(ax + b), b in {1, 1.5}, a Remez series in s^2.
"""

from __future__ import annotations

from adcore.wasm.encode import I32
from adcore.wasm.fnbuild import (
    Fn,
    Val,
    Var,
    bits,
    clear_lo,
    f64,
    fabs,
    from_words,
    hi_word,
    lo_word,
    nearest,
    select,
    sqrt,
    trunc_i32,
)
from adcore.wasm.libm import libm_function
from adcore.wasm.libm_exp import EXP_P, ldexp

BP = [1.0, 1.5]
DP_H = [0.0, 5.84962487220764160156e-01]  # log2(1.5) head
DP_L = [0.0, 1.35003920212974897128e-08]  # log2(1.5) tail
L = [
    5.99999999999994648725e-01,
    4.28571428578550184252e-01,
    3.33333329818377432918e-01,
    2.72728123808534006489e-01,
    2.30660745775561754067e-01,
    2.06975017800338417784e-01,
]
LG2 = 6.93147180559945286227e-01
LG2_H, LG2_L = 6.93147182464599609375e-01, -1.90465429995776804525e-09
OVT = 8.0085662595372944372e-17  # -(1024 - log2(DBL_MAX + half ulp))
CP, CP_H, CP_L = 9.61796693925975554329e-01, 9.61796700954437255859e-01, -7.02846165095275826516e-09
IVLN2, IVLN2_H, IVLN2_L = 1.44269504088896338700e00, 1.44269502162933349609e00, 1.92596299112661746887e-08
HUGE, TINY = 1.0e300, 1.0e-300


def y_parity(fn: Fn, y: Var, iy: Var, ly: Var) -> Var:
    """0: y not an integer, 1: odd integer, 2: even integer (from the bits of |y|)."""
    yisint = fn.local(I32, 0)
    with fn.if_(iy.ge_u(0x43400000)):  # |y| >= 2^53: even
        yisint.set(2)
        fn.else_()
        with fn.if_(iy.ge_u(0x3FF00000)):
            k = fn.local(I32, iy.shr_u(20) - 0x3FF)
            with fn.if_(k.gt(20)):
                j = fn.local(I32, ly.shr_u(52 - k))
                with fn.if_((j << (52 - k)).eq(ly)):
                    yisint.set(2 - (j & 1))
                fn.else_()
                with fn.if_(ly.eq(0)):
                    j = fn.local(I32, iy.shr_u(20 - k))
                    with fn.if_((j << (20 - k)).eq(iy)):
                        yisint.set(2 - (j & 1))
    return yisint


@libm_function("pow", arity=2)
def build_pow(fn: Fn, idx: dict[str, int]) -> None:
    x, y = fn.param(0), fn.param(1)
    hx, lx = fn.local(I32, hi_word(x)), fn.local(I32, lo_word(x))
    hy, ly = fn.local(I32, hi_word(y)), fn.local(I32, lo_word(y))
    ix, iy = fn.local(I32, hx & 0x7FFFFFFF), fn.local(I32, hy & 0x7FFFFFFF)

    with fn.if_((iy | ly).eq(0)):
        fn.ret(1.0)  # x^0 = 1, even for nan
    with fn.if_(bits(x).eq(bits(f64(1.0)))):
        fn.ret(1.0)  # 1^y = 1, even for nan
    with fn.if_(x.ne(x) | y.ne(y)):
        fn.ret(x + y)
    yisint = fn.local(I32, 0)
    with fn.if_(hx.lt(0)):
        yisint.set(y_parity(fn, y, iy, ly))

    with fn.if_(ly.eq(0)):  # y = +-inf, +-1, 2, 1/2 shortcuts
        with fn.if_(iy.eq(0x7FF00000)):
            with fn.if_(((ix - 0x3FF00000) | lx).eq(0)):
                fn.ret(1.0)  # (-1)^+-inf
            with fn.if_(ix.ge_u(0x3FF00000)):
                fn.ret(select(hy.ge(0), y, f64(0.0)))
            fn.ret(select(hy.ge(0), f64(0.0), -y))
        with fn.if_(iy.eq(0x3FF00000)):
            with fn.if_(hy.ge(0)):
                fn.ret(x)
            fn.ret(1.0 / x)
        with fn.if_(hy.eq(0x40000000)):
            fn.ret(x * x)
        with fn.if_(hy.eq(0x3FE00000) & hx.ge(0)):
            fn.ret(sqrt(x))

    ax = fn.let(fabs(x))
    with fn.if_(lx.eq(0) & (ix.eq(0x7FF00000) | ix.eq(0) | ix.eq(0x3FF00000))):  # x = +-0, +-inf, +-1
        z = fn.let(ax)
        with fn.if_(hy.lt(0)):
            z.set(1.0 / z)
        with fn.if_(hx.lt(0)):
            with fn.if_(((ix - 0x3FF00000) | yisint).eq(0)):
                fn.ret(float("nan"))  # (-1)^non-integer
            with fn.if_(yisint.eq(1)):
                z.set(-z)
        fn.ret(z)

    sign = fn.let(f64(1.0))
    with fn.if_(hx.lt(0)):
        with fn.if_(yisint.eq(0)):
            fn.ret(float("nan"))  # negative^non-integer
        with fn.if_(yisint.eq(1)):
            sign.set(-1.0)

    t1, t2 = fn.local(), fn.local()
    with fn.if_(iy.gt_u(0x41E00000)):  # |y| > 2^31
        with fn.if_(iy.gt_u(0x43F00000)):  # |y| > 2^64: surely over/underflows unless x == 1
            with fn.if_(ix.le_u(0x3FEFFFFF)):
                fn.ret(select(hy.lt(0), f64(HUGE * HUGE), f64(TINY * TINY)))
            with fn.if_(ix.ge_u(0x3FF00000)):
                fn.ret(select(hy.gt(0), f64(HUGE * HUGE), f64(TINY * TINY)))
        with fn.if_(ix.lt_u(0x3FEFFFFF)):
            fn.ret(sign * select(hy.lt(0), f64(HUGE * HUGE), f64(TINY * TINY)))
        with fn.if_(ix.gt_u(0x3FF00000)):
            fn.ret(sign * select(hy.gt(0), f64(HUGE * HUGE), f64(TINY * TINY)))
        # |1 - x| <= 2^-20: log(x) from its Taylor series.
        t = fn.let(ax - 1.0)
        w = fn.let((t * t) * (0.5 - t * (0.3333333333333333333333 - t * 0.25)))
        u = fn.let(IVLN2_H * t)
        v = fn.let(t * IVLN2_L - w * IVLN2)
        t1.set(clear_lo(u + v))
        t2.set(v - (t1 - u))
        fn.else_()
        log2_abs_x(fn, ax, ix, t1, t2)

    # (y1 + y2) * (t1 + t2) with y1 = y with low word cleared (products stay exact enough).
    y1 = fn.let(clear_lo(y))
    p_l = fn.let((y - y1) * t1 + y * t2)
    p_h = fn.let(y1 * t1)
    z = fn.let(p_l + p_h)
    j, i = fn.local(I32, hi_word(z)), fn.local(I32, lo_word(z))
    with fn.if_(j.ge(0x40900000)):  # z >= 1024
        with fn.if_(((j - 0x40900000) | i).ne(0) | (p_l + OVT).gt(z - p_h)):
            fn.ret(sign * HUGE * HUGE)
        fn.else_()
        underflow = ((j - 0xC090CC00) | i).ne(0) | p_l.le(z - p_h)
        with fn.if_((j & 0x7FFFFFFF).ge_u(0x4090CC00) & underflow):  # z <= -1075
            fn.ret(sign * TINY * TINY)
    fn.ret(sign * exp2_parts(fn, p_h, p_l))


def log2_abs_x(fn: Fn, ax: Var, ix: Var, t1: Var, t2: Var) -> None:
    """log2(ax) = t1 + t2 for finite ax > 0."""
    n = fn.local(I32, 0)
    with fn.if_(ix.lt_u(0x00100000)):  # subnormal
        ax.set(ax * 9007199254740992.0)
        n.set(-53)
        ix.set(hi_word(ax))
    n.set(n + (ix.shr_u(20) - 0x3FF))
    j = fn.local(I32, ix & 0x000FFFFF)
    ix.set(j | 0x3FF00000)
    k = fn.local(I32, 0)
    with fn.if_(j.gt_u(0x3988E)):  # noqa: SIM117 - mantissa >= sqrt(3/2); the inner if has an else
        with fn.if_(j.lt_u(0xBB67A)):  # < sqrt(3): use b = 1.5
            k.set(1)
            fn.else_()
            n.set(n + 1)
            ix.set(ix - 0x00100000)
    ax.set(from_words(ix, lo_word(ax)))
    bp = fn.let(select(k, f64(BP[1]), f64(BP[0])))
    dp_h = select(k, f64(DP_H[1]), f64(DP_H[0]))
    dp_l = select(k, f64(DP_L[1]), f64(DP_L[0]))

    # ss = s_h + s_l = (ax - bp)/(ax + bp) in extra precision.
    u = fn.let(ax - bp)
    v = fn.let(1.0 / (ax + bp))
    ss = fn.let(u * v)
    s_h = fn.let(clear_lo(ss))
    t_h = fn.let(from_words(((ix >> 1) | 0x20000000) + 0x00080000 + (k << 18), 0))  # ~ ax + bp
    t_l = fn.let(ax - (t_h - bp))
    s_l = fn.let(v * ((u - s_h * t_h) - s_h * t_l))
    s2 = fn.let(ss * ss)
    r = fn.let(s2 * s2 * (L[0] + s2 * (L[1] + s2 * (L[2] + s2 * (L[3] + s2 * (L[4] + s2 * L[5]))))))
    r.set(r + s_l * (s_h + ss))
    s2.set(s_h * s_h)
    t_h.set(clear_lo(3.0 + s2 + r))
    t_l.set(r - ((t_h - 3.0) - s2))
    u.set(s_h * t_h)
    v.set(s_l * t_h + t_l * ss)
    p_h = fn.let(clear_lo(u + v))
    p_l = fn.let(v - (p_h - u))
    z_h = fn.let(CP_H * p_h)  # 2/(3 ln 2) * (ss + ...)
    z_l = fn.let(CP_L * p_h + p_l * CP + dp_l)
    t = fn.let(f64(n))
    t1.set(clear_lo(((z_h + z_l) + dp_h) + t))
    t2.set(z_l - (((t1 - t) - dp_h) - z_h))


def exp2_parts(fn: Fn, p_h: Var, p_l: Var) -> Val:
    """2^(p_h + p_l) for -1075 <= p_h + p_l <= 1024: n = round, then 2^r = exp(r ln 2)."""
    n = fn.local(I32, trunc_i32(nearest(p_h + p_l)))
    p_h.set(p_h - f64(n))  # exact: p_h is within 1/2 (+ tiny) of n
    t = fn.let(clear_lo(p_l + p_h))
    u = fn.let(t * LG2_H)
    v = fn.let((p_l - (t - p_h)) * LG2 + t * LG2_L)
    z = fn.let(u + v)
    w = fn.let(v - (z - u))
    t.set(z * z)
    t1 = fn.let(z - t * (EXP_P[0] + t * (EXP_P[1] + t * (EXP_P[2] + t * (EXP_P[3] + t * EXP_P[4])))))
    r = fn.let((z * t1) / (t1 - 2.0) - (w + z * w))
    z.set(1.0 - (r - z))
    return ldexp(fn, z, n)
