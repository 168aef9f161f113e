"""Running adcore's Wasm under wasmtime: one engine, cached modules, fast calls, limits, memory views.

* ``engine(tier)``: one process-wide ``wasmtime.Engine`` per tier, both with epoch interruption; a
  daemon thread advances their epochs every ``TICK_SECONDS``.  Tier "optimized" is Cranelift at opt
  level "speed" (fast code, ~50k IR instructions compiled per second); tier "baseline" is Winch,
  wasmtime's single-pass compiler (~20x faster to compile, code ~5x slower).
* ``load_module(wasm, cache_dir=None, tier="optimized")``: compiled modules are cached in memory by
  sha256 of the bytes + engine configuration (``MODULES``, an LRU bounded in bytes by
  ``module_weight``; a host sets its budget with ``MODULES.limit``), and optionally on disk as
  ``Module.serialize()`` output wrapped in our own header (magic, key, sha256 of the payload),
  checked before anything is deserialized.  (wasmtime's built-in cache is left off: it needs a TOML
  file and a per-user directory, and it would not let us validate files before wasmtime reads them.)
* ``optimize_in_background(wasm, cache_dir)``: the optimized module compiled by a daemon thread
  (one compile at a time, the same bytes compiled once); the returned Future ends in the module,
  which is also put in the caches.  ``adcore.wasm.compiled`` uses it to start on baseline code.
* ``Instance``: one ``Store`` + one instance, with a per-call time limit (epoch deadline) and a
  memory limit.  Traps become ``WasmTrap`` subclasses naming the exported function.
  THREADING: an ``Instance`` (its Store) must only be used by one thread at a time; create one
  ``Instance`` per thread.  Engines and ``load_module`` are safe to share between threads.
* ``FastFunc``: calls an export through ``wasmtime_func_call_unchecked`` with a preallocated
  argument/result buffer, skipping the type inspection and boxing done by ``Func.__call__``.

This module is the one adapter to wasmtime-py's private parts (``wasmtime._ffi``: the C API's
unchecked calls and callbacks, Winch's strategy value; ``wasmtime._func.LAST_EXCEPTION``: a host
function's exception). Version rule: they were checked against the wasmtime-py majors in
``WASMTIME_VERIFIED``; importing this module under another raises ``WasmtimeInternalsChanged``
naming it, and tests/adcore/test_wasmtime_adapter.py fails, so an upgrade is checked first.
"""

from __future__ import annotations

import atexit
import ctypes
import hashlib
import importlib.metadata
import os
import platform
import queue
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
import wasmtime
from wasmtime import _ffi as ffi
from wasmtime import _func as wasmtime_func

from ..errors import OpaqueCallError, RangeError, WasmCompileError
from ..lru import LRU

WASMTIME_VERIFIED = (40, 50)  # first and last wasmtime-py major versions whose private parts we use


class WasmtimeInternalsChanged(RuntimeError):
    """The installed wasmtime-py is not a version whose private parts this adapter was checked against."""


def wasmtime_major() -> int:
    return int(importlib.metadata.version("wasmtime").split(".")[0])


if not WASMTIME_VERIFIED[0] <= wasmtime_major() <= WASMTIME_VERIFIED[1]:
    raise WasmtimeInternalsChanged(
        f"wasmtime-py {importlib.metadata.version('wasmtime')} is installed; adcore.wasm.runtime uses its"
        f" private _ffi and _func as versions {WASMTIME_VERIFIED[0]}-{WASMTIME_VERIFIED[1]} define them"
    )

TICK_SECONDS = 0.01
ENGINE_SETTINGS: dict[str, object] = {
    "epoch_interruption": True,
    "cranelift_opt_level": "speed",
    "parallel_compilation": True,
}
# Winch is selected through the C API: wasmtime-py's `Config.strategy` setter knows only "auto"
# and "cranelift".  A wasmtime built without Winch gets Cranelift's quickest settings instead.
# Baseline compiles run on the calling thread: wasmtime's worker threads are shared by all engines,
# and a background Cranelift compile holding them would hold up Winch tenfold.
BASELINE_SETTINGS: dict[str, object] = {
    "epoch_interruption": True,
    "strategy": "winch",
    "parallel_compilation": False,
}
BASELINE_FALLBACK: dict[str, object] = {
    "epoch_interruption": True,
    "parallel_compilation": False,
    "cranelift_opt_level": "none",
    "regalloc_algorithm": "single_pass",
}
TIERS = ("optimized", "baseline")
_WINCH = 2  # wasmtime_strategy_t
WASM_PAGE = 65536

# --- errors -----------------------------------------------------------------------------------------


class WasmTrap(RuntimeError):
    """A Wasm program stopped abnormally; ``function`` is the export that was called."""

    def __init__(self, function: str, message: str) -> None:
        super().__init__(f"wasm function {function!r}: {message}")
        self.function = function


class WasmTimeout(WasmTrap):
    pass


class WasmHostError(WasmTrap):
    """A host function (an opaque function's Python implementation) raised; the exception is the
    `__cause__`."""


class WasmOutOfMemory(WasmTrap):
    pass


class WasmUnreachable(WasmTrap):
    pass


class WasmRangeError(WasmTrap):
    """A run-time check of compiled code failed (a loop's count out of range); the message is the
    interpreter's."""


class WasmMemoryOutOfBounds(WasmTrap):
    pass


class WasmStackOverflow(WasmTrap):
    pass


_TRAP_CLASSES: dict[wasmtime.TrapCode, tuple[type[WasmTrap], str]] = {
    wasmtime.TrapCode.INTERRUPT: (WasmTimeout, "time limit exceeded"),
    wasmtime.TrapCode.UNREACHABLE: (WasmUnreachable, "reached 'unreachable'"),
    wasmtime.TrapCode.MEMORY_OUT_OF_BOUNDS: (WasmMemoryOutOfBounds, "out-of-bounds memory access"),
    wasmtime.TrapCode.STACK_OVERFLOW: (WasmStackOverflow, "call stack exhausted"),
}


@dataclass(frozen=True)
class HostFunction:
    """A Python function a module imports. `scalar`: it takes and returns Wasm numbers only, and is
    called on them directly (through `wasmtime_func_new_unchecked`: no boxing, about 0.6 µs a call
    instead of wasmtime-py's 13); otherwise it takes wasmtime-py's `Caller` first (for linear memory)."""

    type: wasmtime.FuncType
    call: Callable[..., object]
    scalar: bool


def _take_wasmtime_py_error() -> BaseException | None:
    """The exception a wasmtime-py host function raised in the last trapped call, if any (and forget
    it). wasmtime-py's trampoline turns a callback's exception into a trap and keeps the exception
    until a wasmtime-py call re-raises it; calls through `FastFunc` bypass that, so it is taken where
    their trap is handled and never surfaces in an unrelated call."""
    exn, wasmtime_func.LAST_EXCEPTION = wasmtime_func.LAST_EXCEPTION, None
    return exn


_HOST_TRAP_MESSAGE = b"host function raised"
_NO_FINALIZER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)()


def raise_host_error(function: str, exn: BaseException) -> NoReturn:
    """Raise the error for a call to `function` stopped by a host function's exception, from the
    exception the Python implementation raised."""
    if isinstance(exn, OpaqueCallError):
        raise WasmHostError(function, str(exn)) from exn.__cause__
    if isinstance(exn, RangeError):
        raise WasmRangeError(function, str(exn)) from None
    raise WasmHostError(function, f"host function raised {type(exn).__name__}: {exn}") from exn


def trap_to_exception(function: str, trap: wasmtime.Trap, time_limit: float | None = None) -> WasmTrap:
    code = trap.trap_code
    cls, what = _TRAP_CLASSES.get(code, (WasmTrap, "trap")) if code is not None else (WasmTrap, "trap")
    if cls is WasmTimeout and time_limit is not None:
        what = f"time limit of {time_limit:g} s exceeded"
    frames = [f.func_name or f"func[{f.func_index}]" for f in trap.frames or []][:6]
    where = f" (wasm stack: {' <- '.join(frames)})" if frames else ""
    return cls(function, what + where)


# --- engine and module cache ------------------------------------------------------------------------

_engines: dict[str, wasmtime.Engine] = {}
_tier_settings: dict[str, dict[str, object]] = {}
_lock = threading.Lock()

MODULE_BYTES_PER_WASM_BYTE = 4


def module_weight(entry: tuple[wasmtime.Module, int]) -> float:
    """Resident bytes of a compiled module, from its Wasm's length: each further copy of a registry
    trio's energy module held grew RSS by 2.9-4.0 bytes per Wasm byte (4 trios whose RSS was not
    blurred by freed compile memory; Module.serialize() gives 1.8-3.6 over 8 trios)."""
    return entry[1] * MODULE_BYTES_PER_WASM_BYTE


# Compiled modules by key, with their Wasm's length; bounded in bytes (no host budget: unbounded).
MODULES: LRU[str, tuple[wasmtime.Module, int]] = LRU(1 << 20, weight=module_weight)
# Freed while wasmtime's own module is still whole: left to interpreter teardown, a Module held here
# was seen deleted after wasmtime's ffi functions were gone ("'NoneType' object is not callable").
atexit.register(MODULES.clear)


def _configured(settings: dict[str, object]) -> wasmtime.Engine:
    config = wasmtime.Config()
    for name, value in settings.items():
        if name == "strategy" and value == "winch":
            ffi.wasmtime_config_strategy_set(config.ptr(), _WINCH)
        elif name == "regalloc_algorithm":
            config.cranelift_flag_set(name, str(value))
        else:
            setattr(config, name, value)
    return wasmtime.Engine(config)


def engine(tier: str = "optimized") -> wasmtime.Engine:
    with _lock:
        eng = _engines.get(tier)
        if eng is None:
            eng = _engines[tier] = _new_engine(tier)
            _start_ticker(eng)
        return eng


def _new_engine(tier: str) -> wasmtime.Engine:
    if tier == "optimized":
        _tier_settings[tier] = ENGINE_SETTINGS
        return _configured(ENGINE_SETTINGS)
    if tier != "baseline":
        raise ValueError(f"unknown tier {tier!r}: expected one of {TIERS}")
    for settings in (BASELINE_SETTINGS, BASELINE_FALLBACK):
        try:
            eng = _configured(settings)
        except wasmtime.WasmtimeError:
            continue
        _tier_settings[tier] = settings
        return eng
    raise RuntimeError("wasmtime refused both baseline configurations")


def _start_ticker(eng: wasmtime.Engine) -> None:
    def tick() -> None:
        while True:
            time.sleep(TICK_SECONDS)
            eng.increment_epoch()

    threading.Thread(target=tick, name="adcore-wasm-epoch", daemon=True).start()


def _after_fork_in_child() -> None:
    """A forked child has only the thread that forked: its engines' epochs need a ticker again (or
    no time limit would fire), and a background compile must start its own thread."""
    global _worker
    _lock.release()
    _worker = None
    for eng in _engines.values():
        _start_ticker(eng)


# Held across a fork, so that no other thread holds it in the child's copy.
os.register_at_fork(before=_lock.acquire, after_in_parent=_lock.release, after_in_child=_after_fork_in_child)


def config_fingerprint(tier: str = "optimized") -> str:
    """Everything that makes compiled code incompatible: wasmtime version, settings, host."""
    engine(tier)
    settings = ";".join(f"{k}={v}" for k, v in sorted(_tier_settings[tier].items()))
    return f"wasmtime={importlib.metadata.version('wasmtime')};{settings};{platform.machine()}"


def module_key(wasm: bytes, tier: str = "optimized") -> str:
    return hashlib.sha256(config_fingerprint(tier).encode() + b"\0" + wasm).hexdigest()


CACHE_MAGIC = b"ADCORE-CWASM-1\n"


def _pack(key: str, payload: bytes) -> bytes:
    return CACHE_MAGIC + key.encode() + hashlib.sha256(payload).digest() + payload


def _unpack(key: str, blob: bytes) -> bytes | None:
    """The payload if the file is ours, for this key, and intact; else None."""
    head = len(CACHE_MAGIC) + 64
    if (
        len(blob) < head + 32
        or not blob.startswith(CACHE_MAGIC)
        or blob[len(CACHE_MAGIC) : head] != key.encode()
    ):
        return None
    digest, payload = blob[head : head + 32], blob[head + 32 :]
    return payload if hashlib.sha256(payload).digest() == digest else None


def cached_module(
    wasm: bytes, cache_dir: str | Path | None = None, tier: str = "optimized"
) -> wasmtime.Module | None:
    """The module if either cache has it (a disk hit is kept in memory too), else None."""
    key = module_key(wasm, tier)
    cached = MODULES.get(key)
    if cached is not None or cache_dir is None:
        return cached[0] if cached is not None else None
    module = _load_from_disk(key, Path(cache_dir), tier)
    if module is None:
        return None
    return _keep(key, module, len(wasm))


def _keep(key: str, module: wasmtime.Module, wasm_bytes: int) -> wasmtime.Module:
    """The module kept for `key`: one already there wins, so the same bytes give the same Module
    while it stays cached."""
    with _lock:
        found = MODULES.get(key)
        if found is not None:
            return found[0]
        MODULES.put(key, (module, wasm_bytes))
        return module


def load_module(wasm: bytes, cache_dir: str | Path | None = None, tier: str = "optimized") -> wasmtime.Module:
    """Compile (or fetch from the caches) a module; the same bytes give the same Module object."""
    module = cached_module(wasm, cache_dir, tier)
    if module is not None:
        return module
    try:
        module = wasmtime.Module(engine(tier), wasm)
    except wasmtime.WasmtimeError as e:
        raise WasmCompileError(f"invalid wasm module: {str(e).splitlines()[0]}") from e
    key = module_key(wasm, tier)
    if cache_dir is not None:
        _store_to_disk(key, Path(cache_dir), bytes(module.serialize()))
    return _keep(key, module, len(wasm))


_queue: queue.SimpleQueue[tuple[bytes, str | Path | None, Future[wasmtime.Module]]] = queue.SimpleQueue()
_in_flight: dict[str, Future[wasmtime.Module]] = {}
_worker: threading.Thread | None = None


def optimize_in_background(wasm: bytes, cache_dir: str | Path | None = None) -> Future[wasmtime.Module]:
    """The optimized module, compiled by a daemon thread (so a process exits without waiting).

    Compiles run one at a time (each already uses every core) and the same bytes only once.
    """
    global _worker
    key, optimizing = module_key(wasm), engine("optimized")
    with _lock:
        future = _in_flight.get(key)
        if future is None:
            future = _in_flight[key] = Future()
            _queue.put((wasm, cache_dir, future))
            if _worker is None:
                _worker = threading.Thread(
                    target=_compile_queued, args=(optimizing,), name="adcore-wasm-optimize", daemon=True
                )
                _worker.start()
    return future


def _compile_queued(keep_alive: wasmtime.Engine) -> None:
    """``keep_alive``: at interpreter exit a daemon thread is abandoned, never unwound, so this
    reference keeps the engine it may still be compiling with from being freed under it."""
    while True:
        wasm, cache_dir, future = _queue.get()
        key, baseline_key = module_key(wasm), module_key(wasm, "baseline")
        try:
            module = load_module(wasm, cache_dir)
            MODULES.pop(baseline_key)  # from now on instances start optimized: the baseline code is not kept
            future.set_result(module)
        except BaseException as e:  # noqa: BLE001 - handed to whoever waits on the future
            future.set_exception(e)
        finally:
            with _lock:
                _in_flight.pop(key, None)


def cache_path(cache_dir: Path, key: str) -> Path:
    return cache_dir / f"{key}.cwasm"


def _load_from_disk(key: str, cache_dir: Path, tier: str) -> wasmtime.Module | None:
    try:
        blob = cache_path(cache_dir, key).read_bytes()
    except OSError:
        return None
    payload = _unpack(key, blob)
    if payload is None:
        return None  # corrupt or foreign: recompiled and overwritten by the caller
    try:
        return wasmtime.Module.deserialize(engine(tier), payload)
    except wasmtime.WasmtimeError:
        return None


def _store_to_disk(key: str, cache_dir: Path, payload: bytes) -> None:
    """Write atomically (temp file + rename) so concurrent readers never see half a file."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=cache_dir, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(_pack(key, payload))
        os.replace(tmp, cache_path(cache_dir, key))
    except OSError:
        Path(tmp).unlink(missing_ok=True)


def clear_memory_cache() -> None:
    MODULES.clear()


# --- instances --------------------------------------------------------------------------------------


class Instance:
    """A module instantiated in its own Store (not thread-safe: one Instance per thread).

    ``time_limit``: seconds each call may run (None: unlimited); ``memory_limit``: bytes of linear
    memory the store may hold (instantiation or growth beyond it fails); ``tier``: the engine the
    module was (or is to be) compiled by.
    """

    def __init__(
        self,
        module: wasmtime.Module | bytes,
        host: Sequence[HostFunction] = (),
        time_limit: float | None = 10.0,
        memory_limit: int | None = 256 * 2**20,
        cache_dir: str | Path | None = None,
        tier: str = "optimized",
    ) -> None:
        if not isinstance(module, wasmtime.Module):
            module = load_module(module, cache_dir, tier)
        self.module, self.tier = module, tier
        self.store = wasmtime.Store(engine(tier))
        self.time_limit = time_limit
        self.memory_limit = memory_limit
        if memory_limit is not None:
            self.store.set_limits(memory_size=memory_limit)
        self.arm_deadline()
        try:
            self.host_error: BaseException | None = None  # what a scalar host function raised
            self._callbacks: list[object] = []  # the ctypes callbacks of scalar host functions, kept alive
            imports = [self._import(h) for h in host]
            self.instance = wasmtime.Instance(self.store, self.module, imports)
        except wasmtime.Trap as trap:
            raise trap_to_exception("<start>", trap, time_limit) from None
        except wasmtime.WasmtimeError as e:
            msg = str(e).splitlines()[0]
            if memory_limit is not None and "memory" in msg.lower():
                raise WasmOutOfMemory("<instantiate>", f"memory limit of {memory_limit} bytes: {msg}") from e
            raise
        self.exports = self.instance.exports(self.store)

    def _import(self, h: HostFunction) -> wasmtime.Func:
        # A FuncType is bound to the engine of its first use, and each tier has its own engine
        # (`engine`): every instance gets a fresh copy of the type.
        functype = wasmtime.FuncType(list(h.type.params), list(h.type.results))
        if not h.scalar:
            return wasmtime.Func(self.store, functype, h.call, access_caller=True)
        params = [_VALKIND_FIELD[str(t)] for t in h.type.params]
        results = [_VALKIND_FIELD[str(t)] for t in h.type.results]
        call, single = h.call, len(results) == 1

        def callback(env: object, caller: object, values: Any, n: int) -> int:
            # arguments and results share `values`: every argument is read before a result is written
            try:
                out = call(*[getattr(values[k], field) for k, field in enumerate(params)])
                if single:
                    setattr(values[0], results[0], out)
                else:
                    for k, (field, v) in enumerate(zip(results, out or ())):  # type: ignore[call-overload]  # results: a sequence
                        setattr(values[k], field, v)
                return 0
            except BaseException as e:  # noqa: BLE001 - raised again by the call that trapped
                self.host_error = e
                trap = ffi.wasmtime_trap_new(_HOST_TRAP_MESSAGE, len(_HOST_TRAP_MESSAGE))
                return ctypes.cast(trap, ctypes.c_void_p).value or 0

        raw = ffi.wasmtime_func_unchecked_callback_t(callback)
        self._callbacks.append(raw)
        func = ffi.wasmtime_func_t()
        ffi.wasmtime_func_new_unchecked(
            self.store._context(), functype.ptr(), raw, None, _NO_FINALIZER, ctypes.byref(func)
        )
        return wasmtime.Func._from_raw(func)

    def take_host_error(self) -> BaseException | None:
        """The exception a host function raised in the last trapped call, if any (and forget it)."""
        exn, self.host_error = self.host_error, None
        return exn if exn is not None else _take_wasmtime_py_error()

    def deadline_ticks(self) -> int:
        if self.time_limit is None:
            return 1 << 62
        return int(self.time_limit / TICK_SECONDS) + 1

    def arm_deadline(self) -> None:
        self.store.set_epoch_deadline(self.deadline_ticks())

    def func(self, name: str) -> wasmtime.Func:
        f = self.exports.get(name) if hasattr(self.exports, "get") else self.exports[name]
        if not isinstance(f, wasmtime.Func):
            raise KeyError(f"module has no exported function {name!r}")
        return f

    def call(self, name: str, *args: float | int) -> object:
        """Checked call through wasmtime-py (~30 us); traps become WasmTrap exceptions."""
        f = self.func(name)
        self.arm_deadline()
        try:
            return f(self.store, *args)
        except wasmtime.Trap as trap:
            exn = self.take_host_error()
            if exn is not None:
                raise_host_error(name, exn)
            raise trap_to_exception(name, trap, self.time_limit) from None
        except OpaqueCallError as e:  # wasmtime-py re-raises its host functions' exceptions
            raise_host_error(name, e)
        except wasmtime.WasmtimeError:  # a scalar host function's trap
            exn = self.take_host_error()
            if exn is None:
                raise
            raise_host_error(name, exn)

    def fast(self, name: str) -> FastFunc:
        return FastFunc(self, name)

    def memory(self, name: str = "memory") -> wasmtime.Memory:
        m = self.exports[name]
        if not isinstance(m, wasmtime.Memory):
            raise KeyError(f"export {name!r} is not a memory")
        return m

    def grow_memory(self, pages: int, name: str = "memory") -> int:
        """Grow by ``pages``; returns the previous size in pages.  Refused past the memory limit."""
        try:
            return self.memory(name).grow(self.store, pages)
        except wasmtime.WasmtimeError as e:
            size = self.memory(name).data_len(self.store)
            raise WasmOutOfMemory(
                f"<memory {name}>",
                f"cannot grow by {pages} pages from {size} bytes (limit {self.memory_limit} bytes): "
                + str(e).splitlines()[0],
            ) from e

    def view(self, offset: int, n: int, dtype: type = np.float64, name: str = "memory") -> MemoryView:
        return MemoryView(self, self.memory(name), offset, n, np.dtype(dtype))


class MemoryView:
    """A numpy window on linear memory; ``.array`` is rebuilt when the memory moved or grew.

    The arrays own a reference to the Instance: reading one after its instance was dropped reads
    that instance's last memory, never freed memory."""

    def __init__(self, inst: Instance, memory: wasmtime.Memory, offset: int, n: int, dtype: np.dtype) -> None:
        if offset % dtype.itemsize:
            raise ValueError(f"offset {offset} is not aligned to {dtype.itemsize} bytes")
        self.inst, self.memory, self.offset, self.n, self.dtype = inst, memory, offset, n, dtype
        self._base: tuple[int, int] | None = None
        self._array: np.ndarray | None = None

    @property
    def array(self) -> np.ndarray:
        store = self.inst.store
        ptr = ctypes.cast(self.memory.data_ptr(store), ctypes.c_void_p).value or 0
        size = self.memory.data_len(store)
        if self._array is None or self._base != (ptr, size):
            end = self.offset + self.n * self.dtype.itemsize
            if end > size:
                raise IndexError(f"view [{self.offset}, {end}) exceeds linear memory of {size} bytes")
            raw = (ctypes.c_ubyte * size).from_address(ptr)
            # an array kept after its Compiled moved on keeps its Store alive (ctypes arrays take attributes)
            raw.owner = self.inst  # type: ignore[attr-defined]  # an attribute of ours on a ctypes array
            self._array = np.frombuffer(raw, dtype=self.dtype, count=self.n, offset=self.offset)  # type: ignore[call-overload]  # a ctypes array is a buffer numpy's stubs do not list
            self._base = (ptr, size)
        return self._array


# --- fast calls -------------------------------------------------------------------------------------

_VALKIND_FIELD = {"i32": "i32", "i64": "i64", "f32": "f32", "f64": "f64"}
_call_unchecked = ffi.dll.wasmtime_func_call_unchecked
_call_unchecked.restype = ctypes.c_void_p  # a wasmtime_error_t*, owned by us when non-null
_call_unchecked.argtypes = [
    ctypes.c_void_p,
    ctypes.c_void_p,
    ctypes.c_void_p,
    ctypes.c_size_t,
    ctypes.POINTER(ctypes.POINTER(ffi.wasm_trap_t)),
]
_set_deadline = ffi.dll.wasmtime_context_set_epoch_deadline
_set_deadline.restype = None
_set_deadline.argtypes = [ctypes.c_void_p, ctypes.c_uint64]


class FastFunc:
    """Call an exported numeric function with little overhead (bypasses per-call type checks).

    Arguments are written into a reusable ``wasmtime_val_raw_t`` buffer, which also receives the
    results.  Only i32/i64/f32/f64 signatures; not thread-safe (shares the Instance's Store).
    """

    def __init__(self, inst: Instance, name: str) -> None:
        self.inst, self.name = inst, name
        self._func = inst.func(name)  # keeps the wasmtime_func_t alive
        ty = self._func.type(inst.store)
        kinds = [str(t) for t in ty.params], [str(t) for t in ty.results]
        for k in kinds[0] + kinds[1]:
            if k not in _VALKIND_FIELD:
                raise TypeError(f"FastFunc {name!r}: unsupported value type {k}")
        self.param_fields = [_VALKIND_FIELD[k] for k in kinds[0]]
        self.result_fields = [_VALKIND_FIELD[k] for k in kinds[1]]
        size = max(1, len(self.param_fields), len(self.result_fields))
        self._buf = (ffi.wasmtime_val_raw_t * size)()
        self._slots = list(self._buf)  # ctypes views on each slot, built once
        self._size = size
        self._ctx = ctypes.cast(inst.store._context(), ctypes.c_void_p).value
        self._func_addr = ctypes.addressof(self._func._func)
        self._buf_addr = ctypes.addressof(self._buf)
        self._trap = ctypes.POINTER(ffi.wasm_trap_t)()
        self._trap_ref = ctypes.byref(self._trap)
        self._ticks = inst.deadline_ticks()
        # Without a time limit the deadline armed at instantiation (2^62 ticks) never expires.
        self._rearm = inst.time_limit is not None
        self._single_f64 = self.result_fields == ["f64"] and set(self.param_fields) <= {"f64"}

    def __call__(self, *args: float | int) -> Any:
        """The export's one result (a number), None, or a list of its results."""
        if len(args) != len(self.param_fields):
            raise TypeError(f"{self.name}() takes {len(self.param_fields)} arguments, got {len(args)}")
        slots = self._slots
        if self._single_f64:
            for slot, a in zip(slots, args, strict=False):
                slot.f64 = a
        else:
            for slot, field, a in zip(slots, self.param_fields, args, strict=False):
                setattr(slot, field, a)
        if self._rearm:
            _set_deadline(self._ctx, self._ticks)
        err = _call_unchecked(self._ctx, self._func_addr, self._buf_addr, self._size, self._trap_ref)
        if err or self._trap:
            self._raise(err)
        if self._single_f64:
            return slots[0].f64
        results = [getattr(s, f) for s, f in zip(slots, self.result_fields, strict=False)]
        return None if not results else results[0] if len(results) == 1 else results

    def _raise(self, err: int | None) -> None:
        trap = None
        if self._trap:
            trap = wasmtime.Trap._from_ptr(self._trap)  # takes ownership
            self._trap = ctypes.POINTER(ffi.wasm_trap_t)()
            self._trap_ref = ctypes.byref(self._trap)
        error = None
        if err:
            error = wasmtime.WasmtimeError._from_ptr(ctypes.cast(err, ctypes.POINTER(ffi.wasmtime_error_t)))
        exn = self.inst.take_host_error()  # a host function's exception comes back as a trap or an error
        if exn is not None:
            raise_host_error(self.name, exn)
        if trap is not None:
            raise trap_to_exception(self.name, trap, self.inst.time_limit)
        assert error is not None
        raise WasmTrap(self.name, str(error).splitlines()[0])
