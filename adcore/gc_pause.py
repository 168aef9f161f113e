"""Cyclic garbage collection paused around work that allocates many long-lived objects.

Tracing, differentiating and compiling a function allocate an object or more per instruction (Vars,
Eqns, tuples, dicts), and nearly all of them stay alive until the transformation returns; matching
an all-pairs Style block over 1,000 objects makes half a million matches, and evaluating it half a
million goals. Every 700 allocations the collector scans the young objects, and every so often
everything alive: on a 10,000-instruction gradient, half the compile time went to rescanning IR
that could not be garbage, and a third of matching and Style evaluation. This work makes no
reference cycles worth collecting; reference counting frees what it drops.

What survives a pause moves to the oldest generation as it ends (`promote_survivors`): left young,
all of it would be scanned by the next young collection and again by the middle one (3-6% of a
registry layout's CPU), though nearly all of it lives as long as the layout. Full collections still
reclaim cycles among it; they come when enough objects survived two young collections, which
promoted ones skip, so past `PROMOTE_BUDGET` objects promoted since the last full collection
survivors stay young again and the collector's own count calls the next one. The switch is
process-wide, so other threads also go without cycle collection meanwhile.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


PROMOTE_BUDGET = 1_000_000  # objects promoted between full collections (a large layout's IR)
_promoted = 0  # since the last full collection, counted as the young generation's size


def _full_collection_done(phase: str, info: dict[str, int]) -> None:
    global _promoted
    if phase == "stop" and info["generation"] == 2:
        _promoted = 0


gc.callbacks.append(_full_collection_done)


def promote_survivors() -> None:
    """Every tracked object into the oldest generation, without a scan (`gc.freeze` then
    `gc.unfreeze` only move lists). Skipped while objects are frozen (a forked start worker keeps
    its inherited heap frozen so that its pages stay shared: `unfreeze` would thaw them too) and
    past the budget."""
    global _promoted
    young = gc.get_count()[0]
    if gc.get_freeze_count() == 0 and _promoted + young <= PROMOTE_BUDGET:
        _promoted += young
        gc.freeze()
        gc.unfreeze()


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Collection off inside (a collector already off stays off), restored after a failure too."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            promote_survivors()
            gc.enable()


def gc_paused(f: Callable[P, R]) -> Callable[P, R]:
    """f with cyclic collection off while it runs (nested calls leave the outermost one in charge)."""

    @functools.wraps(f)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        if not gc.isenabled():
            return f(*args, **kwargs)
        gc.disable()
        try:
            return f(*args, **kwargs)
        finally:
            promote_survivors()
            gc.enable()

    return run
