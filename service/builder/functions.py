"""Penrose's computed functions (energies.library.FUNCTIONS) for builder programs.

    from service.builder import functions as fn
    d = fn.norm(a.center - b.center)          # a lazy number: it reads optimized inputs
    m = fn.midpoint(a.center, b.center)       # a Vec
    fn.pathFromPoints("closed", [p, q, r])    # path data for db.path(d=...)
    db.functions.random(0, 1)                 # functions that draw random numbers: from the builder

They run now, as in a Style: on numbers they compute numbers, on lazy values they record lazy values
(adcore's lazy protocol), so `fn.norm(...)` inside a constraint is the same expression a Style's
`norm(...)` makes. Vectors come back as `Vec`s. Names are Penrose's, and snake_case spellings
(`path_from_points`) too. Functions that draw random numbers (`random`, `diskRandom`, ...) need the
diagram's generator, seeded by its variation: call them on `db.functions`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from energies.expr import UnknownBranchError
from energies.lang.errors import did_you_mean
from energies.library import FUNCTIONS
from energies.library.context import FunctionContext
from energies.library.functions import FunctionSpec

from .errors import BuilderAttributeError, BuilderError, user_facing
from .goals import snake
from .values import from_style, to_style

NAMES: dict[str, str] = {**{snake(n): n for n in FUNCTIONS}, **{n: n for n in FUNCTIONS}}


def caller(
    spec: FunctionSpec, context: Callable[[], FunctionContext] | None, shape_of: Any
) -> Callable[..., Any]:
    """`spec` as a Python function: arguments as Style values, static counts as ints, errors as
    BuilderErrors at the caller's line, the result as the program reads it."""
    name = spec.name

    def call(*args: Any) -> Any:
        required = sum(not p.optional for p in spec.params)
        if not required <= len(args) <= len(spec.params):
            expected = f"{required}" if required == len(spec.params) else f"{required} to {len(spec.params)}"
            names = ", ".join(p.name for p in spec.params)
            raise BuilderError(f"function {name}({names}) expects {expected} argument(s), got {len(args)}")
        values = [to_style(a) for a in args]
        for i, (p, v) in enumerate(zip(spec.params, values)):
            if p.kind == "integer" and isinstance(v, float) and v.is_integer():
                values[i] = int(v)
        try:
            if spec.needs_context:
                if context is None:
                    raise BuilderError(
                        f"function {name} draws random numbers from the diagram's variation: "
                        f"call db.functions.{name}"
                    )
                result = spec.impl(context(), *values)
            else:
                result = spec.impl(*values)
        except BuilderError:
            raise
        except UnknownBranchError as e:
            raise BuilderError(f"function {name}: {e}") from None
        except (ValueError, TypeError, ArithmeticError, IndexError, KeyError) as e:
            raise BuilderError(f"function {name}: {e or type(e).__name__}") from None
        return from_style(_plain(result), shape_of)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"Penrose's computed function {name}({', '.join(p.name for p in spec.params)})."
    return user_facing(call)


def _plain(v: Any) -> Any:
    if isinstance(v, tuple):
        return [_plain(x) for x in v]
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if type(v).__module__ == "numpy" and hasattr(v, "item"):
        return v.item()
    return v


class Functions:
    """The computed functions as attributes; `context` gives the generator and canvas the random
    ones draw from (None: they refuse, naming `db.functions`)."""

    def __init__(self, context: Callable[[], FunctionContext] | None = None, shape_of: Any = None):
        self._context = context
        self._shape_of = shape_of if shape_of is not None else (lambda s: s)
        self._made: dict[str, Callable[..., Any]] = {}

    @user_facing
    def __getattr__(self, attr: str) -> Callable[..., Any]:
        if attr.startswith("_"):
            raise AttributeError(attr)
        name = NAMES.get(attr)
        if name is None:
            raise BuilderAttributeError(
                f"there is no computed function {attr}{did_you_mean(attr, FUNCTIONS)}"
            )
        found = self._made.get(name)
        if found is None:
            found = self._made[name] = caller(FUNCTIONS[name], self._context, self._shape_of)
        return found

    def __dir__(self) -> list[str]:
        return sorted(NAMES)


_MODULE = Functions()


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    return getattr(_MODULE, name)


def __dir__() -> list[str]:
    return sorted(NAMES)
