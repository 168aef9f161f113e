"""Penrose's constraints (energies.library.CONSTRAINTS), by Penrose's names and arguments.

    from service import DiagramBuilder, constraints
    db.ensure(constraints.disjoint(a, b, 10))     # satisfied when the value is <= 0
    db.ensure(constraints.less_than(a.r, b.r))    # snake_case spellings too

Each member makes a `service.builder.goals.Term`, checked when made; a name the library lacks is a
BuilderAttributeError with "did you mean" (and the hint to use `objectives` for an objective).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NoReturn

from energies.library import CONSTRAINTS, OBJECTIVES

from .errors import user_facing
from .goals import Term, library_namespace, missing

TERMS = library_namespace("constraint", CONSTRAINTS)
globals().update(TERMS)
__all__ = sorted(TERMS)


@user_facing
def _absent(name: str) -> NoReturn:
    """Python asks for the names the library lacks only (TERMS are globals): each is an error."""
    if name.startswith("__"):
        raise AttributeError(name)
    if name in OBJECTIVES:
        raise missing("constraints", "constraint", name, {}, f"{name} is an objective: objectives.{name}")
    raise missing("constraints", "constraint", name, TERMS)


# Module attributes as mypy sees them: term makers. It reads neither the names added to globals()
# above nor a decorated __getattr__, but it reads the return type of an annotated one.
__getattr__: Callable[[str], Callable[..., Term]] = _absent


def __dir__() -> list[str]:
    return __all__
