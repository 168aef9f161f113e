"""What a call from Wasm to an opaque function's Python implementation (a host call) costs.

One compiled function sums f(x_i) over an array of n values, with f:
- `am.sin`: adcore.math's sine, whose Wasm body is linked into the module (no host call);
- an opaque function whose implementation is Python's `math.sin` (one host call per element);
- the same with an array argument and result (the host reads and writes linear memory);
and value + gradient of the host-call version through its custom JVP (two host calls per element:
the value in the forward pass, and the derivative, itself opaque, in the backward pass). Per-element
times are CPU times, the best of `--repeat` calls; the host-call overhead is their difference to `am.sin`.

    python benchmarks/adcore_host_calls.py [--n 10000] [--repeat 20]
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from typing import Any

import adcore
from adcore import Dual, Real, Vec, fn, opaque, vjp
from adcore import math as am


def best_seconds(run: Callable[[], Any], repeat: int) -> float:
    run()
    times = []
    for _ in range(repeat):
        t0 = time.process_time()
        run()
        times.append(time.process_time() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    n = args.n
    py_cos = opaque([Real], Real, math.cos, name="py_cos")
    py_sin = opaque([Real], Real, math.sin, name="py_sin")
    py_sin.jvp = fn([Dual], Dual, lambda d: {"re": py_sin(d["re"]), "du": d["du"] * py_cos(d["re"])})
    py_rot = opaque([Vec(2, Real)], Vec(2, Real), lambda v: [-v[1], v[0]], name="py_rot")
    xs = [0.001 * k for k in range(n)]

    def summed(f: Callable[[Any], Any]) -> adcore.Fn:
        return fn([Vec(n, Real)], Real, lambda v: adcore.sum(n, lambda i: f(v[i])))

    wasm_sum = summed(am.sin)
    host_sum = summed(py_sin)
    rot_sum = fn([Vec(n, Real)], Real, lambda v: adcore.sum(n, lambda i: py_rot([v[i], 1.0])[0]))
    value_and_grad = {"value": Real, "grad": Vec(n, Real)}
    host_grad = fn(
        [Vec(n, Real)],
        value_and_grad,
        lambda v: (lambda r: {"value": r.ret, "grad": r.grad(1.0)})(vjp(host_sum)(v)),
    )
    rows = []
    for name, f, calls in (
        ("am.sin (Wasm body)", wasm_sum, 0),
        ("opaque math.sin (host call)", host_sum, 1),
        ("opaque Vec2 -> Vec2 (host call, memory)", rot_sum, 1),
        ("value + gradient of opaque math.sin (custom JVP)", host_grad, 2),
    ):
        c = adcore.compile(f)
        assert c(xs) == adcore.interp(f)(xs)  # the same Python implementation on the same values
        rows.append((name, calls, best_seconds(lambda c=c: c(xs), args.repeat) / n * 1e6))
    base = rows[0][2]
    print(f"n = {n}, best of {args.repeat}")
    print("| function | host calls per element | µs per element | µs per host call |")
    print("|---|---|---|---|")
    for name, calls, us in rows:
        per_call = f"{(us - base) / calls:.2f}" if calls else ""
        print(f"| {name} | {calls} | {us:.3f} | {per_call} |")


if __name__ == "__main__":
    main()
