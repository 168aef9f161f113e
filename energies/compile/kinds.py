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

    Hot for large diagrams (all pairs of 1,000 shapes are 500,000 goals), so the per-goal work is
    done by numpy: goals are first split by (name, number of arguments); every distinct argument
    object (a shape shared by a thousand goals) is abstracted once; rows of argument signatures are
    grouped with `np.unique`; tables are gathered from per-argument slot arrays.
    """
    by_shape: dict[tuple[str, int], list[int]] = {}
    for k, g in enumerate(goals):
        by_shape.setdefault((g.name, len(g.args)), []).append(k)
    memo: dict[int, Any] = {}  # signatures by object identity, shared by all groups
    found: list[tuple[int, GoalKind]] = []  # (first goal, kind)
    for (name, n_args), members in by_shape.items():
        args = [a for k in members for a in goals[k].args]
        # objects are alive (their goals hold them), so their ids identify them
        ids = np.fromiter((id(a) for a in args), dtype=np.uint64, count=len(args))
        distinct_ids, first_use, numbering = np.unique(ids, return_index=True, return_inverse=True)
        arg_sigs: list[Sig] = [signature(args[int(i)], props_of, memo) for i in first_use]
        table = numbering.reshape(len(members), n_args).astype(np.int64)
        sig_of = np.array([s[0] for s in arg_sigs], dtype=np.int64)
        signatures = sig_of[table]
        if n_args:
            distinct, first, inverse = np.unique(signatures, axis=0, return_index=True, return_inverse=True)
        else:
            distinct, first, inverse = (
                np.zeros((1, 0)),
                np.zeros(1, np.int64),
                np.zeros(len(members), np.int64),
            )
        inverse = inverse.reshape(-1)
        member_array = np.asarray(members)
        for group in range(len(distinct)):
            rows = np.flatnonzero(inverse == group)
            found.append(
                (
                    int(member_array[first[group]]),
                    _kind(goal, name, goals, member_array[rows], table[rows], arg_sigs),
                )
            )
    return [kind for _, kind in sorted(found, key=lambda pair: pair[0])]


def _kind(
    goal: str,
    name: str,
    goals: Sequence[GoalInstance],
    members: np.ndarray,
    table: np.ndarray,
    arg_sigs: list[Sig],
) -> GoalKind:
    rep = goals[int(members[0])]
    ins = [_slots(arg_sigs, table[:, pos], 1, np.int32) for pos in range(table.shape[1])]
    cs = [_slots(arg_sigs, table[:, pos], 2, np.float64) for pos in range(table.shape[1])]
    rows_in = np.concatenate(ins, axis=1) if ins else np.zeros((len(members), 0), np.int32)
    rows_c = np.concatenate(cs, axis=1) if cs else np.zeros((len(members), 0))
    signature_id = hash((name, *(arg_sigs[int(a)][0] for a in table[0])))
    return GoalKind(
        goal,  # type: ignore[arg-type]
        name,
        rep,
        signature_id,
        rows_in.shape[1],
        rows_c.shape[1],
        members.astype(np.int64),
        np.ascontiguousarray(rows_in, np.int32),
        np.ascontiguousarray(rows_c),
    )


def _slots(sigs: list[Sig], column: np.ndarray, part: int, dtype: Any) -> np.ndarray:
    """The slots (inputs or constants) of the arguments in `column`, one row per goal."""
    distinct, inverse = np.unique(column, return_inverse=True)
    width = len(sigs[int(distinct[0])][part])
    values = np.array([sigs[int(a)][part] for a in distinct], dtype=dtype).reshape(len(distinct), width)
    return values[inverse]
