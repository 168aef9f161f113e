"""Grouping goals into kinds: one adcore function per kind, one table row per goal.

Two goals are of one kind when they apply the same library function to arguments of the same
structure (shape kinds, list lengths, expression shapes, strings), whatever their numbers. A kind
reads its numbers from two tables: `rows_in` (which entries of the unknowns vector x) and
`rows_c` (constants). This keeps the compiled energy proportional to the number of kinds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from ..diagram import GoalInstance
from ..expr import Sig, signature


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
    goals: list[int] = field(default_factory=list)  # index of each row's goal among its class
    rows_in: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.int32))
    rows_c: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))

    @property
    def n_rows(self) -> int:
        return len(self.goals)

    def structure(self) -> tuple[Any, ...]:
        return (self.goal, self.name, self.signature, self.n_inputs, self.n_consts, self.n_rows)


def group_goals(goals: Sequence[GoalInstance], goal: str) -> list[GoalKind]:
    """Kinds of the goals of one class ("constraint" or "objective"), in order of first appearance.

    Hot for large diagrams, so the work per goal is a few dictionary lookups: every distinct
    argument (a shape shared by a thousand goals, a number) is abstracted once, and the tables are
    assembled with numpy from per-argument slot arrays.
    """
    arg_ids: dict[int, int] = {}  # id of an argument object (alive as long as its goal) -> number
    arg_sigs: list[Sig] = []
    sig_ids: list[int] = []
    memo: dict[int, Any] = {}
    groups: dict[tuple[Any, ...], tuple[GoalInstance, list[int], list[tuple[int, ...]]]] = {}
    for k, g in enumerate(goals):
        numbers = []
        for a in g.args:
            n = arg_ids.get(id(a))
            if n is None:
                n = arg_ids[id(a)] = len(arg_sigs)
                sig = signature(a, props_of, memo)
                arg_sigs.append(sig)
                sig_ids.append(sig[0])
            numbers.append(n)
        key = (g.name, *[sig_ids[a] for a in numbers])
        group = groups.get(key)
        if group is None:
            group = groups[key] = (g, [], [])
        group[1].append(k)
        group[2].append(numbers)  # type: ignore[arg-type]
    kinds = []
    for key, (rep, members, numbers) in groups.items():
        table = np.array(numbers, dtype=np.int64).reshape(len(members), len(rep.args))
        ins = [_slots(arg_sigs, table[:, pos], 1, np.int32) for pos in range(table.shape[1])]
        cs = [_slots(arg_sigs, table[:, pos], 2, np.float64) for pos in range(table.shape[1])]
        rows_in = np.concatenate(ins, axis=1) if ins else np.zeros((len(members), 0), np.int32)
        rows_c = np.concatenate(cs, axis=1) if cs else np.zeros((len(members), 0))
        kinds.append(
            GoalKind(
                goal,
                rep.name,
                rep,
                hash(key),
                rows_in.shape[1],
                rows_c.shape[1],  # type: ignore[arg-type]
                members,
                np.ascontiguousarray(rows_in, np.int32),
                np.ascontiguousarray(rows_c),
            )
        )
    return kinds


def _slots(sigs: list[Sig], column: np.ndarray, part: int, dtype: Any) -> np.ndarray:
    """The slots (inputs or constants) of the arguments in `column`, one row per goal."""
    distinct, inverse = np.unique(column, return_inverse=True)
    width = len(sigs[int(distinct[0])][part])
    values = np.array([sigs[int(a)][part] for a in distinct], dtype=dtype).reshape(len(distinct), width)
    return values[inverse]
