"""The goals of one class (constraints or objectives), single goals and tables alike.

Goals are numbered 0..n-1 in diagram order, a table's rows taking consecutive numbers, so the
optimizer's reports, stage masks and kind tables agree on what goal k is. Per-goal work happens in
C-level passes or numpy: a diagram may state 500,000 goals one by one.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from ..diagram import Goal, GoalInstance, GoalTable
from .kinds import GoalKind, Memo, group_goals, group_table, merge_kinds

Part = list[GoalInstance] | GoalTable  # a run of single goals, or one table


class GoalList:
    def __init__(self, kind: Literal["constraint", "objective"], parts: list[Part]):
        self.kind = kind
        self.parts = parts
        sizes = [len(p) for p in parts]
        self.starts = np.cumsum([0, *sizes])[:-1].tolist()
        self.n = sum(sizes)
        self.names = GoalNames(self)

    def __len__(self) -> int:
        return self.n

    def describe(self, i: int) -> str:
        if not 0 <= i < self.n:
            raise IndexError(f"goal {i} of {self.n}")
        p = bisect_right(self.starts, i) - 1
        part, row = self.parts[p], i - self.starts[p]
        return part.describe(row) if isinstance(part, GoalTable) else part[row].describe()

    def descriptions(self) -> list[str]:
        """Every goal's description, in bulk."""
        out: list[str] = []
        for part in self.parts:
            out += part.describe_all() if isinstance(part, GoalTable) else [g.describe() for g in part]
        return out

    def active(self, stage: str) -> np.ndarray:
        """Which goals take part in a stage: (stage in stages) != exclude for each goal."""
        masks = [
            np.full(len(p), p.active_in(stage)) if isinstance(p, GoalTable) else _active(p, stage)
            for p in self.parts
        ]
        return np.concatenate(masks) if masks else np.zeros(0, bool)

    def kinds(self, memo: Memo | None = None) -> list[GoalKind]:
        """The goals grouped into kind tables; a kind met in several parts becomes one kind.
        `memo` shares argument signatures between calls (a shape in many tables)."""
        memo = {} if memo is None else memo
        kinds = []
        for part, start in zip(self.parts, self.starts):
            found = (
                group_table(part, memo) if isinstance(part, GoalTable) else group_goals(part, self.kind, memo)
            )
            for kind in found:
                kind.goals += start
            kinds += found
        return merge_kinds(kinds) if len(self.parts) > 1 else kinds


def split_goals(goals: Sequence[Goal]) -> tuple[GoalList, GoalList]:
    """(objectives, constraints), each in diagram order."""
    parts: dict[str, list[Part]] = {"objective": [], "constraint": []}
    if GoalTable not in set(map(type, goals)):  # the usual case: C-level passes only
        for kind, same in parts.items():
            run = [g for g in goals if g.kind == kind and isinstance(g, GoalInstance)]
            if run:
                same.append(run)
    else:
        for g in goals:
            same = parts[g.kind]
            if isinstance(g, GoalTable):
                same.append(g)
            elif same and isinstance(same[-1], list):
                same[-1].append(g)
            else:
                same.append([g])
    return GoalList("objective", parts["objective"]), GoalList("constraint", parts["constraint"])


class GoalNames(Sequence[str]):
    """Goal descriptions, formatted only when read (a large diagram has hundreds of thousands)."""

    def __init__(self, goals: GoalList):
        self.goals = goals

    def __len__(self) -> int:
        return len(self.goals)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            if i == slice(None):
                return self.goals.descriptions()
            return [self.goals.describe(k) for k in range(*i.indices(len(self.goals)))]
        if i < 0:
            i += len(self.goals)
        return self.goals.describe(i)


def _active(goals: list[GoalInstance], stage: str) -> np.ndarray:
    """Which goals of a run take part in a stage.

    Hot for large diagrams (500,000 goals): the `in` test runs once per distinct `stages` tuple (most
    goals share the default), not once per goal; per goal there are only C-level passes.
    """
    stages = [g.stages for g in goals]
    excluded = np.fromiter([g.exclude for g in goals], bool, len(goals))
    inside = {s: stage in s for s in set(stages)}
    if len(inside) == 1:
        return excluded != next(iter(inside.values()))
    return np.fromiter(map(inside.__getitem__, stages), bool, len(goals)) != excluded
