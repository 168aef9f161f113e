"""What the feasibility finish costs: each registry trio's optimization (the default portfolio of
starts, its compiled energy shared) with the finish and without it, alternated in one process, so
both see the same machine load; the finish's solver is loaded first, as a warm-up does. Prints, per
trio, the optimize time of each (min-max over `--repeat` runs), their ratio of medians, the
evaluations and the violated constraints.

    python benchmarks/feasibility_finish.py [--repeat 3] KEY [KEY ...]
    (keys as in the registry, e.g. spectral-graphs/examples/hypercube)
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import time
from pathlib import Path

from energies.compile import compile_problem
from energies.diagram_build import build_diagram
from energies.optimize.optimizer import load_finish_solver, optimize
from energies.optimize.portfolio import PortfolioResult, optimize_portfolio, portfolio_starts
from service.trios import default_registry_dir, load_registry


def run(key: str, repeat: int) -> None:
    (trio,) = load_registry(default_registry_dir() or Path("../shared/penrose-registry"), only=[key])
    diagram = build_diagram(
        trio.domain, trio.substance, trio.style, trio.variation, tuple(trio.exclude_warnings)
    )
    problem = compile_problem(diagram)
    starts = portfolio_starts(diagram.unknowns, trio.variation, 6)
    seconds: dict[bool, list[float]] = {True: [], False: []}
    last: dict[bool, PortfolioResult] = {}
    for _ in range(repeat):
        for finish in (False, True):
            t0 = time.perf_counter()
            last[finish] = optimize_portfolio(problem, starts, run=functools.partial(optimize, finish=finish))
            seconds[finish].append(time.perf_counter() - t0)
    ratio = statistics.median(seconds[True]) / statistics.median(seconds[False])
    parts = [
        f"{'finish' if finish else 'Penrose'} {min(s) * 1e3:.0f}-{max(s) * 1e3:.0f} ms,"
        f" {last[finish].evaluations} evaluations, {last[finish].best.n_violated} violated"
        for finish, s in sorted(seconds.items())
    ]
    print(f"{key}: {'; '.join(parts)}; ratio {ratio:.2f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("keys", nargs="+")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    sys.setrecursionlimit(20_000)
    t0 = time.perf_counter()
    load_finish_solver()  # once per process (a service's warm-up does it): not part of a layout
    print(f"loading the finish's L-BFGS-B: {(time.perf_counter() - t0) * 1e3:.0f} ms", flush=True)
    for key in args.keys:
        run(key, args.repeat)


if __name__ == "__main__":
    main()
