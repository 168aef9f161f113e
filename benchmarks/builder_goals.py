"""How long a Python loop takes to state N goals with the builder, and to make its Diagram.

    .venv/bin/python benchmarks/builder_goals.py [--circles 142] [--repeats 5]

All pairs of `circles` circles disjoint (142 circles: 10,011 goals), stated in a loop as a user
would; each repeat in this process, timed by phase: shapes, the goal loop, `db.diagram()`, and the
energy's compile (which a Style's diagram of the same goals also pays). Prints one line per repeat
and the ranges.
"""

from __future__ import annotations

import argparse
import time

from energies.compile import compile_problem
from service import DiagramBuilder, constraints


def once(n: int) -> dict[str, float]:
    t0 = time.perf_counter()
    db = DiagramBuilder(2000, 2000, variation="bench")
    circles = [db.circle(r=5) for _ in range(n)]
    t1 = time.perf_counter()
    for i, a in enumerate(circles):
        for b in circles[i + 1 :]:
            db.ensure(constraints.disjoint(a, b, 2))
    t2 = time.perf_counter()
    diagram = db.diagram()
    t3 = time.perf_counter()
    compile_problem(diagram)
    t4 = time.perf_counter()
    return {"shapes": t1 - t0, "goals": t2 - t1, "diagram": t3 - t2, "compile": t4 - t3}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--circles", type=int, default=142)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    goals = args.circles * (args.circles - 1) // 2
    runs = [once(args.circles) for _ in range(args.repeats)]
    for r in runs:
        print(" ".join(f"{k} {v * 1e3:.0f} ms" for k, v in r.items()))
    for k in runs[0]:
        vs = [r[k] * 1e3 for r in runs]
        print(f"{k}: {min(vs):.0f}-{max(vs):.0f} ms ({goals:,} goals, {args.circles} circles)")
    stated = [(r["goals"] + r["diagram"]) * 1e3 for r in runs]
    print(f"loop + diagram: {min(stated):.0f}-{max(stated):.0f} ms")


if __name__ == "__main__":
    main()
