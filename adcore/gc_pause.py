"""Cyclic garbage collection paused around work that allocates many long-lived objects.

Tracing, differentiating and compiling a function allocate an object or more per instruction (Vars,
Eqns, tuples, dicts), and nearly all of them stay alive until the transformation returns; matching
an all-pairs Style block over 1,000 objects makes half a million matches, and evaluating it half a
million goals. Every 700 allocations the collector scans the young objects, and every so often
everything alive: on a 10,000-instruction gradient, half the compile time went to rescanning IR
that could not be garbage, and a third of matching and Style evaluation. This work makes no
reference cycles worth collecting; reference counting frees what it drops, and the first collection
after the pause scans what survived once. The switch is process-wide, so other threads also go
without cycle collection meanwhile.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Collection off inside (a collector already off stays off), restored after a failure too."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
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
            gc.enable()

    return run
