"""Style evaluation of an all-pairs block: N circles, `ensure disjoint` for every pair of sets.

The trio (made here, not read from files):

    Domain     type Set
    Substance  Set S0, S1, ..., S{N-1}
    Style      forall Set x { x.icon = Circle {...} }
               forall Set x; Set y { ensure disjoint(x.icon, y.icon, 2) }

For each N prints the matches of the all-pairs block, the seconds spent parsing and matching
(`run_front_end`), the seconds of the Style evaluation (`evaluate_style`, front end to `Diagram`),
the goals produced (N(N-1)/2 `disjoint` plus N implicit `onCanvas`) and the evaluation time per
match of the all-pairs block. Each size runs `--repeat` times (the machine is shared, so timings
are noisy); the table gives the best and the worst run.

    python benchmarks/style_all_pairs.py [--sizes 100 300 1000] [--repeat 3] [--profile N]

`--profile N` instead runs the evaluation of size N once under cProfile and prints the top entries.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import time

from energies.diagram import Diagram, count_goals
from energies.lang.frontend import FrontEnd, run_front_end
from energies.style import evaluate_style

DOMAIN = "type Set\n"

STYLE = """canvas {
  width = 800
  height = 700
}

forall Set x {
  x.icon = Circle {
    r : 10
    fillColor : #3366cc40
  }
}

forall Set x; Set y {
  ensure disjoint(x.icon, y.icon, 2)
}
"""


def substance(n: int) -> str:
    return "Set " + ", ".join(f"S{i}" for i in range(n)) + "\n"


def pair_matches(front: FrontEnd) -> int:
    return len(front.blocks[-1].matches)


def timed_run(n: int) -> tuple[float, float, int, int]:
    """(front-end seconds, evaluation seconds, matches of the all-pairs block, goals)."""
    gc.collect()
    t0 = time.perf_counter()
    front = run_front_end(DOMAIN, substance(n), STYLE)
    t1 = time.perf_counter()
    diagram: Diagram = evaluate_style(front, STYLE, "bench")
    t2 = time.perf_counter()
    n_goals = count_goals(diagram.goals, "constraint") + count_goals(diagram.goals, "objective")
    return t1 - t0, t2 - t1, pair_matches(front), n_goals


def profile(n: int, top: int = 30) -> None:
    front = run_front_end(DOMAIN, substance(n), STYLE)
    prof = cProfile.Profile()
    prof.enable()
    evaluate_style(front, STYLE, "bench")
    prof.disable()
    pstats.Stats(prof).sort_stats("tottime").print_stats(top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 300, 1000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", type=int, default=None, metavar="N")
    args = parser.parse_args()
    if args.profile is not None:
        profile(args.profile)
        return
    timed_run(5)  # imports and first-use costs (the function library) are not part of the numbers
    print(f"{'N':>6} {'matches':>9} {'match s':>15} {'style s':>15} {'goals':>8} {'us/match':>15}")
    for n in args.sizes:
        runs = [timed_run(n) for _ in range(args.repeat)]
        front = sorted(r[0] for r in runs)
        style = sorted(r[1] for r in runs)
        matches, goals = runs[0][2], runs[0][3]
        per = [1e6 * s / max(matches, 1) for s in style]
        print(
            f"{n:>6} {matches:>9} {front[0]:>7.3f}-{front[-1]:<7.3f} {style[0]:>7.3f}-{style[-1]:<7.3f}"
            f" {goals:>8} {per[0]:>7.1f}-{per[-1]:<7.1f}"
        )


if __name__ == "__main__":
    main()
