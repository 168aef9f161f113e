"""Penrose's constraints (energies.library.CONSTRAINTS), by Penrose's names and arguments.

    from service import DiagramBuilder, constraints
    db.ensure(constraints.disjoint(a, b, 10))     # satisfied when the value is <= 0
    db.ensure(constraints.less_than(a.r, b.r))    # snake_case spellings too

Each member makes a `service.builder.goals.Term`, checked when made; a name the library lacks is a
BuilderAttributeError with "did you mean" (and the hint to use `objectives` for an objective).
"""

from __future__ import annotations

from collections.abc import Callable

from energies.library import CONSTRAINTS, OBJECTIVES

from .goals import Term, absent_term, library_namespace

TERMS = library_namespace("constraint", CONSTRAINTS)
globals().update(TERMS)
__all__ = sorted(TERMS)


# Names the library lacks are errors (goals.absent_term). mypy reads neither the names added to
# globals() above nor a decorated __getattr__, but it reads the type of an annotated one.
__getattr__: Callable[[str], Callable[..., Term]] = absent_term(
    "constraints", "constraint", TERMS, "objectives", OBJECTIVES
)


def __dir__() -> list[str]:
    return __all__
