"""group_goals and _active (the vectorized per-goal work) against plain per-goal Python oracles.

The reference below groups goals with a dict keyed by (name, per-argument signature ids), in order
of first appearance, and builds each kind's tables row by row: the obvious implementation that the
numpy one must reproduce exactly (same kinds in the same order, same tables, ids, representative).
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

from energies.compile.goal_list import _active
from energies.compile.kinds import GoalKind, group_goals, props_of
from energies.diagram import GoalInstance, ShapeInstance
from energies.expr import Node, input_node, signature
from energies.grouping import row_codes


def reference_kinds(goals: list[GoalInstance], goal: str) -> list[dict[str, Any]]:
    groups: dict[tuple[Any, ...], list[int]] = {}
    arg_sigs = []
    for k, g in enumerate(goals):
        sigs = [signature(a, props_of) for a in g.args]
        arg_sigs.append(sigs)
        groups.setdefault((g.name, tuple(s[0] for s in sigs)), []).append(k)
    return [
        {
            "goal": goal,
            "name": name,
            "representative": goals[members[0]],
            "signature": hash((name, *ids)),
            "goals": members,
            "rows_in": [[slot for s in arg_sigs[k] for slot in s[1]] for k in members],
            "rows_c": [[c for s in arg_sigs[k] for c in s[2]] for k in members],
        }
        for (name, ids), members in groups.items()
    ]


def assert_same(found: list[GoalKind], expected: list[dict[str, Any]]) -> None:
    assert [(k.name, k.goals.tolist()) for k in found] == [(e["name"], e["goals"]) for e in expected]
    for kind, e in zip(found, expected):
        assert kind.goal == e["goal"]
        assert kind.representative is e["representative"]
        assert kind.signature == e["signature"]
        n = len(e["goals"])
        assert kind.goals.dtype == np.int64
        assert kind.rows_in.dtype == np.int32 and kind.rows_in.flags.c_contiguous
        assert kind.rows_c.dtype == np.float64 and kind.rows_c.flags.c_contiguous
        assert kind.rows_in.shape == (n, kind.n_inputs) and kind.rows_c.shape == (n, kind.n_consts)
        assert kind.rows_in.reshape(n, -1).tolist() == [list(r) for r in e["rows_in"]]
        assert kind.rows_c.reshape(n, -1).tolist() == [list(r) for r in e["rows_c"]]


def argument_pool(rng: np.random.Generator) -> list[Any]:
    """Shared objects of several structures: shapes, nodes, vectors, numbers, strings."""
    slot = itertools.count()
    x = lambda: input_node(next(slot))

    def circle(k: int) -> ShapeInstance:
        r = x() if k % 2 else float(rng.uniform(1, 5))  # two signatures of circles
        return ShapeInstance(f"c{k}", "Circle", {"center": [x(), x()], "r": r, "fillColor": [0, 0, 0, 1]})

    def rectangle(k: int) -> ShapeInstance:
        center = [x(), x()]
        return ShapeInstance(f"r{k}", "Rectangle", {"center": center, "width": 3.0, "height": x()})

    shared = x()
    pool: list[Any] = [circle(k) for k in range(6)] + [rectangle(k) for k in range(3)]
    pool += [ShapeInstance("b", "Blob", {"size": x(), "label": "b"})]  # props read in sorted order
    pool += [x() for _ in range(4)]
    pool += [Node("add", (shared, x())), Node("mul", (shared, shared)), Node("sin", (x(),))]
    pool += [[x(), x()], [x(), 2.5], 1.0, 0.5, 3, "left", (x(), shared)]
    return pool


def random_goals(seed: int, n: int) -> list[GoalInstance]:
    rng = np.random.default_rng(seed)
    pool = argument_pool(rng)
    arities = {"disjoint": (2, 3), "near": (2,), "lessThan": (2,), "many": (9,), "none": (0,)}
    goals = []
    for _ in range(n):
        name = str(rng.choice(list(arities)))
        arity = int(rng.choice(arities[name]))
        args = [pool[int(i)] for i in rng.integers(len(pool), size=arity)]
        if rng.random() < 0.2:  # a fresh number: a distinct object, maybe of an equal value
            args.append(float(rng.choice([1.0, 2.0, rng.uniform(-1, 1)])))
        goals.append(GoalInstance("constraint", name, args))
    return goals


@pytest.mark.parametrize("seed", range(6))
def test_random_goal_lists_group_like_the_reference(seed: int) -> None:
    goals = random_goals(seed, 300)
    kinds = group_goals(goals, "constraint")
    assert 10 < len(kinds) < len(goals)  # a mix: many kinds, most with several rows
    assert_same(kinds, reference_kinds(goals, "constraint"))


def test_all_pairs_of_shared_shapes() -> None:
    """The benchmark's pattern: one kind of many rows over a few shared shapes and one constant."""
    shapes = [
        ShapeInstance(
            f"c{k}",
            "Circle",
            {"center": [input_node(3 * k), input_node(3 * k + 1)], "r": input_node(3 * k + 2)},
        )
        for k in range(30)
    ]
    pad = 1.0
    goals = [GoalInstance("objective", "disjoint", [a, b, pad]) for a, b in itertools.combinations(shapes, 2)]
    goals += [GoalInstance("objective", "onCanvas", [s, 800.0, 700.0]) for s in shapes]
    kinds = group_goals(goals, "objective")
    assert_same(kinds, reference_kinds(goals, "objective"))
    disjoint = kinds[0]
    assert (disjoint.name, disjoint.n_rows, disjoint.n_inputs, disjoint.n_consts) == ("disjoint", 435, 6, 1)
    pairs = np.array(list(itertools.combinations(range(30), 2)))  # hand-derived: circle k has x[3k..3k+2]
    assert np.array_equal(
        disjoint.rows_in, np.hstack([3 * pairs[:, :1] + [0, 1, 2], 3 * pairs[:, 1:] + [0, 1, 2]])
    )
    assert np.array_equal(disjoint.rows_c, np.ones((435, 1)))


def test_edge_cases() -> None:
    assert group_goals([], "constraint") == []
    lone = [GoalInstance("constraint", "none", [])]
    assert_same(group_goals(lone, "constraint"), reference_kinds(lone, "constraint"))


def test_row_codes_are_equal_exactly_for_equal_rows() -> None:
    rng = np.random.default_rng(0)
    small = rng.integers(0, 3, size=(200, 4))
    big = rng.integers(0, 2, size=(200, 3)) * 2**40 + rng.integers(0, 2, size=(200, 3))
    assert np.prod([float(c) for c in big.max(axis=0) + 1]) > 2**63  # the fallback path
    for rows in (small, big, np.zeros((5, 0), np.int64)):
        codes = row_codes(rows)
        same_code = codes[:, None] == codes[None, :]
        same_row = (rows[:, None, :] == rows[None, :, :]).all(axis=2)
        assert np.array_equal(same_code, same_row)


def test_active_matches_each_goals_own_decision() -> None:
    rng = np.random.default_rng(1)
    annotations = [((), True), (("a",), False), (("a", "b"), True), (("b",), False)]
    goals = []
    for i in rng.integers(len(annotations), size=200):
        stages, exclude = annotations[int(i)]
        goals.append(GoalInstance("constraint", "near", [], stages, exclude))
    for stage in ("a", "b", "c", ""):
        expected = [g.active_in(stage) for g in goals]
        assert _active(goals, stage).tolist() == expected
        assert 0 < sum(expected) < len(goals)
    only_in_a = [GoalInstance("constraint", "near", [], ("a",), False) for _ in range(5)]  # one annotation
    assert _active(only_in_a, "a").tolist() == [True] * 5
    assert _active(only_in_a, "b").tolist() == [False] * 5
    assert _active([], "a").dtype == bool
