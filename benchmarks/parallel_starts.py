"""Wall time of a multi-start layout with its starts in forked processes, against one process.

    python benchmarks/parallel_starts.py [--processes 2] [--rounds 3] [KEY ...]

For each registry trio (default: a spread of trios whose portfolio runs several starts), the
diagram is built and compiled once, then the portfolio is optimized alternately in this process and
with ``--processes`` (energies.optimize.parallel_starts), ``--rounds`` times each; every parallel result is
checked against the sequential one (the same layout, bit for bit). Printed per trio: start 0's
evaluations, the starts run, both wall-time ranges, the ratio of medians, the workers forked and
what became of the starts sent to them (used / run here after all / discarded); then a worker's
overhead: start 1 run in a fresh worker, then again in the same worker, minus the same start here;
the ratio of CPU seconds (this process and its workers) and the load average when the trio began.
On a shared machine, compare ratios measured in the same sitting, never absolute times.

The closing verdict is the rule parallel_starts is kept by: over the trios where workers were
forked, the speedup (median one-process time / median parallel time) must be at least
``KEEP_SPEEDUP`` on an idle machine. It is judged only when every trio began with a 1-minute load
average below ``IDLE_LOAD``; otherwise the verdict says the machine was busy and decides nothing.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import time
import warnings
from pathlib import Path

from energies.compile import compile_problem
from energies.diagram_build import build_diagram
from energies.optimize.optimizer import optimize
from energies.optimize.parallel_starts import ParallelStarts, available_cores
from energies.optimize.portfolio import (
    PortfolioResult,
    PortfolioSettings,
    optimize_portfolio,
    portfolio_starts,
)
from service.trios import load_trio
from service.workers.warm_up import warm_up

REPO = Path(__file__).resolve().parents[1]
KEEP_SPEEDUP = 1.3  # issue 30: parallel starts stay only if they win this much wall time, idle
IDLE_LOAD = 0.5  # 1-minute load average below which the machine counts as idle

REGISTRY = REPO / ".." / "shared" / "penrose-registry"
# From small to large per-start work (evaluations of start 0 in parentheses, measured on main).
DEFAULT_KEYS = [
    "curve-examples/catmull-rom/catmull-rom",  # (356) under the threshold: stays in process
    "logic-circuit-domain/half-adder",  # (396) under the threshold
    "graph-domain/textbook/sec1/fig7",  # (550)
    "minkowski-tests/maze/non-convex",  # (858)
    "molecules/nitricacid-lewis",  # (677)
    "geometry-domain/textbook_problems/c01p01",  # (604)
    "graph-domain/textbook/sec1/fig8a",  # (902)
    "triangle-mesh-2d/diagrams/angle-equivalence",  # stopped by the evaluation budget
    "graph-domain/textbook/sec2/fig9",  # stopped by agreement
    "tsne/tsne",
    "curve-examples/closed-elastic-curve",
]


def problem_of(key: str) -> tuple[object, list]:
    trio = load_trio(REGISTRY / f"{key}.trio.json", key=key)
    style = trio.style if isinstance(trio.style, str) else "\n".join(trio.style)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        diagram = build_diagram(trio.domain, trio.substance, style, trio.variation, trio.exclude_warnings)
        problem = compile_problem(diagram, time_limit=600.0)
    problem.vg.wait_optimized(600.0)  # both variants run the same optimized code
    return problem, portfolio_starts(diagram.unknowns, trio.variation, PortfolioSettings().starts)


def cpu_seconds() -> float:
    """CPU time of this process and of its reaped children (the workers)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed(
    problem: object, starts: list, processes: int
) -> tuple[float, float, PortfolioResult, ParallelStarts]:
    """Wall and CPU seconds of one portfolio."""
    began, cpu = time.perf_counter(), cpu_seconds()
    with ParallelStarts(problem, starts, processes) as pool:  # type: ignore[arg-type]
        result = optimize_portfolio(
            problem,  # type: ignore[arg-type]
            starts,
            time_limit=600.0,
            run_many=pool.runner if pool.parallel else None,
        )
    return time.perf_counter() - began, cpu_seconds() - cpu, result, pool


def same(a: PortfolioResult, b: PortfolioResult) -> bool:
    return (a.chosen, a.stopped, a.starts, a.best.x.tobytes()) == (
        b.chosen,
        b.stopped,
        b.starts,
        b.best.x.tobytes(),
    )


def worker_overhead(problem: object, starts: list) -> tuple[float, float]:
    """Seconds start 1 costs more in a fresh worker (fork, copy-on-write faults, the answer through
    the pipe), and then again in the same worker, than here (best of 3 each, alternated)."""
    here, fresh, again = [], [], []
    for _ in range(3):
        t = time.perf_counter()
        optimize(problem, starts[1])  # type: ignore[arg-type]
        here.append(time.perf_counter() - t)
        with ParallelStarts(problem, starts, 1) as pool:  # type: ignore[arg-type]
            for times in (fresh, again):
                t = time.perf_counter()
                if not pool.workers:
                    pool.workers.append(pool._fork())
                pool.next = 1
                pool._dispatch(100_000, float("inf"))
                assert pool._collect(pool.workers[0], float("inf")) is not None
                times.append(time.perf_counter() - t)
    return min(fresh) - min(here), min(again) - min(here)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("keys", nargs="*", default=DEFAULT_KEYS)
    parser.add_argument("--processes", type=int, default=available_cores())
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    warm_up()
    print(f"processes {args.processes}, rounds {args.rounds}")
    print(
        "trio | start 0 evals | starts | 1 process s | parallel s | ratio"
        " | workers (starts used/here/discarded) | worker overhead ms: first start / next"
        " | CPU ratio | load"
    )
    speedups: list[float] = []  # of the trios whose portfolio forked workers
    loads: list[float] = []
    for key in args.keys:
        problem, starts = problem_of(key)
        ones, manys, cpu_ones, cpu_manys = [], [], [], []
        stats = None
        load = os.getloadavg()[0]
        for _ in range(args.rounds):
            t1, c1, r1, _ = timed(problem, starts, 1)
            tp, cp, rp, pool = timed(problem, starts, args.processes)
            assert same(r1, rp), f"{key}: the parallel layout differs"
            ones.append(t1)
            manys.append(tp)
            cpu_ones.append(c1)
            cpu_manys.append(cp)
            stats = pool.stats
        assert stats is not None
        ratio = statistics.median(manys) / statistics.median(ones)
        cpu_ratio = statistics.median(cpu_manys) / statistics.median(cpu_ones)
        fresh, again = worker_overhead(problem, starts)
        print(
            f"{key} | {r1.starts[0].evaluations} | {len(r1.starts)} | {min(ones):.3f}-{max(ones):.3f}"
            f" | {min(manys):.3f}-{max(manys):.3f} | {ratio:.2f}"
            f" | {stats.forked} ({stats.used}/{stats.rerun}/{stats.discarded})"
            f" | {fresh * 1e3:.0f} / {again * 1e3:.0f} | {cpu_ratio:.2f} | {load:.1f}",
            flush=True,
        )
        loads.append(load)
        if stats.forked:
            speedups.append(1 / ratio)
    print(verdict(speedups, loads))


def verdict(speedups: list[float], loads: list[float]) -> str:
    """The keep-or-remove rule of the module docstring, from the trios that forked."""
    if not speedups:
        return "verdict: no trio forked workers; nothing to judge"
    low, mid, high = min(speedups), statistics.median(speedups), max(speedups)
    seen = f"speedup over {len(speedups)} forking trios {low:.2f}-{high:.2f}x (median {mid:.2f}x)"
    if max(loads) >= IDLE_LOAD:
        return f"verdict: none (busy machine, load {min(loads):.1f}-{max(loads):.1f}); {seen}"
    decision = "keep" if mid >= KEEP_SPEEDUP else "remove"
    return f"verdict: {decision} parallel starts (needs a median {KEEP_SPEEDUP}x, idle); {seen}"


if __name__ == "__main__":
    main()
