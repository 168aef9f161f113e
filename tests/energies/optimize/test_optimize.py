"""The exterior-point optimizer on problems written directly in numpy, against hand-derived optima."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pytest

from energies.optimize.lbfgs import UO_STOP, DecrementTracker, drive_setulb
from energies.optimize.optimizer import (
    EP_STOP,
    INIT_CONSTRAINT_WEIGHT,
    SATISFIED_TOLERANCE,
    WEIGHT_GROWTH_FACTOR,
    GoalValues,
    OptimizeError,
    StageSpec,
    optimize,
)

Goal = tuple[str, Callable[[np.ndarray], float], Callable[[np.ndarray], np.ndarray]]
# scipy's L-BFGS-B; the default, Penrose's L-BFGS, is checked against Penrose in test_penrose_lbfgs.py
SOLVERS = ["setulb"]


@dataclass
class NumpyProblem:
    """φ = Σ active objectives + λ Σ active max(c, 0)², each goal given with its hand-written gradient."""

    n_inputs: int
    objectives: list[Goal]
    constraints: list[Goal]
    stages: list[StageSpec] = field(default_factory=list)
    delay: float = 0.0

    def __post_init__(self) -> None:
        if not self.stages:
            self.stages = [stage("", self.n_inputs, len(self.objectives), len(self.constraints))]

    @property
    def objective_names(self) -> list[str]:
        return [name for name, _, _ in self.objectives]

    @property
    def constraint_names(self) -> list[str]:
        return [name for name, _, _ in self.constraints]

    def energy_and_grad(self, x: np.ndarray, stage: int, weight: float) -> tuple[float, np.ndarray]:
        if self.delay:
            time.sleep(self.delay)
        spec = self.stages[stage]
        energy, grad = 0.0, np.zeros(self.n_inputs)
        for (_, f, g), on in zip(self.objectives, spec.objectives, strict=True):
            if on:
                energy += f(x)
                grad += g(x)
        for (_, f, g), on in zip(self.constraints, spec.constraints, strict=True):
            c = f(x)
            if on and c > 0:
                energy += weight * c * c
                grad += weight * 2 * c * g(x)
        return energy, grad

    def goal_values(self, x: np.ndarray) -> GoalValues:
        return GoalValues(
            np.array([f(x) for _, f, _ in self.objectives]), np.array([f(x) for _, f, _ in self.constraints])
        )

    def goal_jacobian(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return (
            np.array([g(x) for _, _, g in self.objectives]).reshape(-1, self.n_inputs),
            np.array([g(x) for _, _, g in self.constraints]).reshape(-1, self.n_inputs),
        )


def stage(name: str, n: int, n_obj: int, n_constr: int, varying=None, objectives=None, constraints=None):
    def mask(m, size):
        return np.ones(size, bool) if m is None else np.array(m, bool)

    return StageSpec(name, mask(varying, n), mask(objectives, n_obj), mask(constraints, n_constr))


def final_weight(result) -> float:
    return result.stages[-1].weight


def decrement_tolerance(lam: float) -> float:
    """Distance to the minimizer of a 1-D quadratic with curvature 2(1 + λ) once the Newton
    decrement g²/h is below UO_STOP: |x - x*| = |g|/h < sqrt(UO_STOP / h)."""
    return float(np.sqrt(UO_STOP / (2 * (1 + lam))))


# (x - 3)² subject to x <= 1: the penalty minimum is x = (3 + λ)/(1 + λ), approaching 1 from outside.
QUADRATIC = NumpyProblem(
    1,
    objectives=[("sqr(x - 3)", lambda x: (x[0] - 3) ** 2, lambda x: np.array([2 * (x[0] - 3)]))],
    constraints=[("lessThan(x, 1)", lambda x: x[0] - 1, lambda x: np.array([1.0]))],
)


@pytest.mark.parametrize("solver", SOLVERS)
def test_quadratic_with_bound_matches_penalty_optimum(solver: str) -> None:
    result = optimize(QUADRATIC, np.array([-5.0]), inner_solver=solver)
    lam = final_weight(result)
    assert result.status == "EPConverged"
    # Penrose's schedule: rounds at 1e3, 1e4, 1e5; the third is the first that may pass the EP test.
    assert result.ep_rounds == 2
    assert lam == INIT_CONSTRAINT_WEIGHT * WEIGHT_GROWTH_FACTOR**2
    assert result.x[0] == pytest.approx((3 + lam) / (1 + lam), abs=decrement_tolerance(lam))
    assert 1 < result.x[0] < 1 + 1e-3
    (objective, constraint) = result.goals
    assert (objective.kind, objective.satisfied) == ("objective", None)
    assert constraint.name == "lessThan(x, 1)" and constraint.satisfied
    assert constraint.value == pytest.approx(result.x[0] - 1)
    assert result.max_constraint_violation == constraint.value and result.n_violated == 0
    x = result.x[0]
    assert result.energy == pytest.approx((x - 3) ** 2 + lam * (x - 1) ** 2, rel=1e-12)


def test_unconstrained_stops_on_decrement() -> None:
    # A 1-D quadratic is solved exactly by one quasi-Newton step; only the objective is active.
    problem = NumpyProblem(
        1, [("sqr(x - 3)", lambda x: (x[0] - 3) ** 2, lambda x: np.array([2 * (x[0] - 3)]))], []
    )
    result = optimize(problem, np.array([0.0]))
    assert result.x[0] == pytest.approx(3.0, abs=1e-3)
    assert result.max_constraint_violation == 0.0 and result.n_violated == 0


def circle_problem() -> NumpyProblem:
    """Circles of radius 1 and 2 with centres (x0, y0), (x1, y1): disjoint, pulled together by |c0 - c1|²."""

    def diff(x):
        return x[:2] - x[2:]

    def dist(x):
        return float(np.linalg.norm(diff(x)))

    def dist_grad(x):
        u = diff(x) / dist(x)
        return np.concatenate([u, -u])

    return NumpyProblem(
        4,
        objectives=[("near(A, B)", lambda x: dist(x) ** 2, lambda x: 2 * dist(x) * dist_grad(x))],
        constraints=[("disjoint(A, B)", lambda x: 3.0 - dist(x), lambda x: -dist_grad(x))],
    )


@pytest.mark.parametrize("solver", SOLVERS)
def test_two_circles_disjoint_and_near(solver: str) -> None:
    x0 = np.array([0.0, 0.0, 1.0, 0.5])
    result = optimize(circle_problem(), x0, inner_solver=solver)
    lam = final_weight(result)
    centres = result.x.reshape(2, 2)
    d = np.linalg.norm(centres[0] - centres[1])
    # minimize d² + λ(3 - d)² over d: d = 3λ/(1 + λ); the symmetric gradient keeps the midpoint and direction.
    assert d == pytest.approx(3 * lam / (1 + lam), abs=decrement_tolerance(lam))
    np.testing.assert_allclose(centres.mean(axis=0), [0.5, 0.25], atol=1e-9)
    direction = (centres[1] - centres[0]) / d
    np.testing.assert_allclose(direction, [1, 0.5] / np.linalg.norm([1, 0.5]), atol=1e-9)
    assert result.goals[1].satisfied and result.goals[1].value <= SATISFIED_TOLERANCE


def staged_problem() -> NumpyProblem:
    """Stage 1 moves x0 to 2. Stage 2 freezes x0 and moves x1 toward x0 subject to x1 >= 5, while an
    objective that would drag x0 to 10 is active (it must not move x0)."""
    n = 2
    objectives: list[Goal] = [
        ("equal(x0, 2)", lambda x: (x[0] - 2) ** 2, lambda x: np.array([2 * (x[0] - 2), 0])),
        ("equal(x1, x0)", lambda x: (x[1] - x[0]) ** 2, lambda x: 2 * (x[1] - x[0]) * np.array([-1, 1])),
        ("equal(x0, 10)", lambda x: (x[0] - 10) ** 2, lambda x: np.array([2 * (x[0] - 10), 0])),
    ]
    constraints: list[Goal] = [("lessThan(5, x1)", lambda x: 5 - x[1], lambda x: np.array([0, -1.0]))]
    return NumpyProblem(
        n,
        objectives,
        constraints,
        stages=[
            stage("first", n, 3, 1, varying=[1, 0], objectives=[1, 0, 0], constraints=[0]),
            stage("second", n, 3, 1, varying=[0, 1], objectives=[0, 1, 1], constraints=[1]),
        ],
    )


@pytest.mark.parametrize("solver", SOLVERS)
def test_staged_layout_freezes_inputs(solver: str) -> None:
    problem = staged_problem()
    seen_x0: list[float] = []
    real = problem.energy_and_grad

    def spy(x, stage, weight):
        if stage == 1:
            seen_x0.append(x[0])
        return real(x, stage, weight)

    problem.energy_and_grad = spy  # type: ignore[method-assign]
    result = optimize(problem, np.array([-1.0, 0.0]), inner_solver=solver)
    assert [s.name for s in result.stages] == ["first", "second"]
    assert all(s.status == "EPConverged" for s in result.stages)
    first_x0 = result.x[0]
    assert first_x0 == pytest.approx(2.0, abs=1e-3)
    assert set(seen_x0) == {first_x0}  # frozen: every stage-2 evaluation saw the same x0
    lam = result.stages[1].weight
    # stage 2: minimize (x1 - x0)² + λ(5 - x1)² => x1 = (x0 + 5λ)/(1 + λ)
    assert result.x[1] == pytest.approx((first_x0 + 5 * lam) / (1 + lam), abs=decrement_tolerance(lam))
    assert result.iterations == sum(s.iterations for s in result.stages)
    assert result.evaluations == sum(s.evaluations for s in result.stages)


def test_nan_energy_names_the_goal() -> None:
    # sqrt(x) is NaN for x < 0, and the other objective pulls x to -1, so the line search crosses 0.
    problem = NumpyProblem(
        1,
        objectives=[
            ("sqr(x + 1)", lambda x: (x[0] + 1) ** 2, lambda x: np.array([2 * (x[0] + 1)])),
            ("sqrt(A.x)", lambda x: np.sqrt(x[0]), lambda x: np.array([0.5 / np.sqrt(x[0])])),
        ],
        constraints=[],
    )
    with np.errstate(invalid="ignore", divide="ignore"), pytest.raises(OptimizeError) as info:
        optimize(problem, np.array([0.5]))
    assert info.value.goal == "sqrt(A.x)"
    assert "sqrt(A.x)" in str(info.value)
    assert info.value.x[0] < 0


def test_nan_gradient_with_finite_value_names_the_goal() -> None:
    # |x| written as sqrt(x²): its value at 0 is finite but its gradient x/|x| is 0/0.
    problem = NumpyProblem(
        2,
        objectives=[
            ("sqr(x - 1)", lambda x: (x[0] - 1) ** 2, lambda x: np.array([2 * (x[0] - 1), 0.0])),
            ("norm(B.y)", lambda x: np.sqrt(x[1] ** 2), lambda x: np.array([0.0, x[1] / np.sqrt(x[1] ** 2)])),
        ],
        constraints=[],
    )
    with np.errstate(invalid="ignore"), pytest.raises(OptimizeError) as info:
        optimize(problem, np.array([0.0, 0.0]))
    assert info.value.goal == "norm(B.y)"


def rosenbrock(stages: int = 1) -> NumpyProblem:
    def f(x):
        return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2

    def g(x):
        return np.array([-2 * (1 - x[0]) - 400 * x[0] * (x[1] - x[0] ** 2), 200 * (x[1] - x[0] ** 2)])

    problem = NumpyProblem(2, [("rosenbrock(x, y)", f, g)], [])
    problem.stages = [stage(f"s{i}", 2, 1, 0) for i in range(stages)]
    return problem


@pytest.mark.parametrize("solver", SOLVERS)
def test_iteration_bound(solver: str) -> None:
    result = optimize(rosenbrock(stages=2), np.array([-1.2, 1.0]), max_iters=3, inner_solver=solver)
    assert result.iterations == 3
    assert [s.status for s in result.stages] == ["MaxIterations", "NotRun"]
    assert result.status == "MaxIterations"
    free = optimize(rosenbrock(), np.array([-1.2, 1.0]), inner_solver=solver)
    assert free.status == "EPConverged" and free.iterations > 3
    # Penrose's loose test (gᵀHg < 1e-2) stops in the flat valley, well below the start's 24.2.
    assert free.energy == pytest.approx((1 - free.x[0]) ** 2 + 100 * (free.x[1] - free.x[0] ** 2) ** 2)
    assert free.energy < 0.05 and free.x[0] > 0.5


def test_time_bound() -> None:
    problem = rosenbrock()
    problem.delay = 0.02  # unbounded, its 57 evaluations would take over 1.1 s
    started = time.perf_counter()
    result = optimize(problem, np.array([-1.2, 1.0]), time_limit=0.1)
    elapsed = time.perf_counter() - started
    assert result.status == "TimeLimit"
    # The limit is checked once per iteration, whose line search may take up to 20 evaluations.
    assert 0.1 <= elapsed < 0.8
    assert result.evaluations < 57 and np.all(np.isfinite(result.x))


def test_progress_reports_every_iteration() -> None:
    seen = []
    result = optimize(QUADRATIC, np.array([-5.0]), on_progress=seen.append)
    assert [p.iterations for p in seen] == list(range(1, result.iterations + 1))
    # λ from 1e3 up by 10x per round: 1e10 here, as Penrose's own optimizer reaches on this problem
    # (tests/energies/optimize/test_penrose_lbfgs.py), where scipy's L-BFGS-B stops at 1e5.
    assert sorted({p.weight for p in seen}) == [1e3 * 10.0**k for k in range(result.ep_rounds + 1)]
    assert result.ep_rounds == 7


def test_ep_test_stops_rounds_when_points_stop_moving() -> None:
    # The constraint is inactive at the unconstrained optimum, so every round ends at x = 3 and the
    # EP test passes as soon as it is allowed (third round), whatever the weight.
    problem = NumpyProblem(
        1,
        objectives=QUADRATIC.objectives,
        constraints=[("lessThan(x, 10)", lambda x: x[0] - 10, lambda x: np.array([1.0]))],
    )
    result = optimize(problem, np.array([0.0]))
    assert result.ep_rounds == 2 and result.goals[1].satisfied
    assert abs(result.x[0] - 3) ** 2 < UO_STOP and EP_STOP > 0


def test_frozen_stage_without_inputs_and_bad_masks() -> None:
    problem = staged_problem()
    problem.stages = [stage("nothing", 2, 3, 1, varying=[0, 0])]
    result = optimize(problem, np.array([1.0, 2.0]))
    np.testing.assert_array_equal(result.x, [1.0, 2.0])
    problem.stages = [stage("bad", 2, 2, 1)]
    with pytest.raises(ValueError, match="stage 'bad'.*objectives"):
        optimize(problem, np.array([1.0, 2.0]))


def test_decrement_is_lbfgs_newton_decrement() -> None:
    """Our reading of gᵀHg off L-BFGS-B's trial points equals an independent two-loop recursion
    (Nocedal & Wright alg. 7.4, H0 = (sᵀy / yᵀy) I) over the accepted iterates."""
    rng = np.random.default_rng(1)
    a = rng.normal(size=(6, 6))
    hess = a @ a.T + 6 * np.eye(6)
    iterates: list[tuple[np.ndarray, np.ndarray]] = []
    decrements: list[float] = []

    def fun(x):
        return 0.5 * float(x @ hess @ x) - float(x.sum()), hess @ x - 1

    tracker = DecrementTracker(fun)

    def on_iteration(decrement: float) -> bool:
        decrements.append(decrement)
        iterates.append((tracker.last_x.copy(), tracker.last_g.copy()))
        return len(decrements) >= 5

    x0 = np.ones(6)
    drive_setulb(tracker, x0, on_iteration)
    points = [(x0, fun(x0)[1]), *iterates]
    assert decrements[0] == pytest.approx(points[0][1] @ points[0][1])
    for k in range(1, 5):
        pairs = [(points[i + 1][0] - points[i][0], points[i + 1][1] - points[i][1]) for i in range(k)]
        g = points[k][1]
        q, alphas = g.copy(), []
        for s, y in reversed(pairs):
            alpha = (s @ q) / (y @ s)
            alphas.append(alpha)
            q -= alpha * y
        s, y = pairs[-1]
        r = (s @ y) / (y @ y) * q
        for (s, y), alpha in zip(pairs, reversed(alphas), strict=True):
            r += s * (alpha - (y @ r) / (y @ s))
        assert decrements[k] == pytest.approx(g @ r, rel=1e-8)


def test_violations_are_reported_for_the_last_stage_constraints() -> None:
    """A constraint of an earlier stage only (`ensure ... in first`) is not required of the final
    layout: x0 <= 1 holds after stage one, then stage two moves x0 to 4 without it."""
    n = 1
    push = ("equal(x0, 4)", lambda x: (x[0] - 4) ** 2, lambda x: np.array([2 * (x[0] - 4)]))
    bound = ("lessThan(x0, 1)", lambda x: x[0] - 1, lambda x: np.array([1.0]))
    problem = NumpyProblem(
        n,
        [push],
        [bound],
        stages=[
            stage("first", n, 1, 1, objectives=[0], constraints=[1]),
            stage("second", n, 1, 1, objectives=[1], constraints=[0]),
        ],
    )
    result = optimize(problem, np.array([3.0]))
    assert result.x[0] == pytest.approx(4.0, abs=1e-2)
    assert result.goals[1].value == pytest.approx(3.0, abs=1e-2) and result.goals[1].satisfied is False
    assert result.n_violated == 0 and result.max_constraint_violation == 0.0


def test_result_numbers_are_plain_python_numbers() -> None:
    """Reports are written as JSON: no numpy scalars may leak into them."""
    result = optimize(QUADRATIC, np.array([0.0]))
    assert type(result.n_violated) is int and type(result.max_constraint_violation) is float


def test_goal_reports_list_every_goal_with_its_value_and_the_largest_violation_may_be_negative() -> None:
    # Two constraints far from active (values -7 and -2) and one objective: nothing moves them much,
    # and the reports must be exactly the problem's own values at the final x.
    problem = NumpyProblem(
        2,
        objectives=[("centre(A)", lambda x: float(x @ x), lambda x: 2 * x)],
        constraints=[
            ("far(A)", lambda x: float(x[0]) - 7.0, lambda x: np.array([1.0, 0.0])),
            ("near(A)", lambda x: float(x[1]) - 2.0, lambda x: np.array([0.0, 1.0])),
        ],
    )
    result = optimize(problem, np.array([0.5, -0.5]))
    x = result.x
    want = [
        ("centre(A)", "objective", float(x @ x), None),
        ("far(A)", "constraint", float(x[0]) - 7.0, True),
        ("near(A)", "constraint", float(x[1]) - 2.0, True),
    ]
    got = [(g.name, g.kind, g.value, g.satisfied) for g in result.goals]
    assert len(result.goals) == 3 and got == want
    assert result.goals[-1] == result.goals[2] and result.goals[1:] == list(result.goals)[1:]
    with pytest.raises(IndexError):
        result.goals[3]
    assert result.max_constraint_violation == pytest.approx(max(want[1][2], want[2][2]))
    assert result.max_constraint_violation < -1.0 and result.n_violated == 0
