"""The builder: what a program states is the diagram that is laid out and drawn.

Oracles: the SVG's own geometry (circle centers and radii), hand-derived goal values, Penrose's
seeded generator drawn directly (energies.shapes.seedrandom), the source lines of this file.
"""

from __future__ import annotations

import inspect
import math
import re
import traceback

import numpy as np
import pytest

from energies.compile import compile_problem
from energies.diagram import GoalTable
from energies.shapes.seedrandom import SeedRandom
from service import BuilderError, DiagramBuilder, constraints, objectives
from service.builder import Vec
from service.builder import functions as fn


def svg_circles(svg: str) -> dict[str, tuple[float, float, float]]:
    """name -> (cx, cy, r) of every <circle> of an SVG (its <title> names it)."""
    found = re.findall(r'<circle cx="([^"]+)" cy="([^"]+)"[^>]* r="([^"]+)"[^>]*><title>([^<]+)</title>', svg)
    return {name: (float(cx), float(cy), float(r)) for cx, cy, r, name in found}


def goal_values(db: DiagramBuilder, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    problem = compile_problem(db.diagram())
    return problem.raw_goal_values(np.asarray(x, dtype=np.float64))


def line_of(marker: str) -> int:
    """The line of this file holding `marker` (a comment at the end of the line)."""
    lines = inspect.getsource(inspect.getmodule(line_of)).splitlines()
    return next(i + 1 for i, text in enumerate(lines) if text.rstrip().endswith(f"# {marker}"))


def test_two_circles_are_drawn_10_px_apart() -> None:
    db = DiagramBuilder(800, 700, variation="seed")
    a = db.circle(r=db.input(init=50))
    b = db.circle(r=30)
    db.ensure(constraints.greater_than(a.r, 20))  # a free radius would shrink to nothing
    db.ensure(constraints.disjoint(a, b, 10))
    db.encourage(objectives.near(a, b))
    r = db.build()
    circles = svg_circles(r.svg)
    (ax, ay, ar), (bx, by, br) = circles[a.name], circles[b.name]
    assert br == 30
    assert math.hypot(ax - bx, ay - by) - ar - br == pytest.approx(10, abs=0.01)
    assert r.optimization.n_violated == 0
    # Python reads the layout back: the same numbers the SVG drew (y flipped, origin mid-canvas)
    assert db.evaluate(a.r, r) == pytest.approx(ar, abs=1e-9)
    assert db.evaluate(a.center, r) == pytest.approx([ax - 400, 350 - ay], abs=1e-9)
    assert db.evaluate(fn.norm(a.center - b.center), r) == pytest.approx(math.hypot(ax - bx, ay - by))


def test_the_same_program_and_variation_give_the_same_bytes() -> None:
    def program(variation: str) -> DiagramBuilder:
        db = DiagramBuilder(400, 300, variation)
        shapes = [db.circle(r=20) for _ in range(4)]
        for i, s in enumerate(shapes):
            for t in shapes[i + 1 :]:
                db.ensure(constraints.disjoint(s, t, 5))
        return db

    first, again, other = program("x").build(), program("x").build(), program("y").build()
    assert first.svg == again.svg
    assert first.to("png") == again.to("png")
    assert other.svg != first.svg


def test_defaults_are_drawn_from_penroses_generator_in_its_order() -> None:
    """A Circle samples fillColor (r, g, b) then center (x, y) then r, whatever it is given."""
    db = DiagramBuilder(800, 700, variation="Abc")
    c = db.circle(r=12)  # r given: its draw still happens, so the next shape's numbers do not move
    d = db.circle()
    draws = SeedRandom("Abc")
    u = [draws.random() for _ in range(12)]
    assert c.fillColor == pytest.approx([0.1 + 0.8 * u[0], 0.1 + 0.8 * u[1], 0.1 + 0.8 * u[2], 0.5])
    x0 = db.diagram().unknowns.x0
    assert x0[:2] == pytest.approx([u[3] * 800 - 400, u[4] * 700 - 350])
    assert x0[2:4] == pytest.approx([u[9] * 800 - 400, u[10] * 700 - 350])
    assert x0[4] == pytest.approx(u[11] * (800 / 6 - 3) + 3)
    assert db.diagram().unknowns.names[:2] == [f"{c.name}.center[0]", f"{c.name}.center[1]"]
    assert d.r is not None and c.r == 12.0


def test_properties_by_penrose_name_or_snake_case() -> None:
    db = DiagramBuilder()
    s = db.rectangle(
        fill_color="#ff000080", strokeWidth=2, corner_radius=4, width=10, height=20, center=(1, 2)
    )
    assert s.fillColor == pytest.approx([1, 0, 0, 128 / 255])
    assert s.fill_color == s.fillColor
    assert (s.strokeWidth, s.cornerRadius, s.width) == (2.0, 4.0, 10.0)
    assert isinstance(s.center, Vec) and s.center + (1, 1) == [2.0, 3.0]
    t = db.text(string="hello", font_size="20px")
    assert t.width > 0 and t.height == pytest.approx(t.ascent + t.descent)
    g = db.group(shapes=[s, t])
    assert [m.name for m in g.shapes] == [s.name, t.name]
    assert [sh.name for sh in db.diagram().shapes] == [g.name]  # members are drawn inside the group


def test_goal_values_are_penroses_functions_of_the_stated_arguments() -> None:
    db = DiagramBuilder(800, 700)
    a = db.circle(center=(db.input(0.0), db.input(0.0)), r=10)
    b = db.circle(center=(30.0, 40.0), r=5)
    db.ensure(constraints.disjoint(a, b, 10))  # 10 + 5 + 10 - 50 = -25
    db.ensure(constraints.disjoint(a, b, 10), weight=3)  # Bloom's weight multiplies: -75
    db.ensure(a.r - 12)  # a lazy number: lessThan(value, 0) = -2
    db.ensure(a.center[0] < a.center[1] - 7)  # Penrose's `ensure x < y`: x - y = 7
    db.encourage(objectives.near(a, b))  # |distance|^2 - 10^2 = 2400
    db.encourage(fn.norm(a.center - b.center), weight=0.5)  # minimal(0.5 * 50)
    objective_values, constraint_values = goal_values(db, [0.0, 0.0])
    assert constraint_values[:4] == pytest.approx([-25, -75, -2, 7])
    assert objective_values == pytest.approx([2400, 25])


def test_a_loop_states_its_goals_as_one_table_per_call_site() -> None:
    db = DiagramBuilder(800, 700)
    dots = [db.circle(r=3) for _ in range(50)]
    for i, p in enumerate(dots):
        for q in dots[i + 1 :]:
            db.ensure(constraints.disjoint(p, q, 2))
            db.encourage(objectives.repel_pt(1.0, p.center, q.center))
    tables = [g for g in db.diagram().goals if isinstance(g, GoalTable)]
    assert [(t.name, len(t)) for t in tables] == [("disjoint", 1225), ("repelPt", 1225)]
    assert tables[0].args(1) == [dots[0]._instance, dots[2]._instance, 2.0]


def test_stages_as_in_a_style() -> None:
    db = DiagramBuilder(stages=["shapes", "labels"])
    x = db.input(stages=["shapes"])
    y = db.input(except_stages="shapes")
    fixed = db.input(3.0, optimized=False)
    db.ensure(x - y, stages="labels")
    diagram = db.diagram()
    assert diagram.stages == ["shapes", "labels"]
    assert diagram.unknowns.varying_mask("shapes").tolist() == [True, False, False]
    assert diagram.unknowns.varying_mask("labels").tolist() == [False, True, False]
    assert diagram.goals[0].active_in("labels") and not diagram.goals[0].active_in("shapes")
    assert fixed.op == "input"
    with pytest.raises(BuilderError, match=r"unknown layout stage 'label' \(did you mean labels\?\)"):
        db.input(stages=["label"])


def test_layer_orders_the_drawing() -> None:
    db = DiagramBuilder()
    a, b = db.circle(r=5), db.circle(r=6)
    db.layer(b, a)
    svg = db.build().svg
    assert svg.index(f"<title>{b.name}</title>") < svg.index(f"<title>{a.name}</title>")


# -- mistakes, reported at the user's line -----------------------------------------------------------


def raised(action: object) -> BuilderError:
    with pytest.raises(BuilderError) as info:
        action()  # type: ignore[operator]
    return info.value


def test_a_constraint_given_a_number_where_it_wants_a_shape() -> None:
    db = DiagramBuilder()
    a = db.circle()
    e = raised(lambda: constraints.disjoint(a, 5, 10))  # mistake-shape
    where = f"{__file__}:{line_of('mistake-shape')}"
    assert str(e) == f"{where}: constraint disjoint: argument s2 must be a shape, not a number"
    frames = traceback.extract_tb(e.__traceback__)
    assert not any(f.filename.endswith(("goals.py", "shapes.py", "values.py")) for f in frames), frames


def test_an_unknown_property_says_what_was_meant() -> None:
    db = DiagramBuilder()
    e = raised(lambda: db.circle(fill_colr="#fff"))  # mistake-property
    assert str(e).startswith(f"{__file__}:{line_of('mistake-property')}: ")
    assert "Circle has no property fill_colr (did you mean fillColor?)" in str(e)
    assert isinstance(e, AttributeError)
    far = raised(lambda: db.circle(radius=5))
    assert "Circle has no property radius; its properties are" in str(far) and ", r," in str(far)
    c = db.circle()
    assert "has no property centre (did you mean center?)" in str(raised(lambda: c.centre))
    assert "properties are given when it is made" in str(raised(lambda: setattr(c, "r", 3)))


def test_other_mistakes_name_the_place_and_the_fix() -> None:
    db = DiagramBuilder()
    a, b = db.circle(), db.circle()
    cases = {
        "constraints has no constraint disjiont (did you mean disjoint?)": lambda: constraints.disjiont,
        "near is an objective: objectives.near": lambda: constraints.near,
        "ensure: near is an objective; state it with db.encourage": lambda: db.ensure(objectives.near(a, b)),
        "constraint disjoint expects 2 to 3 argument(s) (s1, s2, padding), got 1": lambda: (
            constraints.disjoint(a)
        ),
        "Circle x: r must be a number, not a string": lambda: db.circle(name="x", r="5"),
        "Circle: there is already a shape named 0_Circle": lambda: db.circle(name=a.name),
        "ensure takes a constraint": lambda: db.ensure(True),
        "vector + a number": lambda: a.center + 1,
        "function randomm": lambda: fn.randomm,
        "draws random numbers from the diagram's variation: call db.functions.random": lambda: fn.random(
            0, 1
        ),
        "Equation e: ": lambda: db.equation(name="e", string="\\frac{"),
    }
    for message, action in cases.items():
        e = raised(action)
        assert message in str(e), (message, str(e))
        assert e.site[0] == __file__, e.site
    assert 0 <= db.functions.random(0, 1) < 1
