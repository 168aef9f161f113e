"""The service's knobs, read once from the environment (``PENROSE_*``) or given by the CLI and tests."""

from __future__ import annotations

import os
from dataclasses import dataclass


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    return int(raw) if raw not in (None, "") else default


def _env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    return float(raw) if raw not in (None, "") else default


def _env_flag(name: str) -> bool:
    raw = os.environ.get(name, "").strip().lower()
    if raw in ("", "0", "false", "no", "off"):
        return False
    if raw in ("1", "true", "yes", "on"):
        return True
    raise ValueError(f"{name} must be 1/true/yes/on or 0/false/no/off, got {raw!r}")


@dataclass(frozen=True)
class Settings:
    workers: int = 2  # layout worker processes
    time_limit: float = 30.0  # seconds per layout, every phase (energies.limits; Wasm by its epoch deadline)
    max_body_bytes: int = 1_000_000  # larger request bodies get 413 before any parsing
    result_cache_entries: int = 256  # finished renderings kept, keyed by the full request
    result_cache_bytes: int = 64_000_000  # and bounded in total SVG size
    # A worker still busy this long after its time limit is stuck outside Wasm (e.g. in Python):
    # it is killed and replaced, and its request answered 504.
    kill_grace: float = 15.0
    # Penrose's full passthrough of Style properties to SVG attributes, event handlers and external
    # URLs included: only for trusted clients (service.render's safe mode is the default).
    unsafe_svg: bool = False


def settings_from_env() -> Settings:
    return Settings(
        workers=_env_int("PENROSE_WORKERS", Settings.workers),
        time_limit=_env_float("PENROSE_TIME_LIMIT", Settings.time_limit),
        max_body_bytes=_env_int("PENROSE_MAX_BODY_BYTES", Settings.max_body_bytes),
        result_cache_entries=_env_int("PENROSE_CACHE_ENTRIES", Settings.result_cache_entries),
        result_cache_bytes=_env_int("PENROSE_CACHE_BYTES", Settings.result_cache_bytes),
        unsafe_svg=_env_flag("PENROSE_UNSAFE_SVG"),
    )
