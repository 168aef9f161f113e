"""What a computed function may need besides its arguments: the diagram's random source and canvas.

Penrose passes a `Context` as the first argument of every computed function; ours is the same idea,
reduced to what our functions use. Only functions whose `FunctionSpec.needs_context` is true receive
it. Sampling functions draw from `rng` eagerly: their results are constants of the diagram, fixed by
the variation seed, as Penrose's sampled inputs are (they are never optimized).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from energies.shapes.seedrandom import SeedRandom


@dataclass(frozen=True)
class CanvasSize:
    """The canvas dimensions, in Penrose units (shape coordinates are centered, y up)."""

    width: float
    height: float


class Sized(Protocol):
    """Anything with a canvas's `.width` and `.height`: an `energies.shapes.Canvas`, a `CanvasSize`."""

    @property
    def width(self) -> float: ...

    @property
    def height(self) -> float: ...


@dataclass
class FunctionContext:
    """`rng`: Penrose's generator seeded by the diagram's variation; `canvas`: its dimensions."""

    rng: SeedRandom
    canvas: Sized

    @staticmethod
    def seeded(seed: int, width: float = 800.0, height: float = 700.0) -> FunctionContext:
        """A context for tests and tools: a fresh generator from an integer seed."""
        return FunctionContext(SeedRandom(str(seed)), CanvasSize(width, height))
