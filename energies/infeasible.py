"""Constraints no layout can satisfy because nothing they read can move.

A constraint's kind table lists the unknowns each of its goals reads (``GoalKind.reads``). When
none of them varies in a stage, the constraint's gradient there is identically zero: no round of
that stage can change its value. A constraint violated in the final layout that is fixed in every
stage where it applies is infeasible by construction (the Style fixes every value it reads, e.g. a
label too long for the canvas, or two shapes placed to overlap), and a user wants to be told where
it is rather than see an optimizer that "failed".

    fixed_constraints(kinds, n_constraints, varying) -> bool mask   (StageSpec.fixed)
    infeasible_warnings(problem, result) -> list of messages          (one per Style line)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .diagram import GoalInstance, GoalTable
from .optimize.optimizer import GoalReports, OptimizeResult

if TYPE_CHECKING:  # energies.compile builds its stages with fixed_constraints
    from .compile.kinds import GoalKind


def fixed_constraints(kinds: Sequence[GoalKind], n_constraints: int, varying: np.ndarray) -> np.ndarray:
    """For each constraint: True when it reads no input of ``varying`` (a bool mask over inputs)."""
    moves = np.zeros(n_constraints, bool)
    for kind in kinds:
        if kind.goal == "constraint" and kind.n_inputs:
            moves[kind.goals] = kind.reads(varying)
    return ~moves


def infeasible_warnings(problem: Any, result: OptimizeResult) -> list[str]:
    """One message per Style line among the constraints of ``result.infeasible``: its place in the
    Style (``style:L:C``, which the CLI and the service turn into the Style file's own line), the
    function, the shapes it reads, its matches, its value, and why it can never be satisfied.
    ``problem`` is an ``energies.compile.CompiledProblem``."""
    if not result.infeasible:
        return []
    reads = _reads_unknowns(problem.kinds, len(problem.constraint_names))
    goals = result.goals
    if isinstance(goals, GoalReports):
        values: Any = goals.values[1]  # an array, or the reports' values
    else:
        values = [g.value for g in goals if g.kind == "constraint"]
    # One message per Style line: a block's constraint fails alike in each of its matches.
    groups: dict[tuple[Any, ...], list[tuple[GoalInstance, float]]] = {}
    for i in result.infeasible:
        goal = _constraint(problem.constraints.parts, problem.constraints.starts, i)
        w = goal.where
        key = (w.line, w.column, w.block if goal.implicit or not w.line else "", goal.name, bool(reads[i]))
        groups.setdefault(key, []).append((goal, float(values[i])))
    out = []
    for (line, column, _, name, moving), members in groups.items():
        goal, where = members[0][0], members[0][0].where
        place = f"style:{line}:{column}: " if line else ""
        shapes = [a.name for a in goal.args if isinstance(getattr(a, "name", None), str)]
        what = f"ensure {name}" + (f"({', '.join(shapes)})" if shapes else "")
        more = len(members) - 1
        if goal.implicit:  # added for a shape whose ensureOnCanvas is true, which has no line
            context = (
                f" (implicit: ensureOnCanvas of shape {where.block}; fit it, or set ensureOnCanvas: false)"
            )
        elif where.block:
            matches = where.match and f", match {where.match}" + (
                f" and {more} more match{'es' if more > 1 else ''}" if more else ""
            )
            context = f" (block {where.block.rstrip(' {')}{matches})"
        else:
            context = ""
        why = (
            "the values it reads vary in no layout stage where it applies"
            if moving
            else "it depends on no varying value: the Style fixes every value it reads"
        )
        value = max(v for _, v in members)
        out.append(
            f"{place}InfeasibleConstraintWarning: {what}{context} can never be satisfied"
            f" (value {value:.4g} > 0): {why}"
        )
    return out


def _reads_unknowns(kinds: Sequence[GoalKind], n_constraints: int) -> np.ndarray:
    reads = np.zeros(n_constraints, bool)
    for kind in kinds:
        if kind.goal == "constraint":
            reads[kind.goals] = kind.n_inputs > 0
    return reads


def _constraint(parts: Sequence[Any], starts: Sequence[int], i: int) -> GoalInstance:
    """Constraint ``i`` of a GoalList's parts (runs of goals, or tables)."""
    p = max(k for k, s in enumerate(starts) if s <= i)
    part, row = parts[p], i - starts[p]
    return part.row(row) if isinstance(part, GoalTable) else part[row]
