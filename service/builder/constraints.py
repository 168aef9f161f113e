"""Penrose's constraints (energies.library.CONSTRAINTS), by Penrose's names and arguments.

    from service import DiagramBuilder, constraints
    db.ensure(constraints.disjoint(a, b, 10))     # satisfied when the value is <= 0
    db.ensure(constraints.less_than(a.r, b.r))    # snake_case spellings too

Each member makes a `service.builder.goals.Term`, checked when made; a name the library lacks is a
BuilderAttributeError with "did you mean" (and the hint to use `objectives` for an objective).
"""

from __future__ import annotations

from typing import Any

from energies.library import CONSTRAINTS, OBJECTIVES

from .errors import user_facing
from .goals import library_namespace, missing

TERMS = library_namespace("constraint", CONSTRAINTS)
globals().update(TERMS)
__all__ = sorted(TERMS)


@user_facing
def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    if name in OBJECTIVES:
        raise missing("constraints", "constraint", name, {}, f"{name} is an objective: objectives.{name}")
    raise missing("constraints", "constraint", name, TERMS)


def __dir__() -> list[str]:
    return __all__
