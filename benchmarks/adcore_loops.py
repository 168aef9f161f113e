"""adcore's loops (fold, scan, reduce, segment_sum, sum and vec loops) against JAX and numpy, in one run.

For each workload: adcore's module size and build time (trace, transformations, code generation) and
wasmtime's optimizing compile time, then the time of one call of the value, the gradient (reverse
mode) and a directional derivative (forward mode), each the best of `--repeat` rounds; the ratios
gradient/value and JVP/value; and the same with JAX (jit, `lax.fori_loop`, `lax.scan`,
`jax.ops.segment_sum`, the `bench` extra) and numpy (value only) where they apply. Every gradient is
checked against JAX's (or a closed form) before it is timed.

Workloads: Futhark's loop benchmark (100,000 steps of a branchy state update: an oscillator whose
adjoint stays of order one, and a contracting map whose adjoint underflows into subnormal numbers),
the dual-numbers paper's matrix product, dot product and one element of a self-convolution, the
maximum of 10,000 values, prefix sums of 2,000 values, and 5,000 values summed into 1,000 segments.

    python benchmarks/adcore_loops.py [--repeat 15] [--only NAME] [--clock cpu|wall]
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import adcore
from adcore import Int, Real, Vec, fn, fold, jvp, reduce, scan, segment_sum, select, vec, vjp
from adcore import math as am
from adcore.convert import argument_leaves
from adcore.wasm.codegen import build_module

try:  # the `bench` extra
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
except ImportError:  # pragma: no cover - reported in the table
    jax = None  # type: ignore[assignment]


@dataclass
class Workload:
    name: str
    value: adcore.Fn  # params -> Real
    args: list[Any]
    wrt: int = 0  # the parameter differentiated
    jax_value: Callable[..., Any] | None = None  # the same function on jax arrays
    numpy_value: Callable[[], Any] | None = None


CLOCK = time.process_time  # CPU time of the process (JAX's threads included): a shared machine's load
# delays a call without adding to it; `--clock wall` for wall time


def best(calls: dict[str, Callable[[], Any]], repeat: int) -> dict[str, float]:
    """Each call's best time over `repeat` rounds; a round times every call once (each long enough
    to time), so that the ratios between them see the same load of a shared machine."""
    inner = {}
    for label, call in calls.items():
        start = CLOCK()
        call()
        inner[label] = max(1, min(1000, int(0.02 / max(CLOCK() - start, 1e-6))))
    found = dict.fromkeys(calls, math.inf)
    for _ in range(repeat):
        for label, call in calls.items():
            start = CLOCK()
            for _ in range(inner[label]):
                call()
            found[label] = min(found[label], (CLOCK() - start) / inner[label])
    return found


# -- workloads --------------------------------------------------------------------------------------

STEPS = 100_000
H = 1e-3


def oscillator_step(c: dict[str, Any], p: Any, i: Any) -> dict[str, Any]:
    """A piecewise-stiff damped oscillator, one explicit Euler step: branchy, its adjoint of order 1."""
    x, v = c["x"], c["v"]
    force = select(x > 0.0, -p[0] * x, -p[1] * x * (1.0 + 0.1 * x * x))
    return {"x": x + H * v, "v": v + H * (force - p[2] * v)}


def contracting_step(c: dict[str, Any], p: Any, i: Any) -> dict[str, Any]:
    """A contracting branchy map: the adjoint shrinks by about 0.6 a step, into subnormal numbers."""
    x, y = c["x"], c["y"]
    t = p[0] * x - p[1] * y + p[2] * (adcore.to_real(i % 7) - 3.0) * 0.01
    nx = select(t > 0.0, 0.5 * t + 0.3 * y, 0.25 * t - 0.2 * y)
    return {"x": nx, "y": 0.6 * y + 0.1 * am.sqrt(nx * nx + 1.0)}


def loop_workload(name: str, step: Callable[..., Any], init: dict[str, float], p: list[float]) -> Workload:
    keys = list(init)
    f = fn(
        [Vec(3, Real)],
        Real,
        lambda p: (lambda c: c[keys[0]] + c[keys[1]])(fold(STEPS, dict(init), lambda c, i: step(c, p, i))),
        name=name,
    )
    jax_value = None
    if jax is not None:

        def jax_value(p: Any) -> Any:
            def body(i: Any, c: tuple[Any, Any]) -> tuple[Any, Any]:
                if step is oscillator_step:
                    x, v = c
                    force = jnp.where(x > 0.0, -p[0] * x, -p[1] * x * (1.0 + 0.1 * x * x))
                    return x + H * v, v + H * (force - p[2] * v)
                x, y = c
                t = p[0] * x - p[1] * y + p[2] * ((i % 7) - 3.0) * 0.01
                nx = jnp.where(t > 0.0, 0.5 * t + 0.3 * y, 0.25 * t - 0.2 * y)
                return nx, 0.6 * y + 0.1 * jnp.sqrt(nx * nx + 1.0)

            a, b = jax.lax.fori_loop(0, STEPS, body, (init[keys[0]], init[keys[1]]))
            return a + b

    return Workload(name, f, [p], jax_value=jax_value)


def matmul_workload(n: int = 60) -> Workload:
    """sum((A B) * W) as sum and vec loops, differentiated with respect to A (and B)."""
    rng = np.random.default_rng(1)
    a, b, w = (rng.normal(size=(n, n)) for _ in range(3))
    mat = Vec(n, Vec(n, Real))

    def body(a: Any, b: Any, w: Any) -> Any:
        c = vec(n, Vec(n, Real), lambda i: vec(n, Real, lambda j: adcore.sum(n, lambda k: a[i][k] * b[k][j])))
        return adcore.sum(n, lambda i: adcore.sum(n, lambda j: c[i][j] * w[i][j]))

    f = fn([mat, mat, mat], Real, body, name="matmul")
    return Workload(
        f"matrix product {n}x{n}",
        f,
        [a.tolist(), b.tolist(), w.tolist()],
        jax_value=(lambda a, b, w: jnp.sum((a @ b) * w)) if jax else None,
        numpy_value=lambda: float(np.sum((a @ b) * w)),
    )


def dot_workload(n: int = 100_000) -> Workload:
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=n), rng.normal(size=n)
    f = fn([Vec(n, Real), Vec(n, Real)], Real, lambda x, y: adcore.sum(n, lambda i: x[i] * y[i]), name="dot")
    return Workload(
        f"dot product {n:,}",
        f,
        [x.tolist(), y.tolist()],
        jax_value=(lambda x, y: jnp.dot(x, y)) if jax else None,
        numpy_value=lambda: float(x @ y),
    )


def convolution_workload(n: int = 10_000) -> Workload:
    """One element of a self-convolution, c_k = sum_i x_i x_{k-i}, at k = n - 1."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=n)
    k = n - 1
    f = fn([Vec(n, Real)], Real, lambda x: adcore.sum(n, lambda i: x[i] * x[k - i]), name="selfconv")
    return Workload(
        f"self-convolution element {n:,}",
        f,
        [x.tolist()],
        jax_value=(lambda x: jnp.dot(x, x[::-1])) if jax else None,
        numpy_value=lambda: float(x @ x[::-1]),  # (np.convolve would make all 2n - 1 elements)
    )


def max_workload(n: int = 10_000) -> Workload:
    rng = np.random.default_rng(4)
    x = rng.normal(size=n)
    f = fn([Vec(n, Real)], Real, lambda x: reduce(n, am.max, lambda i: x[i] * x[i]), name="max")
    return Workload(
        f"max of {n:,}",
        f,
        [x.tolist()],
        jax_value=(lambda x: jnp.max(x * x)) if jax else None,
        numpy_value=lambda: float(np.max(x * x)),
    )


def prefix_workload(n: int = 2_000) -> Workload:
    """w . prefix sums of x, the prefix sums by scan."""
    rng = np.random.default_rng(5)
    x, w = rng.normal(size=n), rng.normal(size=n)

    def body(x: Any, w: Any) -> Any:
        p = scan(n, 0.0, lambda c, i: c + x[i])
        return adcore.sum(n, lambda i: p[i] * w[i])

    f = fn([Vec(n, Real), Vec(n, Real)], Real, body, name="prefix")

    def jax_value(x: Any, w: Any) -> Any:
        _, p = jax.lax.scan(lambda c, v: (c + v, c + v), 0.0, x)
        return jnp.dot(p, w)

    return Workload(
        f"prefix sums of {n:,}",
        f,
        [x.tolist(), w.tolist()],
        jax_value=jax_value if jax else None,
        numpy_value=lambda: float(np.cumsum(x) @ w),
    )


def segment_workload(n: int = 5_000, m: int = 1_000) -> Workload:
    """w . (the squares of x summed into m segments)."""
    rng = np.random.default_rng(6)
    x, w = rng.normal(size=n), rng.normal(size=m)
    seg = rng.integers(0, m, size=n)

    def body(x: Any, s: Any, w: Any) -> Any:
        sums = segment_sum(n, m, lambda i: (s[i], x[i] * x[i]))
        return adcore.sum(m, lambda j: sums[j] * w[j])

    f = fn([Vec(n, Real), Vec(n, Int), Vec(m, Real)], Real, body, name="segments")
    return Workload(
        f"{n:,} values into {m:,} segments",
        f,
        [x.tolist(), seg.tolist(), w.tolist()],
        jax_value=(lambda x, s, w: jnp.dot(jax.ops.segment_sum(x * x, s, num_segments=m), w))
        if jax
        else None,
        numpy_value=lambda: float(np.bincount(seg, weights=x * x, minlength=m) @ w),
    )


WORKLOADS: list[Callable[[], Workload]] = [
    lambda: loop_workload(
        f"loop {STEPS:,} steps (oscillator)", oscillator_step, {"x": 1.0, "v": 0.0}, [2.0, 3.0, 0.01]
    ),
    lambda: loop_workload(
        f"loop {STEPS:,} steps (contracting)", contracting_step, {"x": 1.0, "y": 0.5}, [0.9, 0.4, 1.3]
    ),
    matmul_workload,
    dot_workload,
    convolution_workload,
    max_workload,
    prefix_workload,
    segment_workload,
]


# -- measuring -------------------------------------------------------------------------------------


def derivatives(w: Workload) -> tuple[adcore.Fn, adcore.Fn, Any]:
    """The gradient with respect to parameter `wrt`, and forward mode: f's directional derivative
    along a direction given as one more parameter (the other parameters held constant)."""
    f, k = w.value, w.wrt

    def gradient(*a: Any) -> Any:
        g = vjp(f, wrt=[k])(*a).grad(1.0)
        return g if len(f.params) == 1 else g[k]

    grad = fn(f.params, f.params[k], gradient, name=f"grad_{f.name}")
    tangent = jvp(f)

    def forward(*a: Any) -> Any:
        duals = [dual_of(a[j], a[-1] if j == k else None, t) for j, t in enumerate(f.params)]
        return tangent(*duals)["du"]

    forward_fn = fn([*f.params, f.params[k]], Real, forward, name=f"jvp_{f.name}")
    direction = np.cos(np.arange(np.size(w.args[k])) * 0.7).reshape(np.shape(w.args[k])).tolist()
    return grad, forward_fn, direction


def dual_of(x: Any, dx: Any, t: Any) -> Any:
    """x paired with its tangent dx (zero if None) as jvp's parameters take it, by loops."""
    if t == Real:
        return {"re": x, "du": 0.0 if dx is None else dx}
    if isinstance(t, adcore.VecT) and adcore.types.is_real_leaf(t):
        return vec(t.n, _dual_type(t.elem), lambda i: dual_of(x[i], None if dx is None else dx[i], t.elem))
    return x  # an Int or Bool leaf carries no tangent


def _dual_type(t: Any) -> Any:
    return adcore.Dual if t == Real else Vec(t.n, _dual_type(t.elem))


def measure(w: Workload, repeat: int) -> dict[str, Any]:
    grad, forward, direction = derivatives(w)
    row: dict[str, Any] = {"name": w.name}
    compiled = {}
    for label, f in (("value", w.value), ("grad", grad), ("jvp", forward)):
        start = time.perf_counter()
        wasm, _ = build_module(f.ir)
        built = time.perf_counter() - start
        start = time.perf_counter()
        compiled[label] = adcore.compile(f, tier="optimized", time_limit=None)
        row[f"{label} bytes"] = len(wasm)
        row[f"{label} build s"] = built
        row[f"{label} compile s"] = time.perf_counter() - start
    args = w.args
    jvp_args = [*args, direction]
    value = compiled["value"](*args)
    gradient = np.asarray(compiled["grad"](*args), dtype=float)
    directional = compiled["jvp"](*jvp_args)
    row["check"] = check(w, value, gradient, directional, direction)
    # timed as the energy calls its function: arrays written to memory once, then raw calls
    calls = {
        f"{label} s": raw_call(compiled[label], a)
        for label, a in (("value", args), ("grad", args), ("jvp", jvp_args))
    }
    if jax is not None and w.jax_value is not None:
        jargs = [jnp.asarray(a) for a in args]
        jv = jax.jit(w.jax_value)
        jg = jax.jit(jax.grad(w.jax_value, argnums=w.wrt))
        jf = jax.jit(
            lambda *a: jax.jvp(
                lambda z: w.jax_value(*a[: w.wrt], z, *a[w.wrt + 1 :]), (a[w.wrt],), (jnp.asarray(direction),)
            )[1]
        )
        for label, f in (("value", jv), ("grad", jg), ("jvp", jf)):
            start = time.perf_counter()
            jax.block_until_ready(f(*jargs))
            row[f"jax {label} compile s"] = time.perf_counter() - start
            calls[f"jax {label} s"] = lambda f=f: jax.block_until_ready(f(*jargs))
    if w.numpy_value is not None:
        calls["numpy s"] = w.numpy_value
    row.update(best(calls, repeat))
    return row


def raw_call(c: adcore.Compiled, args: list[Any]) -> Callable[[], Any]:
    """A call of c on args whose arrays are written to its memory once, here."""
    scalars = []
    for view, leaf in zip(c.inputs, argument_leaves(c.fn, args)):
        if view is None:
            scalars.append(leaf)
        else:
            view[...] = leaf
    return lambda: c.call_raw(*scalars)


def check(w: Workload, value: float, gradient: np.ndarray, directional: float, direction: Any) -> str:
    """The gradient against JAX's (or finite differences), and the JVP against gradient . direction."""
    dot = float(np.sum(gradient * np.asarray(direction)))
    ok_jvp = math.isclose(directional, dot, rel_tol=1e-9, abs_tol=1e-9)
    if jax is None or w.jax_value is None:
        return "jvp ok" if ok_jvp else f"JVP MISMATCH {directional} vs {dot}"
    jargs = [jnp.asarray(a) for a in w.args]
    want_value = float(w.jax_value(*jargs))
    want = np.asarray(jax.grad(w.jax_value, argnums=w.wrt)(*jargs))
    ok_value = math.isclose(value, want_value, rel_tol=1e-9, abs_tol=1e-12)
    ok_grad = np.allclose(gradient, want, rtol=1e-7, atol=1e-9)
    return (
        "ok" if ok_value and ok_grad and ok_jvp else f"MISMATCH value {ok_value} grad {ok_grad} jvp {ok_jvp}"
    )


def report(rows: list[dict[str, Any]]) -> str:
    def us(seconds: float | None) -> str:
        return "-" if seconds is None else f"{seconds * 1e6:,.1f}"

    def times(prefix: str, r: dict[str, Any]) -> list[str]:
        v = r.get(f"{prefix}value s")
        if v is None:
            return ["-", "-", "-"]
        g, j = r[f"{prefix}grad s"], r[f"{prefix}jvp s"]
        return [us(v), f"{us(g)} ({g / v:.1f}x)", f"{us(j)} ({j / v:.1f}x)"]

    head = [
        "workload",
        "check",
        "value µs",
        "grad µs",
        "jvp µs",
        "bytes value / grad / jvp",
        "grad build + compile s",
        "JAX value µs",
        "JAX grad µs",
        "JAX jvp µs",
        "JAX grad compile s",
        "numpy µs",
    ]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        sizes = f"{r['value bytes']:,} / {r['grad bytes']:,} / {r['jvp bytes']:,}"
        jax_compile = r.get("jax grad compile s")
        cells = [
            r["name"],
            r["check"],
            *times("", r),
            sizes,
            f"{r['grad build s'] + r['grad compile s']:.2f}",
        ]
        cells += [
            *times("jax ", r),
            "-" if jax_compile is None else f"{jax_compile:.2f}",
            us(r.get("numpy s")),
        ]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--only", default="", help="run the workloads whose name contains this")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    args = parser.parse_args()
    global CLOCK
    CLOCK = time.process_time if args.clock == "cpu" else time.perf_counter
    rows = []
    for make in WORKLOADS:
        w = make()
        if args.only and args.only not in w.name:
            continue
        rows.append(measure(w, args.repeat))
        print(f"{w.name}: done", flush=True)
    print(report(rows))


if __name__ == "__main__":
    main()
