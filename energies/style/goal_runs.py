"""The goals a Style program states, in order, with long runs of one statement kept as tables.

A block's goal statement states one goal per match, and the matches of one block are evaluated one
after the other: `forall Set x; Set y { ensure disjoint(x.icon, y.icon) }` over 1,000 sets states
500,000 goals in a row. Such a run becomes one `GoalTable` (its arguments as columns of distinct
values and indices) instead of 500,000 `GoalInstance`s, each with its argument list and origin, and
the energy compiler reads the table with numpy. Short runs stay single goals. Either way the goals
keep the order in which they were stated, so every goal keeps its number.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from energies.diagram import Column, Goal, GoalInstance, GoalTable, Where

if TYPE_CHECKING:
    from energies.style.goals import GoalForm

MIN_TABLE_ROWS = 64  # below this, a run's goals stay GoalInstances (tables pay off on many rows)


@dataclass
class _Run:
    """Consecutive goals of one statement: their arguments and how to name their matches."""

    form: GoalForm
    line: int
    column: int
    block: str
    rows: list[list[Any]] = field(default_factory=list)
    matches: list[Callable[[], str]] = field(default_factory=list)


class GoalRuns:
    def __init__(self) -> None:
        self.runs: list[_Run] = []

    def add(self, form: GoalForm, args: list[Any], where: Where) -> None:
        last = self.runs[-1] if self.runs else None
        if last is None or last.form is not form:
            last = _Run(form, where.line, where.column, where.block)
            self.runs.append(last)
        last.rows.append(args)
        last.matches.append(where.match_text)  # type: ignore[arg-type]

    def __len__(self) -> int:
        return sum(len(r.rows) for r in self.runs)

    def goals(self) -> list[Goal]:
        out: list[Goal] = []
        for run in self.runs:
            if len(run.rows) >= MIN_TABLE_ROWS and run.rows[0]:  # (a table needs a column)
                out.append(_table(run))
            else:
                f = run.form
                out += [
                    GoalInstance(
                        f.kind,
                        f.name,
                        args,
                        f.stages,
                        f.exclude,
                        Where(run.line, run.column, run.block, match),
                    )
                    for args, match in zip(run.rows, run.matches)
                ]
        return out


def _table(run: _Run) -> GoalTable:
    f = run.form
    return GoalTable(
        f.kind,
        f.name,
        [_column([args[c] for args in run.rows]) for c in range(len(run.rows[0]))],
        f.stages,
        f.exclude,
        Where(run.line, run.column, run.block),
        match_text=partial(_match_text, run.matches),
    )


def _match_text(matches: list[str | Callable[[], str]], row: int) -> str:
    m = matches[row]
    return m if isinstance(m, str) else m()


def _column(values: Sequence[Any]) -> Column:
    """The distinct values (by identity: a shape met in many rows is one value) and each row's."""
    ids = np.fromiter(map(id, values), np.uint64, len(values))
    _, first, index = np.unique(ids, return_index=True, return_inverse=True)
    return Column([values[i] for i in first.tolist()], index.reshape(-1))
