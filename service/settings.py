"""The service's knobs, read once from the environment (``PENROSE_*``) or given by the CLI and tests."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, fields


def _parse_flag(name: str, raw: str) -> bool:
    if raw.lower() in ("0", "false", "no", "off"):
        return False
    if raw.lower() in ("1", "true", "yes", "on"):
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
    live_sessions: int = 2  # live editor sessions at once (service.workers.live_pool), each its own process
    live_idle: float = 120.0  # seconds a live session may wait for a command before it ends
    # Penrose's full passthrough of Style properties to SVG attributes, event handlers and external
    # URLs included: only for trusted clients (service.render.svg's safe mode is the default).
    unsafe_svg: bool = False
    # Processes one layout's starts may use at once (energies.optimize.parallel_starts; the layout is the same
    # with any number). 1: the workers already keep the cores busy, one request each.
    start_processes: int = 1


# A variable's text as its field's type (the annotations are strings: `from __future__ import annotations`).
PARSERS: dict[str, Callable[[str, str], object]] = {
    "int": lambda _, raw: int(raw),
    "float": lambda _, raw: float(raw),
    "bool": _parse_flag,
    "str": lambda _, raw: raw,
}
# Each setting's environment variable; a field not named here is set only by the CLI and tests.
ENV = {
    "workers": "PENROSE_WORKERS",
    "time_limit": "PENROSE_TIME_LIMIT",
    "max_body_bytes": "PENROSE_MAX_BODY_BYTES",
    "result_cache_entries": "PENROSE_CACHE_ENTRIES",
    "result_cache_bytes": "PENROSE_CACHE_BYTES",
    "queue_limit": "PENROSE_QUEUE",
    "queue_seconds": "PENROSE_QUEUE_SECONDS",
    "max_total_body_bytes": "PENROSE_MAX_TOTAL_BODY_BYTES",
    "worker_memory_mb": "PENROSE_WORKER_MEMORY_MB",
    "worker_recycle_mb": "PENROSE_WORKER_RECYCLE_MB",
    "compile_cache_dir": "PENROSE_COMPILE_CACHE_DIR",
    "compile_cache_mb": "PENROSE_COMPILE_CACHE_MB",
    "diagram_cache_mb": "PENROSE_DIAGRAM_CACHE_MB",
    "energy_cache_mb": "PENROSE_ENERGY_CACHE_MB",
    "module_cache_mb": "PENROSE_MODULE_CACHE_MB",
    "parse_cache_mb": "PENROSE_PARSE_CACHE_MB",
    "drain_seconds": "PENROSE_DRAIN_SECONDS",
    "live_sessions": "PENROSE_LIVE_SESSIONS",
    "live_idle": "PENROSE_LIVE_IDLE",
    "unsafe_svg": "PENROSE_UNSAFE_SVG",
    "start_processes": "PENROSE_START_PROCESSES",
}


def settings_from_env() -> Settings:
    """The defaults, with every PENROSE_* variable that is set and not empty, parsed as its field's type."""
    given: dict[str, object] = {}
    for f in fields(Settings):
        raw = os.environ.get(ENV.get(f.name, ""), "").strip()
        if f.name in ENV and raw:
            given[f.name] = PARSERS[f.type](ENV[f.name], raw)
    return Settings(**given)
