"""Goal tables against the same goals written out one by one, and against hand-derived values."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from energies.compile.goal_list import split_goals
from energies.compile.problem import compile_problem
from energies.diagram import (
    Column,
    Diagram,
    Goal,
    GoalInstance,
    GoalTable,
    ShapeInstance,
    Unknowns,
    Where,
    count_goals,
)
from energies.expr import input_node

PAD = 1.5


def shapes(n_circles: int, n_rects: int, seed: int = 0) -> tuple[list[ShapeInstance], Unknowns]:
    rng = np.random.default_rng(seed)
    u = Unknowns()
    out = []
    for k in range(n_circles):
        cx, cy = (input_node(u.add(rng.uniform(-60, 60), f"c{k}.{a}")) for a in "xy")
        r = input_node(u.add(rng.uniform(4, 12), f"c{k}.r"))
        out.append(ShapeInstance(f"c{k}", "Circle", {"center": [cx, cy], "r": r, "strokeWidth": 0.0}))
    for k in range(n_rects):
        cx, cy = (input_node(u.add(rng.uniform(-60, 60), f"r{k}.{a}")) for a in "xy")
        w, h = (float(v) for v in rng.uniform(5, 15, 2))
        out.append(
            ShapeInstance(
                f"r{k}",
                "Rectangle",
                {"center": [cx, cy], "width": w, "height": h, "rotation": 0.0, "strokeWidth": 0.0},
            )
        )
    return out, u


def written_out(goals: list[Goal]) -> list[Goal]:
    return [
        row for g in goals for row in ([g.row(k) for k in range(len(g))] if isinstance(g, GoalTable) else [g])
    ]


def mixed_goals(s: list[ShapeInstance]) -> list[Goal]:
    """Single goals between tables; a table whose rows are of three kinds (circle and rectangle
    pairs); two tables of one kind; a table active in one stage only."""
    i, j = (np.array(v) for v in zip(*itertools.combinations(range(len(s)), 2)))
    radii = [x.props["r"] for x in s if x.kind == "Circle"]
    half = len(i) // 2
    return [
        GoalInstance("constraint", "onCanvas", [s[0], 300.0, 200.0]),
        GoalTable(
            "constraint", "disjoint", [Column(s, i[:half]), Column(s, j[:half]), Column.shared(PAD, half)]
        ),
        GoalInstance("objective", "minimal", [radii[0]]),
        GoalTable("objective", "minimal", [Column(radii, np.arange(len(radii)))]),
        GoalTable(
            "constraint",
            "disjoint",
            [Column(s, i[half:]), Column(s, j[half:]), Column.shared(PAD, len(i) - half)],
            stages=("second",),
            exclude=False,
        ),
        GoalInstance("constraint", "disjoint", [s[1], s[2], PAD]),
        GoalTable(
            "constraint",
            "onCanvas",
            [Column(s, np.arange(len(s))), Column.shared(300.0, len(s)), Column.shared(200.0, len(s))],
        ),
    ]


def test_a_table_compiles_to_the_energy_of_its_goals_written_out() -> None:
    s, u = shapes(6, 3)
    goals = mixed_goals(s)
    tabled = compile_problem(Diagram((300.0, 200.0), s, goals, u, stages=["first", "second"]), cache=None)
    single = compile_problem(
        Diagram((300.0, 200.0), s, written_out(goals), u, stages=["first", "second"]), cache=None
    )
    # tables of one structure merge: as many kinds as the written-out goals make
    # onCanvas of circles and of rectangles, disjoint of the three pairings, minimal
    assert len(tabled.kinds) == len(single.kinds) == 6
    x = np.array(u.x0) + np.random.default_rng(1).normal(0, 3, len(u.x0))
    for stage in (0, 1):
        e1, g1 = tabled.energy_and_grad(x, stage, 10.0)
        e2, g2 = single.energy_and_grad(x, stage, 10.0)
        assert e1 == pytest.approx(e2, rel=1e-13)
        np.testing.assert_allclose(g1, g2, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(tabled.stages[stage].constraints, single.stages[stage].constraints)
    v1, v2 = tabled.goal_values(x), single.goal_values(x)
    np.testing.assert_allclose(v1.objectives, v2.objectives, rtol=1e-13)
    np.testing.assert_allclose(v1.constraints, v2.constraints, rtol=1e-13)
    assert len(tabled.constraint_names) == count_goals(goals, "constraint") == len(v2.constraints)


def test_disjoint_rows_have_the_hand_derived_value() -> None:
    s, u = shapes(5, 0)
    i, j = (np.array(v) for v in zip(*itertools.combinations(range(5), 2)))
    table = GoalTable("constraint", "disjoint", [Column(s, i), Column(s, j), Column.shared(PAD, len(i))])
    p = compile_problem(Diagram((300.0, 200.0), s, [table], u), cache=None)
    x = np.array(u.x0)
    c = x.reshape(5, 3)
    # Penrose: disjoint(circle a, circle b, pad) = r_a + r_b + pad - |center_a - center_b|
    expected = c[i, 2] + c[j, 2] + PAD - np.hypot(*(c[i, :2] - c[j, :2]).T)
    np.testing.assert_allclose(p.goal_values(x).constraints, expected, rtol=1e-13)


def test_rows_of_different_shapes_split_into_kinds_in_row_order() -> None:
    s, _ = shapes(2, 2)
    i, j = np.array([0, 2, 0, 1, 2]), np.array([1, 3, 3, 0, 3])  # circle-circle, rect-rect, circle-rect...
    table = GoalTable("constraint", "disjoint", [Column(s, i), Column(s, j)])
    objectives, constraints = split_goals([table])
    kinds = constraints.kinds()
    assert len(objectives) == 0 and len(constraints) == 5
    rows = sorted(tuple(k.goals.tolist()) for k in kinds)
    assert rows == [(0, 3), (1, 4), (2,)]  # by the kinds of (s[i], s[j]): CC, RR, CR


def test_an_empty_table_adds_nothing() -> None:
    s, u = shapes(3, 0)
    empty = GoalTable("constraint", "disjoint", [Column(s, np.zeros(0, int)), Column(s, np.zeros(0, int))])
    one = GoalInstance("constraint", "disjoint", [s[0], s[1], PAD])
    with_empty = compile_problem(Diagram((300.0, 200.0), s, [empty, one], u), cache=None)
    alone = compile_problem(Diagram((300.0, 200.0), s, [one], u), cache=None)
    x = np.array(u.x0)
    assert with_empty.energy_and_grad(x, 0, 5.0)[0] == alone.energy_and_grad(x, 0, 5.0)[0]
    assert len(with_empty.constraint_names) == 1


def test_descriptions_name_the_row_and_its_arguments() -> None:
    s, _ = shapes(4, 0)
    table = GoalTable(
        "constraint",
        "disjoint",
        [Column(s, np.array([0, 2])), Column(s, np.array([3, 1])), Column.shared(PAD, 2)],
    )
    objectives, constraints = split_goals([GoalInstance("constraint", "equal", [1.0, 2.0]), table])
    assert constraints.names[2] == "ensure disjoint(c2, c1, 1.5) at style, row 1"
    assert constraints.names[-1] == constraints.names[2]
    assert constraints.names[0].startswith("ensure equal at")
    with pytest.raises(IndexError):
        constraints.names[3]


@pytest.mark.parametrize(
    "columns, message",
    [
        ([], "at least one argument column"),
        (
            [Column([1.0], np.zeros(3, int)), Column([1.0], np.zeros(2, int))],
            "column 1: want 3 integer indices",
        ),
        ([Column([1.0, 2.0], np.array([0, 2]))], "column 0: index outside 2 values"),
        ([Column([1.0, 2.0], np.array([0, -1]))], "column 0: index outside 2 values"),
        ([Column([1.0], np.zeros(2))], "column 0: want 2 integer indices"),
    ],
)
def test_malformed_tables_are_refused_by_name(columns, message) -> None:
    with pytest.raises(ValueError, match=f"goal table near.*{message}"):
        GoalTable("objective", "near", columns)


def test_bulk_descriptions_of_a_program_table() -> None:
    s, _ = shapes(3, 0)
    table = GoalTable("constraint", "disjoint", [Column(s, np.array([0, 1])), Column(s, np.array([2, 2]))])
    assert table.describe_all() == [table.describe(0), table.describe(1)]


def test_bulk_descriptions_with_and_without_a_match() -> None:
    s, _ = shapes(3, 0)
    columns = [Column(s, np.array([0, 1, 2])), Column(s, np.array([2, 2, 0]))]
    for where in (Where(7, 3, "forall Set x"), Where(0, 0, ""), Where(7, 3, "")):
        table = GoalTable(
            "objective", "near", columns, where=where, match_text=["", "x=A", "x=B"].__getitem__
        )
        assert table.describe_all() == [table.describe(k) for k in range(3)]
    assert table.describe(1) == "encourage near at style:7:3 (match x=A)"
