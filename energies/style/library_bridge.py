"""The Style evaluator's view of `energies.library`: look names up, check arity, call.

Computed functions run right away: on constants they compute numbers, on lazy `Node`s they record
Nodes (adcore's lazy protocol), so the evaluator just calls them. Constraints and objectives are
only looked up and arity-checked here; they run later, inside compiled goal kinds. Any failure
inside a library function on the user's arguments becomes a `DiagramError` naming the function.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from energies.diagram import ShapeInstance
from energies.expr import LOOP_MIN, UnknownBranchError, deferred_call, depends_on_unknowns
from energies.lang.ast import Pos
from energies.lang.errors import DiagramError, did_you_mean
from energies.style import arith

if TYPE_CHECKING:
    from energies.style.evaluate import Evaluator


@lru_cache(maxsize=2048)
def _signature(fn: Callable[..., Any]) -> inspect.Signature | None:
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def _long_unknown_list(a: Any) -> bool:
    return isinstance(a, list) and len(a) >= LOOP_MIN and depends_on_unknowns(a)


def arity_problem(fn: Callable[..., Any], n_args: int, skip_first: bool = False) -> str | None:
    """Why `n_args` arguments do not fit `fn` (None when they do, or when it cannot tell)."""
    sig = _signature(fn)
    if sig is None:
        return None
    params = list(sig.parameters.values())[1 if skip_first else 0 :]
    if any(p.kind == p.VAR_POSITIONAL for p in params):
        return None
    required = sum(p.default is p.empty for p in params)
    if required <= n_args <= len(params):
        return None
    expected = str(required) if required == len(params) else f"{required} to {len(params)}"
    names = ", ".join(p.name for p in params)
    return f"expects {expected} argument(s) ({names}), got {n_args}"


class Library:
    """Penrose's functions, constraints and objectives by name (imported on first use)."""

    def __init__(
        self,
        functions: Mapping[str, Any] | None = None,
        constraints: Mapping[str, Any] | None = None,
        objectives: Mapping[str, Any] | None = None,
    ) -> None:
        self._functions = functions
        self._constraints = constraints
        self._objectives = objectives
        self._import_error: str | None = None
        self._good_goals: set[tuple[str, str, int]] = set()  # (kind, name, number of arguments)

    def _load(self) -> None:
        if self._functions is not None and self._constraints is not None and self._objectives is not None:
            return
        try:
            import energies.library as lib
        except Exception as e:  # the library is a sibling package; report rather than crash
            self._import_error = f"{type(e).__name__}: {e}"
            self._functions = self._functions or {}
            self._constraints = self._constraints or {}
            self._objectives = self._objectives or {}
            return
        self._functions = self._functions if self._functions is not None else lib.FUNCTIONS
        self._constraints = self._constraints if self._constraints is not None else lib.CONSTRAINTS
        self._objectives = self._objectives if self._objectives is not None else lib.OBJECTIVES

    @property
    def functions(self) -> Mapping[str, Any]:
        self._load()
        assert self._functions is not None
        return self._functions

    @property
    def constraints(self) -> Mapping[str, Any]:
        self._load()
        assert self._constraints is not None
        return self._constraints

    @property
    def objectives(self) -> Mapping[str, Any]:
        self._load()
        assert self._objectives is not None
        return self._objectives

    def unavailable(self) -> str:
        return f" (the function library failed to load: {self._import_error})" if self._import_error else ""

    def call(self, name: str, args: list[Any], ev: Evaluator, pos: Pos) -> Any:
        spec = self.functions.get(name)
        if spec is None:
            raise ev.rep.error(
                pos,
                f"unknown function {name}{did_you_mean(name, self.functions)}{self.unavailable()}",
                "InvalidFunctionNameError",
            )
        impl = getattr(spec, "impl", spec)
        needs_context = bool(getattr(spec, "needs_context", False))
        problem = arity_problem(impl, len(args), skip_first=needs_context)
        if problem:
            raise ev.rep.error(pos, f"function {name} {problem}", "ArgLengthMismatch")
        args = [_static_int(p, a) for p, a in zip(getattr(spec, "params", ()), args, strict=False)] + args[
            len(getattr(spec, "params", ())) :
        ]
        if getattr(impl, "loops", False) and any(_long_unknown_list(a) for a in args):
            # written for loops: recorded as one call, run on the list as an array when compiled
            return deferred_call(impl, name, args)
        try:
            if needs_context:
                from energies.library.context import FunctionContext

                result = impl(FunctionContext(ev.rng, ev.canvas), *args)
            else:
                result = impl(*args)
        except DiagramError:
            raise
        except UnknownBranchError as e:
            raise ev.rep.error(pos, f"function {name}: {e}", "FunctionInternalError") from None
        except RecursionError:
            raise
        except Exception as e:  # a library function rejecting the user's arguments
            raise ev.rep.error(pos, f"function {name}: {_describe(e)}", "FunctionInternalError") from None
        return arith.to_plain(result)

    def check_goal(self, kind: str, name: str, n_args: int, ev: Evaluator, pos: Pos) -> None:
        if (kind, name, n_args) in self._good_goals:  # checked before: a goal in every match
            return
        table = self.constraints if kind == "constraint" else self.objectives
        fn = table.get(name)
        if fn is None:
            other = self.objectives if kind == "constraint" else self.constraints
            hint = ""
            if name in other:
                use = "objective (use encourage)" if kind == "constraint" else "constraint (use ensure)"
                hint = f"; {name} is an {use}"
            else:
                hint = did_you_mean(name, table)
            tag = "InvalidConstraintNameError" if kind == "constraint" else "InvalidObjectiveNameError"
            raise ev.rep.error(pos, f"unknown {kind} {name}{hint}{self.unavailable()}", tag)
        problem = arity_problem(getattr(fn, "impl", fn), n_args)
        if problem:
            raise ev.rep.error(pos, f"{kind} {name} {problem}", "ArgLengthMismatch")
        self._good_goals.add((kind, name, n_args))

    def goal_function(self, kind: str, name: str) -> Any:
        return (self.constraints if kind == "constraint" else self.objectives)[name]


# What a goal parameter accepts, by the library's annotation (Penrose's parameter types).
_GOAL_PARAM_KINDS: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "Scalar": ("a number", arith.is_number),
    "Pt": ("a point (vector)", arith.is_vector),
    "Sequence[Scalar]": ("a vector", arith.is_vector),
    "Sequence[Pt]": (
        "a list of points",
        lambda v: isinstance(v, list) and all(arith.is_vector(p) for p in v),
    ),
    "Any": ("a shape", lambda v: isinstance(v, ShapeInstance)),
    "Sequence[Any]": (
        "a list of shapes",
        lambda v: isinstance(v, list) and all(isinstance(s, ShapeInstance) for s in v),
    ),
    "bool": ("a boolean", lambda v: isinstance(v, bool)),
}


ArgCheck = tuple[str, tuple[str, Callable[[Any], bool]] | None]  # parameter name, what it accepts


def goal_arg_checks(fn: Any) -> tuple[ArgCheck, ...]:
    """Per parameter of a constraint/objective: its name and what it accepts (None: anything)."""
    sig = _signature(getattr(fn, "impl", fn))
    if sig is None:
        return ()
    out = []
    for param in sig.parameters.values():
        annotation = (
            param.annotation
            if isinstance(param.annotation, str)
            else getattr(param.annotation, "__name__", "")
        )
        out.append((param.name, _GOAL_PARAM_KINDS.get(annotation)))
    return tuple(out)


def check_goal_args(
    name: str, checks: tuple[ArgCheck, ...], args: list[Any], positions: list[Pos], ev: Evaluator
) -> None:
    """Each argument of a constraint/objective has the kind its parameter wants (else a located error)."""
    for (param, expected), arg, pos in zip(checks, args, positions, strict=False):
        if expected is not None and not expected[1](arg):
            raise ev.rep.error(
                pos,
                f"{name}: argument {param} must be {expected[0]}, not {arith.kind_of(arg)}",
                "BadArgumentTypeError",
            )


def _static_int(param: Any, arg: Any) -> Any:
    """Style numbers are floats; a parameter that fixes structure (a count, an index) wants an int."""
    if getattr(param, "kind", None) == "integer" and isinstance(arg, float) and arg.is_integer():
        return int(arg)
    return arg


def _describe(e: Exception) -> str:
    text = str(e)
    return text if text else type(e).__name__
