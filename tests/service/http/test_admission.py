"""Admission control and recovery: the bounded queue, Retry-After, the body budget, requests whose
client left, dead idle workers, recycling, the memory cap, the shutdown drain.

The oracles are HTTP's (status codes, Retry-After, Allow), the pool's own worker pids (a replaced
worker has a new one) and the kernel's (/proc VmHWM, RLIMIT_DATA)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import httpx

from service.http.app import create_app
from service.settings import Settings
from tests.service.service_support import REPO, example_body, free_port, heavy_body, wait_healthy
from tests.service.workers.test_workers import wait_for_busy_worker

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient


def metric(text: str, name: str) -> float:
    """One sample's value from Prometheus text (0 when absent)."""
    m = re.search(rf"^{re.escape(name)} (\S+)$", text, re.M)
    return float(m.group(1)) if m else 0.0


def in_background(client: TestClient, body: dict[str, object], out: list[httpx.Response]) -> threading.Thread:
    thread = threading.Thread(target=lambda: out.append(client.post("/diagrams", json=body)))
    thread.start()
    return thread


def wait_until(condition, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.01)


def assert_retry_after(r: httpx.Response) -> None:
    assert r.status_code == 503, r.text
    assert int(r.headers["retry-after"]) >= 1


def test_full_queue_is_503_with_retry_after_at_once():
    app = create_app(Settings(workers=1, time_limit=30.0, queue_limit=1, queue_seconds=60.0))
    with TestClient(app) as client:
        pool = app.state.pool
        answers: list[httpx.Response] = []
        busy = in_background(client, heavy_body(variation="q1"), answers)
        wait_for_busy_worker(pool)
        # the queued request only has to wait behind q1: a small diagram fills the queue as well
        queued = in_background(client, example_body("vectors", variation="q2"), answers)
        wait_until(lambda: pool.waiting == 1)
        assert metric(client.get("/metrics").text, "penrose_queue_depth") == 1
        t0 = time.monotonic()
        r = client.post("/diagrams", json=heavy_body(variation="q3"))
        assert time.monotonic() - t0 < 2  # at once, not after the two layouts ahead
        assert_retry_after(r)
        assert r.json()["error"] == "overloaded"
        busy.join(120)
        queued.join(120)
        assert [a.status_code for a in answers] == [200, 200]  # the admitted ones are served
        text = client.get("/metrics").text
        assert metric(text, 'penrose_rejections_total{reason="queue-full"}') == 1
        assert metric(text, "penrose_queue_depth") == 0


def test_a_wait_past_queue_seconds_is_503():
    # the busy layout only has to outlast the 0.2 s wait: its time limit ends it after 1.5 s (a 504,
    # not asserted) instead of its seconds of layout
    app = create_app(Settings(workers=1, time_limit=1.5, queue_limit=8, queue_seconds=0.2))
    with TestClient(app) as client:
        answers: list[httpx.Response] = []
        busy = in_background(client, heavy_body(variation="t1"), answers)
        wait_for_busy_worker(app.state.pool)
        r = client.post("/diagrams", json=example_body("vectors", variation="t2"))
        busy.join(120)
        assert_retry_after(r)
        assert "0.2 s" in r.json()["message"]
        assert metric(client.get("/metrics").text, 'penrose_rejections_total{reason="queue-timeout"}') == 1


def test_body_bytes_are_bounded_in_total_across_requests():
    body = heavy_body(variation="b1")
    size = len(httpx.Request("POST", "http://x", json=body).content)
    # room for one heavy body at a time, not two
    settings = Settings(workers=1, time_limit=30.0, max_total_body_bytes=size + size // 2)
    app = create_app(settings)
    with TestClient(app) as client:
        answers: list[httpx.Response] = []
        busy = in_background(client, body, answers)
        wait_for_busy_worker(app.state.pool)
        assert metric(client.get("/metrics").text, "penrose_body_bytes_held") == size
        r = client.post("/diagrams", json=heavy_body(variation="b2"))
        assert_retry_after(r)
        small = client.post("/diagrams", json=example_body("vectors", variation="b3"))
        busy.join(120)
        assert small.status_code == 200 and answers[0].status_code == 200
        # room again for a body of that size: b1's own, whose picture the result cache answers (the
        # budget is taken before the cache is looked at) instead of laying b2 out for seconds
        assert client.post("/diagrams", json=body).status_code == 200
        text = client.get("/metrics").text
        assert metric(text, 'penrose_rejections_total{reason="body-budget"}') == 1
        assert metric(text, "penrose_body_bytes_held") == 0


def test_405_keeps_its_allow_header():
    # routing answers it: without `with`, the lifespan (its worker pool) is never started
    client = TestClient(create_app(Settings(workers=1)))
    r = client.get("/diagrams")
    assert r.status_code == 405
    assert r.headers["allow"] == "POST"


def test_a_killed_idle_worker_is_replaced_before_a_request_lands_on_it():
    app = create_app(Settings(workers=1, time_limit=30.0))
    with TestClient(app) as client:
        pool = app.state.pool
        victim = pool.workers[0].pid
        os.kill(victim, signal.SIGKILL)
        # straight away: the request must not land on the dead worker
        r = client.post("/diagrams", json=example_body("vectors", variation="after-kill"))
        assert r.status_code == 200, r.text
        assert victim not in [w.pid for w in pool.workers]
        assert pool.restarts["crash"] == 1
        # and without any request: the watchdog notices a dead idle worker by itself
        victim = pool.workers[0].pid
        os.kill(victim, signal.SIGKILL)
        wait_until(lambda: pool.restarts["crash"] == 2)
        assert victim not in [w.pid for w in pool.workers]
        assert metric(client.get("/metrics").text, 'penrose_worker_restarts_total{reason="crash"}') == 2


def test_a_worker_past_its_memory_mark_is_recycled_after_its_job():
    # every process's peak resident memory is above 1 MB, so each job retires its worker
    app = create_app(Settings(workers=1, time_limit=30.0, worker_recycle_mb=1))
    with TestClient(app) as client:
        pool = app.state.pool
        first = pool.workers[0].pid
        assert client.post("/diagrams", json=example_body("vectors", variation="r1")).status_code == 200
        assert client.post("/diagrams", json=example_body("vectors", variation="r2")).status_code == 200
        assert first not in [w.pid for w in pool.workers]
        assert pool.restarts["recycle"] >= 1 and pool.restarts["crash"] == 0


def test_workers_run_under_the_data_memory_cap():
    app = create_app(Settings(workers=1, time_limit=30.0, worker_memory_mb=1536))
    with TestClient(app) as client:
        pid = app.state.pool.workers[0].pid
        limits = Path(f"/proc/{pid}/limits").read_text()
        row = next(line for line in limits.splitlines() if line.startswith("Max data size"))
        assert row.split()[3:5] == [str(1536 * 2**20)] * 2
        # wasmtime still reserves its address space: layouts run under the cap
        assert client.post("/diagrams", json=example_body("sets", variation="cap")).status_code == 200


def test_a_job_past_the_memory_cap_is_a_memory_outcome():
    """run_layout in a process capped as a worker is: an allocation past RLIMIT_DATA raises
    MemoryError, answered as kind "memory" naming the cap (the app answers it 507)."""
    script = """if True:
        import json, resource
        resource.setrlimit(resource.RLIMIT_DATA, (600 * 2**20, 600 * 2**20))
        import service.pipeline
        from service.workers.layout_job import run_layout
        def hungry(*args, **kwargs):
            return bytearray(2**30)  # 1 GB, past the cap
        service.pipeline.render_trio = hungry
        print(run_layout(json.loads(input())).model_dump_json(by_alias=True))
    """
    job = {**example_body("vectors"), "timeLimit": 30.0, "requestId": "hog"}
    done = subprocess.run(
        [sys.executable, "-c", script],
        input=json.dumps(job),
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    assert outcome["kind"] == "memory", outcome
    assert "600 MB" in outcome["message"]


def test_client_gone_while_queued_is_dropped_and_shutdown_drain_is_bounded():
    port = free_port()
    env = {"PENROSE_WORKERS": "1", "PENROSE_TIME_LIMIT": "120", "PENROSE_DRAIN_SECONDS": "1"}
    command = [sys.executable, "-m", "service", "serve", "--port", str(port)]
    process = subprocess.Popen(command, cwd=REPO, env={**os.environ, **env}, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, process, 60.0)
        answers: list[int] = []

        def post(variation: str, timeout: float, n_sets: int = 40) -> None:
            try:
                answers.append(
                    httpx.post(
                        f"{url}/diagrams", json=heavy_body(n_sets, variation=variation), timeout=timeout
                    ).status_code
                )
            except httpx.TimeoutException:
                answers.append(0)

        # g1 lays out 60 sets that cannot all be apart (seconds: the portfolio tries a second start on
        # its unmet constraints; the time limit is far above it, so g1 ends as a layout): g2 gives up
        # while queued
        busy = threading.Thread(target=post, args=("g1", 120, 60))
        busy.start()
        time.sleep(0.2)
        post("g2", 0.4)  # queued behind g1, then gives up
        busy.join(120)
        wait_until(lambda: "client-gone" in httpx.get(f"{url}/metrics").text, timeout=10)
        text = httpx.get(f"{url}/metrics").text
        assert metric(text, 'penrose_rejections_total{reason="client-gone"}') == 1
        assert metric(text, "penrose_layout_seconds_count") == 1  # g2's layout never ran
        # a backlog far longer than the drain bound: SIGTERM still ends the server promptly
        backlog = [threading.Thread(target=post, args=(f"d{i}", 120)) for i in range(4)]
        for t in backlog:
            t.start()
        time.sleep(0.5)
        t0 = time.monotonic()
        process.send_signal(signal.SIGTERM)
        process.wait(30)
        assert time.monotonic() - t0 < 10
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(5)
