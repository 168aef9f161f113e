"""The pipeline: a Penrose trio in, an SVG and a report out.

    render_trio(domain, substance, style, variation) -> Rendering

Phases: build the diagram (parse, check, match, evaluate the Style; energies.diagram_build), compile
its energy (energies.compile), optimize (energies.optimize), compute the shapes' final properties,
render the SVG (service.render). User mistakes raise `energies.lang.errors.DiagramError` with their
place; a layout that fails raises `LayoutError` naming its cause.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from adcore import WasmCompileError
from adcore.runtime import WasmTimeout, WasmTrap
from energies.compile import compile_problem
from energies.diagram import Diagram, ShapeInstance, count_goals
from energies.expr import evaluate
from energies.limits import DeadlineExceeded, check_deadline, deadline, remaining
from energies.optimize import OptimizeError, OptimizeResult
from energies.portfolio import PortfolioResult, PortfolioSettings, optimize_portfolio, portfolio_starts
from energies.shapes import SHAPE_TYPES, Canvas, Color, PropType, Shape

from .render import render_svg

RECURSION_LIMIT = 20_000


class DiagramCache:
    """The diagrams built from the last requests (thread-safe LRU): a repeated trio and seed skips the
    Style evaluation. Diagrams are not changed by layouts, so they can be shared."""

    def __init__(self, size: int = 32):
        self.size = size
        self.items: OrderedDict[Any, Diagram] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: Any) -> Diagram | None:
        with self.lock:
            found = self.items.get(key)
            if found is not None:
                self.items.move_to_end(key)
            return found

    def put(self, key: Any, diagram: Diagram) -> None:
        with self.lock:
            self.items[key] = diagram
            while len(self.items) > self.size:
                self.items.popitem(last=False)


DIAGRAMS = DiagramCache()


class LayoutError(Exception):
    """The optimization could not run to its end; `status` is one of timeout, nan, optimize-error."""

    def __init__(self, status: str, message: str, goal: str | None = None):
        super().__init__(message)
        self.status = status
        self.goal = goal


@dataclass
class Rendering:
    svg: str
    diagram: Diagram
    optimization: OptimizeResult
    timings: dict[str, float] = field(default_factory=dict)  # milliseconds: compile, optimize, render, total
    cache_hit: bool = False
    portfolio: PortfolioResult | None = None

    @property
    def warnings(self) -> list[str]:
        return self.diagram.warnings

    def report(self, goals: bool = True) -> dict[str, Any]:
        """The layout's report; `goals=False` leaves out the list of every goal's value, which for
        hundreds of thousands of goals costs seconds (an SVG answer does not need it)."""
        opt = self.optimization
        report = {
            "status": opt.status,
            "energy": opt.energy,
            "iterations": opt.iterations,
            "evaluations": opt.evaluations,
            "epRounds": opt.ep_rounds,
            "maxConstrViolation": opt.max_constraint_violation,
            "nViolated": opt.n_violated,
            "warnings": list(self.warnings),
            "timings": dict(self.timings),
            "cacheHit": self.cache_hit,
        }
        if self.portfolio is not None:
            p = self.portfolio
            report["portfolio"] = {
                "chosen": p.chosen,
                "stopped": p.stopped,
                "cutShort": p.cut_short,
                "starts": [
                    {"energy": s.energy, "nViolated": s.n_violated, "evaluations": s.evaluations}
                    for s in p.starts
                ],
            }
        if goals:
            report["goals"] = [
                {"name": g.name, "kind": g.kind, "value": g.value, "satisfied": g.satisfied}
                for g in opt.goals
            ]
        return report


ImageResolver = Callable[[str], str | None]


def portfolio_settings(starts: int | None = None, seconds: float | None = None) -> PortfolioSettings:
    """The multi-start settings of a request: the defaults, with what the caller gave."""
    default = PortfolioSettings()
    return PortfolioSettings(starts or default.starts, default.max_evaluations, seconds)


def warm_up() -> None:
    """Load what every layout needs once per process, before the first request is timed: the
    function library, the parsers (lark builds its tables on first use), the label fonts and the
    Wasm engine. A worker calls it at start, as Penrose's runner loads @penrose/core first."""
    import energies.library  # noqa: F401
    from energies.diagram_build import build_diagram
    from energies.labels import measure_equation, measure_text

    sys.setrecursionlimit(max(sys.getrecursionlimit(), RECURSION_LIMIT))
    diagram = build_diagram(_WARM_DOMAIN, _WARM_SUBSTANCE, _WARM_STYLE, "warm-up")
    problem = compile_problem(diagram, cache=None)
    problem.goal_values(np.array(diagram.unknowns.x0))
    measure_text("warm", "sans-serif", "12px", label="warm-up")
    measure_equation("x^2", "12px", label="warm-up")


_WARM_DOMAIN = "type Thing"
_WARM_SUBSTANCE = 'Thing a, b\nLabel a $x_1$\nLabel b "b"'
# One of each common shape under the goals most Styles use, so that the library's functions are
# traced and differentiated once per process, like a library loaded at start.
_WARM_STYLE = """canvas {
  width = 400
  height = 300
}
forall Thing t {
  t.c = Circle { }
  t.r = Rectangle { }
  t.e = Ellipse { }
  t.l = Line { }
  t.p = Polygon { points: [(0, 0), (10, 0), (0, 10)] }
  t.t = Text { string: "t" }
  ensure disjoint(t.c, t.r)
  ensure disjoint(t.c, t.t)
  ensure disjoint(t.r, t.t)
  ensure contains(t.c, t.t)
  ensure contains(t.r, t.c)
  ensure touching(t.c, t.r)
  ensure overlapping(t.c, t.e)
  ensure disjoint(t.l, t.t)
  ensure disjoint(t.p, t.c)
  encourage near(t.c, t.r)
  encourage repelPt(1, t.c.center, t.r.center)
  ensure lessThan(t.c.r, 50)
}
forall Thing u
where u has math label {
  u.q = Equation { string: u.label }
  ensure disjoint(u.q, u.c)
  ensure contains(u.r, u.q)
}"""


def render_trio(
    domain: str,
    substance: str,
    style: str,
    variation: str = "",
    exclude_warnings: Sequence[str] = (),
    *,
    time_limit: float = 60.0,
    max_iterations: int = 100_000,
    resolve_image: ImageResolver | None = None,
    on_progress: Callable[[Any], None] | None = None,
    portfolio: PortfolioSettings | None = None,
    safe_svg: bool = True,
) -> Rendering:
    """Lay out and render a trio. `portfolio` sets the multi-start search (energies.portfolio); its
    default runs several starts within an evaluation budget, and `PortfolioSettings(starts=1)` is a
    single run from the variation's initial state, as Penrose's. `time_limit` bounds every phase,
    from parsing to rendering (a `LayoutError` "timeout" names the phase it cut); `safe_svg` (the
    default) keeps script and external URLs out of the SVG (service.render)."""

    # Style values can be expression chains thousands deep (iterated constructions, fractals); the
    # compiler walks them recursively, and Python 3.11 frames cost no C stack.
    sys.setrecursionlimit(max(sys.getrecursionlimit(), RECURSION_LIMIT))
    try:
        with deadline(time_limit):
            return _render_trio(
                domain,
                substance,
                style,
                variation,
                exclude_warnings,
                time_limit,
                max_iterations,
                resolve_image,
                on_progress,
                portfolio or PortfolioSettings(),
                safe_svg,
            )
    except DeadlineExceeded as e:
        message = f"the layout exceeded its time limit of {time_limit:g} s while {e.phase}"
        raise LayoutError("timeout", message) from None


def _render_trio(
    domain: str,
    substance: str,
    style: str,
    variation: str,
    exclude_warnings: Sequence[str],
    time_limit: float,
    max_iterations: int,
    resolve_image: ImageResolver | None,
    on_progress: Callable[[Any], None] | None,
    settings: PortfolioSettings,
    safe_svg: bool,
) -> Rendering:
    """`render_trio`'s phases, run under its deadline (energies.limits)."""
    from energies.diagram_build import build_diagram

    t0 = time.perf_counter()
    key = (domain, substance, style, variation, tuple(exclude_warnings))
    diagram = DIAGRAMS.get(key)
    if diagram is None:
        diagram = build_diagram(domain, substance, style, variation, tuple(exclude_warnings))
        DIAGRAMS.put(key, diagram)
    check_deadline("building the diagram")
    try:
        problem = compile_problem(diagram, time_limit=remaining())
    except WasmTrap as e:
        raise LayoutError("timeout" if isinstance(e, WasmTimeout) else "optimize-error", str(e)) from e
    except WasmCompileError as e:  # a size no limit of energies.limits foresaw
        raise LayoutError("optimize-error", f"the diagram's energy is too large to compile ({e})") from e
    check_deadline("compiling the energy")
    t1 = time.perf_counter()
    try:
        found = optimize_portfolio(
            problem,
            portfolio_starts(diagram.unknowns, variation, settings.starts),
            settings=settings,
            max_iters=max_iterations,
            time_limit=remaining(),
            on_progress=on_progress,
        )
        result = found.best
    except OptimizeError as e:
        raise LayoutError("nan", str(e), e.goal) from e
    except WasmTimeout as e:
        raise LayoutError("timeout", f"the layout exceeded its time limit of {time_limit:g} s") from e
    except WasmTrap as e:
        raise LayoutError("optimize-error", str(e)) from e
    if result.status == "TimeLimit":
        raise LayoutError("timeout", f"the layout exceeded its time limit of {time_limit:g} s")
    t2 = time.perf_counter()
    shapes = concrete_shapes(diagram.shapes, result.x)
    svg = render_svg(
        Canvas(*diagram.canvas), shapes, resolve_image=resolve_image, variation=variation, safe=safe_svg
    )
    t3 = time.perf_counter()
    timings = {
        "compile": (t1 - t0) * 1e3,
        "optimize": (t2 - t1) * 1e3,
        "render": (t3 - t2) * 1e3,
        "total": (t3 - t0) * 1e3,
    }
    return Rendering(svg, diagram, result, timings, problem.cache_hit, found)


# -- from evaluated properties to the renderer's values ------------------------------------------------


def concrete_shapes(shapes: Sequence[ShapeInstance], x: np.ndarray) -> list[Shape]:
    memo: dict[int, Any] = {}
    out = []
    for s in shapes:
        check_deadline("computing the shapes' final properties")
        out.append(concrete_shape(s, x, memo))
    return out


def concrete_shape(s: ShapeInstance, x: np.ndarray, memo: dict[int, Any]) -> Shape:
    spec = SHAPE_TYPES.get(s.kind)
    props: dict[str, Any] = {}
    passthrough: dict[str, str | float] = {}
    for name, value in s.props.items():
        v = evaluate(value, x, memo)
        prop = spec.props.get(name) if spec is not None else None
        if prop is None:
            if isinstance(v, (str, int, float)) and not isinstance(v, bool):
                passthrough[name] = v
            continue
        props[name] = convert(prop.type, v, x, memo)
    return Shape(s.kind, s.name, props, passthrough)


def convert(t: PropType, v: Any, x: np.ndarray, memo: dict[int, Any]) -> Any:
    if t is PropType.FLOAT:
        return float(v)
    if t is PropType.VECTOR:
        return tuple(float(c) for c in v)
    if t is PropType.PT_LIST:
        return tuple(tuple(float(c) for c in p) for p in v)
    if t is PropType.COLOR:
        return v if isinstance(v, Color) else Color(*(float(c) for c in v))
    if t is PropType.PATH_DATA:
        from energies.library.paths import to_render_path

        return tuple(to_render_path(v))
    if t is PropType.SHAPE_LIST:
        return tuple(concrete_shape(m, x, memo) if isinstance(m, ShapeInstance) else m for m in v)
    if t is PropType.CLIP_DATA:
        return concrete_shape(v, x, memo) if isinstance(v, ShapeInstance) else v
    if t is PropType.BOOL:
        return bool(v)
    return v if isinstance(v, str) else str(v)


# -- the registry harness's task ----------------------------------------------------------------------


def trio_image_resolver(base_dir: Any, *style_dirs: Any) -> ImageResolver:
    """Local images of a trio file, inlined as data URIs. An href resolves against the trio's folder,
    then the folders of its Style files (Penrose's registry keeps images beside shared Styles), and
    only to a file inside that folder: no `..` escape, no absolute paths."""
    import base64
    import mimetypes
    from pathlib import Path

    roots = list(dict.fromkeys(Path(d).resolve() for d in (base_dir, *style_dirs)))

    def resolve(href: str) -> str | None:
        if ":" in href.split("/")[0] or href.startswith(("/", "data:")):
            return None  # URLs, data URIs and absolute paths pass through untouched
        for root in roots:
            path = (root / href).resolve()
            if root in path.parents and path.is_file():
                mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
                return f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"
        return None

    return resolve


def run_trio(
    trio: Any, *, variation: str | None = None, timeout: float | None = None, starts: int | None = None
) -> dict[str, Any]:
    """One registry trio through the pipeline, as a row of the benchmark's fields (plus its SVG)."""
    from energies.lang.errors import DiagramError

    row: dict[str, Any] = {"key": trio.key, "name": trio.name}
    t0 = time.perf_counter()
    try:
        r = render_trio(
            trio.domain,
            trio.substance,
            trio.style,
            variation if variation is not None else trio.variation,
            trio.exclude_warnings,
            time_limit=timeout or 60.0,
            resolve_image=trio_image_resolver(trio.base_dir, *trio.style_dirs),
            portfolio=portfolio_settings(starts),
        )
    except DiagramError as e:
        return {
            **row,
            "status": "compile-error",
            "error": str(e),
            "totalMs": (time.perf_counter() - t0) * 1e3,
        }
    except LayoutError as e:
        return {**row, "status": e.status, "error": str(e), "totalMs": (time.perf_counter() - t0) * 1e3}
    opt = r.optimization
    portfolio = r.portfolio
    assert portfolio is not None
    return {
        **row,
        "status": "ok",
        "variation": r.diagram.variation,
        "objectiveEnergy": opt.objective_energy,
        "constraintEnergy": opt.energy - opt.objective_energy,
        "optStatus": opt.status,
        "starts": len(portfolio.starts),
        "chosenStart": portfolio.chosen,
        "startsStopped": portfolio.stopped,
        "cutShort": portfolio.cut_short,
        "compileMs": r.timings["compile"],
        "optimizeMs": r.timings["optimize"],
        "renderMs": r.timings["render"],
        "totalMs": r.timings["total"],
        "nGradEvals": portfolio.evaluations,  # the work of every start, not only the chosen one
        "EProunds": opt.ep_rounds,
        "energy": opt.energy,
        "maxConstrViolation": opt.max_constraint_violation,
        "nViolated": opt.n_violated,
        "nVarying": len(r.diagram.unknowns.x0),
        "nConstraints": count_goals(r.diagram.goals, "constraint"),
        "nObjectives": count_goals(r.diagram.goals, "objective"),
        "svgBytes": len(r.svg.encode("utf-8")),
        "svg": r.svg,
    }
