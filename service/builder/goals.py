"""Constraints and objectives as values: what `constraints.disjoint(a, b, 10)` returns.

A `Term` records one library function applied to arguments (Penrose's name, its arguments as
Style values, the user's line); `db.ensure` / `db.encourage` state it. Nothing is computed when a
term is made: the energy compiler runs the library function inside the goal's compiled kind, as it
does for a Style's `ensure disjoint(x.icon, y.icon, 10)`, so the same term gives the same energy.

`library_namespace(kind, table)` makes the `constraints` and `objectives` modules' members: one
function per entry of energies.library.CONSTRAINTS / OBJECTIVES, under Penrose's name and also
its snake_case spelling (`lessThan`, `less_than`), with Penrose's parameters. Each checks its
arguments when called (count, and the kind each parameter wants: a shape, a number, a vector, a
list of points), so a mistake is reported at the line that made the term.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from energies.expr import UnknownBranchError
from energies.lang.errors import did_you_mean
from energies.style.library_bridge import ArgCheck, arity_problem, goal_arg_checks

from .errors import BuilderAttributeError, BuilderError, Site, user_facing
from .values import describe, to_style


@dataclass(frozen=True, slots=True)
class Term:
    """A constraint (value <= 0 when satisfied) or an objective (minimized) applied to arguments."""

    kind: str  # "constraint" or "objective"
    name: str  # Penrose's function name
    args: tuple[Any, ...]  # Style values (energies/diagram.py)
    site: Site | None = None  # where it was stated (set by db.ensure / db.encourage when weighting it)

    def __repr__(self) -> str:
        return f"<{self.kind} {self.name}({', '.join(describe(a) for a in self.args)})>"


def snake(name: str) -> str:
    """lessThan -> less_than; a capital after a digit stays with it (contains1D -> contains1d)."""
    return re.sub(r"(?<=[a-z])([A-Z])", r"_\1", name).lower()


def term_maker(kind: str, name: str, fn: Callable[..., Any]) -> Callable[..., Term]:
    """The checked constructor of `kind` terms of library function `name` (implemented by `fn`)."""
    impl = getattr(fn, "impl", fn)
    sig = inspect.signature(impl)
    params = list(sig.parameters.values())
    checks: tuple[ArgCheck, ...] = goal_arg_checks(fn)
    label = f"{kind} {name}"
    variadic = any(p.kind == p.VAR_POSITIONAL for p in params)
    required = sum(p.default is p.empty and p.kind != p.VAR_POSITIONAL for p in params)

    def make(*args: Any, **kwargs: Any) -> Term:
        if kwargs:
            try:
                bound = sig.bind(*args, **kwargs)
            except TypeError as e:
                raise BuilderError(f"{label}{sig}: {e}") from None
            # keywords become positions; a skipped optional parameter before a given one takes its default
            last = max(i for i, p in enumerate(params) if p.name in bound.arguments)
            args = tuple(bound.arguments.get(p.name, p.default) for p in params[: last + 1])
        if not (variadic or required <= len(args) <= len(params)):
            raise BuilderError(f"{label} {arity_problem(impl, len(args))}")
        values = []
        for i, a in enumerate(args):
            try:
                v = to_style(a)
            except BuilderError:
                v = a
            if i < len(checks):
                param, expected = checks[i]
                if expected is not None and not expected[1](v):
                    raise BuilderError(f"{label}: argument {param} must be {expected[0]}, not {describe(a)}")
            values.append(v)
        return Term(kind, name, tuple(values))

    make.__name__ = make.__qualname__ = name
    make.__doc__ = (
        f"Penrose's {label}{sig}: a term for db.{'ensure' if kind == 'constraint' else 'encourage'}."
    )
    make.__signature__ = sig.replace(return_annotation=Term)  # type: ignore[attr-defined]  # inspect reads it
    return user_facing(make)


def library_namespace(kind: str, table: Mapping[str, Callable[..., Any]]) -> dict[str, Callable[..., Term]]:
    """Penrose's names and their snake_case spellings -> term constructors."""
    out: dict[str, Callable[..., Term]] = {}
    for name, fn in table.items():
        out[name] = term_maker(kind, name, fn)
    for name in table:
        out.setdefault(snake(name), out[name])
    return out


def absent_term(
    module: str, what: str, known: Mapping[str, Any], other_module: str, others: Mapping[str, Any]
) -> Callable[[str], Callable[..., Term]]:
    """The `__getattr__` of the `module` namespace (constraints or objectives), which Python asks for
    the names it lacks only: each is an error, a name of the `other_module`'s kind said to be there.
    Typed as returning term makers, so that mypy reads the module's attributes as such."""

    @user_facing
    def absent(name: str) -> Callable[..., Term]:
        if name.startswith("__"):
            raise AttributeError(name)
        if name in others:
            other = "an objective" if what == "constraint" else "a constraint"
            raise missing(module, what, name, {}, f"{name} is {other}: {other_module}.{name}")
        raise missing(module, what, name, known)

    return absent


def missing(
    module: str, what: str, name: str, known: Mapping[str, Any], hint: str = ""
) -> BuilderAttributeError:
    """The error for `module.name` when the library has no such entry."""
    return BuilderAttributeError(
        f"{module} has no {what} {name}{f'; {hint}' if hint else did_you_mean(name, known)}"
    )


def evaluate_term(term: Term, table: Mapping[str, Callable[..., Any]]) -> Any:
    """The term's value as a lazy value (or a number when it reads no input): the library function
    run on its arguments now, as the compiler would run it, for weighting (`db.ensure(c, weight=3)`)."""
    fn = table[term.name]
    try:
        return getattr(fn, "impl", fn)(*term.args)
    except (UnknownBranchError, ValueError, TypeError, ArithmeticError) as e:
        raise BuilderError(f"{term.kind} {term.name}: {e}", term.site) from None
