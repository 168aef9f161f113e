"""The adapter to scipy's private L-BFGS-B routine: it refuses a scipy it was not checked against, and
on a checked one it minimizes a quadratic to its hand-derived minimum through reverse communication."""

from __future__ import annotations

import numpy as np
import pytest
import scipy

from energies.optimize import scipy_lbfgsb
from energies.optimize.scipy_lbfgsb import FG, NEW_X, VERIFIED, LbfgsbCore, ScipyInternalsChanged


def test_installed_scipy_is_one_the_adapter_was_checked_against() -> None:
    """Fails on a scipy upgrade past VERIFIED: read the new `_minimize_lbfgsb` loop, then widen it."""
    version = tuple(int(p) for p in scipy.__version__.split(".")[:2])
    assert VERIFIED[0] <= version <= VERIFIED[1], (
        f"scipy {scipy.__version__} is outside the versions energies.optimize.scipy_lbfgsb was checked "
        f"against ({VERIFIED}); check setulb's signature and task codes, then widen VERIFIED"
    )


def test_an_unchecked_scipy_is_refused_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    scipy_lbfgsb.load_lbfgsb.cache_clear()
    monkeypatch.setattr(scipy_lbfgsb, "scipy_version", lambda: (VERIFIED[1][0], VERIFIED[1][1] + 1))
    try:
        with pytest.raises(ScipyInternalsChanged, match=r"scipy \d+\.\d+ is installed"):
            LbfgsbCore(np.zeros(2), memory=5, max_line_search=20, factr=0.0, pgtol=0.0)
    finally:
        scipy_lbfgsb.load_lbfgsb.cache_clear()


def test_reverse_communication_reaches_a_quadratics_minimum() -> None:
    """φ(x) = ½ xᵀAx - bᵀx has its minimum at A⁻¹b, solved here by hand for a 2x2 A."""
    a = np.array([[3.0, 1.0], [1.0, 2.0]])
    b = np.array([1.0, -1.0])
    expected = np.array([2 * 1.0 - 1 * -1.0, -1 * 1.0 + 3 * -1.0]) / (3 * 2 - 1 * 1)  # A⁻¹ = adj(A) / det
    core = LbfgsbCore(np.array([5.0, -7.0]), memory=5, max_line_search=20, factr=10.0, pgtol=1e-10)
    iterations = evaluations = 0
    while True:
        task = core.step()
        if task == FG:
            evaluations += 1
            core.f[...] = 0.5 * core.x @ a @ core.x - b @ core.x
            core.g[:] = a @ core.x - b
        elif task == NEW_X:
            iterations += 1
        else:
            break
    assert core.converged
    np.testing.assert_allclose(core.x, expected, atol=1e-8)
    assert 0 < iterations < evaluations
