"""A bounded pool of layout worker processes, with admission control in front of it.

Each worker is a spawned process running `service.workers.layout_job.run_layout` on jobs it receives
over a pipe, one at a time, as JSON bytes (layout_job's typed messages, validated on both sides).
The event loop never runs a layout: a request borrows an idle worker and waits for its answer in a
small thread pool, so a long layout only occupies its own worker. The time limit itself is enforced
inside Wasm by the runtime; the pool only adds a last-resort deadline (limit + grace) for a worker
stuck outside Wasm, which it kills.

Admission: at most `queue_limit` requests wait for a worker, each at most `queue_seconds`; beyond
either, `run` raises `Overloaded` at once (the app answers 503 with its `retry_after`).  A waiting
request whose client went away (`gone()`) is dropped when its turn comes, before its job starts.

Memory: a worker's data segment is capped (RLIMIT_DATA; wasmtime's address-space reservations are
not counted, as they would be by RLIMIT_AS), so an oversized job fails with MemoryError inside the
worker (outcome kind "memory"); that worker, and any whose peak resident memory passed
`recycle_mb`, is replaced after its job, which drops its caches with it. Its in-process caches
(energies.caches.Caches: diagrams, compiled energies, compiled modules, parsed programs, and the disk
directory) are one object made from WorkerConfig and bounded in bytes by its budgets, and each
answer carries their weights (`workerCacheBytes`).

Recovery: a worker that dies (crash, OOM kill, signal) or is killed fails only its own request
(`WorkerCrashed` / `WorkerStuck`) and is replaced in the background.  A worker found dead while
idle (by the watchdog, or when a request takes it) is replaced before any request lands on it;
a job whose worker died before acknowledging it (a worker acknowledges each job as it reads it)
is retried once on another worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import multiprocessing
import os
import resource
import sys
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

from energies.caches import CacheBudgets, Caches
from energies.compile import set_threads
from service.settings import Settings

from .layout_job import Failed, Job, Outcome, job_of, memory_outcome, outcome_of, run_layout, wire

log = logging.getLogger("service.pool")

START_TIMEOUT = 120.0  # seconds for a fresh worker to import the pipeline and say it is ready
WATCH_SECONDS = 0.5  # how often idle workers are checked for life
STARTED = b"started"  # a worker's receipt of a job: a worker that dies before it was not the job's fault


class WorkerCrashed(RuntimeError):
    """The worker running a request died before answering."""


class WorkerGone(WorkerCrashed):
    """The worker was already dead when the job was sent: not the job's fault, so it is retried."""


class WorkerStuck(RuntimeError):
    """The worker running a request overran its deadline outside Wasm and was killed."""


class Overloaded(RuntimeError):
    """No worker for this request now: the queue is full, the wait too long, or the pool closing."""

    def __init__(self, reason: str, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.reason, self.retry_after = reason, retry_after


class ClientGone(RuntimeError):
    """The client disconnected while its request waited: the job was never started."""


@dataclass(frozen=True)
class WorkerConfig:
    memory_mb: int = 0  # RLIMIT_DATA, 0: none
    cache_dir: str = ""  # compiled code kept on disk here (shared by workers and replicas), "": none
    cache_mb: int = 512  # the disk cache is pruned to this after each job
    # the in-process caches' byte budgets (service.settings.Settings says which is which)
    diagram_cache_mb: int = 64
    energy_cache_mb: int = 192
    module_cache_mb: int = 64
    parse_cache_mb: int = 32
    evaluation_threads: int = 1  # threads one energy evaluation may use (energies.compile.pieces)


def cap_memory(memory_mb: int) -> None:
    """Cap this process's data segment (RLIMIT_DATA) at `memory_mb`; 0 leaves it uncapped."""
    if memory_mb > 0:
        cap = memory_mb * 2**20
        resource.setrlimit(resource.RLIMIT_DATA, (cap, cap))


def worker_caches(config: WorkerConfig) -> Caches:
    """A worker's caches: its disk directory and its byte budgets, from its configuration."""
    caches = Caches(disk_dir=config.cache_dir or None)
    caches.limit(
        CacheBudgets(
            config.diagram_cache_mb, config.energy_cache_mb, config.module_cache_mb, config.parse_cache_mb
        )
    )
    return caches


def prepare_worker(conn: Connection, config: WorkerConfig, label: str) -> Caches:
    """The start of every worker process (layout or live): log as `label`, cap its memory, make its
    caches, import and warm the pipeline, then tell the server it is ready."""
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format=f"%(asctime)s {label} %(message)s")
    cap_memory(config.memory_mb)
    set_threads(config.evaluation_threads)
    caches = worker_caches(config)
    from service.workers.warm_up import warm_up

    warm_up()
    conn.send_bytes(json.dumps({"ready": True, "pid": os.getpid()}).encode())
    return caches


def worker_main(conn: Connection, config: WorkerConfig) -> None:
    """A worker process: cap its memory, import the pipeline once, then answer jobs until told to stop."""
    from service.workers.compile_cache import prune

    caches = prepare_worker(conn, config, "worker")
    while True:
        try:
            raw = conn.recv_bytes()
        except (EOFError, OSError):
            return  # the server went away
        data = json.loads(raw)
        if data is None:
            return
        conn.send_bytes(STARTED)
        try:
            outcome = run_layout(job_of(data), caches)
            # the caches' weights ride along (cheap: sums kept by the LRUs); the app ignores them
            answer = json.dumps({**wire(outcome), "workerCacheBytes": caches.weights()}).encode()
        except MemoryError:  # e.g. while encoding a huge outcome; run_layout catches its own
            answer = json.dumps(wire(memory_outcome())).encode()
        conn.send_bytes(answer)
        if config.cache_dir:
            prune(config.cache_dir, config.cache_mb * 2**20)


def worker_config(settings: Settings) -> WorkerConfig:
    """A worker's configuration from the service's settings (layout and live workers alike)."""
    return WorkerConfig(
        settings.worker_memory_mb,
        settings.compile_cache_dir,
        settings.compile_cache_mb,
        settings.diagram_cache_mb,
        settings.energy_cache_mb,
        settings.module_cache_mb,
        settings.parse_cache_mb,
        settings.evaluation_threads,
    )


def peak_rss_mb(pid: int | None) -> float:
    """A process's peak resident memory (VmHWM) in MB; 0 where /proc cannot tell."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0.0


@dataclass
class Worker:
    process: multiprocessing.process.BaseProcess
    conn: Connection
    busy_with: str | None = None  # request id while running a job
    # stop_worker may run twice at once (a recycle's helper thread and the pool's close): the lock makes
    # the second a no-op, never a second close of a pipe descriptor the OS may have handed out again
    stopping: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def pid(self) -> int | None:
        return self.process.pid

    def alive(self) -> bool:
        """An idle worker never has anything to read: readable means its end of the pipe closed."""
        try:
            return self.process.is_alive() and not self.conn.poll(0)
        except (OSError, ValueError):
            return False


def spawn_worker(target: Callable[..., None], args: tuple[Any, ...], what: str) -> Worker:
    """Spawn `target(child_conn, *args)` (which calls `prepare_worker`) and wait until it is ready."""
    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe(duplex=True)
    name = "penrose-" + what.replace(" ", "-")
    process = ctx.Process(target=target, args=(child, *args), name=name, daemon=True)
    process.start()
    child.close()
    if not parent.poll(START_TIMEOUT):
        process.kill()
        raise WorkerCrashed(f"a {what} did not start within {START_TIMEOUT:.0f} s")
    try:
        json.loads(parent.recv_bytes())
    except (EOFError, OSError) as e:
        raise WorkerCrashed(f"a {what} died while starting") from e
    return Worker(process, parent)


def start_worker(config: WorkerConfig = WorkerConfig()) -> Worker:
    """Spawn a layout worker and wait until it has imported the pipeline."""
    return spawn_worker(worker_main, (config,), "layout worker")


def stop_worker(worker: Worker, timeout: float = 2.0) -> None:
    """Ask the worker to exit, kill it if it does not, close its pipe; at most once per worker."""
    if not worker.stopping.acquire(blocking=False):
        return
    with contextlib.suppress(OSError, ValueError):
        worker.conn.send_bytes(b"null")
    worker.process.join(timeout)
    if worker.process.is_alive():
        worker.process.kill()
        worker.process.join(timeout)
    worker.conn.close()


def exchange(worker: Worker, job: Job, deadline: float) -> Outcome:
    """Send one job and wait for its outcome (runs in a helper thread, never on the event loop)."""
    t0 = time.monotonic()
    try:
        worker.conn.send_bytes(json.dumps(wire(job)).encode())
        if worker.conn.poll(deadline):
            worker.conn.recv_bytes()  # the receipt
    except (EOFError, OSError, ValueError) as e:
        worker.process.kill()
        raise WorkerGone("the layout worker was gone before the job reached it") from e
    try:
        if not worker.conn.poll(max(0.0, deadline - (time.monotonic() - t0))):
            worker.process.kill()
            raise WorkerStuck(f"the layout did not finish within {deadline:.1f} s and its worker was stopped")
        answer = worker.conn.recv_bytes()
    except (EOFError, OSError) as e:
        code = worker.process.exitcode if not worker.process.is_alive() else None
        worker.process.kill()
        detail = f" (exit code {code})" if code is not None else ""
        raise WorkerCrashed(f"the layout worker crashed while rendering this diagram{detail}") from e
    return outcome_of(answer)


@dataclass
class LayoutPool:
    size: int
    time_limit: float
    kill_grace: float = 15.0
    queue_limit: int = 32
    queue_seconds: float = 10.0
    config: WorkerConfig = WorkerConfig()  # each worker's memory cap and disk cache
    recycle_mb: int = 0  # replace a worker whose peak RSS passed this after its job, 0: never
    on_restart: Callable[[str], None] = lambda reason: None  # "crash" | "memory" | "recycle"
    workers: list[Worker] = field(default_factory=list)
    waiting: int = 0  # requests queued for a worker
    restarts: Counter[str] = field(default_factory=Counter)  # replacements serving, by reason
    mean_job_seconds: float = 1.0  # moving average, for Retry-After
    _idle: asyncio.Queue[Worker] | None = None
    _threads: ThreadPoolExecutor | None = None
    _watchdog: asyncio.Task[None] | None = None
    _closing: bool = False

    async def start(self) -> None:
        """Start every worker (in parallel) and make them available."""
        if self.size < 1:
            raise ValueError("a layout pool needs at least one worker")
        self._idle = asyncio.Queue()
        # a thread per worker for exchanges, plus as many for replacements
        self._threads = ThreadPoolExecutor(max_workers=2 * self.size, thread_name_prefix="layout-pool")
        loop = asyncio.get_running_loop()
        started = await asyncio.gather(
            *(loop.run_in_executor(self._threads, start_worker, self.config) for _ in range(self.size))
        )
        for w in started:
            self.workers.append(w)
            self._idle.put_nowait(w)
        self._watchdog = asyncio.create_task(self._watch())

    @property
    def ready(self) -> bool:
        return not self._closing and any(w.process.is_alive() for w in self.workers)

    @property
    def replacements(self) -> int:
        """Workers restarted after a crash or a kill."""
        return self.restarts["crash"]

    def busy_pids(self) -> list[int]:
        return [w.pid for w in self.workers if w.busy_with is not None and w.pid is not None]

    def retry_after(self) -> int:
        """Seconds until the work ahead of a new request is likely done (1 to 60)."""
        ahead = self.waiting + len(self.busy_pids())
        return int(min(60, max(1, math.ceil(ahead * self.mean_job_seconds / self.size))))

    def overloaded(self, reason: str, message: str) -> Overloaded:
        return Overloaded(reason, message, self.retry_after())

    async def run(
        self, job: dict[str, Any] | Job, gone: Callable[[], Awaitable[bool]] | None = None
    ) -> dict[str, Any]:
        """Run one layout job on an idle worker, waiting in the bounded queue when all are busy; the
        outcome as its JSON object (layout_job's names), as the app answers it."""
        typed = job_of(job)
        for attempt in (1, 2):
            worker = await self._acquire(gone)
            try:
                return wire(await self._dispatch(worker, typed))
            except WorkerGone:
                if attempt == 2:
                    raise
                log.warning("request %s: worker was gone before its job; retrying", typed.request_id)
        raise AssertionError("unreachable")

    async def _acquire(self, gone: Callable[[], Awaitable[bool]] | None) -> Worker:
        assert self._idle is not None, "LayoutPool.start() first"
        if self._closing:
            raise self.overloaded("shutting-down", "the server is shutting down")
        if self._idle.empty() and self.waiting >= self.queue_limit:
            raise self.overloaded("queue-full", f"all workers are busy and {self.waiting} requests wait")
        self.waiting += 1
        try:
            # asyncio.timeout, not wait_for: a worker taken just as the wait times out is never lost
            async with asyncio.timeout(self.queue_seconds):
                worker = await self._take_live()
        except TimeoutError:
            raise self.overloaded(
                "queue-timeout", f"no worker became free within {self.queue_seconds:g} s"
            ) from None
        finally:
            self.waiting -= 1
        if self._closing:
            self._idle.put_nowait(worker)
            raise self.overloaded("shutting-down", "the server is shutting down")
        if gone is not None and await gone():
            self._idle.put_nowait(worker)
            raise ClientGone("the client went away before its layout started")
        return worker

    async def _take_live(self) -> Worker:
        assert self._idle is not None
        while True:
            worker = await self._idle.get()
            if worker.alive():
                return worker
            self._lost(worker, "crash", "found dead while idle")

    async def _dispatch(self, worker: Worker, job: Job) -> Outcome:
        assert self._threads is not None
        loop = asyncio.get_running_loop()
        worker.busy_with = job.request_id
        deadline = job.time_limit + self.kill_grace
        t0 = time.monotonic()
        future = loop.run_in_executor(self._threads, exchange, worker, job, deadline)
        # The worker goes back to the pool (or is replaced) when its exchange ends, even if the
        # request was cancelled meanwhile (client gone): a slot is never lost.
        future.add_done_callback(lambda f: self._release(worker, f, time.monotonic() - t0))
        return await asyncio.shield(future)

    def _release(self, worker: Worker, future: asyncio.Future[Outcome], seconds: float) -> None:
        request = worker.busy_with
        worker.busy_with = None
        self.mean_job_seconds += 0.2 * (seconds - self.mean_job_seconds)
        if not future.cancelled() and future.exception() is not None:
            self._lost(worker, "crash", f"request {request}: {future.exception()}")
            return
        outcome = None if future.cancelled() else future.result()
        if isinstance(outcome, Failed) and outcome.kind == "memory":
            self._lost(worker, "memory", f"request {request} ran out of memory")
        elif self.recycle_mb > 0 and (peak := peak_rss_mb(worker.pid)) > self.recycle_mb:
            self._lost(worker, "recycle", f"peak resident memory {peak:.0f} MB > {self.recycle_mb} MB")
        else:
            assert self._idle is not None
            self._idle.put_nowait(worker)

    def _lost(self, worker: Worker, reason: str, why: str) -> None:
        """Take a worker out of service for good and start its replacement in the background."""
        if self._closing:
            return
        level = logging.ERROR if reason == "crash" else logging.INFO
        log.log(level, "worker %s replaced: %s", worker.pid, why)
        self._replace(worker, reason)

    def _replace(self, old: Worker, reason: str) -> None:
        """Stop `old` and start its replacement in a helper thread; counted once the new one serves."""
        if self._closing:
            return
        loop = asyncio.get_running_loop()

        def stop_and_start() -> Worker:
            stop_worker(old)
            return start_worker(self.config)

        def started(future: asyncio.Future[Worker]) -> None:
            if self._closing:
                if future.exception() is None:
                    stop_worker(future.result(), timeout=0.5)
                return
            if future.exception() is not None:
                log.error("could not start a replacement worker: %s", future.exception())
                loop.call_later(1.0, self._replace, old, reason)  # retry: the slot must not be lost
                return
            fresh = future.result()
            self.workers[self.workers.index(old)] = fresh
            self.restarts[reason] += 1
            self.on_restart(reason)
            assert self._idle is not None
            self._idle.put_nowait(fresh)

        assert self._threads is not None
        loop.run_in_executor(self._threads, stop_and_start).add_done_callback(started)

    async def _watch(self) -> None:
        """Replace idle workers that died (e.g. killed by the OOM killer) before a request takes them."""
        assert self._idle is not None
        while not self._closing:
            await asyncio.sleep(WATCH_SECONDS)
            idle = [self._idle.get_nowait() for _ in range(self._idle.qsize())]
            for worker in idle:
                if worker.alive():
                    self._idle.put_nowait(worker)
                else:
                    self._lost(worker, "crash", "found dead while idle")

    async def close(self) -> None:
        self._closing = True
        if self._watchdog is not None:
            self._watchdog.cancel()
        loop = asyncio.get_running_loop()
        await asyncio.gather(*(loop.run_in_executor(None, stop_worker, w) for w in self.workers))
        if self._threads is not None:
            self._threads.shutdown(wait=False, cancel_futures=True)
