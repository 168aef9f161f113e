"""Portfolio stopping rules replayed on recorded registry runs: the layouts a rule keeps, the work it saves.

    python -m registry.bench --out OUT --jobs 2 --task benchmarks.portfolio_stops:starts_task
    python benchmarks/portfolio_stops.py OUT [--agreeing 3] [--patience 3] [--wander 1.5 500]

`starts_task` (run from the repository's root) is the registry's pipeline task with a record of
every start the portfolio ran: its CPU ms, iterations, evaluations, status, energy and violated
constraints. Starts do not depend on one another, so a rule that ends the sequence of starts earlier
than the recording's rules did is replayed exactly: its layout is the best (fewest violated
constraints, then lowest energy) of the prefix it runs, and a start whose iterations exceed its
wandering cap is cut (its CPU counted in proportion) and ends the portfolio. A looser rule than the
recording's cannot be replayed (the starts it would add were never run).

Printed: for the recording and for the rule, the verdicts against Penrose's reference energies
(worse / same / better, by the harness's rule), the trios satisfied, the optimize CPU of all trios,
and every trio whose chosen start changes.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
REFERENCE = REPO.parent / "shared" / "penrose-reference" / "results.jsonl"


def starts_task(trio: Any, timeout: float | None, starts: int | None = None) -> dict[str, Any]:
    """The registry's pipeline task, recording each start (field "runs"); its starts run one after
    another in this process, so that each one's CPU is its own."""
    import energies.optimize.portfolio as portfolio
    from registry.runner import run_trio
    from service.workers.warm_up import warm_up

    warm_up()
    runs: list[list[Any]] = []
    optimize = portfolio.optimize_portfolio.__kwdefaults__["run"]

    def recorded(*args: Any, **kwargs: Any) -> Any:
        cpu = time.process_time()
        r = optimize(*args, **kwargs)
        cpu_ms = (time.process_time() - cpu) * 1e3
        runs.append([cpu_ms, r.iterations, r.evaluations, r.status, r.energy, r.n_violated])
        return r

    portfolio.optimize_portfolio.__kwdefaults__["run"] = recorded
    row = run_trio(trio, timeout=timeout, starts=starts, processes=1)
    return {**row, "runs": runs}


def replay(
    runs: list[list[Any]], agreeing: int, patience: int, wander: tuple[float, float]
) -> tuple[int, float]:
    """The start a rule keeps and the CPU ms its starts take (the time and evaluation budgets as recorded)."""
    from energies.optimize.portfolio import AGREEMENT

    def rank(i: int) -> tuple[int, float]:
        energy = runs[i][4]
        return (runs[i][5], energy if math.isfinite(energy) else math.inf)

    first = runs[0]
    best, finished, cpu = 0, [0], first[0]
    cap = max(wander[0] * first[2], wander[1])
    for k in range(1, len(runs)):
        e, v = runs[best][4], runs[best][5]
        same = [i for i in finished if runs[i][5] == 0 and abs(runs[i][4] - e) <= AGREEMENT * max(1, abs(e))]
        if v == 0 and (len(same) >= agreeing or finished[-1] - best >= patience):
            break
        r = runs[k]
        if r[1] > cap:  # cut by the wandering cap: dropped, and the portfolio ends
            cpu += r[0] * cap / r[1]
            break
        cpu += r[0]
        if r[3] == "MaxIterations":
            break
        finished.append(k)
        if rank(k) < rank(best):
            best = k
    return best, cpu


def verdict(ours: float, penrose: float) -> str:
    margin = max(1.0, 0.1 * abs(penrose))
    return "worse" if ours > penrose + margin else "better" if ours < penrose - margin else "same"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path, help="a registry.bench --out folder made with starts_task")
    ap.add_argument("--reference", type=Path, default=REFERENCE)
    ap.add_argument("--agreeing", type=int, default=3)
    ap.add_argument("--patience", type=int, default=3)
    ap.add_argument("--wander", type=float, nargs=2, default=(1.5, 500), metavar=("FACTOR", "FLOOR"))
    args = ap.parse_args()
    sys.path.insert(0, str(REPO))
    reference = {r["key"]: r for r in map(json.loads, args.reference.read_text().splitlines())}
    rows = [json.loads(line) for line in (args.out / "results.jsonl").read_text().splitlines()]
    rows = [r for r in rows if r["status"] == "ok" and reference.get(r["key"], {}).get("status") == "ok"]
    tally: dict[str, dict[str, float]] = {"recorded": {}, "rule": {}}
    changed = []
    for r in rows:
        penrose = reference[r["key"]]["energy"]
        chosen, cpu = replay(r["runs"], args.agreeing, args.patience, tuple(args.wander))
        kept = r["runs"][chosen]
        for name, energy, violated, ms in (
            ("recorded", r["energy"], r["nViolated"], sum(run[0] for run in r["runs"])),
            ("rule", kept[4], kept[5], cpu),
        ):
            t = tally[name]
            t[verdict(energy, penrose)] = t.get(verdict(energy, penrose), 0) + 1
            t["satisfied"] = t.get("satisfied", 0) + (violated == 0)
            t["optimize CPU s"] = t.get("optimize CPU s", 0) + ms / 1e3
        if chosen != r["chosenStart"]:
            changed.append(
                f"{r['key']}: start {r['chosenStart']} -> {chosen}, energy {r['energy']:.4g} -> {kept[4]:.4g}"
            )
    for name, t in tally.items():
        print(f"{name}: " + ", ".join(f"{k} {v:.4g}" for k, v in sorted(t.items())))
    print(f"{len(changed)} layouts change:", *changed, sep="\n  ")


if __name__ == "__main__":
    main()
