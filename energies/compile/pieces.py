"""A large energy's sums, cut into two pieces of each row list, each on its own instance, so that two
cores can each run one; and `beside`, the one way this package runs work on a second thread.

Why: an evaluation of a large diagram is milliseconds of Wasm over thousands of listed rows, and a
second core halves it (docs/scaling.md). An instance runs on one thread at a time (its Store), so
each piece has its own instance of the same compiled code, with its own copy of the goal tables.

Rules:

- An energy of at least ``SPLIT_MIN_ROWS`` rows (one row per goal, all stages together), built
  while this process allows two threads (`threads`), is summed in ``PIECES`` pieces for its whole
  life: piece j lists the j-th of ``PIECES`` consecutive parts of each kind's row list (sizes
  differing by one at most, the first the smallest); piece 1 runs on the helper thread while
  piece 0 runs on the caller's; φ = piece 0 + piece 1, in that order, the culled constants in
  piece 0, and the gradient is the sum of the pieces'. Any other energy (every registry diagram's
  among them) is one piece: one sum, on one instance.
- Summed in pieces, φ differs from the one-piece sum in its last bits. A large layout is not
  guaranteed bit-reproducible anyway: whether the culler lists a row depends on the evaluations'
  measured cost (`culling.Culler.timed`), and each choice changes the order of the sums.
- `set_threads` sets the process's allowance (at most ``PIECES``): the service's layout workers
  allow one by default, as their number already keeps the cores busy; elsewhere it is two where
  the process may use two cores. An energy reads it when built; the culler's bounds calls
  (`culling.CompiledBounds`) read it at each call. A forked child starts its own helper thread.
- Every piece's call runs under its instance's time limit; an error in either is raised after both
  have ended, so no piece runs on after its evaluation returned.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import numpy as np

from adcore import Compiled

SPLIT_MIN_ROWS = 1 << 16  # energies of at least this many rows are summed in pieces, given the threads
PIECES = 2

_threads: int | None = None  # None: `default_threads()`
_helper: tuple[int, ThreadPoolExecutor] | None = None  # (pid, pool): a forked child makes its own


def default_threads() -> int:
    """Two where this process may run on two cores or more, else one."""
    return min(PIECES, len(os.sched_getaffinity(0)))


def set_threads(n: int | None) -> None:
    """The threads one evaluation may use in this process (None: `default_threads()`)."""
    global _threads
    if n is not None and n < 1:
        raise ValueError(f"evaluation threads must be at least 1, got {n}")
    _threads = n


def threads() -> int:
    return default_threads() if _threads is None else min(_threads, PIECES)


def _pool() -> ThreadPoolExecutor:
    global _helper
    if _helper is None or _helper[0] != os.getpid():
        _helper = (os.getpid(), ThreadPoolExecutor(1, thread_name_prefix="energy-piece"))
    return _helper[1]


T = TypeVar("T")


def beside(first: Callable[[], T], second: Callable[[], T]) -> tuple[T, T]:
    """`second` on the helper thread while `first` runs on the caller's; both results. An error in
    either is raised once both have ended (`first`'s before `second`'s), so nothing runs on after
    this returns."""
    later = _pool().submit(second)
    try:
        a = first()
    finally:
        later.exception()  # waits, whatever `first` did
    return a, later.result()


def cut(rows: np.ndarray, pieces: int) -> list[np.ndarray]:
    """`rows` in `pieces` consecutive parts, sizes differing by one at most, the first the smallest."""
    bounds = [len(rows) * j // pieces for j in range(pieces + 1)]
    return [rows[a:b] for a, b in zip(bounds, bounds[1:])]


class Pieces:
    """The instances an energy's sums run on: ``parts[0]``, the problem's own, and piece 1's
    instance when it is summed in two (module docstring)."""

    def __init__(self, first: Compiled, second: Compiled | None = None) -> None:
        self.parts = [first] if second is None else [first, second]

    def run(self, call: Callable[[Compiled, int], float]) -> float:
        """`call(part, j)` for each piece j, piece 1 on the helper thread (`beside`); their sum,
        piece 0's first."""
        if len(self.parts) == 1:
            return call(self.parts[0], 0)
        first, second = self.parts
        a, b = beside(lambda: call(first, 0), lambda: call(second, 1))
        return a + b

    def gradient(self) -> np.ndarray:
        """The sum of the pieces' gradients (output 1), piece 0's first; a new array."""
        grad = self.parts[0].output(1).copy()
        for part in self.parts[1:]:
            grad += part.output(1)
        return grad
