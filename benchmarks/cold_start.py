"""Cold start of the command line: `python -m service render --example sets -o OUT.svg`, a new
process each time, this tree against a baseline revision, side by side.

    .venv/bin/python benchmarks/cold_start.py [--baseline main] [--rounds 8]

The baseline is checked out into a temporary git worktree; each round runs the baseline and then
this tree (alternating, so both see the same machine load), with the working directory at the
tree's root so that its packages are the ones imported. Python's bytecode cache is on, as on a
user's machine (PYTHONDONTWRITEBYTECODE is removed from the environment), and one untimed run of
each tree writes it first. Reported per tree: wall seconds (min, median, max), CPU seconds
(user + system of the child), and the sum of `-X importtime`'s top-level imports (best of 3).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMAND = ["-m", "service", "render", "--example", "sets", "-o"]


def run_once(tree: Path, out: Path, env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one cold render in `tree`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, *COMMAND, str(out)], cwd=tree, env=env, check=True, capture_output=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def import_seconds(tree: Path, out: Path, env: dict[str, str]) -> float:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *COMMAND, str(out)],
        cwd=tree,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    top = re.findall(r"import time:\s+\d+ \|\s+(\d+) \| (\S+)", done.stderr)  # no indent: top level
    return sum(int(us) for us, _ in top) / 1e6


def summary(values: list[float]) -> str:
    return f"{min(values):.2f} / {statistics.median(values):.2f} / {max(values):.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="main", help="git revision to compare with (default main)")
    parser.add_argument("--rounds", type=int, default=8)
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "baseline"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(base), args.baseline],
            check=True,
            capture_output=True,
        )
        try:
            trees = {f"baseline ({args.baseline})": base, "this tree": ROOT}
            out = Path(tmp) / "out.svg"
            for tree in trees.values():
                run_once(tree, out, env)  # writes the bytecode cache and the Wasm module cache
            walls: dict[str, list[float]] = {name: [] for name in trees}
            cpus: dict[str, list[float]] = {name: [] for name in trees}
            for _ in range(args.rounds):
                for name, tree in trees.items():
                    wall, cpu = run_once(tree, out, env)
                    walls[name].append(wall)
                    cpus[name].append(cpu)
            imports = {
                name: min(import_seconds(tree, out, env) for _ in range(3)) for name, tree in trees.items()
            }
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)], check=False)
    load = os.getloadavg()[0]
    print(
        f"cold `python -m service render --example sets`, {args.rounds} alternating rounds, load {load:.1f}"
    )
    print("| tree | wall s (min / median / max) | CPU s (min / median / max) | imports s (best of 3) |")
    print("|---|---|---|---|")
    for name in trees:
        print(f"| {name} | {summary(walls[name])} | {summary(cpus[name])} | {imports[name]:.2f} |")


if __name__ == "__main__":
    main()
