"""Goals and statements: `ensure`, `encourage`, `layer`, and the implicit `onCanvas` constraints.

`ensure f(a, b)` is a constraint instance and `encourage f(a, b)` an objective instance of the
library function `f`, its arguments evaluated now (shape arguments are the diagram's own
`ShapeInstance`s). Inline comparisons are Penrose's shorthands: `a < b` is `lessThan(a, b)`,
`a == b` is `equal(a, b)`, `a > b` is `greaterThan(a, b)`. A stage annotation `in [s]` makes the
goal active in those stages only, `except [s]` in all others (no annotation: every stage).
As in Penrose, every shape whose `ensureOnCanvas` is true gets `onCanvas(shape, width, height)`,
active in every stage.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from energies.diagram import GoalInstance, ShapeInstance, Where
from energies.lang import style_ast as S
from energies.lang.ast import Pos
from energies.style.context import BlockContext, ExprSource
from energies.style.library_bridge import ArgCheck, check_goal_args, goal_arg_checks

if TYPE_CHECKING:
    from energies.style.evaluate import Evaluator

INLINE_COMPARISONS = {"<": "lessThan", "==": "equal", ">": "greaterThan"}


class NotAValue:
    """What a goal, layering or other non-value statement evaluates to."""

    def __init__(self, what: str) -> None:
        self.what = what


A_GOAL = NotAValue("a goal (ensure/encourage)")
A_LAYERING = NotAValue("a layering statement")


@dataclass
class Layer:
    """`below` is drawn before `above` (shape names)."""

    below: str
    above: str


def evaluate_statement(ev: Evaluator, source: ExprSource, ctx: BlockContext) -> Any:
    """The value of a field (its paths resolved in `ctx`); goals and layering record themselves
    and are not values."""
    expr = source.expr
    if isinstance(expr, S.ObjFn | S.ConstrFn):
        record_goal(ev, expr, ctx)
        return A_GOAL
    if isinstance(expr, S.Layering):
        record_layering(ev, expr, ctx)
        return A_LAYERING
    return ev.eval_expr(expr, ctx)


@dataclass(frozen=True)
class GoalForm:
    """What a goal statement is in every match: its function (checked), arguments and stages."""

    kind: Literal["constraint", "objective"]
    name: str
    checks: tuple[ArgCheck, ...]  # what the library function's parameters accept
    args: tuple[S.Expr, ...]
    positions: list[Pos]  # of the arguments, for messages
    stages: tuple[str, ...]
    exclude: bool


def goal_form(ev: Evaluator, expr: S.ObjFn | S.ConstrFn) -> GoalForm:
    """The form of a goal statement, checked against the library once (an error: every time)."""
    found = ev.goal_forms.get(id(expr))
    if found is not None:
        return found
    body = expr.body
    if isinstance(body, S.FunctionCall):
        name, name_pos, arg_exprs = body.name.value, body.name.pos, body.args
    else:
        name, name_pos, arg_exprs = INLINE_COMPARISONS[body.op], body.pos, (body.left, body.right)
    kind: Literal["constraint", "objective"] = "constraint" if isinstance(expr, S.ConstrFn) else "objective"
    ev.library.check_goal(kind, name, len(arg_exprs), ev, name_pos)
    positions = [getattr(a, "pos", expr.pos) for a in arg_exprs]
    stages = tuple(s.value for s in expr.stages)
    checks = goal_arg_checks(ev.library.goal_function(kind, name))
    form = GoalForm(kind, name, checks, arg_exprs, positions, stages, expr.exclude)
    ev.goal_forms[id(expr)] = form
    return form


def record_goal(ev: Evaluator, expr: S.ObjFn | S.ConstrFn, ctx: BlockContext) -> None:
    form = goal_form(ev, expr)
    args = [ev.eval_value(a, ctx) for a in form.args]
    check_goal_args(form.name, form.checks, args, form.positions, ev)
    ev.goals.add(form, args, ctx, expr.pos)


def record_layering(ev: Evaluator, expr: S.Layering, ctx: BlockContext) -> None:
    left = _shape(ev, expr.left, ctx)
    for item in expr.right:
        right = _shape(ev, item, ctx)
        if expr.op == "below":
            ev.layers.append(Layer(below=left.name, above=right.name))
        else:
            ev.layers.append(Layer(below=right.name, above=left.name))


def _shape(ev: Evaluator, e: S.Expr, ctx: BlockContext) -> ShapeInstance:
    value = ev.eval_value(e, ctx)
    if not isinstance(value, ShapeInstance):
        raise ev.rep.error(getattr(e, "pos", None), "layer only orders shapes", "LayerOnNonShapesError")
    return value


def on_canvas_goals(shapes: list[ShapeInstance], canvas: tuple[float, float]) -> list[GoalInstance]:
    return [
        GoalInstance(
            "constraint", "onCanvas", [s, canvas[0], canvas[1]], where=Where(block=s.name), implicit=True
        )
        for s in shapes
        if s.props.get("ensureOnCanvas") is True
    ]
