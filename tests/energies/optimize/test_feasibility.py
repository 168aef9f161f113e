"""The feasibility finish and the infeasible-constraint diagnosis.

Oracles: the quadratic penalty's minimizer in closed form (x* = 1 + s(a - 1)/(s + λk²) for
s(x - a)² with k(x - 1) <= 0), the midpoint that balances two contradicting bounds, scipy's SLSQP
(a point meeting every constraint of a polygon's stage, so its penalty's minimum is 0), and, for the
diagnosis, the constraint's value under random moves of every varying unknown (a constraint that
depends on none stays put; one that depends on some moves).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from energies.compile import compile_problem
from energies.diagram_build import build_diagram
from energies.optimize.lbfgs import drive_setulb, run_round
from energies.optimize.optimizer import EP_STOP, SATISFIED_TOLERANCE, optimize
from service.pipeline import render_trio
from tests.energies.optimize.test_optimize import NumpyProblem, stage

# s(x - a)² with the steep bound k(x - 1) <= 0. Penrose's exterior-point test compares the rounds'
# points: between λ = 1e4 and 1e5 the point moves 0.9·s(a - 1)/(1e4 k²) = 5e-4 < EP_STOP, so Penrose
# stops at λ = 1e5 while the constraint is still k(x - 1) = s(a - 1)/(1e5 k) = 1/600 above zero.
S, A, K = 1.0, 5001.0, 30.0
STEEP = NumpyProblem(
    1,
    objectives=[("sqr(x - a)", lambda x: S * (x[0] - A) ** 2, lambda x: np.array([2 * S * (x[0] - A)]))],
    constraints=[("lessThan(k x, k)", lambda x: K * (x[0] - 1), lambda x: np.array([K]))],
)


def penalty_minimizer(weight: float) -> float:
    return 1 + S * (A - 1) / (S + weight * K * K)


def test_penrose_rounds_stop_above_the_tolerance() -> None:
    # The premise, by hand: at λ = 1e5 the penalty minimizer violates the bound by 1/600, and it moved
    # less than EP_STOP since λ = 1e4.
    assert K * (penalty_minimizer(1e5) - 1) == pytest.approx(1 / 600, rel=1e-6)
    assert penalty_minimizer(1e4) - penalty_minimizer(1e5) < EP_STOP
    for x0 in (0.0, 1.0, 2.0):
        result = optimize(STEEP, np.array([x0]), finish=False)
        assert result.stages[0].weight == 1e5 and result.n_violated == 1
        assert result.max_constraint_violation == pytest.approx(1 / 600, rel=1e-3)


@pytest.mark.parametrize("x0", [0.0, 1.0, 2.0])
def test_finish_continues_rounds_until_satisfied(x0: float) -> None:
    result = optimize(STEEP, np.array([x0]))
    stage = result.stages[0]
    assert stage.status == "EPConverged"
    # One more round, at λ = 1e6, lands on its penalty minimizer, 1/6000 above the bound.
    assert (stage.weight, stage.finish_rounds, stage.ep_rounds) == (1e6, 1, 3)
    assert result.x[0] == pytest.approx(penalty_minimizer(1e6), abs=1e-9)
    assert result.n_violated == 0 and result.max_constraint_violation <= SATISFIED_TOLERANCE
    assert result.max_constraint_violation == pytest.approx(1 / 6000, rel=1e-4)


def test_finish_keeps_penrose_layout_when_rounds_cannot_help() -> None:
    # x <= 0 and x >= 1 contradict each other: every λ balances them at x = 1/2, 0.5 above each.
    bounds = NumpyProblem(
        1,
        objectives=[],
        constraints=[
            ("lessThan(x, 0)", lambda x: x[0], lambda x: np.array([1.0])),
            ("greaterThan(x, 1)", lambda x: 1 - x[0], lambda x: np.array([-1.0])),
        ],
    )
    finished = optimize(bounds, np.array([3.0]))
    plain = optimize(bounds, np.array([3.0]), finish=False)
    assert finished.x[0] == pytest.approx(0.5, abs=1e-3)
    assert finished.stages[0].finish_rounds == 0
    assert finished.x.tobytes() == plain.x.tobytes() and finished.energy == plain.energy
    assert finished.evaluations > plain.evaluations  # the round was tried, then undone


def chain(n: int, objectives: list | None = None, stages: list | None = None) -> NumpyProblem:
    """x0 >= 0, x_(i+1) >= x_i + 1, x_(n-1) <= n - 1: the one feasible point is x_i = i, a jam
    (as packed circles are), so the penalty's minimum is 0 there and only there."""

    def linear(name: str, a: list[float], b: float) -> tuple:
        row = np.array(a)
        return (name, lambda x: float(row @ x + b), lambda x: row.copy())

    def unit(i: int, sign: float = 1.0) -> list[float]:
        return [sign if k == i else 0.0 for k in range(n)]

    constraints = [linear("greaterThan(x0, 0)", unit(0, -1.0), 0.0)]
    for i in range(n - 1):
        constraints.append(
            linear(f"lessThan(x{i} + 1, x{i + 1})", list(np.add(unit(i), unit(i + 1, -1.0))), 1.0)
        )
    constraints.append(linear(f"lessThan(x{n - 1}, {n - 1})", unit(n - 1), 1.0 - n))
    return NumpyProblem(n, objectives or [], constraints, stages or [])


def test_a_jammed_stage_without_objectives_is_finished_below_ep_stop() -> None:
    # Penrose's rounds stop with every constraint within the tolerance but φ above EP_STOP (the
    # decrement test passes once φ is about gᵀHg / 2 < 5e-3); the finish goes on to the jam's point.
    problem = chain(3)
    plain = optimize(problem, np.zeros(3), finish=False)
    assert plain.n_violated == 0 and plain.energy >= EP_STOP
    finished = optimize(problem, np.zeros(3))
    assert finished.stages[0].finish_rounds >= 1 and finished.energy < EP_STOP
    assert finished.x == pytest.approx([0.0, 1.0, 2.0], abs=1e-6)


def test_the_bar_of_ep_stop_is_for_last_stages_without_objectives() -> None:
    # With an objective (zero at the jam's point) or before another stage, Penrose's layout stays.
    at_jam = [
        ("equal(x1, 1)", lambda x: 1e-6 * (x[1] - 1) ** 2, lambda x: np.array([0, 2e-6 * (x[1] - 1), 0.0]))
    ]
    earlier = [stage("jam", 3, 1, 4, objectives=[0]), stage("after", 3, 1, 4, varying=[0, 0, 0])]
    for problem in (chain(3, at_jam), chain(3, at_jam, earlier)):
        plain = optimize(problem, np.zeros(3), finish=False)
        assert plain.n_violated == 0 and plain.penalty * plain.stages[0].weight >= EP_STOP
        finished = optimize(problem, np.zeros(3))
        assert finished.x.tobytes() == plain.x.tobytes()
        assert [s.finish_rounds for s in finished.stages] == [0] * len(problem.stages)


def test_finish_round_evaluates_no_point_twice() -> None:
    # The finish compares φ before and after its round from the round's own evaluations.
    calls: list[tuple[bytes, float]] = []
    energy_and_grad = STEEP.energy_and_grad

    def recorded(x: np.ndarray, stage: int, weight: float) -> tuple[float, np.ndarray]:
        calls.append((x.tobytes(), weight))
        return energy_and_grad(x, stage, weight)

    problem = NumpyProblem(1, STEEP.objectives, STEEP.constraints)
    problem.energy_and_grad = recorded  # type: ignore[method-assign]
    result = optimize(problem, np.array([0.0]))
    assert result.stages[0].finish_rounds == 1 and result.evaluations == len(calls)
    finish = [call for call in calls if call[1] == result.stages[0].weight]
    assert len(finish) > 2 and len(set(finish)) == len(finish)


def test_finish_driver_ends_on_lbfgsb_convergence_without_restarting() -> None:
    # (x0 - 3)² + 100 (x1 + 1)²: L-BFGS-B's own tests end the round at the minimizer (3, -1).
    def fun(x: np.ndarray) -> tuple[float, np.ndarray]:
        return float((x[0] - 3) ** 2 + 100 * (x[1] + 1) ** 2), np.array([2 * (x[0] - 3), 200 * (x[1] + 1)])

    outcome = run_round(
        fun,
        np.array([10.0, 10.0]),
        driver=functools.partial(drive_setulb, factr=10.0, pgtol=1e-5),
        iteration_budget=1000,
        deadline=np.inf,
        report=lambda _i, _f: None,
        penrose_test=False,
    )
    assert outcome.reason == "converged" and outcome.restarts == 0
    assert outcome.x == pytest.approx([3.0, -1.0], abs=1e-6)
    assert outcome.initial_energy == fun(np.array([10.0, 10.0]))[0]
    assert outcome.energy == fun(outcome.x)[0]


# A closed hexagon of side 50 and, in its last stage, a given elastic energy: constraints that fight
# over the same points, as in Penrose's curve examples. Its last stage can be met exactly.
POLYGON = """
canvas { width = 800
height = 800 }
layout = [convex, blob]
forall Curve c {
  points = [(?, ?), (?, ?), (?, ?), (?, ?), (?, ?), (?, ?)]
  shape curve = Polygon { points: points }
  ensure isEquilateral(points, true)
  ensure elasticEnergy(points, true) == 20000 in blob
  ensure signedArea(points, true) == 6000 in convex
  ensure perimeter(points, true) == 300
}
"""


def test_polygon_stage_is_satisfiable() -> None:
    # The oracle: SLSQP finds a point where every constraint of the last stage holds.
    from scipy.optimize import minimize

    diagram = build_diagram("type Curve", "Curve c", POLYGON, "v0", ())
    problem = compile_problem(diagram)
    active = problem.stages[-1].constraints
    assert active.sum() == 4  # with the polygon's implicit onCanvas

    def values(x: np.ndarray) -> np.ndarray:
        return np.asarray(problem.goal_values(x).constraints)[active]

    found = minimize(lambda x: 0.0, np.array(diagram.unknowns.x0), method="SLSQP",
                     constraints={"type": "ineq", "fun": lambda x: -values(x)})  # fmt: skip
    assert found.success and values(found.x).max() < 1e-6


# Variations whose Penrose rounds leave a constraint violated (v3's now end at 7e-4, within tolerance,
# since the L-BFGS direction sums in Penrose's order: the last bits steer these stiff rounds).
@pytest.mark.parametrize("variation", ["v0", "v1", "v2", "v4", "v5", "v6"])
def test_finish_satisfies_a_stiff_stage_that_penroses_rounds_leave(variation: str) -> None:
    # Under λ >= 1e6 Penrose's decrement test gᵀHg < 1e-2 passed after 1-2 L-BFGS-B iterations (H
    # scaled by the stiffest curvature), so each finish round ended where it began: the finish's
    # rounds now run until L-BFGS-B's own tests end them.
    diagram = build_diagram("type Curve", "Curve c", POLYGON, variation, ())
    problem = compile_problem(diagram)
    x0 = np.array(diagram.unknowns.x0)
    assert optimize(problem, x0, finish=False).max_constraint_violation > SATISFIED_TOLERANCE
    result = optimize(problem, x0)
    assert result.n_violated == 0 and result.max_constraint_violation <= SATISFIED_TOLERANCE
    assert result.stages[-1].finish_rounds >= 1


# A fixed circle placed off a 100 x 100 canvas (its onCanvas can never hold), and a free one.
DOMAIN = "type Set"
SUBSTANCE = "Set A, B"
STYLE = """
canvas { width = 100
height = 100 }
forall Set x { x.icon = Circle { r: 10 } }
forall Set `A` {
  override `A`.icon.center = (400, 0)
}
"""
STAGED = """
canvas { width = 100
height = 100 }
layout = [shape, label]
forall Set x { x.icon = Circle { r: 10, ensureOnCanvas: false } }
forall Set `A` {
  ensure lessThan(`A`.icon.center[0], -500) in label
}
forall Set `B` {
  ensure lessThan(`B`.icon.center[0], -500)
}
"""


def moved_values(style: str, n: int = 8) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Constraint values at x0 and at n random moves of every unknown, and the constraint names."""
    diagram = build_diagram(DOMAIN, SUBSTANCE, style, "seed", ())
    problem = compile_problem(diagram)
    x0 = np.array(diagram.unknowns.x0)
    base = problem.goal_values(x0).constraints
    rng = np.random.default_rng(0)
    moved = np.array([problem.goal_values(x0 + rng.normal(0, 50, x0.shape)).constraints for _ in range(n)])
    return base, moved, list(problem.constraint_names)


def test_constant_constraint_is_named_with_its_place() -> None:
    base, moved, names = moved_values(STYLE)
    constant = [i for i in range(len(names)) if np.all(moved[:, i] == base[i])]
    assert len(constant) == 1 and base[constant[0]] > 0  # the oracle: A's onCanvas does not move
    r = render_trio(DOMAIN, SUBSTANCE, STYLE, "seed")
    assert r.optimization.infeasible == tuple(constant)
    assert r.optimization.n_violated == 1 and r.report()["nInfeasible"] == 1
    (warning,) = [w for w in r.warnings if "InfeasibleConstraintWarning" in w]
    assert "onCanvas(`A`.icon)" in warning and "ensureOnCanvas" in warning
    assert "depends on no varying value" in warning
    assert f"value {base[constant[0]]:.4g}" in warning
    assert not r.diagram.warnings or warning not in r.diagram.warnings  # the shared diagram is untouched


def test_constraint_frozen_in_its_stage_is_named_but_movable_one_is_not() -> None:
    base, moved, names = moved_values(STAGED)
    assert len(names) == 2 and all(np.any(moved[:, i] != base[i]) for i in range(2))  # both read unknowns
    r = render_trio(DOMAIN, SUBSTANCE, STAGED, "seed")
    # Circles vary in every stage here, so both bounds can be met: no warning, both satisfied.
    assert r.optimization.infeasible == () and r.optimization.n_violated == 0
    frozen = STAGED.replace(
        "r: 10, ensureOnCanvas", "center: (? in shape, ? in shape), r: 10, ensureOnCanvas"
    )
    r = render_trio(DOMAIN, SUBSTANCE, frozen, "seed")
    # A's bound applies only in `label`, where no centre varies: never satisfiable. B's applies in
    # `shape` too, where its centre moves, and is met there and kept.
    assert r.optimization.n_violated == 1 and len(r.optimization.infeasible) == 1
    (warning,) = [w for w in r.warnings if "InfeasibleConstraintWarning" in w]
    assert warning.startswith("style:7:3: ") and "lessThan(`A`.icon)" not in warning
    assert "ensure lessThan (" in warning and "vary in no layout stage where it applies" in warning
