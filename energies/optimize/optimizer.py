"""Penrose's layout optimizer: an exterior-point quadratic penalty method with L-BFGS inside.

The method (Penrose ``packages/core/src/engine/Optimizer.ts``, Engineering Optimization p. 443):
minimize, for a growing constraint weight λ,

    φ(x, λ) = Σ objectives(x) + λ · Σ max(constraint(x), 0)²

where a constraint value <= 0 means satisfied. Each *exterior-point round* runs L-BFGS on φ for a
fixed λ until the unconstrained test passes; then λ is multiplied by ``WEIGHT_GROWTH_FACTOR`` and the
next round starts from the previous round's point with a fresh L-BFGS memory. Penrose's constants:

- λ starts at ``INIT_CONSTRAINT_WEIGHT`` = 1e3 and grows 10× per round;
- unconstrained test: ``gᵀ H g < energies.optimize.lbfgs.UO_STOP`` (1e-2), the Newton decrement with
  the L-BFGS inverse Hessian H, taken at the point the last line search started from (as Penrose's
  ``minimize`` does);
- exterior-point test, only from the third round on (``EPround > 1``): the rounds' end points moved
  less than ``EP_STOP`` (1e-3, Euclidean) or their energies differ by less than ``EP_STOP``.

With λ = 1e3, 1e4, 1e5 a converging stage therefore needs at least three rounds; ``ep_rounds``
counts the λ increases (Penrose's ``EPround``), so it is 2 in that case, as in Penrose's results.

Layout stages (Style's ``layout = [...]``): each stage has its own mask of varying inputs (the
others stay frozen at their current values), and its own active objectives and constraints. Stages
run in order, each from where the previous one stopped, each restarting at λ = 1e3 (Penrose's
``nextStage`` resets the optimizer parameters).

The inner solver, and its measured overheads, are in :mod:`energies.optimize.lbfgs`.

The first ``optimize`` call makes BLAS single-threaded for the rest of the process
(threadpoolctl): L-BFGS-B's tiny LAPACK calls would otherwise pay OpenBLAS's thread hand-offs, and
a per-call limit would cost more than the calls.

Non-finite values: an energy or gradient that is NaN or ±inf at a point a round accepts (not a
line search's trial point, which Penrose's search backs off from) raises :class:`OptimizeError`
naming the goal responsible, by its Style place: a goal whose value is not finite, else one whose
gradient is not (from the goal Jacobian), else, when every value is finite and their sum overflowed,
the largest term (an objective's value or a constraint's λ·max(c, 0)²).

Constant constraints (ours): an active constraint that reads no input varying in the stage
(``StageSpec.fixed``) adds the constant λ·max(c, 0)² to φ. When it is violated, Penrose's
exterior-point test, which compares φ between rounds, sees φ grow 10x a round whatever the layout
does, so only the points' distance can end the loop, and the weight grows until φ loses the
objectives to rounding or overflows (set-theory's tree.style on 128 sets, whose canvas-sized frame
can never be on the canvas: λ = 1e308). The test therefore compares φ less that constant, computed
once per stage from the goal values; gradients and line searches see φ as it is, and a stage whose
constant constraints are satisfied runs exactly Penrose's rounds.

The problem is supplied by the energy compiler through the small :class:`PenaltyProblem` protocol:

- ``n_inputs``; ``objective_names`` / ``constraint_names``: each goal as the Style wrote it, e.g.
  ``"disjoint(A.icon, B.icon)"``, used in errors and the result;
- ``stages``: :class:`StageSpec` (name, ``varying`` bool mask over inputs, ``objectives`` and
  ``constraints`` bool masks over goals);
- ``energy_and_grad(x, stage, weight)``: φ and its full gradient (length ``n_inputs``) at ``x`` for
  the stage's active goals; the optimizer ignores the gradient of frozen inputs (where goals are
  culled, `energies.compile.culling`, only the entries of the stage's varying inputs are exact);
- ``goal_values(x)``: :class:`GoalValues`, the value of every goal (masks not applied);
- ``goal_jacobian(x)``: (objective Jacobian, constraint Jacobian), dense or scipy sparse, called
  only to locate a non-finite gradient where no goal's value is non-finite;
- optionally ``constraint_values(x, which, stage)`` (:class:`SelectiveValues`): the values of the
  constraints ``which`` (a bool mask) alone, where evaluating fewer goals is cheaper; without it the
  optimizer takes them from ``goal_values``. Given ``stage`` (the constraints are that stage's), a
  value may read 0 where the problem has proved the constraint's penalty term max(c, 0)² is 0 at
  x: the checks that pass it read positive parts alone.
- optionally ``new_run()`` (:class:`FreshRuns`): called as each run of ``optimize`` begins, for a
  problem that adapts to the points it is asked about (culling's policy) and must not carry one
  start's steps into the next.
- optionally ``energy_alone(x, stage, weight, above)`` (:class:`ValueOnly`; None where it would
  not pay): φ alone, the very number ``energy_and_grad`` answers there, at less cost, except that
  where φ exceeds ``above`` it may answer a smaller number that still exceeds it
  (``penrose_lbfgs.ValueAbove``). Line searches use it for trial points likely to fail their
  sufficient-decrease test, ``above`` their Armijo bound (:mod:`energies.optimize.penrose_lbfgs`);
  the gradient is then asked at the same point only when the test passes. It counts as the
  point's evaluation.

``optimize(problem, x0, max_iters=, time_limit=, on_progress=, stage_evaluations=)`` returns
:class:`OptimizeResult`. Iterations (L-BFGS-B iterations, summed over rounds and stages) and wall
time are bounded; when a bound is hit the result holds the last accepted point, that stage's status
says which bound, and later stages are reported ``"NotRun"``.

Beyond Penrose, the *feasibility finish* (``finish=True``, the default): Penrose's test can pass
while a constraint is still above ``SATISFIED_TOLERANCE`` (its rounds' points moved less than
``EP_STOP`` although a steep constraint still exceeds it). A stage that converged so then runs up to
``FINISH_ROUNDS`` more rounds, λ growing 10x each, while an active constraint that the stage's
inputs can change (``StageSpec.fixed``) is violated, within as many evaluations again as the stage
took (at least ``FINISH_MIN_EVALUATIONS``). Rules, and why:

- The finish's rounds use scipy's L-BFGS-B, whose line search stays in the layout's basin (Penrose's
  first step along the raw gradient can jump across a kink of max(c, 0)² under a large λ).
- They end by L-BFGS-B's own tests (``FINISH_FACTR``, ``FINISH_PGTOL``), not Penrose's gᵀHg < 1e-2:
  under λ >= 1e6 the L-BFGS inverse Hessian H takes the scale of the stiffest penalty after a step
  or two, so gᵀHg passes while the softer constraints' violation has barely moved.
- A round is kept only if it lowered φ at its weight (φ where it began against φ where it ended,
  both its own evaluations) and at least halved that violation (``FINISH_PROGRESS``); otherwise the
  stage ends where the rounds before left it.
- A round also ends when it has stalled: its φ fell by at most ``FINISH_STALL_RTOL`` of its size
  over the last ``FINISH_STALL_WINDOW`` iterations while the violation is not yet halved. Such a
  round is undone as one cut by its budget would be (constraints that contradict each other hold
  the violation), so ending it early saves the evaluations and keeps the layout.
- A last stage without objectives is finished further: its φ is the penalty alone, and its rounds
  go on while φ is ``EP_STOP`` or more, the bar under which the portfolio calls such a layout
  optimal (:mod:`energies.optimize.portfolio`). Its constraints may all be within the tolerance
  while a few overlap by 1e-4 px, which reports φ above the bar at λ = 1e5: a finish round or two
  (tens of evaluations) takes them to 0, where another start would cost a whole layout.
- A stage whose constraints Penrose's rounds satisfy (and, without objectives, whose φ is below
  ``EP_STOP``) is not touched. The finish is deterministic.

Guards against runs Penrose would not make (ours; a stage that converges as Penrose's does never
meets them). Each cuts its stage short, says so in the stage's status, and the next stage runs
from where it stopped, as after convergence:

- ``"Stalled"``: a round made no meaningful progress over ``energies.optimize.lbfgs.STALL_WINDOW``
  iterations (see :mod:`energies.optimize.lbfgs`); higher weights would only stiffen the same crawl.
- ``"StageBudget"``: the stage spent its evaluations, ``stage_evaluations`` (default
  :func:`default_stage_evaluations`: 15,000, or 20 per varying input for large problems), above
  what any of Penrose's own registry runs needs for all its stages together, so a stage that needs
  more is in a basin Penrose does not visit.

The registry runs behind each constant: docs/optimizer-evidence.md.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, TypeAlias, runtime_checkable

import numpy as np
from scipy import sparse
from threadpoolctl import threadpool_limits

from energies.optimize.lbfgs import Driver, InnerSolver, RoundOutcome, drive_setulb, pick_driver, run_round
from energies.optimize.scipy_lbfgsb import load_lbfgsb

INIT_CONSTRAINT_WEIGHT = 1e3
WEIGHT_GROWTH_FACTOR = 10.0
EP_STOP = 1e-3
# Penrose has no satisfaction tolerance of its own; its benchmark counts a constraint as violated
# when its value exceeds 1e-3 (the same number as EP_STOP).
SATISFIED_TOLERANCE = 1e-3

# The feasibility finish (ours): at most this many extra rounds per stage, spending at most as many
# evaluations as the stage's Penrose rounds did (or FINISH_MIN_EVALUATIONS, when they were few).
FINISH_ROUNDS = 6
FINISH_MIN_EVALUATIONS = 500
FINISH_PROGRESS = 0.5
# The finish's rounds end by L-BFGS-B's own tests, not Penrose's decrement (module docstring): a
# relative decrease of φ below FINISH_FACTR machine epsilons (10, scipy's "extremely high accuracy")
# or every gradient component below FINISH_PGTOL (scipy's default).
FINISH_FACTR = 10.0
FINISH_PGTOL = 1e-5
FINISH_DRIVER = functools.partial(drive_setulb, factr=FINISH_FACTR, pgtol=FINISH_PGTOL)
# A finish round whose φ fell by at most FINISH_STALL_RTOL of its size over FINISH_STALL_WINDOW
# iterations, with the violation not yet halved, has stalled (module docstring): the tolerance sits
# between the falls of rounds held by contradictory constraints and those of crawling rounds that
# were kept (docs/optimizer-evidence.md).
FINISH_STALL_WINDOW = 100
FINISH_STALL_RTOL = 1e-4

STAGE_EVALUATIONS = 15_000
STAGE_EVALUATIONS_PER_INPUT = 20

StageStatus = Literal["EPConverged", "Stalled", "StageBudget", "MaxIterations", "TimeLimit", "NotRun"]
# Statuses after which later stages still run: the cut is the stage's own, not a global bound.
_STAGE_CUTS = ("Stalled", "StageBudget")


class OptimizeError(Exception):
    """The energy or its gradient became NaN or infinite; ``goal`` names the culprit if found."""

    def __init__(self, message: str, *, goal: str | None, stage: str, x: np.ndarray) -> None:
        super().__init__(message)
        self.goal = goal
        self.stage = stage
        self.x = x


Jacobian: TypeAlias = "np.ndarray | sparse.sparray"  # goals x inputs, dense or scipy sparse


@dataclass(frozen=True)
class StageSpec:
    name: str
    varying: np.ndarray  # bool, one per input
    objectives: np.ndarray  # bool, one per objective: active in this stage
    constraints: np.ndarray  # bool, one per constraint
    # bool, one per constraint: reads no input varying in this stage, so no round can change it
    # (energies.compile knows from its tables; None: unknown, every constraint may move)
    fixed: np.ndarray | None = None
    # applied to x as the stage begins, after an earlier one: carry(x when the previous stage began,
    # x, the previous stage's varying, this stage's varying) moves inputs in place
    # (energies.optimize.structure.stage_carry); None: x as the previous stage left it
    carry: Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], None] | None = None


@dataclass(frozen=True)
class GoalValues:
    objectives: np.ndarray
    constraints: np.ndarray


class PenaltyProblem(Protocol):
    n_inputs: int
    objective_names: Sequence[str]
    constraint_names: Sequence[str]
    stages: Sequence[StageSpec]

    def energy_and_grad(self, x: np.ndarray, stage: int, weight: float) -> tuple[float, np.ndarray]: ...

    def goal_values(self, x: np.ndarray) -> GoalValues: ...

    def goal_jacobian(self, x: np.ndarray) -> tuple[Jacobian, Jacobian]: ...


@runtime_checkable
class SelectiveValues(Protocol):
    def constraint_values(self, x: np.ndarray, which: np.ndarray, stage: int | None = None) -> np.ndarray: ...


@runtime_checkable
class FreshRuns(Protocol):
    def new_run(self) -> None: ...


@runtime_checkable
class ValueOnly(Protocol):
    energy_alone: Callable[[np.ndarray, int, float, float], float] | None


def constraint_values(
    problem: PenaltyProblem, x: np.ndarray, which: np.ndarray, stage: int | None = None
) -> np.ndarray:
    """The values of the constraints `which` (bool mask) at x, in constraint order; with `stage`,
    those of that stage, 0 where the problem proved the penalty term 0 (`SelectiveValues`)."""
    if isinstance(problem, SelectiveValues):
        return problem.constraint_values(x, which, stage)
    return np.asarray(problem.goal_values(x).constraints)[which]


@dataclass(frozen=True)
class Progress:
    stage: int
    stage_name: str
    ep_round: int
    weight: float
    iterations: int  # total so far, all stages
    energy: float
    start: int = 0  # which start of a multi-start layout (energies.optimize.portfolio)


@dataclass(frozen=True)
class StageReport:
    name: str
    status: StageStatus
    iterations: int
    evaluations: int
    ep_rounds: int
    weight: float
    energy: float
    finish_rounds: int = 0  # rounds of the feasibility finish among ep_rounds (ours, not Penrose's)


@dataclass(frozen=True)
class GoalReport:
    name: str
    kind: Literal["objective", "constraint"]
    value: float
    satisfied: bool | None  # None for objectives


@dataclass(frozen=True)
class OptimizeResult:
    x: np.ndarray
    status: StageStatus  # "EPConverged" when every stage converged, else the first other status
    stages: list[StageReport]
    iterations: int
    evaluations: int  # energy+gradient evaluations (Penrose's nGradEvals counts these)
    ep_rounds: int  # of the last stage that ran (Penrose reports its final state's EPround)
    energy: float  # φ at x for the last stage that ran, at its final weight
    objective_energy: float  # the objectives' part of `energy` (the rest is the constraint penalty)
    weight: float  # the last stage's final constraint weight, at which `energy` is taken
    penalty: float  # Σ max(c, 0)² over the final stage's constraints: energy = objective + weight·penalty
    goals: Sequence[GoalReport]
    max_constraint_violation: float  # largest constraint value (0.0 when there are none)
    n_violated: int  # constraints with value > SATISFIED_TOLERANCE
    seconds: float
    # Violated constraints of the final stage that no stage could change: each reads no input that
    # varies in any stage where it applies (indices into constraint_names; empty when unknown).
    infeasible: tuple[int, ...] = ()
    infeasible_penalty: float = 0.0  # Σ max(c, 0)² over `infeasible`: the part of `penalty` no stage changes
    max_movable_violation: float = 0.0  # the largest value among the final stage's other constraints (or 0)


# ---------------------------------------------------------------------------------------------
# Non-finite diagnosis, stages and the exterior-point loop.


def _blame_nonfinite(
    problem: PenaltyProblem, x: np.ndarray, stage: StageSpec, weight: float
) -> tuple[str | None, str]:
    """The active goal responsible for a non-finite φ or gradient, and how: first a goal whose value
    is not finite, then one whose gradient is not, else (every value finite: the sum overflowed) the
    largest term of φ, an objective's value or a constraint's λ·max(c, 0)²."""
    values = problem.goal_values(x)
    named = [
        (values.objectives, stage.objectives, problem.objective_names),
        (values.constraints, stage.constraints, problem.constraint_names),
    ]
    for vals, active, names in named:
        for i in np.flatnonzero(active & ~np.isfinite(vals)).tolist():
            return names[i], "its value is not finite"
    for jac, (_, active, names) in zip(problem.goal_jacobian(x), named):
        for i in np.flatnonzero(active & _nonfinite_rows(jac, len(names), stage.varying)).tolist():
            return names[i], "its gradient is not finite"
    with np.errstate(over="ignore"):
        terms = [
            (np.abs(values.objectives), stage.objectives, problem.objective_names),
            (weight * np.maximum(values.constraints, 0.0) ** 2, stage.constraints, problem.constraint_names),
        ]
    largest: tuple[float, str] | None = None
    for size, active, names in terms:
        if active.any():
            i = int(np.flatnonzero(active)[np.argmax(size[active])])
            if largest is None or size[i] > largest[0]:
                largest = (float(size[i]), names[i])
    if largest is None:
        return None, ""
    return largest[1], f"the largest term of a sum that overflowed ({largest[0]:.3g})"


def _nonfinite_rows(jac: Jacobian, goals: int, varying: np.ndarray) -> np.ndarray:
    """Per goal: whether its gradient has a non-finite entry among the varying inputs (a dense or
    a scipy sparse Jacobian, goals x inputs)."""
    if sparse.issparse(jac):
        entries = sparse.coo_array(jac)
        bad = np.zeros(goals, bool)
        bad[entries.row[~np.isfinite(entries.data) & varying[entries.col]]] = True
        return bad
    return ~np.all(np.isfinite(np.asarray(jac).reshape(goals, -1)[:, varying]), axis=1)


def _check_problem(problem: PenaltyProblem, x0: np.ndarray) -> None:
    if x0.shape != (problem.n_inputs,):
        raise ValueError(f"x0 has shape {x0.shape}, expected ({problem.n_inputs},)")
    counts = {
        "varying": problem.n_inputs,
        "objectives": len(problem.objective_names),
        "constraints": len(problem.constraint_names),
    }
    for stage in problem.stages:
        for field, expected in counts.items():
            mask = getattr(stage, field)
            if mask.shape != (expected,) or mask.dtype != np.bool_:
                raise ValueError(
                    f"stage {stage.name!r}: mask {field!r} has shape {mask.shape} and dtype {mask.dtype},"
                    f" expected ({expected},) bool"
                )


class GoalReports(Sequence[GoalReport]):
    """Every goal's final value: objectives, then constraints. Reports are made when read (a
    diagram can have hundreds of thousands of goals, and naming each costs more than the layout)."""

    def __init__(self, problem: PenaltyProblem, values: GoalValues) -> None:
        self.names = (problem.objective_names, problem.constraint_names)
        self.values = (np.asarray(values.objectives, float), np.asarray(values.constraints, float))

    def __len__(self) -> int:
        return len(self.values[0]) + len(self.values[1])

    def __iter__(self) -> Iterator[GoalReport]:
        """Every report, the names made in bulk (500,000 one by one cost seconds)."""
        objectives, constraints = (names[:] for names in self.names)
        for name, v in zip(objectives, self.values[0].tolist()):
            yield GoalReport(name, "objective", v, None)
        for name, v in zip(constraints, self.values[1].tolist()):
            yield GoalReport(name, "constraint", v, v <= SATISFIED_TOLERANCE)

    def __getitem__(self, i: int | slice) -> GoalReport | list[GoalReport]:  # type: ignore[override]
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]  # type: ignore[misc]
        n_objectives = len(self.values[0])
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        if i < n_objectives:
            return GoalReport(self.names[0][i], "objective", float(self.values[0][i]), None)
        v = float(self.values[1][i - n_objectives])
        return GoalReport(self.names[1][i - n_objectives], "constraint", v, v <= SATISFIED_TOLERANCE)


def _ep_converged(x_prev: np.ndarray, e_prev: float, x_now: np.ndarray, e_now: float) -> bool:
    return float(np.linalg.norm(x_now - x_prev)) < EP_STOP or abs(e_now - e_prev) < EP_STOP


def default_stage_evaluations(n_inputs: int) -> int:
    """Each stage's evaluation budget unless the caller gives one (module docstring)."""
    return max(STAGE_EVALUATIONS, STAGE_EVALUATIONS_PER_INPUT * n_inputs)


@dataclass
class _Budget:
    """What the stages share: the iteration and time limits and the running totals."""

    max_iters: int
    deadline: float
    driver: Driver
    on_progress: Callable[[Progress], None] | None
    iterations: int = 0
    evaluations: int = 0
    stage_evaluations: float = math.inf  # each stage's own budget
    finish: bool = True  # the feasibility finish (module docstring)


_ROUND_CUTS: dict[str, StageStatus] = {
    "max_iters": "MaxIterations",
    "time_limit": "TimeLimit",
    "evaluation_budget": "StageBudget",
    "stalled": "Stalled",
}


def _run_stage(problem: PenaltyProblem, x: np.ndarray, s: int, budget: _Budget) -> StageReport:
    """Exterior-point rounds on stage ``s`` until Penrose's test passes; updates ``x`` in place."""
    # Over 80 lines on purpose: the rounds, the feasibility finish and their closures share the
    # stage's running weight, point and counts; split apart they would pass all of it back and forth.
    stage = problem.stages[s]
    weight, ep_round = INIT_CONSTRAINT_WEIGHT, 0

    all_vary = bool(stage.varying.all())

    def energy_of_varying(xv: np.ndarray, trial: bool = False) -> tuple[float, np.ndarray]:
        if all_vary:  # the common case: skip the masking copies
            point = xv
            f, g = problem.energy_and_grad(point, s, weight)
            g = np.asarray(g, dtype=np.float64)
        else:
            point = x.copy()
            point[stage.varying] = xv
            f, g = problem.energy_and_grad(point, s, weight)
            g = np.asarray(g, dtype=np.float64)[stage.varying]
        if not (math.isfinite(f) and np.isfinite(g).all()):
            if trial:  # a line search's trial point: it backs off from it (see energies.optimize.lbfgs)
                return math.inf, np.full(g.shape, np.nan)
            goal, how = _blame_nonfinite(problem, point, stage, weight)
            what = f"goal {goal}: {how}" if goal else "no active goal"
            raise OptimizeError(
                f"stage {stage.name!r}: energy {f} or its gradient is not finite at weight {weight:g};"
                f" caused by {what}",
                goal=goal,
                stage=stage.name,
                x=point,
            )
        return float(f), g

    alone = problem.energy_alone if isinstance(problem, ValueOnly) else None

    def value_of_varying(xv: np.ndarray, above: float) -> float:
        """φ alone at a line search's trial point (non-finite: inf, as energy_of_varying answers;
        above `above`, possibly a partial sum: `ValueOnly`)."""
        assert alone is not None
        point = xv if all_vary else x.copy()
        if not all_vary:
            point[stage.varying] = xv
        f = alone(point, s, weight, above)
        return float(f) if math.isfinite(f) else math.inf

    def report(round_iters: int, f: float) -> None:
        if budget.on_progress is not None:
            total = budget.iterations + round_iters
            budget.on_progress(Progress(s, stage.name, ep_round, weight, total, f))

    if not stage.varying.any():  # nothing to move: trivially converged
        energy, _ = problem.energy_and_grad(x, s, weight)
        budget.evaluations += 1
        return StageReport(stage.name, "EPConverged", 0, 1, 0, weight, float(energy))
    iterations = evaluations = 0

    def stalled_finish(violation: float) -> Callable[[int, float, np.ndarray], bool]:
        """The finish round's stall test (module docstring): φ checked every FINISH_STALL_WINDOW
        iterations, the violation (one more evaluation) only once φ has stopped falling."""
        checked = [math.inf]  # φ at the last multiple of the window

        def stop(k: int, f: float, xv: np.ndarray) -> bool:
            if k % FINISH_STALL_WINDOW:
                return False
            before, checked[0] = checked[0], f
            if before - f > FINISH_STALL_RTOL * max(abs(f), 1.0):
                return False
            point = x.copy()
            point[stage.varying] = xv
            return _movable_violation(problem, point, stage, s) > FINISH_PROGRESS * violation

        return stop

    def next_round(limit: float = math.inf, finish: float | None = None) -> RoundOutcome:
        """One round; ``finish``: a finish round, from a layout violating its constraints by this much."""
        nonlocal iterations, evaluations
        outcome = run_round(
            energy_of_varying,
            x[stage.varying],
            driver=budget.driver if finish is None else FINISH_DRIVER,
            iteration_budget=budget.max_iters - budget.iterations,
            deadline=budget.deadline,
            report=report,
            evaluation_budget=min(budget.stage_evaluations - evaluations, limit),
            trial_fun=functools.partial(energy_of_varying, trial=True),
            value_fun=None if alone is None else value_of_varying,
            penrose_test=finish is None,
            stop=None if finish is None else stalled_finish(finish),
        )
        x[stage.varying] = outcome.x
        iterations += outcome.iterations
        evaluations += outcome.evaluations
        budget.iterations += outcome.iterations
        budget.evaluations += outcome.evaluations
        return outcome

    # The penalty of the active constraints no input of this stage can move: a constant of the stage,
    # left out of the exterior-point test's energies (module docstring, "Constant constraints").
    constant = _constant_penalty(problem, x, stage)
    last_ep: tuple[np.ndarray, float] | None = None
    status: StageStatus = "EPConverged"
    while True:
        outcome = next_round()
        if outcome.reason != "converged":
            status = _ROUND_CUTS[outcome.reason]
            break
        energy = outcome.energy - weight * constant if constant else outcome.energy
        if ep_round > 1 and last_ep is not None and _ep_converged(*last_ep, outcome.x, energy):
            break
        # The next round starts where this one ended, with a harsher penalty and fresh L-BFGS memory.
        last_ep = (outcome.x, energy)
        weight *= WEIGHT_GROWTH_FACTOR
        ep_round += 1
    finish_rounds = 0
    if status == "EPConverged" and budget.finish:
        end = evaluations + max(FINISH_MIN_EVALUATIONS, evaluations)
        # A last stage without objectives counts as finished only once its φ, the penalty alone, is
        # below EP_STOP, the bar at which the portfolio calls a layout optimal (module docstring).
        polish = s == len(problem.stages) - 1 and not stage.objectives.any()
        movable = _movable_values(problem, x, stage, s)
        violation = _largest_of(movable)

        def unfinished() -> bool:
            return violation > SATISFIED_TOLERANCE or (polish and weight * _penalty(movable) >= EP_STOP)

        if unfinished():
            load_finish_solver()
        while finish_rounds < FINISH_ROUNDS and evaluations < end and unfinished():
            kept = (x.copy(), weight, outcome)
            weight *= WEIGHT_GROWTH_FACTOR
            outcome = next_round(end - evaluations, finish=violation)
            movable = _movable_values(problem, x, stage, s)
            now = _largest_of(movable)
            # A round is kept only if it lowered φ at its weight (Penrose's line search takes its
            # last trial step even when no step descends, which at a kink of max(c, 0)² under a
            # large λ can jump far) and at least halved the violation (a quadratic penalty's falls
            # about tenfold per tenfold weight; less means the constraint is held by others or flat
            # where violated). Otherwise the layout stays where the rounds before left it.
            if outcome.reason not in ("converged", "stalled") and (
                outcome.reason != "evaluation_budget" or evaluations >= budget.stage_evaluations
            ):
                status = _ROUND_CUTS[outcome.reason]  # a bound of the whole run, not the finish's own
            if outcome.energy > outcome.initial_energy or now > FINISH_PROGRESS * violation:
                x[...], weight, outcome = kept
                break
            ep_round += 1
            finish_rounds += 1
            violation = now
            if outcome.reason != "converged":
                break
    return StageReport(
        stage.name, status, iterations, evaluations, ep_round, weight, outcome.energy, finish_rounds
    )


def _constant_penalty(problem: PenaltyProblem, x: np.ndarray, stage: StageSpec) -> float:
    """Σ max(c, 0)² over the active constraints that read no input varying in the stage (0 if none)."""
    if stage.fixed is None or not (stage.fixed & stage.constraints).any():
        return 0.0
    return _penalty(constraint_values(problem, x, stage.fixed & stage.constraints))


def _penalty(values: np.ndarray) -> float:
    """Σ max(c, 0)² over constraint values."""
    return float(np.sum(np.maximum(values, 0.0) ** 2))


def _largest(values: np.ndarray, active: np.ndarray) -> float:
    """The largest of the active values, or 0 (also when all are below 0 or none is active)."""
    return _largest_of(values[active])


def _movable_values(problem: PenaltyProblem, x: np.ndarray, stage: StageSpec, s: int) -> np.ndarray:
    """The values of the active constraints that stage s's inputs can change, as far as their
    positive parts go (a value proved satisfied may read 0: `constraint_values`)."""
    active = stage.constraints if stage.fixed is None else stage.constraints & ~stage.fixed
    return constraint_values(problem, x, active, s) if active.any() else np.zeros(0)


def _largest_of(values: np.ndarray) -> float:
    """The largest of `values`, or 0 (also when all are below 0 or there are none)."""
    return max(0.0, float(np.max(values))) if values.size else 0.0


def _movable_violation(problem: PenaltyProblem, x: np.ndarray, stage: StageSpec, s: int) -> float:
    """The largest value of an active constraint that stage s's inputs can change (0 if none)."""
    return _largest_of(_movable_values(problem, x, stage, s))


@functools.cache
def _single_threaded_blas() -> None:
    # L-BFGS-B's LAPACK calls are tiny: a thread hand-off costs more than the call, and on a shared
    # machine a thread may wait for a core (docs/optimizer-evidence.md).
    threadpool_limits(limits=1, user_api="blas")


@functools.cache
def load_finish_solver() -> None:
    """Load the finish's L-BFGS-B (scipy's, 0.2-1.5 s to import) and keep its BLAS single-threaded;
    done on the first finish, or beforehand by a process's warm-up (service.workers.warm_up)."""
    # The limit reaches only libraries already loaded, and scipy's OpenBLAS (not numpy's) loads
    # with L-BFGS-B: limit it too, once it is in.
    load_lbfgsb()

    threadpool_limits(limits=1, user_api="blas")


def optimize(
    problem: PenaltyProblem,
    x0: np.ndarray,
    *,
    max_iters: int = 100_000,
    time_limit: float | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    inner_solver: InnerSolver = "auto",
    stage_evaluations: int | None = None,
    finish: bool = True,
) -> OptimizeResult:
    """Run every layout stage of ``problem`` from ``x0``; see the module docstring (``finish=False``:
    Penrose's rounds only, no feasibility finish)."""
    x = np.array(x0, dtype=np.float64)
    _check_problem(problem, x)
    if isinstance(problem, FreshRuns):
        problem.new_run()
    started = time.perf_counter()
    deadline = started + time_limit if time_limit is not None else np.inf
    budget = _Budget(max_iters, deadline, pick_driver(inner_solver), on_progress, finish=finish)
    budget.stage_evaluations = (
        default_stage_evaluations(problem.n_inputs) if stage_evaluations is None else stage_evaluations
    )
    stage_reports: list[StageReport] = []
    _single_threaded_blas()
    began = x.copy()
    for s, stage in enumerate(problem.stages):
        if s > 0 and stage.carry is not None:
            stage.carry(began, x, problem.stages[s - 1].varying, stage.varying)
        began = x.copy()
        stage_reports.append(_run_stage(problem, x, s, budget))
        if stage_reports[-1].status not in ("EPConverged", *_STAGE_CUTS):
            break
    last = stage_reports[-1] if stage_reports else None
    for stage in problem.stages[len(stage_reports) :]:
        stage_reports.append(StageReport(stage.name, "NotRun", 0, 0, 0, INIT_CONSTRAINT_WEIGHT, np.nan))
    goals = GoalReports(problem, problem.goal_values(x))
    # As Penrose reports a layout: the constraints of the last stage that ran (a constraint of an
    # earlier stage only, e.g. `ensure ... in dots`, is not required of the final layout).
    ran = len([r for r in stage_reports if r.status != "NotRun"])
    final = problem.stages[ran - 1] if problem.stages else None
    values = goals.values[1]
    constraint_values = values[final.constraints] if final is not None else values
    objective_values = goals.values[0][final.objectives] if final is not None else goals.values[0]
    overall: StageStatus = next((r.status for r in stage_reports if r.status != "EPConverged"), "EPConverged")
    # φ at the final point (as Penrose's runner reports evalEnergy of the final state). A round's own
    # energy is φ where its last line search began (Penrose's lastUOenergy, which its
    # exterior-point test compares), one step before the point it returns.
    objective = float(objective_values.sum())
    penalty = _penalty(constraint_values)
    weight = last.weight if last else float("nan")
    energy = objective + weight * penalty
    infeasible = _infeasible(problem, final, values)
    return OptimizeResult(
        x=x,
        status=overall,
        stages=stage_reports,
        iterations=budget.iterations,
        evaluations=budget.evaluations,
        ep_rounds=last.ep_rounds if last else 0,
        energy=energy,
        objective_energy=objective,
        weight=weight,
        penalty=penalty,
        goals=goals,
        max_constraint_violation=float(constraint_values.max()) if constraint_values.size else 0.0,
        n_violated=int(np.count_nonzero(constraint_values > SATISFIED_TOLERANCE)),
        seconds=time.perf_counter() - started,
        infeasible=infeasible,
        infeasible_penalty=_penalty(values[list(infeasible)]),
        max_movable_violation=_max_movable(values, final, infeasible),
    )


def _max_movable(values: np.ndarray, final: StageSpec | None, infeasible: tuple[int, ...]) -> float:
    """The largest value among the final stage's constraints other than ``infeasible`` (0 if none)."""
    active = np.ones(len(values), bool) if final is None else final.constraints.copy()
    active[list(infeasible)] = False
    return _largest(values, active)


def _infeasible(problem: PenaltyProblem, final: StageSpec | None, values: np.ndarray) -> tuple[int, ...]:
    """Violated constraints of the final stage that read no input varying in any stage where they
    apply: their gradient is zero wherever they are active, so no optimizer could satisfy them."""
    if final is None:
        return ()
    fixed = final.constraints & (values > SATISFIED_TOLERANCE)
    for stage in problem.stages:
        if stage.fixed is None:
            return ()
        fixed &= stage.fixed | ~stage.constraints
    return tuple(np.flatnonzero(fixed).tolist())
