"""Mistakes in a builder program, reported at the user's own line.

    raise BuilderError("constraint disjoint: argument s2 must be a shape, not a number")
    # BuilderError: venn.py:12: constraint disjoint: argument s2 must be a shape, not a number

Every public entry point of `service.builder` is wrapped by `user_facing`: a `BuilderError` raised
anywhere below it is re-raised from the entry point with the traceback cut there, so the user sees
their own frames, one line of ours, and a message that starts with the file and line of the call
they wrote (the innermost frame outside this package: `user_site`). `__tracebackhide__` lets
IPython and pytest hide that last frame too.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from types import FrameType
from typing import ParamSpec, TypeVar

PACKAGE = __name__.rpartition(".")[0]  # "service.builder"
EXAMPLES = PACKAGE + ".examples"  # user programs that ship with the package

Site = tuple[str, int]  # (file name, line)


class BuilderError(ValueError):
    """A mistake in a builder program; `site` is (file, line) of the user's call, when known."""

    def __init__(self, message: str, site: Site | None = None):
        self.site = site if site is not None else user_site()
        self.detail = message
        file, line = self.site
        super().__init__(f"{file}:{line}: {message}" if line else message)


class BuilderAttributeError(BuilderError, AttributeError):
    """An unknown property or library name: also an AttributeError, so `hasattr` and tab
    completion treat it as a missing attribute."""


def user_site() -> Site:
    """(file, line) of the innermost frame outside this package: the call the user wrote."""
    f: FrameType | None = sys._getframe(1)
    while f is not None:
        inside = _INTERNAL.get(f.f_code)
        if inside is None:
            inside = _INTERNAL[f.f_code] = _internal(f.f_globals.get("__name__", ""))
        if not inside:
            break
        f = f.f_back
    if f is None:
        return ("<unknown>", 0)
    return (f.f_code.co_filename, f.f_lineno)


_INTERNAL: dict[object, bool] = {}  # code object -> whether it is ours (a loop stating goals asks often)


def _internal(module: str) -> bool:
    return module.startswith(PACKAGE) and not module.startswith(EXAMPLES)


P = ParamSpec("P")
R = TypeVar("R")


def user_facing(fn: Callable[P, R]) -> Callable[P, R]:
    """`fn` with its BuilderErrors re-raised here, the traceback below this frame dropped."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        __tracebackhide__ = True  # noqa: F841 - read by IPython and pytest
        try:
            return fn(*args, **kwargs)
        except BuilderError as e:
            raise e.with_traceback(None) from None

    return wrapper
