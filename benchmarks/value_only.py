"""φ alone against φ with its gradient, and which line-search trials fail (docs/scaling.md).

Two measurements on the scaling series' trios (benchmarks/scaling_trios.py):

- **cost**: each stage's whole energy (every goal of the stage listed, no culling) at the initial
  state, in the energy's two modes (`energies.compile.energy`: GRADIENT and VALUE_ONLY), on the
  optimized code: CPU µs per call (the calling thread's, best of --rounds, the modes alternating).
  The two modes' φ must be the same number bit for bit; the script stops if they are not.
- **trials** (`--trials`): one layout through `render_trio` with every line search recorded. Each
  trial is classed as the line search classes it (`energies.optimize.penrose_lbfgs`): the first
  trial of an L-BFGS step; a trial of a step along the raw gradient; or a later trial of a search
  in which one failed, flagged or not by the quadratic through φ(0), φ'(0) and the last failed
  trial. Reported per class: trials, how many failed the Armijo test, their seconds and those of
  the failed ones. The
  searches are recorded with φ alone switched off, so every trial costs a whole evaluation with its
  gradient, as before φ alone existed.

    python benchmarks/value_only.py [--registry ../shared/penrose-registry] [--series graph circles]
        [--sizes 256 1000] [--rounds 20] [--trials]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scaling_trios import DEFAULT_REGISTRY, trio  # noqa: E402

from energies.compile import compile_problem, set_threads  # noqa: E402
from energies.compile.energy import GRADIENT, VALUE_ONLY  # noqa: E402
from energies.diagram_build import build_diagram  # noqa: E402
from energies.optimize import penrose_lbfgs  # noqa: E402
from service import render_trio  # noqa: E402


def mode_costs(series: str, n: int, registry: str, rounds: int) -> list[tuple[str, float, float]]:
    """Per stage: (name, µs with the gradient, µs of φ alone), whole energies at the initial state."""
    t = trio(series, n, 0, registry)
    d = build_diagram(t.domain, t.substance, t.style, t.variation, ())
    set_threads(1)  # one instance holds every listed row (energies.compile.pieces): its calls are timed
    problem = compile_problem(d, time_limit=600, cache=None, culling=False)
    if problem.energy_alone is None:
        raise SystemExit(f"{series} N = {n}: {len(d.goals)} goals, too few for φ alone")
    problem.vg.wait_optimized(600)
    x = np.array(d.unknowns.x0)
    rows = []
    for s, stage in enumerate(problem.stages):
        alone = problem.energy_alone(x, s, 1e3)
        energy, _ = problem.energy_and_grad(x, s, 1e3)
        if np.float64(alone).tobytes() != np.float64(energy).tobytes():
            raise SystemExit(f"{series} N = {n}, stage {stage.name!r}: φ alone {alone!r} != φ {energy!r}")
        best = {GRADIENT: np.inf, VALUE_ONLY: np.inf}
        for _ in range(rounds):
            for mode in (GRADIENT, VALUE_ONLY):
                start = time.thread_time()
                problem.vg.call_raw(1e3, *problem.culled, mode, *problem.counts)
                best[mode] = min(best[mode], time.thread_time() - start)
        rows.append((stage.name or "(one stage)", best[GRADIENT] * 1e6, best[VALUE_ONLY] * 1e6))
    return rows


Classed = dict[str, list[tuple[bool, float]]]  # class -> (failed, seconds) per trial
Energy, Step, Vector = penrose_lbfgs.Energy, penrose_lbfgs.Step, np.ndarray


def recorded_trials(series: str, n: int, registry: str) -> Classed:
    """Every line-search trial of one layout, classed (module docstring), φ alone switched off."""
    classes: Classed = defaultdict(list)
    plain = penrose_lbfgs.line_search

    def recording(fun: Energy, x0: Vector, r: Vector, f0: float, slope: float, *_: Any, **kw: Any) -> Step:
        cautious = bool(kw.get("cautious"))  # (drive_penrose passes it by name)
        failed: list[tuple[float, float]] = []  # the last failed trial: (t, φ)
        scale = float(np.max(np.abs(r))) or 1.0

        def timed(x: np.ndarray) -> tuple[float, np.ndarray]:
            start = time.perf_counter()
            f, g = fun(x)
            seconds = time.perf_counter() - start
            t = float(np.max(np.abs(x - x0))) / scale
            if cautious:
                name = "raw gradient"
            elif not failed:
                name = "first of an L-BFGS step"
            elif penrose_lbfgs.likely_to_fail(f0, slope, failed[-1], t):
                name = "after a failure, flagged"
            else:
                name = "after a failure, not flagged"
            fails = not (np.isfinite(f) and f <= f0 + penrose_lbfgs.ARMIJO * t * slope)
            classes[name].append((fails, seconds))
            if fails:
                failed[:] = [(t, f if np.isfinite(f) else np.inf)]
            return f, g

        return plain(timed, x0, r, f0, slope)  # no φ alone: every trial with its gradient

    penrose_lbfgs.line_search = recording
    try:
        t = trio(series, n, 0, registry)
        render_trio(t.domain, t.substance, t.style, t.variation, time_limit=600)
    finally:
        penrose_lbfgs.line_search = plain
    return classes


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--registry", default=str(DEFAULT_REGISTRY), help="a checkout of Penrose's registry")
    ap.add_argument("--series", nargs="+", default=["graph", "circles"])
    ap.add_argument("--sizes", nargs="+", type=int, default=[256, 1000])
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--trials", action="store_true", help="also class one layout's line-search trials")
    args = ap.parse_args(argv)
    if len(args.sizes) != len(args.series):
        ap.error("give one size per series")
    out: dict[str, Any] = {"costs": {}, "trials": {}}
    print("| diagram | stage | φ with gradient µs | φ alone µs | ratio |\n|---|---|---|---|---|")
    for series, n in zip(args.series, args.sizes):
        out["costs"][series, n] = rows = mode_costs(series, n, args.registry, args.rounds)
        for stage, full, alone in rows:
            print(f"| {series} N = {n} | {stage} | {full:.0f} | {alone:.0f} | {alone / full:.2f} |")
    if args.trials:
        print("\n| diagram | trials | failed | seconds | seconds of the failed |\n|---|---|---|---|---|")
        for series, n in zip(args.series, args.sizes):
            out["trials"][series, n] = classes = recorded_trials(series, n, args.registry)
            for name, trials in sorted(classes.items()):
                counts = Counter(fails for fails, _ in trials)
                seconds = sum(s for _, s in trials)
                lost = sum(s for fails, s in trials if fails)
                row = f"{len(trials)} | {counts[True]} | {seconds:.2f} | {lost:.2f}"
                print(f"| {series} N = {n}: {name} | {row} |")
    return out


if __name__ == "__main__":
    main()
