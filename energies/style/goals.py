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
from typing import TYPE_CHECKING, Any

from energies.diagram import GoalInstance, ShapeInstance, Where
from energies.lang import style_ast as S
from energies.style.env import ExprSource, ObjectRef
from energies.style.library_bridge import check_goal_args

if TYPE_CHECKING:
    from energies.style.evaluate import Evaluator

INLINE_COMPARISONS = {"<": "lessThan", "==": "equal", ">": "greaterThan"}


class NotAValue:
    """What a goal, layering or other non-value statement evaluates to."""

    def __init__(self, what: str) -> None:
        self.what = what


@dataclass
class Layer:
    """`below` is drawn before `above` (shape names)."""

    below: str
    above: str


def evaluate_statement(ev: Evaluator, ref: ObjectRef, source: ExprSource) -> Any:
    """The value of a field; goals and layering record themselves and are not values."""
    expr = source.expr
    if isinstance(expr, S.ObjFn | S.ConstrFn):
        ev.goals.append(make_goal(ev, expr, source))
        return NotAValue("a goal (ensure/encourage)")
    if isinstance(expr, S.Layering):
        record_layering(ev, expr, source)
        return NotAValue("a layering statement")
    return ev.eval_expr(expr, source.ctx)


def make_goal(ev: Evaluator, expr: S.ObjFn | S.ConstrFn, source: ExprSource) -> GoalInstance:
    body = expr.body
    if isinstance(body, S.FunctionCall):
        name, name_pos, arg_exprs = body.name.value, body.name.pos, body.args
    else:
        name, name_pos, arg_exprs = INLINE_COMPARISONS[body.op], body.pos, (body.left, body.right)
    kind = "constraint" if isinstance(expr, S.ConstrFn) else "objective"
    ev.library.check_goal(kind, name, len(arg_exprs), ev, name_pos)
    args = [ev.eval_value(a, source.ctx) for a in arg_exprs]
    positions = [getattr(a, "pos", expr.pos) for a in arg_exprs]
    check_goal_args(name, ev.library.goal_function(kind, name), args, positions, ev)
    ctx_where = source.ctx.where
    where = Where(expr.pos.line, expr.pos.column, ctx_where.block, ctx_where.match)
    return GoalInstance(kind, name, args, tuple(s.value for s in expr.stages), expr.exclude, where)


def record_layering(ev: Evaluator, expr: S.Layering, source: ExprSource) -> None:
    left = _shape(ev, expr.left, source)
    for item in expr.right:
        right = _shape(ev, item, source)
        if expr.op == "below":
            ev.layers.append(Layer(below=left.name, above=right.name))
        else:
            ev.layers.append(Layer(below=right.name, above=left.name))


def _shape(ev: Evaluator, e: S.Expr, source: ExprSource) -> ShapeInstance:
    value = ev.eval_value(e, source.ctx)
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
