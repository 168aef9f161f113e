"""adcore.wasm.runtime: module caches, fast calls, memory views, time and memory limits, traps."""

from __future__ import annotations

import math
import os
import signal
import time
from pathlib import Path

import numpy as np
import pytest
import wasmtime

from adcore.wasm import runtime
from adcore.wasm.encode import F64, I32, I64, Asm, ModuleBuilder
from adcore.wasm.libm import libm_module
from adcore.wasm.runtime import (
    Instance,
    WasmOutOfMemory,
    WasmTimeout,
    WasmTrap,
    WasmUnreachable,
    load_module,
)


def small_module(tag: int = 0, memory_pages: int = 1) -> bytes:
    """Exports: add(f64,f64), mix(i32,i64,f64)->f64, spin() loops forever, boom() traps,
    load(i32)->f64 / store(i32,f64) on memory, grow(i32)->i32."""
    b = ModuleBuilder()
    b.add_memory(memory_pages)
    b.add_function("add", [F64, F64], [F64], [], Asm().local_get(0).local_get(1).f64_add(), True)
    mix = (
        Asm()
        .local_get(0)
        .f64_convert_i32_s()
        .local_get(1)
        .f64_convert_i64_s()
        .f64_mul()
        .local_get(2)
        .f64_add()
    )
    b.add_function("mix", [I32, I64, F64], [F64], [], mix, True)
    b.add_function("spin", [], [], [], Asm().loop().br(0).end(), True)
    b.add_function("boom", [], [F64], [], Asm().unreachable(), True)
    b.add_function("load", [I32], [F64], [], Asm().local_get(0).f64_load(), True)
    b.add_function("store", [I32, F64], [], [], Asm().local_get(0).local_get(1).f64_store(), True)
    b.add_function("grow", [I32], [I32], [], Asm().local_get(0).memory_grow(), True)
    b.add_function("tag", [], [I32], [], Asm().i32_const(tag), True)
    return b.to_bytes()


def test_same_bytes_give_the_same_module_object() -> None:
    wasm = small_module(tag=101)
    assert load_module(wasm) is load_module(wasm)
    assert load_module(small_module(tag=102)) is not load_module(wasm)


def test_invalid_wasm_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="invalid wasm module"):
        load_module(b"\0asm\1\0\0\0\x05garbage")


def test_disk_cache_round_trip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wasm = small_module(tag=201)
    runtime.clear_memory_cache()
    load_module(wasm, cache_dir=tmp_path)
    files = list(tmp_path.glob("*.cwasm"))
    assert len(files) == 1 and files[0].stem == runtime.module_key(wasm)

    runtime.clear_memory_cache()

    def no_compiling(*args: object, **kwargs: object) -> None:
        raise AssertionError("compiled although a valid cache file exists")

    monkeypatch.setattr(wasmtime.Module, "__init__", no_compiling)
    module = load_module(wasm, cache_dir=tmp_path)
    monkeypatch.undo()
    assert Instance(module).call("tag") == 201


@pytest.mark.parametrize("damage", ["garbage", "flipped_payload_byte", "truncated", "other_key"])
def test_corrupt_cache_file_is_recompiled_and_replaced(tmp_path: Path, damage: str) -> None:
    wasm = small_module(tag=300 + len(damage))
    key = runtime.module_key(wasm)
    runtime.clear_memory_cache()
    load_module(wasm, cache_dir=tmp_path)
    path = runtime.cache_path(tmp_path, key)
    good = path.read_bytes()
    bad = {
        "garbage": b"\x7fELF not a module at all" * 100,
        "flipped_payload_byte": good[:-100] + bytes([good[-100] ^ 0xFF]) + good[-99:],
        "truncated": good[: len(good) // 2],
        "other_key": good.replace(key.encode(), b"0" * 64, 1),
    }[damage]
    path.write_bytes(bad)
    runtime.clear_memory_cache()
    inst = Instance(load_module(wasm, cache_dir=tmp_path))
    assert inst.call("tag") == 300 + len(damage)
    assert runtime._unpack(key, path.read_bytes()) is not None  # replaced by a valid file


def test_fast_call_matches_checked_call() -> None:
    inst = Instance(small_module() + b"")
    add, mix = inst.fast("add"), inst.fast("mix")
    for a, b in [(1.5, 2.25), (-0.0, 0.0), (1e308, 1e308), (math.nan, 1.0)]:
        want = inst.call("add", a, b)
        got = add(a, b)
        assert (math.isnan(got) and math.isnan(want)) or (
            got == want and math.copysign(1, got) == math.copysign(1, want)
        )
    assert mix(-3, 2**40, 0.5) == inst.call("mix", -3, 2**40, 0.5) == -3 * 2.0**40 + 0.5
    with pytest.raises(TypeError, match="takes 2 arguments"):
        add(1.0)


def test_fast_libm_call_matches_checked_call() -> None:
    inst = Instance(libm_module(["pow", "sin"]))
    pow_fast, sin_fast = inst.fast("pow"), inst.fast("sin")
    for x in np.linspace(-10, 10, 41):
        assert sin_fast(float(x)) == inst.call("sin", float(x))
        assert pow_fast(1.7, float(x)) == inst.call("pow", 1.7, float(x))


def test_memory_views_share_linear_memory_and_follow_growth() -> None:
    inst = Instance(small_module())
    view = inst.view(16, 4)
    view.array[:] = [1.0, 2.5, -3.0, 4.0]
    assert inst.call("load", 24) == 2.5  # written by numpy, read by Wasm
    inst.fast("store")(40, 7.75)
    assert view.array[3] == 7.75  # written by Wasm, seen by numpy
    tail = inst.view(65536, 2)
    with pytest.raises(IndexError, match="exceeds linear memory"):
        _ = tail.array
    assert inst.fast("grow")(1) == 1  # previous size in pages
    tail.array[:] = [5.0, 6.0]  # the view now fits
    assert inst.call("load", 65544) == 6.0
    assert view.array[1] == 2.5
    with pytest.raises(ValueError, match="aligned"):
        inst.view(3, 1)


def test_infinite_loop_stopped_by_time_limit_then_instance_still_usable() -> None:
    inst = Instance(small_module(), time_limit=0.05)
    for call in (lambda: inst.call("spin"), inst.fast("spin")):
        t0 = time.perf_counter()
        with pytest.raises(WasmTimeout, match=r"'spin'.*time limit of 0.05 s"):
            call()
        assert time.perf_counter() - t0 < 2.0
        assert inst.call("add", 1.0, 2.0) == 3.0  # the same store keeps working
        assert inst.fast("add")(2.0, 2.0) == 4.0


def test_memory_growth_beyond_limit_is_refused() -> None:
    inst = Instance(small_module(), memory_limit=2 * runtime.WASM_PAGE)
    assert inst.fast("grow")(1) == 1  # 2 pages: at the limit, allowed
    assert inst.fast("grow")(1) == -1  # memory.grow inside Wasm reports failure as -1
    with pytest.raises(WasmOutOfMemory, match="cannot grow by 5 pages"):
        inst.grow_memory(5)
    assert inst.call("add", 1.0, 1.0) == 2.0


def test_instantiation_beyond_memory_limit_is_refused() -> None:
    with pytest.raises(WasmOutOfMemory, match="memory limit"):
        Instance(small_module(memory_pages=4), memory_limit=2 * runtime.WASM_PAGE)


def test_unreachable_trap_names_the_function() -> None:
    inst = Instance(small_module())
    for call in (lambda: inst.call("boom"), inst.fast("boom")):
        with pytest.raises(WasmUnreachable, match="'boom'") as info:
            call()
        assert isinstance(info.value, WasmTrap) and info.value.function == "boom"
    assert inst.fast("add")(0.5, 0.25) == 0.75


def test_out_of_bounds_access_is_a_trap() -> None:
    inst = Instance(small_module())
    with pytest.raises(runtime.WasmMemoryOutOfBounds, match="'load'"):
        inst.fast("load")(10 * runtime.WASM_PAGE)


def test_one_instance_per_thread_runs_concurrently() -> None:
    """The engine and module cache are shared; each thread uses its own Instance (Store)."""
    import threading

    wasm = libm_module(["exp"])
    results: dict[int, float] = {}
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            inst = Instance(wasm)
            f = inst.fast("exp")
            results[k] = sum(f(0.001 * i) for i in range(2000))
        except BaseException as e:  # reported to the main thread below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    want = sum(math.exp(0.001 * i) for i in range(2000))
    assert all(abs(v - want) < 1e-9 * want for v in results.values()) and len(results) == 4


def test_time_limits_hold_in_a_forked_child() -> None:
    # A fork keeps only the forking thread: the epoch ticker must be started again in the child, or
    # a call that spins there would never be interrupted.
    inst = Instance(small_module(), time_limit=0.05)
    inst.call("add", 1.0, 2.0)
    pid = os.fork()
    if pid == 0:  # the child: exit 0 only if its spin was stopped by the time limit
        code = 1
        try:
            inst.fast("spin")()
        except WasmTimeout:
            code = 0
        finally:
            os._exit(code)
    deadline = time.monotonic() + 10.0
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0
            return
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    raise AssertionError("the child's spin ran on past its time limit")
