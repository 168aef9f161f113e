"""Accuracy checking for the Wasm libm: an mpmath oracle, ulp distances, and the test-point sets.

Test support, also read by benchmarks/libm_accuracy.py; it lives with the tests because it imports
mpmath, a test dependency, so the installed package never does. The oracle evaluates each function
at high precision and rounds once to the nearest double: the correctly rounded result.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import mpmath
import numpy as np

PREC_BITS = 160

Oracle = Callable[..., object]

ORACLES: dict[str, Oracle] = {
    "exp": mpmath.exp,
    "expm1": mpmath.expm1,
    "log": mpmath.log,
    "log1p": mpmath.log1p,
    "log2": lambda x: mpmath.log(x, 2),
    "log10": mpmath.log10,
    "sin": mpmath.sin,
    "cos": mpmath.cos,
    "tan": mpmath.tan,
    "asin": mpmath.asin,
    "acos": mpmath.acos,
    "atan": mpmath.atan,
    "atan2": mpmath.atan2,
    "sinh": mpmath.sinh,
    "cosh": mpmath.cosh,
    "tanh": mpmath.tanh,
    "asinh": mpmath.asinh,
    "acosh": mpmath.acosh,
    "atanh": mpmath.atanh,
    "cbrt": lambda x: mpmath.sign(x) * mpmath.cbrt(abs(x)),
    "pow": mpmath.power,
    "hypot": mpmath.hypot,
}


def to_double(v: object) -> float:
    """Round an mpmath value to the nearest double (nan for complex / undefined results)."""
    if isinstance(v, mpmath.mpc):
        return math.nan if v.imag != 0 else to_double(v.real)
    try:
        return float(v)  # mpmath rounds to nearest here
    except (OverflowError, ValueError):
        return math.nan


def correctly_rounded(name: str, *args: float) -> float:
    with mpmath.workprec(PREC_BITS):
        try:
            return to_double(ORACLES[name](*[mpmath.mpf(a) for a in args]))
        except (ValueError, ZeroDivisionError):
            return math.nan


def reference(name: str, args: np.ndarray) -> np.ndarray:
    """Correctly rounded f over rows of ``args`` (shape (n, arity)).

    mpmath gives the value wherever the arguments and the result are finite and non-zero (mpmath has
    no signed zero); infinite or nan arguments, zeros and poles follow C99, taken from the platform's
    C libm through numpy.
    """
    special = c99_special(name, args)
    out = np.empty(len(args))
    for i, row in enumerate(args):
        if (
            all(math.isfinite(a) and a != 0.0 for a in row)
            and math.isfinite(special[i])
            and special[i] != 0.0
        ):
            out[i] = correctly_rounded(name, *row)
        else:
            out[i] = special[i]
    return out


NUMPY_NAMES = {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "atan2": "arctan2", "asinh": "arcsinh",
               "acosh": "arccosh", "atanh": "arctanh", "pow": "power"}  # fmt: skip


def c99_special(name: str, args: np.ndarray) -> np.ndarray:
    """The platform C library's results (C99 semantics for specials; accurate to ~1 ulp)."""
    fn = getattr(np, NUMPY_NAMES.get(name, name))
    with np.errstate(all="ignore"):
        return fn(*[args[:, j] for j in range(args.shape[1])])


def ordered(x: np.ndarray) -> np.ndarray:
    """Map doubles to integers whose difference counts the representable doubles between them."""
    i = np.asarray(x, dtype=np.float64).view(np.int64)
    return np.where(i < 0, np.int64(-0x8000000000000000) - i, i)


def ulp_distance(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Ulps between results; 0 when both are nan, huge when only one is (or infinities differ)."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    both_nan = np.isnan(got) & np.isnan(want)
    one_nan = np.isnan(got) ^ np.isnan(want)
    a, b = ordered(got), ordered(want)
    same_sign = (a >= 0) == (b >= 0)
    # Subtract in int64 where it cannot overflow (float64 would round away the low ulps).
    exact = np.abs(np.where(same_sign, a, 0) - np.where(same_sign, b, 0)).astype(np.float64)
    d = np.where(same_sign, exact, np.abs(a.astype(np.float64) - b.astype(np.float64)))
    d[both_nan] = 0.0
    d[one_nan] = np.inf
    return d


EDGE = [0.0, -0.0, math.inf, -math.inf, math.nan, 5e-324, -5e-324, 2.2250738585072014e-308,
        -2.2250738585072014e-308, 1e-310, 1.7976931348623157e308, -1.7976931348623157e308,
        1.0, -1.0, 0.5, -0.5, 2.0, -2.0]  # fmt: skip


# --- test points ------------------------------------------------------------------------------------

LN2 = math.log(2.0)
TRIG_ACCURATE_LIMIT = 2.0**20 * math.pi  # 2-ulp promise for sin/cos/tan inside this
TRIG_MULTIPLES = [k * math.pi / 2 for k in (1, 2, 3, 4, 5, 6, 7, 8, 100, 1000, 2**19, 2**20, 2**21 - 1)]


def _log_uniform(rng: np.random.Generator, n: int, lo: float, hi: float, signed: bool = True) -> np.ndarray:
    mags = 10.0 ** rng.uniform(math.log10(lo), math.log10(hi), n)
    return mags * (rng.choice([-1.0, 1.0], n) if signed else 1.0)


def _unary(name: str, rng: np.random.Generator, n: int) -> np.ndarray:
    """n points spread over the function's domain: log-uniform magnitudes + its key intervals."""
    q = n // 4
    lu = _log_uniform
    u = rng.uniform
    parts: dict[str, list[np.ndarray]] = {
        "exp": [lu(rng, 2 * q, 1e-20, 709.7), u(-745.2, 709.8, q), u(-2, 2, n - 3 * q)],
        "expm1": [lu(rng, 2 * q, 1e-300, 709.7), u(-40, 709.8, q), u(-1, 1, n - 3 * q)],
        "log": [lu(rng, 2 * q, 1e-323, 1e308, False), u(0.5, 2, n - 2 * q)],
        "log1p": [lu(rng, q, 1e-300, 1e308, False), -lu(rng, q, 1e-300, 1.0, False), u(-0.4, 0.5, n - 2 * q)],
        "sin": [lu(rng, 2 * q, 1e-10, TRIG_ACCURATE_LIMIT), u(-10, 10, n - 2 * q)],
        "asin": [lu(rng, q, 1e-300, 1.0), 1.0 - lu(rng, q, 1e-16, 1.0, False), u(-1, 1, n - 2 * q)],
        "atan": [lu(rng, 2 * q, 1e-300, 1e300), u(-4, 4, n - 2 * q)],
        "sinh": [lu(rng, 2 * q, 1e-300, 710.4), u(-5, 5, n - 2 * q)],
        "tanh": [lu(rng, 2 * q, 1e-300, 25.0), u(-3, 3, n - 2 * q)],
        "asinh": [lu(rng, 2 * q, 1e-300, 1e308), u(-3, 3, n - 2 * q)],
        "acosh": [1.0 + lu(rng, 2 * q, 1e-15, 1e308, False), u(1, 3, n - 2 * q)],
        "atanh": [lu(rng, q, 1e-300, 1.0), 1.0 - lu(rng, q, 1e-16, 1.0, False), u(-1, 1, n - 2 * q)],
        "cbrt": [lu(rng, 2 * q, 1e-323, 1e308), u(-8, 8, n - 2 * q)],
    }
    alias = {"log2": "log", "log10": "log", "cos": "sin", "tan": "sin", "acos": "asin", "cosh": "sinh"}
    return np.concatenate(parts[alias.get(name, name)])


def _binary(name: str, rng: np.random.Generator, n: int) -> np.ndarray:
    q = n // 4
    if name == "pow":
        x = 10.0 ** rng.uniform(-30, 30, n)
        # Keep |y log2 x| within the finite range most of the time, the rest over/underflows.
        y = rng.uniform(-1100, 1100, n) / np.maximum(np.abs(np.log2(x)), 1.0)
        x[:q] = -x[:q]
        y[:q] = np.round(y[:q])  # negative bases need integer exponents
        x[q : 2 * q] = 1.0 + rng.uniform(-1e-6, 1e-6, q)  # near 1 with huge exponents
        y[q : 2 * q] = rng.uniform(-1e9, 1e9, q)
        return np.stack([x, y], 1)
    a = _log_uniform(rng, n, 1e-300, 1e300)
    b = _log_uniform(rng, n, 1e-300, 1e300)
    a[:q], b[:q] = rng.uniform(-3, 3, q), rng.uniform(-3, 3, q)
    with np.errstate(over="ignore"):
        b[q : 2 * q] = a[q : 2 * q] * _log_uniform(rng, q, 1e-20, 1e20)  # comparable magnitudes
    return np.stack([a, b], 1)


def sample_points(name: str, n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if name in ("pow", "atan2", "hypot"):
        return _binary(name, rng, n)
    return _unary(name, rng, n)[:, None]


def _around(values: list[float], steps: int = 2) -> list[float]:
    out = []
    for v in values:
        out.append(v)
        lo = hi = v
        for _ in range(steps):
            lo, hi = math.nextafter(lo, -math.inf), math.nextafter(hi, math.inf)
            out += [lo, hi]
    return out


def _hex_hi(hi_word: int) -> float:
    """The double whose high word is hi_word and low word 0 (fdlibm's range thresholds)."""
    return float(np.array([hi_word << 32], dtype=np.uint64).view(np.float64)[0])


# Thresholds where each implementation switches method, as in the kernels' comments.
BOUNDARIES: dict[str, list[float]] = {
    "exp": [
        0.5 * LN2,
        1.5 * LN2,
        _hex_hi(0x3FF0A2B2),
        2.0**-28,
        709.782712893384,
        -745.1332191019411,
        -708.39641853226408,
        2.0**-54,
    ],
    "expm1": [0.5 * LN2, 1.5 * LN2, 56 * LN2, -56 * LN2, 2.0**-54, 709.782712893384, -0.25, 38.0],
    "log": [math.sqrt(0.5), math.sqrt(2.0), 2.0**-1022, 2.0**-1074, 2.0**1023],
    "log1p": [math.sqrt(2.0) - 1, math.sqrt(0.5) - 1, 2.0**-53, -0.2929, 2.0**53, -1.0, -1 + 2.0**-53],
    "sin": [math.pi / 4, 2.0**-26, 2.0**-27, 2.0**22, 0.6744, *TRIG_MULTIPLES],
    "asin": [0.5, 0.975, 2.0**-26, 1.0, -1.0, 2.0**-57],
    "atan": [7 / 16, 11 / 16, 19 / 16, 39 / 16, 2.0**66, 2.0**-27],
    "sinh": [1.0, 2.0**-26, 709.782712893384, 710.4758600739439, math.log(2.0)],
    "tanh": [math.log(3) / 2, math.log(5 / 3) / 2, 20.0, 22.0, 2.0**-1022],
    "asinh": [2.0, 2.0**26, 2.0**-26],
    "acosh": [1.0, 2.0, 2.0**26],
    "atanh": [0.5, 2.0**-32, 1.0, -1.0],
    "cbrt": [2.0**-1022, 1.0, 8.0, 27.0, 2.0**-1074],
}
BOUNDARY_ALIAS = {"log2": "log", "log10": "log", "cos": "sin", "tan": "sin", "acos": "asin", "cosh": "sinh"}


def edge_points(name: str) -> np.ndarray:
    """Special values plus the neighbors of every range-reduction boundary, both signs."""
    if name in ("pow", "atan2", "hypot"):
        specials = [0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0, -3.0,
                    1e-310, -1e-310, 1e300, -1e300, 1.0000000000000002, 0.9999999999999999, 1075.0, -1075.0,
                    1024.0, 2.0**53, 2.0**53 + 2, 2.0**64, -(2.0**31) - 1]  # fmt: skip
        return np.array([(a, b) for a in specials for b in specials])
    base = _around(BOUNDARIES[BOUNDARY_ALIAS.get(name, name)])
    values = EDGE + base + [-v for v in base]
    return np.array(values)[:, None]
