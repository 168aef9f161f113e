"""A portfolio's starts run in forked worker processes, with exactly the sequential result.

    with ParallelStarts(problem, starts, processes=2) as pool:
        result = optimize_portfolio(problem, starts, settings=..., run_many=pool.runner)

``pool.runner(k)`` stands in for ``optimize`` on start k: it returns what ``optimize(problem,
starts[k], **options)`` would return in this process, bit for bit, so the portfolio's rules, applied
to the starts in order as before, choose the same layout whatever the number of processes. Start 0
runs here. When start 1 is asked for, ``processes`` workers are forked (this process only waits);
each runs the next start not yet sent, in order, speculatively, with the options of the start
asked for last. Those options bound the later ones (a later start's iteration cap is what is left
of a budget that only shrinks, and its deadline is the same clock time), so a worker's layout
stands when it finished in fewer iterations than the cap its start is finally given; otherwise that
start runs again here. A worker that fails in any way (an exception, a non-finite energy, death by
a signal or the memory cap) also has its start run here, so every failure is the sequential one.
Starts still running when the portfolio stops are killed with their workers: never asked for.

Why fork: a compiled problem (a wasmtime store with its tables in linear memory, Python closures)
cannot be sent to another process, and compiling it again costs more than a typical start. A forked
worker inherits it; the fork and the copy-on-write faults that follow are paid once per portfolio
(measured by ``benchmarks/parallel_starts.py``, docs/benchmarks.md). Below ``MIN_EVALUATIONS``
evaluations of start 0 that is most of the work, and the starts stay here; the decision reads a
count, never a clock, though either way the layout is the same.

Workers are forked once the energy runs optimized code: a large module starts on baseline code
while a thread compiles the optimized one, and a forked worker, without that thread, would stay on
the slower code; until then starts run here. Workers never compile (the blame of a non-finite
energy would: that start runs here instead), die with this process (``PR_SET_PDEATHSIG``), keep its
memory cap (``RLIMIT_DATA`` is inherited), are killed ``GRACE`` seconds after their start's
deadline, and are reaped (no zombies) on every way out of the ``with`` block, errors and
cancellation included.
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
import struct
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from types import TracebackType
from typing import Any

import numpy as np

from energies.optimize.optimizer import GoalReports, GoalValues, OptimizeResult, PenaltyProblem, optimize

MIN_EVALUATIONS = 400  # start 0's evaluations below which starts stay in this process
GRACE = 0.05  # seconds a child may overrun its deadline before it is killed
_PR_SET_PDEATHSIG = 1


def available_cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def free_cores() -> int:
    """The cores not busy with other work: this process's, less the 1-minute load average (which
    counts this process too), at least 1. On a busy machine workers would only queue for a core."""
    cores = available_cores()
    try:
        load = os.getloadavg()[0]
    except OSError:
        return cores
    return max(1, min(cores, int(cores + 1 - load)))


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
class _Worker:
    """A forked child that runs the starts it is sent, one at a time, until its pipe closes."""

    pid: int
    commands: int  # the pipe it reads (start, cap, deadline) from
    results: int  # the pipe it answers on: a length, then the pickled result (length 0: failed)
    start: int | None = None  # the start it is running or has answered
    cap: int = 0  # that start's iteration cap
    received: bytearray = field(default_factory=bytearray)


_COMMAND = struct.Struct("<iqd")  # start, iteration cap, deadline (perf_counter seconds, inf: none)
_LENGTH = struct.Struct("<Q")


@dataclass
class PoolStats:
    forked: int = 0  # worker processes begun
    used: int = 0  # starts whose layout came from a worker
    rerun: int = 0  # starts run here after all (a worker failed, died, overran, or had a larger cap)
    discarded: int = 0  # starts still in workers when the portfolio stopped (never asked for)


class ParallelStarts:
    """Speculative workers for a portfolio's starts (module docstring); use as a context manager."""

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
        self.workers: list[_Worker] = []
        self.next = 1  # the first start not yet sent to a worker
        self.stats = PoolStats()

    def __enter__(self) -> ParallelStarts:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Kill and reap every worker."""
        while self.workers:
            w = self.workers.pop()
            self.stats.discarded += w.start is not None
            _end(w)

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
        if self.next == 1 and not self.workers:
            if getattr(problem, "tier", "optimized") != "optimized":
                # A worker could not tier up (the compile runs in a thread it lacks): run here for now.
                return self.run(problem, x0, **options)
            for _ in range(min(self.processes, len(self.starts) - k)):
                self.workers.append(self._fork())
        self.next = max(self.next, k)
        self._dispatch(max_iters, end)
        worker = next((w for w in self.workers if w.start == k), None)
        if worker is None:  # its worker died before it was sent, or none is left: run it here
            self.stats.rerun += 1
            return self.run(problem, x0, **options)
        cap = worker.cap
        answered = self._collect(worker, end)
        self._dispatch(max_iters, end)  # the worker that answered takes the next start
        capped = answered is not None and (
            answered.status == "MaxIterations" or answered.iterations >= max_iters
        )
        if answered is None or (capped and cap != max_iters):
            # Failed, or not provably what the smaller cap gives: the sequential run decides.
            self.stats.rerun += 1
            if time_limit is not None:
                options["time_limit"] = end - time.perf_counter()
            return self.run(problem, x0, **options)
        self.stats.used += 1
        return answered

    # -- workers -------------------------------------------------------------------------------------
    def _dispatch(self, cap: int, end: float) -> None:
        """Send the next starts, in order, to idle workers (with the options of the start asked for)."""
        for w in list(self.workers):
            if w.start is None and self.next < len(self.starts):
                w.start, w.cap, self.next = self.next, cap, self.next + 1
                try:
                    os.write(w.commands, _COMMAND.pack(w.start, cap, end))
                except BrokenPipeError:  # it died while idle: its start will run here
                    self._drop(w)

    def _drop(self, w: _Worker) -> None:
        self.workers.remove(w)
        _end(w)

    def _fork(self) -> _Worker:
        commands, command_end = os.pipe()
        result_end, results = os.pipe()
        parent = os.getpid()
        _prctl()
        sys.stdout.flush(), sys.stderr.flush()  # nothing buffered is written twice
        pid = os.fork()
        if pid == 0:  # the child: never returns
            try:
                os.close(command_end)
                os.close(result_end)
                for w in self.workers:  # siblings' pipes: only the parent may hold them
                    os.close(w.commands)
                    os.close(w.results)
                self._serve(commands, results, parent)
            finally:
                os._exit(0)
        os.close(commands)
        os.close(results)
        self.stats.forked += 1
        return _Worker(pid, command_end, result_end)

    def _serve(self, commands: int, results: int, parent: int) -> None:
        gc.freeze()  # the inherited heap is never scanned, so its pages stay shared
        _die_with(parent)
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.SIG_DFL)
        problem = _NoCompile(self.problem)
        while (command := _read_exactly(commands, _COMMAND.size)) is not None:
            k, cap, end = _COMMAND.unpack(command)
            try:
                limit = None if end == math.inf else end - time.perf_counter()
                r = self.run(problem, self.starts[k], max_iters=cap, time_limit=limit)
                payload = pickle.dumps(_plain(r), protocol=pickle.HIGHEST_PROTOCOL)
            except BaseException:  # noqa: BLE001 - any failure is the parent's to reproduce
                payload = b""
            view = memoryview(_LENGTH.pack(len(payload)) + payload)
            while view:
                view = view[os.write(results, view) :]

    def _collect(self, w: _Worker, end: float) -> OptimizeResult | None:
        """The worker's answer for its start, or None if it failed; a worker that died or overran
        the deadline (by GRACE) is killed and dropped."""
        kill_at, need = end + GRACE, _LENGTH.size
        while len(w.received) < need:
            wait = kill_at - time.perf_counter()
            if wait > 0 and not select.select([w.results], [], [], min(wait, 60.0))[0]:
                continue
            chunk = os.read(w.results, 1 << 20) if wait > 0 else b""
            if not chunk:  # the worker died, or overran its deadline
                self._drop(w)
                return None
            w.received += chunk
            if need == _LENGTH.size and len(w.received) >= need:
                need += _LENGTH.unpack_from(w.received)[0]
        data = bytes(w.received[_LENGTH.size : need])
        del w.received[:need]
        w.start = None
        return _restore(pickle.loads(data), self.problem) if data else None


def _read_exactly(fd: int, n: int) -> bytes | None:
    """`n` bytes from a pipe, or None at its end."""
    data = b""
    while len(data) < n:
        chunk = os.read(fd, n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _end(w: _Worker) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(w.pid, signal.SIGKILL)
    os.waitpid(w.pid, 0)
    os.close(w.commands)
    os.close(w.results)


@functools.cache
def _prctl() -> Callable[..., int] | None:
    """libc's prctl, looked up before any fork (a child must not load libraries: another thread
    may have held the loader's lock at the fork); None where there is none (not Linux)."""
    try:
        prctl: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
        return prctl
    except (OSError, AttributeError):
        return None


def _die_with(parent: int) -> None:
    """Have the kernel kill this child when its parent dies (Linux; elsewhere the parent's
    ``close`` is the only guard)."""
    prctl = _prctl()
    if prctl is not None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
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
