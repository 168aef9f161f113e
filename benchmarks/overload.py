"""Overload and fault test of the HTTP service on loopback: admission control, recovery, memory.

    .venv/bin/python benchmarks/overload.py [--requests 300] [--workers 2] [--time-limit 30]
                                            [--bodies 200] [--url URL --pid PID]

Without --url it starts `python -m service serve` on a free loopback port and stops it after; with
--url alone (e.g. the proxy of docker/compose.yaml) only burst and probe run.
Phases, each bounded in requests and time:
  burst    --requests concurrent POST /diagrams, each uncached (a fresh variation): every one must
           be answered within the time limit + 1 s, as 200 or as 503 with Retry-After;
  probe    right after: GET /healthz and one small uncached layout, each answered in under 1 s;
  kill     SIGKILL an idle worker, then at once a request: answered 200 (not 503);
  bodies   --bodies concurrent 0.9 MB bodies: the server process's peak resident memory;
  hostile  a job past the worker's memory cap, beside a small one: its status, the small one's
           latency, the workers' resident memory after.
It prints the figures and exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import re
import signal
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from service_load import bodies, local_server  # noqa: E402


def workers(pid: int) -> list[int]:
    """The server's layout workers: its children started by multiprocessing's spawn (not its
    resource tracker), from /proc."""
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes():
                out.append(int(child))
    return out


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def metric(text: str, name: str) -> float:
    m = re.search(rf"^{re.escape(name)} (\S+)$", text, re.M)
    return float(m.group(1)) if m else 0.0


async def timed(
    client: httpx.AsyncClient, method: str, path: str, **kw: object
) -> tuple[float, httpx.Response]:
    t0 = time.perf_counter()
    r = await client.request(method, path, **kw)
    return time.perf_counter() - t0, r


async def burst(url: str, n: int, limit: float, failures: list[str]) -> None:
    source = itertools.islice(bodies(True), n)
    async with httpx.AsyncClient(
        base_url=url, timeout=limit + 30, limits=httpx.Limits(max_connections=n + 10)
    ) as client:
        t0 = time.perf_counter()
        results = await asyncio.gather(
            *(
                timed(client, "POST", "/diagrams", json={**b, "variation": f"burst-{time.time()}-{i}"})
                for i, b in enumerate(source)
            ),
            return_exceptions=True,
        )
        wall = time.perf_counter() - t0
        text = (await client.get("/metrics")).text  # behind a proxy: one replica's
    statuses: Counter[str] = Counter()
    late, latencies, retry_after = 0, [], []
    for res in results:
        if isinstance(res, BaseException):
            statuses[type(res).__name__] += 1
            continue
        seconds, r = res
        latencies.append(seconds)
        late += seconds > limit + 1
        if r.status_code == 503 and "retry-after" in r.headers:
            statuses["503+Retry-After"] += 1
            retry_after.append(int(r.headers["retry-after"]))
        else:
            statuses[str(r.status_code)] += 1
    reasons = {
        k: int(metric(text, f'penrose_rejections_total{{reason="{k}"}}'))
        for k in ("queue-full", "queue-timeout")
    }
    latencies.sort()
    q = statistics.quantiles(latencies, n=100, method="inclusive") if len(latencies) > 1 else [0.0] * 99
    print(
        f"burst    {n} concurrent uncached: {dict(statuses)} in {wall:.1f} s; latency p50 {q[49]:.2f} s, "
        f"p99 {q[98]:.2f} s, max {latencies[-1]:.2f} s (limit + 1 = {limit + 1:.0f} s); "
        f"Retry-After {min(retry_after, default=0)}-{max(retry_after, default=0)} s; 503s by reason {reasons}"
    )
    if set(statuses) - {"200", "503+Retry-After"}:
        failures.append(f"burst: answers other than 200 or 503 with Retry-After: {dict(statuses)}")
    if late:
        failures.append(f"burst: {late} answers later than the time limit + 1 s")


async def probe(url: str, failures: list[str]) -> None:
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        health, _ = await timed(client, "GET", "/healthz")
        body = {**next(bodies(True)), "variation": f"probe-{time.time()}"}
        layout, r = await timed(client, "POST", "/diagrams", json=body)
    print(
        f"probe    /healthz {health * 1e3:.0f} ms; a small uncached layout "
        f"{layout * 1e3:.0f} ms ({r.status_code})"
    )
    if health > 1 or layout > 1 or r.status_code != 200:
        failures.append("probe: not answered 200 in under 1 s after the burst")


async def kill_idle(url: str, server: int, failures: list[str], n_workers: int) -> None:
    victim = workers(server)[0]
    os.kill(victim, signal.SIGKILL)
    crash = 'penrose_worker_restarts_total{reason="crash"}'
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        before = metric((await client.get("/metrics")).text, crash)
        t0 = time.perf_counter()
        body = {**next(bodies(True)), "variation": "after-kill"}
        seconds, r = await timed(client, "POST", "/diagrams", json=body)
        while metric((await client.get("/metrics")).text, crash) == before and time.perf_counter() - t0 < 60:
            await asyncio.sleep(0.1)
        replaced = time.perf_counter() - t0
    print(
        f"kill     idle worker {victim} SIGKILLed: the next request {r.status_code} in {seconds:.2f} s; "
        f"a fresh worker serving {replaced:.1f} s after the kill; workers now {workers(server)}"
    )
    if r.status_code != 200 or victim in workers(server) or len(workers(server)) != n_workers:
        failures.append(f"kill: the request after an idle worker's death answered {r.status_code}")


async def big_bodies(url: str, server: int, n: int) -> None:
    base = next(bodies(True))
    filler = "-- " + "x" * 900_000 + "\n"  # a comment: parsed, then ignored
    before = rss_mb(server)
    async with httpx.AsyncClient(
        base_url=url, timeout=120, limits=httpx.Limits(max_connections=n + 10)
    ) as client:
        results = await asyncio.gather(
            *(
                client.post(
                    "/diagrams",
                    json={**base, "style": base["style"] + "\n" + filler, "variation": f"big-{i}"},
                )
                for i in range(n)
            ),
            return_exceptions=True,
        )
    statuses = Counter(r.status_code if isinstance(r, httpx.Response) else type(r).__name__ for r in results)
    print(
        f"bodies   {n} concurrent 0.9 MB bodies: {dict(statuses)}; server RSS {before:.0f} MB before, "
        f"peak {rss_mb(server, 'VmHWM'):.0f} MB, {rss_mb(server):.0f} MB after"
    )


async def hostile(url: str, server: int, limit: float) -> None:
    base = next(bodies(True))
    hog = {
        "domain": "type Set\n",
        "substance": "Set s_i for i in [1, 5000000]\n",
        "style": "forall Set s { s.icon = Circle {} }\n",
    }
    reasons = ("crash", "memory", "recycle")

    def restarts(text: str) -> dict[str, float]:
        return {k: metric(text, f'penrose_worker_restarts_total{{reason="{k}"}}') for k in reasons}

    async with httpx.AsyncClient(base_url=url, timeout=limit + 60) as client:
        before = sum(restarts((await client.get("/metrics")).text).values())
        first = asyncio.create_task(timed(client, "POST", "/diagrams", json=hog))
        await asyncio.sleep(0.5)
        small = await timed(client, "POST", "/diagrams", json={**base, "variation": "beside-hog"})
        seconds, r = await first
        t0 = time.perf_counter()
        while True:  # the hog's worker, when replaced, serves again
            after = restarts((await client.get("/metrics")).text)
            if (
                r.status_code not in (504, 507)
                or sum(after.values()) > before
                or time.perf_counter() - t0 > 30
            ):
                break
            await asyncio.sleep(0.2)
    error = r.json().get("error") if r.headers.get("content-type") == "application/json" else "-"
    print(
        f"hostile  5,000,000-object index set: {r.status_code} in {seconds:.1f} s ({error}); "
        f"a small layout beside it {small[1].status_code} in {small[0]:.2f} s; restarts {after}, "
        f"the last {time.perf_counter() - t0:.1f} s after the answer; "
        f"worker RSS then {[round(rss_mb(p)) for p in workers(server)]} MB"
    )


async def run(url: str, server: int | None, args: argparse.Namespace) -> list[str]:
    failures: list[str] = []
    async with httpx.AsyncClient(base_url=url, timeout=120) as client:  # warm: energies compiled once
        for body in itertools.islice(bodies(False), 6):
            await client.post("/diagrams", json=body)
    await burst(url, args.requests, args.time_limit, failures)
    await probe(url, failures)
    if server is None:
        print("kill, bodies, hostile: skipped (they watch the server's processes: give --pid)")
        return failures
    await kill_idle(url, server, failures, args.workers)
    await big_bodies(url, server, args.bodies)
    await hostile(url, server, args.time_limit)
    return failures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--bodies", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2, help="layout workers per server")
    parser.add_argument("--time-limit", type=float, default=30.0)
    parser.add_argument("--url", help="a running server (or proxy) on this machine; default: start one")
    parser.add_argument(
        "--pid", type=int, help="with --url, the server's process id (for kill, bodies, hostile)"
    )
    args = parser.parse_args()
    if args.url:
        failures = asyncio.run(run(args.url, args.pid, args))
    else:
        env = {"PENROSE_TIME_LIMIT": str(args.time_limit), "PENROSE_CACHE_ENTRIES": "0"}
        with local_server(args.workers, env) as (url, process):
            print(f"server {url}: {args.workers} workers, time limit {args.time_limit:g} s")
            failures = asyncio.run(run(url, process.pid, args))
    print("\n".join(f"MISSED {f}" for f in failures) or "all targets met")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
