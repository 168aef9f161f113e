"""The energy as adcore functions: one function per goal kind, looped over its table.

    energy(x, weight, c_obj, c_pen, tables...) = Σ objectives + c_obj + weight · (Σ max(c, 0)² + c_pen)

Each kind contributes `sum over i < count of term(kind_fn(columns of row rows[i]))`: the rows
taking part (`rows`, `count`: those of the current stage, less those culled, `culling`) are a list
whose length is a run-time count, so the same compiled code serves every stage and active set.
Column c of row r is (x[slots_c[o]], consts_c[o]) for its object o = obj_c[r]
(`kinds.KindColumn`), so the code has one loop and one call per kind, whatever the number of
goals. `c_obj` and `c_pen` are what the culled goals contribute (constant where they are culled).
The gradient with respect to x is `vjp` of this function: the gathers x[slots_c[o][j]] transpose
into scatter-adds; the compiled function also answers φ alone (`value_and_grad`). A column without
inputs or constants (a string argument) has no tables.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import adcore
from adcore import Int, Real, Vec, fn, vjp
from adcore import math as am

from ..expr import SlotReader
from .kinds import GoalKind, KindColumn

Library = dict[str, Callable[..., Any]]

# The parameters before the tables, shared by every function over the goal tables so that one writer
# fills their tables: x, the constraint weight, the culled goals' objective and penalty constants,
# and the mode (`energy_and_grad`'s; the others ignore the scalars they do not use).
LEADING = ("x", "weight", "c_obj", "c_pen", "grad")
GRADIENT, VALUE_ONLY = 1, 0  # the mode: φ with its gradient and the goal values, or φ alone


def library_for(kind: GoalKind) -> Callable[..., Any]:
    from ..library import CONSTRAINTS, OBJECTIVES

    table = CONSTRAINTS if kind.goal == "constraint" else OBJECTIVES
    return table[kind.name]


def kind_function(kind: GoalKind, index: int) -> adcore.Fn:
    """kind(inputs_0, consts_0, inputs_1, consts_1, ...) -> the goal's value, for any row of the
    kind's table: each used column's inputs (entries of x) and constants (`kinds.KindColumn`)."""
    impl = library_for(kind)
    params = [Vec(n, Real) for c in _used(kind) for n in (c.width, c.n_consts)]

    def body(*vectors: Any) -> Any:
        pairs = iter(zip(vectors[0::2], vectors[1::2]))
        columns: list[tuple[SlotReader, SlotReader]] = []
        for c in kind.columns:
            ins, cs = next(pairs) if _has_tables(c) else ([], [])
            columns.append((SlotReader(ins), SlotReader(cs)))
        return impl(*kind.arguments(columns))

    return fn(params, Real, body, name=f"{kind.name}_{index}")


def _has_tables(c: KindColumn) -> bool:
    return bool(c.width or c.n_consts)


def _used(kind: GoalKind) -> list[KindColumn]:
    """The columns that have tables: those reading inputs or constants."""
    return [c for c in kind.columns if _has_tables(c)]


def table_types(kind: GoalKind) -> list[Any]:
    """Per used column: object of each row, slots and constants of each object; then the rows
    taking part and their count."""
    r = kind.n_rows
    types = []
    for c in _used(kind):
        types += [Vec(r, Int), Vec(c.n_objects, Vec(c.width, Int)), Vec(c.n_objects, Vec(c.n_consts, Real))]
    return [*types, Vec(r, Int), Int]


def table_arrays(kind: GoalKind) -> list[Any]:
    """The arrays written into the tables `table_types` describes (the row list left out)."""
    return [a for c in _used(kind) for a in (c.obj, c.slots, c.consts)]


def _row_arguments(x: Any, kind: GoalKind, tables: Sequence[Any], r: Any) -> list[Any]:
    """The kind function's arguments for row r: each column's gathered inputs and constants."""
    out: list[Any] = []
    for c, obj, slots, consts in zip(_used(kind), tables[0::3], tables[1::3], tables[2::3]):
        o = obj[r]

        def gather(j: Any, slots: Any = slots, o: Any = o) -> Any:
            return x[slots[o][j]]

        out += [adcore.vec(c.width, Real, gather), consts[o]]
    return out


def energy_function(kinds: Sequence[GoalKind], kind_fns: Sequence[adcore.Fn], n: int) -> adcore.Fn:
    """{"energy": the penalized energy, "values": each listed goal's raw value, one array per kind
    (entry i is row rows[i]'s)}.

    The values come out of the same pass (one store per goal), so reporting goals needs no second
    compiled function."""
    params = [Vec(n, Real), Real, Real, Real] + [t for k in kinds for t in table_types(k)]
    ret = {"energy": Real, "values": {f"k{k}": Vec(kind.n_rows, Real) for k, kind in enumerate(kinds)}}
    starts = table_offsets(kinds)

    def body(x: Any, weight: Any, c_obj: Any, c_pen: Any, *tables: Any) -> dict[str, Any]:
        objective: Any = 0.0
        penalty: Any = 0.0
        values = {}
        for k, (kind, kf) in enumerate(zip(kinds, kind_fns)):
            own = tables[starts[k] : starts[k + 1]]
            columns, rows, count = own[:-2], own[-2], own[-1]

            def value(
                i: Any, kind: GoalKind = kind, kf: Any = kf, cols: Any = columns, rows: Any = rows
            ) -> Any:
                return kf(*_row_arguments(x, kind, cols, rows[i]))

            vals = adcore.vec(kind.n_rows, Real, value, count=count)
            values[f"k{k}"] = vals

            def term(i: Any, kind: GoalKind = kind, vals: Any = vals) -> Any:
                v = vals[i]
                return v if kind.goal == "objective" else am.max(v, 0.0) ** 2

            total = adcore.sum(kind.n_rows, term, count=count)
            if kind.goal == "objective":
                objective = objective + total
            else:
                penalty = penalty + total
        return {"energy": objective + c_obj + weight * (penalty + c_pen), "values": values}

    return fn(params, ret, body, name="energy")


def value_and_grad(energy: adcore.Fn, kinds: Sequence[GoalKind], *, value_only: bool) -> adcore.Fn:
    """energy_and_grad(x, weight, c_obj, c_pen, grad, tables...): with grad = GRADIENT the energy,
    its gradient with respect to x and the goal values; with VALUE_ONLY (if `value_only`; without
    it the mode is ignored) the energy alone, by the energy's own loops, which compute no derivative
    (at a fraction of the cost, measured in docs/scaling.md, for the line-search trials likely to
    fail).

    One function serves both modes so that they read the same tables in one memory: `grad` scales
    every kind's row count, so the loops of the other mode run zero times. Either mode gives the same
    number (the same terms summed in the same order; tests check it bit for bit). The goal values'
    cotangent is structurally zero (`None`): a zero array would cost a pass over every kind's whole
    table at every evaluation, whatever the rows listed (docs/scaling.md measures it)."""
    n = energy.params[0]
    assert isinstance(energy.ret, adcore.StructT)  # energy_function's {"energy", "values"}
    values_type = dict(energy.ret.fields)["values"]
    counts = [end - 1 for end in table_offsets(kinds)[1:]]  # each kind's count among the tables
    params = [*energy.params[:4], Int, *energy.params[4:]]  # LEADING

    def body(x: Any, weight: Any, c_obj: Any, c_pen: Any, grad: Any, *tables: Any) -> dict[str, Any]:
        full, alone = list(tables), list(tables)
        if value_only:
            for c in counts:
                full[c] = tables[c] * grad
                alone[c] = tables[c] - full[c]
        r = vjp(energy, wrt=[0])(x, weight, c_obj, c_pen, *full)
        result = {
            "energy": r.ret["energy"],
            "grad": r.grad({"energy": 1.0, "values": None})[0],
            "values": r.ret["values"],
        }
        if value_only:
            value = energy(x, weight, c_obj, c_pen, *alone)["energy"]
            result["energy"] = adcore.select(grad > 0, result["energy"], value)
        return result

    return fn(params, {"energy": Real, "grad": n, "values": values_type}, body, name="energy_and_grad")


def table_offsets(kinds: Sequence[GoalKind]) -> list[int]:
    """Where each kind's tables start among the energy's table parameters (and the end)."""
    sizes = [len(table_types(k)) for k in kinds]
    return [sum(sizes[:k]) for k in range(len(kinds) + 1)]


def goal_gradients_function(kinds: Sequence[GoalKind], kind_fns: Sequence[adcore.Fn], n: int) -> adcore.Fn:
    """Each goal's gradient with respect to its own inputs (one row per goal, columns side by side),
    to find a NaN's source."""
    params = [Vec(n, Real), Real, Real, Real, Int] + [t for k in kinds for t in table_types(k)]  # LEADING
    ret = {f"k{k}": Vec(kind.n_rows, Vec(kind.n_inputs, Real)) for k, kind in enumerate(kinds)}
    starts = table_offsets(kinds)

    def body(x: Any, weight: Any, c_obj: Any, c_pen: Any, grad: Any, *tables: Any) -> dict[str, Any]:
        out = {}
        for k, (kind, kf) in enumerate(zip(kinds, kind_fns)):
            columns = tables[starts[k] : starts[k + 1] - 2]
            wrt = [2 * c for c in range(len(_used(kind)))]

            def row(
                r: Any, kind: GoalKind = kind, kf: adcore.Fn = kf, columns: Any = columns, wrt: Any = wrt
            ) -> Any:
                grads = vjp(kf, wrt=wrt)(*_row_arguments(x, kind, columns, r)).grad(1.0)
                return _flat(grads, kind)

            out[f"k{k}"] = adcore.vec(kind.n_rows, Vec(kind.n_inputs, Real), row)
        return out

    return fn(params, ret, body, name="goal_gradients")


def _flat(grads: Sequence[Any], kind: GoalKind) -> list[Any]:
    """The per-column gradients side by side, in the order of `GoalKind.rows_in`."""
    per_param = grads if isinstance(grads, tuple) else (grads,)
    return [g[j] for g, c in zip(per_param[0::2], _used(kind)) for j in range(c.width)]
