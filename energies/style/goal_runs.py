"""The goals a Style program states, in order, with long runs of one statement kept as tables.

A block's goal statement states one goal per match, and the matches of one block are evaluated one
after the other: `forall Set x; Set y { ensure disjoint(x.icon, y.icon) }` over 1,000 sets states
500,000 goals in a row. Such a run becomes one `GoalTable` (its arguments as columns of distinct
values and indices) instead of 500,000 `GoalInstance`s, each with its argument list and origin, and
the energy compiler reads the table with numpy. Short runs stay single goals. Either way the goals
keep the order in which they were stated, so every goal keeps its number.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from operator import itemgetter
from typing import TYPE_CHECKING, Any

import numpy as np

from energies.diagram import Column, Goal, GoalInstance, GoalTable, Where
from energies.lang.ast import Pos
from energies.lang.substance_env import SubValue
from energies.style.context import BlockContext, match_text

if TYPE_CHECKING:
    from energies.style.goals import GoalForm

MIN_TABLE_ROWS = 64  # below this, a run's goals stay GoalInstances (tables pay off on many rows)


@dataclass
class _Run:
    """Consecutive goals of one statement: their arguments and their matches."""

    form: GoalForm
    line: int
    column: int
    block: str
    rows: list[list[Any]] = field(default_factory=list)
    substs: list[dict[str, SubValue]] = field(default_factory=list)
    collections: list[tuple[str, Any] | None] = field(default_factory=list)


class GoalRuns:
    def __init__(self) -> None:
        self.runs: list[_Run | GoalTable] = []

    def add_table(self, table: GoalTable) -> None:
        """A table made elsewhere (a block evaluated in bulk), in its place among the goals."""
        self.runs.append(table)

    def add(self, form: GoalForm, args: list[Any], ctx: BlockContext, pos: Pos) -> None:
        last = self.runs[-1] if self.runs else None
        if last is None or isinstance(last, GoalTable) or last.form is not form:
            last = _Run(form, pos.line, pos.column, ctx.plan.block_text)
            self.runs.append(last)
        last.rows.append(args)
        last.substs.append(ctx.subst)
        last.collections.append(ctx.collection)

    def goals(self) -> list[Goal]:
        out: list[Goal] = []
        for run in self.runs:
            if isinstance(run, GoalTable):
                out.append(run)
                continue
            if len(run.rows) >= MIN_TABLE_ROWS and run.rows[0]:  # (a table needs a column)
                out.append(_table(run))
                continue
            f = run.form
            wheres = [
                Where(run.line, run.column, run.block, match_text(subst, collection))
                for subst, collection in zip(run.substs, run.collections)
            ]
            out += [
                GoalInstance(f.kind, f.name, args, f.stages, f.exclude, where)
                for args, where in zip(run.rows, wheres)
            ]
        return out


def _table(run: _Run) -> GoalTable:
    f = run.form
    return GoalTable(
        f.kind,
        f.name,
        [Column.of(list(map(itemgetter(c), run.rows))) for c in range(len(run.rows[0]))],
        f.stages,
        f.exclude,
        Where(run.line, run.column, run.block),
        match_text=_match_texts(run),
    )


class _MatchColumns:
    """Each row's match as columns of substance values (the text is made when a message needs it):
    500,000 matches in a few index arrays instead of 500,000 strings."""

    def __init__(self, names: tuple[str, ...], substs: list[dict[str, SubValue]]):
        self.names = names
        self.columns = [Column.of(list(map(itemgetter(name), substs))) for name in names]

    def __call__(self, row: int) -> str:
        return match_text({n: c.values[int(c.index[row])] for n, c in zip(self.names, self.columns)}, None)

    def texts(self) -> list[str]:
        """Every row's text, each distinct value named once."""
        shown = [[match_text({n: v}, None) for v in c.values] for n, c in zip(self.names, self.columns)]
        per_name = [[names[i] for i in c.index.tolist()] for names, c in zip(shown, self.columns)]
        return list(map(", ".join, zip(*per_name)))


def _match_texts(run: _Run) -> Callable[[int], str]:
    # A block's matches bind its selector's variables, in the selector's order (the matcher makes
    # every substitution from one list of names), so the first row's names are every row's.
    names = tuple(run.substs[0])
    sizes = np.fromiter(map(len, run.substs), np.intp, len(run.substs))
    if not any(run.collections) and (sizes == len(names)).all():
        return _MatchColumns(names, run.substs)
    texts = [match_text(subst, collection) for subst, collection in zip(run.substs, run.collections)]
    return texts.__getitem__
