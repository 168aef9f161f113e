"""Why a layout failed: each unsatisfied constraint and each objective that dominates the energy,
with its place in the Style, its shapes, its value and its share of the energy, and which of them
pull against each other.

    diagnose(problem, result) -> Diagnosis   (problem: energies.compile.CompiledProblem)
    diagnosis.to_json() -> dict              (the report's "diagnosis", service.pipeline)

Rules:
- A goal's *term* is its part of the final energy: ``weight · max(c, 0)²`` for a constraint of the
  final stage, its value for an objective of the final stage (as ``OptimizeResult.energy`` sums
  them). Its *share* is ``|term| / Σ |terms|``, so shares are in [0, 1] and sum to 1.
- Listed: every violated constraint (value > SATISFIED_TOLERANCE, final stage), and every
  objective whose share is at least OBJECTIVE_SHARE (one that holds most of the energy is the one
  to look at when a picture disappoints although every constraint holds). At most MAX_GOALS of
  them are detailed, largest share first; ``omitted`` counts the rest, which only costs a numpy
  sort for a table of 500,000 goals.
- A goal's shapes are its shape arguments, then the shapes owning the unknowns it reads (an
  ``ensure x.icon.r > 30`` has no shape argument but reads ``x.icon``'s radius); a shape's owner
  is found from the unknowns' names, which start with their shape's path (A's icon: ``A.icon.r``
  with A in backquotes).
  Substance names are the backquoted names in a path.
- ``never``: the constraint is one of ``result.infeasible`` (energies.infeasible: nothing it reads
  can move), so no other variation can satisfy it.
- A *conflict*: two violated constraints from different Style statements over the same set of
  shapes. It is ``known`` when the two functions can never both hold on the same shapes
  (INCOMPATIBLE: ``contains`` and ``disjoint`` of one pair); otherwise it is listed only when the
  constraints' gradients, by central differences over the unknowns they read that vary in the
  final stage, point against each other (a negative dot product: lowering one raises the other).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np

from .diagram import GoalInstance, GoalTable, ShapeInstance
from .optimize.optimizer import SATISFIED_TOLERANCE, OptimizeResult

MAX_GOALS = 200
OBJECTIVE_SHARE = 0.1
# Pairs of library functions that no two shapes of positive size satisfy at once (in any order of
# the pair's arguments): b inside a overlaps a; overlapping is the negation of disjoint.
INCOMPATIBLE = {frozenset(("contains", "disjoint")), frozenset(("overlapping", "disjoint"))}
MAX_GRADIENT_PAIRS = 20  # pairs whose gradients are compared by finite differences (2 · inputs calls each)
MAX_PAIR_INPUTS = 24
_SUBSTANCE_NAME = re.compile(r"`([^`]+)`")
GoalClass = Literal["constraint", "objective"]


@dataclass(frozen=True, slots=True)
class GoalDiagnosis:
    kind: GoalClass
    index: int  # in its class: the position in the problem's constraint_names / objective_names
    function: str  # Penrose's name (`contains`, `disjoint`, ...)
    line: int  # in the Style as joined (0: no line, e.g. implicit); the CLI maps it to its file
    column: int
    block: str  # the block's selector, shortened
    match: str  # the block's substitution, e.g. "x=B, y=A"
    shapes: tuple[str, ...]  # shape paths, e.g. "`B`.icon"
    substance: tuple[str, ...]  # the Substance objects they draw, each once, e.g. ("B", "A")
    value: float  # the goal's value (a constraint holds when <= 0)
    share: float  # of the energy, in [0, 1]
    never: bool = False  # a constraint no layout can satisfy (energies.infeasible)
    implicit: bool = False  # added by the system (ensureOnCanvas), so it has no line


@dataclass(frozen=True, slots=True)
class Conflict:
    a: int  # indices into Diagnosis.goals
    b: int
    shapes: tuple[str, ...]
    known: bool  # the functions can never both hold (INCOMPATIBLE); else their gradients oppose


@dataclass
class Diagnosis:
    energy: float
    n_violated: int
    goals: list[GoalDiagnosis] = field(default_factory=list)  # largest share first
    conflicts: list[Conflict] = field(default_factory=list)
    omitted: int = 0  # listed goals beyond MAX_GOALS

    def __bool__(self) -> bool:
        return bool(self.goals)

    def to_json(self) -> dict[str, Any]:
        return {
            "energy": self.energy,
            "nViolated": self.n_violated,
            "omitted": self.omitted,
            "goals": [
                {
                    "kind": g.kind,
                    "index": g.index,
                    "function": g.function,
                    "line": g.line,
                    "column": g.column,
                    "block": g.block,
                    "match": g.match,
                    "shapes": list(g.shapes),
                    "substance": list(g.substance),
                    "value": g.value,
                    "share": g.share,
                    "never": g.never,
                    "implicit": g.implicit,
                }
                for g in self.goals
            ],
            "conflicts": [{**asdict(c), "shapes": list(c.shapes)} for c in self.conflicts],
        }


def diagnose(problem: Any, result: OptimizeResult) -> Diagnosis:
    """See the module docstring. ``problem`` is an ``energies.compile.CompiledProblem`` (its goal
    lists, kinds, stages, diagram and goal_values)."""
    values = result.goals.values  # type: ignore[attr-defined]  # optimize's GoalReports, typed as a Sequence
    objectives, constraints = (np.asarray(v, float) for v in values)
    ran = [s for s in result.stages if s.status != "NotRun"]
    final = problem.stages[len(ran) - 1] if problem.stages and ran else None
    active_c = final.constraints if final is not None else np.ones(len(constraints), bool)
    active_o = final.objectives if final is not None else np.ones(len(objectives), bool)
    c_terms = np.where(active_c, result.weight * np.maximum(constraints, 0.0) ** 2, 0.0)
    o_terms = np.where(active_o, objectives, 0.0)
    total = float(np.abs(c_terms).sum() + np.abs(o_terms).sum())
    scale = 1.0 / total if total > 0 and np.isfinite(total) else 0.0
    c_share, o_share = np.abs(c_terms) * scale, np.abs(o_terms) * scale
    violated = np.flatnonzero(active_c & (constraints > SATISFIED_TOLERANCE))
    heavy = np.flatnonzero(active_o & (o_share >= OBJECTIVE_SHARE))
    # the largest shares first, constraints before objectives at a tie, chosen in numpy (a table of
    # 500,000 violated goals is one sort, not 500,000 Python tuples)
    is_objective = np.concatenate([np.zeros(len(violated), bool), np.ones(len(heavy), bool)])
    index = np.concatenate([violated, heavy])
    shares = np.concatenate([c_share[violated], o_share[heavy]])
    order = np.lexsort((is_objective, -shares))[:MAX_GOALS]
    kept: list[tuple[GoalClass, int, float]] = [
        ("objective" if is_objective[k] else "constraint", int(index[k]), float(shares[k]))
        for k in order.tolist()
    ]
    reads = _inputs_read(problem.kinds, kept)
    owner = _Owners(problem.diagram)
    never = set(result.infeasible)
    goals = []
    for kind, i, share in kept:
        glist = problem.constraints if kind == "constraint" else problem.objectives
        goal = goal_at(glist, i)
        shapes = _shapes_of(goal, reads.get((kind, i), ()), owner)
        value = float(constraints[i] if kind == "constraint" else objectives[i])
        w = goal.where
        goals.append(
            GoalDiagnosis(
                kind,
                i,
                goal.name,
                w.line,
                w.column,
                w.block,
                w.match,
                shapes,
                substance_names(shapes),
                value,
                share,
                kind == "constraint" and i in never,
                goal.implicit,
            )
        )
    diagnosis = Diagnosis(result.energy, len(violated), goals, omitted=len(index) - len(kept))
    diagnosis.conflicts = _conflicts(problem, result, final, diagnosis, reads)
    return diagnosis


def goal_at(goals: Any, i: int) -> GoalInstance:
    """Goal ``i`` of a GoalList (its ``parts``, runs of goals or tables, start at ``starts``)."""
    starts: Sequence[int] = goals.starts
    p = int(np.searchsorted(np.asarray(starts), i, side="right")) - 1
    part, row = goals.parts[p], i - starts[p]
    return part.row(row) if isinstance(part, GoalTable) else part[row]


def substance_names(shapes: Sequence[str]) -> tuple[str, ...]:
    """The Substance objects named in shape paths (A for `A`.icon), each once, in order."""
    names = [n for s in shapes for n in (_SUBSTANCE_NAME.findall(s) or [s])]
    return tuple(dict.fromkeys(names))


def _inputs_read(
    kinds: Sequence[Any], wanted: Sequence[tuple[str, int, float]]
) -> dict[tuple[str, int], tuple[int, ...]]:
    """The unknowns each wanted goal reads, from its kind's table of input rows."""
    by_class: dict[str, set[int]] = {}
    for kind, i, _ in wanted:
        by_class.setdefault(kind, set()).add(i)
    out: dict[tuple[str, int], tuple[int, ...]] = {}
    for k in kinds:
        want = by_class.get(k.goal)
        if not want or not k.rows_in.shape[1]:
            continue
        rows = np.flatnonzero(np.isin(k.goals, np.fromiter(want, np.int64)))
        for r in rows.tolist():
            key = (k.goal, int(k.goals[r]))
            out[key] = tuple(dict.fromkeys(out.get(key, ()) + tuple(k.rows_in[r].tolist())))
    return out


class _Owners:
    """The shape whose path begins an unknown's name (A's icon for `A`.icon.r), or None for a
    Style-level value; looked up only for the unknowns a listed goal reads."""

    def __init__(self, diagram: Any):
        self.paths = {s.name for s in diagram.shapes}
        self.names = diagram.unknowns.names

    def __call__(self, i: int) -> str | None:
        if not 0 <= i < len(self.names):
            return None
        name = self.names[i]
        cut = name.rfind(".")
        while cut > 0:
            if name[:cut] in self.paths:
                return name[:cut]
            cut = name.rfind(".", 0, cut)
        return None


def _shapes_of(goal: GoalInstance, reads: Sequence[int], owner: _Owners) -> tuple[str, ...]:
    found = [a.name for a in goal.args if isinstance(a, ShapeInstance)]
    found += [o for o in map(owner, reads) if o is not None]
    return tuple(dict.fromkeys(found))


def _conflicts(
    problem: Any,
    result: OptimizeResult,
    final: Any,
    diagnosis: Diagnosis,
    reads: dict[tuple[str, int], tuple[int, ...]],
) -> list[Conflict]:
    groups: dict[frozenset[str], list[int]] = {}
    for k, g in enumerate(diagnosis.goals):
        if g.kind == "constraint" and g.shapes:
            groups.setdefault(frozenset(g.shapes), []).append(k)
    varying = final.varying if final is not None else np.ones(problem.n_inputs, bool)
    out: list[Conflict] = []
    compared = 0
    for members in groups.values():
        for n, a in enumerate(members):
            for b in members[n + 1 :]:
                ga, gb = diagnosis.goals[a], diagnosis.goals[b]
                if (ga.line, ga.column, ga.function) == (gb.line, gb.column, gb.function):
                    continue  # one statement's matches: the same wish, not two
                if frozenset((ga.function, gb.function)) in INCOMPATIBLE:
                    out.append(Conflict(a, b, ga.shapes, True))
                    continue
                if compared >= MAX_GRADIENT_PAIRS:
                    continue
                compared += 1
                inputs = [
                    i
                    for i in dict.fromkeys(
                        reads.get(("constraint", ga.index), ()) + reads.get(("constraint", gb.index), ())
                    )
                    if varying[i]
                ][:MAX_PAIR_INPUTS]
                if inputs and _opposed(problem, result.x, inputs, ga.index, gb.index):
                    out.append(Conflict(a, b, ga.shapes, False))
    return out


def _opposed(problem: Any, x: np.ndarray, inputs: Sequence[int], i: int, j: int) -> bool:
    """Whether constraints i and j's gradients over ``inputs`` (central differences) have a negative
    dot product."""
    grad = np.zeros((2, len(inputs)))
    for k, s in enumerate(inputs):
        h = 1e-5 * max(1.0, abs(float(x[s])))
        up, down = x.copy(), x.copy()
        up[s] += h
        down[s] -= h
        cu, cd = problem.goal_values(up).constraints, problem.goal_values(down).constraints
        grad[0, k] = (cu[i] - cd[i]) / (2 * h)
        grad[1, k] = (cu[j] - cd[j]) / (2 * h)
    if not np.isfinite(grad).all():
        return False
    return float(grad[0] @ grad[1]) < 0.0
