"""Run one task per trio, each in a fresh Python process with a wall-clock limit.

A *task* is a picklable module-level function ``task(trio, timeout) -> dict`` returning the
per-trio fields (see :data:`FIELDS`); the default, :func:`pipeline_task`, calls
:func:`run_trio` (the service pipeline, its outcome as a row of these fields). A row may carry
the rendered diagram as ``"svg"`` (text); the harness stores it in a file and keeps only
``svgBytes`` in the row.

Isolation: every trio runs in its own ``python -m registry.runner JOB RESULT`` subprocess (in its
own session, so a kill takes its children too), as Penrose's reference ran every trio in a fresh
Node process. A worker that outlives ``timeout + grace`` seconds is killed and yields status
``"timeout"``; one that dies without a result (segfault, ``os._exit``, out of memory) or whose task
raises yields ``"crash"`` with the exit status and the tail of its output. Nothing a task does can
stop the batch. Subprocesses (not multiprocessing) also work inside daemonic Dask workers.

Schedulers: :func:`run_local` keeps ``jobs`` workers busy from this process; :func:`run_dask`
submits the same isolated runs to a Dask distributed scheduler (``pip install .[cluster]``); the
workers must be able to import the task's module.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from service.trios import TrioSpec

Row = dict[str, Any]
Task = Callable[[TrioSpec, float | None], Row]

FIELDS = (
    "key", "name", "status", "error", "compileMs", "optimizeMs", "renderMs", "totalMs", "nGradEvals",
    "EProunds", "energy", "maxConstrViolation", "nViolated", "nVarying", "nConstraints", "nObjectives",
    "svgBytes",
)  # fmt: skip
STATUSES = ("ok", "compile-error", "optimize-error", "timeout", "nan", "crash")
DEFAULT_GRACE = 10.0  # seconds a worker gets beyond the task's own timeout (start-up, imports)
_POLL_SECONDS = 0.01
_LOG_TAIL = 2000
# Many single-threaded workers share the cores; BLAS threads would only fight over them.
_SINGLE_THREADED = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def pipeline_task(
    trio: TrioSpec, timeout: float | None, starts: int | None = None, processes: int | None = None
) -> Row:
    """The real task: compile, optimize and render one trio through the service pipeline
    (``starts``: the multi-start count, None for the pipeline's default; ``processes``: for the starts
    at once, the same layout with any number)."""
    from service.workers.warm_up import warm_up  # imported in the worker only

    warm_up()  # process start-up work, before the trio's own timings begin
    return run_trio(trio, timeout=timeout, starts=starts, processes=processes)


def warm_pipeline_task(
    trio: TrioSpec, timeout: float | None, starts: int | None = None, processes: int | None = None
) -> Row:
    """The trio twice in one worker; the row of the second run, whose compiled energy comes from the
    structure cache (what a service pays for a repeated diagram).
    Run with `--task registry.runner:warm_pipeline_task`."""
    from service.workers.warm_up import warm_up

    warm_up()
    run_trio(trio, timeout=timeout, starts=starts, processes=processes)
    return run_trio(trio, timeout=timeout, starts=starts, processes=processes)


def run_trio(
    trio: Any,
    *,
    variation: str | None = None,
    timeout: float | None = None,
    starts: int | None = None,
    processes: int | None = None,
) -> dict[str, Any]:
    """One registry trio through the pipeline, as a row of the benchmark's fields (plus its SVG)."""
    from energies.diagram import count_goals
    from energies.lang.errors import DiagramError
    from service.pipeline import LayoutError, portfolio_settings, render_trio
    from service.trios import trio_image_resolver

    row: dict[str, Any] = {"key": trio.key, "name": trio.name}
    t0 = time.perf_counter()
    try:
        r = render_trio(
            trio.domain,
            trio.substance,
            trio.style,
            variation if variation is not None else trio.variation,
            trio.exclude_warnings,
            time_limit=timeout or 60.0,
            resolve_image=trio_image_resolver(trio.base_dir, *trio.style_dirs),
            portfolio=portfolio_settings(starts, processes=processes),
        )
    except DiagramError as e:
        return {
            **row,
            "status": "compile-error",
            "error": str(e),
            "totalMs": (time.perf_counter() - t0) * 1e3,
        }
    except LayoutError as e:
        return {**row, "status": e.status, "error": str(e), "totalMs": (time.perf_counter() - t0) * 1e3}
    opt = r.optimization
    portfolio = r.portfolio
    assert portfolio is not None
    return {
        **row,
        "status": "ok",
        "variation": r.diagram.variation,
        "objectiveEnergy": opt.objective_energy,
        "constraintEnergy": opt.energy - opt.objective_energy,
        "optStatus": opt.status,
        "starts": len(portfolio.starts),
        "chosenStart": portfolio.chosen,
        "startsStopped": portfolio.stopped,
        "cutShort": portfolio.cut_short,
        "compileMs": r.timings["compile"],
        "optimizeMs": r.timings["optimize"],
        "renderMs": r.timings["render"],
        "totalMs": r.timings["total"],
        "nGradEvals": portfolio.evaluations,  # the work of every start, not only the chosen one
        "EProunds": opt.ep_rounds,
        "energy": opt.energy,
        "maxConstrViolation": opt.max_constraint_violation,
        "nViolated": opt.n_violated,
        "constraintSum": opt.penalty,  # Σ max(c, 0)² over the last stage's constraints
        "nInfeasible": len(opt.infeasible),  # violated constraints nothing varying can change
        "infeasible": [w for w in r.warnings if "InfeasibleConstraintWarning" in w],
        "nVarying": len(r.diagram.unknowns.x0),
        "nConstraints": count_goals(r.diagram.goals, "constraint"),
        "nObjectives": count_goals(r.diagram.goals, "objective"),
        "svgBytes": len(r.svg.encode("utf-8")),
        "svg": r.svg,
    }


def finish_row(row: Row, trio_key: str, trio_name: str | None) -> Row:
    """Every field present (None when unknown), identity fields from the trio, a known status."""
    row = {"key": trio_key, "name": trio_name, **{f: row.get(f) for f in FIELDS[2:]}, **row}
    row["key"], row["name"] = trio_key, trio_name
    if row["status"] not in STATUSES:
        row["error"] = f"task returned unknown status {row['status']!r}; error: {row['error']}"
        row["status"] = "crash"
    return row


def failure_row(trio_key: str, trio_name: str | None, status: str, error: str) -> Row:
    return finish_row({"status": status, "error": error}, trio_key, trio_name)


# ---------------------------------------------------------------------------------------------
# One isolated worker process.


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    for name, value in _SINGLE_THREADED.items():
        env.setdefault(name, value)
    # The task is pickled by reference: the child must import what this process imports.
    paths = [p for p in sys.path if p and Path(p).is_dir()]
    env["PYTHONPATH"] = os.pathsep.join([*paths, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def _describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with status {code}"


class IsolatedRun:
    """A task on one trio, running in its own subprocess; poll it until it yields a row."""

    def __init__(
        self, task: Task, trio: TrioSpec, timeout: float | None, grace: float = DEFAULT_GRACE
    ) -> None:
        self.trio = trio
        self._dir = tempfile.TemporaryDirectory(prefix="registry-run-")
        work = Path(self._dir.name)
        self._result = work / "result.pkl"
        job = work / "job.pkl"
        job.write_bytes(pickle.dumps((task, trio, timeout)))
        self._log_path = work / "output.log"
        self._log = self._log_path.open("wb")
        self.started = time.perf_counter()
        self.deadline = self.started + timeout + grace if timeout is not None else float("inf")
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "registry.runner", str(job), str(self._result)],
                stdin=subprocess.DEVNULL,
                stdout=self._log,
                stderr=subprocess.STDOUT,
                env=_child_env(),
                start_new_session=True,
            )
        except OSError:
            self._log.close()
            self._dir.cleanup()
            raise
        self._timeout = timeout

    def poll(self) -> Row | None:
        """The row once the worker has finished or been killed for overrunning; None while running."""
        code = self._proc.poll()
        if code is None:
            if time.perf_counter() < self.deadline:
                return None
            self.kill()
            row = failure_row(self.trio.key, self.trio.name, "timeout", f"killed after {self._timeout}s")
            return self._close(row)
        return self._close(self._collect(code))

    def wait(self) -> Row:
        while (row := self.poll()) is None:
            time.sleep(_POLL_SECONDS)
        return row

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):  # already gone
            os.killpg(self._proc.pid, signal.SIGKILL)
        self._proc.wait()

    def _collect(self, code: int) -> Row:
        try:
            row = pickle.loads(self._result.read_bytes())
        except (OSError, EOFError, pickle.UnpicklingError):
            tail = self._log_path.read_bytes()[-_LOG_TAIL:].decode("utf-8", "replace").strip()
            error = f"worker {_describe_exit(code)} without a result" + (f"; output:\n{tail}" if tail else "")
            return failure_row(self.trio.key, self.trio.name, "crash", error)
        return finish_row(row, self.trio.key, self.trio.name)

    def _close(self, row: Row) -> Row:
        row["workerMs"] = (time.perf_counter() - self.started) * 1000
        self._log.close()
        self._dir.cleanup()
        return row


def run_isolated(task: Task, trio: TrioSpec, timeout: float | None, grace: float = DEFAULT_GRACE) -> Row:
    """Run ``task`` on ``trio`` in a fresh subprocess and wait for its row (used on Dask workers)."""
    return IsolatedRun(task, trio, timeout, grace).wait()


def _child_main(job_file: str, result_file: str) -> None:
    task, trio, timeout = pickle.loads(Path(job_file).read_bytes())
    try:
        row = task(trio, timeout)
        if not isinstance(row, dict):
            raise TypeError(f"task {task.__name__} returned {type(row).__name__}, not a dict")
    except Exception as err:  # a bug in the task: report it, this is what the harness is for
        where = traceback.extract_tb(err.__traceback__)[-1]
        error = f"{type(err).__name__}: {err} (at {where.filename}:{where.lineno} in {where.name})"
        row = {"status": "crash", "error": error}
    partial = Path(result_file + ".part")
    partial.write_bytes(pickle.dumps(row))
    partial.rename(result_file)  # the parent sees a whole result or none


# ---------------------------------------------------------------------------------------------
# Schedulers.


@dataclass
class Callbacks:
    on_start: Callable[[TrioSpec], None] = lambda trio: None
    on_done: Callable[[Row], None] = lambda row: None


def run_local(
    task: Task,
    trios: Sequence[TrioSpec],
    *,
    jobs: int = 1,
    timeout: float | None = None,
    grace: float = DEFAULT_GRACE,
    callbacks: Callbacks | None = None,
) -> list[Row]:
    """Every trio through ``task``, at most ``jobs`` worker processes at a time; rows in finish order."""
    callbacks = callbacks or Callbacks()
    pending = list(reversed(trios))
    running: list[IsolatedRun] = []
    rows: list[Row] = []
    try:
        while pending or running:
            while pending and len(running) < max(1, jobs):
                trio = pending.pop()
                callbacks.on_start(trio)
                try:
                    running.append(IsolatedRun(task, trio, timeout, grace))
                except OSError as err:  # no process could be started (fork limits, memory)
                    row = failure_row(trio.key, trio.name, "crash", f"could not start a worker: {err}")
                    rows.append(row)
                    callbacks.on_done(row)
            still_running: list[IsolatedRun] = []
            for run in running:
                polled = run.poll()
                if polled is None:
                    still_running.append(run)
                else:
                    rows.append(polled)
                    callbacks.on_done(polled)
            running = still_running
            if running:
                time.sleep(_POLL_SECONDS)
    finally:  # interrupted: leave no orphan workers behind
        for run in running:
            run.kill()
    return rows


def run_dask(
    task: Task,
    trios: Iterable[TrioSpec],
    *,
    scheduler: str | Any,
    timeout: float | None = None,
    grace: float = DEFAULT_GRACE,
    callbacks: Callbacks | None = None,
) -> list[Row]:
    """The same isolated runs on a Dask cluster (``scheduler``: an address or a ``LocalCluster``)."""
    from distributed import Client, as_completed

    callbacks = callbacks or Callbacks()
    rows: list[Row] = []
    batch = uuid.uuid4().hex[:8]
    with Client(scheduler) as client:
        futures = {}
        for i, trio in enumerate(trios):
            callbacks.on_start(trio)
            future = client.submit(
                run_isolated, task, trio, timeout, grace, key=f"trio-{batch}-{i}", pure=False
            )
            futures[future] = trio
        for future in as_completed(futures):
            trio = futures[future]
            try:
                row = future.result()
            except Exception as err:  # the Dask worker itself died or the task could not run there
                row = failure_row(trio.key, trio.name, "crash", f"dask: {type(err).__name__}: {err}")
            rows.append(row)
            callbacks.on_done(row)
    return rows


if __name__ == "__main__":
    _child_main(*sys.argv[1:3])
