"""The energy compiler on hand-built diagrams, with goal functions defined here, against numpy oracles."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import adcore
from adcore import LRU
from adcore import math as am
from energies.compile import energy as energy_mod
from energies.compile import kinds as kinds_mod
from energies.compile.problem import CompiledProblem
from energies.diagram import Diagram, GoalInstance, ShapeInstance, Unknowns
from energies.expr import input_node
from energies.optimize.optimizer import optimize


def disjoint_circles(a, b, padding=0.0):
    d = [a.props["center"][0] - b.props["center"][0], a.props["center"][1] - b.props["center"][1]]
    return a.props["r"] + b.props["r"] + padding - am.sqrt(d[0] * d[0] + d[1] * d[1])


def near_origin(a, weight):
    return weight * (a.props["center"][0] ** 2 + a.props["center"][1] ** 2)


LIB = {("constraint", "disjoint"): disjoint_circles, ("objective", "nearOrigin"): near_origin}


@pytest.fixture(autouse=True)
def test_library(monkeypatch):
    monkeypatch.setattr(energy_mod, "library_for", lambda kind: LIB[(kind.goal, kind.name)])
    monkeypatch.setattr(kinds_mod, "geometric_props", lambda: {"Circle": ("center", "r")})


def circles_diagram(n: int, seed: int = 0, padding: float = 2.0) -> Diagram:
    rng = np.random.default_rng(seed)
    unknowns = Unknowns()
    shapes = []
    for k in range(n):
        cx = input_node(unknowns.add(rng.uniform(-50, 50), f"c{k}.x"))
        cy = input_node(unknowns.add(rng.uniform(-50, 50), f"c{k}.y"))
        shapes.append(
            ShapeInstance(
                f"c{k}", "Circle", {"center": [cx, cy], "r": 5.0 + k % 3, "fillColor": [0, 0, 0, 1]}
            )
        )
    goals = [
        GoalInstance("constraint", "disjoint", [a, b, padding]) for a, b in itertools.combinations(shapes, 2)
    ]
    goals += [GoalInstance("objective", "nearOrigin", [s, 0.01 * (1 + k % 2)]) for k, s in enumerate(shapes)]
    return Diagram((200.0, 200.0), shapes, goals, unknowns)


def numpy_energy(d: Diagram, x: np.ndarray, weight: float) -> float:
    n = len(d.shapes)
    c = x.reshape(n, 2)
    r = np.array([5.0 + k % 3 for k in range(n)])
    total = sum(0.01 * (1 + k % 2) * (c[k] @ c[k]) for k in range(n))
    for a, b in itertools.combinations(range(n), 2):
        v = r[a] + r[b] + 2.0 - np.linalg.norm(c[a] - c[b])
        total += weight * max(v, 0.0) ** 2
    return total


def test_kinds_do_not_grow_with_instances() -> None:
    small = CompiledProblem(circles_diagram(6), cache=None)
    big = CompiledProblem(circles_diagram(40), cache=None)
    assert len(small.kinds) == len(big.kinds) == 2
    assert [k.n_rows for k in big.kinds] == [40, 40 * 39 // 2]
    size = lambda p: sum(
        adcore.ir.count_eqns(g.body) for g in adcore.ir.call_graph(p.functions.energy_and_grad.ir) if g.body
    )
    assert size(small) == size(big)


def test_energy_and_gradient_match_numpy_and_finite_differences() -> None:
    d = circles_diagram(12, seed=3)
    p = CompiledProblem(d, cache=None)
    x = np.array(d.unknowns.x0) * 0.3  # pack them so that constraints are violated
    e, g = p.energy_and_grad(x, 0, 1e3)
    assert e == pytest.approx(numpy_energy(d, x, 1e3), rel=1e-12)
    h = 1e-6
    for k in range(0, len(x), 5):
        step = np.zeros_like(x)
        step[k] = h
        fd = (numpy_energy(d, x + step, 1e3) - numpy_energy(d, x - step, 1e3)) / (2 * h)
        assert g[k] == pytest.approx(fd, rel=1e-5, abs=1e-5)
    obj, con = p.raw_goal_values(x)
    assert len(obj) == 12 and len(con) == 66
    assert con[0] == pytest.approx(11.0 + 2.0 - np.linalg.norm(x[0:2] - x[2:4]))


def test_constraint_values_of_a_subset_are_numpys_and_leave_the_energy_as_it_was() -> None:
    d = circles_diagram(12, seed=3)
    p = CompiledProblem(d, cache=None)
    x = np.array(d.unknowns.x0) * 0.3
    e, g = p.energy_and_grad(x, 0, 1e3)
    n = len(d.shapes)
    r = np.array([5.0 + k % 3 for k in range(n)])
    c = x.reshape(n, 2)
    # constraints in pair order (itertools.combinations), as circles_diagram lists them
    numpy_values = np.array(
        [r[a] + r[b] + 2.0 - np.linalg.norm(c[a] - c[b]) for a, b in itertools.combinations(range(n), 2)]
    )
    rng = np.random.default_rng(0)
    for share in (1.0, 0.0, 0.5, 0.1):  # a part last: the energy must list its own rows again
        which = rng.random(len(numpy_values)) < share
        got = p.constraint_values(x, which)
        assert got == pytest.approx(numpy_values[which], rel=1e-12, abs=1e-12)
    # The energy's own row lists are back at its next evaluation.
    assert p.energy_and_grad(x, 0, 1e3)[0] == e


def test_optimization_satisfies_all_pairs_disjoint() -> None:
    d = circles_diagram(15, seed=1)
    p = CompiledProblem(d, cache=None)
    result = optimize(p, np.array(d.unknowns.x0))
    assert result.n_violated == 0
    assert result.max_constraint_violation <= 1e-3


def test_structure_cache_reuses_compiled_functions() -> None:
    cache = LRU(64)
    first = CompiledProblem(circles_diagram(8, seed=1), cache=cache)
    second = CompiledProblem(circles_diagram(8, seed=2), cache=cache)
    assert not first.cache_hit and second.cache_hit
    assert second.functions is first.functions
    x = np.array(second.diagram.unknowns.x0)
    assert second.energy_and_grad(x, 0, 10.0)[0] == pytest.approx(
        numpy_energy(second.diagram, x, 10.0), rel=1e-12
    )


def test_nan_goal_is_located() -> None:
    d = circles_diagram(3)
    d.goals.append(GoalInstance("objective", "nearOrigin", [d.shapes[0], float("nan")]))
    p = CompiledProblem(d, cache=None)
    obj_jac, con_jac = p.goal_jacobian(np.array(d.unknowns.x0))
    assert np.isnan(obj_jac.toarray()[-1]).any() and np.isfinite(con_jac.toarray()).all()


def test_compiling_pauses_the_cycle_collector_and_restores_it(monkeypatch) -> None:
    import gc

    from energies.compile import problem as problem_mod

    seen: list[bool] = []
    real = problem_mod.CompiledProblem

    def recording(diagram, **options):
        seen.append(gc.isenabled())
        if len(seen) > 1:
            raise RuntimeError("a compile that fails")
        return real(diagram, **options)

    monkeypatch.setattr(problem_mod, "CompiledProblem", recording)
    p = problem_mod.compile_problem(circles_diagram(4), cache=None)
    assert seen == [False] and gc.isenabled() and p.n_inputs > 0
    with pytest.raises(RuntimeError):
        problem_mod.compile_problem(circles_diagram(4), cache=None)
    assert seen == [False, False] and gc.isenabled()


def test_the_goal_jacobian_matches_finite_differences() -> None:
    d = circles_diagram(5, seed=3)
    p = CompiledProblem(d, cache=None)
    x = np.array(d.unknowns.x0)
    jacobians = [j.toarray() for j in p.goal_jacobian(x)]
    h = 1e-6
    for i in range(len(x)):
        up, down = x.copy(), x.copy()
        up[i] += h
        down[i] -= h
        hi, lo = p.goal_values(up), p.goal_values(down)
        for jac, a, b in zip(jacobians, (hi.objectives, hi.constraints), (lo.objectives, lo.constraints)):
            np.testing.assert_allclose(jac[:, i], (a - b) / (2 * h), rtol=1e-6, atol=1e-6)


def test_a_goal_with_a_nonfinite_gradient_is_named(monkeypatch) -> None:
    from energies.optimize.optimizer import _blame_nonfinite

    def raw_disjoint(a, b, padding=0.0):  # sqrt without the library's guard at 0: ∂ = inf there
        d = [a.props["center"][0] - b.props["center"][0], a.props["center"][1] - b.props["center"][1]]
        return a.props["r"] + b.props["r"] + padding - am.raw_sqrt(d[0] * d[0] + d[1] * d[1])

    monkeypatch.setitem(LIB, ("constraint", "disjoint"), raw_disjoint)
    d = circles_diagram(60, seed=4)
    p = CompiledProblem(d, cache=None)
    x = np.array(d.unknowns.x0)
    x[2 * 7 : 2 * 7 + 2] = x[2 * 41 : 2 * 41 + 2]  # circles 7 and 41 on one center: |c7 - c41| = 0
    values = p.goal_values(x)
    assert np.isfinite(values.constraints).all()  # r7 + r41 + 2 - sqrt(0): a finite value
    goal, how = _blame_nonfinite(p, x, p.stages[0], 1e3)
    assert how == "its gradient is not finite"
    pair = [i for i, g in enumerate(d.goals) if g.args[:2] == [d.shapes[7], d.shapes[41]]]
    assert goal == p.constraint_names[pair[0]]
