"""A portfolio's starts run in forked processes, with exactly the sequential result.

    with ParallelStarts(problem, starts, processes=2) as pool:
        result = optimize_portfolio(problem, starts, settings=..., run_many=pool.runner)

``pool.runner(k)`` stands in for ``optimize`` on start k: it returns what ``optimize(problem,
starts[k], **options)`` would return in this process, bit for bit, so the portfolio's rules, applied
to the starts in order as before, choose the same layout whatever the number of processes. Start 0
runs here; when start k >= 1 is asked for, the next starts are begun speculatively in children
(``processes`` busy at once, this process counting while it runs a start itself) with k's options.
Those options bound the later ones (a later start's iteration cap is what is left of a budget that
only shrinks, and its deadline is the same clock time), so a child's layout stands when it finished
in fewer iterations than the cap its start is finally given; otherwise that start runs again here.
A child that fails in any way (an exception, a non-finite energy, death by a signal or the memory
cap) also has its start run here, so every failure is the sequential one. Children still running
when the portfolio stops are killed: their starts were never asked for.

Why fork: a compiled problem (a wasmtime store with its tables in linear memory, Python closures)
cannot be sent to another process, and compiling it again costs more than a typical start. A forked
child inherits it; a start costs 10-40 ms more in a child (fork, copy-on-write faults, the result
back through a pipe; ``benchmarks/parallel_starts.py``). Below ``MIN_EVALUATIONS`` evaluations of
start 0 (a few tens of milliseconds) that overhead is most of the work, and the starts stay here;
the decision reads a count, never a clock, though either way the layout is the same.

Children never compile (the blame of a non-finite energy would: that start runs here instead), die
with this process (``PR_SET_PDEATHSIG``), keep its memory cap (``RLIMIT_DATA`` is inherited), are
killed ``GRACE`` seconds after their start's deadline, and are reaped (no zombies) on every way out
of the ``with`` block, errors and cancellation included.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import gc
import math
import os
import pickle
import select
import signal
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from types import TracebackType
from typing import Any

import numpy as np

from energies.optimize import GoalReports, GoalValues, OptimizeResult, PenaltyProblem, optimize

MIN_EVALUATIONS = 400  # start 0's evaluations below which starts stay in this process
GRACE = 0.05  # seconds a child may overrun its deadline before it is killed
_PR_SET_PDEATHSIG = 1


def available_cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


class _RunHere(Exception):  # noqa: N818 - a signal to the parent, not an error
    """Raised in a child where only the parent may go on (compiling code after a fork)."""


class _NoCompile:
    """The problem as a child sees it: ``goal_jacobian`` compiles a module, which a forked process
    must not (a lock of the runtime may have been held by another thread at the fork)."""

    def __init__(self, problem: PenaltyProblem) -> None:
        self._problem = problem

    def __getattr__(self, name: str) -> Any:
        return getattr(self._problem, name)

    def goal_jacobian(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        raise _RunHere


@dataclass
class _Child:
    start: int
    pid: int
    fd: int
    cap: int  # the iteration cap it runs under
    chunks: list[bytes] = field(default_factory=list)
    eof: bool = False


@dataclass
class PoolStats:
    forked: int = 0  # children begun
    used: int = 0  # whose layout was taken
    rerun: int = 0  # whose start ran again here (failed, killed, or cut by a smaller cap)
    discarded: int = 0  # killed when the portfolio stopped before asking for their start


class ParallelStarts:
    """Speculative children for a portfolio's starts (module docstring); use as a context manager."""

    def __init__(
        self,
        problem: PenaltyProblem,
        starts: Sequence[np.ndarray],
        processes: int,
        *,
        run: Callable[..., OptimizeResult] = optimize,
        min_evaluations: int = MIN_EVALUATIONS,
    ) -> None:
        self.problem, self.starts, self.run = problem, starts, run
        self.processes = processes if hasattr(os, "fork") else 1
        self.min_evaluations = min_evaluations
        self.parallel = self.processes > 1 and len(starts) > 1  # settled by start 0's evaluations
        self.children: dict[int, _Child] = {}
        self.stats = PoolStats()

    def __enter__(self) -> ParallelStarts:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Kill and reap every child still alive."""
        for k in list(self.children):
            self._end(self.children.pop(k))
            self.stats.discarded += 1

    def runner(self, k: int) -> Callable[..., OptimizeResult]:
        return functools.partial(self._run, k)

    def _run(
        self,
        k: int,
        problem: PenaltyProblem,
        x0: np.ndarray,
        *,
        max_iters: int = 100_000,
        time_limit: float | None = None,
        on_progress: Callable[..., None] | None = None,
    ) -> OptimizeResult:
        options: dict[str, Any] = dict(max_iters=max_iters, time_limit=time_limit, on_progress=on_progress)
        if k == 0 or not self.parallel or problem is not self.problem or x0 is not self.starts[k]:
            r = self.run(problem, x0, **options)
            if k == 0:
                self.parallel = self.parallel and r.evaluations >= self.min_evaluations
            return r
        end = time.perf_counter() + time_limit if time_limit is not None else math.inf
        child = self.children.pop(k, None)
        # Busy at once: this process and processes - 1 children, or processes children while it waits.
        self._launch(k + 1, self.processes - (child is None), max_iters, end)
        if child is None:
            return self.run(problem, x0, **options)
        r = self._collect(child, end)
        capped = r is not None and (r.status == "MaxIterations" or r.iterations >= max_iters)
        if r is None or (capped and child.cap != max_iters):
            # Failed, or not provably what the smaller cap gives: the sequential run decides.
            self.stats.rerun += 1
            if time_limit is not None:
                options["time_limit"] = end - time.perf_counter()
            return self.run(problem, x0, **options)
        self.stats.used += 1
        return r

    # -- children ------------------------------------------------------------------------------------
    def _launch(self, first: int, busy: int, cap: int, end: float) -> None:
        for j in range(first, len(self.starts)):
            if len(self.children) >= busy:
                return
            if j not in self.children:
                self.children[j] = self._fork(j, cap, end)

    def _fork(self, k: int, cap: int, end: float) -> _Child:
        read, write = os.pipe()
        parent = os.getpid()
        sys.stdout.flush(), sys.stderr.flush()  # nothing buffered is written twice
        pid = os.fork()
        if pid == 0:  # the child: never returns
            os.close(read)
            self._child(k, cap, end, write, parent)
        os.close(write)
        self.stats.forked += 1
        return _Child(k, pid, read, cap)

    def _child(self, k: int, cap: int, end: float, write: int, parent: int) -> None:
        try:
            gc.freeze()  # the inherited heap is never scanned, so its pages stay shared
            _die_with(parent)
            for sig in (signal.SIGINT, signal.SIGTERM):
                signal.signal(sig, signal.SIG_DFL)
            try:
                limit = None if end == math.inf else end - time.perf_counter()
                r = self.run(_NoCompile(self.problem), self.starts[k], max_iters=cap, time_limit=limit)
                payload = pickle.dumps(_plain(r), protocol=pickle.HIGHEST_PROTOCOL)
            except BaseException:  # noqa: BLE001 - any failure is the parent's to reproduce
                payload = b""
            view = memoryview(payload)
            while view:
                view = view[os.write(write, view) :]
        finally:
            os._exit(0)

    def _collect(self, child: _Child, end: float) -> OptimizeResult | None:
        """The child's layout, or None if it failed or was killed at the deadline."""
        kill_at = end + GRACE
        while not child.eof:
            wait = kill_at - time.perf_counter()
            if wait <= 0:
                break
            ready, _, _ = select.select([child.fd], [], [], min(wait, 3600.0))
            if ready:
                chunk = os.read(child.fd, 1 << 20)
                child.chunks.append(chunk)
                child.eof = not chunk
        self._end(child)
        data = b"".join(child.chunks)
        if not child.eof or not data:
            return None
        return _restore(pickle.loads(data), self.problem)

    def _end(self, child: _Child) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child.pid, signal.SIGKILL)
        os.waitpid(child.pid, 0)
        os.close(child.fd)


def _die_with(parent: int) -> None:
    """Have the kernel kill this child when its parent dies (Linux; elsewhere the parent's
    ``close`` is the only guard)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


def _plain(r: OptimizeResult) -> tuple[OptimizeResult, Any]:
    """The result without the problem's goal names (the parent has them), for the pipe."""
    if isinstance(r.goals, GoalReports):
        return replace(r, goals=()), r.goals.values
    return r, None


def _restore(sent: tuple[OptimizeResult, Any], problem: PenaltyProblem) -> OptimizeResult:
    r, values = sent
    return r if values is None else replace(r, goals=GoalReports(problem, GoalValues(*values)))
