"""The scale per unknown of L-BFGS's H0 (energies.optimize.diagonal_scaling): hand-derived updates,
its bounds, and the driver with it on a badly scaled problem against the driver without it."""

from __future__ import annotations

import numpy as np
import pytest

from energies.optimize import diagonal_scaling
from energies.optimize.diagonal_scaling import SPREAD, DiagonalScaling
from energies.optimize.lbfgs import DecrementTracker
from energies.optimize.penrose_lbfgs import drive_penrose


def test_one_unknown_takes_the_secant_scale() -> None:
    # n = 1: B⁺ = b - b² s² / (b s²) + y² / (y s) = y / s whatever D was, so D⁺ = s / y.
    scaling = DiagonalScaling()
    assert scaling.update(np.array([2.0]), np.array([8.0])) == pytest.approx([0.25])
    assert scaling.update(np.array([1.0]), np.array([0.5])) == pytest.approx([2.0])


def test_the_inverse_curvatures_of_a_separable_quadratic_are_kept() -> None:
    # y = A s with A diagonal and D = A⁻¹: yᵀDy = Σ aᵢ sᵢ² = yᵀs, so b = A and
    # B⁺ᵢ = aᵢ - aᵢ² sᵢ² / Σ aⱼ sⱼ² + aᵢ² sᵢ² / Σ aⱼ sⱼ² = aᵢ.
    rng = np.random.default_rng(0)
    a = 10.0 ** rng.uniform(-1, 1, 50)  # within SPREAD of γ, so no bound moves them
    scaling = DiagonalScaling()
    scaling.d = 1.0 / a
    for _ in range(5):
        s = rng.normal(size=50)
        np.testing.assert_allclose(scaling.update(s, a * s), 1.0 / a, rtol=1e-12)


def test_pairs_without_curvature_leave_the_scale_as_it_was() -> None:
    scaling = DiagonalScaling()
    assert scaling.update(np.array([1.0, 0.0]), np.array([-1.0, 3.0])) is None  # sᵀy < 0: still γ I
    d = scaling.update(np.array([1.0, 1.0]), np.array([1.0, 2.0]))
    assert d is not None
    before = d.copy()
    after = scaling.update(np.array([1.0, -1.0]), np.array([1.0, 1.0]))  # sᵀy = 0
    np.testing.assert_array_equal(after, before)


def test_scales_stay_positive_and_within_the_spread_of_gamma() -> None:
    rng = np.random.default_rng(1)
    scaling = DiagonalScaling()
    for _ in range(200):
        s = rng.normal(size=30) * 10.0 ** rng.uniform(-3, 3, 30)
        y = rng.normal(size=30) * 10.0 ** rng.uniform(-3, 3, 30)
        if s @ y <= 0:
            y = -y
        d = scaling.update(s, y)
        assert d is not None
        gamma = (s @ y) / (y @ y)
        assert (d > 0).all()
        assert (d >= gamma / SPREAD * (1 - 1e-12)).all() and (d <= gamma * SPREAD * (1 + 1e-12)).all()


def _separable(a: np.ndarray):  # type: ignore[no-untyped-def]
    """Σ aᵢ (xᵢ²/2 + xᵢ⁴/4): minimum 0 at x = 0, curvatures aᵢ apart by five orders of magnitude."""

    def fun(x: np.ndarray) -> tuple[float, np.ndarray]:
        return float(np.sum(a * (0.5 * x * x + 0.25 * x**4))), a * (x + x**3)

    return fun


def _iterations(fun, x0: np.ndarray) -> tuple[int, np.ndarray]:  # type: ignore[no-untyped-def]
    decrements: list[float] = []

    def on_iteration(decrement: float) -> bool:
        decrements.append(decrement)
        return decrement < 1e-12 or len(decrements) >= 20_000

    x = drive_penrose(DecrementTracker(fun), x0, on_iteration)
    return len(decrements), x


def test_a_badly_scaled_problem_converges_in_fewer_iterations(monkeypatch: pytest.MonkeyPatch) -> None:
    n = diagonal_scaling.FROM_UNKNOWNS
    a = 10.0 ** np.random.default_rng(2).uniform(-2, 3, n)
    x0 = np.linspace(-2.0, 2.0, n)
    scaled, x_scaled = _iterations(_separable(a), x0)
    monkeypatch.setattr(diagonal_scaling, "FROM_UNKNOWNS", n + 1)  # Penrose's γ I
    plain, x_plain = _iterations(_separable(a), x0)
    for x in (x_scaled, x_plain):
        np.testing.assert_allclose(x, 0.0, atol=1e-3)
    assert scaled < plain / 2, (scaled, plain)


def test_below_the_threshold_the_trajectory_is_penroses(monkeypatch: pytest.MonkeyPatch) -> None:
    n = diagonal_scaling.FROM_UNKNOWNS - 1
    a = 10.0 ** np.random.default_rng(3).uniform(-2, 3, n)
    x0 = np.linspace(-2.0, 2.0, n)
    count, x = _iterations(_separable(a), x0)
    monkeypatch.setattr(diagonal_scaling, "FROM_UNKNOWNS", 10**9)
    assert _iterations(_separable(a), x0)[0] == count
    np.testing.assert_array_equal(_iterations(_separable(a), x0)[1], x)
