"""Bulk evaluation of a block against the same block evaluated match by match.

The oracle is the evaluator itself with bulk evaluation refused (`BulkFailed` from every attempt),
which evaluates those blocks match by match at the place bulk evaluation would have: the same
random draws, so the diagrams must state the same goals and unknowns, and their energies and
gradients must agree at random points to rounding.
"""

from __future__ import annotations

import numpy as np
import pytest

import energies.style.bulk as bulk
from energies.compile.problem import compile_problem
from energies.diagram import Diagram, GoalTable, count_goals, each_goal
from energies.diagram_build import build_diagram
from energies.expr import evaluate
from energies.lang.errors import DiagramError
from service.trios import load_trio

from .conftest import REGISTRY

DOMAIN = "type Set\npredicate Small(Set)\n"
ICONS = """canvas { width = 800 height = 700 }
forall Set x { x.icon = Circle { strokeWidth : 0 } }
forall Set x where Small(x) { override x.icon.r = 4 }
"""


def sets(n: int, small: int = 0) -> str:
    return (
        "Set " + ", ".join(f"S{i}" for i in range(n)) + "\n" + "".join(f"Small(S{i})\n" for i in range(small))
    )


def refused(*args: object) -> None:
    raise bulk.BulkFailed("refused by the test")


def build(monkeypatch: pytest.MonkeyPatch, domain: str, substance: str, style: str, in_bulk: bool) -> Diagram:
    """The diagram with every eligible block (whatever its size) in bulk, or match by match."""
    with monkeypatch.context() as m:
        m.setattr(bulk, "BULK_MIN", 1)
        m.setattr(bulk, "PENROSE_ORDER_MAX", 1)
        if not in_bulk:
            m.setattr(bulk, "evaluate_in_bulk", refused)
        return build_diagram(domain, substance, style, "bulk-test", ())


def templated_rows(d: Diagram) -> int:
    return sum(len(g) for g in d.goals if isinstance(g, GoalTable) and g.templated)


def assert_same_energy(a: Diagram, b: Diagram, points: int = 3, rtol: float = 1e-12) -> None:
    """Same unknowns (by name, same initial values), goal counts, energies and gradients."""
    assert len(set(a.unknowns.names)) == len(a.unknowns.names)
    assert sorted(a.unknowns.names) == sorted(b.unknowns.names)
    where = {n: i for i, n in enumerate(a.unknowns.names)}
    perm = np.array([where[n] for n in b.unknowns.names], dtype=np.int64)  # b's k is a's perm[k]
    assert np.array_equal(np.array(b.unknowns.x0), np.array(a.unknowns.x0)[perm])
    for kind in ("objective", "constraint"):
        assert count_goals(a.goals, kind) == count_goals(b.goals, kind)
    pa, pb = compile_problem(a, cache=None), compile_problem(b, cache=None)
    rng = np.random.default_rng(7)
    x0 = np.array(a.unknowns.x0)
    for t in range(points):
        xa = x0 + (rng.normal(0, 30, len(x0)) if t else 0)
        for s in range(len(pa.stages)):
            for weight in (1.0, 1e4):
                ea, ga = pa.energy_and_grad(xa, s, weight)
                eb, gb = pb.energy_and_grad(xa[perm], s, weight)
                assert eb == pytest.approx(ea, rel=rtol, abs=1e-9)
                np.testing.assert_allclose(gb, ga[perm], rtol=rtol, atol=1e-9 * max(1.0, np.abs(ga).max()))


def test_an_all_pairs_block_is_one_templated_table(monkeypatch: pytest.MonkeyPatch) -> None:
    style = ICONS + "forall Set x; Set y { ensure disjoint(x.icon, y.icon, 2) }\n"
    a = build(monkeypatch, DOMAIN, sets(80), style, in_bulk=False)
    b = build(monkeypatch, DOMAIN, sets(80), style, in_bulk=True)
    tables = [g for g in b.goals if isinstance(g, GoalTable) and g.templated]
    assert len(tables) == 1 and len(tables[0]) == 80 * 79 // 2
    assert templated_rows(a) == 0
    assert_same_energy(a, b)


def test_matches_of_another_structure_form_their_own_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fixed radius where the others are unknowns: two partitions, two templates."""
    style = ICONS + "forall Set x; Set y { ensure disjoint(x.icon, y.icon, 2) }\n"
    b = build(monkeypatch, DOMAIN, sets(30, small=5), style, in_bulk=True)
    tables = [g for g in b.goals if isinstance(g, GoalTable) and g.templated]
    # (small, small), (small, other), (other, small), (other, other): 10 + 50 + 75 + 300 pairs,
    # the two mixed ones in whichever order the selector binds them
    assert sorted(len(t) for t in tables) == sorted(len(t) for t in tables) and sum(map(len, tables)) == 435
    assert len(tables) >= 3
    assert_same_energy(build(monkeypatch, DOMAIN, sets(30, small=5), style, in_bulk=False), b)


def test_locals_and_computed_functions_become_one_template(monkeypatch: pytest.MonkeyPatch) -> None:
    """The graph Style's repulsion: a local distance, a namespace constant, log and max."""
    style = ICONS + (
        "num { repel = 150 }\n"
        "forall Set u; Set v {\n"
        "  d = vdist(u.icon.center, v.icon.center)\n"
        "  dHat = num.repel\n"
        "  encourage minimal(max(0, -sqr(d - dHat) * log(d / dHat)))\n"
        "  ensure disjoint(u.icon, v.icon, 5)\n"
        "}\n"
    )
    a = build(monkeypatch, DOMAIN, sets(40), style, in_bulk=False)
    b = build(monkeypatch, DOMAIN, sets(40), style, in_bulk=True)
    assert templated_rows(b) == 2 * 40 * 39 // 2
    assert_same_energy(a, b)
    # each templated row's arguments, filled in, are that match's own arguments
    x = np.array(a.unknowns.x0) + 3.0
    where = {n: i for i, n in enumerate(a.unknowns.names)}
    xb = x[[where[n] for n in b.unknowns.names]]
    by_place = {}
    for g in each_goal(a.goals):
        by_place[(g.name, str(g.where))] = g
    for table in (g for g in b.goals if isinstance(g, GoalTable) and g.templated):
        for row in (0, 7, len(table) - 1):
            mine = table.row(row)
            theirs = by_place[(mine.name, str(mine.where))]
            if mine.name == "minimal":
                assert evaluate(mine.args[0], xb) == pytest.approx(evaluate(theirs.args[0], x), rel=1e-13)
            else:  # disjoint of the match's own two shapes
                assert [a.name for a in mine.args[:2]] == [a.name for a in theirs.args[:2]]


def test_a_block_reading_match_id_is_evaluated_match_by_match(monkeypatch: pytest.MonkeyPatch) -> None:
    style = ICONS + "forall Set x; Set y { encourage near(x.icon, y.icon, match_id) }\n"
    b = build(monkeypatch, DOMAIN, sets(20), style, in_bulk=True)
    assert templated_rows(b) == 0
    assert_same_energy(build(monkeypatch, DOMAIN, sets(20), style, in_bulk=False), b)


def test_a_failing_path_is_reported_as_match_by_match(monkeypatch: pytest.MonkeyPatch) -> None:
    style = ICONS + "forall Set x; Set y { ensure disjoint(x.icon, y.nothing, 2) }\n"
    errors = []
    for in_bulk in (False, True):
        with pytest.raises(DiagramError) as caught:
            build(monkeypatch, DOMAIN, sets(20), style, in_bulk=in_bulk)
        errors.append(str(caught.value))
    assert errors[0] == errors[1]
    assert "nothing" in errors[0] and ":4:" in errors[0]


def test_layering_in_a_bulk_block_draws_the_same_order(monkeypatch: pytest.MonkeyPatch) -> None:
    domain = "type Set\npredicate Sub(Set, Set)\n"
    substance = sets(40) + "".join(f"Sub(S{i}, S{i // 2})\n" for i in range(1, 40))
    style = (
        "canvas { width = 800 height = 700 }\n"
        "forall Set x { x.icon = Circle { } }\n"
        "forall Set x; Set y where Sub(x, y) {\n"
        "  ensure contains(y.icon, x.icon)\n  layer x.icon above y.icon\n}\n"
    )
    a = build(monkeypatch, domain, substance, style, in_bulk=False)
    b = build(monkeypatch, domain, substance, style, in_bulk=True)
    assert templated_rows(b) == 39
    assert [s.name for s in a.shapes] == [s.name for s in b.shapes]
    assert_same_energy(a, b)


@pytest.mark.parametrize(
    "key",
    [
        "graph-domain/textbook/sec1/fig11",  # draws: Penrose's graph order outside the bulk blocks
        "alloy-models/message-passing",  # groups read through bboxPts
        "geometric-queries/ray-intersect/test",  # three-variable blocks, random constants
        "box-arrow-diagram/computer-architecture",
        "set-theory-domain/tree-venn",
    ],
)
def test_registry_trios_state_the_same_energy(monkeypatch: pytest.MonkeyPatch, key: str) -> None:
    trio = REGISTRY / f"{key}.trio.json"
    if not trio.exists():
        pytest.skip(f"{trio} is not here")
    spec = load_trio(trio)
    a = build(monkeypatch, spec.domain, spec.substance, spec.style, in_bulk=False)
    b = build(monkeypatch, spec.domain, spec.substance, spec.style, in_bulk=True)
    assert templated_rows(b) > 0
    assert_same_energy(a, b, points=2)


def test_a_drawing_style_draws_penroses_numbers_in_bulk(monkeypatch: pytest.MonkeyPatch) -> None:
    """The graph Style draws its dots' centers: with its pair blocks in bulk but kept in Penrose's
    graph, every unknown gets the number it gets when every block is walked match by match in
    Penrose's topological order (the oracle: no block eligible for bulk at all)."""
    style = (REGISTRY / "graph-domain/simple-graph.style").read_text()
    domain = (REGISTRY / "graph-domain/simple-graph.domain").read_text()
    if not style:
        pytest.skip("the registry is not here")
    n = 24
    substance = "Vertex " + ", ".join(f"v{i}" for i in range(n)) + "\n"
    substance += "".join(f"Edge(v{i // 2}, v{i})\n" for i in range(1, n)) + "AutoLabel All\n"
    with monkeypatch.context() as m:
        m.setattr(bulk, "BULK_MIN", 10**9)
        walked = build_diagram(domain, substance, style, "order-test", ())
    in_bulk = build_diagram(domain, substance, style, "order-test", ())
    assert templated_rows(in_bulk) >= n * (n - 1) // 2  # the pair block, at least, in bulk
    assert templated_rows(walked) == 0
    assert in_bulk.unknowns.names == walked.unknowns.names
    assert in_bulk.unknowns.x0 == walked.unknowns.x0
    assert [s.name for s in in_bulk.shapes] == [s.name for s in walked.shapes]
    assert_same_energy(walked, in_bulk, points=2)
