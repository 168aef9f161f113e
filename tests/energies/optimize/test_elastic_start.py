"""The elastic curves' single start is Penrose's run, with fewer evaluations.

These two trios were the registry's slowest against Penrose. Traced beside Penrose's run in Node,
start 0 runs Penrose's exterior-point rounds (each round's final φ within 0.2%) and keeps
the accepted trial's evaluation, which Penrose makes again: the extra time was the portfolio's.

Oracle: Penrose 4.0.0-alpha.5's reference run (`penrose-reference/results.jsonl`): its final energy
at its last weight 1e3·10^EProunds, and its evaluations.
"""

from __future__ import annotations

import json

import pytest

from energies.compile import compile_problem
from energies.diagram_build import build_diagram
from energies.optimize.optimizer import INIT_CONSTRAINT_WEIGHT, WEIGHT_GROWTH_FACTOR, optimize
from service.trios import load_trio
from tests.service.service_support import HAS_REGISTRY, REFERENCE, REGISTRY

pytestmark = pytest.mark.skipif(not HAS_REGISTRY, reason="needs ../shared registry data")


@pytest.mark.parametrize("name", ["open-elastic-curve", "closed-elastic-curve"])
def test_start_0_ends_at_penroses_energy_with_fewer_evaluations(name: str) -> None:
    key = f"curve-examples/{name}"
    penrose = next(
        row
        for row in map(json.loads, (REFERENCE / "results.jsonl").read_text().splitlines())
        if row["key"] == key
    )
    trio = load_trio(REGISTRY / "curve-examples" / f"{name}.trio.json", key=key)
    diagram = build_diagram(
        trio.domain, trio.substance, trio.style, trio.variation, tuple(trio.exclude_warnings)
    )
    # Penrose's rounds alone: the feasibility finish (ours) may add rounds after them, undone on open,
    # whose isEquilateral can never hold.
    r = optimize(compile_problem(diagram), diagram.unknowns.x0, finish=False)
    weight = INIT_CONSTRAINT_WEIGHT * WEIGHT_GROWTH_FACTOR ** penrose["EProunds"]
    ours = r.objective_energy + (r.energy - r.objective_energy) / r.stages[-1].weight * weight
    # within 1% (the registry calls 10% the same): open's isEquilateral can never hold, so its energy
    # at Penrose's weight is mostly that residue's penalty, which our last round leaves 0.5% higher
    assert ours == pytest.approx(penrose["energy"], rel=1e-2)
    assert r.n_violated == penrose["nViolated"]
    assert r.evaluations < 0.8 * penrose["nGradEvals"]
