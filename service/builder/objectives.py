"""Penrose's objectives (energies.library.OBJECTIVES), by Penrose's names and arguments.

    from service import DiagramBuilder, objectives
    db.encourage(objectives.near(a, b))           # minimized
    db.encourage(objectives.near_vec(a.center, (0, 0), 5))

Each member makes a `service.builder.goals.Term`, checked when made; a name the library lacks is a
BuilderAttributeError with "did you mean" (and the hint to use `constraints` for a constraint).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NoReturn

from energies.library import CONSTRAINTS, OBJECTIVES

from .errors import user_facing
from .goals import Term, library_namespace, missing

TERMS = library_namespace("objective", OBJECTIVES)
globals().update(TERMS)
__all__ = sorted(TERMS)


@user_facing
def _absent(name: str) -> NoReturn:
    """Python asks for the names the library lacks only (TERMS are globals): each is an error."""
    if name.startswith("__"):
        raise AttributeError(name)
    if name in CONSTRAINTS:
        raise missing("objectives", "objective", name, {}, f"{name} is a constraint: constraints.{name}")
    raise missing("objectives", "objective", name, TERMS)


# Module attributes as mypy sees them: term makers. It reads neither the names added to globals()
# above nor a decorated __getattr__, but it reads the return type of an annotated one.
__getattr__: Callable[[str], Callable[..., Term]] = _absent


def __dir__() -> list[str]:
    return __all__
