"""Evaluation of Style expressions, demand-driven over the translation.

A path's value is computed the first time something needs it (its dependencies first, as Penrose's
topological order would), then memoized, so every path is evaluated once and a shape is one
`ShapeInstance` however many goals mention it. A path met again while it is being computed is a
`CyclicAssignmentError`.

Expressions: numbers, strings, booleans, colors (`#rrggbb` -> rgba list), `?` (a new unknown:
`?[init]` starts at init, a bare `?` uniformly across the canvas width as Penrose samples it,
`? in [stages]` / `? except [stages]` vary in those stages only), paths with indices, operators
(see `arith`), lists / vectors / tuples, computed-function calls (`energies.library.FUNCTIONS`),
`listof f from c`, `numberof c`, `nameof x`, and Substance literals (`x` bound to a number or string).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from typing import Any

from energies.diagram import ShapeInstance, Unknowns
from energies.expr import Node, input_node
from energies.lang import style_ast as S
from energies.lang.ast import Pos
from energies.lang.errors import DiagramError
from energies.lang.substance_env import Literal
from energies.shapes import Canvas, Color
from energies.shapes.seedrandom import SeedRandom
from energies.shapes.specs import uniform_float
from energies.style import arith, goals, shapes
from energies.style.context import (
    BlockContext,
    ExprSource,
    MatchCounter,
    ShapeSource,
    resolve_path,
    source_context,
)
from energies.style.env import Assignment
from energies.style.errors import BulkFailed, Reporter, SkipFailed
from energies.style.goal_runs import GoalRuns
from energies.style.goals import Layer, NotAValue
from energies.style.library_bridge import Library
from energies.style.paths import CollectionRef, NamespaceRef, ObjectRef, SubstanceRef

_UNSET = object()


class Evaluator:
    def __init__(
        self,
        assignment: Assignment,
        rep: Reporter,
        canvas: Canvas,
        rng: SeedRandom,
        library: Library,
        defaults: dict[str, dict[str, Any]],
    ) -> None:
        self.assignment = assignment
        self.rep = rep
        self.canvas = canvas
        self.rng = rng
        self.library = library
        self.defaults = defaults  # shape key -> sampled default properties (Penrose samples all first)
        self.unknowns = Unknowns()
        self.memo: dict[str, Any] = {}
        self.failed: set[str] = set()
        self.active: list[str] = []  # keys being computed, for cycle messages and unknown names
        self.shapes: dict[str, ShapeInstance] = {}
        self.goals = GoalRuns()  # in the order stated
        self.layers: list[Layer] = []
        self.label_cache: dict[str, Any] = {}
        self.goal_forms: dict[int, goals.GoalForm] = {}  # id(goal statement) -> its checked form
        # objects standing for "the object a selector variable is bound to" while a block is
        # evaluated in bulk (`bulk`): scope name -> what its paths read
        self.hole_scopes: dict[str, Any] = {}
        # path key -> whether its memoized value is a matrix: `m[i][j]` on a large matrix would
        # otherwise scan all of it on every access
        self.matrices: dict[str, bool] = {}

    # ---- paths ------------------------------------------------------------------------------------

    def value_at(self, ref: ObjectRef, pos: Pos | None) -> Any:
        """The value of a path, computing it (and what it needs) on first use."""
        key = ref.key
        if key in self.memo:
            return self.memo[key]
        if key in self.failed:
            raise SkipFailed(key)
        if key in self.active:
            cycle = " -> ".join([*self.active[self.active.index(key) :], key])
            raise self.rep.error(pos, f"these paths depend on each other: {cycle}", "CyclicAssignmentError")
        source = self.assignment.lookup(ref)
        self.active.append(key)
        try:
            value = self.compute(ref, source, pos)
        except (DiagramError, SkipFailed):
            self.failed.add(key)  # reported once; whatever depends on it is skipped
            raise
        finally:
            self.active.pop()
        self.memo[key] = value
        return value

    def compute(self, ref: ObjectRef, source: Any, pos: Pos | None) -> Any:
        if self.hole_scopes and ref.scope.name in self.hole_scopes:
            return self.hole_scopes[ref.scope.name].value(ref)
        if source is None:
            raise self.rep.error(pos, f"{ref.field_ref.key} is not defined", "MissingPathError")
        if ref.prop is None:
            if isinstance(source, ShapeSource):
                return shapes.build_shape(self, ref, source)
            return goals.evaluate_statement(self, source, source_context(source, ref.scope))
        if not isinstance(source, ShapeSource):
            raise self.rep.error(
                pos, f"{ref.field_ref.key} is not a shape, so {ref.key} is not defined", "MissingPathError"
            )
        prop_source = source.props.get(ref.prop)
        if prop_source is not None:
            return self.eval_expr(prop_source.expr, source_context(prop_source, ref.scope))
        return shapes.default_prop(self, ref, source, pos)

    def eval_field(self, ref: ObjectRef) -> None:
        """Evaluate a field for its effects (goals, unknowns, errors); errors are collected."""
        with contextlib.suppress(SkipFailed):
            self.value_at(ref, None)

    def eval_statement(self, key: str, source: ExprSource, ctx: BlockContext) -> None:
        """Evaluate a goal or layering statement no path can read (so nothing memoizes it) for its
        effects; like `eval_field` otherwise."""
        self.active.append(key)
        try:
            goals.evaluate_statement(self, source, ctx)
        except SkipFailed:
            pass
        finally:
            self.active.pop()

    # ---- expressions ------------------------------------------------------------------------------

    def eval_expr(self, e: S.Expr, ctx: BlockContext) -> Any:
        if isinstance(e, S.Fix):
            return e.value
        if isinstance(e, S.Path):
            return self.eval_path(e, ctx)
        if isinstance(e, S.BinOp):
            left = self.eval_value(e.left, ctx)
            right = self.eval_value(e.right, ctx)
            if e.op not in ("BPlus", "BMinus", "Multiply", "Divide", "Exp", "EWMultiply", "EWDivide"):
                raise self.rep.error(e.pos, f"unknown operator {e.op}", "BinOpTypeError")
            try:
                return arith.binop(e.op, left, right)
            except arith.StyleTypeError as err:
                raise self.rep.error(e.pos, str(err), "BinOpTypeError") from None
        if isinstance(e, S.StrLit):
            return e.value
        if isinstance(e, S.BoolLit):
            return e.value
        if isinstance(e, S.CompApp):
            args = [self.eval_value(a, ctx) for a in e.args]
            return self.library.call(e.name.value, args, self, e.name.pos or e.pos)
        if isinstance(e, S.Vary):
            return self.new_unknown(e)
        if isinstance(e, S.UOp):
            arg = self.eval_value(e.arg, ctx)
            try:
                return arith.negate(arg) if e.op == "UMinus" else arith.transpose(arg)
            except arith.StyleTypeError as err:
                raise self.rep.error(e.pos, str(err), "UOpTypeError") from None
        if isinstance(e, S.ListExpr | S.Vector):
            return self.collect([self.eval_value(i, ctx) for i in e.items], e.pos)
        if isinstance(e, S.TupleExpr):
            items = [self.eval_value(i, ctx) for i in e.items]
            for n, item in enumerate(items):
                if not arith.is_number(item):
                    raise self.rep.error(
                        e.pos,
                        f"tuple element {n} must be a number, not {arith.kind_of(item)}",
                        "BadElementError",
                    )
            return items
        if isinstance(e, S.ColorLit):
            c = Color.parse("#" + e.hex)
            return [c.r, c.g, c.b, c.a]
        if isinstance(e, S.CollectionAccess):
            return self.listof(e, ctx)
        if isinstance(e, S.UnaryStyVarExpr):
            return self.unary_sty_var(e, ctx)
        if isinstance(e, MatchCounter):
            return ctx.counter(e.name)
        what = type(e).__name__
        raise self.rep.error(getattr(e, "pos", None), f"a {what} is not a value here", "NotValueError")

    def eval_value(self, e: S.Expr, ctx: BlockContext) -> Any:
        """An expression whose value must be a value (not a goal statement)."""
        if e.__class__ is S.Fix:
            return e.value
        if e.__class__ is S.Path and not e.indices:
            # a path met before in this match, whose value is known: what eval_expr would return
            ref = ctx.resolved.get(id(e))
            if ref.__class__ is ObjectRef:
                v = self.memo.get(ref.key, _UNSET)
                if v is not _UNSET and not isinstance(v, NotAValue):
                    return v
        v = self.eval_expr(e, ctx)
        if isinstance(v, NotAValue):
            raise self.rep.error(
                getattr(e, "pos", None), f"this path holds {v.what}, not a value", "NotValueError"
            )
        return v

    def collect(self, items: list[Any], pos: Pos) -> list[Any]:
        """A list or vector literal: all numbers, all vectors, all shapes or all path data (Penrose)."""
        if not items:
            return []
        first = items[0]
        if arith.is_number(first):
            ok: Callable[[Any], bool] = arith.is_number
        elif isinstance(first, ShapeInstance):
            ok = lambda v: isinstance(v, ShapeInstance)  # noqa: E731
        elif isinstance(first, list) and first and all(hasattr(c, "cmd") for c in first):
            ok = lambda v: isinstance(v, list) and all(hasattr(c, "cmd") for c in v)  # noqa: E731
        elif arith.is_vector(first):
            ok = arith.is_vector
        else:
            raise self.rep.error(pos, f"a list cannot hold {arith.kind_of(first)}", "BadElementError")
        for n, item in enumerate(items):
            if not ok(item):
                raise self.rep.error(
                    pos,
                    f"list element {n} is {arith.kind_of(item)}, unlike the first element "
                    f"({arith.kind_of(first)})",
                    "BadElementError",
                )
        return items

    def new_unknown(self, e: S.Vary) -> Node:
        sampled_from = None if e.init is not None else self.canvas.x_range
        init = e.init if e.init is not None else uniform_float(self.rng, *self.canvas.x_range)
        owner = self.active[-1] if self.active else "?"
        where = f"{owner} (style:{e.pos.line}:{e.pos.column})"
        slot = self.unknowns.add(init, where, tuple(s.value for s in e.stages), e.exclude, sampled_from)
        return input_node(slot)

    def eval_path(self, p: S.Path, ctx: BlockContext) -> Any:
        ref = resolve_path(ctx, p, self.rep)
        if isinstance(ref, NamespaceRef):
            raise self.rep.error(p.pos, f"{ref.name} is a namespace, not a value", "PathToNamespaceError")
        if isinstance(ref, CollectionRef):
            if p.indices:
                raise self.rep.error(
                    p.pos, f"collection {ref.style_name} cannot be indexed", "UnindexableItemError"
                )
            values = [v.value for v in ref.values if isinstance(v, Literal)]
            if len(values) == len(ref.values) and all(isinstance(v, float) for v in values):
                return values
            raise self.rep.error(
                p.pos, f"collection {ref.style_name} is not a list of numbers", "PathToCollectionError"
            )
        if isinstance(ref, SubstanceRef):
            if isinstance(ref.value, Literal) and not p.indices:
                return ref.value.value
            raise self.rep.error(
                p.pos,
                f"{ref.style_name} is a Substance object, not a value; use a field "
                f"such as {ref.style_name}.label",
                "PathToSubstanceError",
            )
        value = self.value_at(ref, p.pos)
        if not p.indices:
            return value
        indices = [self.static_index(i, ctx) for i in p.indices]
        matrix = None
        if len(indices) == 2:
            matrix = self.matrices.get(ref.key)
            if matrix is None:
                matrix = self.matrices[ref.key] = arith.is_matrix(value)
        try:
            return arith.index_value(value, indices, matrix)
        except arith.StyleTypeError as err:
            raise self.rep.error(p.pos, f"{ref.key}: {err}", "UnindexableItemError") from None
        except IndexError as err:
            raise self.rep.error(p.pos, f"{ref.key}: {err}", "OutOfBoundsError") from None

    def static_index(self, e: S.Expr, ctx: BlockContext) -> int:
        v = self.eval_value(e, ctx)
        if isinstance(v, Node):
            raise self.rep.error(
                getattr(e, "pos", None), "an index cannot depend on an unknown (?)", "BadIndexError"
            )
        if not arith.is_number(v) or not float(v).is_integer():
            raise self.rep.error(
                getattr(e, "pos", None), f"an index must be a whole number, not {v!r}", "BadIndexError"
            )
        return int(v)

    def listof(self, e: S.CollectionAccess, ctx: BlockContext) -> list[Any]:
        coll = resolve_path(ctx, e.path, self.rep)
        if not isinstance(coll, CollectionRef):
            raise self.rep.error(
                e.path.pos, "listof needs a collection (a collector's `into` name)", "NotCollectionError"
            )
        values = []
        for v in coll.values:
            ref = ObjectRef(ctx.plan.substance_scope(v), e.field.value)
            if self.assignment.lookup(ref) is not None:  # Penrose skips members without the field
                values.append(self.value_at(ref, e.pos))
        return self.collect(values, e.pos)

    def unary_sty_var(self, e: S.UnaryStyVarExpr, ctx: BlockContext) -> Any:
        ref = resolve_path(ctx, e.path, self.rep)
        if e.op == "numberof":
            if not isinstance(ref, CollectionRef):
                raise self.rep.error(e.pos, "numberof needs a collection", "NotCollectionError")
            return float(len(ref.values))
        if not isinstance(ref, SubstanceRef):
            raise self.rep.error(e.pos, "nameof needs a selector variable", "NotStyleVariableError")
        v = ref.value
        if v in self.hole_scopes:
            raise BulkFailed("nameof a variable")
        if isinstance(v, Literal):
            return js_number_string(v.value) if isinstance(v.value, float) else v.value
        return v


def js_number_string(x: float) -> str:
    """A number as JavaScript's toString prints it (integers without a decimal point)."""
    if math.isfinite(x) and x.is_integer() and abs(x) < 1e21:
        return str(int(x))
    return repr(x)
