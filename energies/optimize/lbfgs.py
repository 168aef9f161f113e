"""One exterior-point round of Penrose's optimizer: L-BFGS on φ(·, λ) until Penrose's test.

Two drivers, each for a reason:

- ``"penrose"`` (the default, ``inner_solver="auto"``): Penrose's own L-BFGS
  (:mod:`energies.optimize.penrose_lbfgs`). Its first step along the raw gradient and its bisecting
  line search reach Penrose's minima where the landscape has several; a whole run reproduces
  Penrose's optimizer to 1e-12.
- ``"setulb"``: scipy's L-BFGS-B (through :mod:`energies.optimize.scipy_lbfgsb`), whose Moré-Thuente
  line search stays in the current basin: the feasibility finish (:mod:`energies.optimize.optimizer`)
  uses it with L-BFGS-B's own tests on (``factr``, ``pgtol``) and Penrose's off
  (``run_round(penrose_test=False)``).

L-BFGS-B as a Penrose round: no bounds, memory 17 (Penrose's ``m``), its own tests disabled
(``factr = pgtol = 0``) so that Penrose's decrement test decides. Its first trial step of every
iteration after the first is the full quasi-Newton step d = -H g, so gᵀHg = -g·d is read off that
trial point; the first iteration uses H = I (gᵀHg = |g|²). When its line search gives up (common at
the kinks of max(c, 0)² under a large λ) after making progress, the round restarts it from the last
accepted point with an empty memory, since Penrose's line search never gives up (it takes its last
trial step). *Progress* means a lower energy at the last accepted point than where that run of
L-BFGS-B started: an accepted iteration can be a null step (x unchanged, or moved along a plateau
where φ is flat to its floating-point resolution). When a run stops without progress the round
counts as converged: no point L-BFGS-B can reach is lower (Penrose's memory would keep the null
step, s = y = 0, which zeroes its scaling sᵀy / (yᵀy + ε) and with it the identity part of its
decrement). Restarting after a null step instead would begin again with H = I, whose decrement
|g|² never passes the test, and restart forever.

The unconstrained test (Penrose's ``uoStop``): ``gᵀ H g < UO_STOP`` (1e-2), the Newton decrement
with the L-BFGS inverse Hessian H, at the point the last line search started from (as Penrose's
``minimize`` checks it after each step).

``run_round`` ends a round with one of these reasons (:data:`RoundReason`):

- ``"converged"``: Penrose's test passed, or L-BFGS-B stopped without progress (above);
- ``"max_iters"`` / ``"time_limit"``: the caller's iteration budget or deadline was reached;
- ``"evaluation_budget"``: the caller's budget of energy evaluations was spent;
- ``"stalled"`` (not Penrose's; a guard against runs Penrose would not make): over the last
  ``STALL_WINDOW`` iterations the energy fell by no more than ``STALL_RTOL`` · max(|φ|, 1), i.e.
  the round crawls at the resolution of φ while its decrement stays above ``UO_STOP``. A round
  that converges as Penrose's does never triggers it: Penrose's test passes once the predicted
  decrease (half the decrement) drops below 5e-3, long before progress is that small.

In every case the outcome holds the last accepted point and the energy the exterior-point test
compares: φ there for L-BFGS-B, and for Penrose's L-BFGS φ where its last line search began (its
``lastUOenergy``), one step before the point. Evidence for the rules and constants:
docs/optimizer-evidence.md.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np

from energies.optimize.penrose_lbfgs import Energy, ValueAbove, drive_penrose
from energies.optimize.scipy_lbfgsb import FG, NEW_X, LbfgsbCore

UO_STOP = 1e-2
LBFGS_MEMORY = 17  # Penrose's m
MAX_LINE_SEARCH_STEPS = 20
# Stall guard (ours): a round ends when STALL_WINDOW iterations lowered the energy by no more than
# STALL_RTOL of its size. 1e-9 sits far above the rounding of φ (1e-16 relative) and far below the
# slowest honest progress of a registry layout (docs/optimizer-evidence.md).
STALL_WINDOW = 500
STALL_RTOL = 1e-9

InnerSolver = Literal["auto", "penrose", "setulb"]
Driver = Callable[..., np.ndarray]
RoundReason = Literal["converged", "max_iters", "time_limit", "evaluation_budget", "stalled"]


@dataclass
class RoundOutcome:
    x: np.ndarray
    energy: float  # φ at x, or where the last line search began (Penrose's driver; module docstring)
    iterations: int
    evaluations: int
    reason: RoundReason
    restarts: int = 0  # L-BFGS-B runs restarted after their line search gave up with progress
    initial_energy: float = np.nan  # φ at the round's starting point


class DecrementTracker:
    """Follows L-BFGS-B's evaluations to compute Penrose's decrement gᵀHg at each accepted point.

    ``evaluate`` sees every point L-BFGS-B asks for; ``accept`` is called when it starts a new
    iteration and returns the decrement at the previous iterate (the point the line search left).
    With ``decrements=False`` (a driver that computes the decrement itself: Penrose's) ``accept``
    returns NaN and the points are not copied for it."""

    def __init__(
        self,
        fun: Energy,
        trial_fun: Energy | None = None,
        value_fun: ValueAbove | None = None,
        *,
        decrements: bool = True,
    ) -> None:
        self._fun = fun
        self._trial_fun = trial_fun or fun
        self._value_fun = value_fun
        # `value` for drivers when the energy offers φ alone (None: it does not)
        self.value: ValueAbove | None = self._value if value_fun else None
        self._valued: np.ndarray | None = None  # the trial point `value` was last asked about
        self.decrements = decrements
        self.evaluations = 0
        self.iterations = 0
        self.last_x: np.ndarray | None = None
        self.last_f = np.nan
        self.last_g: np.ndarray | None = None
        self.iterate_energy = np.nan  # at the last accepted point
        self.start_energy = np.nan  # where the current run of L-BFGS-B started
        self.initial_energy = np.nan  # where the round started
        self.solver_converged = False  # L-BFGS-B's own tests ended it (drive_setulb with tolerances)
        self.restart()

    def restart(self) -> None:
        """Forget the iterates: L-BFGS-B starts afresh (H = I) from its next evaluation."""
        self._steps_since_start = 0
        self._iterate_g: np.ndarray | None = None
        self._iterate_x: np.ndarray | None = None
        self._first_trial: np.ndarray | None = None

    def evaluate(self, x: np.ndarray, trial: bool = False) -> tuple[float, np.ndarray]:
        """φ and its gradient at x; a ``trial`` point (one a line search may reject) goes to
        ``trial_fun``, which may answer a non-finite value as (inf, NaN gradient) instead of raising."""
        f, g = self._trial_fun(x) if trial else self._fun(x)
        if x is not self._valued:  # a point's φ and then its gradient: one evaluation
            self.evaluations += 1
        self._valued = None
        if self._iterate_x is None:  # the starting point
            self._iterate_x, self._iterate_g, self.iterate_energy = x.copy(), g, f
            self.start_energy = f
            if self.evaluations == 1:
                self.initial_energy = f
        elif self._first_trial is None and self.decrements:
            self._first_trial = x.copy()
        self.last_x, self.last_f, self.last_g = x, f, g
        return f, g

    def _value(self, x: np.ndarray, above: float) -> float:
        """φ alone at a line search's trial point x (non-finite: inf; `ValueAbove`); counts as x's
        evaluation, whether or not `evaluate(x, trial=True)` follows for its gradient."""
        assert self._value_fun is not None
        self.evaluations += 1
        self._valued = x
        return self._value_fun(x, above)

    def accept(self) -> float:
        assert self._iterate_g is not None and self._iterate_x is not None and self.last_g is not None
        g_prev = self._iterate_g
        if not self.decrements:
            decrement = math.nan
        elif self._steps_since_start == 0 or self._first_trial is None:
            decrement = float(g_prev @ g_prev)  # first step: H = I
        else:
            decrement = -float(g_prev @ (self._first_trial - self._iterate_x))
        self.iterations += 1
        self._steps_since_start += 1
        self._iterate_x = self.last_x.copy() if self.decrements else self.last_x  # type: ignore[union-attr]
        self._iterate_g = self.last_g
        self.iterate_energy = self.last_f
        self._first_trial = None
        return decrement


def drive_setulb(
    tracker: DecrementTracker,
    x0: np.ndarray,
    on_iteration: Callable[[float], bool],
    factr: float = 0.0,
    pgtol: float = 0.0,
) -> np.ndarray:
    """L-BFGS-B from x0 until ``on_iteration`` says stop or its own tests (``factr``, ``pgtol``, as in
    ``fmin_l_bfgs_b``; off unless given) end it; returns the last accepted point."""
    steps = MAX_LINE_SEARCH_STEPS
    core = LbfgsbCore(x0, memory=LBFGS_MEMORY, max_line_search=steps, factr=factr, pgtol=pgtol)
    accepted = core.x.copy()
    while True:
        task = core.step()
        if task == FG:
            fx, gx = tracker.evaluate(core.x.copy())
            core.f[...] = fx
            core.g[:] = gx
        elif task == NEW_X:
            accepted = core.x.copy()
            if on_iteration(tracker.accept()):
                return accepted
        else:  # stopped by L-BFGS-B's own tests; x may be a rejected trial point
            tracker.solver_converged = core.converged  # not a failed line search
            return accepted


DRIVERS: dict[str, Driver] = {"setulb": drive_setulb, "penrose": drive_penrose}


def pick_driver(name: InnerSolver) -> Driver:
    if name == "auto":
        name = "penrose"
    return DRIVERS[name]


def run_round(
    fun: Energy,
    x0: np.ndarray,
    *,
    driver: Driver,
    iteration_budget: int,
    deadline: float,
    report: Callable[[int, float], None],
    evaluation_budget: float = np.inf,
    trial_fun: Energy | None = None,
    value_fun: ValueAbove | None = None,
    penrose_test: bool = True,
    stop: Callable[[int, float, np.ndarray], bool] | None = None,
) -> RoundOutcome:
    """L-BFGS on ``fun`` from ``x0`` until Penrose's test or a bound ends the round (module docstring).
    ``trial_fun`` evaluates a line search's trial points for drivers that back off from non-finite
    ones (``"penrose"``); it defaults to ``fun``. ``value_fun``, if given, answers φ alone at a
    trial point (the same number, non-finite as inf), for drivers that test a trial before asking
    its gradient (``"penrose"``, which passes the same array to both). Without ``penrose_test`` only
    the driver's own tests (L-BFGS-B's ``factr``, ``pgtol``) or a bound end the round.
    ``stop(iterations, φ, x)``, if given, is asked at each accepted iterate and ends the round as
    ``"stalled"`` when it answers True (the caller's own stall test: the feasibility finish's,
    :mod:`energies.optimize.optimizer`)."""
    # Penrose's driver computes its decrement gᵀr itself: the tracker's copy of it would cost three
    # vector operations per iteration.
    tracker = DecrementTracker(fun, trial_fun, value_fun, decrements=driver is not drive_penrose)
    reason: list[RoundReason] = ["converged"]
    stopped_by_us = [False]
    # Energies at accepted iterations, the last STALL_WINDOW + 1 of them (ring buffer, by iteration).
    recent = [math.nan] * (STALL_WINDOW + 1)  # a list: read and written every iteration

    def stalled() -> bool:
        k = tracker.iterations
        if k <= STALL_WINDOW:
            return False
        then, now = recent[(k - STALL_WINDOW) % len(recent)], tracker.iterate_energy
        return bool(then - now <= STALL_RTOL * max(abs(now), 1.0))

    def on_iteration(decrement: float) -> bool:
        report(tracker.iterations, tracker.last_f)
        recent[tracker.iterations % len(recent)] = float(tracker.iterate_energy)
        if penrose_test and decrement < UO_STOP:
            pass  # converged: a bound reached at the same iteration does not matter
        elif tracker.iterations >= iteration_budget:
            reason[0] = "max_iters"
        elif time.perf_counter() >= deadline:
            reason[0] = "time_limit"
        elif tracker.evaluations >= evaluation_budget:
            reason[0] = "evaluation_budget"
        elif stalled() or (
            stop is not None
            and tracker.last_x is not None
            and stop(tracker.iterations, tracker.last_f, tracker.last_x)
        ):
            reason[0] = "stalled"
        stopped_by_us[0] = (penrose_test and decrement < UO_STOP) or reason[0] != "converged"
        return stopped_by_us[0]

    if iteration_budget <= 0:
        return RoundOutcome(x0, np.nan, 0, 0, "max_iters")
    x = x0
    restarts = 0
    while True:
        before = tracker.iterations
        x = driver(tracker, x, on_iteration)
        if stopped_by_us[0] or tracker.solver_converged:
            break
        # L-BFGS-B's line search gave up. Penrose's line search never gives up (it takes its last
        # step), so go on from the last accepted point with a fresh memory, provided this run
        # lowered the energy; iterations alone are no progress (null steps, see the docstring).
        if tracker.iterations == before or not tracker.iterate_energy < tracker.start_energy:
            break
        tracker.restart()
        restarts += 1
    return RoundOutcome(
        x,
        tracker.iterate_energy,
        tracker.iterations,
        tracker.evaluations,
        reason[0],
        restarts,
        tracker.initial_energy,
    )
