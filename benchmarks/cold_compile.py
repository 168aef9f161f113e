"""Cold compile of the registry's slowest-compiling trios: where the time goes, and this checkout
against a git revision.

The compile phase is what `registry.bench` times as `compileMs`: building the diagram (parsing,
matching, Style evaluation, labels) and compiling its energy (goal kinds, tracing, reverse mode,
code generation, Winch), in a fresh process after `warm_up()`, with empty caches.

    python benchmarks/cold_compile.py [--baseline main] [--rounds 3] [TRIO ...]
    python benchmarks/cold_compile.py --phases [--rounds 3] [TRIO ...]

Without `--phases`: `registry_phases.py`'s comparison (fresh processes, the two versions alternated
in every round, CPU and wall per phase, ranges over the rounds, ratio of medians, and whether every
SVG is the same byte for byte) on these trios. With `--phases`: this checkout only, each trio's
build and compile CPU (median and range of `--rounds` plain runs), then one run under cProfile whose
inclusive times per phase are scaled to the plain runs' median (the profiler's overhead is spread
about evenly over Python code; the shares are what it gives, not exact milliseconds), except
wasmtime's compile, native code the profiler does not slow: its CPU is measured in the plain runs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import registry_phases  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
# The registry's largest compile times, and the ones near or above 2x Penrose's compile+optimize.
DEFAULT_TRIOS = [
    "dinoshade/dinoshade",
    "curve-examples/space-curves",
    "curve-examples/closed-elastic-curve",
    "curve-examples/open-elastic-curve",
    "geometry-domain/textbook_problems/c05p13",
    "triangle-mesh-2d/diagrams/cotan-formula",
    "curve-examples/frenet-frame",
]
# phase name -> (a path fragment of its module, its function's name): inclusive times under cProfile
PHASES = {
    "parse+match": ("energies/lang/frontend.py", "run_front_end"),
    "style": ("energies/style/run.py", "evaluate_style"),
    "labels": ("energies/text/labels", "measure_"),
    "trace": ("energies/compile/energy.py", "kind_function"),
    "jvp": ("adcore/forward.py", "jvp_function"),
    "unzip": ("adcore/unzip.py", "unzip_function"),
    "transpose": ("adcore/transpose.py", "transpose_function"),
    "codegen": ("adcore/wasm/codegen.py", "build_module"),
    "simplify": ("adcore/wasm/simplify.py", "simplify_program"),
    "fuse": ("adcore/wasm/fuse.py", "fuse_program"),
    "emit": ("adcore/wasm/emit.py", "emit_body"),
    "wasmtime": ("wasmtime/_module.py", "__init__"),
}

# One trio's cold compile in this process after warm_up(): CPU ms of build and compile, and with
# argv[3] == "1" the phases' inclusive times under cProfile.
CHILD = r"""
import cProfile, json, pstats, sys, threading, time
from pathlib import Path
import wasmtime
from service.workers.warm_up import warm_up
from service.trios import load_registry
from energies.compile import compile_problem
from energies.diagram_build import build_diagram
warm_up()
phases = json.loads(sys.argv[4])
trio = load_registry(Path(sys.argv[1]), [sys.argv[2]])[0]
native = {"wasmtime": 0.0}
module_init = wasmtime.Module.__init__


def timed_init(self, *args, **kwargs):  # the process's CPU (wasmtime compiles on several threads)
    start = time.process_time()
    try:
        module_init(self, *args, **kwargs)
    finally:
        if threading.current_thread() is threading.main_thread():  # not the background Cranelift
            native["wasmtime"] += (time.process_time() - start) * 1e3


wasmtime.Module.__init__ = timed_init
profile = cProfile.Profile() if sys.argv[3] == "1" else None
if profile:
    profile.enable()
c0 = time.process_time()
d = build_diagram(trio.domain, trio.substance, trio.style, trio.variation, tuple(trio.exclude_warnings))
c1 = time.process_time()
compile_problem(d, time_limit=300)
c2 = time.process_time()
out = {"build": (c1 - c0) * 1e3, "compile": (c2 - c1) * 1e3, "wasmtime CPU": native["wasmtime"]}
if profile:
    profile.disable()
    stats = pstats.Stats(profile).stats
    def inclusive(path, name):
        return 1e3 * sum(v[3] for (f, _, n), v in stats.items() if path in f and n.startswith(name))
    out["profiled"] = inclusive("energies/diagram_build.py", "build_diagram") + inclusive(
        "energies/compile/problem.py", "compile_problem")
    out.update({k: inclusive(*v) for k, v in phases.items()})
print(json.dumps(out))
"""


def child(registry: Path, key: str, profiled: bool) -> dict[str, float]:
    args = (str(registry), key, "1" if profiled else "0", json.dumps(PHASES))
    return registry_phases.json_child(REPO, CHILD, *args)  # type: ignore[return-value]


def phases(args: argparse.Namespace) -> None:
    print("CPU ms: build and compile, median (range) of plain runs; phases scaled from one profiled run")
    for key in args.trios:
        plain = [child(args.registry, key, False) for _ in range(args.rounds)]
        prof = child(args.registry, key, True)
        totals = [p["build"] + p["compile"] for p in plain]
        build, comp, native = (
            statistics.median(p[f] for p in plain) for f in ("build", "compile", "wasmtime CPU")
        )
        # the Python phases share what the plain runs spent outside wasmtime
        scale = (statistics.median(totals) - native) / (prof["profiled"] - prof["wasmtime"])
        cells = [f"{k} {prof[k] * scale:.0f}" for k in PHASES if k != "wasmtime"] + [f"wasmtime {native:.0f}"]
        print(f"{key}: total {min(totals):.0f}-{max(totals):.0f}, build {build:.0f}, compile {comp:.0f}")
        print("    " + ", ".join(cells))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trios", nargs="*", default=DEFAULT_TRIOS)
    ap.add_argument("--baseline", default="main")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--registry", type=Path, default=registry_phases.DEFAULT_REGISTRY)
    ap.add_argument("--phases", action="store_true", help="this checkout's breakdown by phase")
    args = ap.parse_args()
    if args.phases:
        phases(args)
        return
    sys.argv = [sys.argv[0], *args.trios, "--baseline", args.baseline, "--rounds", str(args.rounds)]
    sys.argv += ["--registry", str(args.registry)]
    registry_phases.main()


if __name__ == "__main__":
    main()
