"""The L-BFGS direction in Wasm (adcore's ``LbfgsTwoLoop``) against the numpy two-loop it replaced.

    .venv/bin/python benchmarks/lbfgs_kernel.py [--repeats 5] [--only KEY]...

The baseline is the numpy recursion penrose-py ran before (``NumpyTwoLoop`` below: pairs pushed as
new arrays, BLAS dot products, in-place numpy updates), given the kernel's interface and swapped into
``energies.optimize.penrose_lbfgs`` for its runs. Both are measured in this one run, alternately:

1. one direction, per call, for n = 20, 203, 2,000 (17 pairs kept);
2. one start of the whole optimizer (``energies.optimize.optimizer.optimize``, Penrose's L-BFGS) on registry
   trios, each compiled once and on optimized code before timing: the expensive curve examples and a
   few cheap trios. The two directions differ in their sums' last bits, so a run can take a few
   evaluations more or fewer: time per evaluation is printed beside the total.

Times are CPU seconds of this process (``time.process_time``): on a shared machine they move less
with the load than wall time. Printed: the best and the range of each, and the ratio of the bests
(baseline / kernel).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import energies.optimize.penrose_lbfgs as penrose_lbfgs  # noqa: E402
from adcore import LbfgsTwoLoop  # noqa: E402

REGISTRY = REPO.parent / "shared" / "penrose-registry"
TRIOS = [
    "curve-examples/closed-elastic-curve",
    "curve-examples/open-elastic-curve",
    "set-theory-domain/tree-venn",
    "graph-domain/textbook/sec1/fig11",
    "linear-algebra-domain/two-vectors-perp",
]


class NumpyTwoLoop:
    """The baseline: the same interface and recursion, in numpy (BLAS sums)."""

    def __init__(self, m: int, n: int, epsd: float) -> None:
        self.m, self.epsd = m, epsd
        self.pairs: list[tuple[np.ndarray, np.ndarray]] = []
        self.rhos: list[float] = []
        self.x_prev = self.g_prev = self.r = np.zeros(n)

    @classmethod
    @contextlib.contextmanager
    def borrowed(cls, m: int, n: int, epsd: float) -> Iterator[NumpyTwoLoop]:
        yield cls(m, n, epsd)

    def start(self, x: np.ndarray, g: np.ndarray) -> None:
        self.pairs, self.rhos = [], []
        self.x_prev, self.g_prev = np.array(x), g

    def step(self, x: np.ndarray, g: np.ndarray, h0: np.ndarray | None = None) -> float:
        s, y = x - self.x_prev, g - self.g_prev
        self.pairs = [(s, y), *self.pairs][: self.m]
        self.rhos = [1.0 / (float(y @ s) + self.epsd), *self.rhos][: self.m]
        self.x_prev, self.g_prev = x, g
        q, scratch = g.copy(), np.empty_like(g)
        alphas = []
        for (s, y), rho in zip(self.pairs, self.rhos):
            a = rho * float(s.dot(q))
            alphas.append(a)
            np.subtract(q, np.multiply(a, y, out=scratch), out=q)
        s0, y0 = self.pairs[0]
        scale = float(s0.dot(y0)) / (float(y0.dot(y0)) + self.epsd) if h0 is None else h0
        r = np.multiply(scale, q, out=q)
        for k in range(len(alphas) - 1, -1, -1):
            s, y = self.pairs[k]
            np.add(r, np.multiply(alphas[k] - self.rhos[k] * float(y.dot(r)), s, out=scratch), out=r)
        self.r = r
        return float(g @ r)


IMPLEMENTATIONS: dict[str, type] = {"numpy": NumpyTwoLoop, "kernel": LbfgsTwoLoop}


def alternate(runs: dict[str, Callable[[], float]], repeats: int) -> dict[str, list[float]]:
    """Each run `repeats` times, taking turns, so that both see the same load."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            times[name].append(run())
    return times


def row(label: str, times: dict[str, list[float]], extra: str = "") -> str:
    base, ours = min(times["numpy"]), min(times["kernel"])
    spans = " | ".join(f"{min(t):.1f} ({min(t):.1f}-{max(t):.1f})" for t in times.values())
    return f"| {label} | {spans} | {base / ours:.2f}x |{extra}"


def direction(n: int, repeats: int) -> None:
    rng = np.random.default_rng(n)
    kernels = {name: cls(17, n, penrose_lbfgs.EPSD) for name, cls in IMPLEMENTATIONS.items()}
    points = [(rng.normal(size=n), rng.normal(size=n)) for _ in range(40)]
    for k in kernels.values():
        k.start(*points[0])
        for x, g in points[1:20]:
            k.step(x, g)
    calls = max(20, 20_000 // n)

    def timed(k: object) -> float:
        t0 = time.process_time()
        for i in range(calls):
            k.step(*points[20 + i % 20])  # type: ignore[attr-defined]
        return (time.process_time() - t0) / calls * 1e6

    times = alternate({name: functools.partial(timed, k) for name, k in kernels.items()}, repeats)
    print(row(f"n = {n}", times))


def one_start(key: str, repeats: int) -> None:
    from energies.compile import compile_problem
    from energies.diagram_build import build_diagram
    from energies.optimize.optimizer import optimize
    from service.pipeline import RECURSION_LIMIT
    from service.trios import load_trio

    sys.setrecursionlimit(max(sys.getrecursionlimit(), RECURSION_LIMIT))
    trio = load_trio(REGISTRY / f"{key}.trio.json", key=key)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        diagram = build_diagram(
            trio.domain, trio.substance, trio.style, trio.variation, tuple(trio.exclude_warnings)
        )
    problem = compile_problem(diagram)
    problem.vg.wait_optimized()
    x0 = diagram.unknowns.x0
    evaluations: dict[str, int] = {}

    def run(name: str) -> float:
        penrose_lbfgs.LbfgsTwoLoop = IMPLEMENTATIONS[name]  # type: ignore[misc]
        try:
            t0 = time.process_time()
            result = optimize(problem, x0)
            ms = (time.process_time() - t0) * 1e3
        finally:
            penrose_lbfgs.LbfgsTwoLoop = LbfgsTwoLoop  # type: ignore[misc]
        evaluations[name] = result.evaluations
        return ms

    run("kernel")  # warm: the kernel's module, BLAS, caches
    times = alternate({name: functools.partial(run, name) for name in IMPLEMENTATIONS}, repeats)
    per = [min(times[name]) * 1e3 / evaluations[name] for name in IMPLEMENTATIONS]
    extra = f" {evaluations['numpy']}, {evaluations['kernel']} | {per[0]:.0f}, {per[1]:.0f} |"
    print(row(f"{key} | {problem.n_inputs}", times, extra))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", action="append", help="registry trio key (repeatable)")
    args = parser.parse_args()
    print("| one direction, 17 pairs | numpy µs: best (range) | kernel µs: best (range) | numpy / kernel |")
    print("| --- | ---: | ---: | ---: |")
    for n in (20, 203, 2000):
        direction(n, args.repeats)
    print("\n| one start | n | numpy ms: best (range) | kernel ms: best (range) | numpy / kernel |", end="")
    print(" evaluations (numpy, kernel) | µs per evaluation (numpy, kernel) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for key in args.only or TRIOS:
        one_start(key, args.repeats)


if __name__ == "__main__":
    main()
