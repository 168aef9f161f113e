"""A bounded pool of layout worker processes.

Each worker is a spawned process running `service.layout_job.run_layout` on jobs it receives over
a pipe, one at a time, as JSON bytes.  The event loop never runs a layout: a request borrows an
idle worker and waits for its answer in a small thread pool, so a long layout only occupies its
own worker.  The time limit itself is enforced inside Wasm by the runtime; the pool only adds a
last-resort deadline (limit + grace) for a worker stuck outside Wasm, which it kills.

A worker that dies (crash, OOM kill, signal) or is killed fails only its own request
(`WorkerCrashed` / `WorkerStuck`); a fresh worker takes its place in the background and the
next request is served normally.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import multiprocessing
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

log = logging.getLogger("service.pool")

START_TIMEOUT = 120.0  # seconds for a fresh worker to import the pipeline and say it is ready


class WorkerCrashed(RuntimeError):
    """The worker running a request died before answering."""


class WorkerStuck(RuntimeError):
    """The worker running a request overran its deadline outside Wasm and was killed."""


def worker_main(conn: Connection) -> None:
    """A worker process: import the pipeline once, then answer jobs until told to stop."""
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s worker %(message)s")
    from service.layout_job import run_layout
    from service.warm_up import warm_up

    warm_up()
    conn.send_bytes(json.dumps({"ready": True, "pid": os.getpid()}).encode())
    while True:
        try:
            raw = conn.recv_bytes()
        except (EOFError, OSError):
            return  # the server went away
        job = json.loads(raw)
        if job is None:
            return
        conn.send_bytes(json.dumps(run_layout(job)).encode())


@dataclass
class Worker:
    process: multiprocessing.process.BaseProcess
    conn: Connection
    busy_with: str | None = None  # request id while running a job

    @property
    def pid(self) -> int | None:
        return self.process.pid


def start_worker() -> Worker:
    """Spawn a worker and wait until it has imported the pipeline."""
    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe(duplex=True)
    process = ctx.Process(target=worker_main, args=(child,), name="penrose-layout-worker", daemon=True)
    process.start()
    child.close()
    if not parent.poll(START_TIMEOUT):
        process.kill()
        raise WorkerCrashed(f"a layout worker did not start within {START_TIMEOUT:.0f} s")
    try:
        json.loads(parent.recv_bytes())
    except (EOFError, OSError) as e:
        raise WorkerCrashed("a layout worker died while starting") from e
    return Worker(process, parent)


def stop_worker(worker: Worker, timeout: float = 2.0) -> None:
    with contextlib.suppress(OSError):
        worker.conn.send_bytes(b"null")
    worker.process.join(timeout)
    if worker.process.is_alive():
        worker.process.kill()
        worker.process.join(timeout)
    worker.conn.close()


def exchange(worker: Worker, job: dict[str, Any], deadline: float) -> dict[str, Any]:
    """Send one job and wait for its outcome (runs in a helper thread, never on the event loop)."""
    try:
        worker.conn.send_bytes(json.dumps(job).encode())
        if not worker.conn.poll(deadline):
            worker.process.kill()
            raise WorkerStuck(f"the layout did not finish within {deadline:.1f} s and its worker was stopped")
        return json.loads(worker.conn.recv_bytes())
    except (EOFError, OSError, BrokenPipeError) as e:
        code = worker.process.exitcode if not worker.process.is_alive() else None
        worker.process.kill()
        detail = f" (exit code {code})" if code is not None else ""
        raise WorkerCrashed(f"the layout worker crashed while rendering this diagram{detail}") from e


@dataclass
class LayoutPool:
    size: int
    time_limit: float
    kill_grace: float = 15.0
    workers: list[Worker] = field(default_factory=list)
    _idle: asyncio.Queue[Worker] | None = None
    _threads: ThreadPoolExecutor | None = None
    _closing: bool = False
    replacements: int = 0  # workers restarted after a crash or a kill

    async def start(self) -> None:
        """Start every worker (in parallel) and make them available."""
        if self.size < 1:
            raise ValueError("a layout pool needs at least one worker")
        self._idle = asyncio.Queue()
        # a thread per worker for exchanges, plus as many for replacements
        self._threads = ThreadPoolExecutor(max_workers=2 * self.size, thread_name_prefix="layout-pool")
        loop = asyncio.get_running_loop()
        started = await asyncio.gather(
            *(loop.run_in_executor(self._threads, start_worker) for _ in range(self.size))
        )
        for w in started:
            self.workers.append(w)
            self._idle.put_nowait(w)

    @property
    def ready(self) -> bool:
        return not self._closing and any(w.process.is_alive() for w in self.workers)

    def busy_pids(self) -> list[int]:
        return [w.pid for w in self.workers if w.busy_with is not None and w.pid is not None]

    async def run(self, job: dict[str, Any]) -> dict[str, Any]:
        """Run one layout job on an idle worker; waits (without blocking the loop) when all are busy."""
        assert self._idle is not None and self._threads is not None, "LayoutPool.start() first"
        worker = await self._idle.get()
        loop = asyncio.get_running_loop()
        worker.busy_with = str(job.get("requestId", "-"))
        deadline = float(job["timeLimit"]) + self.kill_grace
        future = loop.run_in_executor(self._threads, exchange, worker, job, deadline)
        # The worker goes back to the pool (or is replaced) when its exchange ends, even if the
        # request was cancelled meanwhile (client gone): a slot is never lost.
        future.add_done_callback(lambda f: self._release(worker, f))
        return await asyncio.shield(future)

    def _release(self, worker: Worker, future: asyncio.Future[dict[str, Any]]) -> None:
        request = worker.busy_with
        worker.busy_with = None
        if future.cancelled() or future.exception() is None:
            assert self._idle is not None
            self._idle.put_nowait(worker)
            return
        log.error(
            "request %s: worker %s lost (%s); starting a replacement", request, worker.pid, future.exception()
        )
        self._replace(worker)

    def _replace(self, dead: Worker) -> None:
        if self._closing:
            return
        loop = asyncio.get_running_loop()
        dead.conn.close()

        def started(future: asyncio.Future[Worker]) -> None:
            if self._closing:
                return
            if future.exception() is not None:
                log.error("could not start a replacement worker: %s", future.exception())
                loop.call_later(1.0, self._replace, dead)  # retry: the slot must not be lost
                return
            fresh = future.result()
            self.workers[self.workers.index(dead)] = fresh
            self.replacements += 1
            assert self._idle is not None
            self._idle.put_nowait(fresh)

        assert self._threads is not None
        loop.run_in_executor(self._threads, start_worker).add_done_callback(started)

    async def close(self) -> None:
        self._closing = True
        loop = asyncio.get_running_loop()
        await asyncio.gather(*(loop.run_in_executor(None, stop_worker, w) for w in self.workers))
        if self._threads is not None:
            self._threads.shutdown(wait=False, cancel_futures=True)
