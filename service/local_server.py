"""A local `python -m service serve` for programs that drive the service from outside: the
benchmarks, the registry's editor check and the tests.

    with local_server(workers=2, env={"PENROSE_TIME_LIMIT": "30"}) as (url, process):
        httpx.get(f"{url}/healthz")

The server listens on a free loopback port and is stopped (terminated, then killed) on exit.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

READY_SECONDS = 120.0  # a loaded machine starts workers slowly


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def local_server(
    workers: int = 1, env: dict[str, str] | None = None, cwd: Path | None = None
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """The service of the code importable from `cwd` (default: this process's) on a free port: its
    URL and process once `/readyz` answers 200; a RuntimeError if it exits or is not ready in time."""
    port = free_port()
    command = [sys.executable, "-m", "service", "serve", "--port", str(port), "--workers", str(workers)]
    environment = {**os.environ, "PENROSE_CACHE_ENTRIES": "1024", **(env or {})}
    process = subprocess.Popen(
        command, cwd=cwd, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + READY_SECONDS
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/readyz", timeout=1).status_code == 200:
                    break
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the server did not start")
            time.sleep(0.2)
        yield url, process
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)
