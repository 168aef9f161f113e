"""Inverse trigonometric functions and hypot (fdlibm algorithms and coefficients).

asin/acos: a rational approximation of (asin(x) - x)/x^3 in x^2 near 0; near |x| = 1 the identity
asin(x) = pi/2 - 2 asin(sqrt((1-x)/2)) with sqrt split in hi + lo.  atan: reduce |x| to [0, 7/16]
with atan(x) = atan(c) + atan((x - c)/(1 + x c)) for c in {1/2, 1, 3/2, inf}.
"""

from __future__ import annotations

from adcore.wasm.encode import I32, I64
from adcore.wasm.fnbuild import (
    Fn,
    Val,
    Var,
    bits,
    clear_lo,
    copysign,
    f64,
    fabs,
    from_bits,
    hi_word,
    lo_word,
    sqrt,
    wrap,
)
from adcore.wasm.libm import libm_function

PIO2_HI, PIO2_LO = 1.57079632679489655800e00, 6.12323399573676603587e-17
PI, PI_LO = 3.1415926535897931160e00, 1.2246467991473531772e-16
PS = [
    1.66666666666666657415e-01,
    -3.25565818622400915405e-01,
    2.01212532134862925881e-01,
    -4.00555345006794114027e-02,
    7.91534994289814532176e-04,
    3.47933107596021167570e-05,
]
QS = [
    -2.40339491173441421878e00,
    2.02094576023350569471e00,
    -6.88283971605453293030e-01,
    7.70381505559019352791e-02,
]
ATAN_HI = [4.63647609000806093515e-01, 7.85398163397448278999e-01, 9.82793723247329054082e-01, PIO2_HI]
ATAN_LO = [2.26987774529616870924e-17, 3.06161699786838301793e-17, 1.39033110312309984516e-17, PIO2_LO]
AT = [
    3.33333333333329318027e-01,
    -1.99999999998764832476e-01,
    1.42857142725034663711e-01,
    -1.11111104054623557880e-01,
    9.09088713343650656196e-02,
    -7.69187620504482999495e-02,
    6.66107313738753120669e-02,
    -5.83357013379057348645e-02,
    4.97687799461593236017e-02,
    -3.65315727442169155270e-02,
    1.62858201153657823623e-02,
]


def asin_rational(fn: Fn, z: Val) -> Var:
    """R(z) ~ (asin(x) - x)/x with z = x^2 (Remez on [0, 0.25])."""
    zv = fn.let(z)
    p = zv * (PS[0] + zv * (PS[1] + zv * (PS[2] + zv * (PS[3] + zv * (PS[4] + zv * PS[5])))))
    q = 1.0 + zv * (QS[0] + zv * (QS[1] + zv * (QS[2] + zv * QS[3])))
    return fn.let(p / q)


def is_unit(fn: Fn, x: Val, ix: Val) -> Val:
    """|x| == 1 exactly."""
    return ((ix - 0x3FF00000) | lo_word(x)).eq(0)


@libm_function("asin")
def build_asin(fn: Fn, idx: dict[str, int]) -> None:
    x = fn.param(0)
    ix = fn.local(I32, hi_word(x) & 0x7FFFFFFF)
    with fn.if_(ix.ge_u(0x3FF00000)):  # |x| >= 1 (or nan)
        with fn.if_(is_unit(fn, x, ix)):
            fn.ret(x * PIO2_HI + x * 2.0**-120)
        fn.ret(float("nan") + x)
    with fn.if_(ix.lt_u(0x3FE00000)):  # |x| < 0.5
        with fn.if_(ix.lt_u(0x3E500000)):  # |x| < 2^-26
            fn.ret(x)
        fn.ret(x + x * asin_rational(fn, x * x))
    z = fn.let((1.0 - fabs(x)) * 0.5)
    s = fn.let(sqrt(z))
    r = asin_rational(fn, z)
    res = fn.local()
    with fn.if_(ix.ge_u(0x3FEF3333)):  # |x| > 0.975
        res.set(PIO2_HI - (2.0 * (s + s * r) - PIO2_LO))
        fn.else_()
        # sqrt(z) = f + c with f having 21 bits, so 2f is exact and the cancellation is benign.
        f = fn.let(clear_lo(s))
        c = fn.let((z - f * f) / (s + f))
        res.set(0.5 * PIO2_HI - (2.0 * s * r - (PIO2_LO - 2.0 * c) - (0.5 * PIO2_HI - 2.0 * f)))
    fn.ret(copysign(res, x))


@libm_function("acos")
def build_acos(fn: Fn, idx: dict[str, int]) -> None:
    x = fn.param(0)
    hx = fn.local(I32, hi_word(x))
    ix = fn.local(I32, hx & 0x7FFFFFFF)
    with fn.if_(ix.ge_u(0x3FF00000)):
        with fn.if_(is_unit(fn, x, ix)):
            with fn.if_(hx.lt(0)):
                fn.ret(2.0 * PIO2_HI + 2.0**-120)
            fn.ret(0.0)
        fn.ret(float("nan") + x)
    with fn.if_(ix.lt_u(0x3FE00000)):  # |x| < 0.5
        with fn.if_(ix.le_u(0x3C600000)):  # |x| < 2^-57
            fn.ret(PIO2_HI + 2.0**-120)
        fn.ret(PIO2_HI - (x - (PIO2_LO - x * asin_rational(fn, x * x))))
    with fn.if_(hx.lt(0)):  # x <= -0.5: acos x = pi - 2 asin(sqrt((1+x)/2))
        z = fn.let((1.0 + x) * 0.5)
        s = fn.let(sqrt(z))
        w = fn.let(asin_rational(fn, z) * s - PIO2_LO)
        fn.ret(2.0 * (PIO2_HI - (s + w)))
    z = fn.let((1.0 - x) * 0.5)
    s = fn.let(sqrt(z))
    df = fn.let(clear_lo(s))
    c = fn.let((z - df * df) / (s + df))
    w = fn.let(asin_rational(fn, z) * s + c)
    fn.ret(2.0 * (df + w))


@libm_function("atan")
def build_atan(fn: Fn, idx: dict[str, int]) -> None:
    x0 = fn.param(0)
    ix = fn.local(I32, hi_word(x0) & 0x7FFFFFFF)
    with fn.if_(ix.ge_u(0x44100000)):  # |x| >= 2^66: +-pi/2 (nan stays nan)
        with fn.if_(x0.ne(x0)):
            fn.ret(x0)
        fn.ret(copysign(f64(ATAN_HI[3] + ATAN_LO[3]), x0))
    x = fn.let(fabs(x0))
    case = fn.local(I32, -1)
    with fn.if_(ix.lt_u(0x3FDC0000)):  # |x| < 7/16: no reduction
        with fn.if_(ix.lt_u(0x3E400000)):  # |x| < 2^-27
            fn.ret(x0)
        fn.else_()
        with fn.if_(ix.lt_u(0x3FF30000)):  # |x| < 19/16
            with fn.if_(ix.lt_u(0x3FE60000)):  # 7/16 <= |x| < 11/16
                case.set(0)
                x.set((2.0 * x - 1.0) / (2.0 + x))
                fn.else_()
                case.set(1)
                x.set((x - 1.0) / (x + 1.0))
            fn.else_()
            with fn.if_(ix.lt_u(0x40038000)):  # |x| < 39/16
                case.set(2)
                x.set((x - 1.5) / (1.0 + 1.5 * x))
                fn.else_()
                case.set(3)
                x.set(-1.0 / x)
    z = fn.let(x * x)
    w = fn.let(z * z)
    # Odd and even coefficients in w = x^4 evaluated separately (more parallel, same as fdlibm).
    s1 = z * (AT[0] + w * (AT[2] + w * (AT[4] + w * (AT[6] + w * (AT[8] + w * AT[10])))))
    s2 = w * (AT[1] + w * (AT[3] + w * (AT[5] + w * (AT[7] + w * AT[9]))))
    sum_ = fn.let(s1 + s2)
    with fn.if_(case.lt(0)):
        fn.ret(x0 - x0 * sum_)
    for i in range(4):
        with fn.if_(case.eq(i)):
            fn.ret(copysign(ATAN_HI[i] - ((x * sum_ - ATAN_LO[i]) - x), x0))


@libm_function("atan2", arity=2, deps=("atan",))
def build_atan2(fn: Fn, idx: dict[str, int]) -> None:
    y, x = fn.param(0), fn.param(1)
    with fn.if_(x.ne(x) | y.ne(y)):
        fn.ret(x + y)
    with fn.if_(bits(x).eq(bits(f64(1.0)))):
        fn.ret(fn.call(idx["atan"], y))
    # m = 2*signbit(x) + signbit(y) picks the quadrant.
    m = fn.local(I32, wrap(bits(y).shr_u(63)) | (wrap(bits(x).shr_u(63)) << 1))
    ix = fn.local(I32, hi_word(x) & 0x7FFFFFFF)
    iy = fn.local(I32, hi_word(y) & 0x7FFFFFFF)

    def quadrant_value(values: list[float]) -> None:
        for i, v in enumerate(values):
            with fn.if_(m.eq(i)):
                fn.ret(v)

    with fn.if_(y.eq(0.0)):
        with fn.if_(m.lt_u(2)):
            fn.ret(y)  # atan2(+-0, +anything) = +-0
        quadrant_value([0.0, 0.0, PI + 2.0**-120, -PI - 2.0**-120])
    with fn.if_(x.eq(0.0)):
        fn.ret(copysign(f64(PIO2_HI + 2.0**-120), y))
    with fn.if_(ix.eq(0x7FF00000)):  # x = +-inf
        with fn.if_(iy.eq(0x7FF00000)):
            quadrant_value([PI / 4, -PI / 4, 3 * PI / 4, -3 * PI / 4])
        quadrant_value([0.0, -0.0, PI + 2.0**-120, -PI - 2.0**-120])
    # |y/x| > 2^64 or y = +-inf
    with fn.if_((ix + (64 << 20)).lt_u(iy) | iy.eq(0x7FF00000)):
        fn.ret(copysign(f64(PIO2_HI + 2.0**-120), y))
    z = fn.local()
    with fn.if_((m & 2).ne(0) & (iy + (64 << 20)).lt_u(ix)):  # x < 0 and |y/x| < 2^-64
        z.set(0.0)
        fn.else_()
        z.set(fn.call(idx["atan"], fabs(y / x)))
    with fn.if_(m.eq(0)):
        fn.ret(z)
    with fn.if_(m.eq(1)):
        fn.ret(-z)
    with fn.if_(m.eq(2)):
        fn.ret(PI - (z - PI_LO))
    fn.ret((z - PI_LO) - PI)


SPLIT = 134217729.0  # 2^27 + 1 (Veltkamp)


@libm_function("hypot", arity=2)
def build_hypot(fn: Fn, idx: dict[str, int]) -> None:
    ux = fn.local(I64, bits(fn.param(0)) & 0x7FFFFFFFFFFFFFFF)
    uy = fn.local(I64, bits(fn.param(1)) & 0x7FFFFFFFFFFFFFFF)
    with fn.if_(ux._bin("lt_u", uy, I32)):  # order so that |x| >= |y| (nan sorts above inf)
        tmp = fn.local(I64, ux)
        ux.set(uy)
        uy.set(tmp)
    ex = fn.local(I32, wrap(ux.shr_u(52)))
    ey = fn.local(I32, wrap(uy.shr_u(52)))
    x, y = fn.let(from_bits(ux)), fn.let(from_bits(uy))
    with fn.if_(ey.eq(0x7FF)):
        fn.ret(y)  # y inf (x then inf or nan -> inf) or both nan
    with fn.if_(ex.eq(0x7FF) | uy.eq(0)):
        fn.ret(x)
    with fn.if_((ex - ey).gt(64)):
        fn.ret(x + y)
    z = fn.let(f64(1.0))
    with fn.if_(ex.gt(0x3FF + 510)):  # avoid overflow of x^2
        z.set(2.0**700)
        x.set(x * 2.0**-700)
        y.set(y * 2.0**-700)
        fn.else_()
        with fn.if_(ey.lt(0x3FF - 450)):  # avoid underflow of y^2
            z.set(2.0**-700)
            x.set(x * 2.0**700)
            y.set(y * 2.0**700)
    # x^2 and y^2 each as exact hi + lo pairs, then one rounded sqrt.
    hx, lx = square_parts(fn, x)
    hy, ly = square_parts(fn, y)
    fn.ret(z * sqrt(ly + lx + hy + hx))


def square_parts(fn: Fn, a: Var) -> tuple[Var, Var]:
    c = fn.let(a * SPLIT)
    ah = fn.let(a - c + c)
    al = fn.let(a - ah)
    hi = fn.let(a * a)
    return hi, fn.let(ah * ah - hi + 2.0 * ah * al + al * al)
