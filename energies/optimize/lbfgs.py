"""One exterior-point round of Penrose's optimizer: L-BFGS on φ(·, λ) until Penrose's test.

The default driver (``inner_solver="auto"``) is ``"penrose"``: Penrose's own L-BFGS
(:mod:`energies.optimize.penrose_lbfgs`). Its first step along the raw gradient and its bisecting line search
reach Penrose's minima where the landscape has several (labels that must pass each other to reach
their dots, hyperedges stacked in layers); a whole run reproduces Penrose's optimizer in Node to
1e-12. The scipy drivers below remain for comparison (``"setulb"``, ``"minimize"``).

The scipy solver is L-BFGS-B with no bounds, memory 17 (Penrose's ``m``), its own tests disabled
(``factr = pgtol = 0``) so that Penrose's decrement test decides. L-BFGS-B's first trial step of
every iteration after the first is the full quasi-Newton step d = -H g, so gᵀHg = -g·d is read off
that trial point; the first iteration uses H = I (gᵀHg = |g|²). When L-BFGS-B's line search gives
up (common at the kinks of max(c, 0)² under a large λ) after making progress, the round restarts it
from the last accepted point with an empty memory, since Penrose's line search never gives up (it
takes its last trial step). *Progress* means a lower energy at the last accepted point than where
that run of L-BFGS-B started: an accepted iteration can be a null step (x unchanged, or moved along
a plateau where φ is flat to its floating-point resolution, as for φ ~ 1e15 under λ = 1e12). When a
run stops without progress the round counts as converged: no point L-BFGS-B can reach is lower
(Penrose's memory would keep the null step, s = y = 0, which zeroes its scaling sᵀy / (yᵀy + ε)
and with it the identity part of its decrement). Restarting after a null step instead began
again with H = I, whose decrement |g|² never passes the test, and restarted forever (nitric
acid's Lewis structure: 2,000,000 evaluations instead of Penrose's 823). Two drivers of the same
routine exist:

- ``"setulb"``: our loop around ``scipy.optimize._lbfgsb.setulb`` (scipy >= 1.15 signature).
- ``"minimize"``: ``scipy.optimize.minimize(method="L-BFGS-B", jac=True)``: public API, any
  scipy >= 1.11, but its ScalarFunction wrapper copies and memoizes every point.

The feasibility finish (:mod:`energies.optimize.optimizer`) turns L-BFGS-B's own tests on (``factr``,
``pgtol``) and Penrose's off (``run_round(penrose_test=False)``).

Overhead per iteration beyond the energy itself (best of 7, busy 2-core dev machine, n = 20 / 200):
bare loops 15-22 / 33-53 µs for setulb against 68-88 / 59-107 µs for ``minimize``
(``fmin_l_bfgs_b``, a wrapper of it, 94-99 / 65-106 µs); the whole ``optimize`` 30-50 / 65-84 µs
with setulb against 100-110 / 80-136 µs with ``minimize``.

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
``lastUOenergy``), one step before the point.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np

from energies.optimize.penrose_lbfgs import Energy, drive_penrose

UO_STOP = 1e-2
LBFGS_MEMORY = 17  # Penrose's m
MAX_LINE_SEARCH_STEPS = 20
# Stall guard (ours): a round ends when STALL_WINDOW iterations lowered the energy by no more than
# STALL_RTOL of its size. 1e-9 sits far above the rounding of φ (1e-16 relative) and far below the
# slowest honest progress seen on the registry (blobs at λ = 1e10: 1e-4 relative per 1,000).
STALL_WINDOW = 500
STALL_RTOL = 1e-9

InnerSolver = Literal["auto", "penrose", "setulb", "minimize"]
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

    def __init__(self, fun: Energy, trial_fun: Energy | None = None, *, decrements: bool = True) -> None:
        self._fun = fun
        self._trial_fun = trial_fun or fun
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
        self.evaluations += 1
        if self._iterate_x is None:  # the starting point
            self._iterate_x, self._iterate_g, self.iterate_energy = x.copy(), g, f
            self.start_energy = f
            if self.evaluations == 1:
                self.initial_energy = f
        elif self._first_trial is None and self.decrements:
            self._first_trial = x.copy()
        self.last_x, self.last_f, self.last_g = x, f, g
        return f, g

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
    """Our own reverse-communication loop around L-BFGS-B's core routine (scipy >= 1.15); its own
    tests (``factr``, ``pgtol``, as in ``fmin_l_bfgs_b``) are off unless given."""
    from scipy.optimize import _lbfgsb

    n, m = x0.size, LBFGS_MEMORY
    x = np.array(x0, dtype=np.float64)
    f = np.array(0.0)
    g = np.zeros(n)
    unbounded = np.zeros(n)
    wa = np.zeros(2 * m * n + 5 * n + 11 * m * m + 8 * m)
    iwa = np.zeros(3 * n, np.int32)
    task, ln_task, lsave = np.zeros(2, np.int32), np.zeros(2, np.int32), np.zeros(4, np.int32)
    isave, dsave = np.zeros(44, np.int32), np.zeros(29)
    nbd = np.zeros(n, np.int32)
    accepted = x.copy()
    while True:
        _lbfgsb.setulb(m, x, unbounded, unbounded, nbd, f, g, factr, pgtol, wa, iwa, task, lsave, isave,
                       dsave, MAX_LINE_SEARCH_STEPS, ln_task)  # fmt: skip
        if task[0] == 3:  # FG: wants energy and gradient at x
            fx, gx = tracker.evaluate(x.copy())
            f[...] = fx
            g[:] = gx
        elif task[0] == 1:  # NEW_X: an iteration finished
            accepted = x.copy()
            if on_iteration(tracker.accept()):
                return accepted
        else:  # stopped by L-BFGS-B's own tests; x may be a rejected trial point
            tracker.solver_converged = int(task[0]) == 4  # CONVERGENCE, not a failed line search
            return accepted


def drive_minimize(
    tracker: DecrementTracker, x0: np.ndarray, on_iteration: Callable[[float], bool]
) -> np.ndarray:
    """The same through scipy's public ``minimize`` interface."""
    accepted = [np.array(x0, dtype=np.float64)]

    from scipy.optimize import OptimizeResult, minimize  # imported when used: scipy loads slowly

    def callback(intermediate_result: OptimizeResult) -> None:
        accepted[0] = np.array(intermediate_result.x, copy=True)
        if on_iteration(tracker.accept()):
            raise StopIteration

    options = {"maxcor": LBFGS_MEMORY, "ftol": 0.0, "gtol": 0.0, "maxiter": 2**62, "maxfun": 2**62}
    options["maxls"] = MAX_LINE_SEARCH_STEPS
    minimize(tracker.evaluate, x0, jac=True, method="L-BFGS-B", callback=callback, options=options)
    return accepted[0]


DRIVERS = {"setulb": drive_setulb, "minimize": drive_minimize, "penrose": drive_penrose}


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
    penrose_test: bool = True,
    stop: Callable[[int, float, np.ndarray], bool] | None = None,
) -> RoundOutcome:
    """L-BFGS on ``fun`` from ``x0`` until Penrose's test or a bound ends the round (module docstring).
    ``trial_fun`` evaluates a line search's trial points for drivers that back off from non-finite
    ones (``"penrose"``); it defaults to ``fun``. Without ``penrose_test`` only the driver's own
    tests (L-BFGS-B's ``factr``, ``pgtol``) or a bound end the round. ``stop(iterations, φ, x)``,
    if given, is asked at each accepted iterate and ends the round as ``"stalled"`` when it answers
    True (the caller's own stall test: the feasibility finish's, :mod:`energies.optimize.optimizer`)."""
    # Penrose's driver computes its decrement gᵀr itself: the tracker's copy of it would cost three
    # vector operations per iteration.
    tracker = DecrementTracker(fun, trial_fun, decrements=driver is not drive_penrose)
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
        elif stalled() or (stop is not None and stop(tracker.iterations, tracker.last_f, tracker.last_x)):
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
