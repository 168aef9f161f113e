"""Rounds that Penrose's test cannot end: null steps at φ's resolution.

Each expected value comes from the problem itself: a plateau no point can go below."""

from __future__ import annotations

import numpy as np
import pytest

from energies.lbfgs import (
    MAX_LINE_SEARCH_STEPS,
    UO_STOP,
    pick_driver,
    run_round,
)
from tests.energies.test_optimize import SOLVERS

PLATEAU = 1.8e15  # nitric acid's energy under λ = 1e12: one ulp is 0.25
SLOPE = np.array([9011.0, -40.0, 3.0])  # a gradient far above UO_STOP, as there


def plateau(x: np.ndarray) -> tuple[float, np.ndarray]:
    """φ flat to its floating-point resolution while its gradient is not: no point is lower."""
    return PLATEAU, SLOPE.copy()


@pytest.mark.parametrize("solver", SOLVERS)
def test_null_steps_end_the_round_instead_of_restarting_forever(solver: str) -> None:
    # L-BFGS-B accepts steps that leave φ unchanged (Armijo holds with equality at 1.8e15), then its
    # line search gives up. Restarting from there with H = I gives the decrement |g|² = 8e7 again,
    # so before the fix every restart ran one more null iteration: 5,000 iterations, 55,000
    # evaluations here, 2,000,000 on nitric acid. No point is lower, so the round has converged.
    outcome = run_round(
        plateau,
        np.array([0.2, 2.5, 1.0]),
        driver=pick_driver(solver),  # type: ignore[arg-type]
        iteration_budget=5_000,
        deadline=np.inf,
        report=lambda iterations, energy: None,
    )
    assert outcome.reason == "converged"
    assert outcome.energy == PLATEAU
    assert outcome.restarts == 0
    assert outcome.iterations <= 2
    assert outcome.evaluations <= 2 * (MAX_LINE_SEARCH_STEPS + 1) + 1
    assert float(SLOPE @ SLOPE) > UO_STOP  # Penrose's test alone could never have ended it
