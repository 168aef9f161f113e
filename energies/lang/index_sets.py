"""Expansion of indexed Substance statements (`Point p_i for i in [0, 9] where i > 2`).

    expand(stmt_set: StmtSet, text: str, room: int) -> list[SubStmt]   (at most `room` copies)

Semantics follow Penrose: the index variables range over integers, their Cartesian
product is taken with the first variable outermost, the `where` condition filters the
combinations (comparisons use a 1e-5 tolerance, `%` is JavaScript's remainder), and in
each copy of the statement a name `x_i` whose suffix after the last `_` is an index
variable becomes `x_<value>`; an argument that *is* an index variable becomes a number.
The condition is evaluated with numpy over all combinations at once, because registry
examples range over half a million combinations.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

import numpy as np

from energies.lang import ast as A
from energies.lang.errors import DiagramError
from energies.limits import MAX_INDEX_COMBINATIONS, MAX_SUBSTANCE_STATEMENTS, check_deadline

_EPS = 1e-5
Env = dict[str, np.ndarray]


class _IndexError(Exception):
    def __init__(self, pos: A.Pos, message: str, kind: str) -> None:
        super().__init__(message)
        self.pos, self.message, self.kind = pos, message, kind


def _js_number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _num(e: A.NumExpr, env: Env) -> np.ndarray:
    if isinstance(e, A.NumberLit):
        return np.asarray(e.value, dtype=float)
    if isinstance(e, A.Name):
        if e.value in env:
            return env[e.value]
        literal = _js_number(e.value)
        if literal is None:
            raise _IndexError(e.pos, f"{e} is not an index variable", "InvalidSetIndexingError")
        return np.asarray(literal)
    if isinstance(e, A.NumNeg):
        return -_num(e.arg, env)
    left, right = _num(e.left, env), _num(e.right, env)
    if e.op in "/%" and np.any(right == 0):
        raise _IndexError(e.pos, "division by zero in index condition", "DivideByZeroError")
    with np.errstate(all="ignore"):
        out = {
            "+": np.add,
            "-": np.subtract,
            "*": np.multiply,
            "/": np.divide,
            "%": np.fmod,
            "^": np.power,
        }[e.op](left, right)
    if np.any(np.isnan(out)):
        raise _IndexError(e.pos, "index condition evaluates to NaN", "InvalidArithmeticValueError")
    return out


_COMPARE: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "<": lambda a, b: (a < b) & ~(np.abs(a - b) < _EPS),
    ">": lambda a, b: (a > b) & ~(np.abs(a - b) < _EPS),
    "<=": lambda a, b: (a <= b) | (np.abs(a - b) < _EPS),
    ">=": lambda a, b: (a >= b) | (np.abs(a - b) < _EPS),
    "==": lambda a, b: np.abs(a - b) < _EPS,
    "!=": lambda a, b: ~(np.abs(a - b) < _EPS),
}


def _cond(e: A.BoolExpr, env: Env) -> np.ndarray:
    if isinstance(e, A.BoolConst):
        return np.asarray(e.value)
    if isinstance(e, A.BoolNot):
        return ~_cond(e.arg, env)
    if isinstance(e, A.BoolBin):
        left, right = _cond(e.left, env), _cond(e.right, env)
        return (left & right) if e.op == "&&" else (left | right)
    return _COMPARE[e.op](_num(e.left, env), _num(e.right, env))


def _assignments(iset: A.IndexSet, room: int) -> list[dict[str, int]]:
    names = [r.var.value for r in iset.ranges]
    for i, r in enumerate(iset.ranges):
        if r.var.value in names[:i]:
            raise _IndexError(r.var.pos, f"index {r.var} is declared twice", "DuplicateIndexError")
    bounds = []
    for r in iset.ranges:
        for bound in (r.low, r.high):
            if not float(bound.value).is_integer():
                raise _IndexError(
                    bound.pos, f"index bound {bound.value} is not an integer", "BadSetIndexRangeError"
                )
        low, high = int(r.low.value), int(r.high.value)
        if high < low:
            return []
        bounds.append((low, high))
    # Judged from the bounds, before any array of that size exists.
    combinations = math.prod(high - low + 1 for low, high in bounds)
    if combinations > MAX_INDEX_COMBINATIONS:
        raise _IndexError(
            iset.pos,
            f"index set has {combinations:,} combinations, above the limit of {MAX_INDEX_COMBINATIONS:,}",
            "IndexSetTooLarge",
        )

    def too_many(n: int) -> _IndexError:
        limit = f"the Substance's limit of {MAX_SUBSTANCE_STATEMENTS:,} statements in all"
        return _IndexError(iset.pos, f"index set makes {n:,} statements, beyond {limit}", "IndexSetTooLarge")

    if iset.condition is None and combinations > room:  # no filter: every combination is a statement
        raise too_many(combinations)
    axes = [np.arange(low, high + 1) for low, high in bounds]
    grids = np.meshgrid(*axes, indexing="ij")
    keep = np.ones(grids[0].size, dtype=bool)
    if iset.condition is not None:
        env = {n: g.ravel().astype(float) for n, g in zip(names, grids, strict=True)}
        keep = np.broadcast_to(_cond(iset.condition, env), keep.shape)
        del env
    kept = int(np.count_nonzero(keep))
    if kept > room:
        raise too_many(kept)
    cols = [g.ravel()[keep] for g in grids]
    return [dict(zip(names, map(int, row), strict=True)) for row in zip(*cols, strict=True)]


def _subst_name(name: A.Name, values: dict[str, int]) -> A.Name:
    head, sep, suffix = name.value.rpartition("_")
    if not sep:
        return name
    if suffix in values:
        return A.Name(f"{head}_{values[suffix]}", name.pos)
    if _js_number(suffix) is not None:
        return name
    raise _IndexError(
        name.pos, f"{name}: `{suffix}` is not an index of this statement", "InvalidSetIndexingError"
    )


def _subst_arg(arg: A.SubArg, values: dict[str, int]) -> A.SubArg:
    if isinstance(arg, A.Name):
        if arg.value in values:
            return A.NumberLit(float(values[arg.value]), arg.pos)
        return _subst_name(arg, values)
    return arg


def _subst_expr(e: A.SubExpr, values: dict[str, int]) -> A.SubExpr:
    if isinstance(e, A.Func):
        return replace(e, args=tuple(_subst_arg(a, values) for a in e.args))
    return _subst_arg(e, values)


def _subst_stmt(s: A.SubStmt, values: dict[str, int]) -> A.SubStmt:
    if isinstance(s, A.Decl):
        return replace(s, names=tuple(_subst_name(n, values) for n in s.names))
    if isinstance(s, A.DeclBind | A.Bind):
        return replace(s, var=_subst_name(s.var, values), expr=_subst_expr(s.expr, values))
    if isinstance(s, A.ApplyPredicate):
        return replace(s, args=tuple(_subst_arg(a, values) for a in s.args))
    if isinstance(s, A.LabelDecl):
        return replace(s, var=_subst_name(s.var, values))
    if isinstance(s, A.AutoLabel):
        names = None if s.names is None else tuple(_subst_name(n, values) for n in s.names)
        return replace(s, names=names)
    return replace(s, names=tuple(_subst_name(n, values) for n in s.names))


def expand(stmt_set: A.StmtSet, text: str = "", room: int = MAX_SUBSTANCE_STATEMENTS) -> list[A.SubStmt]:
    """The statement's copies; more than `room` of them is an error (the Substance's other
    statements take the rest of MAX_SUBSTANCE_STATEMENTS)."""
    try:
        out = []
        for values in _assignments(stmt_set.iset, room):
            check_deadline("expanding an index set")
            out.append(_subst_stmt(stmt_set.stmt, values))
        return out
    except _IndexError as e:
        raise DiagramError.at("substance", text, e.pos.line, e.pos.column, e.message, e.kind) from None
    except RecursionError:
        pos = stmt_set.iset.pos
        raise DiagramError.at(
            "substance", text, pos.line, pos.column, "index condition is nested too deeply", "ParseError"
        ) from None
