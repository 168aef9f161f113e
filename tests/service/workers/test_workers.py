"""Worker processes: time limits, a crashed worker, a stuck worker, concurrency."""

from __future__ import annotations

import os
import signal
import threading
import time
import warnings

import pytest

from service.http.app import create_app
from service.settings import Settings
from tests.service.service_support import HAS_REGISTRY, REGISTRY, example_body, heavy_body

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

JSON = {"accept": "application/json"}


def test_layout_over_its_time_limit_is_504_timeout():
    app = create_app(Settings(workers=1, time_limit=0.5, kill_grace=20.0))
    with TestClient(app) as client:
        t0 = time.monotonic()
        r = client.post("/diagrams", json=heavy_body(), headers=JSON)
        elapsed = time.monotonic() - t0
        assert r.status_code == 504, r.text
        body = r.json()
        assert (body["error"], body["status"]) == ("timeout", "timeout")
        assert "time limit" in body["message"]
        assert elapsed < 10  # stopped by the Wasm deadline, far before the pool's kill deadline
        # the worker survived (the limit is enforced inside Wasm) and serves the next request
        pids = [w.pid for w in app.state.pool.workers]
        assert client.post("/diagrams", json=example_body("vectors")).status_code == 200
        assert [w.pid for w in app.state.pool.workers] == pids


def wait_for_busy_worker(pool, timeout: float = 30.0) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        busy = pool.busy_pids()
        if busy:
            return busy[0]
        time.sleep(0.01)
    raise AssertionError("no worker became busy")


def test_killed_worker_fails_only_its_request_and_is_replaced():
    app = create_app(Settings(workers=1, time_limit=30.0))
    with TestClient(app) as client:
        pool = app.state.pool
        answer: dict[str, object] = {}

        def slow_request() -> None:
            answer["response"] = client.post("/diagrams", json=heavy_body(variation="crash"), headers=JSON)

        thread = threading.Thread(target=slow_request)
        thread.start()
        victim = wait_for_busy_worker(pool)
        time.sleep(0.2)  # well inside the ~1 s layout
        os.kill(victim, signal.SIGKILL)
        thread.join(60)
        r = answer["response"]
        assert r.status_code == 503, r.text
        assert r.json()["error"] == "worker-crash"
        assert "crashed" in r.json()["message"]
        # the next request is served by a fresh worker
        ok = client.post("/diagrams", json=example_body("graph"), headers=JSON)
        assert ok.status_code == 200, ok.text
        assert victim not in [w.pid for w in pool.workers]
        assert pool.replacements == 1
        text = client.get("/metrics").text
        assert 'penrose_errors_total{kind="worker-crash"} 1.0' in text


def test_worker_stuck_past_its_deadline_is_killed_and_replaced():
    # Every phase checks the deadline, so a layout stops itself; a worker that cannot (stuck in
    # one long C call, here: stopped by SIGSTOP once it has the job) is killed at limit + grace.
    app = create_app(Settings(workers=1, time_limit=1.0, kill_grace=0.5))
    with TestClient(app) as client:
        before = [w.pid for w in app.state.pool.workers]
        answer: dict[str, object] = {}
        thread = threading.Thread(
            target=lambda: answer.update(
                r=client.post("/diagrams", json=heavy_body(variation="stuck"), headers=JSON)
            )
        )
        thread.start()
        time.sleep(0.3)  # the job is sent at once; the heavy layout takes over a second
        os.kill(before[0], signal.SIGSTOP)
        thread.join(60)
        r = answer["r"]
        assert r.status_code == 504, r.text
        assert r.json()["error"] == "timeout"
        # the killed worker is replaced
        deadline = time.monotonic() + 30
        while app.state.pool.replacements < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert app.state.pool.replacements == 1
        assert [w.pid for w in app.state.pool.workers] != before
        assert client.get("/readyz").status_code == 200


@pytest.mark.parametrize("workers", [2])
def test_a_long_layout_does_not_block_other_requests(workers):
    app = create_app(Settings(workers=workers, time_limit=30.0))
    with TestClient(app) as client:
        client.post("/diagrams", json=example_body("vectors", variation="warm"))  # warm one worker
        done: dict[str, float] = {}

        def slow() -> None:
            client.post("/diagrams", json=heavy_body(variation="long"), headers=JSON)
            done["slow"] = time.monotonic()

        thread = threading.Thread(target=slow)
        thread.start()
        wait_for_busy_worker(app.state.pool)
        t0 = time.monotonic()
        assert client.get("/healthz").status_code == 200
        health_latency = time.monotonic() - t0
        fast = client.post("/diagrams", json=example_body("vectors", variation="quick"))
        done["fast"] = time.monotonic()
        thread.join(60)
        assert fast.status_code == 200
        assert health_latency < 0.5  # the event loop is free while a layout runs
        assert done["fast"] < done["slow"]  # the small diagram finished first on the other worker


def children_of(pid: int) -> set[int]:
    try:
        return {int(c) for c in open(f"/proc/{pid}/task/{pid}/children").read().split()}
    except OSError:
        return set()


def watch_children(pid: int, seen: set[int], done: threading.Event) -> None:
    while not done.is_set():
        seen |= children_of(pid)
        time.sleep(0.002)


@pytest.mark.skipif(not HAS_REGISTRY, reason="needs ../shared registry data")
def test_start_processes_fork_in_the_layout_worker_and_draw_the_same_svg():
    from service.trios import load_trio

    trio = load_trio(REGISTRY / "minkowski-tests" / "maze" / "non-convex.trio.json")
    body = {"domain": trio.domain, "substance": trio.substance, "style": trio.style}
    svgs, forked = [], []
    for processes in (1, 2):
        app = create_app(Settings(workers=1, time_limit=60.0, start_processes=processes))
        with TestClient(app) as client:
            worker = app.state.pool.workers[0].pid
            seen: set[int] = set()
            done = threading.Event()
            watcher = threading.Thread(target=watch_children, args=(worker, seen, done))
            watcher.start()
            # more processes than the server allows: capped at its setting
            r = client.post("/diagrams", json={**body, "variation": trio.variation, "startProcesses": 4})
            done.set()
            watcher.join()
            assert r.status_code == 200, r.text
            svgs.append(r.content)
            forked.append(len(seen))
            assert not children_of(worker)  # every start process reaped when the layout ended
    assert forked == [0, 2]
    assert svgs[0] == svgs[1]


def test_a_worker_stopped_from_two_threads_at_once_closes_its_pipe_once():
    # a recycle's helper thread and the pool's close can stop one worker together (CI saw EBADF)
    from service.workers.pool import start_worker, stop_worker

    worker = start_worker()
    errors: list[BaseException] = []

    def stop() -> None:
        try:
            stop_worker(worker)
        except BaseException as e:  # noqa: BLE001 - any escape is the failure
            errors.append(e)

    threads = [threading.Thread(target=stop) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    worker.process.join(5)
    assert errors == []
    assert not worker.process.is_alive()
    assert worker.conn.closed
