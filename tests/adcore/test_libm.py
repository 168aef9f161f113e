"""The Wasm libm against mpmath (correctly rounded) on a fast subset, plus C99 special values.

The full >= 100k-point sweep is benchmarks/libm_accuracy.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from adcore.wasm.encode import F64, ModuleBuilder
from adcore.wasm.libm import LIBM, add_libm, dependency_closure, libm_module, public_names
from adcore.wasm.runtime import Instance

from .libm_oracle import c99_special, edge_points, reference, sample_points, ulp_distance

NAMES = public_names()
POINTS = 3000
MAX_ULP = 2


@pytest.fixture(scope="module")
def libm() -> Instance:
    return Instance(libm_module(NAMES), time_limit=60.0)


def evaluate(inst: Instance, name: str, args: np.ndarray) -> np.ndarray:
    f = inst.fast(name)
    return np.array([f(*map(float, row)) for row in args])


def test_public_api_lists_every_required_function() -> None:
    required = [
        "exp",
        "expm1",
        "log",
        "log1p",
        "log2",
        "log10",
        "sin",
        "cos",
        "tan",
        "asin",
        "acos",
        "atan",
        "atan2",
        "sinh",
        "cosh",
        "tanh",
        "asinh",
        "acosh",
        "atanh",
        "cbrt",
        "pow",
        "hypot",
    ]
    assert sorted(required) == NAMES
    assert all(LIBM[n].arity == (2 if n in ("atan2", "pow", "hypot") else 1) for n in NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_within_two_ulp_of_correctly_rounded(libm: Instance, name: str) -> None:
    args = np.concatenate([sample_points(name, POINTS, seed=1), edge_points(name)])
    got = evaluate(libm, name, args)
    want = reference(name, args)
    d = ulp_distance(got, want)
    worst = int(np.argmax(d))
    assert d[worst] <= MAX_ULP, f"{name}{tuple(args[worst])} = {got[worst]!r}, want {want[worst]!r}"


@pytest.mark.parametrize("name", NAMES)
def test_special_values_follow_c99_including_signed_zero(libm: Instance, name: str) -> None:
    """Where C99 gives an exact special result (+-0, +-inf, nan), ours is the same, sign included."""
    args = edge_points(name)
    got = evaluate(libm, name, args)
    want = c99_special(name, args)
    exact = ~np.isfinite(want) | (want == 0.0)
    for row, g, w in zip(args[exact], got[exact], want[exact], strict=True):
        if math.isnan(w):
            assert math.isnan(g), f"{name}{tuple(row)} = {g!r}, want nan"
        else:
            assert g == w and math.copysign(1, g) == math.copysign(1, w), (
                f"{name}{tuple(row)} = {g!r}, want {w!r}"
            )


INF, NAN = math.inf, math.nan
# C99 Annex F.9.4.4, written out by hand (independent of any library).
POW_CASES = [
    (0.0, -3.0, INF), (-0.0, -3.0, -INF), (0.0, -2.0, INF), (-0.0, -2.0, INF), (-0.0, -0.5, INF),
    (0.0, -INF, INF), (-0.0, -INF, INF), (0.0, 3.0, 0.0), (-0.0, 3.0, -0.0), (-0.0, 2.0, 0.0),
    (-0.0, 0.5, 0.0), (-1.0, INF, 1.0), (-1.0, -INF, 1.0), (1.0, NAN, 1.0), (NAN, 0.0, 1.0),
    (NAN, -0.0, 1.0), (-2.0, 0.5, NAN), (-8.0, 1 / 3, NAN), (0.5, -INF, INF), (2.0, -INF, 0.0),
    (0.5, INF, 0.0), (2.0, INF, INF), (-INF, -3.0, -0.0), (-INF, -2.0, 0.0), (-INF, 3.0, -INF),
    (-INF, 2.0, INF), (INF, -1.0, 0.0), (INF, 0.5, INF), (NAN, 1.0, NAN), (2.0, NAN, NAN),
    (-2.0, 3.0, -8.0), (-2.0, -3.0, -0.125), (-2.0, 2.0, 4.0), (-3.0, 2.0**53 + 2, INF),
    (-1.0, 2.0**53 + 1, 1.0), (-0.5, 1e300, 0.0), (2.0, 1024.0, INF), (2.0, -1075.0, 0.0),
    (2.0, -1074.0, 5e-324), (-2.0, -1073.0, -1e-323), (2.0, 1023.0, 2.0**1023), (10.0, 2.0, 100.0),
]  # fmt: skip


@pytest.mark.parametrize(("x", "y", "want"), POW_CASES)
def test_pow_c99_special_cases(libm: Instance, x: float, y: float, want: float) -> None:
    got = libm.fast("pow")(x, y)
    if math.isnan(want):
        assert math.isnan(got)
    else:
        assert got == want and math.copysign(1, got) == math.copysign(1, want), (x, y, got)


def test_trig_is_finite_and_bounded_for_huge_arguments(libm: Instance) -> None:
    xs = [1e22, -1e22, 1.7976931348623157e308, 2.0**1000, -(2.0**600), 6381956970095103 * 2.0**797]
    for x in xs:
        for name in ("sin", "cos"):
            y = libm.fast(name)(x)
            assert math.isfinite(y) and abs(y) <= 1.0, (name, x, y)
        assert math.isfinite(libm.fast("tan")(x))
    # Payne-Hanek reduction is accurate there too (not promised, but a regression guard).
    args = np.array(xs)[:, None]
    assert ulp_distance(evaluate(libm, "sin", args), reference("sin", args)).max() <= 2


def test_identities_across_functions(libm: Instance) -> None:
    """Cross-checks that need no oracle: sin^2 + cos^2 = 1, exp(log x) = x, hypot symmetry."""
    rng = np.random.default_rng(5)
    f = {n: libm.fast(n) for n in ("sin", "cos", "exp", "log", "hypot", "atan2", "tan")}
    for x in rng.uniform(-100, 100, 200):
        assert abs(f["sin"](x) ** 2 + f["cos"](x) ** 2 - 1.0) < 4e-16
        assert f["hypot"](x, 3.0) == f["hypot"](-3.0, -x)
        assert abs(f["tan"](x) - f["sin"](x) / f["cos"](x)) <= 1e-14 * max(1.0, abs(f["tan"](x)) ** 2)
    for x in 10.0 ** rng.uniform(-300, 300, 200):
        assert abs(f["exp"](f["log"](x)) / x - 1.0) < 1e-13


def test_add_libm_links_dependencies_after_imports() -> None:
    """Indices account for imports; internal helpers come along; the module validates and runs."""
    b = ModuleBuilder()
    b.add_import("env", "twice", [F64], [F64])
    index = add_libm(b, ["sinh", "tan"])
    assert set(index) == set(dependency_closure(["sinh", "tan"]))
    assert {"expm1", "exp", "__rem_pio2", "__tan"} <= set(index)
    assert min(index.values()) == 1  # function 0 is the import
    b.export_function("sinh", index["sinh"])
    import wasmtime

    from adcore.wasm.runtime import engine

    store = wasmtime.Store(engine())
    store.set_epoch_deadline(1 << 40)
    twice = wasmtime.Func(
        store, wasmtime.FuncType([wasmtime.ValType.f64()], [wasmtime.ValType.f64()]), lambda v: 2 * v
    )
    inst = wasmtime.Instance(store, wasmtime.Module(engine(), b.to_bytes()), [twice])
    assert inst.exports(store)["sinh"](store, 1.0) == pytest.approx(math.sinh(1.0), rel=1e-15)


def test_unknown_function_is_a_clear_error() -> None:
    with pytest.raises(KeyError, match="no function 'gamma'"):
        add_libm(ModuleBuilder(), ["gamma"])
