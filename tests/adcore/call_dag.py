"""Call DAGs whose unrolling is exponential, and their derivatives: shared by the test of compiled
size and values (tests/adcore/test_call_dag.py) and the benchmark of compiled size and time
(benchmarks/adcore_call_dag.py).

    dag(depth) -> h_depth: h_0(x, y) = sin x + cos y; h_{k+1}(x, y) = (h_k(x/2 + y, y - x/4) + h_k(y, x)) / 2
    forward(h) -> [h, dh/dx] by forward mode;  gradient(h) -> [h, dh/dx, dh/dy] by reverse mode
    hessian(h) -> the Hessian of h, reverse over reverse
"""

from __future__ import annotations

import adcore
from adcore import Real, Vec, fn, jvp, vjp
from adcore import math as am


def dag(depth: int) -> adcore.Fn:
    """Level k+1 calls level k twice with different arguments, so nothing can merge the two calls."""
    h = fn([Real, Real], Real, lambda x, y: am.sin(x) + am.cos(y), name="h0")
    for k in range(depth):
        h = fn(
            [Real, Real], Real, lambda x, y, p=h: (p(x / 2 + y, y - x / 4) + p(y, x)) / 2, name=f"h{k + 1}"
        )
    return h


def forward(h: adcore.Fn) -> adcore.Fn:
    dh = jvp(h)

    def value_and_dx(x: object, y: object) -> list[object]:
        d = dh({"re": x, "du": 1.0}, {"re": y, "du": 0.0})
        return [d["re"], d["du"]]

    return fn([Real, Real], Vec(2, Real), value_and_dx)


def gradient(h: adcore.Fn) -> adcore.Fn:
    return fn([Real, Real], Vec(3, Real), lambda x, y: (lambda r: [r.ret, *r.grad(1.0)])(vjp(h)(x, y)))


def hessian(h: adcore.Fn) -> adcore.Fn:
    g = fn([Real, Real], Vec(2, Real), lambda x, y: list(vjp(h)(x, y).grad(1.0)))

    def rows(x: object, y: object) -> list[list[object]]:
        r = vjp(g)(x, y)
        return [list(r.grad([1.0, 0.0])), list(r.grad([0.0, 1.0]))]

    return fn([Real, Real], Vec(2, Vec(2, Real)), rows)
