"""What the Style evaluator produces and the energy compiler consumes: one diagram, before layout.

Values inside (shape properties, goal arguments) follow docs/energies-design.md: numbers, strings,
booleans, lists, colors, path commands, and `energies.expr.Node` wherever a value depends on the
unknowns vector `x` (whose initial values are `Unknowns.x0`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np


@dataclass
class ShapeInstance:
    """A shape of the diagram: `name` is its Style path (e.g. "`A`.icon"), `props` Penrose's properties."""

    name: str
    kind: str
    props: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Where:
    """Where something came from in the Style program, for messages."""

    line: int = 0
    column: int = 0
    block: str = ""  # the selector text of the block, shortened
    match: str = ""  # the substitution, e.g. "x=A, y=B"

    def __str__(self) -> str:
        loc = f"style:{self.line}:{self.column}" if self.line else "style"
        extra = ", ".join(
            p for p in (self.block and f"block {self.block}", self.match and f"match {self.match}") if p
        )
        return f"{loc} ({extra})" if extra else loc


@dataclass(slots=True)
class GoalInstance:
    """One `ensure` (constraint) or `encourage` (objective) applied to evaluated arguments."""

    kind: Literal["constraint", "objective"]
    name: str  # Penrose's function name, a key of energies.library.CONSTRAINTS / OBJECTIVES
    args: list[Any]
    stages: tuple[str, ...] = ()  # Penrose's stage annotation: `in [..]` (exclude False) or `except [..]`
    exclude: bool = True  # with stages=() and exclude=True: active in every stage
    where: Where = field(default_factory=Where)
    implicit: bool = False  # added by the system (e.g. onCanvas for ensureOnCanvas shapes)

    def active_in(self, stage: str) -> bool:
        return (stage in self.stages) != self.exclude

    def describe(self) -> str:
        return f"{'ensure' if self.kind == 'constraint' else 'encourage'} {self.name} at {self.where}"


@dataclass
class Unknowns:
    """The optimization inputs: initial values, names, and the stages in which each one varies."""

    x0: list[float] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    stages: list[tuple[tuple[str, ...], bool]] = field(default_factory=list)  # (stages, exclude) as for goals

    def add(self, value: float, name: str, stages: tuple[str, ...] = (), exclude: bool = True) -> int:
        self.x0.append(float(value))
        self.names.append(name)
        self.stages.append((stages, exclude))
        return len(self.x0) - 1

    def varying_mask(self, stage: str) -> np.ndarray:
        return np.array([(stage in s) != ex for s, ex in self.stages], dtype=bool)


@dataclass
class Diagram:
    canvas: tuple[float, float]  # width, height
    shapes: list[ShapeInstance]  # in drawing order (layering applied), back to front
    goals: list[GoalInstance]
    unknowns: Unknowns
    stages: list[str] = field(default_factory=lambda: [""])  # `layout = [...]`, or one unnamed stage
    warnings: list[str] = field(default_factory=list)
    variation: str = ""
    cache: dict[str, Any] = field(default_factory=dict, repr=False)  # derived data (e.g. goal kinds)
