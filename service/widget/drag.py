"""Dragging a laid-out diagram: the dragged shape is pinned where the pointer puts it and the rest
is re-optimized from the current layout, as the playground's live editor does
(service.workers.live_session), with Bloom's continuity term.

    session = DragSession(diagram, x, targets, lasso_strength=1.0)
    session.drag("A.icon", dx, dy, begin=True)    # -> OptimizeResult; session.x is the new layout

Rules:
- a shape can be dragged when its position is optimized inputs (a center, or a line's two ends)
  and its program did not say `drag=False`; `dragConstraint(x, y) -> (x, y)` maps the pointer's
  canvas position (where the shape's center, a line's midpoint, would go) to where it goes;
- `dx, dy` are canvas units from where the drag began (`begin=True` marks the pointer going down);
- while the rest re-optimizes, the dragged shape's inputs vary in no stage;
- the continuity term is Bloom's lasso: `lasso_strength * |x - x_before|`, the Euclidean distance
  from the layout before this drag step over every input (the pinned ones included), added to the
  energy; 0 leaves only the warm start from the current layout. Its gradient at x_before is taken
  as 0 (the distance has no derivative there).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from energies.compile import compile_problem
from energies.diagram import Diagram, ShapeInstance
from energies.optimize.optimizer import OptimizeResult, StageSpec, optimize
from service.workers.live_session import input_slot

DragConstraint = Callable[[float, float], Any]


class DragError(ValueError):
    """A drag that cannot be done: an unknown shape, or a dragConstraint that failed."""


@dataclass(frozen=True)
class DragTarget:
    name: str
    slots: tuple[int, ...]  # the position's inputs: (cx, cy), or (x1, y1, x2, y2) for a line
    constraint: DragConstraint | None = None


def every_shape(diagram: Diagram) -> list[ShapeInstance]:
    out, todo = [], list(diagram.shapes)
    while todo:
        s = todo.pop(0)
        out.append(s)
        todo.extend(m for m in s.props.get("shapes", []) if isinstance(m, ShapeInstance))
    return out


def drag_targets(
    diagram: Diagram, options: dict[str, tuple[bool | None, DragConstraint | None]] | None = None
) -> dict[str, DragTarget]:
    """The shapes that can be dragged, by name; `options[name]` = (drag, dragConstraint)."""
    options = options or {}
    found = {}
    for shape in every_shape(diagram):
        enabled, constraint = options.get(shape.name, (None, None))
        if enabled is False:
            continue
        props = shape.props
        points = [props.get("center")] if "center" in props else [props.get("start"), props.get("end")]
        slots = [input_slot(c) for p in points if isinstance(p, list) and len(p) == 2 for c in p]
        if len(slots) == 2 * len(points) and None not in slots:
            found[shape.name] = DragTarget(shape.name, tuple(s for s in slots if s is not None), constraint)
    return found


class PinnedProblem:
    """A compiled problem with some inputs pinned (varying in no stage) and the continuity term."""

    def __init__(self, problem: Any, pinned: np.ndarray, anchor: np.ndarray, strength: float):
        self.problem = problem
        self.anchor = anchor
        self.strength = strength
        keep = ~pinned
        self.stages: Sequence[StageSpec] = [replace(s, varying=s.varying & keep) for s in problem.stages]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.problem, name)

    def energy_and_grad(self, x: np.ndarray, stage: int, weight: float) -> tuple[float, np.ndarray]:
        f, g = self.problem.energy_and_grad(x, stage, weight)
        if self.strength:
            d = x - self.anchor
            n = float(np.linalg.norm(d))
            f += self.strength * n
            if n > 0:
                g = g + (self.strength / n) * d
        return f, g


class DragSession:
    """A diagram's compiled energy and current layout, re-optimized by drags."""

    def __init__(
        self,
        diagram: Diagram,
        x: np.ndarray,
        targets: dict[str, DragTarget],
        *,
        lasso_strength: float = 0.0,
        time_limit: float = 10.0,
    ):
        self.diagram = diagram
        self.problem = compile_problem(diagram)
        self.x = np.array(x, dtype=np.float64)
        self.targets = targets
        self.lasso_strength = float(lasso_strength)
        self.time_limit = time_limit
        self.origins: dict[str, list[float]] = {}

    def drag(self, name: str, dx: float, dy: float, begin: bool = False) -> OptimizeResult:
        target = self.targets.get(name)
        if target is None:
            raise DragError(
                f"shape {name!r} cannot be dragged (draggable: {', '.join(self.targets) or 'none'})"
            )
        if not (math.isfinite(dx) and math.isfinite(dy)):
            raise DragError("the drag offset is not finite")
        if begin or name not in self.origins:
            self.origins[name] = [float(self.x[s]) for s in target.slots]
        origin = self.origins[name]
        cx, cy = float(np.mean(origin[0::2])), float(np.mean(origin[1::2]))
        px, py = cx + dx, cy + dy
        if target.constraint is not None:
            try:
                px, py = (float(v) for v in target.constraint(px, py))
            except Exception as e:  # the program's own function
                raise DragError(f"dragConstraint of {name} failed: {type(e).__name__}: {e}") from None
            if not (math.isfinite(px) and math.isfinite(py)):
                raise DragError(f"dragConstraint of {name} returned a position that is not finite")
        x = self.x.copy()
        for k, s in enumerate(target.slots):
            x[s] = origin[k] + (px - cx if k % 2 == 0 else py - cy)
        pinned = np.zeros(len(x), dtype=bool)
        pinned[list(target.slots)] = True
        problem = PinnedProblem(self.problem, pinned, self.x.copy(), self.lasso_strength)
        result = optimize(problem, x, time_limit=self.time_limit)
        self.x = np.array(result.x, dtype=np.float64)
        return result
