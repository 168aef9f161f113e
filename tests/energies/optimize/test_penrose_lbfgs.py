"""Penrose's L-BFGS driver: its line search on hand-derived one-dimensional cases and the whole driver
against known minimizers (numpy's linear solve, Rosenbrock's (1, 1)) and Penrose's own runs. Its
two-loop recursion, adcore's kernel, is tested in tests/adcore/test_kernels.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

from energies.optimize.lbfgs import DecrementTracker
from energies.optimize.optimizer import GoalValues, StageSpec, optimize
from energies.optimize.penrose_lbfgs import MAX_STEPS, drive_penrose, line_search


def _square(x: np.ndarray) -> tuple[float, np.ndarray]:
    return float(x @ x), 2.0 * x


class _Counting:
    def __init__(self, fun):  # type: ignore[no-untyped-def]
        self.fun, self.points = fun, []

    def __call__(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        self.points.append(x.copy())
        return self.fun(x)


def test_line_search_bisects_back_to_armijo() -> None:
    # f = x², x0 = 1, r = g = 2: t = 1 lands on f(-1) = 1 > 1 - 0.004 (Armijo fails), t = 1/2 lands
    # on the minimum 0, where the slope 0 passes the curvature test 0 >= 0.9 * -4.
    f = _Counting(_square)
    x, t, fx, gx = line_search(f, np.array([1.0]), np.array([2.0]), 1.0, -4.0)
    assert t == 0.5 and x[0] == 0.0
    assert [p[0] for p in f.points] == [-1.0, 0.0]
    assert fx == 0.0 and gx is not None and gx[0] == 0.0  # the accepted step was evaluated: kept


def test_line_search_doubles_until_the_curvature_test_passes() -> None:
    # f = x², x0 = 1, r = 0.02: slope -0.04; at t = 1, 2, 4 the slope along -r (-0.02 f'(x)) is
    # -0.0392, -0.0384, -0.0368 < -0.036 (curvature fails, Armijo holds); at t = 8, x = 0.84, -0.0336.
    f = _Counting(_square)
    x, t, _, _ = line_search(f, np.array([1.0]), np.array([0.02]), 1.0, -0.04)
    assert t == 8.0 and x[0] == pytest.approx(0.84)
    assert len(f.points) == 4


def test_line_search_takes_its_last_step_when_every_trial_fails() -> None:
    # Every trial is non-finite: MAX_STEPS + 1 halvings from t = 1 are evaluated, then the next
    # step (2^-(MAX_STEPS + 1)) is taken unevaluated, as Penrose does.
    f = _Counting(lambda x: (float("inf"), np.zeros_like(x)))
    r = np.array([4096.0, -2048.0])
    x, t, fx, gx = line_search(f, np.zeros(2), r, 0.0, -float(r @ r))
    assert len(f.points) == MAX_STEPS + 1
    assert fx is None and gx is None  # moved there unevaluated
    assert t == 2.0 ** -(MAX_STEPS + 1)
    np.testing.assert_array_equal(x, -t * r)


class _Values:
    """φ alone, counted: the value a line search may test a trial on before asking its gradient."""

    def __init__(self, fun):  # type: ignore[no-untyped-def]
        self.fun, self.points = fun, []

    def __call__(self, x: np.ndarray, above: float = math.inf) -> float:
        self.points.append(x.copy())
        f, _ = self.fun(x)
        return f if np.isfinite(f) else float("inf")


class _PartialValues(_Values):
    """φ alone answering, where φ exceeds the bound, the midpoint between them (as a partial sum of
    penalties may: `ValueAbove`)."""

    def __call__(self, x: np.ndarray, above: float = math.inf) -> float:
        f = super().__call__(x, above)
        return 0.5 * (above + f) if above < f < math.inf else f


@pytest.mark.parametrize("cautious", [True, False])
def test_trials_likely_to_fail_are_tested_on_the_energy_alone(cautious: bool) -> None:
    # f = x² from x0 = 1 along r = 8 (slope -16): t = 1, 1/2, 1/4 land on x = -7, -3, -1 and fail
    # Armijo (φ = 49, 9, 1 against 1 - 0.016 t); t = 1/8 lands on the minimum 0. After each failure
    # the quadratic through f0, the slope and that trial (curvature 64, this f exactly) predicts
    # failure at t = 1/2 and 1/4 (64 t > 0.999 * 16) and success at 1/8. A cautious search tests
    # every trial on φ alone; otherwise x = -7 is evaluated whole, the predicted failures on φ
    # alone, the predicted success whole. Either way the step is the one the plain search takes.
    f, value = _Counting(_square), _Values(_square)
    x, t, fx, gx = line_search(f, np.array([1.0]), np.array([8.0]), 1.0, -16.0, value, cautious=cautious)
    assert t == 0.125 and x[0] == 0.0 and fx == 0.0 and gx is not None
    plain = line_search(_square, np.array([1.0]), np.array([8.0]), 1.0, -16.0)
    assert plain.t == t and plain.x[0] == x[0]
    assert [p[0] for p in f.points] == ([0.0] if cautious else [-7.0, 0.0])
    assert [p[0] for p in value.points] == ([-7.0, -3.0, -1.0, 0.0] if cautious else [-3.0, -1.0])


@pytest.mark.parametrize("cautious", [True, False])
def test_a_smaller_value_above_the_bound_leaves_the_steps_as_they_were(cautious: bool) -> None:
    # The same search as above with φ alone answering partial sums above each Armijo bound: the
    # failed trials fail, the step is the same. Without cautious, x = -7 is evaluated whole (φ = 49)
    # and the quadratic through it still flags t = 1/2, whose partial answer (between its bound and
    # 9) then flattens the next quadratic, which no longer flags t = 1/4: it is evaluated whole.
    f, value = _Counting(_square), _PartialValues(_square)
    x, t, fx, gx = line_search(f, np.array([1.0]), np.array([8.0]), 1.0, -16.0, value, cautious=cautious)
    assert t == 0.125 and x[0] == 0.0 and fx == 0.0 and gx is not None
    assert [p[0] for p in f.points] == ([0.0] if cautious else [-7.0, -1.0, 0.0])
    assert [p[0] for p in value.points] == ([-7.0, -3.0, -1.0, 0.0] if cautious else [-3.0])


def test_a_search_that_fails_every_trial_asks_no_gradient_after_the_first() -> None:
    f = _Counting(lambda x: (float("inf"), np.zeros_like(x)))
    value = _Values(f.fun)
    r = np.array([4096.0, -2048.0])
    x, t, fx, gx = line_search(f, np.zeros(2), r, 0.0, -float(r @ r), value)
    assert len(f.points) == 1 and len(value.points) == MAX_STEPS  # as many trials as before
    assert fx is None and t == 2.0 ** -(MAX_STEPS + 1)


def _drive(fun, x0: np.ndarray, tol: float) -> tuple[np.ndarray, DecrementTracker, list[float]]:  # type: ignore[no-untyped-def]
    tracker = DecrementTracker(fun)
    decrements: list[float] = []

    def on_iteration(decrement: float) -> bool:
        decrements.append(decrement)
        return decrement < tol or len(decrements) > 10_000

    return drive_penrose(tracker, x0, on_iteration), tracker, decrements


def test_first_step_is_the_raw_gradient() -> None:
    # f = |x|²/2: the first trial x0 - ∇f(x0) is the minimizer itself.
    seen = _Counting(lambda x: (0.5 * float(x @ x), x.copy()))
    x, _, decrements = _drive(seen, np.array([3.0, -4.0]), 1e-12)
    np.testing.assert_array_equal(seen.points[1], [0.0, 0.0])
    np.testing.assert_allclose(x, 0.0, atol=1e-12)
    assert decrements[0] < 1e-12
    # x0, the trial at the minimizer, and the next line search's first trial (r = 0: the same
    # point). Penrose also evaluates the minimizer once more before that step; we reuse the line
    # search's numbers.
    assert len(seen.points) == 3


def test_convex_quadratic_reaches_the_linear_solve() -> None:
    rng = np.random.default_rng(7)
    a = rng.normal(size=(12, 12))
    hess, b = a @ a.T + np.eye(12), rng.normal(size=12)

    def fun(x: np.ndarray) -> tuple[float, np.ndarray]:
        return float(0.5 * x @ hess @ x - b @ x), hess @ x - b

    x, tracker, decrements = _drive(fun, rng.normal(size=12) * 10, 1e-16)
    np.testing.assert_allclose(x, np.linalg.solve(hess, b), atol=1e-6)
    # The decrement handed over is gᵀ H g >= 0, and the energy kept is φ where the last search began.
    assert all(d >= 0 for d in decrements)
    assert tracker.iterate_energy == pytest.approx(fun(np.linalg.solve(hess, b))[0], abs=1e-9)


@pytest.mark.parametrize("start", [(-1.2, 1.0), (2.0, 2.0), (0.0, -1.5), (-2.0, 3.0)])
def test_rosenbrock_reaches_its_minimizer(start: tuple[float, float]) -> None:
    def fun(v: np.ndarray) -> tuple[float, np.ndarray]:
        x, y = v
        f = (1 - x) ** 2 + 100 * (y - x * x) ** 2
        return float(f), np.array([-2 * (1 - x) - 400 * x * (y - x * x), 200 * (y - x * x)])

    x, _, _ = _drive(fun, np.array(start), 1e-14)
    np.testing.assert_allclose(x, [1.0, 1.0], atol=1e-5)


def test_kept_energy_is_where_the_last_line_search_began() -> None:
    # f = (x² + 10 y²)/2 from (1, 1), g = (1, 10), φ = 5.5: the first step halves t from 1 until
    # Armijo holds at t = 1/8, x1 = (0.875, -0.25), φ(x1) = 0.3828125 + 0.3125 (slope there is
    # -(0.875 - 25) >= 0.9 * -101, curvature passes). Stopping at the first check keeps φ(x1), not
    # φ at the point the second line search ended on.
    def fun(v: np.ndarray) -> tuple[float, np.ndarray]:
        return float(0.5 * (v[0] ** 2 + 10 * v[1] ** 2)), np.array([v[0], 10 * v[1]])

    tracker = DecrementTracker(fun)
    x = drive_penrose(tracker, np.array([1.0, 1.0]), lambda decrement: True)
    assert tracker.iterate_energy == 0.6953125
    assert fun(x)[0] < 0.6953125


class CappedQuadratic:
    """φ = (x - 3)² + λ max(x - 1, 0)²: minimize (x - 3)² subject to x <= 1."""

    n_inputs = 1
    objective_names = ["sqr(x - 3)"]
    constraint_names = ["lessThan(x, 1)"]
    stages = [StageSpec("", np.ones(1, bool), np.ones(1, bool), np.ones(1, bool))]

    def energy_and_grad(self, x: np.ndarray, stage: int, weight: float) -> tuple[float, np.ndarray]:
        c = max(x[0] - 1, 0.0)
        return (x[0] - 3) ** 2 + weight * c * c, np.array([2 * (x[0] - 3) + 2 * weight * c])

    def goal_values(self, x: np.ndarray) -> GoalValues:
        return GoalValues(np.array([(x[0] - 3) ** 2]), np.array([x[0] - 1]))

    def goal_jacobian(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.array([[2 * (x[0] - 3)]]), np.array([[1.0]])


@pytest.mark.parametrize(
    ("x0", "x", "ep_rounds", "evaluations"),
    [
        # Penrose's own optimizer (@penrose/core 4.0.0-alpha.5: Optimizer.js start, then stepUntil
        # until EPConverged), run in Node on φ = (x - 3)² + λ max(x - 1, 0)²: its final x, EPround and
        # number of energy evaluations. L-BFGS-B ends this problem after 2 λ increases at x ≈ 1.00002.
        # We evaluate less: φ at the point a line search accepted is not computed a second time.
        (-5.0, 0.9991597149703536, 7, 302),
        (0.0, 0.999653592904129, 6, 284),
        (7.0, 0.9994763886263087, 7, 346),
    ],
)
def test_a_whole_run_follows_penroses_optimizer(
    x0: float, x: float, ep_rounds: int, evaluations: int
) -> None:
    result = optimize(CappedQuadratic(), np.array([x0]), inner_solver="penrose")
    assert result.x[0] == pytest.approx(x, abs=1e-12)
    assert result.ep_rounds == ep_rounds
    assert result.stages[-1].weight == 1e3 * 10.0**ep_rounds
    assert result.evaluations < evaluations


class StiffCap(CappedQuadratic):
    """φ = (x - 200)² + λ max(x² - 100², 0)²: minimize (x - 200)² subject to x <= 100, through a
    constraint whose penalty is quartic, so its curvature grows with the violation (offset's
    elasticEnergy and signedArea constraints, c05p13's label constraints)."""

    def energy_and_grad(self, x: np.ndarray, stage: int, weight: float) -> tuple[float, np.ndarray]:
        c = max(x[0] ** 2 - 1e4, 0.0)
        return (x[0] - 200) ** 2 + weight * c * c, np.array([2 * (x[0] - 200) + 4 * weight * c * x[0]])

    def goal_values(self, x: np.ndarray) -> GoalValues:
        return GoalValues(np.array([(x[0] - 200) ** 2]), np.array([x[0] ** 2 - 1e4]))


@pytest.mark.parametrize(
    ("x0", "x", "evaluations"),
    [
        # Penrose's own optimizer in Node (as above) on StiffCap: its final x, after EPround 2, and
        # its number of evaluations.
        (0.0, 99.96808288812987, 123),
        (150.0, 99.98133105346344, 143),
        (300.0, 99.9708547098665, 149),
    ],
)
def test_a_stiff_penalty_ends_where_penroses_optimizer_ends(x0: float, x: float, evaluations: int) -> None:
    # Why offset and c05p13 keep what their first round left. The first round ends at the constrained
    # minimizer (x = 100 + 2.5e-6). At λ = 1e4 the raw-gradient first step fails all 11 Armijo trials
    # and is taken anyway, unevaluated and uphill, to x ≈ 99.56; the pairs (s, y) then span the kink,
    # whose curvature (8λx² ≈ 4e8) makes gᵀHg < 1e-2 with |g| = 200: the round stops inside, at
    # 99.968. At λ = 1e5 the first step overshoots (φ = 1.7e7), the next steps back: 2 iterations, no
    # move, and the exterior-point test (|Δx| < 1e-3) ends the run there.
    result = optimize(StiffCap(), np.array([x0]), inner_solver="penrose")
    assert result.x[0] == pytest.approx(x, abs=1e-12)
    assert result.ep_rounds == 2 and result.evaluations < evaluations
    rounds = result.stages[0]
    assert rounds.status == "EPConverged" and 100 - result.x[0] > 0.01  # not the minimizer 100


class ValuedStiffCap(StiffCap):
    """StiffCap offering φ alone (the optimizer's `ValueOnly`), counting each kind of evaluation."""

    def __init__(self) -> None:
        self.gradients = self.values = 0

    def energy_and_grad(self, x: np.ndarray, stage: int, weight: float) -> tuple[float, np.ndarray]:
        self.gradients += 1
        return super().energy_and_grad(x, stage, weight)

    def energy_alone(self, x: np.ndarray, stage: int, weight: float, above: float = math.inf) -> float:
        self.values += 1
        return super().energy_and_grad(x, stage, weight)[0]


@pytest.mark.parametrize("x0", [0.0, 150.0, 300.0])
def test_trials_tested_on_the_energy_alone_leave_the_run_as_it_was(x0: float) -> None:
    # StiffCap's raw-gradient first steps fail all their trials (above): with φ alone offered, the
    # run ends at the same point after the same number of evaluations, with fewer gradients.
    plain = optimize(StiffCap(), np.array([x0]), inner_solver="penrose")
    problem = ValuedStiffCap()
    valued = optimize(problem, np.array([x0]), inner_solver="penrose")
    assert valued.x[0] == plain.x[0] and valued.evaluations == plain.evaluations
    assert problem.values > 10 and problem.gradients < plain.evaluations - 10


class NanHole(CappedQuadratic):
    """φ = x², finite everywhere, its gradient NaN for |x| < 0.1 (as where a norm's derivative is
    0/0); no constraint (its value is -1)."""

    def __init__(self) -> None:
        self.points: list[float] = []

    def energy_and_grad(self, x: np.ndarray, stage: int, weight: float) -> tuple[float, np.ndarray]:
        self.points.append(float(x[0]))
        return float(x[0] ** 2), np.array([np.nan if abs(x[0]) < 0.1 else 2 * x[0]])

    def goal_values(self, x: np.ndarray) -> GoalValues:
        return GoalValues(np.array([x[0] ** 2]), np.array([-1.0]))


def test_a_trial_with_a_non_finite_gradient_fails_armijo() -> None:
    # Penrose #1903 (after 4.0.0-alpha.5): a trial point whose energy, gradient or coordinates are not
    # all finite counts as a failed Armijo test. From x0 = 1 (g = 2) the first line search tries t = 1
    # (x = -1, φ = 1: Armijo fails), t = 1/2 (x = 0: φ = 0 passes Armijo, the gradient is NaN), then
    # t = 1/4 (x = 1/2: φ = 1/4 passes Armijo, slope -2 >= 0.9 * -4 passes the curvature test).
    # 4.0.0-alpha.5 took x = 0 as a failed curvature test and tried t = 3/4 (x = -1/2) instead.
    problem = NanHole()
    optimize(problem, np.array([1.0]), max_iters=1)
    assert problem.points[:4] == [1.0, -1.0, 0.0, 0.5]
    assert -0.5 not in problem.points
