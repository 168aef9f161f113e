"""Load test of the HTTP service: throughput and latency percentiles, cached vs uncached.

    .venv/bin/python benchmarks/service_load.py [--url http://127.0.0.1:8000] [--requests 500]
                                                [--concurrency 8] [--workers 2]

Without --url it starts `python -m service serve` on a free loopback port and stops it after.
Two phases, each sending --requests POST /diagrams mixing our example diagrams:
  cached    the examples with their own variations: after the first of each, answered from the
            result cache;
  uncached  every request with a fresh variation: a full layout each time (the compiled energy is
            still reused by structure inside the workers).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import statistics
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from service.examples import examples  # noqa: E402
from service.local_server import local_server  # noqa: E402


def bodies(fresh_variations: bool) -> Iterator[dict[str, object]]:
    trios = list(examples().values())
    for i, trio in zip(itertools.count(), itertools.cycle(trios)):
        yield {
            "domain": trio.domain,
            "substance": trio.substance,
            "style": trio.style,
            "variation": f"load-{i}" if fresh_variations else trio.variation,
        }


async def run_phase(url: str, n: int, concurrency: int, fresh: bool) -> dict[str, object]:
    source = iter(itertools.islice(bodies(fresh), n))
    latencies: list[float] = []
    statuses: Counter[int] = Counter()
    async with httpx.AsyncClient(base_url=url, timeout=120.0) as client:

        async def worker() -> None:
            for body in source:  # shared iterator: each body is sent once
                t0 = time.perf_counter()
                r = await client.post("/diagrams", json=body)
                latencies.append(time.perf_counter() - t0)
                statuses[r.status_code] += 1

        t0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        wall = time.perf_counter() - t0
    latencies.sort()
    q = statistics.quantiles(latencies, n=100, method="inclusive")
    return {
        "requests": len(latencies),
        "wall_s": wall,
        "throughput": len(latencies) / wall,
        "p50_ms": q[49] * 1e3,
        "p99_ms": q[98] * 1e3,
        "statuses": dict(statuses),
    }


def report(name: str, r: dict[str, object]) -> None:
    print(
        f"{name:9s} {r['requests']:5d} requests in {r['wall_s']:6.2f} s: {r['throughput']:7.1f} req/s, "
        f"p50 {r['p50_ms']:7.1f} ms, p99 {r['p99_ms']:7.1f} ms, statuses {r['statuses']}"
    )


async def main_async(url: str, n: int, concurrency: int) -> None:
    # one request per example first, so both phases measure a warm server (compiled energies cached)
    async with httpx.AsyncClient(base_url=url, timeout=120.0) as client:
        for body in itertools.islice(bodies(False), len(examples())):
            await client.post("/diagrams", json=body)
    report("cached", await run_phase(url, n, concurrency, fresh=False))
    report("uncached", await run_phase(url, n, concurrency, fresh=True))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--url", help="a running server; default: start one locally")
    parser.add_argument("--requests", type=int, default=500, help="per phase (default 500)")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2, help="layout workers of the local server")
    args = parser.parse_args()
    n_examples = len(examples())
    print(
        f"{n_examples} example diagrams, {args.requests} requests per phase, concurrency {args.concurrency}"
    )
    if args.url:
        asyncio.run(main_async(args.url, args.requests, args.concurrency))
    else:
        with local_server(args.workers) as (url, _):
            print(f"local server {url} with {args.workers} layout workers")
            asyncio.run(main_async(url, args.requests, args.concurrency))


if __name__ == "__main__":
    main()
