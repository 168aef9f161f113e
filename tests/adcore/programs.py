"""Random differentiable programs for property-based tests, as plain data interpreted at trace time.

A program is a list of steps over a growing list of values (starting with the inputs); each step
applies one operation to earlier values. The same program is traced into adcore and also evaluated
with Python floats, which gives an independent oracle for values and finite differences.
"""

from __future__ import annotations

import math
from typing import Any

from hypothesis import strategies as st

import adcore
from adcore import Dual, Real, Vec, fn
from adcore import math as am


def _opaque_erf() -> adcore.Fn:
    """erf as an opaque function with a Python implementation, whose custom JVP calls another opaque
    function (its derivative, with a JVP of its own, so Hessians go through host calls too)."""
    scale = 2.0 / math.sqrt(math.pi)
    d_erf = adcore.opaque([Real], Real, lambda x: scale * math.exp(-x * x), name="d_erf")
    d_erf.jvp = fn(
        [Dual], Dual, lambda d: {"re": d_erf(d["re"]), "du": d["du"] * -2.0 * d["re"] * d_erf(d["re"])}
    )
    erf = adcore.opaque([Real], Real, math.erf, name="erf")
    erf.jvp = fn([Dual], Dual, lambda d: {"re": erf(d["re"]), "du": d["du"] * d_erf(d["re"])})
    return erf


# name -> (arity, adcore builder, float oracle); every op is smooth on the whole real line so that
# finite differences are meaningful at random points.
OPS: dict[str, tuple[int, Any, Any]] = {
    "add": (2, lambda a, b: a + b, lambda a, b: a + b),
    "sub": (2, lambda a, b: a - b, lambda a, b: a - b),
    "mul": (2, lambda a, b: a * b, lambda a, b: a * b),
    "div": (2, lambda a, b: a / (1.0 + b * b), lambda a, b: a / (1.0 + b * b)),
    "neg": (1, lambda a: -a, lambda a: -a),
    "sin": (1, am.sin, math.sin),
    "cos": (1, am.cos, math.cos),
    "tanh": (1, am.tanh, math.tanh),
    "exps": (1, lambda a: am.exp(am.sin(a)), lambda a: math.exp(math.sin(a))),
    "soft": (1, lambda a: am.sqrt(a * a + 1.0), lambda a: math.sqrt(a * a + 1.0)),
    "atan": (1, am.atan, math.atan),
    "sq": (1, lambda a: a**2, lambda a: a**2),
    "logp": (1, lambda a: am.log(a * a + 1.0), lambda a: math.log(a * a + 1.0)),
    "erf": (1, _opaque_erf(), math.erf),  # a host call in compiled code
}

N_INPUTS = 3


@st.composite
def programs(draw: Any, max_steps: int = 8) -> list[tuple[str, tuple[int, ...]]]:
    steps = []
    n_values = N_INPUTS
    for _ in range(draw(st.integers(1, max_steps))):
        name = draw(st.sampled_from(sorted(OPS)))
        arity = OPS[name][0]
        args = tuple(draw(st.integers(0, n_values - 1)) for _ in range(arity))
        steps.append((name, args))
        n_values += 1
    return steps


def run(program: list[tuple[str, tuple[int, ...]]], inputs: list[Any], which: int) -> list[Any]:
    values = list(inputs)
    for name, args in program:
        values.append(OPS[name][which](*(values[a] for a in args)))
    return values


def as_vector_fn(program: list[tuple[str, tuple[int, ...]]]) -> adcore.Fn:
    """R^3 -> R^2: the last value and the sum of all values (sums exercise fan-out)."""

    def body(x: Any) -> list[Any]:
        values = run(program, [x[0], x[1], x[2]], 1)
        return [values[-1], adcore.sum(values)]

    return fn([Vec(N_INPUTS, Real)], Vec(2, Real), body)


def oracle(program: list[tuple[str, tuple[int, ...]]], x: list[float]) -> list[float]:
    values = run(program, list(x), 2)
    return [values[-1], sum(values)]
