"""Process start-up work: `warm_up()` loads what every layout needs before the first one is timed.

A layout worker (service.workers.pool) and the registry harness call it once per process, as Penrose's
runner loads @penrose/core first: a small trio with one of each common shape under the goals most
Styles use, so the library's functions are traced and differentiated once.
"""

from __future__ import annotations

import sys

import numpy as np

from energies.compile import compile_problem
from service.pipeline import RECURSION_LIMIT


def warm_up() -> None:
    """Load what every layout needs once per process, before the first request is timed: the
    function library, the parsers and their lexers (lark builds both on first use), the label fonts,
    the Wasm engine and the L-BFGS-B of the optimizer's feasibility finish. A worker calls it at
    start, as Penrose's runner loads @penrose/core first."""
    import energies.library  # noqa: F401
    from energies.diagram_build import build_diagram
    from energies.lang.parse import prepare_parsers
    from energies.optimize.optimizer import load_finish_solver
    from energies.text.labels import load_fonts, measure_equation, measure_text

    sys.setrecursionlimit(max(sys.getrecursionlimit(), RECURSION_LIMIT))
    diagram = build_diagram(_WARM_DOMAIN, _WARM_SUBSTANCE, _WARM_STYLE, "warm-up")
    problem = compile_problem(diagram, cache=None)
    problem.goal_values(np.array(diagram.unknowns.x0))
    measure_text("warm", "sans-serif", "12px", label="warm-up")
    load_fonts()
    measure_equation("x^2", "12px", label="warm-up")
    load_finish_solver()
    prepare_parsers()


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
