"""The cyclic-GC pause leaves the collector as it found it, also when the phase fails."""

from __future__ import annotations

import gc

import pytest

from adcore.gc_pause import cyclic_gc_paused


def test_the_collector_is_off_inside_and_restored_after_a_failure() -> None:
    assert gc.isenabled()
    with pytest.raises(RuntimeError), cyclic_gc_paused():
        assert not gc.isenabled()
        raise RuntimeError("phase failed")
    assert gc.isenabled()


def test_a_collector_already_off_stays_off() -> None:
    gc.disable()
    try:
        with cyclic_gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
