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

    Hot for large diagrams (one pass over every goal), so argument signatures are memoized by
    object identity: a shape shared by a thousand goals is abstracted once.
    """
    memo: dict[int, Any] = {}
    const_sig = signature(0.0)[0]

    def arg_signature(v: Any) -> Any:
        if type(v) is float or type(v) is int:
            return const_sig, (), (float(v),)
        found = memo.get(id(v))
        if found is None:
            found = memo[id(v)] = signature(v, props_of, memo)
        return found

    kinds: dict[tuple[Any, ...], GoalKind] = {}
    rows: dict[tuple[Any, ...], tuple[list[tuple[int, ...]], list[tuple[float, ...]]]] = {}
    for k, g in enumerate(goals):
        parts = [arg_signature(a) for a in g.args]
        key = (g.name, *(p[0] for p in parts))
        kind = kinds.get(key)
        if kind is None:
            n_in = sum(len(p[1]) for p in parts)
            n_c = sum(len(p[2]) for p in parts)
            kind = kinds[key] = GoalKind(goal, g.name, g, hash(key), n_in, n_c)  # type: ignore[arg-type]
            rows[key] = ([], [])
        kind.goals.append(k)
        ins, cs = rows[key]
        ins.append(sum((p[1] for p in parts), ()))
        cs.append(sum((p[2] for p in parts), ()))
    for key, kind in kinds.items():
        ins, cs = rows[key]
        kind.rows_in = np.array(ins, dtype=np.int32).reshape(kind.n_rows, kind.n_inputs)
        kind.rows_c = np.array(cs, dtype=np.float64).reshape(kind.n_rows, kind.n_consts)
    return list(kinds.values())
