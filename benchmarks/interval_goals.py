"""Cost of an interval evaluation of real goal kinds, beside a plain evaluation and a gradient.

For each goal kind (disjoint of two circles, of two rectangles, of a rectangle and a line), built by
the energy compiler's `kind_function`, three batches over the same N rows run as one compiled Wasm
loop each, the way culling would run a kind over its table: the energy term max(c, 0)^2 (plain), its
gradient with respect to the row's inputs (vjp), and its interval (adcore.interval) over boxes of
--radius around the rows. Reported: CPU ns per row (the calling thread's CPU time, which runs the
Wasm and which other processes' load disturbs less than wall time), best of --rounds, the three
alternating; IR
equations of the term and of its interval version; the share of rows whose interval is a point
(culled).

    python benchmarks/interval_goals.py [--rows 20000] [--rounds 15] [--radius 0.5]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import adcore
from adcore import Real, Vec, fn, interval, vec, vjp
from adcore import math as am
from adcore.ir import call_graph, count_eqns
from energies.compile.energy import kind_function
from energies.compile.kinds import group_goals
from energies.diagram import GoalInstance, ShapeInstance
from energies.expr import input_node

SPAN = {"lo": Real, "hi": Real}


def shape(kind: str, name: str, first: int) -> ShapeInstance:
    x = [input_node(first + k) for k in range(4)]
    props = {
        "Circle": {"center": x[:2], "r": x[2]},
        "Rectangle": {"center": x[:2], "width": x[2], "height": x[3]},
        "Line": {"start": x[:2], "end": x[2:4], "strokeWidth": 1.0},
    }[kind]
    return ShapeInstance(name, kind, props)


def term_of(a: str, b: str) -> tuple[adcore.Fn, int]:
    """The energy term max(disjoint(a, b), 0)^2 of one goal kind, over its m inputs."""
    goal = GoalInstance("constraint", "disjoint", [shape(a, "A", 0), shape(b, "B", 4)])
    (k,) = group_goals([goal], "constraint")
    c = kind_function(k, 0)
    m = k.n_inputs
    term = fn([Vec(m, Real)], Real, lambda x: am.max(c(x, [0.0] * k.n_consts), 0.0) ** 2, name=f"{a}_{b}")
    return term, m


def rows_of(a: str, b: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """n random pairs of shapes in a 400 x 400 canvas, sizes 5 to 40 (most pairs apart)."""
    sizes = {"Circle": 3, "Rectangle": 4, "Line": 4}
    cols = []
    for kind in (a, b):
        xy = rng.uniform(-200, 200, (n, 2))
        extra = (
            rng.uniform(5, 40, (n, sizes[kind] - 2)) if kind != "Line" else xy + rng.uniform(-40, 40, (n, 2))
        )
        cols += [xy, extra]
    return np.concatenate(cols, axis=1)


def batches(term: adcore.Fn, m: int, n: int) -> dict[str, adcore.Fn]:
    box_term = interval(term)
    grad = fn([Vec(m, Real)], Vec(m, Real), lambda x: vjp(term)(x).grad(1.0))
    return {
        "plain": fn([Vec(n, Vec(m, Real))], Vec(n, Real), lambda xs: vec(n, Real, lambda r: term(xs[r]))),
        "gradient": fn(
            [Vec(n, Vec(m, Real))],
            Vec(n, Vec(m, Real)),
            lambda xs: vec(n, Vec(m, Real), lambda r: grad(xs[r])),
        ),
        "interval": fn(
            [Vec(n, Vec(m, SPAN))], Vec(n, SPAN), lambda xs: vec(n, SPAN, lambda r: box_term(xs[r]))
        ),
    }


def best_ns_per_row(runs: dict[str, Callable[[], Any]], rounds: int, n: int) -> dict[str, float]:
    best = {k: float("inf") for k in runs}
    for _ in range(rounds):
        for k, run in runs.items():  # alternating, so drifts in machine load hit all three
            start = time.thread_time()
            run()
            best[k] = min(best[k], time.thread_time() - start)
    return {k: 1e9 * t / n for k, t in best.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--radius", type=float, default=0.5)
    args = parser.parse_args()
    n = args.rows
    rng = np.random.default_rng(0)
    print(f"{n} rows, boxes of radius {args.radius}, best of {args.rounds} rounds (CPU ns per row)")
    print("kind                 eqns  interval eqns  plain  gradient  interval  interval/plain  culled")
    for a, b in (("Circle", "Circle"), ("Rectangle", "Rectangle"), ("Rectangle", "Line")):
        term, m = term_of(a, b)
        rows = rows_of(a, b, n, rng)
        compiled = {k: adcore.Compiled(f, tier="optimized") for k, f in batches(term, m, n).items()}
        compiled["plain"].inputs[0][...] = rows
        compiled["gradient"].inputs[0][...] = rows
        compiled["interval"].inputs[0][...] = rows - args.radius
        compiled["interval"].inputs[1][...] = rows + args.radius
        ns = best_ns_per_row({k: c.call_raw for k, c in compiled.items()}, args.rounds, n)
        lo, hi = compiled["interval"].outputs
        culled = float(np.mean(lo == hi))
        plain_eqns = sum(count_eqns(g.body) for g in call_graph(term.ir) if g.body is not None)
        box_eqns = sum(count_eqns(g.body) for g in call_graph(interval(term).ir) if g.body is not None)
        print(
            f"{a + '-' + b:20} {plain_eqns:5} {box_eqns:14} {ns['plain']:6.1f} {ns['gradient']:9.1f}"
            f" {ns['interval']:9.1f} {ns['interval'] / ns['plain']:15.1f} {culled:7.1%}"
        )


if __name__ == "__main__":
    main()
