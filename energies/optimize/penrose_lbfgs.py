"""Penrose's own L-BFGS (its engine's Lbfgs.ts and the stop test of Optimizer.ts's ``minimize``) as
an inner-solver driver for :func:`energies.optimize.lbfgs.run_round`.

Why it exists: scipy's L-BFGS-B (the ``setulb`` driver) reaches a different local minimum than
Penrose on trios whose penalty landscape has several: its first step has unit length and its
Moré-Thuente line search creeps up to the nearest minimum, while Penrose's first step is the raw
gradient and its line search bisects and keeps its last trial. Over seeds, this driver reaches good
layouts at Penrose's rate where L-BFGS-B does not (docs/optimizer-evidence.md).

Contract of :func:`drive_penrose` (the ``Driver`` signature of ``energies.optimize.lbfgs``):

- It evaluates φ only through ``tracker.evaluate(x) -> (f, g)``, and ``tracker.value(x) -> f``
  (φ alone, when the energy offers it) at trial points, and calls ``tracker.accept()`` once per
  iteration, then ``on_iteration(decrement)``; it returns the current point as soon as
  ``on_iteration`` answers True (it never stops on its own: Penrose's line search never gives up).
- The first step goes along the gradient itself (H = I) from t = 1; every later step along
  r = H g from the two-loop recursion over the last ``M`` pairs (s, y), newest first, with
  H0 = γ I, γ = sᵀy / (yᵀy + EPSD) of the newest pair and ρ = 1 / (yᵀs + EPSD): adcore's
  ``LbfgsTwoLoop`` kernel, in Wasm, which sums its dot products in Penrose's order.
- Each iteration starts from φ at the point the previous line search left (Penrose evaluates it
  again; we keep the line search's own evaluation of that point when it made one, so the
  trajectory is Penrose's with fewer evaluations), pushes the pair (s, y), and checks Penrose's
  decrement gᵀr at that point (``normGrad`` in Penrose's ``minimize``) after the line search that
  follows.
- ``tracker.iterate_energy`` is set to φ at the point that line search started from: Penrose's
  ``lastUOenergy``, which its exterior-point test compares between rounds.
- Line search (:func:`line_search`): weak Wolfe conditions (Armijo ``ARMIJO``, curvature ``WOLFE``)
  by doubling until Armijo holds, then bisection; a trial point whose coordinates, energy or
  gradient are not all finite counts as a failed Armijo test, as in Penrose since its #1903 (its
  4.0.0-alpha.5 took a finite energy with a non-finite gradient for a failed curvature test and
  lengthened the step; Penrose's runs that tests/service/test_graph_run_fidelity.py pins meet no
  such point, so they are the same under both). After ``MAX_STEPS`` + 1 evaluations, or once the
  bracket is narrower than ``MIN_INTERVAL``, the last step size is taken as it is, unevaluated and
  possibly uphill. Ours: a trial likely to fail the Armijo test (along the raw gradient, or where a
  failed trial's quadratic says so) is tested on φ alone first, its gradient asked only if it
  passes; the steps are Penrose's, at less cost (:func:`line_search`).

Constants are Penrose's (``cfg`` in ``minimize``). The code is ours, written from the algorithm's
description above.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple, Protocol

import numpy as np

from adcore import LbfgsTwoLoop
from energies.optimize.diagonal_scaling import DiagonalScaling, scaled

M = 17  # pairs (s, y) kept
ARMIJO = 1e-3
WOLFE = 0.9
MIN_INTERVAL = 1e-9
MAX_STEPS = 10  # line-search evaluations beyond the first
EPSD = 1e-11  # keeps denominators away from zero

Energy = Callable[[np.ndarray], tuple[float, np.ndarray]]


# φ alone at a trial point x, given the bound its test compares it with: φ(x) exactly, except that
# where φ(x) exceeds `above` it may answer any number between `above` and φ(x) (a partial sum of
# terms that cannot be negative, which settles a failed test at a part of the cost).
ValueAbove = Callable[[np.ndarray, float], float]


class Tracker(Protocol):
    iterate_energy: float
    value: ValueAbove | None  # φ alone at a trial point, where the energy offers it

    def evaluate(self, x: np.ndarray, trial: bool = False) -> tuple[float, np.ndarray]: ...

    def accept(self) -> float: ...


def _finite(x: np.ndarray, f: float) -> bool:
    return math.isfinite(f) and bool(np.isfinite(x).all())


class Step(NamedTuple):
    """Where a line search ends: x = x0 - t r, with φ and its gradient there when it evaluated x
    (the step that met the Wolfe conditions), None when it moved there unevaluated."""

    x: np.ndarray
    t: float
    f: float | None = None
    g: np.ndarray | None = None


def line_search(
    fun: Energy,
    x0: np.ndarray,
    r: np.ndarray,
    f0: float,
    slope: float,
    value: ValueAbove | None = None,
    cautious: bool = False,
) -> Step:
    """The step Penrose's line search picks along -r (see module doc); ``slope`` = -rᵀg at x0, the
    directional derivative of φ along -r. ``fun`` answers a non-finite φ wherever its gradient is
    not finite (the optimizer's trial energy answers inf and NaN), so the gradient, which Penrose
    also checks, is not scanned a second time at every trial.

    ``value`` (φ alone, the same number as ``fun``'s, at a fraction of its cost: docs/scaling.md) tests
    first the trials likely to fail the Armijo test, their gradient asked only if they pass: every
    trial of a ``cautious`` search (the caller's step along the raw gradient, seldom short enough),
    and a later trial that `likely_to_fail` by the last failed one. ``value`` is given the Armijo
    bound and may answer a smaller number above it where φ exceeds it (`ValueAbove`): the test
    fails either way, and the failed trial's quadratic is then flatter, flagging fewer trials. The
    search takes the steps it takes on the same numbers without ``value``."""
    lo, hi, t = 0.0, np.inf, 1.0
    failed: tuple[float, float] | None = None  # the last trial that failed Armijo: (t, φ)
    for _ in range(MAX_STEPS + 1):
        x = x0 - t * r
        bound = f0 + ARMIJO * t * slope
        likely = cautious or (failed is not None and likely_to_fail(f0, slope, failed, t))
        g: np.ndarray | None = None
        if likely and value is not None:
            f = value(x, bound)
            if _finite(x, f) and f <= bound:
                f, g = fun(x)  # passed on φ alone: its gradient, for the curvature test and the next step
        else:
            f, g = fun(x)
        finite = _finite(x, f)
        if g is None or not (finite and f <= bound):
            hi, failed = t, (t, f if finite else math.inf)
        elif -float(r @ g) < WOLFE * slope:
            lo = t
        else:
            return Step(x, t, f, g)
        t = 0.5 * (lo + hi) if hi < np.inf else 2.0 * lo
        if abs(lo - hi) < MIN_INTERVAL:
            break
    # Out of evaluations or the bracket collapsed: Penrose moves by the last step anyway.
    return Step(x0 - t * r, t)


def likely_to_fail(f0: float, slope: float, failed: tuple[float, float], t: float) -> bool:
    """Whether the quadratic through φ(0) = f0, φ'(0) = slope and a failed trial (t_f, φ_f) fails the
    Armijo test at t: with curvature a = (φ_f - f0 - slope t_f) / t_f², f0 + slope t + a t² exceeds
    f0 + ARMIJO slope t when a t > -(1 - ARMIJO) slope. A failed trial's successor fails about half
    the time; this model tells which half well enough to pay (docs/scaling.md)."""
    t_f, f_f = failed
    curvature = (f_f - f0 - slope * t_f) / (t_f * t_f)
    return bool(curvature * t > -(1.0 - ARMIJO) * slope)


def drive_penrose(tracker: Tracker, x0: np.ndarray, on_iteration: Callable[[float], bool]) -> np.ndarray:
    """Penrose's L-BFGS from x0 until ``on_iteration`` says stop; returns the point reached."""
    fun = tracker.evaluate

    def trial(x: np.ndarray) -> tuple[float, np.ndarray]:  # a non-finite trial fails Armijo, as in Penrose
        return tracker.evaluate(x, trial=True)

    x_prev = np.array(x0, dtype=np.float64)
    f, g = fun(x_prev)
    # first step: H = I, not checked; along the raw gradient, so cautious
    step = line_search(trial, x_prev, g, f, -float(g @ g), tracker.value, cautious=True)
    scaling = DiagonalScaling() if scaled(x_prev.size) else None
    with LbfgsTwoLoop.borrowed(M, x_prev.size, EPSD) as kernel:
        kernel.start(x_prev, g)
        while True:
            x = step.x
            # Penrose evaluates φ here again; the line search's last trial already did, at this very
            # point (the same numbers), unless it moved on unevaluated.
            f, g = (step.f, step.g) if step.f is not None and step.g is not None else fun(x)
            h0 = None if scaling is None else scaling.update(x - kernel.x_prev, g - kernel.g_prev)
            decrement = kernel.step(x, g, h0)  # pushes (x - x_prev, g - g_prev); r = H g in kernel.r
            step = line_search(trial, x, kernel.r, f, -decrement, tracker.value)
            tracker.accept()
            tracker.iterate_energy = f  # Penrose's lastUOenergy: φ where this line search started
            if on_iteration(decrement):
                return step.x
