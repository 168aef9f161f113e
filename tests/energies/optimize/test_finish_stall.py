"""The feasibility finish ends a round that has stalled short of halving its violation.

Oracles: the round's own iterates (the stop hook ends it at the iterate it was shown), and the same
start with the stall test off (``FINISH_STALL_RTOL`` = -inf), whose finish round runs to its budget:
on open-elastic-curve, whose ``isEquilateral`` cannot hold with its other constraints, that round is
undone, so both end on Penrose's layout bit for bit; on cubic-bezier, whose finish round crawls
(2,559 -> 962 over 1,000 iterations) and is kept, the stall test never fires and both layouts agree.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import energies.optimize.optimizer as optimize_module
from energies.compile import compile_problem
from energies.diagram_build import build_diagram
from energies.optimize.lbfgs import drive_setulb, run_round
from energies.optimize.optimizer import FINISH_STALL_WINDOW, OptimizeResult, optimize
from service.trios import load_trio
from tests.service.service_support import HAS_REGISTRY, REGISTRY

# Σ i·(x_i - 1)² over 20 unknowns: L-BFGS-B needs more than 3 iterations from 0.
CURVATURE = np.arange(1.0, 21.0)


def quadratic(x: np.ndarray) -> tuple[float, np.ndarray]:
    return float(CURVATURE @ (x - 1) ** 2), 2 * CURVATURE * (x - 1)


def test_stop_hook_ends_the_round_at_the_iterate_it_was_shown() -> None:
    shown: list[tuple[int, float, np.ndarray]] = []

    def stop(k: int, f: float, x: np.ndarray) -> bool:
        shown.append((k, f, x.copy()))
        return k == 3

    outcome = run_round(
        quadratic,
        np.zeros(20),
        driver=functools.partial(drive_setulb, factr=10.0, pgtol=1e-5),
        iteration_budget=1000,
        deadline=np.inf,
        report=lambda _i, _f: None,
        penrose_test=False,
        stop=stop,
    )
    assert [k for k, _, _ in shown] == [1, 2, 3]
    assert outcome.reason == "stalled" and outcome.iterations == 3
    assert outcome.x.tobytes() == shown[-1][2].tobytes()
    assert shown[-1][1] == quadratic(outcome.x)[0] > 0  # not yet at the minimum


def _start_0(
    name: str, monkeypatch: pytest.MonkeyPatch, stall: bool = True, finish: bool = True
) -> OptimizeResult:
    key = f"curve-examples/{name}"
    trio = load_trio(REGISTRY / "curve-examples" / f"{name}.trio.json", key=key)
    diagram = build_diagram(
        trio.domain, trio.substance, trio.style, trio.variation, tuple(trio.exclude_warnings)
    )
    with monkeypatch.context() as m:
        if not stall:
            m.setattr(optimize_module, "FINISH_STALL_RTOL", -np.inf)
        return optimize(compile_problem(diagram), np.array(diagram.unknowns.x0), finish=finish)


@pytest.mark.skipif(not HAS_REGISTRY, reason="needs ../shared registry data")
def test_stalled_round_on_contradictory_constraints_ends_early_with_the_same_layout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stalled = _start_0("open-elastic-curve", monkeypatch)
    full = _start_0("open-elastic-curve", monkeypatch, stall=False)
    plain = _start_0("open-elastic-curve", monkeypatch, finish=False)
    assert stalled.x.tobytes() == full.x.tobytes() == plain.x.tobytes() and stalled.energy == full.energy
    assert stalled.n_violated == full.n_violated == 1 and stalled.stages[0].finish_rounds == 0
    assert stalled.stages[0].status == "EPConverged"
    # The full round spent its budget (as many evaluations as Penrose's rounds); the stalled one
    # ended after two windows of iterations (a few line-search evaluations more).
    finish_full = full.evaluations - plain.evaluations
    finish_stalled = stalled.evaluations - plain.evaluations
    assert finish_full > 1_000 and finish_stalled <= 1.5 * 2 * FINISH_STALL_WINDOW


@pytest.mark.skipif(not HAS_REGISTRY, reason="needs ../shared registry data")
def test_kept_crawling_round_is_not_stalled(monkeypatch: pytest.MonkeyPatch) -> None:
    stalled = _start_0("cubic-bezier", monkeypatch)
    full = _start_0("cubic-bezier", monkeypatch, stall=False)
    assert stalled.stages[-1].finish_rounds >= 1 and stalled.n_violated == 0
    assert stalled.x.tobytes() == full.x.tobytes() and stalled.evaluations == full.evaluations
