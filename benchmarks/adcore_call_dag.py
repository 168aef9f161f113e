"""Compiled size and compile time of call DAGs against their depth.

Level k+1 calls level k twice with different arguments (h_{k+1}(x, y) = (h_k(x/2 + y, y - x/4) +
h_k(y, x)) / 2, h_0 = sin x + cos y), so unrolled, depth d would be 2^d copies of h_0. For each depth
and each derivative (forward mode, value + gradient by reverse mode, Hessian by reverse over reverse)
it prints the Wasm module's size, the time to trace and differentiate, to generate Wasm, and for
wasmtime to compile it (Cranelift), each the best of `--repeat` fresh builds. Sizes and times should
grow linearly with the depth.

    python benchmarks/adcore_call_dag.py [--depths 5 10 15 20 25 30] [--repeat 3]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import adcore
from adcore.wasm.codegen import build_module
from adcore.wasm.runtime import clear_memory_cache, load_module

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.adcore.call_dag import dag, forward, gradient, hessian  # noqa: E402


def measure(transform: Callable[[adcore.Fn], adcore.Fn], depth: int) -> tuple[int, float, float, float]:
    """(module bytes, seconds tracing + differentiating, generating Wasm, compiling in wasmtime)."""
    t0 = time.perf_counter()
    f = transform(dag(depth))  # tracing the outer body differentiates the DAG
    t1 = time.perf_counter()
    wasm, _ = build_module(f.ir)
    t2 = time.perf_counter()
    load_module(wasm)
    t3 = time.perf_counter()
    return len(wasm), t1 - t0, t2 - t1, t3 - t2


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--depths", type=int, nargs="+", default=[5, 10, 15, 20, 25, 30])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print("| derivative | depth | Wasm bytes | trace+AD ms | codegen ms | wasmtime ms | total ms |")
    print("|---|---|---|---|---|---|---|")
    for name, transform in (("jvp", forward), ("vjp", gradient), ("Hessian", hessian)):
        for depth in args.depths:
            runs = []
            for _ in range(args.repeat):
                clear_memory_cache()  # wasmtime compiles every time
                runs.append(measure(transform, depth))
            size = runs[0][0]
            best = [min(r[k] for r in runs) * 1e3 for k in (1, 2, 3)]
            total = min(sum(r[1:]) for r in runs) * 1e3
            times = " | ".join(f"{t:.0f}" for t in (*best, total))
            print(f"| {name} | {depth} | {size:,} | {times} |")


if __name__ == "__main__":
    main()
