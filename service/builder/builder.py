"""`DiagramBuilder`: a diagram stated in Python, in the vocabulary of Penrose's Bloom.

    db = DiagramBuilder(800, 700, variation="seed")
    a = db.circle(r=db.input(name="r"))
    b = db.circle(r=30)
    db.ensure(constraints.disjoint(a, b, 10))
    db.encourage(objectives.near(a, b))
    rendering = db.build()                  # service.pipeline.Rendering, as render_trio returns

What a Style does, a program does with Python:
- `input(init=None, name=None)` is Style's `?`: an optimized unknown, started at `init` or drawn
  uniformly across the canvas width from the builder's generator (Penrose's and Bloom's sampler);
  `optimized=False` keeps it fixed; `stages=[...]` / `except_stages=[...]` are `? in [...]` /
  `? except [...]`;
- shapes (`circle`, `ellipse`, `rectangle`, `line`, `polygon`, `polyline`, `path`, `text`,
  `equation`, `image`, `group`) take Penrose's properties as keywords (service.builder.shapes);
- `ensure(term)` / `encourage(term)` state a constraint or objective (`constraints.*`,
  `objectives.*`); a bare lazy number is a constraint `lessThan(value, 0)` or an objective
  `minimal(value)`, and `ensure(x < y)` is Penrose's shorthand `lessThan(x, y)`; `weight=w`
  multiplies the goal's value by w, as Bloom's weight does;
- `layer(below, above)` orders drawing as Style's `layer`; `stages=[...]` on the builder is
  Style's `layout = [...]`;
- every shape whose `ensureOnCanvas` is true gets `onCanvas(shape, width, height)`, as in Penrose.

Python loops are the `forall`: every `ensure`/`encourage` call site (file and line) keeps one
`GoalTable` per function, stages and weight, its arguments stored as columns, so a loop stating
10,000 goals adds 10,000 rows to one table instead of making 10,000 goal objects. Tables keep the
order in which their first goal was stated; the implicit onCanvas goals come last, as in a Style.

`diagram()` makes the `energies.diagram.Diagram`; `build()` lays it out with the trio pipeline's
optimizer and multi-start portfolio (service.pipeline.render_diagram), so the same program and
variation give the same SVG, byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from energies.diagram import Column, Diagram, GoalTable, ShapeInstance, Unknowns, Where
from energies.expr import Node, evaluate, input_node
from energies.lang.errors import did_you_mean
from energies.library import CONSTRAINTS, OBJECTIVES
from energies.library.context import FunctionContext
from energies.limits import MAX_CANVAS_SIZE
from energies.shapes import Canvas, rng_for
from energies.shapes.specs import uniform_float
from energies.style import layering
from energies.style.goals import on_canvas_goals

from .errors import BuilderError, Site, user_facing, user_site
from .functions import Functions
from .goals import Term, evaluate_term
from .shapes import Shape, make_shape
from .values import describe, is_scalar, to_style

if TYPE_CHECKING:
    from service.pipeline import Rendering

GoalKind = Literal["constraint", "objective"]
COMPARISONS = {"lt": "lessThan", "le": "lessThan", "gt": "greaterThan", "ge": "greaterThan"}


@dataclass
class _Table:
    """The goals of one call site, function, stages and weight: one GoalTable."""

    kind: GoalKind
    name: str
    stages: tuple[str, ...]
    exclude: bool
    site: Site
    rows: list[Sequence[Any]] = field(default_factory=list)

    def goal_table(self) -> GoalTable:
        file, line = self.site
        columns = [column([r[c] for r in self.rows]) for c in range(len(self.rows[0]))]
        where = Where(0, 0, f"{file}:{line}")
        return GoalTable(self.kind, self.name, columns, self.stages, self.exclude, where)


def column(values: list[Any]) -> Column:
    """`values` as a table column: each distinct object once, in the order of first appearance.
    (Column.of orders them by id, an address that changes from run to run: the energy's terms
    would be summed in another order and the same program could give another layout.)"""
    slots: dict[int, int] = {}
    index = np.fromiter((slots.setdefault(id(v), len(slots)) for v in values), np.intp, len(values))
    return Column(list({id(v): v for v in values}.values()), index)


class DiagramBuilder:
    """A diagram built by a Python program (see the module docstring)."""

    def __init__(
        self,
        width: float = 800.0,
        height: float = 700.0,
        variation: str = "",
        *,
        lasso_strength: float = 0.0,
        stages: Sequence[str] | None = None,
    ):
        for what, v in (("width", width), ("height", height)):
            if not is_scalar(v) or isinstance(v, Node) or not 0 <= float(v) <= MAX_CANVAS_SIZE:
                raise BuilderError(
                    f"the canvas {what} must be a number from 0 to {MAX_CANVAS_SIZE:,.0f}, not {v!r}"
                )
        if not isinstance(variation, str):
            raise BuilderError(f"variation must be a string, not {describe(variation)}")
        stage_list = [""] if stages is None else list(stages)  # Style's one unnamed stage
        if stages is not None and not (stage_list and all(isinstance(s, str) and s for s in stage_list)):
            raise BuilderError("stages must be a non-empty list of stage names (strings)")
        self.canvas = Canvas(float(width), float(height))
        self.variation = variation
        self.lasso_strength = float(lasso_strength)
        self.stages = stage_list
        self.rng = rng_for(variation)
        self.functions = Functions(lambda: FunctionContext(self.rng, self.canvas), self._shape_of)
        self._unknowns = Unknowns()
        self._unnamed: set[int] = set()  # inputs still named by their line: a shape property renames them
        self._named: dict[str, int] = {}
        self._shapes: dict[str, ShapeInstance] = {}  # by name, in the order made
        self._handles: dict[int, Shape] = {}  # id(ShapeInstance) -> its Shape
        self._tables: dict[tuple[Any, ...], _Table] = {}
        self._layers: list[tuple[str, str]] = []
        self._drag: dict[str, tuple[bool | None, Callable[..., Any] | None]] = {}

    # -- inputs ---------------------------------------------------------------------------------------

    @user_facing
    def input(
        self,
        init: float | None = None,
        name: str | None = None,
        *,
        optimized: bool = True,
        stages: Sequence[str] | None = None,
        except_stages: Sequence[str] | None = None,
    ) -> Node:
        """An optimized variable (Style's `?`, Bloom's `input`): a lazy number."""
        if init is not None and (not is_scalar(init) or isinstance(init, Node)):
            raise BuilderError(f"input: init must be a number, not {describe(init)}")
        if name is not None and (not isinstance(name, str) or not name):
            raise BuilderError(f"input: name must be a non-empty string, not {describe(name)}")
        if name is not None and name in self._named:
            raise BuilderError(f"input: there is already an input named {name}")
        when = self._stage_spec(stages, except_stages)
        if not optimized:
            when = ((), False)  # varies in no stage
        sampled_from = None if init is not None else self.canvas.x_range
        value = float(init) if init is not None else uniform_float(self.rng, *self.canvas.x_range)
        file, line = user_site()
        slot = self._unknowns.add(value, name or f"input {file}:{line}", when[0], when[1], sampled_from)
        if name is None:
            self._unnamed.add(slot)
        else:
            self._named[name] = slot
        return input_node(slot)

    @user_facing
    def get_input(self, name: str) -> Node:
        """The input named `name` (Bloom's getInput)."""
        if name not in self._named:
            raise BuilderError(f"there is no input named {name}{did_you_mean(name, self._named)}")
        return input_node(self._named[name])

    def _name_inputs(self, value: Any, name: str) -> None:
        """Give a property's name to the unnamed bare inputs it holds (`<shape>.center[0]`)."""
        parts = (
            [(name, value)]
            if isinstance(value, Node)
            else [(f"{name}[{i}]", v) for i, v in enumerate(value)]
            if isinstance(value, list)
            else []
        )
        for label, v in parts:
            if isinstance(v, Node) and v.op == "input" and v.static in self._unnamed:
                self._unnamed.discard(v.static)
                self._unknowns.names[v.static] = label

    def _stage_spec(
        self, stages: Sequence[str] | None, except_stages: Sequence[str] | None
    ) -> tuple[tuple[str, ...], bool]:
        if stages is not None and except_stages is not None:
            raise BuilderError("give stages or except_stages, not both")
        chosen = stages if stages is not None else except_stages
        if chosen is None:
            return (), True
        if isinstance(chosen, str):
            chosen = [chosen]
        for s in chosen:
            if s not in self.stages:
                known = [s for s in self.stages if s]
                hint = did_you_mean(str(s), known) or (
                    f" (the stages are {', '.join(known)})"
                    if known
                    else " (the builder has no stages: DiagramBuilder(..., stages=[...]))"
                )
                raise BuilderError(f"unknown layout stage {s!r}{hint}")
        return tuple(chosen), stages is None

    # -- shapes ---------------------------------------------------------------------------------------

    def _add_shape(self, instance: ShapeInstance) -> Shape:
        self._shapes[instance.name] = instance
        handle = Shape(instance, self)
        self._handles[id(instance)] = handle
        return handle

    def _shape_of(self, instance: ShapeInstance) -> Any:
        return self._handles.get(id(instance), instance)

    @user_facing
    def circle(self, **props: Any) -> Shape:
        """A Circle: center, r, fillColor, strokeWidth, strokeColor, strokeStyle, strokeDasharray, ..."""
        return make_shape(self, "Circle", props)

    @user_facing
    def ellipse(self, **props: Any) -> Shape:
        """An Ellipse: center, rx, ry, fillColor, stroke properties, ..."""
        return make_shape(self, "Ellipse", props)

    @user_facing
    def rectangle(self, **props: Any) -> Shape:
        """A Rectangle: center, width, height, cornerRadius, rotation, fillColor, stroke properties, ..."""
        return make_shape(self, "Rectangle", props)

    @user_facing
    def line(self, **props: Any) -> Shape:
        """A Line: start, end, strokeWidth, strokeColor, arrowheads (startArrowhead, endArrowhead, ...)."""
        return make_shape(self, "Line", props)

    @user_facing
    def polygon(self, **props: Any) -> Shape:
        """A Polygon: points, scale, fillColor, stroke properties."""
        return make_shape(self, "Polygon", props)

    @user_facing
    def polyline(self, **props: Any) -> Shape:
        """A Polyline: points, scale, strokeWidth, strokeColor, ..."""
        return make_shape(self, "Polyline", props)

    @user_facing
    def path(self, **props: Any) -> Shape:
        """A Path: d (path data, e.g. functions.pathFromPoints), stroke and fill, arrowheads."""
        return make_shape(self, "Path", props)

    @user_facing
    def text(self, **props: Any) -> Shape:
        """A Text label: string, center, fontSize, fontFamily, ...; width/height/ascent/descent measured."""
        return make_shape(self, "Text", props)

    @user_facing
    def equation(self, **props: Any) -> Shape:
        """An Equation (TeX): string, center, fontSize; width/height/ascent/descent measured."""
        return make_shape(self, "Equation", props)

    @user_facing
    def image(self, **props: Any) -> Shape:
        """An Image: href, center, width, height, rotation, preserveAspectRatio."""
        return make_shape(self, "Image", props)

    @user_facing
    def group(self, **props: Any) -> Shape:
        """A Group: shapes (a list of shapes, drawn together), clipPath (a shape or None)."""
        return make_shape(self, "Group", props)

    # -- goals ----------------------------------------------------------------------------------------

    @user_facing
    def ensure(
        self,
        constraint: Any,
        weight: float | None = None,
        *,
        stages: Sequence[str] | None = None,
        except_stages: Sequence[str] | None = None,
    ) -> None:
        """State a constraint: a term of `constraints`, `x < y`, or a lazy number (<= 0 when satisfied)."""
        self._state("constraint", constraint, weight, stages, except_stages)

    @user_facing
    def encourage(
        self,
        objective: Any,
        weight: float | None = None,
        *,
        stages: Sequence[str] | None = None,
        except_stages: Sequence[str] | None = None,
    ) -> None:
        """State an objective: a term of `objectives`, or a lazy number to minimize."""
        self._state("objective", objective, weight, stages, except_stages)

    def _state(self, kind: GoalKind, goal: Any, weight: Any, stages: Any, except_stages: Any) -> None:
        site = user_site()
        verb = "ensure" if kind == "constraint" else "encourage"
        if isinstance(goal, Term):
            if goal.kind != kind:
                other = "encourage" if kind == "constraint" else "ensure"
                raise BuilderError(f"{verb}: {goal.name} is an {goal.kind}; state it with db.{other}")
            name, args = goal.name, goal.args
        elif kind == "constraint" and isinstance(goal, Node) and goal.op in COMPARISONS:
            name, args = COMPARISONS[goal.op], goal.args  # Penrose's `ensure x < y`
        elif is_scalar(goal):
            name, args = (
                ("lessThan", (to_style(goal), 0.0))
                if kind == "constraint"
                else ("minimal", (to_style(goal),))
            )
        else:
            hint = " (a comparison of plain numbers is already decided)" if isinstance(goal, bool) else ""
            raise BuilderError(
                f"{verb} takes a {kind} (service.builder.{kind}s) or a lazy number, "
                f"not {describe(goal)}{hint}"
            )
        if weight is not None:
            if not is_scalar(weight):
                raise BuilderError(f"{verb}: weight must be a number, not {describe(weight)}")
            if isinstance(weight, Node) or float(weight) not in (0.0, 1.0):  # Bloom ignores a zero weight
                library = CONSTRAINTS if kind == "constraint" else OBJECTIVES
                value = weight * evaluate_term(Term(kind, name, tuple(args), site), library)
                name, args = ("lessThan", (value, 0.0)) if kind == "constraint" else ("minimal", (value,))
        when = self._stage_spec(stages, except_stages)
        key = (site, kind, name, len(args), when, weight)
        table = self._tables.get(key)
        if table is None:
            table = self._tables[key] = _Table(kind, name, when[0], when[1], site)
        table.rows.append(args)

    # -- layering -------------------------------------------------------------------------------------

    @user_facing
    def layer(self, below: Shape, above: Shape) -> None:
        """Draw `above` over `below` (Style's `layer above below`)."""
        for what, s in (("below", below), ("above", above)):
            if not isinstance(s, Shape) or s._builder is not self:
                raise BuilderError(f"layer: {what} must be a shape of this builder, not {describe(s)}")
        self._layers.append((below._instance.name, above._instance.name))

    # -- the diagram ----------------------------------------------------------------------------------

    @property
    def shapes(self) -> list[Shape]:
        """Every shape made, in the order made."""
        return [self._handles[id(s)] for s in self._shapes.values()]

    def diagram(self) -> Diagram:
        """The diagram as the energy compiler and renderer take it (a new one at each call)."""
        shapes = list(self._shapes.values())
        parents = layering.group_parents(shapes)
        warnings = [f"{kind}: {message}" for kind, message in layering.group_warnings(shapes, parents)]
        order, cyclic = layering.layer_order([s.name for s in shapes], self._layers, parents)
        if cyclic:
            warnings.append(
                "LayerCycleWarning: the layer statements form a cycle; the drawing order is approximate"
            )
        top_level = layering.arrange(shapes, order, parents)
        goals: list[Any] = [t.goal_table() for t in self._tables.values()]
        ordered = [self._shapes[n] for n in order]
        goals += on_canvas_goals(ordered, (self.canvas.width, self.canvas.height))
        u = self._unknowns
        unknowns = Unknowns(list(u.x0), list(u.names), list(u.stages), list(u.ranges))
        return Diagram(
            canvas=(self.canvas.width, self.canvas.height),
            shapes=top_level,
            goals=goals,
            unknowns=unknowns,
            stages=list(self.stages),
            warnings=warnings,
            variation=self.variation,
        )

    @user_facing
    def build(self, **options: Any) -> Rendering:
        """Lay the diagram out and render it: a `service.pipeline.Rendering` (svg, to("png"), save,
        report, warnings; displays itself in Jupyter). `options` are render_trio's (time_limit,
        portfolio, ...)."""
        from service.pipeline import render_diagram

        return render_diagram(self.diagram(), **options)

    @user_facing
    def evaluate(self, value: Any, rendering: Rendering | np.ndarray) -> Any:
        """`value` (an input, a lazy value, a Vec, a shape's property, a shape: its properties as a
        dict) as numbers in a laid-out diagram: a Rendering, or a vector of the inputs' values."""
        x = np.asarray(getattr(getattr(rendering, "optimization", None), "x", rendering), dtype=np.float64)
        if x.shape != (len(self._unknowns.x0),):
            raise BuilderError(
                f"evaluate: want a Rendering of this builder or {len(self._unknowns.x0)} input values"
            )
        if isinstance(value, Shape):
            from service.render.concrete import concrete_shape

            return concrete_shape(value._instance, x, {}).props
        return _numbers(evaluate(to_style(value), x, {}))

    @user_facing
    def widget(self, **options: Any) -> Any:
        """The diagram as a notebook widget whose shapes the reader can drag (service.widget)."""
        from service.widget import DiagramWidget

        return DiagramWidget(self, **options)

    def drag_options(self) -> dict[str, tuple[bool | None, Callable[..., Any] | None]]:
        """Per shape name: (drag, dragConstraint) as given (see service.builder.shapes)."""
        return dict(self._drag)

    def __repr__(self) -> str:
        w, h = self.canvas.width, self.canvas.height
        rows = sum(len(t.rows) for t in self._tables.values())
        inputs = len(self._unknowns.x0)
        return f"<DiagramBuilder {w:g}x{h:g}, {len(self._shapes)} shapes, {inputs} inputs, {rows} goals>"


def _numbers(v: Any) -> Any:
    if isinstance(v, list | tuple):
        return [_numbers(x) for x in v]
    return float(v) if is_scalar(v) else v
