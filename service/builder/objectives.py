"""Penrose's objectives (energies.library.OBJECTIVES), by Penrose's names and arguments.

    from service import DiagramBuilder, objectives
    db.encourage(objectives.near(a, b))           # minimized
    db.encourage(objectives.near_vec(a.center, (0, 0), 5))

Each member makes a `service.builder.goals.Term`, checked when made; a name the library lacks is a
BuilderAttributeError with "did you mean" (and the hint to use `constraints` for a constraint).
"""

from __future__ import annotations

from typing import Any

from energies.library import CONSTRAINTS, OBJECTIVES

from .errors import user_facing
from .goals import library_namespace, missing

TERMS = library_namespace("objective", OBJECTIVES)
globals().update(TERMS)
__all__ = sorted(TERMS)


@user_facing
def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    if name in CONSTRAINTS:
        raise missing("objectives", "objective", name, {}, f"{name} is a constraint: constraints.{name}")
    raise missing("objectives", "objective", name, TERMS)


def __dir__() -> list[str]:
    return __all__
