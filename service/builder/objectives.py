"""Penrose's objectives (energies.library.OBJECTIVES), by Penrose's names and arguments.

    from service import DiagramBuilder, objectives
    db.encourage(objectives.near(a, b))           # minimized
    db.encourage(objectives.near_vec(a.center, (0, 0), 5))

Each member makes a `service.builder.goals.Term`, checked when made; a name the library lacks is a
BuilderAttributeError with "did you mean" (and the hint to use `constraints` for a constraint).
"""

from __future__ import annotations

from collections.abc import Callable

from energies.library import CONSTRAINTS, OBJECTIVES

from .goals import Term, absent_term, library_namespace

TERMS = library_namespace("objective", OBJECTIVES)
globals().update(TERMS)
__all__ = sorted(TERMS)


# Names the library lacks are errors (goals.absent_term). mypy reads neither the names added to
# globals() above nor a decorated __getattr__, but it reads the type of an annotated one.
__getattr__: Callable[[str], Callable[..., Term]] = absent_term(
    "objectives", "objective", TERMS, "constraints", CONSTRAINTS
)


def __dir__() -> list[str]:
    return __all__
