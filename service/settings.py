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
    # Admission: requests waiting for a worker beyond the busy ones; past this, or after waiting
    # queue_seconds, a request is answered 503 with Retry-After at once instead of piling up.
    queue_limit: int = 32
    queue_seconds: float = 10.0
    max_total_body_bytes: int = 32_000_000  # request bodies held in memory at once, all requests together
    # Each worker's data segment (heap and private writable mappings, RLIMIT_DATA) is capped: a
    # job past it fails with MemoryError (answered 507) and its worker is replaced.  RLIMIT_AS
    # would also count wasmtime's large PROT_NONE address-space reservations and break every layout.
    worker_memory_mb: int = 2048  # 0: no cap
    # A worker whose peak resident memory passed this mark (a large job) is replaced after its job.
    worker_recycle_mb: int = 1024  # 0: never
    # Compiled code kept on disk, shared by the workers (and by replicas mounting one volume) and
    # pruned to compile_cache_mb; "": in each worker's memory only.
    compile_cache_dir: str = ""
    compile_cache_mb: int = 512
    # Each layout worker's in-process caches, bounded in bytes (weights measured per entry, see
    # docs/operations.md); together well under worker_recycle_mb, so a worker is recycled for a
    # large job, never for what it merely keeps. 0: that cache keeps nothing.
    diagram_cache_mb: int = 64  # built diagrams (service.pipeline.DIAGRAMS)
    energy_cache_mb: int = 192  # compiled energies by structure (energies.compile.problem.CACHE)
    module_cache_mb: int = 64  # compiled Wasm modules (adcore.wasm.runtime.MODULES)
    parse_cache_mb: int = 32  # parsed programs, three languages (energies.lang.parse.PARSED)
    drain_seconds: float = 10.0  # on shutdown, in-flight requests get this long before they are cut
    live_sessions: int = 2  # live editor sessions (service.live) at once, each in its own process
    live_idle: float = 120.0  # seconds a live session may wait for a command before it ends
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
        queue_limit=_env_int("PENROSE_QUEUE", Settings.queue_limit),
        queue_seconds=_env_float("PENROSE_QUEUE_SECONDS", Settings.queue_seconds),
        max_total_body_bytes=_env_int("PENROSE_MAX_TOTAL_BODY_BYTES", Settings.max_total_body_bytes),
        worker_memory_mb=_env_int("PENROSE_WORKER_MEMORY_MB", Settings.worker_memory_mb),
        worker_recycle_mb=_env_int("PENROSE_WORKER_RECYCLE_MB", Settings.worker_recycle_mb),
        compile_cache_dir=os.environ.get("PENROSE_COMPILE_CACHE_DIR", Settings.compile_cache_dir),
        compile_cache_mb=_env_int("PENROSE_COMPILE_CACHE_MB", Settings.compile_cache_mb),
        diagram_cache_mb=_env_int("PENROSE_DIAGRAM_CACHE_MB", Settings.diagram_cache_mb),
        energy_cache_mb=_env_int("PENROSE_ENERGY_CACHE_MB", Settings.energy_cache_mb),
        module_cache_mb=_env_int("PENROSE_MODULE_CACHE_MB", Settings.module_cache_mb),
        parse_cache_mb=_env_int("PENROSE_PARSE_CACHE_MB", Settings.parse_cache_mb),
        drain_seconds=_env_float("PENROSE_DRAIN_SECONDS", Settings.drain_seconds),
        live_sessions=_env_int("PENROSE_LIVE_SESSIONS", Settings.live_sessions),
        live_idle=_env_float("PENROSE_LIVE_IDLE", Settings.live_idle),
        unsafe_svg=_env_flag("PENROSE_UNSAFE_SVG"),
    )
