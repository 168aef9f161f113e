"""The pipeline: a Penrose trio in, an SVG and a report out.

    render_trio(domain, substance, style, variation) -> Rendering   (style: a text, or a list joined)
    render_file("x.trio.json", variation=None) -> Rendering            (local images inlined)
    render_diagram(diagram) -> Rendering          (a Diagram a program built: service.builder)
    rendering.svg; rendering.to("png" | "pdf"); rendering.save("x.png"); rendering.report()

A Rendering displays itself in Jupyter (SVG and PNG) and prints as one line.

Phases: build the diagram (parse, check, match, evaluate the Style; energies.diagram_build), compile
its energy (energies.compile), optimize (energies.optimize.portfolio), compute the shapes' final properties
(service.render.concrete), render the SVG (service.render.svg). User mistakes raise
`energies.lang.errors.DiagramError` with their place; a layout that fails raises `LayoutError`
naming its cause.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from adcore import WasmCompileError, WasmTimeout, WasmTrap
from energies.caches import PROCESS_CACHES, Caches
from energies.compile import compile_problem
from energies.diagnose import Diagnosis, diagnose
from energies.diagram import Diagram
from energies.infeasible import infeasible_warnings
from energies.limits import DeadlineExceeded, check_deadline, deadline, remaining
from energies.optimize.optimizer import OptimizeError, OptimizeResult
from energies.optimize.parallel_starts import ParallelStarts
from energies.optimize.portfolio import (
    PortfolioResult,
    PortfolioSettings,
    most_starts,
    optimize_portfolio,
    portfolio_starts,
)
from energies.shapes import Canvas
from service.render.concrete import concrete_shapes
from service.render.svg import ImageResolver, render_svg

RECURSION_LIMIT = 20_000


LayoutStatus = Literal["timeout", "nan", "optimize-error"]


class LayoutError(Exception):
    """The optimization could not run to its end; `status` says why."""

    def __init__(self, status: LayoutStatus, message: str, goal: str | None = None):
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
    layout_warnings: list[str] = field(default_factory=list)  # this layout's (the diagram is shared)
    diagnosis: Diagnosis | None = None  # why the layout is as it is (energies.diagnose)
    # where each program came from (service.trios.Files): warnings then name files, not `style:9:3`
    files: tuple[tuple[str, str, int], ...] = ()

    @property
    def warnings(self) -> list[str]:
        from .trios import relocate

        return [relocate(self.files, str(w)) for w in self.diagram.warnings + self.layout_warnings]

    def __repr__(self) -> str:
        opt = self.optimization
        canvas = "x".join(f"{v:g}" for v in self.diagram.canvas)
        shapes, warnings, ms = len(self.diagram.shapes), len(self.warnings), self.timings.get("total", 0)
        return (
            f"<Rendering {canvas} canvas, {shapes} shapes, {opt.status}, energy {opt.energy:.4g}, "
            f"{opt.n_violated} violated, {warnings} warnings, {ms:.0f} ms>"
        )

    def to(self, fmt: str, scale: float = 1.0) -> bytes:
        """The picture as svg, png or pdf bytes (service.render.formats); `scale` sizes a PNG."""
        from service.render.formats import convert

        return convert(self.svg, fmt, scale)

    def save(self, path: str | Path, fmt: str | None = None, scale: float = 1.0) -> Path:
        """Write the picture; the format is `fmt`, else the file's suffix (.svg, .png, .pdf)."""
        from service.render.formats import format_of

        path = Path(path)
        path.write_bytes(self.to(fmt or format_of(path), scale))
        return path

    def _repr_svg_(self) -> str:
        return self.svg

    def _repr_png_(self) -> bytes:
        return self.to("png")

    def report(self, goals: bool = True) -> dict[str, Any]:
        """The layout's report; `goals=False` leaves out the list of every goal's value, which for
        hundreds of thousands of goals costs seconds (an SVG answer does not need it)."""
        opt = self.optimization
        report: dict[str, Any] = {
            "status": opt.status,
            "energy": opt.energy,
            "iterations": opt.iterations,
            "evaluations": opt.evaluations,
            "epRounds": opt.ep_rounds,
            "maxConstrViolation": opt.max_constraint_violation,
            "nViolated": opt.n_violated,
            "nInfeasible": len(opt.infeasible),
            "warnings": list(self.warnings),
            "timingsMs": dict(self.timings),
            # what was reused: the compiled energy (from an earlier diagram of the same structure) and
            # the whole answer (a server's result cache sets it; never here)
            "cached": {"energy": self.cache_hit, "result": False},
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
        if self.diagnosis is not None:
            report["diagnosis"] = self.diagnosis.to_json()
        if goals:
            report["goals"] = [
                {"name": g.name, "kind": g.kind, "value": g.value, "satisfied": g.satisfied}
                for g in opt.goals
            ]
        return report


def portfolio_settings(
    starts: int | None = None, seconds: float | None = None, processes: int | None = None
) -> PortfolioSettings:
    """The multi-start settings of a request: the defaults, with what the caller gave (a start count
    given is the most starts the layout may take, also while its constraints are unmet)."""
    default = PortfolioSettings()
    return replace(
        default,
        starts=starts or default.starts,
        unmet_starts=starts or default.unmet_starts,
        seconds=seconds,
        processes=processes or 1,
    )


def render_trio(
    domain: str,
    substance: str,
    style: str | Sequence[str],
    variation: str = "",
    exclude_warnings: Sequence[str] = (),
    *,
    time_limit: float = 60.0,
    max_iterations: int = 100_000,
    resolve_image: ImageResolver | None = None,
    on_progress: Callable[[Any], None] | None = None,
    portfolio: PortfolioSettings | None = None,
    observe: Callable[[Any], Any] | None = None,
    safe_svg: bool = True,
    caches: Caches | None = None,
) -> Rendering:
    """Lay out and render a trio. `portfolio` sets the multi-start search (energies.optimize.portfolio); its
    default runs several starts within an evaluation budget, and `PortfolioSettings(starts=1)` is a
    single run from the variation's initial state, as Penrose's. `observe(problem)` may wrap the
    compiled problem the optimizer runs (the live editor's frames and pauses, service.workers.live_session).
    Several Style programs are joined with a newline, as Penrose does; image hrefs stay as written
    unless `resolve_image` maps them. `time_limit` bounds every phase, from parsing to rendering (a
    `LayoutError` "timeout" names the phase it cut); `safe_svg` (the default) keeps script and
    external URLs out of the SVG (service.render.svg). `caches` holds the built diagrams and compiled
    energies a layout reuses (energies.caches; default: the process's)."""
    if not isinstance(style, str):
        style = "\n".join(style)

    # Style values can be expression chains thousands deep (iterated constructions, fractals); the
    # compiler walks them recursively, and Python 3.11 frames cost no C stack.
    sys.setrecursionlimit(max(sys.getrecursionlimit(), RECURSION_LIMIT))
    try:
        with deadline(time_limit):
            options = {
                "max_iterations": max_iterations,
                "resolve_image": resolve_image,
                "on_progress": on_progress,
                "settings": portfolio or PortfolioSettings(),
                "observe": observe,
                "safe_svg": safe_svg,
                "caches": caches or PROCESS_CACHES,
            }
            return _render_trio(domain, substance, style, variation, exclude_warnings, time_limit, options)
    except DeadlineExceeded as e:
        message = f"{_out_of_time(time_limit)} while {e.phase}"
        raise LayoutError("timeout", message) from None


def _render_trio(
    domain: str,
    substance: str,
    style: str,
    variation: str,
    exclude_warnings: Sequence[str],
    time_limit: float,
    options: dict[str, Any],
) -> Rendering:
    """`render_trio`'s phases, run under its deadline (energies.limits)."""
    from energies.diagram_build import build_diagram

    t0 = time.perf_counter()
    caches = options["caches"]
    key = (domain, substance, style, variation, tuple(exclude_warnings))
    built = caches.diagrams.get(key)
    if built is not None:
        diagram = built[0]
    else:
        blocks = sys.getallocatedblocks()
        diagram = build_diagram(domain, substance, style, variation, tuple(exclude_warnings))
        caches.diagrams.put(key, (diagram, max(0, sys.getallocatedblocks() - blocks)))
    check_deadline("building the diagram")
    return _lay_out(diagram, t0, time_limit, **options)


def render_diagram(
    diagram: Diagram,
    *,
    time_limit: float = 60.0,
    max_iterations: int = 100_000,
    resolve_image: ImageResolver | None = None,
    on_progress: Callable[[Any], None] | None = None,
    portfolio: PortfolioSettings | None = None,
    observe: Callable[[Any], Any] | None = None,
    safe_svg: bool = True,
    caches: Caches | None = None,
) -> Rendering:
    """Lay out and render a `Diagram` built by a program (service.builder) rather than from a trio:
    the same phases after the Style's evaluation, with render_trio's options and its `LayoutError`s.
    The diagram's `variation` seeds the portfolio's starts as a trio's does."""
    sys.setrecursionlimit(max(sys.getrecursionlimit(), RECURSION_LIMIT))
    try:
        with deadline(time_limit):
            return _lay_out(
                diagram,
                time.perf_counter(),
                time_limit,
                max_iterations=max_iterations,
                resolve_image=resolve_image,
                on_progress=on_progress,
                settings=portfolio or PortfolioSettings(),
                observe=observe,
                safe_svg=safe_svg,
                caches=caches or PROCESS_CACHES,
            )
    except DeadlineExceeded as e:
        message = f"{_out_of_time(time_limit)} while {e.phase}"
        raise LayoutError("timeout", message) from None


def _lay_out(
    diagram: Diagram,
    t0: float,
    time_limit: float,
    *,
    max_iterations: int,
    resolve_image: ImageResolver | None,
    on_progress: Callable[[Any], None] | None,
    settings: PortfolioSettings,
    observe: Callable[[Any], Any] | None,
    safe_svg: bool,
    caches: Caches,
) -> Rendering:
    """Compile, optimize and render a diagram (the phases after its build, which began at `t0`)."""
    variation = diagram.variation
    try:
        problem = _compile(diagram, caches, remaining())
    except WasmTrap as e:
        raise LayoutError("timeout" if isinstance(e, WasmTimeout) else "optimize-error", str(e)) from e
    except WasmCompileError as e:  # a size no limit of energies.limits foresaw
        raise LayoutError("optimize-error", f"the diagram's energy is too large to compile ({e})") from e
    check_deadline("compiling the energy")
    compiled = problem
    if observe is not None:
        problem = observe(problem)
    t1 = time.perf_counter()
    starts = portfolio_starts(diagram.unknowns, variation, most_starts(settings), diagram)
    # A live session's observer sees every evaluation: its starts stay in this process.
    processes = settings.processes if observe is None else 1
    try:
        with ParallelStarts(problem, starts, processes) as pool:
            found = optimize_portfolio(
                problem,
                starts,
                settings=settings,
                max_iters=max_iterations,
                time_limit=remaining(),
                on_progress=on_progress,
                run_many=pool.runner if pool.parallel else None,
            )
        result = found.best
    except OptimizeError as e:
        raise LayoutError("nan", str(e), e.goal) from e
    except WasmTimeout as e:
        raise LayoutError("timeout", f"{_out_of_time(time_limit)} while optimizing") from e
    except WasmTrap as e:
        raise LayoutError("optimize-error", str(e)) from e
    if result.status == "TimeLimit":
        raise LayoutError("timeout", f"{_out_of_time(time_limit)} {_how_far(result)}")
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
    infeasible = infeasible_warnings(compiled, result)
    why = diagnose(compiled, result)
    return Rendering(svg, diagram, result, timings, problem.cache_hit, found, infeasible, why)


def _out_of_time(time_limit: float) -> str:
    return f"the layout exceeded its time limit of {time_limit:g} s"


def _how_far(result: OptimizeResult) -> str:
    """Where a layout the time limit cut had got to: its stage, and the evaluations so far."""
    ran = [r for r in result.stages if r.status != "NotRun"]
    stage = ""
    if ran and ran[-1].name:
        stage = f" in layout stage `{ran[-1].name}` ({len(ran)} of {len(result.stages)})"
    return f"while optimizing{stage}, after {result.evaluations:,} evaluations of its energy"


def _compile(diagram: Diagram, caches: Caches, time_limit: float) -> Any:
    """The diagram's problem, compiled with `caches`' energies and disk directory."""
    return compile_problem(diagram, time_limit=time_limit, cache=caches.energies, disk_cache=caches.disk_dir)


def render_file(path: str | Path, *, variation: str | None = None, **options: Any) -> Rendering:
    """Render a Penrose `.trio.json` (program paths relative to it, as in Penrose's registry); its
    local images are inlined from the trio's folder and its Style files' folders. `options` are
    render_trio's (time_limit, portfolio, ...). Raises service.trios.TrioError for an unreadable trio."""
    from .trios import load_trio, trio_image_resolver

    trio = load_trio(path)
    rendering = render_trio(
        trio.domain,
        trio.substance,
        trio.style,
        trio.variation if variation is None else variation,
        trio.exclude_warnings,
        resolve_image=trio_image_resolver(trio.base_dir, *trio.style_dirs),
        **options,
    )
    rendering.files = trio.files  # warnings name the trio's files, as the CLI's do
    return rendering
