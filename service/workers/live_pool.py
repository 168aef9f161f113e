"""The live workers and the sessions running on them, for the /live endpoints (service.http.live).

Each session runs in a live worker process of its own (`service.workers.live_session`), never in the event
loop; at most `Settings.live_sessions` run at once (a further one takes the worker of the session
that has rested longest after its layout, whose stream ends with reason `reclaimed`, or else gets
429 at once), each layout or drag under
the service's time limit, and a session left without a command for `Settings.live_idle` seconds
(paused, or after its layout) ends. The workers start on the first session and stay, so the
compiled energies they cache serve the next sessions. A worker that does not end its session within
the kill grace of being told (stuck outside Wasm) is killed and replaced.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
import threading
import time
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

from service.settings import Settings

from .pool import Worker, WorkerConfig, prepare_worker, spawn_worker, stop_worker, worker_config

log = logging.getLogger("service.live")
BUSY_WAIT = 5.0  # seconds a new session waits at most for ending sessions to free their workers
# seconds for a client's just-closed stream to be noticed (its session then ends and frees a worker)
CLOSE_GRACE = 1.0


def live_worker_main(conn: Connection, idle_limit: float, config: WorkerConfig) -> None:
    """A live worker process: started as a layout worker is (memory cap, cache budgets, warm
    pipeline), then runs one session at a time until told to stop."""
    from service.workers.live_session import run_session

    caches = prepare_worker(conn, config, "live")
    while True:
        try:
            message = json.loads(conn.recv_bytes())
        except (EOFError, OSError):
            return
        if message is None:
            return
        if "start" in message:  # anything else is a command that came after its session ended
            run_session(conn, message["start"], idle_limit, caches)


def start_live_worker(idle_limit: float, config: WorkerConfig) -> Worker:
    return spawn_worker(live_worker_main, (idle_limit, config), "live worker")


@dataclass
class LiveSession:
    id: str
    worker: Worker
    events: asyncio.Queue[dict[str, Any] | None] = field(default_factory=asyncio.Queue)
    ended: bool = False
    ending: bool = False  # told to end (its client left, or it was reclaimed)
    resting_since: float | None = None  # laid out (or settled after a drag), waiting for a drag


class LiveSessions:
    """The live workers and the sessions running on them."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.idle: list[Worker] = []
        self.count = 0  # workers started or starting
        self.sessions: dict[str, LiveSession] = {}
        self.lock = asyncio.Lock()
        self.warming: asyncio.Task[None] | None = None
        self.released = asyncio.Event()  # set whenever a session ends and frees its worker

    def prewarm(self) -> None:
        """Start a worker in the background if none is up (the playground's page load calls it, so
        the first live layout does not wait for a process to start)."""
        if self.count == 0 and self.settings.live_sessions > 0:
            self.count += 1

            async def start() -> None:
                try:
                    worker = await asyncio.to_thread(
                        start_live_worker, self.settings.live_idle, worker_config(self.settings)
                    )
                except Exception as e:  # noqa: BLE001 - the next session starts one itself
                    log.error("could not start a live worker: %s", e)
                    self.count -= 1
                    return
                self.idle.append(worker)

            self.warming = asyncio.get_running_loop().create_task(start())

    async def open(self, job: dict[str, Any]) -> LiveSession | None:
        """A session on an idle (or new) worker. When every worker is in use, the session that has
        rested longest after its layout (it only waits for drags) is reclaimed for this one, and a
        session being ended is waited for (up to `BUSY_WAIT`; it also goes before starting a new
        process, for `CLOSE_GRACE`). None within `CLOSE_GRACE` when every session is laying out,
        dragging or paused, so that a client falls back to POST /diagrams without waiting long."""
        start = time.monotonic()
        while True:
            ending = any(s.ending for s in self.sessions.values())
            worker = await self.take_worker(allow_new=not ending or time.monotonic() - start >= CLOSE_GRACE)
            if worker is not None:
                break
            if not ending:
                self.reclaim()
                ending = any(s.ending for s in self.sessions.values())
            limit = start + (BUSY_WAIT if ending else CLOSE_GRACE)
            if time.monotonic() >= limit:
                return None
            self.released.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.released.wait(), min(limit - time.monotonic(), 0.25))
        session = LiveSession(secrets.token_urlsafe(12), worker)
        self.sessions[session.id] = session
        worker.conn.send_bytes(json.dumps({"start": job}).encode())
        loop = asyncio.get_running_loop()
        threading.Thread(target=self.pump, args=(session, loop), daemon=True, name="live-pump").start()
        return session

    async def take_worker(self, allow_new: bool) -> Worker | None:
        """An idle worker, or a new one when allowed and below the limit; None when neither."""
        async with self.lock:
            if self.warming is not None:
                await self.warming
                self.warming = None
            while self.idle:
                worker = self.idle.pop()
                if worker.process.is_alive():
                    return worker
                self.count -= 1
            if not allow_new or self.count >= self.settings.live_sessions:
                return None
            self.count += 1
            try:
                return await asyncio.to_thread(
                    start_live_worker, self.settings.live_idle, worker_config(self.settings)
                )
            except Exception:
                self.count -= 1
                raise

    def reclaim(self) -> None:
        resting = [s for s in self.sessions.values() if s.resting_since is not None and not s.ending]
        if resting:
            oldest = min(resting, key=lambda s: s.resting_since or 0.0)
            oldest.ending = True
            self.command(oldest.id, {"action": "reclaimed"})

    def pump(self, session: LiveSession, loop: asyncio.AbstractEventLoop) -> None:
        """Forward the worker's messages to the session's queue until its session ends (a thread)."""
        conn = session.worker.conn
        try:
            while True:
                message = json.loads(conn.recv_bytes())
                event = message.get("event")
                if event in ("done", "settled"):
                    session.resting_since = time.monotonic()
                elif event == "frame":
                    session.resting_since = None
                loop.call_soon_threadsafe(session.events.put_nowait, message)
                if event == "end":
                    break
        except (EOFError, OSError):
            code = session.worker.process.exitcode
            crash = {"event": "error", "data": {"kind": "crash", "message": f"the live worker died ({code})"}}
            loop.call_soon_threadsafe(session.events.put_nowait, crash)
            session.worker.process.kill()
            loop.call_soon_threadsafe(self.release, session, False)
            return
        loop.call_soon_threadsafe(self.release, session, True)

    def release(self, session: LiveSession, alive: bool) -> None:
        session.ended = True
        session.events.put_nowait(None)
        self.sessions.pop(session.id, None)
        if alive and session.worker.process.is_alive():
            self.idle.append(session.worker)
        else:
            self.count -= 1
        self.released.set()

    def command(self, session_id: str, command: dict[str, Any]) -> bool:
        session = self.sessions.get(session_id)
        if session is None or session.ended:
            return False
        if command.get("action") == "drag":
            session.resting_since = None
        elif command.get("action") in ("cancel", "end"):
            session.ending = True
        with contextlib.suppress(OSError):
            session.worker.conn.send_bytes(json.dumps(command).encode())
        return True

    async def close_session(self, session: LiveSession) -> None:
        """The client went away: end the session; kill its worker if it does not end in time."""
        if session.ended:
            return
        session.ending = True
        self.command(session.id, {"action": "end"})
        await asyncio.sleep(0)
        deadline = self.settings.kill_grace + self.settings.time_limit
        for _ in range(int(deadline * 10)):
            if session.ended:
                return
            await asyncio.sleep(0.1)
        log.error("live session %s did not end; killing its worker", session.id)
        session.worker.process.kill()

    def stop(self) -> None:
        for worker in self.idle:
            stop_worker(worker)
        for session in list(self.sessions.values()):
            session.worker.process.kill()
