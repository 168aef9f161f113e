"""Where a large layout's time goes, stage by stage: rounds, evaluations by what they list, sorts.

One layout of a scaling trio (benchmarks/scaling_trios.py) through `service.render_trio`, default
settings, after a warm-up render of the same series on 4 objects, with the optimizer's and the
culler's calls timed where they happen:

- per exterior-point round (`energies.optimize.lbfgs.run_round`): its weight, evaluations,
  iterations, seconds and how it ended;
- per stage, each evaluation (φ with its gradient, or φ alone at a line-search trial) by the
  row lists it ran on (`energies.compile.problem`): `whole` (every row of the stage: culling off,
  or a point outside the box), `box` (the box's rows), `inner` (the inner box's, strayed rows
  included); their count, mean listed rows and milliseconds each, the culler's own bookkeeping
  included;
- per stage, the boxes sorted (`Culler.derive`) and, per goal kind, the rows whose bounds were
  computed one by one (inner boxes sorted afresh, strayed rows sorted again), the share proved
  constant and their seconds.

    python benchmarks/stage_costs.py [--series graph] [--n 1024] [--variation 0]
        [--registry ../shared/penrose-registry]

The timers wrap our own methods for the length of one run and are removed after it (their own
cost, a few Python calls per evaluation, is counted in the times they report). Numbers are of one
run on a noisy machine: compare runs alternating.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scaling_trios import DEFAULT_REGISTRY, SERIES, trio  # noqa: E402

from energies.compile import culling, problem  # noqa: E402
from energies.optimize import optimizer  # noqa: E402
from service import render_trio  # noqa: E402


@dataclass
class StageCosts:
    rounds: list[tuple[float, int, int, float, str]] = field(default_factory=list)  # λ, evals, its, s, reason
    evaluations: dict[tuple[str, str], list[float]] = field(
        default_factory=lambda: defaultdict(lambda: [0, 0, 0.0])
    )
    sorts: list[float] = field(default_factory=list)  # seconds of each box sorted
    bounds: dict[str, list[float]] = field(default_factory=lambda: defaultdict(lambda: [0, 0, 0.0]))
    seconds: float = 0.0
    name: str = ""


def _listing(p: problem.CompiledProblem) -> str:
    """Which lists the last evaluation ran on."""
    if p._inner is not None and p.lists is p._inner[0]:
        return "inner"
    if p._box is not None and p.lists is p._box[0]:
        return "box"
    return "whole"


@contextmanager
def _patched(
    owner: Any, name: str, wrap: Callable[[Callable[..., Any]], Callable[..., Any]]
) -> Iterator[None]:
    plain = getattr(owner, name)
    setattr(owner, name, wrap(plain))
    try:
        yield
    finally:
        setattr(owner, name, plain)


def measure(series: str, n: int, variation: int, registry: str) -> tuple[list[StageCosts], dict[str, float]]:
    """One layout's costs per stage (module docstring), and its timings (ms: compile, optimize, ...)."""
    warm = trio(series, 4, 0, registry)
    render_trio(warm.domain, warm.substance, warm.style, warm.variation)
    stages: dict[int, StageCosts] = defaultdict(StageCosts)
    current = [0]
    weight = [float("nan")]  # of the last evaluation: a round's evaluations share theirs

    def timed_stage(plain: Callable[..., Any]) -> Callable[..., Any]:
        def run(p: Any, x: np.ndarray, s: int, budget: Any) -> Any:
            current[0] = s
            start = time.perf_counter()
            report = plain(p, x, s, budget)
            stages[s].seconds += time.perf_counter() - start
            stages[s].name = report.name
            return report

        return run

    def timed_round(plain: Callable[..., Any]) -> Callable[..., Any]:
        def run(fun: Any, x0: np.ndarray, **kw: Any) -> Any:
            start = time.perf_counter()
            out = plain(fun, x0, **kw)
            stages[current[0]].rounds.append(
                (weight[0], out.evaluations, out.iterations, time.perf_counter() - start, out.reason)
            )
            return out

        return run

    def timed_evaluation(what: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        def wrap(plain: Callable[..., Any]) -> Callable[..., Any]:
            def run(p: problem.CompiledProblem, x: np.ndarray, s: int, *rest: Any) -> Any:
                weight[0] = rest[0]
                start = time.perf_counter()
                out = plain(p, x, s, *rest)
                cell = stages[s].evaluations[what, _listing(p)]
                cell[0] += 1
                cell[1] += sum(p.counts)
                cell[2] += time.perf_counter() - start
                return out

            return run

        return wrap

    def timed_sort(plain: Callable[..., Any]) -> Callable[..., Any]:
        def run(c: culling.Culler, *args: Any, **kw: Any) -> Any:
            start = time.perf_counter()
            out = plain(c, *args, **kw)
            stages[current[0]].sorts.append(time.perf_counter() - start)
            return out

        return run

    def timed_bounds(plain: Callable[..., Any]) -> Callable[..., Any]:
        def run(c: culling.Culler, k: int, lo: np.ndarray, hi: np.ndarray, rows: np.ndarray) -> Any:
            start = time.perf_counter()
            values = plain(c, k, lo, hi, rows)
            cell = stages[current[0]].bounds[f"{c.kinds[k].name} (kind {k})"]
            cell[0] += len(rows)
            cell[1] += int(np.count_nonzero(~np.isnan(values)))
            cell[2] += time.perf_counter() - start
            return values

        return run

    spec = trio(series, n, variation, registry)
    with (
        _patched(optimizer, "_run_stage", timed_stage),
        _patched(optimizer, "run_round", timed_round),
        _patched(problem.CompiledProblem, "energy_and_grad", timed_evaluation("φ and gradient")),
        _patched(problem.CompiledProblem, "_energy_alone", timed_evaluation("φ alone")),
        _patched(culling.Culler, "derive", timed_sort),
        _patched(culling.Culler, "_bounds_at", timed_bounds),
    ):
        # `energy_alone` is bound when a problem is made: made inside the patch, it is the timed one
        rendering = render_trio(spec.domain, spec.substance, spec.style, spec.variation, time_limit=600)
    return [stages[s] for s in sorted(stages)], rendering.timings


def report(series: str, n: int, costs: list[StageCosts], timings: dict[str, float]) -> str:
    compiled, optimized = timings["compile"] / 1e3, timings["optimize"] / 1e3
    lines = [f"# {series} N = {n}: compile {compiled:.2f} s, optimize {optimized:.2f} s"]
    for s, stage in enumerate(costs):
        total = sum(int(c[0]) for c in stage.evaluations.values())
        # (φ alone at a trial point, then its gradient there, is one evaluation of the optimizer's, two calls)
        lines += ["", f"## stage {s} `{stage.name}`: {stage.seconds:.2f} s, {total} energy calls", ""]
        lines += ["| round | λ | evaluations | iterations | s | ended |", "|---|---|---|---|---|---|"]
        for r, (weight, evals, its, seconds, reason) in enumerate(stage.rounds):
            lines.append(f"| {r} | {weight:g} | {evals} | {its} | {seconds:.2f} | {reason} |")
        lines += ["", "| call | lists | calls | rows each | ms each | s |", "|---|---|---|---|---|---|"]
        for (what, lists), (calls, rows, seconds) in sorted(stage.evaluations.items()):
            each = seconds / calls * 1e3
            lines.append(
                f"| {what} | {lists} | {int(calls)} | {rows / calls:,.0f} | {each:.2f} | {seconds:.2f} |"
            )
        lines.append(f"\nboxes sorted: {len(stage.sorts)}, {sum(stage.sorts):.2f} s")
        if stage.bounds:
            lines += ["", "| kind | rows bounded | proved constant | s |", "|---|---|---|---|"]
            for kind, (rows, proved, seconds) in sorted(stage.bounds.items(), key=lambda kv: -kv[1][2]):
                if rows:
                    lines.append(f"| {kind} | {int(rows):,} | {proved / rows:.1%} | {seconds:.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> tuple[list[StageCosts], dict[str, float]]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--series", default="graph", choices=SERIES)
    parser.add_argument("--n", type=int, default=1024)
    parser.add_argument("--variation", type=int, default=0)
    parser.add_argument("--registry", default=str(DEFAULT_REGISTRY))
    args = parser.parse_args(argv)
    costs, timings = measure(args.series, args.n, args.variation, args.registry)
    print(report(args.series, args.n, costs, timings))
    return costs, timings


if __name__ == "__main__":
    main()
