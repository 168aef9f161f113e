"""The adapter to wasmtime-py's private parts (adcore/wasm/runtime.py): a checked version, and the private
names it reads still there with the shapes it uses."""

from __future__ import annotations

import ctypes
import importlib.metadata

from wasmtime import _ffi, _func

from adcore.wasm import runtime


def test_installed_wasmtime_is_one_the_adapter_was_checked_against() -> None:
    """Fails on a wasmtime-py upgrade past WASMTIME_VERIFIED: check the private names below, then widen it."""
    low, high = runtime.WASMTIME_VERIFIED
    assert low <= runtime.wasmtime_major() <= high, importlib.metadata.version("wasmtime")


def test_the_private_names_the_adapter_reads_are_there() -> None:
    for name in (
        "wasmtime_func_call_unchecked",
        "wasmtime_context_set_epoch_deadline",
        "wasmtime_func_new_unchecked",
        "wasmtime_trap_new",
    ):
        assert callable(getattr(_ffi.dll, name)), name
    assert issubclass(_ffi.wasmtime_val_raw_t, ctypes.Union)
    assert hasattr(_func, "LAST_EXCEPTION")
