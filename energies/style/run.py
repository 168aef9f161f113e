"""Style evaluation from matched blocks to a `Diagram`.

    evaluate_style(front: FrontEnd, style_text: str, variation: str, exclude_warnings=(),
                   library: Library | None = None) -> Diagram

Phases, as in Penrose's compileStyle:
1. layout stages (`layout = [...]`, at most one; default: one unnamed stage "");
2. the translation: blocks in program order over their matches (`env.build_assignment`);
3. the canvas: `canvas { width = <number>  height = <number> }` is required;
4. shape defaults sampled from `rng_for(variation)`, shapes in dependency-graph order
   (`graph.shape_order`);
5. every path evaluated once, dependencies first (`graph.evaluate_all`, `evaluate.Evaluator`; in
   Penrose's topological order when the Style draws random numbers, so each draw is Penrose's),
   collecting goals, layering statements and unknowns; errors of independent paths are reported
   together;
6. drawing order (`layering`), and the implicit `onCanvas` goals.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from adcore import cyclic_gc_paused
from energies.diagram import Diagram, ShapeInstance
from energies.lang import style_ast as S
from energies.lang.errors import raise_all, visible_warnings
from energies.lang.frontend import FrontEnd
from energies.lang.substance_env import Binding, PredicateFact
from energies.limits import MAX_CANVAS_SIZE, check_deadline
from energies.shapes import Canvas, rng_for
from energies.style import layering
from energies.style.context import ExprSource
from energies.style.env import Assignment, build_assignment
from energies.style.errors import Reporter
from energies.style.evaluate import Evaluator
from energies.style.goals import on_canvas_goals
from energies.style.graph import draws_numbers, evaluate_all, shape_order
from energies.style.library_bridge import Library
from energies.style.penrose_order import PenroseMap
from energies.style.shapes import sample_defaults


def layout_stages(prog: S.StyleProg, rep: Reporter) -> list[str]:
    decls = [i for i in prog.items if isinstance(i, S.LayoutStages)]
    if len(decls) > 1:
        raise rep.error(
            decls[1].pos, "there can be only one `layout = [...]` statement", "MultipleLayoutError"
        )
    if not decls:
        return [""]
    return [s.value for s in decls[0].stages]  # a stage may repeat: the pipeline runs it again


def canvas_size(assignment: Assignment, rep: Reporter) -> tuple[float, float]:
    fields = assignment.namespaces.get("canvas") or PenroseMap()
    size = []
    for attr in ("width", "height"):
        source = fields.get(attr)
        if source is None:
            raise rep.error(
                None,
                f"the Style must set canvas.{attr}, e.g. `canvas {{ width = 800 height = 700 }}`",
                "CanvasNonexistentDimsError",
            )
        if not isinstance(source, ExprSource) or not isinstance(source.expr, S.Fix):
            raise rep.error(source.pos, f"canvas.{attr} must be a number", "CanvasNonexistentDimsError")
        value = source.expr.value
        # Zero is Penrose's: the registry's tutorial starter draws its empty 0x0 canvas.
        if not 0 <= value <= MAX_CANVAS_SIZE:  # also refuses NaN
            raise rep.error(
                source.pos,
                f"canvas.{attr} must be from 0 to {MAX_CANVAS_SIZE:,.0f} pixels, got {value:g}",
                "CanvasSizeError",
            )
        size.append(value)
    return size[0], size[1]


@contextmanager
def deep_recursion(limit: int = 20000) -> Iterator[None]:
    """Long chains of paths (each depending on the previous) are evaluated recursively."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, limit))
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def evaluate_style(
    front: FrontEnd,
    style_text: str,
    variation: str,
    exclude_warnings: Iterable[str] = (),
    library: Library | None = None,
) -> Diagram:
    with cyclic_gc_paused():
        return _evaluate_style(front, style_text, variation, exclude_warnings, library)


def _evaluate_style(
    front: FrontEnd,
    style_text: str,
    variation: str,
    exclude_warnings: Iterable[str],
    library: Library | None,
) -> Diagram:
    exclude_warnings = tuple(exclude_warnings)
    rep = Reporter(style_text)
    stages = layout_stages(front.style, rep)
    assignment = build_assignment(front, rep)
    width, height = canvas_size(assignment, rep)
    canvas = Canvas(width, height)
    shape_sources = shape_order(assignment, rep)
    rng = rng_for(variation)
    defaults = {}
    for key, source in shape_sources:
        check_deadline("sampling the shapes' initial values")
        defaults[key] = sample_defaults(source.kind, canvas, rng)
    library = library or Library()
    ev = Evaluator(assignment, rep, canvas, rng, library, defaults)
    penrose_order = draws_numbers(front.style, library.functions)
    with deep_recursion():  # dependencies first, so recursion stays shallow
        errors = evaluate_all(ev, assignment, rep, penrose_order)
    raise_all(errors)

    all_shapes = [ev.shapes[key] for key, _ in shape_sources]
    parents = layering.group_parents(all_shapes)
    for kind, message in layering.group_warnings(all_shapes, parents):
        rep.warn(None, kind, message)
    names = [s.name for s in all_shapes]
    known = set(names)
    layers = [(la.below, la.above) for la in ev.layers if la.below in known and la.above in known]
    drawn_order, cyclic = layering.layer_order(names, layers, parents)
    if cyclic:
        rep.warn(
            None, "LayerCycleWarning", "the layer statements form a cycle; the drawing order is approximate"
        )
    by_name = {s.name: s for s in all_shapes}
    ordered = [by_name[n] for n in drawn_order]
    top_level = layering.arrange(all_shapes, drawn_order, parents)

    goals = [*ev.goals.goals(), *on_canvas_goals(ordered, (width, height))]
    warnings = [str(w) for w in visible_warnings(rep.warnings, exclude_warnings)]
    return Diagram(
        canvas=(width, height),
        shapes=top_level,
        goals=goals,
        unknowns=ev.unknowns,
        stages=stages,
        warnings=warnings,
        variation=variation,
        exclude_warnings=tuple(exclude_warnings),
        relations=substance_relations(front),
    )


def substance_relations(front: FrontEnd) -> list[tuple[str, str]]:
    """The pairs of objects the Substance's statements relate (`Diagram.relations`), each once."""
    pairs: dict[tuple[str, str], None] = {}
    for stmt in front.substance.statements:
        if isinstance(stmt, PredicateFact):
            names = [a for a in stmt.args if isinstance(a, str)]
        elif isinstance(stmt, Binding):
            names = [stmt.var, *(a for a in stmt.args if isinstance(a, str))]
        else:
            continue
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                if a != b:
                    pairs.setdefault((a, b) if a < b else (b, a))
    return list(pairs)


def shape_at(diagram: Diagram, name: str) -> ShapeInstance:
    """The shape named `name` (a Style path such as "`A`.icon"), searching inside groups too."""
    todo = list(diagram.shapes)
    while todo:
        s = todo.pop()
        if s.name == name:
            return s
        todo.extend(m for m in s.props.get("shapes", []) if isinstance(m, ShapeInstance))
    raise KeyError(name)


__all__ = ["evaluate_style", "shape_at"]
