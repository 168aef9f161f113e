"""Penrose-like energies: n circles, all pairs `disjoint`, `onCanvas` for each, a small objective.

Measures, in one run, value+gradient time from Python and build time for:
- ours: the energy compiler (one adcore function per goal kind, looped over its table) in Wasm;
- numpy: a hand-vectorized baseline (broadcasted all-pairs distances, analytic gradient);
- autograd (vectorized), CasADi (SX expression with its gradient, run by its VM; n <= 200) and JAX
  (`jit(value_and_grad)`, vectorized), with the `bench` extra;
- Rose (npm `rose`, as installed for registry/penrose_runner) in Node, built as Penrose builds its
  energies: one Rose function per goal kind called once per goal, `vjp`, `compile` to Wasm
  (benchmarks/rose_circles.mjs, run once per size; n/a without node or that package). Its time is
  measured after V8 has tiered the Wasm up (the first calls', before that, is in parentheses); its
  build is functions + vjp, then compile. When Rose or V8 fails, the cell says why.
Every peer's energy is checked against numpy's, and the gradient where the peer returns it.
Prints a table with ratios to numpy.

Build times exclude what a process pays once (imports, loading the math library, tracing the
library's functions on first use): a tiny problem is built first, as JAX's time excludes importing
JAX. Our build is split into tables (grouping the goals into kind tables, linear in the number of
goals) and compile (tracing, differentiation, code generation, wasmtime: constant in n). It is
measured twice: with the goals stated as three `GoalTable`s (all pairs as two index columns, as a
program states them), and with one `GoalInstance` per goal (as a Style program's blocks state them).

    python benchmarks/energy_circles.py [--sizes 10 50 200 1000] [--repeat 200]
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import re
import shutil
import statistics
import subprocess
import time
from pathlib import Path

import numpy as np

from energies.compile.goal_list import split_goals
from energies.compile.problem import CompiledProblem, compile_problem, goal_kinds
from energies.diagram import Column, Diagram, Goal, GoalInstance, GoalTable, ShapeInstance, Unknowns
from energies.expr import input_node

CANVAS = (800.0, 700.0)
WEIGHT = 1e3
PAD = 1.0
ROSE_SCRIPT = Path(__file__).with_name("rose_circles.mjs")
ROSE_PACKAGE = Path(__file__).resolve().parents[1] / "registry" / "penrose_runner" / "node_modules" / "rose"
ROSE_TIMEOUT_S = 120


def diagram(n: int, seed: int = 0, tables: bool = True) -> Diagram:
    """The circles problem; its goals as three tables, or (tables=False) one object per goal, as a
    Style program's blocks produce them."""
    rng = np.random.default_rng(seed)
    u = Unknowns()
    shapes = []
    for k in range(n):
        cx = input_node(u.add(rng.uniform(-300, 300), f"c{k}.x"))
        cy = input_node(u.add(rng.uniform(-300, 300), f"c{k}.y"))
        r = input_node(u.add(rng.uniform(5, 20), f"c{k}.r"))
        shapes.append(ShapeInstance(f"c{k}", "Circle", {"center": [cx, cy], "r": r, "strokeWidth": 0.0}))
    radii = [s.props["r"] for s in shapes]
    if tables:
        i, j = np.triu_indices(n, 1)  # all pairs, in the order of itertools.combinations
        each = np.arange(n)
        goals: list[Goal] = [
            GoalTable(
                "constraint", "disjoint", [Column(shapes, i), Column(shapes, j), Column.shared(PAD, len(i))]
            ),
            GoalTable(
                "constraint",
                "onCanvas",
                [Column(shapes, each), Column.shared(CANVAS[0], n), Column.shared(CANVAS[1], n)],
            ),
            GoalTable("objective", "minimal", [Column(radii, each)]),
        ]
    else:
        goals = [
            GoalInstance("constraint", "disjoint", [a, b, PAD]) for a, b in itertools.combinations(shapes, 2)
        ]
        goals += [GoalInstance("constraint", "onCanvas", [s, *CANVAS]) for s in shapes]
        goals += [GoalInstance("objective", "minimal", [r]) for r in radii]
    return Diagram(CANVAS, shapes, goals, u)


def build(d: Diagram) -> tuple[CompiledProblem, float, float]:
    """The compiled problem, and the milliseconds spent grouping goals into tables and compiling."""
    t0 = time.perf_counter()
    objectives, constraints = split_goals(d.goals)
    goal_kinds(d, objectives, constraints)
    tables = (time.perf_counter() - t0) * 1e3
    t0 = time.perf_counter()
    p = compile_problem(d, cache=None)  # as the service compiles (cycle collector paused)
    return p, tables, (time.perf_counter() - t0) * 1e3


def numpy_energy(x: np.ndarray, n: int) -> tuple[float, np.ndarray]:
    """The same energy by hand: Σ r + λ Σ max(g, 0)² over disjoint and onCanvas."""
    c = x.reshape(n, 3)
    p, r = c[:, :2], c[:, 2]
    i, j = np.triu_indices(n, 1)
    d = p[i] - p[j]
    dist = np.sqrt((d * d).sum(1))
    g = r[i] + r[j] + PAD - dist
    v = np.maximum(g, 0.0)
    grad = np.zeros_like(c)
    coef = 2 * WEIGHT * v
    unit = d / np.maximum(dist, 1e-300)[:, None]
    np.add.at(grad[:, 2], i, coef)
    np.add.at(grad[:, 2], j, coef)
    np.add.at(grad[:, :2], i, -coef[:, None] * unit)
    np.add.at(grad[:, :2], j, coef[:, None] * unit)
    half = np.array(CANVAS) / 2
    total = float(r.sum() + WEIGHT * (v * v).sum())
    grad[:, 2] += 1.0
    for axis in range(2):
        for sign in (1.0, -1.0):
            h = sign * p[:, axis] + r - half[axis]  # the circle's extent past the canvas edge
            hv = np.maximum(h, 0.0)
            total += WEIGHT * float((hv * hv).sum())
            grad[:, axis] += 2 * WEIGHT * hv * sign
            grad[:, 2] += 2 * WEIGHT * hv
    return total, grad.ravel()


def timed(f, repeat: int) -> float:
    samples = []
    for _ in range(max(3, repeat // 20)):
        t = time.perf_counter()
        for _ in range(20):
            f()
        samples.append((time.perf_counter() - t) / 20)
    return statistics.median(samples) * 1e6


def jax_runner(n: int):
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    i, j = np.triu_indices(n, 1)

    def energy(x):
        c = x.reshape(n, 3)
        p, r = c[:, :2], c[:, 2]
        d = p[i] - p[j]
        g = r[i] + r[j] + PAD - jnp.sqrt((d * d).sum(1))
        half = jnp.array(CANVAS) / 2
        edges = jnp.concatenate([p + r[:, None] - half, -p + r[:, None] - half], axis=1)
        return r.sum() + WEIGHT * ((jnp.maximum(g, 0) ** 2).sum() + (jnp.maximum(edges, 0) ** 2).sum())

    t = time.perf_counter()
    vg = jax.jit(jax.value_and_grad(energy))
    return vg, time.perf_counter() - t


def autograd_runner(n: int):
    try:
        import autograd.numpy as anp
        from autograd import value_and_grad
    except ImportError:
        return None
    i, j = np.triu_indices(n, 1)

    def energy(x):
        c = anp.reshape(x, (n, 3))
        p, r = c[:, :2], c[:, 2]
        d = p[i] - p[j]
        g = r[i] + r[j] + PAD - anp.sqrt(anp.sum(d * d, axis=1))
        half = np.array(CANVAS) / 2
        edges = anp.concatenate([p + r[:, None] - half, -p + r[:, None] - half], axis=1)
        return anp.sum(r) + WEIGHT * (anp.sum(anp.maximum(g, 0) ** 2) + anp.sum(anp.maximum(edges, 0) ** 2))

    return value_and_grad(energy)


def casadi_runner(n: int):
    """CasADi SX expression of the energy and its gradient, evaluated by its virtual machine."""
    try:
        import casadi as ca
    except ImportError:
        return None
    x = ca.SX.sym("x", 3 * n)
    terms = [x[3 * k + 2] for k in range(n)]
    for a in range(n):
        for b in range(a + 1, n):
            dx, dy = x[3 * a] - x[3 * b], x[3 * a + 1] - x[3 * b + 1]
            g = x[3 * a + 2] + x[3 * b + 2] + PAD - ca.sqrt(dx * dx + dy * dy)
            terms.append(WEIGHT * ca.fmax(g, 0) ** 2)
    half = [CANVAS[0] / 2, CANVAS[1] / 2]
    for k in range(n):
        for axis in range(2):
            for sign in (1.0, -1.0):
                terms.append(WEIGHT * ca.fmax(sign * x[3 * k + axis] + x[3 * k + 2] - half[axis], 0) ** 2)
    e = ca.sum1(ca.vertcat(*terms))
    f = ca.Function("f", [x], [e, ca.gradient(e, x)])
    return lambda v: f(v)


def rose_run(x: np.ndarray, n: int, repeat: int) -> dict | None:
    """Rose's row from rose_circles.mjs (a fresh Node process), {"error": ...} when it fails, or None
    when node or Rose is not installed."""
    node = shutil.which("node")
    if node is None or not ROSE_PACKAGE.is_dir():
        return None
    job = {"n": n, "x": x.tolist(), "canvas": CANVAS, "weight": WEIGHT, "pad": PAD, "repeat": repeat}
    try:
        done = subprocess.run(
            [node, str(ROSE_SCRIPT)],
            input=json.dumps(job),
            capture_output=True,
            text=True,
            timeout=ROSE_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {ROSE_TIMEOUT_S} s"}
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        said = done.stderr.strip().splitlines() or [f"exit code {done.returncode}"]
        return {"error": next((line for line in reversed(said) if "error" in line.lower()), said[-1])}
    return json.loads(lines[-1])


def short_reason(error: str) -> str:
    """'CompileError: WebAssembly.compile(): ... failed: local count too large @+2757274' ->
    'CompileError: local count too large'."""
    kind, _, rest = error.partition(": ")
    last = re.sub(r"\s*@\+\d+$", "", rest.rsplit(": ", 1)[-1]) if rest else ""
    return f"{kind}: {last}" if last else kind


def rose_cells(x: np.ndarray, n: int, repeat: int, e_np: float, g_np: np.ndarray) -> tuple[str, str]:
    """The Rose µs and build cells, its energy and gradient checked against numpy's."""
    row = rose_run(x, n, repeat)
    if row is None:
        return "n/a", "n/a"
    if "error" in row:
        spent = f" after {row['ms']:.0f} ms" if "ms" in row else ""
        return f"fails: {short_reason(row['error'])}", f"fails{spent}"
    assert abs(row["energy"] - e_np) <= 1e-9 * max(1.0, abs(e_np)), (row["energy"], e_np)
    if "grad" in row:
        assert np.allclose(row["grad"], g_np, rtol=1e-8, atol=1e-6)
    else:  # large n: only checksums come back
        assert np.isclose(row["grad_sum"], g_np.sum(), rtol=1e-8, atol=1e-6 * g_np.size)
        assert np.isclose(row["grad_abs_sum"], np.abs(g_np).sum(), rtol=1e-8, atol=1e-6 * g_np.size)
    build = f"{row['build_ms']:.0f} ({row['fn_ms']:.0f} + {row['compile_ms']:.0f})"
    return f"{row['us']:.0f} ({row['cold_us']:.0f})", build


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10, 50, 200, 1000])
    ap.add_argument("--repeat", type=int, default=200)
    args = ap.parse_args(argv)
    print(
        "| n | pairs | ours µs | numpy µs | ours/numpy | autograd µs | CasADi µs | JAX µs "
        "| Rose µs (first calls) | build ours ms (tables + compile) | the same from goal objects "
        "| build CasADi ms | build JAX ms | build Rose ms (fns + vjp, compile) | wasm bytes | kinds |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    compile_problem(diagram(3), cache=None)  # once per process: imports, libm, first-use tracing
    for n in args.sizes:
        d = diagram(n, tables=False)
        gc.collect()  # garbage left by the previous size's peers is not this build's cost
        _, tables, compile_ms = build(d)
        from_objects = f"{tables + compile_ms:.0f} ({tables:.0f} + {compile_ms:.0f})"
        del d, _
        d = diagram(n)
        gc.collect()
        p, tables, compile_ms = build(d)
        from_tables = f"{tables + compile_ms:.0f} ({tables:.0f} + {compile_ms:.0f})"
        x = np.array(d.unknowns.x0)
        e_ours, g_ours = p.energy_and_grad(x, 0, WEIGHT)
        e_np, g_np = numpy_energy(x, n)
        assert abs(e_ours - e_np) <= 1e-9 * max(1.0, abs(e_np)), (e_ours, e_np)
        assert np.allclose(g_ours, g_np, rtol=1e-8, atol=1e-6)
        repeat = args.repeat if n <= 200 else max(10, args.repeat // 20)
        ours = timed(lambda p=p, x=x: p.energy_and_grad(x, 0, WEIGHT), repeat)
        base = timed(lambda x=x, n=n: numpy_energy(x, n), repeat)
        ag_cell = ca_cell = build_ca = "n/a"
        ag = autograd_runner(n)
        if ag is not None and n <= 200:
            assert abs(float(ag(x)[0]) - e_np) <= 1e-9 * max(1.0, abs(e_np))
            ag_cell = f"{timed(lambda ag=ag, x=x: ag(x), max(10, repeat // 10)):.0f}"
        if n <= 200:
            t = time.perf_counter()
            ca_f = casadi_runner(n)
            if ca_f is not None:
                build_ca = f"{(time.perf_counter() - t) * 1e3:.0f}"
                assert abs(float(ca_f(x)[0]) - e_np) <= 1e-9 * max(1.0, abs(e_np))
                ca_cell = f"{timed(lambda ca_f=ca_f, x=x: ca_f(x), repeat):.0f}"
        jax_cell = build_jax = "n/a"
        jr = jax_runner(n)
        if jr is not None:
            vg, _ = jr
            t = time.perf_counter()
            vg(x)[1].block_until_ready()
            build_jax = f"{(time.perf_counter() - t) * 1e3:.0f}"
            jax_cell = f"{timed(lambda vg=vg, x=x: vg(x)[1].block_until_ready(), repeat):.0f}"
        rose_cell, build_rose = rose_cells(x, n, repeat, e_np, g_np)
        print(
            f"| {n} | {n * (n - 1) // 2} | {ours:.0f} | {base:.0f} | {ours / base:.2f} | {ag_cell} "
            f"| {ca_cell} | {jax_cell} | {rose_cell} | {from_tables} | {from_objects} | {build_ca} "
            f"| {build_jax} | {build_rose} | {p.vg.wasm_bytes} | {len(p.kinds)} |"
        )


if __name__ == "__main__":
    main()
