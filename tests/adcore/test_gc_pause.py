"""The cyclic-GC pause leaves the collector as it found it, also when the phase fails, and moves what
survives it to the oldest generation, where full collections still reclaim cycles."""

from __future__ import annotations

import gc
import weakref

import pytest

from adcore import gc_pause
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


class _Cell:
    """A tracked object that can sit in a reference cycle."""

    def __init__(self) -> None:
        self.other: object = None


def _in_generation(obj: object, generation: int) -> bool:
    return any(o is obj for o in gc.get_objects(generation))


def test_what_survives_a_pause_is_old_and_its_cycles_are_still_collected() -> None:
    gc.collect()
    with cyclic_gc_paused():
        kept = _Cell()
        cycle = _Cell()
        cycle.other = _Cell()
        cycle.other.other = cycle  # type: ignore[attr-defined]
        ref = weakref.ref(cycle)
        del cycle
    assert _in_generation(kept, 2) and not _in_generation(kept, 0)
    gc.collect(0)  # a young collection no longer scans them: the cycle outlives it
    assert ref() is not None
    gc.collect()  # a full one reclaims it
    assert ref() is None and _in_generation(kept, 2)


def test_survivors_stay_young_while_objects_are_frozen_or_past_the_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gc.collect()
    gc.freeze()  # as a forked start worker keeps its inherited heap
    try:
        frozen = gc.get_freeze_count()
        with cyclic_gc_paused():
            young = _Cell()
        # Neither promoted (the count would grow) nor released (it would drop to 0); a frozen object
        # another thread lets go of meanwhile is freed, so the count may fall by a few.
        assert 0 < gc.get_freeze_count() <= frozen and _in_generation(young, 0)
    finally:
        gc.unfreeze()
    gc.collect()
    monkeypatch.setattr(gc_pause, "PROMOTE_BUDGET", 0)
    with cyclic_gc_paused():
        young = _Cell()
    assert _in_generation(young, 0)
