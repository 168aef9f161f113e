"""sin, cos, tan and their argument reduction x = n*(pi/2) + y (y as an unevaluated sum y0 + y1).

Reduction: |x| < 2^22 uses Cody-Waite with pi/2 cut into five 30-bit pieces (n*piece is exact for
n < 2^23), combined in double-double arithmetic.  Larger |x| uses Payne-Hanek: x*(2/pi) mod 4 is
summed from exact partial products of x's mantissa with 24-bit chunks of 2/pi, skipping the chunks
whose products are multiples of 4.  The kernels are fdlibm's minimax polynomials on [-pi/4, pi/4].
"""

from __future__ import annotations

import math

from adcore.wasm.encode import F64, I32, Asm
from adcore.wasm.fnbuild import (
    Fn,
    Var,
    bits,
    clear_lo,
    const,
    f64,
    floor,
    from_bits,
    hi_word,
    nearest,
    scalbn_exact,
    split,
    trunc_i32,
    two_sum,
)
from adcore.wasm.libm import libm_function


def pi_times_power_of_two(nbits: int) -> int:
    """floor(pi * 2^nbits) by Machin's formula in integer arithmetic (no float, no mpmath)."""
    guard = 64
    one = 1 << (nbits + guard)

    def arctan_inv(n: int) -> int:  # arctan(1/n) * one
        total = term = one // n
        k, n2 = 1, n * n
        while term:
            term //= n2
            total += (-1) ** k * (term // (2 * k + 1))
            k += 1
        return total

    return (16 * arctan_inv(5) - 4 * arctan_inv(239)) >> guard


PI_BITS = 1500
PI_INT = pi_times_power_of_two(PI_BITS)  # pi = PI_INT * 2^-PI_BITS (minus < 1 unit)

CHUNKS = 56
TWO_OVER_PI = (1 << (24 * CHUNKS + 1 + PI_BITS)) // PI_INT  # floor(2/pi * 2^(24*CHUNKS))
TWO_OVER_PI_CHUNKS = [(TWO_OVER_PI >> (24 * (CHUNKS - 1 - j))) & 0xFFFFFF for j in range(CHUNKS)]


def pio2_pieces(count: int, width: int) -> list[float]:
    """pi/2 as a sum of doubles of at most ``width`` significant bits each (truncated, in order)."""
    rem = PI_INT  # pi/2 = PI_INT * 2^-(PI_BITS+1)
    pieces = []
    for _ in range(count):
        shift = rem.bit_length() - width
        head = rem >> shift
        pieces.append(math.ldexp(head, shift - PI_BITS - 1))
        rem -= head << shift
    return pieces


PIO2_PIECES = pio2_pieces(5, 30)
PIO2_HI, PIO2_LO = pio2_pieces(2, 53)
INV_PIO2 = 6.36619772367581382433e-01
MEDIUM_LIMIT_HI = 0x41500000  # high word of 2^22

S = [
    -1.66666666666666324348e-01,
    8.33333333332248946124e-03,
    -1.98412698298579493134e-04,
    2.75573137070700676789e-06,
    -2.50507602534068634195e-08,
    1.58969099521155010221e-10,
]
C = [
    4.16666666666666019037e-02,
    -1.38888888888741095749e-03,
    2.48015872894767294178e-05,
    -2.75573143513906633035e-07,
    2.08757232129817482790e-09,
    -1.13596475577881948265e-11,
]
T = [
    3.33333333333334091986e-01,
    1.33333333333201242699e-01,
    5.39682539762260521377e-02,
    2.18694882948595424599e-02,
    8.86323982359930005737e-03,
    3.59207910759131235356e-03,
    1.45620945432529025516e-03,
    5.88041240820264096874e-04,
    2.46463134818469906812e-04,
    7.81794442939557092300e-05,
    7.14072491382608190305e-05,
    -1.85586374855275456654e-05,
    2.59073051863633712884e-05,
]
PIO4, PIO4_LO = 7.85398163397448278999e-01, 3.06161699786838301793e-17


@libm_function("__pio2_chunk", params=(I32,), public=False)
def build_pio2_chunk(fn: Fn, idx: dict[str, int]) -> None:
    """The j-th 24-bit chunk of 2/pi as an integer-valued double, via a br_table jump table."""
    a: Asm = fn.asm
    for _ in range(CHUNKS + 1):
        a.block()
    a.local_get(0).br_table(list(range(CHUNKS)), CHUNKS)
    for chunk in TWO_OVER_PI_CHUNKS:
        a.end().f64_const(float(chunk)).return_()
    a.end().f64_const(0.0).return_()


@libm_function("__rem_pio2", params=(F64,), results=(I32, F64, F64), deps=("__pio2_chunk",), public=False)
def build_rem_pio2(fn: Fn, idx: dict[str, int]) -> None:
    """x -> (n mod 4 or n, y0, y1) with x = n*pi/2 + y0 + y1, |y0 + y1| <~ pi/4; x finite."""
    x = fn.param(0)
    with fn.if_((hi_word(x) & 0x7FFFFFFF).lt_u(MEDIUM_LIMIT_HI)):
        fn_ = fn.let(nearest(x * INV_PIO2))
        hi = fn.let(x - fn_ * PIO2_PIECES[0])  # exact: n*piece is exact and the difference cancels
        lo = fn.let(f64(0.0))
        for piece in PIO2_PIECES[1:4]:
            s, err = two_sum(fn, hi, -(fn_ * piece))
            hi.set(s)
            lo.set(lo + err)
        lo.set(lo - fn_ * PIO2_PIECES[4])
        y0 = fn.let(hi + lo)
        fn.ret_many(trunc_i32(fn_), y0, (hi - y0) + lo)
    payne_hanek(fn, idx, x)


def payne_hanek(fn: Fn, idx: dict[str, int], x: Var) -> None:
    """Reduce |x| >= 2^22.  x = X * 2^e0 with X a 53-bit integer; term j of x*(2/pi) is
    X * chunk_j * 2^(e0 - 24(j+1)), a multiple of 4 (irrelevant mod 4) when that exponent is >= 2."""
    ax = fn.let(x._un("f64_abs", F64))
    e0 = fn.local(I32, (hi_word(ax).shr_u(20)) - 1075)
    j0 = fn.local(I32, 0)
    with fn.if_(e0.ge(2)):
        j0.set((e0 - 2) / 24)
    unscale = scalbn_exact(0 - e0)
    x_hi = fn.let(from_bits(bits(ax) & -(1 << 27)) * unscale)  # 26 bits: x_hi*chunk is exact
    x_lo = fn.let((ax - from_bits(bits(ax) & -(1 << 27))) * unscale)
    acc, acc_lo = fn.let(f64(0.0)), fn.let(f64(0.0))
    for m in range(10):
        chunk = fn.let(fn.call(idx["__pio2_chunk"], j0 + m) * scalbn_exact(e0 - 24 * (j0 + m + 1)))
        for part in (x_hi, x_lo):
            t = fn.let(part * chunk)
            t.set(t - 4.0 * floor(t * 0.25))  # exact: drops whole multiples of 4
            s, err = two_sum(fn, acc, t)
            acc.set(s - 4.0 * floor(s * 0.25))
            acc_lo.set(acc_lo + err)
    n_f = fn.let(nearest(acc))
    frac, frac_lo = two_sum(fn, acc - n_f, acc_lo)  # the fraction of a quadrant, in [-1/2, 1/2]
    # (frac + frac_lo) * (PIO2_HI + PIO2_LO) in double-double.
    fh, fl = split(fn, frac)
    ph, pl = split(fn, f64(PIO2_HI))
    p = fn.let(frac * PIO2_HI)
    p_err = fn.let(((fh * ph - p) + fh * pl + fl * ph) + fl * pl)
    tail = fn.let(p_err + frac * PIO2_LO + frac_lo * PIO2_HI)
    y0 = fn.let(p + tail)
    y1 = fn.let((p - y0) + tail)
    n = fn.local(I32, trunc_i32(n_f) & 3)
    with fn.if_(x.lt(0.0)):
        fn.ret_many(0 - n, -y0, -y1)
    fn.ret_many(n, y0, y1)


@libm_function("__sin", arity=2, public=False)
def build_ksin(fn: Fn, idx: dict[str, int]) -> None:
    """sin(x + y) for |x + y| <= pi/4, y a small correction to x."""
    x, y = fn.param(0), fn.param(1)
    z = fn.let(x * x)
    w = fn.let(z * z)
    r = fn.let(S[1] + z * (S[2] + z * S[3]) + z * w * (S[4] + z * S[5]))
    v = fn.let(z * x)
    fn.ret(x - ((z * (0.5 * y - v * r) - y) - v * S[0]))


@libm_function("__cos", arity=2, public=False)
def build_kcos(fn: Fn, idx: dict[str, int]) -> None:
    x, y = fn.param(0), fn.param(1)
    z = fn.let(x * x)
    w = fn.let(z * z)
    r = fn.let(z * (C[0] + z * (C[1] + z * C[2])) + w * w * (C[3] + z * (C[4] + z * C[5])))
    hz = fn.let(0.5 * z)
    w.set(1.0 - hz)
    # 1 - hz loses the low bits of hz; add them back from ((1 - w) - hz).
    fn.ret(w + (((1.0 - w) - hz) + (z * r - x * y)))


@libm_function("__tan", params=(F64, F64, I32), public=False)
def build_ktan(fn: Fn, idx: dict[str, int]) -> None:
    """tan(x + y) if odd == 0, else -1/tan(x + y); |x + y| <= pi/4."""
    x0, y0, odd = fn.param(0), fn.param(1), fn.param(2)
    x, y = fn.let(x0), fn.let(y0)
    big = fn.local(I32, (hi_word(x) & 0x7FFFFFFF).ge_u(0x3FE59428))  # |x| >= 0.6744
    with fn.if_(big):
        # tan(pi/4 - t) = (1 - tan t)/(1 + tan t): evaluate the polynomial at the smaller t.
        with fn.if_(x.lt(0.0)):
            x.set(-x)
            y.set(-y)
        x.set((PIO4 - x) + (PIO4_LO - y))
        y.set(0.0)
    z = fn.let(x * x)
    w = fn.let(z * z)
    r = fn.let(T[1] + w * (T[3] + w * (T[5] + w * (T[7] + w * (T[9] + w * T[11])))))
    v = fn.let(z * (T[2] + w * (T[4] + w * (T[6] + w * (T[8] + w * (T[10] + w * T[12]))))))
    s = fn.let(z * x)
    r.set(y + z * (s * (r + v) + y) + s * T[0])
    w.set(x + r)
    with fn.if_(big):
        sgn = fn.let(1.0 - 2.0 * f64(odd))
        vv = fn.let(sgn - 2.0 * (x + (r - w * w / (w + sgn))))
        with fn.if_(x0.lt(0.0)):
            fn.ret(-vv)
        fn.ret(vv)
    with fn.if_(odd.eq(0)):
        fn.ret(w)
    # -1/(x + r) with a correction so the quotient keeps full precision.
    w0 = fn.let(clear_lo(w))
    v.set(r - (w0 - x))
    a = fn.let(-1.0 / w)
    a0 = fn.let(clear_lo(a))
    fn.ret(a0 + a * (1.0 + a0 * w0 + a0 * v))


def reduce_then(fn: Fn, idx: dict[str, int], x: Var) -> tuple[Var, Var, Var]:
    n, y0, y1 = fn.local(I32), fn.local(), fn.local()
    fn.call_into(idx["__rem_pio2"], [x], [n, y0, y1])
    return n, y0, y1


TRIG_DEPS = ("__rem_pio2", "__sin", "__cos")


@libm_function("sin", deps=TRIG_DEPS)
def build_sin(fn: Fn, idx: dict[str, int]) -> None:
    x = fn.param(0)
    ix = fn.local(I32, hi_word(x) & 0x7FFFFFFF)
    zero = f64(0.0)
    with fn.if_(ix.le_u(0x3FE921FB)):  # |x| <~ pi/4
        with fn.if_(ix.lt_u(0x3E500000)):  # |x| < 2^-26: sin x = x
            fn.ret(x)
        fn.ret(fn.call(idx["__sin"], x, zero))
    with fn.if_(ix.ge_u(0x7FF00000)):
        fn.ret(x - x)  # inf, nan -> nan
    n, y0, y1 = reduce_then(fn, idx, x)
    quadrant = fn.local(I32, n & 3)
    with fn.if_(quadrant.eq(0)):
        fn.ret(fn.call(idx["__sin"], y0, y1))
    with fn.if_(quadrant.eq(1)):
        fn.ret(fn.call(idx["__cos"], y0, y1))
    with fn.if_(quadrant.eq(2)):
        fn.ret(-fn.call(idx["__sin"], y0, y1))
    fn.ret(-fn.call(idx["__cos"], y0, y1))


@libm_function("cos", deps=TRIG_DEPS)
def build_cos(fn: Fn, idx: dict[str, int]) -> None:
    x = fn.param(0)
    ix = fn.local(I32, hi_word(x) & 0x7FFFFFFF)
    with fn.if_(ix.le_u(0x3FE921FB)):
        with fn.if_(ix.lt_u(0x3E46A09E)):  # |x| < 2^-27 * sqrt(2): cos x rounds to 1
            fn.ret(1.0)
        fn.ret(fn.call(idx["__cos"], x, f64(0.0)))
    with fn.if_(ix.ge_u(0x7FF00000)):
        fn.ret(x - x)
    n, y0, y1 = reduce_then(fn, idx, x)
    quadrant = fn.local(I32, n & 3)
    with fn.if_(quadrant.eq(0)):
        fn.ret(fn.call(idx["__cos"], y0, y1))
    with fn.if_(quadrant.eq(1)):
        fn.ret(-fn.call(idx["__sin"], y0, y1))
    with fn.if_(quadrant.eq(2)):
        fn.ret(-fn.call(idx["__cos"], y0, y1))
    fn.ret(fn.call(idx["__sin"], y0, y1))


@libm_function("tan", deps=("__rem_pio2", "__tan"))
def build_tan(fn: Fn, idx: dict[str, int]) -> None:
    x = fn.param(0)
    ix = fn.local(I32, hi_word(x) & 0x7FFFFFFF)
    with fn.if_(ix.le_u(0x3FE921FB)):
        with fn.if_(ix.lt_u(0x3E400000)):  # |x| < 2^-27
            fn.ret(x)
        fn.ret(fn.call(idx["__tan"], x, f64(0.0), const(I32, 0)))
    with fn.if_(ix.ge_u(0x7FF00000)):
        fn.ret(x - x)
    n, y0, y1 = reduce_then(fn, idx, x)
    fn.ret(fn.call(idx["__tan"], y0, y1, n & 1))
