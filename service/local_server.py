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
    URL and process once `/readyz` answers 200 (see `wait_ready`)."""
    port = free_port()
    command = [sys.executable, "-m", "service", "serve", "--port", str(port), "--workers", str(workers)]
    environment = {**os.environ, "PENROSE_CACHE_ENTRIES": "1024", **(env or {})}
    process = subprocess.Popen(
        command, cwd=cwd, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(url, process)
        yield url, process
    finally:
        stop(process)


def wait_ready(url: str, process: subprocess.Popen[bytes], timeout: float = READY_SECONDS) -> None:
    """Return once `url`/readyz answers 200; RuntimeError if the process exits first, TimeoutError
    after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with code {process.returncode}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{url}/readyz", timeout=1).status_code == 200:
                return
        time.sleep(0.2)
    raise TimeoutError(f"{url} did not become ready within {timeout} s")


def stop(process: subprocess.Popen[bytes], grace: float = 30.0) -> None:
    """Terminate the server; kill it if it has not exited after `grace` seconds."""
    process.terminate()
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(5)
