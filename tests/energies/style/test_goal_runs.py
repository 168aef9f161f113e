"""Runs of one goal statement become goal tables: the same goals, in the same order, as single goals."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from energies.compile.problem import compile_problem
from energies.diagram import Diagram, GoalInstance, GoalTable, count_goals, each_goal
from energies.lang.ast import Pos
from energies.style.goal_runs import MIN_TABLE_ROWS, GoalRuns
from energies.style.goals import GoalForm

from .conftest import build

ICONS = "forall Set x {\n  x.icon = Circle { r : 10 }\n}\n"
PAIRS = "forall Set x; Set y {\n  ensure disjoint(x.icon, y.icon, 2)\n}\n"


def sets(n: int) -> str:
    return "Set " + ", ".join(f"S{i}" for i in range(n)) + "\n"


def form(name: str) -> GoalForm:
    return GoalForm("constraint", name, (), (), [], (), True)


def match(k: int, collection: tuple[str, tuple[str, ...]] | None = None) -> SimpleNamespace:
    """What GoalRuns reads of a block context: its block's text, substitution and collection."""
    return SimpleNamespace(
        plan=SimpleNamespace(block_text="blk"), subst={"m": f"M{k}"}, collection=collection
    )


def test_a_long_run_becomes_one_table_and_a_short_one_stays_single_goals() -> None:
    runs = GoalRuns()
    a, b = form("a"), form("b")
    for k in range(MIN_TABLE_ROWS - 1):
        runs.add(a, [float(k)], match(k), Pos(3, 1))
    for k in range(MIN_TABLE_ROWS):
        runs.add(b, [float(k), "s"], match(k), Pos(4, 1))
    goals = runs.goals()
    assert [type(g) for g in goals] == [GoalInstance] * (MIN_TABLE_ROWS - 1) + [GoalTable]
    table = goals[-1]
    assert len(table) == MIN_TABLE_ROWS == count_goals(goals, "constraint") - (MIN_TABLE_ROWS - 1)
    assert [g.args for g in each_goal(goals)][-3:] == [[61.0, "s"], [62.0, "s"], [63.0, "s"]]
    assert str(table.where_at(5)) == "style:4:1 (block blk, match m=M5)"
    assert str(goals[7].where) == "style:3:1 (block blk, match m=M7)"
    assert len(table.columns[1].values) == 1  # "s" is one object in every row


def test_alternating_statements_keep_their_order() -> None:
    runs = GoalRuns()
    a, b = form("a"), form("b")
    for k in range(100):
        runs.add(a if k % 2 else b, [float(k)], match(k), Pos(1, 1))
    goals = runs.goals()
    assert all(isinstance(g, GoalInstance) for g in goals)
    assert [g.args[0] for g in goals] == [float(k) for k in range(100)]


def test_rows_of_collection_matches_keep_their_text() -> None:
    runs = GoalRuns()
    a = form("a")
    for k in range(MIN_TABLE_ROWS):
        runs.add(a, [float(k)], match(k, ("xs", ("P", "Q")) if k % 2 else None), Pos(2, 5))
    (table,) = runs.goals()
    assert table.where_at(3).match == "m=M3, xs=[...]" and table.where_at(4).match == "m=M4"


@pytest.mark.parametrize("n", [14, 30])
def test_an_all_pairs_block_compiles_as_its_goals_written_out(n: int) -> None:
    d = build(ICONS + PAIRS, substance=sets(n), library=None)
    assert any(isinstance(g, GoalTable) for g in d.goals)
    single = Diagram(d.canvas, d.shapes, list(each_goal(d.goals)), d.unknowns, d.stages)
    tabled_p, single_p = compile_problem(d, cache=None), compile_problem(single, cache=None)
    assert len(tabled_p.kinds) == len(single_p.kinds)
    x = np.array(d.unknowns.x0) + np.random.default_rng(0).normal(0, 20, len(d.unknowns.x0))
    e1, g1 = tabled_p.energy_and_grad(x, 0, 100.0)
    e2, g2 = single_p.energy_and_grad(x, 0, 100.0)
    assert e1 == e2  # same kinds, same rows in the same order: the same sums
    np.testing.assert_array_equal(g1, g2)
    assert list(tabled_p.constraint_names) == list(single_p.constraint_names)
    assert "match x=S" in tabled_p.constraint_names[0]


def test_bulk_descriptions_are_the_one_by_one_descriptions() -> None:
    d = build(ICONS + PAIRS, substance=sets(12), library=None)
    (table,) = [g for g in d.goals if isinstance(g, GoalTable)]
    assert table.describe_all() == [table.describe(k) for k in range(len(table))]
    assert table.describe(0).startswith("ensure disjoint at style:") and "match x=S" in table.describe(0)
    p = compile_problem(d, cache=None)
    names = p.constraint_names
    assert names[:] == [names[k] for k in range(len(names))]
