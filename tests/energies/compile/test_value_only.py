"""φ alone (`CompiledProblem.energy`, the energy's VALUE_ONLY mode) against φ with its gradient.

Oracle: `energy_and_grad` at the same point, stage, weight and rows listed. A line search trusts φ
alone to decide what φ with its gradient would decide, so the two must be the same number bit for
bit, not merely close: whole, culled, on registry Styles (labels, equations, polygons, curves) and at
points far from the initial state.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from energies.compile import culling
from energies.compile import problem as problem_mod
from energies.compile.problem import CompiledProblem
from energies.diagram_build import build_diagram
from service.trios import load_trio

from .test_culling import circles, forced

REGISTRY = Path(__file__).resolve().parents[3] / ".." / "shared" / "penrose-registry"


@pytest.fixture(autouse=True)
def every_energy_answers_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """The mode is built for large energies only (`VALUE_ONLY_MIN_GOALS`); these are small."""
    monkeypatch.setattr(problem_mod, "VALUE_ONLY_MIN_GOALS", 0)


def _alone(problem: CompiledProblem, p: np.ndarray, s: int, weight: float, above: float = math.inf) -> float:
    assert problem.energy_alone is not None
    return problem.energy_alone(p, s, weight, above)


def _same_bits(problem: CompiledProblem, p: np.ndarray, s: int, weight: float) -> None:
    alone = _alone(problem, p, s, weight)
    with_grad, _ = problem.energy_and_grad(p, s, weight)
    assert np.float64(alone).tobytes() == np.float64(with_grad).tobytes(), (alone, with_grad)


@pytest.mark.parametrize(
    "key",
    [
        "graph-domain/other-examples/arpanet",
        "set-theory-domain/tree-venn",
        "structural-formula/molecules/caffeine",
        "box-arrow-diagram/computer-architecture",
        "geometry-domain/textbook_problems/c05p13",
        "shape-distance/points-around-star",
        "walk-on-spheres/laplace-estimator",
    ],
)
def test_the_energy_alone_is_the_energy_of_the_gradient_call(key: str) -> None:
    trio = REGISTRY / f"{key}.trio.json"
    if not trio.exists():
        pytest.skip(f"{trio} is not here")
    spec = load_trio(trio)
    d = build_diagram(spec.domain, spec.substance, spec.style, spec.variation, ())
    problem = CompiledProblem(d, cache=None, culling=False)
    rng = np.random.default_rng(5)
    x = np.array(d.unknowns.x0)
    for s, stage in enumerate(problem.stages):
        moving = stage.varying
        for weight in (1e3, 1e7):
            for p in [x, x + rng.normal(0, 3, len(x)) * moving, x + rng.normal(0, 200, len(x)) * moving]:
                _same_bits(problem, p, s, weight)


def test_the_energy_alone_lists_the_culled_rows_of_the_gradient_call(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(culling, "CULL_MIN_ROWS", 8)
    d = circles(120, 3, spread=300.0)
    culled = CompiledProblem(d, cache=None, culling=True)
    full = CompiledProblem(d, cache=None, culling=False)
    c = forced(culled)
    x = np.array(d.unknowns.x0)
    culled.energy_and_grad(x, 0, 1.0)  # sorts the first box
    assert c.inside(x) and min(culled.counts) < 120 * 119 // 2  # disjoint rows culled
    rng = np.random.default_rng(3)
    for p in [x + rng.uniform(-1, 1, len(x)) * c.radius * 0.999 for _ in range(4)]:
        _same_bits(culled, p, 0, 1e3)
        assert _alone(culled, p, 0, 1e3) == pytest.approx(_alone(full, p, 0, 1e3), rel=1e-12)


def test_the_energy_alone_sorts_no_box_and_its_gradient_call_is_the_same_evaluation() -> None:
    """φ alone at trial points outside the box (a failing bisection's) runs whole and leaves the box
    and its strays as they were; a gradient then asked at the last of them is the same evaluation
    (one count, one step of the policy's, the same rows). The next points outside the box follow the
    usual rule: the first runs whole, the second moves the box."""
    d = circles(120, 1, spread=300.0)
    problem = CompiledProblem(d, cache=None, culling=True)
    c = forced(problem)
    x = np.array(d.unknowns.x0)
    problem.energy_and_grad(x, 0, 1.0)
    boxes, steps, evaluations = c.boxes, len(c.moves), problem.evaluations
    whole = [len(rows) for rows in problem._whole]
    trials = [x + 10 * c.radius * 0.5**k for k in range(3)]  # all outside the box
    assert not any(c.inside(p) for p in trials)
    for p in trials:
        alone = _alone(problem, p, 0, 1.0)
        assert problem.counts == whole and c.boxes == boxes and c.strays == 0
    energy, _ = problem.energy_and_grad(trials[-1], 0, 1.0)
    assert energy == alone and problem.counts == whole and c.boxes == boxes
    assert problem.evaluations == evaluations + 3 and len(c.moves) == steps + 3
    problem.energy_and_grad(trials[0], 0, 1.0)  # with its gradient: the first point outside runs whole
    assert c.boxes == boxes and c.strays == 1 and problem.evaluations == evaluations + 4
    problem.energy_and_grad(trials[1], 0, 1.0)  # the second moves the box
    assert c.boxes == boxes + 1 and c.inside(trials[1])


def test_small_energies_do_not_answer_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(problem_mod, "VALUE_ONLY_MIN_GOALS", 120 * 119 + 1)
    d = circles(120, 1, spread=300.0)  # 2 x 7,140 goals
    assert CompiledProblem(d, cache=None, culling=False).energy_alone is None
    monkeypatch.setattr(problem_mod, "VALUE_ONLY_MIN_GOALS", 120 * 119)
    assert CompiledProblem(d, cache=None, culling=False).energy_alone is not None


PAIRS = """canvas {
  width = 400
  height = 350
}
forall Set x { x.icon = Circle { r: 10 } }
forall Set x; Set y { ensure disjoint(x.icon, y.icon, 2) }
"""


@pytest.mark.parametrize("spread", [0.0, 5.0, 100.0])
def test_above_its_bound_the_energy_alone_of_penalties_may_be_a_partial_sum(spread: float) -> None:
    # 200 circles, every goal a penalty (19,900 disjoint, 200 onCanvas): where φ exceeds `above`, the
    # answer lies in (above, φ]; elsewhere it is φ bit for bit. Oracle: the gradient call's φ.
    substance = "Set " + ", ".join(f"S{k}" for k in range(200))
    d = build_diagram("type Set", substance, PAIRS, "v0", ())
    problem = CompiledProblem(d, cache=None, culling=False)
    assert not problem.stages[0].objectives.any()
    rng = np.random.default_rng(int(spread))
    p = np.array(d.unknowns.x0) + rng.normal(0, spread, len(d.unknowns.x0))
    assert _partial_sums(problem, p, lambda phi: (0.0, 0.01 * phi, 0.5 * phi, 0.999 * phi, phi, 2 * phi))


def _partial_sums(
    problem: CompiledProblem, p: np.ndarray, aboves: Callable[[float], tuple[float, ...]]
) -> int:
    """φ alone at p against each bound `aboves(φ)`, at two weights: where φ exceeds the bound the
    answer lies in (above, φ], elsewhere it is φ bit for bit (oracle: the gradient call's φ); how
    many answers were partial sums below φ."""
    partial = 0
    for weight in (1e3, 1e5):
        phi, _ = problem.energy_and_grad(p, 0, weight)
        assert sum(problem.counts) >= problem_mod.PREFIX_MIN_ROWS
        for above in aboves(phi):
            f = _alone(problem, p, 0, weight, above)
            if phi <= above:
                assert np.float64(f).tobytes() == np.float64(phi).tobytes()
            else:
                assert above < f <= phi
                partial += f < phi
    return partial


def test_the_energy_alone_of_a_stage_with_objectives_is_whole_above_any_bound() -> None:
    # without culling no objective kind has a floor, so its rows are summed whole: where they are
    # half the rows (19,900 notTooClose beside 19,900 disjoint) a partial sum would not pay, and φ
    # itself is the answer
    d = circles(200, 2, spread=300.0)
    problem = CompiledProblem(d, cache=None, culling=False)
    x = np.array(d.unknowns.x0)
    phi, _ = problem.energy_and_grad(x, 0, 1e3)
    assert sum(problem.counts) >= problem_mod.PREFIX_MIN_ROWS
    assert np.float64(_alone(problem, x, 0, 1e3, above=-math.inf)).tobytes() == np.float64(phi).tobytes()


CAPPED = (
    PAIRS
    + """forall Set x; Set y { encourage maximal(min(30, vdist(x.icon.center, y.icon.center))) }
"""
)


@pytest.mark.parametrize("spread", [5.0, 100.0, 2000.0])
def test_above_its_bound_objectives_count_their_rows_left_out_at_their_kinds_floor(spread: float) -> None:
    # 200 circles: 19,900 disjoint penalties and 19,900 objectives -min(30, |x - y|), whose floor is
    # -30 (the interval of Penrose's min, a select reading 30 from two slots). Where φ exceeds
    # `above` the answer lies in (above, φ]; elsewhere it is φ bit for bit. Oracles: the gradient
    # call's φ, and every objective row's value against its kind's floor.
    substance = "Set " + ", ".join(f"S{k}" for k in range(200))
    d = build_diagram("type Set", substance, CAPPED, "v0", ())
    problem = CompiledProblem(d, cache=None)
    assert problem.culler is not None
    floors = problem.culler.floors()
    capped = next(k for k, kind in enumerate(problem.kinds) if kind.name == "maximal")
    assert floors[capped] == -30.0
    rng = np.random.default_rng(int(spread))
    p = np.array(d.unknowns.x0) + rng.normal(0, spread, len(d.unknowns.x0))
    objectives = problem.goal_values(p).objectives
    assert objectives.min() >= -30.0 and np.isclose(objectives.min(), -30.0)
    assert _partial_sums(
        problem, p, lambda phi: (phi - 2 * abs(phi) - 1e6, phi - 0.99 * abs(phi), phi - 1e-3, phi)
    )
