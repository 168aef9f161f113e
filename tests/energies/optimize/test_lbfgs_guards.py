"""Rounds that Penrose's test cannot end: null steps at φ's resolution, crawls, stage budgets.

Each expected value comes from the problem itself: a plateau no point can go below, a scripted
energy sequence whose stall is counted by hand, Rosenbrock's known evaluation needs."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from energies.optimize.lbfgs import (
    MAX_LINE_SEARCH_STEPS,
    STALL_RTOL,
    STALL_WINDOW,
    UO_STOP,
    DecrementTracker,
    RoundOutcome,
    pick_driver,
    run_round,
)
from energies.optimize.optimizer import optimize
from tests.energies.optimize.test_optimize import SOLVERS, rosenbrock

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


def crawling_driver(energies: Callable[[int], float]) -> Callable[..., np.ndarray]:
    """A driver whose k-th accepted iterate has energy ``energies(k)`` and decrement |g|² = 1,
    so that only a budget or the stall guard can end the round."""

    def drive(tracker: DecrementTracker, x0: np.ndarray, on_iteration: Callable[[float], bool]) -> np.ndarray:
        k = 0
        while True:
            tracker.evaluate(np.array([float(k)]))
            k += 1
            if on_iteration(tracker.accept()):
                return np.array([float(k - 1)])

    return drive


def scripted(energies: Callable[[int], float]) -> Callable[[np.ndarray], tuple[float, np.ndarray]]:
    return lambda x: (energies(int(x[0])), np.array([-1.0]))  # downhill towards the next iterate


def crawl(energy: Callable[[int], float], iteration_budget: int) -> RoundOutcome:
    """A round of the scripted crawl through the energies energy(0), energy(1), ..."""
    return run_round(
        scripted(energy),
        np.array([0.0]),
        driver=crawling_driver(energy),
        iteration_budget=iteration_budget,
        deadline=np.inf,
        report=lambda iterations, energy: None,
    )


def test_a_crawling_round_stops_as_stalled_after_one_window() -> None:
    # φ_k = 1e6 - 1e-9 k: over any STALL_WINDOW iterations it falls by 5e-7, below
    # STALL_RTOL · 1e6 = 1e-3, so the first full window ends the round.
    def energy(k: int) -> float:
        return 1e6 - 1e-9 * k

    assert STALL_WINDOW * 1e-9 <= STALL_RTOL * 1e6
    outcome = crawl(energy, iteration_budget=100 * STALL_WINDOW)
    assert outcome.reason == "stalled"
    assert outcome.iterations == STALL_WINDOW + 1
    assert outcome.energy == energy(STALL_WINDOW)


def test_steady_progress_is_not_a_stall() -> None:
    # φ_k = 1e6 · 0.9999^k falls by ~5% per window: far above the guard, so the iteration budget ends it.
    def energy(k: int) -> float:
        return 1e6 * 0.9999**k

    outcome = crawl(energy, iteration_budget=3 * STALL_WINDOW)
    assert outcome.reason == "max_iters"
    assert outcome.iterations == 3 * STALL_WINDOW


def test_evaluation_budget_ends_a_round() -> None:
    def energy(k: int) -> float:
        return 1e6 * 0.9999**k

    outcome = run_round(
        scripted(energy),
        np.array([0.0]),
        driver=crawling_driver(energy),
        iteration_budget=10_000,
        deadline=np.inf,
        report=lambda iterations, energy: None,
        evaluation_budget=40,
    )
    assert outcome.reason == "evaluation_budget"
    assert outcome.evaluations == 40  # one evaluation per scripted iteration


@pytest.mark.parametrize("solver", SOLVERS)
def test_stage_budget_cuts_the_stage_and_later_stages_still_run(solver: str) -> None:
    # Rosenbrock from (-1.2, 1) needs 57 evaluations under Penrose's test (test_time_bound), far
    # more than 10: the first stage is cut; the second starts from there and converges.
    result = optimize(rosenbrock(stages=2), np.array([-1.2, 1.0]), inner_solver=solver, stage_evaluations=10)
    first, second = result.stages
    assert first.status == "StageBudget"
    assert 10 <= first.evaluations < 10 + MAX_LINE_SEARCH_STEPS + 2
    assert second.status in ("EPConverged", "StageBudget") and second.evaluations > 0
    assert result.status == "StageBudget"
    unbounded = optimize(rosenbrock(stages=2), np.array([-1.2, 1.0]), inner_solver=solver)
    assert [s.status for s in unbounded.stages] == ["EPConverged", "EPConverged"]
    assert unbounded.stages[0].evaluations > 10
