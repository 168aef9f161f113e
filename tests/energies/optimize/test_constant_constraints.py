"""Constraints no input of a stage can move: they neither drive the penalty weight up nor go unnamed.

A constraint that reads no varying input (``StageSpec.fixed``) adds the constant λ·max(c, 0)² to φ.
Penrose's exterior-point test compares φ between rounds, so a violated constant makes the energies
differ by 9λ·max(c, 0)² every round and only the points' distance can end the loop: the weight grows
10x per round, to overflow on set-theory's tree.style at 128 sets. The oracle of the first test is
the same problem without that constraint: the run must be the same, round for round."""

from __future__ import annotations

import math

import numpy as np
import pytest

from energies.optimize.optimizer import GoalValues, OptimizeError, StageSpec, optimize


class Plateau:
    """φ = -1e-4 tanh(x) + λ max(c, 0)², the constraint reading no input (value c, fixed).

    On the plateau of tanh every round ends after a few steps (gᵀHg < 1e-2 at once) having moved x
    by more than 1e-3 while φ changes by far less: without a violated constant, Penrose's test passes
    on the energies at its first chance (EPround 2)."""

    n_inputs = 1
    objective_names = ["encourage plateau at style:3:4"]
    constraint_names = ["ensure constant at style:7:4"]

    def __init__(self, c: float) -> None:
        self.c = np.float64(c)  # overflows to inf, as in Wasm, where a Python float would raise
        self.stages = [StageSpec("", np.ones(1, bool), np.ones(1, bool), np.ones(1, bool), np.ones(1, bool))]

    def energy_and_grad(self, x: np.ndarray, stage: int, weight: float) -> tuple[float, np.ndarray]:
        with np.errstate(over="ignore"):
            penalty = weight * max(self.c, 0.0) ** 2
        return -1e-4 * math.tanh(x[0]) + penalty, np.array([-1e-4 / math.cosh(x[0]) ** 2])

    def goal_values(self, x: np.ndarray) -> GoalValues:
        return GoalValues(np.array([-1e-4 * math.tanh(x[0])]), np.array([self.c]))

    def goal_jacobian(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.array([[-1e-4 / math.cosh(x[0]) ** 2]]), np.zeros((1, 1))


def test_a_violated_constant_leaves_the_run_as_without_it() -> None:
    free = optimize(Plateau(-1.0), np.array([0.0]))
    assert free.ep_rounds == 2 and free.infeasible == ()
    stuck = optimize(Plateau(2.0), np.array([0.0]))
    # Before the rule this run went on for 133 rounds, to λ = 1e136 (x still moving by 1e-3 a round).
    assert (stuck.x[0], stuck.ep_rounds, stuck.evaluations, stuck.weight) == (
        free.x[0],
        free.ep_rounds,
        free.evaluations,
        free.weight,
    )
    # The constant is reported as it is: violated, infeasible, in the energy at the final weight.
    assert stuck.infeasible == (0,) and stuck.n_violated == 1
    assert stuck.energy == pytest.approx(free.energy + stuck.weight * 4.0)


class Huge(Plateau):
    """A constraint whose square overflows: c = 1e200, so λ·c² = inf at every λ, its value finite."""

    def __init__(self) -> None:
        super().__init__(1e200)
        self.stages = [StageSpec("", np.ones(1, bool), np.ones(1, bool), np.ones(1, bool), np.zeros(1, bool))]


def test_an_overflowing_sum_names_its_largest_term() -> None:
    with pytest.raises(OptimizeError) as caught:
        optimize(Huge(), np.array([0.0]))
    assert caught.value.goal == "ensure constant at style:7:4"
    assert "its value is not finite" not in str(caught.value)
    message = str(caught.value)
    assert "ensure constant at style:7:4: the largest term of a sum that overflowed (inf)" in message
