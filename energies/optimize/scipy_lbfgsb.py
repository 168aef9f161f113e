"""The one adapter to a private part of scipy: L-BFGS-B's core routine ``scipy.optimize._lbfgsb.setulb``.

    core = LbfgsbCore(x0, memory=17, max_line_search=20, factr=0.0, pgtol=0.0)
    while True:
        task = core.step()          # FG: wants φ and its gradient at core.x; NEW_X: an iteration ended
        if task == FG: core.f[...], core.g[:] = energy(core.x)
        elif task == NEW_X: ...     # core.x is the accepted iterate
        else: break                 # stopped by its own tests: core.converged says whether they passed

Why the private routine: the optimizer drives L-BFGS-B by reverse communication (it asks for a point,
we evaluate, we decide after each iteration whether Penrose's test or a budget ends the round). The
public ``scipy.optimize.minimize`` only offers a callback after each iteration and wraps the energy
in a ``ScalarFunction`` that copies and memoizes every point, several times the per-iteration
overhead of this loop (docs/optimizer-evidence.md).

Version rule: the signature (``ln_task`` last, integer task codes in ``task[0]``) is scipy's from
1.15 on; ``VERIFIED`` is the range of releases whose routine this adapter was checked against. A
scipy outside it raises :class:`ScipyInternalsChanged` on first use, naming the version, and
tests/energies/optimize/test_scipy_lbfgsb.py fails: check the new release's
``scipy/optimize/_lbfgsb_py.py`` (its ``_minimize_lbfgsb`` loop) and widen ``VERIFIED``.
"""

from __future__ import annotations

import functools
from types import ModuleType

import numpy as np

VERIFIED = ((1, 15), (1, 17))  # first and last scipy minor versions this adapter was checked against
FG, NEW_X, CONVERGENCE = 3, 1, 4  # setulb's task codes (task[0]); any other code stops the run


class ScipyInternalsChanged(RuntimeError):
    """The installed scipy is not one whose private L-BFGS-B routine this adapter was checked against."""


def scipy_version() -> tuple[int, int]:
    import scipy

    major, minor = scipy.__version__.split(".")[:2]
    return int(major), int(minor)


@functools.cache
def load_lbfgsb() -> ModuleType:
    """scipy's compiled L-BFGS-B module (0.2-1.5 s to import the first time), after the version check."""
    version = scipy_version()
    if not VERIFIED[0] <= version <= VERIFIED[1]:
        low, high = (".".join(map(str, v)) for v in VERIFIED)
        raise ScipyInternalsChanged(
            f"scipy {'.'.join(map(str, version))} is installed, but energies.optimize.scipy_lbfgsb drives"
            f" scipy's private L-BFGS-B routine as scipy {low} to {high} define it;"
            " check it and widen VERIFIED"
        )
    from scipy.optimize import _lbfgsb

    return _lbfgsb


class LbfgsbCore:
    """One run of L-BFGS-B without bounds from ``x0``: its state and work arrays, one ``step`` at a time."""

    def __init__(self, x0: np.ndarray, *, memory: int, max_line_search: int, factr: float, pgtol: float):
        self._routine = load_lbfgsb().setulb
        n, m = x0.size, memory
        self.memory, self.max_line_search, self.factr, self.pgtol = memory, max_line_search, factr, pgtol
        self.x = np.array(x0, dtype=np.float64)  # the point L-BFGS-B asks about, or the accepted iterate
        self.f = np.array(0.0)  # φ at x, written by the caller on FG
        self.g = np.zeros(n)  # its gradient, written by the caller on FG
        self._bound = np.zeros(n)  # unused: nbd = 0 marks every variable unbounded
        self._nbd = np.zeros(n, np.int32)
        self._wa = np.zeros(2 * m * n + 5 * n + 11 * m * m + 8 * m)
        self._iwa = np.zeros(3 * n, np.int32)
        self._task, self._ln_task = np.zeros(2, np.int32), np.zeros(2, np.int32)
        self._lsave, self._isave, self._dsave = np.zeros(4, np.int32), np.zeros(44, np.int32), np.zeros(29)

    def step(self) -> int:
        """Run the routine until it wants something: FG, NEW_X, or another code when it has stopped."""
        self._routine(
            self.memory, self.x, self._bound, self._bound, self._nbd, self.f, self.g, self.factr,
            self.pgtol, self._wa, self._iwa, self._task, self._lsave, self._isave, self._dsave,
            self.max_line_search, self._ln_task,
        )  # fmt: skip
        return int(self._task[0])

    @property
    def converged(self) -> bool:
        """The run stopped because its own tests (factr, pgtol) passed, not because a line search failed."""
        return int(self._task[0]) == CONVERGENCE
