"""Grouping goals into kinds: one adcore function per kind, one table row per goal.

Two goals are of one kind when they apply the same library function to arguments of the same
structure (shape kinds, list lengths, expression shapes, strings), whatever their numbers. A kind
reads its numbers from two tables: `rows_in` (which entries of the unknowns vector x) and
`rows_c` (constants). This keeps the compiled energy proportional to the number of kinds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import chain
from math import prod
from typing import Any, Literal

import numpy as np

from ..diagram import GoalInstance
from ..expr import signature


@dataclass
class TracedShape:
    """A shape as a kind function sees it: its geometric properties, rebuilt from traced slots."""

    kind: str
    props: dict[str, Any]
    name: str = ""


def geometric_props() -> dict[str, tuple[str, ...]]:
    from ..library.geometry import GEOMETRIC_PROPS

    return GEOMETRIC_PROPS


def props_of(value: Any) -> tuple[str, tuple[tuple[str, Any], ...]] | None:
    """Shapes enter a goal's signature by their kind and the properties the library reads."""
    kind = getattr(value, "kind", None)
    props = getattr(value, "props", None)
    if not isinstance(kind, str) or not isinstance(props, dict):
        return None
    wanted = geometric_props().get(kind)
    names = wanted if wanted is not None else tuple(sorted(props))
    return kind, tuple((p, props[p]) for p in names if p in props)


def rebuild_shape(original: Any, kind: str, props: dict[str, Any]) -> TracedShape:
    return TracedShape(kind, props, getattr(original, "name", ""))


@dataclass
class GoalKind:
    goal: Literal["constraint", "objective"]
    name: str
    representative: GoalInstance
    signature: int
    n_inputs: int
    n_consts: int
    goals: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # each row's goal, in its class
    rows_in: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.int32))
    rows_c: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))

    @property
    def n_rows(self) -> int:
        return len(self.goals)

    def structure(self) -> tuple[Any, ...]:
        return (self.goal, self.name, self.signature, self.n_inputs, self.n_consts, self.n_rows)


def group_goals(goals: Sequence[GoalInstance], goal: str) -> list[GoalKind]:
    """Kinds of the goals of one class ("constraint" or "objective"), in order of first appearance.

    Hot for large diagrams (all pairs of 1,000 shapes are 500,000 goals), so the per-goal and
    per-argument work is a few C-level passes (comprehensions reading one attribute, `map` over
    `id`, `len` and dictionary lookups) and numpy; Python code runs once per distinct argument
    object (a shape shared by a thousand goals is abstracted once) and once per kind. Goals are
    grouped by (name, number of arguments), then by their arguments' signatures (stable sorts of
    integer codes); tables are gathered from the slots of the distinct arguments.
    """
    if not goals:
        return []
    arg_lists = [g.args for g in goals]
    arity = np.fromiter(map(len, arg_lists), np.int64, len(goals))
    offset = np.cumsum(arity) - arity  # each goal's first argument, numbering all arguments in order
    # objects are alive (their goals hold them), so their ids identify them
    ids = np.fromiter(map(id, chain.from_iterable(arg_lists)), np.uint64, int(arity.sum()))
    # a large young list makes each garbage collection that `signature` triggers slow: drop it first
    del arg_lists
    _, first_use, object_of = np.unique(ids, return_index=True, return_inverse=True)
    owner = np.searchsorted(offset, first_use, side="right") - 1  # the goal of each first use
    position = first_use - offset[owner]  # (a goal without arguments is never an owner)
    sigs = [signature(goals[k].args[p], props_of) for k, p in zip(owner.tolist(), position.tolist())]
    sig_of = np.array([s[0] for s in sigs], np.int64)
    inputs = _Slots([s[1] for s in sigs], np.int32)
    consts = _Slots([s[2] for s in sigs], np.float64)

    names = [g.name for g in goals]
    name_code = {name: k for k, name in enumerate(dict.fromkeys(names))}
    shape_code = np.fromiter(map(name_code.__getitem__, names), np.int64, len(goals))
    shape_code = shape_code * (int(arity.max()) + 1) + arity  # one code per (name, arity)
    kinds: list[GoalKind] = []
    for members in _runs(shape_code):  # members ascending: the sort is stable
        name = names[members[0]]
        table = object_of[offset[members][:, None] + np.arange(arity[members[0]])]
        for rows in _runs(_row_codes(sig_of[table])):
            if len(rows) < len(members):  # (one kind for all, the usual case, needs no copy)
                kinds.append(_kind(goal, name, goals, members[rows], table[rows], sig_of, inputs, consts))
            else:
                kinds.append(_kind(goal, name, goals, members, table, sig_of, inputs, consts))
    kinds.sort(key=lambda kind: int(kind.goals[0]))  # order of first appearance
    return kinds


def _runs(codes: np.ndarray) -> list[np.ndarray]:
    """Indices of equal codes, one ascending array per distinct code."""
    order = np.argsort(codes, kind="stable")
    ordered = codes[order]
    cuts = np.flatnonzero(ordered[1:] != ordered[:-1]) + 1
    return np.split(order, cuts)


def _row_codes(rows: np.ndarray) -> np.ndarray:
    """One int64 per row, equal exactly when the rows are equal (rows of non-negative ints)."""
    if rows.shape[1] == 0:
        return np.zeros(len(rows), np.int64)
    radix = [int(r) for r in rows.max(axis=0) + 1]
    if prod(radix) >= 2**63:  # mixed radix would overflow: number the distinct rows instead
        return np.unique(rows, axis=0, return_inverse=True)[1].reshape(-1)
    weights = np.cumprod([1, *radix[:0:-1]])[::-1]  # last column varies fastest
    return rows @ weights


class _Slots:
    """The slots (inputs or constants) of every distinct argument, as one flat array."""

    def __init__(self, per_object: list[tuple[Any, ...]], dtype: Any):
        self.width = np.fromiter(map(len, per_object), np.int64, len(per_object))
        self.start = np.cumsum(self.width) - self.width
        self.flat = np.fromiter(chain.from_iterable(per_object), dtype, int(self.width.sum()))

    def table(self, objects: np.ndarray) -> np.ndarray:
        """One row per goal: the slots of its arguments (`objects`, one column each), in order."""
        # goals of one kind have arguments of one signature, hence the first row's widths
        widths = self.width[objects[0]]
        column = np.repeat(np.arange(len(widths)), widths)
        within = np.arange(len(column)) - np.repeat(np.cumsum(widths) - widths, widths)
        return self.flat[self.start[objects][:, column] + within]


def _kind(
    goal: str,
    name: str,
    goals: Sequence[GoalInstance],
    members: np.ndarray,
    table: np.ndarray,
    sig_of: np.ndarray,
    inputs: _Slots,
    consts: _Slots,
) -> GoalKind:
    rows_in = inputs.table(table)
    rows_c = consts.table(table)
    return GoalKind(
        goal,  # type: ignore[arg-type]
        name,
        goals[int(members[0])],
        hash((name, *sig_of[table[0]].tolist())),
        rows_in.shape[1],
        rows_c.shape[1],
        members.astype(np.int64),
        np.ascontiguousarray(rows_in, np.int32),
        np.ascontiguousarray(rows_c, np.float64),
    )
