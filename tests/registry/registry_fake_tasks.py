"""Test-only tasks for the batch harness: each behaves according to the trio's variation."""

from __future__ import annotations

import os
import signal
import time

from service.trios import TrioSpec


def behave(trio: TrioSpec, timeout: float | None) -> dict:
    """``ok`` returns a row with an SVG; ``exit`` dies with status 3; ``segv`` kills itself with
    SIGSEGV; ``hang`` sleeps far past any timeout; ``raise`` raises; ``sleep`` records when it ran."""
    started = time.time()
    mode = trio.variation
    if mode == "exit":
        print("about to exit", flush=True)
        os._exit(3)
    if mode == "segv":
        os.kill(os.getpid(), signal.SIGSEGV)
    if mode == "hang":
        time.sleep(600)
    if mode == "raise":
        raise RuntimeError(f"broken trio {trio.key}")
    if mode == "sleep":
        time.sleep(1.0)
    svg = f"<svg xmlns='http://www.w3.org/2000/svg'><text>{trio.key}</text></svg>"
    return {
        "status": "ok",
        "compileMs": 10.0 * len(trio.key),
        "optimizeMs": 5.0,
        "renderMs": 1.0,
        "totalMs": 10.0 * len(trio.key) + 6.0,
        "nViolated": 0,
        "maxConstrViolation": -0.5,
        "svg": svg,
        "started": started,
        "ended": time.time(),
        "timeoutSeen": timeout,
        "pid": os.getpid(),
    }


def energetic(trio: TrioSpec, timeout: float | None, starts: int | None = None) -> dict:
    """An ``ok`` row whose energy is the number after ``~`` in the variation (0 without one), less
    the multi-start count it was given (recorded as ``startsSeen``)."""
    derived = trio.variation.rpartition("~")[2] if "~" in trio.variation else "0"
    return {
        "status": "ok",
        "compileMs": 10.0,
        "optimizeMs": 5.0,
        "totalMs": 16.0,
        "nViolated": 0,
        "energy": float(derived) - (starts or 0),
        "startsSeen": starts,
        "svg": f"<svg xmlns='http://www.w3.org/2000/svg'><text>{trio.key}</text></svg>",
    }


def parallel(trio: TrioSpec, timeout: float | None, processes: int | None = None) -> dict:
    """An ``ok`` row recording the start processes it was given (``processesSeen``)."""
    return {"status": "ok", "totalMs": 1.0, "processesSeen": processes}


def violating(trio: TrioSpec, timeout: float | None) -> dict:
    """An ``ok`` row whose Σ max(c, 0)² (``constraintSum``) is the number after ``~`` in the variation
    over 20 (0 without one), one constraint violated by its square root."""
    derived = int(trio.variation.rpartition("~")[2]) if "~" in trio.variation else 0
    total = derived / 20
    return {
        "status": "ok",
        "compileMs": 10.0,
        "optimizeMs": 5.0,
        "totalMs": 16.0,
        "energy": 1e3 * total,
        "constraintSum": total,
        "nViolated": int(total > 0),
        "maxConstrViolation": total**0.5,
        "svg": f"<svg xmlns='http://www.w3.org/2000/svg'><text>{trio.key} {derived}</text></svg>",
    }
