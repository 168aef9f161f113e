"""The registry trios whose constraints docs/layout-quality.md proves contradictory, or satisfiable
though both systems stop short, checked on our compiled constraints against the hand derivations:

- molecules/nitricacid-lewis: a lone pair at distance ρ from its atom's center has dots
  √(ρ² + 16) from it; `contains` asks √(ρ² + 16) - 13.5 <= 0, `equal` asks |ρ - 15| = 0. Their
  equal-weight penalty is least at the ρ a scalar minimizer finds for the hand formula, and the
  least largest violation is at √(ρ² + 16) - 13.5 = 15 - ρ, ρ = 796.25/57.
- timeline/penrose: a chain of 11 task boxes 45 apart in a range of 365: the largest violation is
  at least 85/12, which 11 evenly spaced levels reach.
- geometric-queries/closest-point/test-group: a triangle on three corners of the fixed dashed box
  satisfies every constraint.
- stochastic-process/stochastic-process on 7 of the harness's 10 variations: the walk the Style draws
  moves with its start point, and so do the points' labels, each 10 px from its point in a free
  direction θ; `disjoint(label, path)` therefore depends on θ alone, and its least value over θ is
  positive (the walk winds around the point): no layout is clean (Σ max(c, 0)² >= 0.1).

Least values are searched with scipy's SLSQP (the largest violation as an epigraph variable).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import numpy as np
import pytest
from scipy.optimize import minimize, minimize_scalar

from energies.compile import CompiledProblem, compile_problem
from energies.diagram import Diagram
from energies.optimize.optimizer import optimize
from service.render.concrete import concrete_shapes

from .service_support import HAS_REGISTRY, registry_diagram

pytestmark = pytest.mark.skipif(not HAS_REGISTRY, reason="needs ../shared registry data")


def compiled(key: str) -> tuple[Diagram, CompiledProblem]:
    d = registry_diagram(key)
    return d, compile_problem(d)


def least_largest_violation(
    p: CompiledProblem, stage: int, base: np.ndarray, starts: list[np.ndarray]
) -> list[float]:
    """For each start (values of the stage's varying unknowns): the largest violation among the
    stage's constraints where SLSQP, minimizing it, stops."""
    spec = p.stages[stage]
    vary, active = np.flatnonzero(spec.varying), spec.constraints

    def full(y: np.ndarray) -> np.ndarray:
        x = base.copy()
        x[vary] = y
        return x

    def values(y: np.ndarray) -> np.ndarray:
        return p.goal_values(full(y)).constraints[active]

    def jac(z: np.ndarray) -> np.ndarray:
        rows = p.goal_jacobian(full(z[:-1]))[1].toarray()[active][:, vary]
        return np.hstack([-rows, np.ones((len(rows), 1))])

    out = []
    for y in starts:
        r = minimize(
            lambda z: z[-1],
            np.r_[y, values(y).max()],
            jac=lambda z: np.r_[np.zeros(len(vary)), 1.0],
            constraints=[{"type": "ineq", "fun": lambda z: z[-1] - values(z[:-1]), "jac": jac}],
            method="SLSQP",
            options={"maxiter": 500, "ftol": 1e-12},
        )
        out.append(float(values(r.x[:-1]).max()))
    return out


def by_name(d: Diagram, pick: Callable[[str], str | None]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for i, name in enumerate(d.unknowns.names):
        key = pick(name)
        if key is not None:
            out.setdefault(key, []).append(i)
    return out


def test_nitricacid_lone_pairs_contradict_their_distance_to_the_atom():
    d, p = compiled("molecules/nitricacid-lewis")
    x = optimize(p, np.array(d.unknowns.x0)).x
    contains = lambda rho: math.hypot(rho, 4) - 13.5  # noqa: E731
    penalty = minimize_scalar(
        lambda rho: 2 * max(contains(rho), 0) ** 2 + (rho - 15) ** 2,
        bounds=(10, 15),
        method="bounded",
        options={"xatol": 1e-12},
    ).x
    values = p.goal_values(x).constraints
    violated = sorted(float(v) for v in values if v > 1e-3)
    # 7 lone pairs (2 + 2 + 3), each with two `contains` and one `equal`; Penrose's `normalize` adds
    # 1e-5 to the norm, which moves the values in their seventh digit
    assert len(violated) == 21
    assert violated[:14] == pytest.approx([contains(penalty)] * 14, abs=1e-5)
    assert violated[14:] == pytest.approx([15 - penalty] * 7, abs=1e-5)
    rho = 796.25 / 57  # where √(ρ² + 16) - 13.5 = 15 - ρ
    assert contains(rho) == pytest.approx(15 - rho, abs=1e-12)
    vary = np.flatnonzero(p.stages[2].varying)
    rng = np.random.default_rng(0)
    found = least_largest_violation(p, 2, x, [x[vary] + rng.uniform(-20, 20, len(vary)) for _ in range(3)])
    assert min(found) == pytest.approx(15 - rho, abs=1e-5)


def test_timeline_tasks_cannot_fit_their_range():
    d, p = compiled("timeline/penrose")
    tasks = by_name(d, lambda n: n.split("`")[1] if n.endswith("centerY (style:141:17)") else None)
    assert len(tasks) == 13 and p.stages[1].varying.sum() == 13  # only the boxes' heights vary
    t = 85 / 12  # 10 gaps of 45 - t in 365 + 2t
    levels = np.linspace(-222.5 - t, 142.5 + t, 11)
    bottom_to_top = ["e5", "e4", "e6", "e9", "e3", "e8", "e2", "e10", "e11", "e12", "e13"]
    x = np.array(d.unknowns.x0)
    for level, task in zip(levels, bottom_to_top):
        x[tasks[task]] = level
    x[tasks["e1"]] = x[tasks["e5"]]  # e1 and e5 do not overlap in time, nor e7 and e9
    x[tasks["e7"]] = x[tasks["e9"]]
    assert p.goal_values(x).constraints.max() == pytest.approx(t, abs=1e-9)
    vary = np.flatnonzero(p.stages[1].varying)
    rng = np.random.default_rng(0)
    found = least_largest_violation(p, 1, x, [x[vary] + rng.uniform(-4, 4, len(vary)) for _ in range(4)])
    assert min(found) == pytest.approx(t, abs=1e-6)


def test_closest_point_group_is_satisfiable_with_the_triangle_on_the_box():
    d, p = compiled("geometric-queries/closest-point/test-group")
    x = optimize(p, np.array(d.unknowns.x0)).x
    assert p.goal_values(x).constraints.max() > 300  # the circle's branch of the group's `contains`
    (box,) = [s for s in concrete_shapes(d.shapes, x) if s.props.get("strokeDasharray") == "10 8"]
    (cx, cy), stroke = box.props["center"], box.props["strokeWidth"]
    a, b = (box.props["width"] + stroke) / 2, (box.props["height"] + stroke) / 2
    corner = re.compile(r".*\.(p[012]) \(style:11")  # the triangle's points: `vec2 p0 = (?,?)`
    corners = by_name(d, lambda n: (m := corner.match(n)) and m[1])
    for name, (px, py) in {"p0": (cx - a, cy - b), "p1": (cx + a, cy - b), "p2": (cx - a, cy + b)}.items():
        x[corners[name]] = (px, py)
    assert p.goal_values(x).constraints.max() <= 1e-9


# The harness's variations (`~i`) of stochastic-process that no layout can make clean: the point whose
# label cannot leave the walk, and the least value of its `disjoint` over θ (as this test finds it).
WALKS = {"~1": ("X0", 10.54), "~3": ("XT", 10.66), "~5": ("X0", 6.18), "~6": ("XT", 9.17),
         "~7": ("X0", 8.37), "~8": ("XT", 3.69), "~9": ("XT", 3.07)}  # fmt: skip


@pytest.mark.parametrize("suffix", sorted(WALKS))
def test_stochastic_process_labels_cannot_leave_the_walk(suffix: str) -> None:
    point, least = WALKS[suffix]
    d = registry_diagram("stochastic-process/stochastic-process", suffix)
    p = compile_problem(d)
    # The unknowns: the start point X0.x (2), then the labels' θ of X0 and XT (style:27:19).
    names = d.unknowns.names
    assert [n.split(" ")[0] for n in names] == ["`X0`.x", "`X0`.x", "2:0.theta", "2:1.theta"]
    theta = 2 if point == "X0" else 3
    [c] = [i for i, n in enumerate(p.constraint_names) if "style:185:4" in n and f"p={point}," in n]
    x = np.array(d.unknowns.x0)

    def value(x: np.ndarray) -> float:
        return float(p.goal_values(x).constraints[c])

    # Moving the start moves the walk and both labels alike: the value does not change.
    moved = x + np.array([37.5, -21.25, 0.0, 0.0])
    assert value(moved) == pytest.approx(value(x), abs=1e-9)
    n = 720
    grid = []
    for k in range(n):
        x[theta] = 2 * math.pi * k / n
        grid.append(value(x))
    g = np.array(grid)
    # Between grid points the label moves at most 10·π/n px, and the value moves at most as much
    # (checked on the grid: the largest change per px of the label's move is 1).
    step = 10 * 2 * math.pi / n
    assert np.max(np.abs(np.diff(np.append(g, g[0])))) <= step * (1 + 1e-9)
    assert g.min() == pytest.approx(least, abs=0.01)
    assert g.min() - step / 2 > math.sqrt(0.1)
