"""Compile and optimize times of registry trios: this checkout against a git revision, alternated.

Each trio runs in a fresh process per code version, as `registry.bench` runs it (`warm_up()` first,
then the service pipeline with its default portfolio), reporting CPU time (`time.process_time`,
all of the process's threads) and wall time of the compile phase (parse, Style, energy, Wasm) and
of the optimize phase, the CPU the cyclic garbage collector took during the trio (`gcCpu`, its
collections' thread time, in any phase), and the SVG. The versions alternate within every round
(which goes first flips each round), so both see the same machine load; the machine is shared, so
the table gives each version's range over the rounds and the ratio of medians, current / baseline.

    python benchmarks/registry_phases.py [--baseline main] [--rounds 3] [--registry DIR] [TRIO ...]

The baseline is `git archive REV` unpacked into a temporary folder and run by this interpreter. The
last line says whether every trio drew the same SVG, byte for byte, under both versions.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_REGISTRY = REPO.parent / "shared" / "penrose-registry"
# Trios at the registry's quartiles of compile+optimize time and ratio to Penrose, and its largest.
DEFAULT_TRIOS = [
    "matrix-library/rotate3d",
    "tutorials/tutorial3",
    "shape-distance/points-around-line",
    "geometry-domain/textbook_problems/c03p01",
    "graph-domain/textbook/sec1/fig6",
    "graph-domain/textbook/sec2/fig14",
    "spectral-graphs/examples/box",
    "lagrange-bases/lagrange-bases",
    "ray-tracing/next-event-estimation",
    "walk-on-spheres/laplace-estimator",
    "molecules/glutamine",
    "triangle-mesh-2d/diagrams/relative-orientation",
]

# Run in the version's folder: one trio through the pipeline, its phases' times and SVG as JSON.
CHILD = r"""
import gc, hashlib, json, sys, time
from pathlib import Path
import service.pipeline as pipeline
if Path("service/workers/warm_up.py").exists():
    from service.workers.warm_up import warm_up
    from service.trios import load_registry
else:  # revisions before service/workers/warm_up.py and service/trios.py
    from service.pipeline import warm_up
    from registry.trios import load_registry
assert Path(pipeline.__file__).resolve().is_relative_to(Path.cwd().resolve()), "another checkout imported"

warm_up()
collecting = {"start": 0.0, "total": 0.0}


def on_collection(phase, info):
    if phase == "start":
        collecting["start"] = time.thread_time()
    else:
        collecting["total"] += time.thread_time() - collecting["start"]


gc.callbacks.append(on_collection)
trio = load_registry(Path(sys.argv[1]), [sys.argv[2]])[0]
cpu = {"optimize": 0.0, "render": 0.0}


def timed(phase, name):  # the phases as the pipeline times them (drawing the starts is optimizing)
    def run(*args, **kwargs):
        start = time.process_time()
        try:
            return phase(*args, **kwargs)
        finally:
            cpu[name] += time.process_time() - start
    return run


pipeline.portfolio_starts = timed(pipeline.portfolio_starts, "optimize")
pipeline.optimize_portfolio = timed(pipeline.optimize_portfolio, "optimize")
pipeline.concrete_shapes = timed(pipeline.concrete_shapes, "render")
pipeline.render_svg = timed(pipeline.render_svg, "render")
start = time.process_time()
r = pipeline.render_trio(trio.domain, trio.substance, trio.style, trio.variation, trio.exclude_warnings,
                         time_limit=300)
cpu["total"] = time.process_time() - start
print(json.dumps({
    "compileWall": r.timings["compile"], "optimizeWall": r.timings["optimize"],
    "optimizeCpu": cpu["optimize"] * 1e3,
    "compileCpu": (cpu["total"] - cpu["optimize"] - cpu["render"]) * 1e3,
    "gcCpu": collecting["total"] * 1e3,
    "svg": hashlib.sha256(r.svg.encode()).hexdigest(),
}))
"""

FIELDS = ("compileCpu", "optimizeCpu", "gcCpu", "compileWall", "optimizeWall")


def unpack(rev: str, into: Path) -> Path:
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev], capture_output=True, check=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def run_child(tree: Path, registry: Path, key: str) -> dict[str, float | str]:
    return json_child(tree, CHILD, str(registry), key)


def json_child(tree: Path, script: str, *args: str) -> dict[str, float | str]:
    """Run `script` in a fresh interpreter on the checkout `tree`; its last line of output, as JSON."""
    out = subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree), "OPENBLAS_NUM_THREADS": "1"},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trios", nargs="*", default=DEFAULT_TRIOS)
    ap.add_argument("--baseline", default="main")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--registry", type=Path, default=DEFAULT_REGISTRY)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"baseline": unpack(args.baseline, Path(tmp)), "current": REPO}
        runs: dict[tuple[str, str], list[dict[str, float | str]]] = {}
        for rnd in range(args.rounds):
            order = ["baseline", "current"] if rnd % 2 == 0 else ["current", "baseline"]
            for key in args.trios:
                for version in order:
                    runs.setdefault((key, version), []).append(run_child(trees[version], args.registry, key))
                print(f"round {rnd + 1}: {key}", file=sys.stderr)
    report(args, runs)


def report(args: argparse.Namespace, runs: dict[tuple[str, str], list[dict[str, float | str]]]) -> None:
    print(f"baseline {args.baseline}, {args.rounds} rounds; ms, range over the rounds; ratio of medians")
    print("| trio | " + " | ".join(f"{f} base | {f} current | ratio" for f in FIELDS) + " |")
    print("|---|" + "---|---|---|" * len(FIELDS))
    ratios: dict[str, list[float]] = {f: [] for f in FIELDS}
    same_svg = True
    for key in args.trios:
        base, cur = runs[(key, "baseline")], runs[(key, "current")]
        same_svg &= len({r["svg"] for r in base + cur}) == 1
        cells = []
        for f in FIELDS:
            b = [float(r[f]) for r in base]
            c = [float(r[f]) for r in cur]
            ratio = statistics.median(c) / max(statistics.median(b), 1e-9)
            ratios[f].append(ratio)
            cells.append(f"{min(b):.0f}-{max(b):.0f} | {min(c):.0f}-{max(c):.0f} | {ratio:.2f}")
        print(f"| {key} | " + " | ".join(cells) + " |")
    for f in FIELDS:
        q = statistics.quantiles(ratios[f], n=4) if len(ratios[f]) > 1 else ratios[f] * 3
        print(f"{f}: ratio current / baseline, quartiles over trios {q[0]:.2f} / {q[1]:.2f} / {q[2]:.2f}")
    print("same SVG, byte for byte, in every run of both versions:", same_svg)


if __name__ == "__main__":
    main()
