"""The whole service pipeline on N circles with all-pairs `disjoint`: Style program to SVG.

The trio is `benchmarks/style_all_pairs.py`'s (N sets, a circle each, `ensure disjoint` over every
pair). For each N, in one process after `warm_up()`, prints the seconds of each phase of
`service.pipeline.render_trio` (diagram: parsing, matching and Style evaluation; energy: goal tables,
tracing, differentiation, code generation and wasmtime; optimize; render), the energy evaluations
and the largest constraint violation at the end (<= 1e-3 counts as satisfied, as Penrose counts),
and the process's peak resident memory so far (sizes run in increasing order, so each row's peak is
its own unless a smaller size's was higher).

    python benchmarks/all_pairs_pipeline.py [--sizes 100 300 1000]
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np
from style_all_pairs import DOMAIN, STYLE, substance  # the benchmark next to this one

from energies.compile import compile_problem
from energies.diagram import count_goals
from energies.diagram_build import build_diagram
from energies.optimize.optimizer import optimize
from energies.shapes import Canvas
from service.render.concrete import concrete_shapes
from service.render.svg import render_svg
from service.workers.warm_up import warm_up


def run(n: int) -> dict[str, float]:
    t0 = time.perf_counter()
    diagram = build_diagram(DOMAIN, substance(n), STYLE, "bench", ())
    t1 = time.perf_counter()
    problem = compile_problem(diagram, time_limit=600.0)
    t2 = time.perf_counter()
    result = optimize(problem, np.array(diagram.unknowns.x0, dtype=float), time_limit=600.0)
    t3 = time.perf_counter()
    svg = render_svg(Canvas(*diagram.canvas), concrete_shapes(diagram.shapes, result.x), variation="bench")
    t4 = time.perf_counter()
    return {
        "goals": count_goals(diagram.goals, "constraint") + count_goals(diagram.goals, "objective"),
        "diagram": t1 - t0,
        "energy": t2 - t1,
        "optimize": t3 - t2,
        "render": t4 - t3,
        "total": t4 - t0,
        "evaluations": result.evaluations,
        "violation": result.max_constraint_violation,
        "svg_kb": len(svg) / 1024,
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[100, 300, 1000])
    args = ap.parse_args(argv)
    warm_up()
    print(
        "| N | goals | diagram s | energy s | optimize s | render s | total s | evaluations | max violation "
        "| peak RSS MB |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for n in args.sizes:
        r = run(n)
        print(
            f"| {n} | {r['goals']:,} | {r['diagram']:.2f} | {r['energy']:.2f} | {r['optimize']:.2f} |"
            f" {r['render']:.2f} | {r['total']:.2f} | {r['evaluations']} | {r['violation']:.2g} |"
            f" {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} |"
        )


if __name__ == "__main__":
    main()
