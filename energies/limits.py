"""What one layout may cost: its deadline, and the sizes its programs may ask for.

    with deadline(seconds):   # the whole layout, every phase
        ...
        check_deadline("matching")   # raises DeadlineExceeded once the time is up

    check_size("repeat's count n", n, MAX_LIST_LENGTH)   # raises SizeLimitError (a ValueError)

The deadline is cooperative: long loops of every phase (parsing, index-set expansion, matching,
Style evaluation, compiling, rendering) call `check_deadline`, which costs one clock read. Wasm has
its own limit (the runtime's epoch deadline), set from the same remaining time. `DeadlineExceeded`
derives from BaseException, like asyncio's cancellation, so that the `except Exception` of code
reporting a user's mistake (a library function rejecting its arguments) cannot swallow it.

Sizes are checked *before* anything of that size is allocated; the limits are far above what
Penrose's registry needs (its largest trio draws 1,513 shapes, its largest index set ranges over
~5e5 combinations to keep ~500) and low enough that one request cannot take a worker's memory.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

MAX_INDEX_COMBINATIONS = 5_000_000  # an index set's ranges, multiplied, before its `where` filters
MAX_SUBSTANCE_STATEMENTS = 100_000  # Substance statements after index sets are expanded
MAX_SHAPES = 20_000  # shapes a Style may create
MAX_LIST_LENGTH = 100_000  # a list a Style function builds from a count (repeat, ticks, steps...)
MAX_MATRIX_DIMENSION = 1_000  # identity(n), diagonal(v), outerProduct, tsneEnergy's points
MAX_MATRIX_PRODUCT = 1_000_000  # multiply-adds of one matrix product (registry matrices are 4x4)
MAX_STRING_LENGTH = 100_000  # a string a Style builds (labels, concatenations)
# A shape's points: a long list of them reaches the library as one array (energies.expr.LoopList),
# which functions written as loops (bounding boxes, curves, list reductions) read with code of one
# size whatever the length; other functions unroll over at most energies.expr.MAX_UNROLLED points.
MAX_SHAPE_POINTS = 50_000
# A path's commands: goals on a path unroll over them in compiled code (the registry's longest path
# has 190 commands).
MAX_PATH_COMMANDS = 5_000
MAX_CANVAS_SIZE = 100_000.0  # canvas width and height, in pixels

_deadline: ContextVar[float] = ContextVar("layout_deadline", default=math.inf)


class DeadlineExceeded(BaseException):  # noqa: N818 - a cancellation, named like asyncio's
    """The layout's time is up; `phase` names what was running."""

    def __init__(self, phase: str) -> None:
        super().__init__(f"the time limit ran out while {phase}")
        self.phase = phase


class SizeLimitError(ValueError):
    """A size asked for beyond its limit; the message names the construct, the size and the limit."""


@contextmanager
def deadline(seconds: float) -> Iterator[float]:
    """Run the block under a deadline `seconds` from now (nested deadlines keep the earlier one)."""
    end = min(_deadline.get(), time.monotonic() + seconds)
    token = _deadline.set(end)
    try:
        yield end
    finally:
        _deadline.reset(token)


def remaining() -> float:
    """Seconds left before the current deadline (inf when none is set)."""
    return _deadline.get() - time.monotonic()


def check_deadline(phase: str) -> None:
    if time.monotonic() > _deadline.get():
        raise DeadlineExceeded(phase)


def check_size(what: str, size: float, limit: float) -> None:
    if size > limit:
        raise SizeLimitError(f"{what} is {size:,.0f}, above the limit of {limit:,.0f}")
