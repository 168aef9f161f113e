"""Multi-start layout: optimize from several initial states and keep the best layout.

    starts = portfolio_starts(diagram.unknowns, variation, k, diagram)
    result = optimize_portfolio(problem, starts, settings=PortfolioSettings(...))

Penrose users press "resample" until a diagram looks right: the exterior-point method is a local
method, and labels or shapes can settle in a poor local minimum (stacked labels, a shape stuck
behind another). A portfolio does the resampling for them. Start 0 is the variation's own initial
state, so ``starts=1`` is exactly Penrose's single run; start k >= 1 draws every sampled unknown
(positions and sizes; colors stay) again from its sampling range with a generator seeded from the
variation and k, so the same variation always gives the same starts and the same layout. A large
diagram whose Substance relates many objects (energies.optimize.structure) starts first from its
structure instead (with two starts or more): from random places its layout is a fold the local
goals cannot undo; the variation's own state comes second.

All starts share one compiled energy. The rules below take them one after another; with
``processes`` > 1 later starts are computed ahead in forked processes (energies.optimize.parallel_starts),
which changes the time, never the layout (a service keeps 1: its workers already keep the cores
busy).

Constraints proved constant (``OptimizeResult.infeasible``: violated, and reading nothing any stage
varies, such as a frame larger than the canvas) are left out of every judgement below: a layout
*satisfies* its constraints when every other one is within the optimizer's tolerance, and no start
is spent on them.

Which layout is best, as a user sees it: one with every constraint satisfied (none above the
optimizer's tolerance) beats any other. Every layout is then compared by its objectives plus the
constraint penalty Σ max(c, 0)² at one weight for all: the one start 0, Penrose's own run, ended at.
Its exterior-point loop raised the weight until the constraints stopped moving, so that weight says
how much this diagram's constraints must count against its objectives (a harness comparing with
Penrose takes energies at Penrose's weight too). Each start's own final energy would not compare:
every extra exterior-point round multiplies its penalty part by 10 at the same point, which says
nothing about the picture. Among layouts that leave constraints violated, how far they are violated
is then what shows (a label far off the canvas ranks below boxes that overlap by a fraction of a
pixel); counting them would not. Ties go to the earlier start.

What bounds the work, all deterministic unless a time budget cuts in:

- ``starts``: at most this many (but see "unmet");
- ``max_evaluations``: a further start runs only if the evaluations so far plus those of the
  costliest finished resampled start stay within it, so expensive layouts (tens of thousands of
  evaluations) keep a single start, and it may take at most the iterations left in it (a start cut
  by this is dropped, its work wasted: hence room for the costliest). Start 0's cost does not
  predict a resampled start's (Penrose's initial state can be several times costlier than any
  resampled one), so until a resampled start has finished, the room asked is a quarter of start
  0's; a wrong guess wastes at most what is left of the budget;
- a wandering start: a further start may take at most ``WANDER_FACTOR`` times start 0's
  evaluations (at least ``WANDER_FLOOR``); one that needs more has left the basins start 0's problem
  settles in (a resampled start can land where a stiff penalty crawls for thousands of iterations),
  is dropped, and ends the portfolio; its work is wasted, so the bound is as tight as the starts
  the registry keeps allow;
- optimality: when the last stage has no objectives, the energy is the penalty alone and no layout
  can report less than 0; one that satisfies every constraint and reports less than the optimizer's
  own ``EP_STOP`` at start 0's weight is as good as any, and the portfolio stops. The optimizer's
  feasibility finish aims at that bar in such a stage; where its rounds cannot reach it (a round
  that does not halve the violation is undone), a further start may reach 0;
- agreement: once ``AGREEING`` starts end with every constraint satisfied at the same best energy
  (within ``AGREEMENT``), more starts are unlikely to find better, and the portfolio stops;
- settled: once the best layout satisfies every constraint, ``SETTLING`` starts reached it, and the
  ``PATIENCE`` starts after it found none better, the portfolio stops (the same reasoning with fewer
  equal energies). A best layout reached by one start only may be that start's luck: on hard
  layouts a start is good about half the time, and a poor start 0 can be bettered by none of the
  next three starts but by a later one;
- unmet: while the best layout visibly violates constraints another start may satisfy (a squared
  sum of at least ``UNMET_PENALTY``, the bar of Penrose's optimizer study, with one of them off by
  ``UNMET_VIOLATION`` or more: a quarter pixel, below which the picture does not change), the
  portfolio goes on to ``unmet_starts`` starts within ``unmet_evaluations`` (never fewer than
  ``starts``, ``max_evaluations``), and a further start may take all that is left of them (no
  wandering bound): where restarts help at all, a few in ten succeed, and a start that succeeds can
  cost several times start 0 (docs/robustness.md). Once the best layout is no longer unmet the usual
  bounds apply again (it never becomes unmet again: the best only improves). A contradiction no
  start escapes would spend it all, so when the first ``UNANIMOUS`` starts all violate as many
  constraints by the same squared sum (within ``AGREEMENT``) the portfolio stops (``"agreement"``);
  starts that end with other violations beside a common one are not unanimous. ``starts=1`` stays
  Penrose's single run;
- structure: a structure start (first) that satisfies every constraint ends the portfolio: the
  starts after it lay the large diagram out from random places, into the fold it avoids, each at
  the cost of another whole layout;
- ``seconds`` (optional) and the request's time limit: a start that would run past them is not
  begun, or stopped and discarded. Only then can a machine's speed change the layout; the result
  says so (``cut_short``).

The registry runs behind each constant: docs/optimizer-evidence.md.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from energies.diagram import Diagram, Unknowns
from energies.optimize.optimizer import (
    EP_STOP,
    OptimizeError,
    OptimizeResult,
    PenaltyProblem,
    Progress,
    optimize,
)
from energies.optimize.structure import structure_start
from energies.shapes import rng_for

# Where a start is good about half the time, 7 starts all miss on 1 variation in 65-130 (p = 0.45-0.5).
DEFAULT_STARTS = 7
# Cheap layouts (most take a few hundred evaluations) get every start; expensive ones keep one or two,
# so that no layout costs much more than Penrose's single run.
DEFAULT_MAX_EVALUATIONS = 8_000
# Until a resampled start has finished, a further start asks for 1/FIRST_ROOM_SHARE of start 0's work.
FIRST_ROOM_SHARE = 4
# A further start that needs more than 1.5 times start 0's work is wandering, not converging; the
# work of a start cut here is wasted, so the factor is just above what kept starts need.
WANDER_FACTOR = 1.5
WANDER_FLOOR = 500
# The unmet search (module docstring): with a start good 1 time in 4, 20 starts all fail on 0.3% of
# layouts; an expensive layout's starts take 3,000-15,000 evaluations each (persistent-homology).
UNMET_PENALTY = 0.1
UNMET_VIOLATION = 0.25
UNMET_STARTS = 20
UNMET_EVALUATIONS = 40_000
UNANIMOUS = 5  # unmet starts in a row, from start 0, at one minimum: a contradiction, not bad luck
AGREEMENT = 1e-3  # relative (and absolute, below 1) energy difference taken as the same minimum
AGREEING = 3  # two starts can share a poor basin; three in a row rarely do
PATIENCE = 3  # further starts in a row that found nothing better than a satisfied best layout
SETTLING = 2  # starts at a satisfied best layout's energy before PATIENCE may end the search


@dataclass(frozen=True)
class PortfolioSettings:
    starts: int = DEFAULT_STARTS  # 1: Penrose's single run, whatever the layout
    max_evaluations: int = DEFAULT_MAX_EVALUATIONS
    seconds: float | None = None  # extra starts only; start 0 is bounded by the time limit alone
    # run starts in this many processes at once (energies.optimize.parallel_starts); same layout
    processes: int = 1
    # the bounds while the best layout is unmet (module docstring); never below starts, max_evaluations
    unmet_starts: int = UNMET_STARTS
    unmet_evaluations: int = UNMET_EVALUATIONS


@dataclass(frozen=True)
class StartSummary:
    start: int
    energy: float
    n_violated: int
    evaluations: int


@dataclass
class PortfolioResult:
    best: OptimizeResult
    chosen: int  # index of the start whose layout is `best`
    starts: list[StartSummary] = field(default_factory=list)
    cut_short: str | None = None  # why fewer than the allowed starts ran, when a clock decided it
    evaluations: int = 0  # by every start run, also those dropped
    # "starts", "optimal", "structure", "agreement", "settled", "evaluations", "seconds" or "time-limit"
    stopped: str = "starts"


class Starts(Sequence[np.ndarray]):
    """The initial states of a portfolio: the variation's own, then resampled ones, each drawn when
    first read and kept (most portfolios read a few of the `count`; a large diagram's draw costs
    milliseconds). For a `diagram` large and structured enough, with two starts or more, its
    structure's start (energies.optimize.structure) comes first and the others follow it."""

    def __init__(
        self, unknowns: Unknowns, variation: str, count: int, diagram: Diagram | None = None
    ) -> None:
        self.unknowns, self.variation, self.size, self.diagram = unknowns, variation, count, diagram
        self._made: dict[int, np.ndarray] = {}
        self._structured: np.ndarray | None = None
        self._decided = diagram is None or count < 2  # whether `_structured` is known (None: there is none)

    def __len__(self) -> int:
        return self.size

    @property
    def structured(self) -> bool:
        """Whether start 0 is the diagram's structure start (known once a start has been read)."""
        return self._structured is not None

    def __getitem__(self, k: int | slice) -> Any:
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(self.size))]
        if k < 0:
            k += self.size
        if not 0 <= k < self.size:
            raise IndexError(k)
        if not self._decided:
            assert self.diagram is not None
            seed = rng_for(f"{self.variation}\x00structure")
            self._structured, self._decided = structure_start(self.diagram, self._drawn(0), seed), True
        if self._structured is None:
            return self._drawn(k)
        return self._structured if k == 0 else self._drawn(k - 1)

    def _drawn(self, k: int) -> np.ndarray:
        """The variation's own start (k = 0) or resampled start k."""
        if k not in self._made:
            u, seed = self.unknowns, f"{self.variation}\x00start {k}"
            self._made[k] = np.array(u.x0, dtype=np.float64) if k == 0 else u.resample(rng_for(seed))
        return self._made[k]


def portfolio_starts(
    unknowns: Unknowns, variation: str, count: int, diagram: Diagram | None = None
) -> Starts:
    """The initial states of a portfolio: the variation's own, then `count - 1` resampled ones; for
    a `diagram` large and structured enough, with `count` >= 2, its structure's start first."""
    return Starts(unknowns, variation, count, diagram)


def most_starts(settings: PortfolioSettings) -> int:
    """The most starts a portfolio with these settings may run (a single one when `starts` is 1)."""
    return max(1, settings.starts) if settings.starts <= 1 else max(settings.starts, settings.unmet_starts)


def best_layout(finished: Sequence[OptimizeResult]) -> int:
    """The index of the best of ``finished`` layouts, start 0's first (module docstring); the first of
    equals."""
    return min(range(len(finished)), key=lambda k: (*_rank(finished[k], finished[0].weight), k))


def _rank(r: OptimizeResult, weight: float) -> tuple[bool, float]:
    """Satisfied first, then the energy at ``weight`` (start 0's)."""
    energy = _energy_at(r, weight)
    return (_violated(r), energy if math.isfinite(energy) else math.inf)


def _violated(r: OptimizeResult) -> bool:
    """Whether a constraint is violated that no proof says is constant (OptimizeResult.infeasible)."""
    return r.n_violated > len(r.infeasible)


def _unmet(r: OptimizeResult) -> bool:
    """Whether such constraints are violated visibly: Σ max(c, 0)² over them of UNMET_PENALTY or more,
    one of them by UNMET_VIOLATION or more."""
    return r.penalty - r.infeasible_penalty >= UNMET_PENALTY and r.max_movable_violation >= UNMET_VIOLATION


def _energy_at(r: OptimizeResult, weight: float) -> float:
    return r.objective_energy + weight * r.penalty


def _same_minimum(a: float, b: float) -> bool:
    return abs(a - b) <= AGREEMENT * max(1.0, abs(a), abs(b))


def optimize_portfolio(
    problem: PenaltyProblem,
    starts: Sequence[np.ndarray],
    *,
    settings: PortfolioSettings = PortfolioSettings(),
    max_iters: int = 100_000,
    time_limit: float | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    run: Callable[..., OptimizeResult] = optimize,
    run_many: Callable[[int], Callable[..., OptimizeResult]] | None = None,
) -> PortfolioResult:
    """Optimize from ``starts[0]``, then from further starts while the bounds allow (module docstring).

    A start whose energy becomes non-finite is skipped, start 0 too: the next start then comes
    first (a portfolio of one start, Penrose's single run, raises as ``optimize`` does); when every
    start the bounds allow fails, the first failure propagates. ``run_many(k)``, if given, runs start k in
    ``run``'s place (energies.optimize.parallel_starts: the same result, computed ahead in other
    processes)."""
    began = time.perf_counter()
    deadline = began + time_limit if time_limit is not None else math.inf

    def progress_of(k: int) -> Callable[[Progress], None] | None:
        if on_progress is None:
            return None
        return lambda p: on_progress(replace(p, start=k))

    runner = (lambda k: run) if run_many is None else run_many
    head, failure = 0, None  # the start that comes first, and the first start that failed
    while True:
        try:
            left = None if time_limit is None else max(0.0, deadline - time.perf_counter())
            first = runner(head)(
                problem, starts[head], max_iters=max_iters, time_limit=left, on_progress=progress_of(head)
            )
            break
        except OptimizeError as error:
            failure = failure or error
            head += 1
            if head >= min(len(starts), most_starts(settings)) or time.perf_counter() >= deadline:
                raise failure from None
    result = PortfolioResult(first, head, [_summary(head, first)], evaluations=first.evaluations)
    finished = [first]  # the layouts that count, in start order (result.starts' results)
    if first.status == "TimeLimit":
        return result
    objectives = bool(problem.stages) and bool(problem.stages[-1].objectives.any())
    for k in range(head + 1, min(len(starts), most_starts(settings))):
        best = result.best
        # While the best layout is unmet the bounds widen (module docstring); it never becomes unmet
        # again once it is not, so the budget only shrinks, as a portfolio's parallel starts require.
        unmet = _unmet(best)
        limit, budget = settings.starts, settings.max_evaluations
        if unmet:
            limit, budget = max(limit, settings.unmet_starts), max(budget, settings.unmet_evaluations)
        if k >= limit:
            result.stopped = "starts"
            return result
        if k == 1 and isinstance(starts, Starts) and starts.structured and not _violated(best):
            result.stopped = "structure"
            return result
        if (
            not objectives
            and not _violated(best)
            and _energy_at(best, first.weight) - (first.weight * best.infeasible_penalty) < EP_STOP
        ):
            result.stopped = "optimal"
            return result
        evaluations = result.evaluations  # also those of starts that failed or were dropped
        if evaluations + _room(result.starts) > budget:
            result.stopped = "evaluations"
            return result
        reached = _reached_best(result, finished)
        if reached >= AGREEING or (unmet and _unanimous(finished)):
            result.stopped = "agreement"
            return result
        if reached >= SETTLING and result.starts[-1].start - result.chosen >= PATIENCE:
            result.stopped = "settled"
            return result
        now = time.perf_counter()
        budget_end = deadline if settings.seconds is None else min(deadline, began + settings.seconds)
        if now >= budget_end:
            result.stopped = "time-limit" if budget_end == deadline else "seconds"
            result.cut_short = f"{result.stopped} reached after {k} of {limit} starts"
            return result
        try:
            # Each iteration costs at least one evaluation: capping iterations at what is left of the
            # budget keeps a start that wanders (a poor basin, a stiff penalty) within it; while the
            # best is unmet, a start may take all that is left.
            cap = min(max_iters, budget - evaluations)
            if not unmet:
                cap = min(cap, max(math.floor(WANDER_FACTOR * first.evaluations), WANDER_FLOOR))
            r = runner(k)(
                problem, starts[k], max_iters=cap, time_limit=budget_end - now, on_progress=progress_of(k)
            )
        except OptimizeError:  # a resampled start may run into a NaN region; the others stand
            continue
        result.evaluations += r.evaluations
        if r.status == "MaxIterations":  # unfinished within the budget: its layout does not count
            result.stopped = "evaluations"
            return result
        if r.status == "TimeLimit":  # stopped by a clock: its layout is unfinished, and machine-dependent
            result.stopped = "time-limit" if budget_end == deadline else "seconds"
            result.cut_short = f"{result.stopped} reached during start {k + 1} of {limit}"
            return result
        result.starts.append(_summary(k, r))
        finished.append(r)
        b = best_layout(finished)
        result.best, result.chosen = finished[b], result.starts[b].start
    return result


def _room(starts: Sequence[StartSummary]) -> int:
    """The evaluations a further start must have left in the budget (module docstring)."""
    resampled = [s.evaluations for s in starts if s.start > 0]
    return max(resampled) if resampled else starts[0].evaluations // FIRST_ROOM_SHARE


def _summary(k: int, r: OptimizeResult) -> StartSummary:
    return StartSummary(k, r.energy, r.n_violated, r.evaluations)


def _reached_best(result: PortfolioResult, finished: Sequence[OptimizeResult]) -> int:
    """How many finished starts reached the best layout: every constraint satisfied, the same energy
    at start 0's weight (none when the best layout leaves a constraint violated)."""
    best, weight = result.best, finished[0].weight
    if _violated(best):
        return 0
    energy = _energy_at(best, weight)
    return sum(not _violated(r) and _same_minimum(_energy_at(r, weight), energy) for r in finished)


def _unanimous(finished: Sequence[OptimizeResult]) -> bool:
    """Whether UNANIMOUS or more starts ran and every one ended with the same violation: as many
    constraints violated, by the same Σ max(c, 0)² (within AGREEMENT)."""
    first = finished[0]
    return len(finished) >= UNANIMOUS and all(
        _violated(r)
        and r.n_violated == first.n_violated
        and _same_minimum(r.penalty - r.infeasible_penalty, first.penalty - first.infeasible_penalty)
        for r in finished
    )
