"""Starts run ahead in forked processes: the oracle is the sequential portfolio in this process
(bit for bit), also when children fail, die, hang or are cut by a smaller iteration cap."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from energies.optimize.optimizer import GoalValues, OptimizeError, OptimizeResult, StageSpec, optimize
from energies.optimize.parallel_starts import GRACE, ParallelStarts
from energies.optimize.portfolio import PortfolioResult, PortfolioSettings, optimize_portfolio

N = 6
TILT = 0.3


class Wells:
    """Σ (x_i² - 1)² + TILT·x_i over N unknowns: 2^N minima, the deepest with every x_i < 0; with
    `limit`, the constraint Σ x_i >= limit rules the deepest ones out."""

    n_inputs = N
    objective_names = ["wells(x)"]

    def __init__(self, limit: float | None = None) -> None:
        self.limit = limit
        self.constraint_names = [] if limit is None else ["greaterThan(sum(x), limit)"]
        self.stages = [
            StageSpec("", np.ones(N, bool), np.ones(1, bool), np.ones(len(self.constraint_names), bool))
        ]

    def _constraints(self, x: np.ndarray) -> np.ndarray:
        return np.array([] if self.limit is None else [self.limit - x.sum()])

    def energy_and_grad(self, x: np.ndarray, stage: int, weight: float) -> tuple[float, np.ndarray]:
        energy = float(np.sum((x * x - 1) ** 2 + TILT * x))
        grad = 4 * x * (x * x - 1) + TILT
        for c in self._constraints(x):
            if c > 0:
                energy, grad = energy + weight * c * c, grad - 2 * weight * c
        return energy, grad

    def goal_values(self, x: np.ndarray) -> GoalValues:
        return GoalValues(np.array([np.sum((x * x - 1) ** 2 + TILT * x)]), self._constraints(x))

    def goal_jacobian(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        raise AssertionError("not called: the energy stays finite")


STARTS = [np.random.default_rng(seed).uniform(-2.0, 2.0, N) for seed in range(8)]
SETTINGS = PortfolioSettings(starts=8, max_evaluations=10_000)


def portfolio(problem: Any, processes: int, run: Callable[..., OptimizeResult] = optimize, **options: Any):
    with ParallelStarts(problem, STARTS, processes, run=run, min_evaluations=0) as pool:
        result = optimize_portfolio(problem, STARTS, settings=SETTINGS, run_many=pool.runner, **options)
    return result, pool


def assert_same(a: PortfolioResult, b: PortfolioResult) -> None:
    assert (a.chosen, a.stopped, a.cut_short, a.evaluations) == (
        b.chosen,
        b.stopped,
        b.cut_short,
        b.evaluations,
    )
    assert a.starts == b.starts
    assert a.best.x.tobytes() == b.best.x.tobytes()
    assert (a.best.energy, a.best.iterations, a.best.stages) == (
        b.best.energy,
        b.best.iterations,
        b.best.stages,
    )
    assert [g.value for g in a.best.goals] == [g.value for g in b.best.goals]
    assert [g.name for g in a.best.goals] == [g.name for g in b.best.goals]


@pytest.mark.parametrize("limit", [None, 1.5])
def test_any_number_of_processes_gives_the_sequential_result(limit: float | None) -> None:
    sequential = optimize_portfolio(Wells(limit), STARTS, settings=SETTINGS)
    assert len(sequential.starts) > 2  # several starts ran: the children had work
    for processes in (2, 3, 5):
        result, pool = portfolio(Wells(limit), processes)
        assert_same(result, sequential)
        assert pool.stats.forked == processes  # workers, forked once for the portfolio
        assert pool.stats.used == len(sequential.starts) - 1 and pool.stats.rerun == 0


def test_a_child_result_under_a_larger_cap_is_used_only_where_the_smaller_gives_it() -> None:
    problem = Wells()
    with ParallelStarts(problem, STARTS, 2, min_evaluations=0) as pool:
        pool.runner(0)(problem, STARTS[0])
        pool.runner(1)(problem, STARTS[1], max_iters=1_000)  # start 2 begins in a child, capped at 1,000
        full = optimize(problem, STARTS[2])
        cap = full.iterations - 1  # start 2 is then given less than it needs: it must stop there
        capped = pool.runner(2)(problem, STARTS[2], max_iters=cap)
    expected = optimize(problem, STARTS[2], max_iters=cap)
    assert capped.status == expected.status == "MaxIterations"
    assert capped.x.tobytes() == expected.x.tobytes() and capped.evaluations == expected.evaluations
    assert pool.stats.rerun == 1


def in_child(parent: int) -> bool:
    return os.getpid() != parent


def test_a_child_killed_mid_run_has_its_start_run_here() -> None:
    parent = os.getpid()

    def run(problem: Any, x0: np.ndarray, **options: Any) -> OptimizeResult:
        if in_child(parent) and x0 is STARTS[2]:
            os.kill(os.getpid(), signal.SIGKILL)  # as the kernel's OOM killer would
        return optimize(problem, x0, **options)

    sequential = optimize_portfolio(Wells(), STARTS, settings=SETTINGS)
    result, pool = portfolio(Wells(), 2, run)
    assert_same(result, sequential)
    assert pool.stats.rerun == 1


def test_failures_are_the_sequential_ones() -> None:
    parent = os.getpid()

    def run(problem: Any, x0: np.ndarray, **options: Any) -> OptimizeResult:
        if x0 is STARTS[3]:  # everywhere: a start that runs into a NaN region is skipped
            raise OptimizeError("energy nan", goal=None, stage="", x=x0)
        if in_child(parent) and x0 is STARTS[2]:  # only in a child: its start runs here, normally
            raise RuntimeError("a child's own failure")
        return optimize(problem, x0, **options)

    sequential = optimize_portfolio(Wells(), STARTS, settings=SETTINGS, run=run)
    assert 3 not in [s.start for s in sequential.starts] and len(sequential.starts) > 3
    result, pool = portfolio(Wells(), 3, run)
    assert_same(result, sequential)
    assert pool.stats.rerun == 2


def pids_written(folder: Path) -> list[int]:
    return [int(p.name) for p in folder.iterdir()]


def gone(pid: int) -> bool:
    """Neither running nor a zombie: a child not yet reaped keeps its /proc entry."""
    return not Path(f"/proc/{pid}").exists()


def test_a_hung_child_is_killed_at_the_time_limit(tmp_path: Path) -> None:
    parent = os.getpid()

    def run(problem: Any, x0: np.ndarray, **options: Any) -> OptimizeResult:
        if in_child(parent):
            (tmp_path / str(os.getpid())).touch()
            if x0 is STARTS[2]:
                time.sleep(60)  # stuck outside Wasm, where no epoch deadline reaches
        return optimize(problem, x0, **options)

    limit = 1.0
    began = time.perf_counter()
    result, pool = portfolio(Wells(), 2, run, time_limit=limit)
    took = time.perf_counter() - began
    assert took < limit + GRACE + 0.5
    assert result.stopped == "time-limit" and result.cut_short == "time-limit reached during start 3 of 8"
    assert [s.start for s in result.starts] == [0, 1]
    pids = pids_written(tmp_path)
    assert pids and all(gone(pid) for pid in pids)


def test_workers_are_reaped_when_the_parent_fails(tmp_path: Path) -> None:
    parent = os.getpid()

    def run(problem: Any, x0: np.ndarray, **options: Any) -> OptimizeResult:
        if in_child(parent):
            (tmp_path / str(os.getpid())).touch()
            if x0 is STARTS[1]:  # start 1 then runs here, where it fails while the workers run
                raise RuntimeError("a worker's own failure")
            time.sleep(60)
        if x0 is STARTS[1]:  # a cancellation (or a bug) in this process
            while len(pids_written(tmp_path)) < 3:
                time.sleep(0.01)
            raise KeyboardInterrupt
        return optimize(problem, x0, **options)

    with pytest.raises(KeyboardInterrupt):
        portfolio(Wells(), 3, run)
    pids = pids_written(tmp_path)
    assert len(pids) == 3 and all(gone(pid) for pid in pids)


def test_small_layouts_stay_in_this_process() -> None:
    problem = Wells()
    first = optimize(problem, STARTS[0])
    for threshold, forks in ((first.evaluations + 1, False), (first.evaluations, True)):
        with ParallelStarts(problem, STARTS, 2, min_evaluations=threshold) as pool:
            optimize_portfolio(problem, STARTS, settings=SETTINGS, run_many=pool.runner)
        assert (pool.stats.forked > 0) is forks


def test_workers_wait_for_the_optimized_code() -> None:
    # A tiered energy starts on baseline code while a thread compiles the optimized one; a forked
    # worker lacks that thread, so workers are forked once the energy has tiered up.
    problem = Wells()
    problem.tier = "baseline"  # type: ignore[attr-defined]

    def run(p: Any, x0: np.ndarray, **options: Any) -> OptimizeResult:
        r = optimize(p, x0, **options)
        if x0 is STARTS[2]:
            problem.tier = "optimized"  # type: ignore[attr-defined]
        return r

    sequential = optimize_portfolio(Wells(), STARTS, settings=SETTINGS)
    result, pool = portfolio(problem, 2, run)
    assert_same(result, sequential)
    assert pool.stats.forked == 2 and pool.stats.used == len(result.starts) - 3  # 1 and 2 ran here


ORPHAN_SCRIPT = """
import os, signal, sys, time
from pathlib import Path
sys.path.insert(0, {tests!r})
from test_parallel_starts import STARTS, Wells, portfolio, optimize

folder, parent = Path({folder!r}), os.getpid()

def run(problem, x0, **options):
    if os.getpid() != parent:
        (folder / str(os.getpid())).touch()
        time.sleep(60)
    return optimize(problem, x0, **options)

def die(*_):  # once both workers run their starts (the check must not block the forks)
    if len(list(folder.iterdir())) < 2:
        signal.setitimer(signal.ITIMER_REAL, 0.01)
    else:
        os.kill(parent, signal.SIGKILL)  # no cleanup of any kind can run

signal.signal(signal.SIGALRM, die)
signal.setitimer(signal.ITIMER_REAL, 0.05)
portfolio(Wells(), 2, run)
"""


def test_workers_die_with_a_killed_parent(tmp_path: Path) -> None:
    import subprocess
    import sys

    script = ORPHAN_SCRIPT.format(tests=str(Path(__file__).parent), folder=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == -signal.SIGKILL, done.stderr
    pids = pids_written(tmp_path)
    assert len(pids) == 2
    deadline = time.monotonic() + 10
    while not all(gone(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert all(gone(pid) for pid in pids)  # killed by the kernel, then reaped by init
