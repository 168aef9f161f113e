"""Cyclic garbage collection paused around phases that allocate hundreds of thousands of objects.

Matching an all-pairs block over 1,000 objects makes half a million matches, and its evaluation
half a million goals; the collections their allocation triggers rescan everything alive, a third of
each phase's time (`benchmarks/style_all_pairs.py`). These phases make no cycles worth collecting:
reference counting frees the rest, and the next collection after the pause runs as usual. The
switch is process-wide, so other threads also go without cycle collection for those seconds.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
