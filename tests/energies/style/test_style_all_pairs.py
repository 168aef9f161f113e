"""All-pairs blocks (`forall Set x; Set y`): goals, shapes, unknowns, errors and warnings per match.

The evaluator binds one compiled block to each match and walks Penrose's graph without storing
anything per match (`energies.style.context`, `graph`, `local_scopes`). The oracle here is built
by hand: the matches of `forall Set x; Set y` are the pairs i < j in nested-loop order (Penrose's
getSubsts drops (j, i) and (i, i)), and the local scopes `[block, match]` iterate in the order of
`penrose_order.PenroseMap` (the reference implementation of Immutable's map order), which fixes
the order of goals, shapes (first met) and their unknowns.
"""

from __future__ import annotations

import random

import pytest

from energies.diagram import each_goal
from energies.lang.ast import Pos
from energies.lang.errors import DiagramError, DiagramErrors
from energies.style.context import BlockPlan
from energies.style.errors import MAX_ERRORS
from energies.style.local_scopes import LocalScopes
from energies.style.penrose_order import PenroseMap, int_list_hash, string_hash

from .conftest import CANVAS, build

ICONS = "forall Set x {\n  x.icon = Circle { r : 10 }\n}\n"  # block 1 (the canvas is block 0)
PAIR_BLOCK = 2


def sets(n: int) -> str:
    return "Set " + ", ".join(f"S{i}" for i in range(n)) + "\n"


def pairs(n: int) -> list[tuple[int, int]]:
    return [(i, j) for i in range(n) for j in range(i + 1, n)]


def local_scope_order(counts: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """(block, match) of every local scope, created block by block, in Penrose's map order."""
    table: PenroseMap[tuple[int, int], None] = PenroseMap(lambda key: int_list_hash(list(key)))
    for block, count in counts:
        for m in range(count):
            table[(block, m)] = None
    return table.keys()


def pairs_in_penrose_order(n: int) -> list[tuple[int, int]]:
    matches = pairs(n)
    order = local_scope_order([(1, n), (PAIR_BLOCK, len(matches))])
    return [matches[m] for block, m in order if block == PAIR_BLOCK]


def first_met(pair_list: list[tuple[int, int]]) -> list[int]:
    return list(dict.fromkeys(k for pair in pair_list for k in pair))


@pytest.mark.parametrize("n", [3, 12, 40])
def test_all_pairs_goals_come_once_per_pair_in_penrose_order(n):
    d = build(ICONS + "forall Set x; Set y {\n  ensure disjoint(x.icon, y.icon, 2)\n}\n", substance=sets(n))
    goals = [g for g in each_goal(d.goals) if not g.implicit]
    expected = pairs_in_penrose_order(n)
    assert len(goals) == n * (n - 1) // 2
    assert [g.where.match for g in goals] == [f"x=S{i}, y=S{j}" for i, j in expected]
    assert [[a.name for a in g.args[:2]] for g in goals] == [
        [f"`S{i}`.icon", f"`S{j}`.icon"] for i, j in expected
    ]
    assert all(g.name == "disjoint" and g.args[2] == 2.0 for g in goals)
    assert all((g.where.line, g.where.column) == (len(CANVAS.splitlines()) + 5, 3) for g in goals)
    # a shape is sampled, drawn and given unknowns where the graph first meets it: at its first goal
    met = first_met(expected)
    assert [s.name for s in d.shapes] == [f"`S{k}`.icon" for k in met]
    centers = [name for name in d.unknowns.names if name.endswith(".center[0]")]
    assert centers == [f"`S{k}`.icon.center[0]" for k in met]
    assert [g.args[0].name for g in each_goal(d.goals) if g.implicit] == [
        f"`S{k}`.icon" for k in met
    ]  # onCanvas


def test_unknowns_of_a_shape_come_in_the_order_its_block_sets_them_at_its_first_goal():
    # The graph visits a shape's set properties in the Style's order (r before center here, the
    # reverse of the Circle type's own order), before the goal that first reads the shape.
    n = 6
    style = "forall Set x {\n  x.icon = Circle {\n    r : ?\n    center : (?, ?)\n  }\n}\n"
    style += "forall Set x; Set y {\n  ensure disjoint(x.icon, y.icon)\n}\n"
    d = build(style, substance=sets(n))
    top = len(CANVAS.splitlines())
    expected = []
    for k in first_met(pairs_in_penrose_order(n)):
        expected.append(f"`S{k}`.icon.r (style:{top + 3}:9)")
        expected += [f"`S{k}`.icon.center (style:{top + 4}:{c})" for c in (15, 18)]
    assert [name for name in d.unknowns.names if "(style:" in name] == expected


def test_shapes_no_pair_reads_come_after_in_substance_order():
    # Pair scopes read only `icon`s; the `tag`s are met later, object by object (the map of 12
    # Substance objects iterates by string hash), however many pair scopes there are.
    n = 12
    style = "forall Set x {\n  x.icon = Circle { r : 10 }\n  x.tag = Circle { r : 1 }\n}\n"
    style += "forall Set x; Set y {\n  ensure disjoint(x.icon, y.icon)\n}\n"
    d = build(style, substance=sets(n))
    objects: PenroseMap[str, None] = PenroseMap(string_hash)
    for k in range(n):
        objects[f"S{k}"] = None
    icons = [f"`S{k}`.icon" for k in first_met(pairs_in_penrose_order(n))]
    tags = [f"`{name}`.tag" for name in objects]
    assert tags != [f"`S{k}`.tag" for k in range(n)]  # else the test would not tell the orders apart
    assert [s.name for s in d.shapes] == icons + tags


def test_an_evaluation_error_in_an_all_pairs_block_is_located_once_per_missing_path():
    # Each missing path fails where the graph first reads it; later reads are skipped.
    n = 12
    statement = "  ensure disjoint(x.icon, y.nothing)"
    style = ICONS + "forall Set x; Set y {\n" + statement + "\n}\n"
    with pytest.raises(DiagramError) as info:
        build(style, substance=sets(n))
    err = info.value
    line = len(CANVAS.splitlines()) + 5
    column = statement.index("y.nothing") + 1
    first = next(j for _, j in pairs_in_penrose_order(n))
    # one error for the one mistake, naming the first failing match and counting the others
    # (n - 1 paths are missing, S0 is never y)
    assert not isinstance(err, DiagramErrors)
    assert (
        err.message
        == f"`S{first}`.nothing is not defined (and the same in {n - 2} more matches of this block)"
    )
    assert (err.line, err.column, err.kind, err.source) == (line, column, "MissingPathError", "style")
    assert err.excerpt.splitlines() == [statement, " " * (column - 1) + "^"]


def test_errors_of_every_match_stop_at_the_cap_in_penrose_order():
    n = 12
    statement = "  ensure lessThan(u[match_id], 1)"  # u has 2 elements: from match_id 2 on, out of bounds
    style = ICONS + "forall Set x; Set y {\n  u = (1, 2)\n" + statement + "\n}\n"
    with pytest.raises(DiagramError) as info:
        build(style, substance=sets(n))
    err = info.value
    order = [m for b, m in local_scope_order([(1, n), (PAIR_BLOCK, len(pairs(n)))]) if b == PAIR_BLOCK]
    expected = [
        f"{PAIR_BLOCK}:{m}.u: index {m + 1} is out of bounds for a value of length 2"
        for m in order
        if m + 1 >= 2
    ]
    assert len(expected) > MAX_ERRORS
    # evaluation stops at the cap; the one error reported names the first match in Penrose order
    assert err.message == f"{expected[0]} (and the same in {MAX_ERRORS - 1} more matches of this block)"
    column = statement.index("u[") + 1
    assert (err.line, err.column, err.kind) == (len(CANVAS.splitlines()) + 6, column, "OutOfBoundsError")


def test_translation_errors_and_warnings_come_in_match_order():
    # Statements run match by match (not in map order): the first MAX_ERRORS matches fail.
    n = 12
    with pytest.raises(DiagramError) as info:
        build(
            ICONS + "forall Set x; Set y {\n  ensure disjoint(x.icon, y.icon)\n  y = 3\n}\n",
            substance=sets(n),
        )
    err = info.value
    assert err.message.endswith(f" (and the same in {MAX_ERRORS - 1} more matches of this block)")
    assert (err.line, err.column, err.kind) == (len(CANVAS.splitlines()) + 6, 3, "AssignSubstanceError")
    # a local field assigned twice warns in every match, naming that match's scope
    d = build(
        ICONS + "forall Set x; Set y {\n  a = 1\n  a = 2\n  ensure lessThan(a, 3)\n}\n", substance=sets(n)
    )
    warnings = [w for w in d.warnings if "ImplicitOverrideWarning" in w]
    assert len(warnings) == len(pairs(n))
    assert all(f" {PAIR_BLOCK}:{m}.a is assigned again" in w for m, w in enumerate(warnings))
    assert [g.args for g in each_goal(d.goals) if g.name == "lessThan"] == [[2.0, 3.0]] * len(pairs(n))


def test_match_counters_and_locals_are_per_match():
    n = 5
    style = (
        ICONS
        + "forall Set x; Set y {\n  k = match_id * 10 + match_total\n  ensure lessThan(k, x.icon.r)\n}\n"
    )
    d = build(style, substance=sets(n))
    total = len(pairs(n))
    order = [m for block, m in local_scope_order([(1, n), (PAIR_BLOCK, total)]) if block == PAIR_BLOCK]
    assert [g.args[0] for g in each_goal(d.goals) if g.name == "lessThan"] == [
        10.0 * (m + 1) + total for m in order
    ]


@pytest.mark.parametrize("counts", [[(1, 3), (2, 5)], [(1, 8)], [(0, 1), (2, 300), (5, 7)], [(3, 4000)]])
def test_local_scope_order_is_immutables_map_order(counts):
    scopes = LocalScopes()
    for block, count in counts:
        scopes.add_run(BlockPlan(block, Pos(1, 1), "", frozenset(), ()), count)
    got = [(plan.block_index, m) for _, plan, m in scopes.walk()]
    assert got == local_scope_order(counts)


def test_local_scope_order_of_large_indices():
    rng = random.Random(7)
    blocks = rng.sample(range(1, 2**20), 3)
    counts = [(b, rng.randrange(1, 50)) for b in blocks]
    scopes = LocalScopes()
    for block, count in counts:
        scopes.add_run(BlockPlan(block, Pos(1, 1), "", frozenset(), ()), count)
    assert [(p.block_index, m) for _, p, m in scopes.walk()] == local_scope_order(counts)
