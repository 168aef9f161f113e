"""The energy as adcore functions: one function per goal kind, looped over its table.

    energy(x, weight, tables...) = Σ objectives + weight · Σ max(constraint, 0)²

Each kind contributes `sum over rows r of active[r] · term(kind_fn(x[rows_in[r]], rows_c[r]))`, so
the code has one loop and one call per kind, whatever the number of goals. The gradient with
respect to x is `vjp` of this function: the gathers x[rows_in[r][j]] transpose into scatter-adds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import adcore
from adcore import Int, Real, Vec, fn, vjp
from adcore import math as am

from ..expr import SlotReader, replay
from .kinds import GoalKind, props_of, rebuild_shape

Library = dict[str, Callable[..., Any]]


def library_for(kind: GoalKind) -> Callable[..., Any]:
    from ..library import CONSTRAINTS, OBJECTIVES

    table = CONSTRAINTS if kind.goal == "constraint" else OBJECTIVES
    return table[kind.name]


def kind_function(kind: GoalKind, index: int) -> adcore.Fn:
    """kind(inputs, consts) -> the goal's value, for any row of the kind's table."""
    impl = library_for(kind)
    args = kind.representative.args

    def body(inputs: Any, consts: Any) -> Any:
        ins, cs = SlotReader(inputs), SlotReader(consts)
        # one replay per argument: signatures are per argument (see kinds.group_goals)
        return impl(*[replay(a, ins, cs, rebuild_shape, props_of) for a in args])

    return fn([Vec(kind.n_inputs, Real), Vec(kind.n_consts, Real)], Real, body, name=f"{kind.name}_{index}")


def table_types(kind: GoalKind) -> list[Any]:
    r = kind.n_rows
    return [Vec(r, Vec(kind.n_inputs, Int)), Vec(r, Vec(kind.n_consts, Real)), Vec(r, Real)]


def _gather(x: Any, rows: Any, r: Any, m: int) -> Any:
    return adcore.vec(m, Real, lambda j: x[rows[r][j]])


def energy_function(kinds: Sequence[GoalKind], kind_fns: Sequence[adcore.Fn], n: int) -> adcore.Fn:
    """{"energy": the penalized energy, "values": every goal's raw value, one array per kind}.

    The values come out of the same pass (one store per goal), so reporting goals needs no second
    compiled function."""
    params = [Vec(n, Real), Real] + [t for k in kinds for t in table_types(k)]
    ret = {"energy": Real, "values": {f"k{k}": Vec(kind.n_rows, Real) for k, kind in enumerate(kinds)}}

    def body(x: Any, weight: Any, *tables: Any) -> dict[str, Any]:
        objective: Any = 0.0
        penalty: Any = 0.0
        values = {}
        for k, (kind, kf) in enumerate(zip(kinds, kind_fns)):
            rows, consts, active = tables[3 * k : 3 * k + 3]
            vals = adcore.vec(
                kind.n_rows,
                Real,
                lambda r, kind=kind, kf=kf, rows=rows, consts=consts: kf(
                    _gather(x, rows, r, kind.n_inputs), consts[r]
                ),
            )
            values[f"k{k}"] = vals

            def term(r: Any, kind: GoalKind = kind, vals: Any = vals, active: Any = active) -> Any:
                v = vals[r]
                return active[r] * (v if kind.goal == "objective" else am.max(v, 0.0) ** 2)

            total = adcore.sum(kind.n_rows, term)
            if kind.goal == "objective":
                objective = objective + total
            else:
                penalty = penalty + total
        return {"energy": objective + weight * penalty, "values": values}

    return fn(params, ret, body, name="energy")


def value_and_grad(energy: adcore.Fn) -> adcore.Fn:
    """energy, its gradient with respect to x, and the goal values."""
    n = energy.params[0]
    values_type = dict(energy.ret.fields)["values"]

    def body(*ps: Any) -> dict[str, Any]:
        r = vjp(energy, wrt=[0])(*ps)
        no_cotangent = {k: adcore.vec(t.n, Real, lambda i: 0.0) for k, t in values_type.fields}
        grad = r.grad({"energy": 1.0, "values": no_cotangent})[0]
        return {"energy": r.ret["energy"], "grad": grad, "values": r.ret["values"]}

    return fn(energy.params, {"energy": Real, "grad": n, "values": values_type}, body, name="energy_and_grad")


def goal_gradients_function(kinds: Sequence[GoalKind], kind_fns: Sequence[adcore.Fn], n: int) -> adcore.Fn:
    """Each goal's gradient with respect to its own inputs (one row per goal), to find a NaN's source."""
    params = [Vec(n, Real), Real] + [t for k in kinds for t in table_types(k)]
    ret = {f"k{k}": Vec(kind.n_rows, Vec(kind.n_inputs, Real)) for k, kind in enumerate(kinds)}

    def body(x: Any, weight: Any, *tables: Any) -> dict[str, Any]:
        out = {}
        for k, (kind, kf) in enumerate(zip(kinds, kind_fns)):
            rows, consts = tables[3 * k], tables[3 * k + 1]

            def row(
                r: Any, kind: GoalKind = kind, kf: adcore.Fn = kf, rows: Any = rows, consts: Any = consts
            ) -> Any:
                return vjp(kf, wrt=[0])(_gather(x, rows, r, kind.n_inputs), consts[r]).grad(1.0)[0]

            out[f"k{k}"] = adcore.vec(kind.n_rows, Vec(kind.n_inputs, Real), row)
        return out

    return fn(params, ret, body, name="goal_gradients")
