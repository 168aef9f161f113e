"""The service's knobs: `Settings`, given by the CLI and tests, or read once from the environment.

    settings = settings_from_env()          # the defaults, with every PENROSE_* variable that is set
    settings = Settings(workers=1)          # explicit values only: never reads the environment

Rules: each field's environment variable is ``PENROSE_`` + its name in capitals, except where its
``validation_alias`` names another (`ENV` lists them all); an empty variable counts as unset; a value
that does not parse as the field's type is a `SettingsError` naming the variable. Booleans take
1/true/yes/on and 0/false/no/off in any case. pydantic-settings does the reading and parsing.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

PREFIX = "PENROSE_"


class SettingsError(ValueError):
    """A PENROSE_* variable whose value is not of its setting's type."""


class Settings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    workers: int = 2  # layout worker processes
    time_limit: float = 30.0  # seconds per layout, every phase (energies.limits; Wasm by its epoch deadline)
    max_body_bytes: int = 1_000_000  # larger request bodies get 413 before any parsing
    # finished renderings kept, keyed by the full request, and bounded in total SVG size
    result_cache_entries: int = Field(256, validation_alias="PENROSE_CACHE_ENTRIES")
    result_cache_bytes: int = Field(64_000_000, validation_alias="PENROSE_CACHE_BYTES")
    # A worker still busy this long after its time limit is stuck outside Wasm (e.g. in Python):
    # it is killed and replaced, and its request answered 504.
    kill_grace: float = 15.0
    # Admission: requests waiting for a worker beyond the busy ones; past this, or after waiting
    # queue_seconds, a request is answered 503 with Retry-After at once instead of piling up.
    queue_limit: int = Field(32, validation_alias="PENROSE_QUEUE")
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
    # Each layout worker's in-process caches (energies.caches.Caches), bounded in bytes (weights
    # measured per entry, see docs/operations.md); together well under worker_recycle_mb, so a worker
    # is recycled for a large job, never for what it merely keeps. 0: that cache keeps nothing.
    diagram_cache_mb: int = 64  # built diagrams
    energy_cache_mb: int = 192  # compiled energies by structure
    module_cache_mb: int = 64  # compiled Wasm modules
    parse_cache_mb: int = 32  # parsed programs, three languages
    drain_seconds: float = 10.0  # on shutdown, in-flight requests get this long before they are cut
    live_sessions: int = 2  # live editor sessions at once (service.workers.live_pool), each its own process
    live_idle: float = 120.0  # seconds a live session may wait for a command before it ends
    # Penrose's full passthrough of Style properties to SVG attributes, event handlers and external
    # URLs included: only for trusted clients (service.render.svg's safe mode is the default).
    unsafe_svg: bool = False
    # Processes one layout's starts may use at once (energies.optimize.parallel_starts; the layout is
    # the same with any number). 1: the workers already keep the cores busy, one request each.
    start_processes: int = 1
    # Threads one energy evaluation of a large diagram may use (energies.compile.pieces; 2 at most;
    # the layout may then differ in its last bits). 1 for the same reason.
    evaluation_threads: int = Field(1, ge=1)


class _FromEnvironment(BaseSettings, Settings):
    model_config = SettingsConfigDict(env_prefix=PREFIX, env_ignore_empty=True, frozen=True, extra="ignore")


def env_name(field: str) -> str:
    alias = Settings.model_fields[field].validation_alias
    return alias if isinstance(alias, str) else PREFIX + field.upper()


# What a value that failed to parse should have been, by pydantic's error type.
_EXPECTED = {
    "bool_parsing": "1/true/yes/on or 0/false/no/off",
    "int_parsing": "a whole number",
    "float_parsing": "a number",
}

# Each setting's environment variable, by field.
ENV = {name: env_name(name) for name in Settings.model_fields}


def settings_from_env() -> Settings:
    """The defaults, with every PENROSE_* variable that is set and not empty, parsed as its field's type."""
    try:
        read = _FromEnvironment()
    except ValidationError as e:
        problems = [_problem(err) for err in e.errors()]
        raise SettingsError("; ".join(problems)) from None
    return Settings(**{name: getattr(read, name) for name in Settings.model_fields})


def _problem(err: Any) -> str:
    name = ENV.get(str(err["loc"][0]), str(err["loc"][0]))
    expected = f"at least {err['ctx']['ge']}" if err["type"] == "greater_than_equal" else None
    return f"{name} must be {expected or _EXPECTED.get(err['type'], err['msg'])}, got {err['input']!r}"
