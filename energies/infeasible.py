"""Constraints no layout can satisfy because nothing they read can move.

A constraint's kind table lists the unknowns each of its goals reads (``GoalKind.rows_in``). When
none of them varies in a stage, the constraint's gradient there is identically zero: no round of
that stage can change its value. A constraint violated in the final layout that is fixed in every
stage where it applies is infeasible by construction (the Style fixes every value it reads, e.g. a
label too long for the canvas, or two shapes placed to overlap), and a user wants to be told where
it is rather than see an optimizer that "failed".

    fixed_constraints(kinds, n_constraints, varying) -> bool mask   (StageSpec.fixed)
    infeasible_warnings(problem, result) -> list of messages          (one per constraint)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .diagram import GoalInstance, GoalTable
from .optimize import OptimizeResult

if TYPE_CHECKING:  # energies.compile builds its stages with fixed_constraints
    from .compile.kinds import GoalKind


def fixed_constraints(kinds: Sequence[GoalKind], n_constraints: int, varying: np.ndarray) -> np.ndarray:
    """For each constraint: True when it reads no input of ``varying`` (a bool mask over inputs)."""
    moves = np.zeros(n_constraints, bool)
    for kind in kinds:
        if kind.goal == "constraint" and kind.rows_in.shape[1]:
            moves[kind.goals] = varying[kind.rows_in].any(axis=1)
    return ~moves


def infeasible_warnings(problem: Any, result: OptimizeResult) -> list[str]:
    """One message per constraint of ``result.infeasible``: its place in the Style (``style:L:C``,
    which the CLI and the service turn into the Style file's own line), the function, the shapes it
    reads, its value, and why it can never be satisfied. ``problem`` is an
    ``energies.compile.CompiledProblem``."""
    if not result.infeasible:
        return []
    reads = _reads_unknowns(problem.kinds, len(problem.constraint_names))
    values = result.goals.values[1]
    out = []
    for i in result.infeasible:
        goal = _constraint(problem.constraints.parts, problem.constraints.starts, i)
        where = goal.where
        place = f"style:{where.line}:{where.column}: " if where.line else ""
        shapes = [a.name for a in goal.args if isinstance(getattr(a, "name", None), str)]
        if goal.implicit:  # added for a shape whose ensureOnCanvas is true, which has no line
            context = (
                f" (implicit: ensureOnCanvas of shape {where.block}; fit it, or set ensureOnCanvas: false)"
            )
        else:
            context = (
                where.block and f" (block {where.block}" + (where.match and f", match {where.match}") + ")"
            )
        why = (
            "the values it reads vary in no layout stage where it applies"
            if reads[i]
            else "it depends on no varying value: the Style fixes every value it reads"
        )
        out.append(
            f"{place}InfeasibleConstraintWarning: ensure {goal.name}({', '.join(shapes)}){context}"
            f" can never be satisfied (value {float(values[i]):.4g} > 0): {why}"
        )
    return out


def _reads_unknowns(kinds: Sequence[GoalKind], n_constraints: int) -> np.ndarray:
    reads = np.zeros(n_constraints, bool)
    for kind in kinds:
        if kind.goal == "constraint":
            reads[kind.goals] = kind.rows_in.shape[1] > 0
    return reads


def _constraint(parts: Sequence[Any], starts: Sequence[int], i: int) -> GoalInstance:
    """Constraint ``i`` of a GoalList's parts (runs of goals, or tables)."""
    p = max(k for k, s in enumerate(starts) if s <= i)
    part, row = parts[p], i - starts[p]
    return part.row(row) if isinstance(part, GoalTable) else part[row]
