"""Goals (ensure / encourage, inline comparisons, stages, implicit onCanvas) and drawing order."""

from __future__ import annotations

import pytest

from energies.lang.errors import DiagramError
from energies.style.layering import Graph, layer_order

from .conftest import build, shape


def test_inline_comparisons_and_stage_annotations():
    style = """
layout = [first, second]
forall Set x {
  x.icon = Circle { r: 5 }
  ensure x.icon.r < 3
  ensure 1 == 2 in first
  ensure 4 > 3 except [first]
  encourage near(x.icon, x.icon) in [second]
}
"""
    d = build(style, substance="Set A\n")
    explicit = [g for g in d.goals if not g.implicit]
    assert [(g.kind, g.name, g.args[:2], g.stages, g.exclude) for g in explicit[:3]] == [
        ("constraint", "lessThan", [5.0, 3.0], (), True),
        ("constraint", "equal", [1.0, 2.0], ("first",), False),
        ("constraint", "greaterThan", [4.0, 3.0], ("first",), True),
    ]
    obj = explicit[3]
    assert obj.kind == "objective" and obj.args[0] is shape(d, "`A`.icon")
    assert [g.active_in("first") for g in explicit] == [True, True, False, False]
    assert [g.active_in("second") for g in explicit] == [True, False, True, True]
    assert explicit[0].where.line == 9 and explicit[0].where.match == "x=A"


def test_on_canvas_is_implicit_for_shapes_that_ask_for_it():
    style = """
forall Set x {
  x.a = Circle { }
  x.b = Circle { ensureOnCanvas: false }
}
"""
    d = build(style, substance="Set A\n")
    implicit = [g for g in d.goals if g.implicit]
    assert [(g.name, g.args[0].name, g.args[1:]) for g in implicit] == [("onCanvas", "`A`.a", [800.0, 700.0])]
    assert implicit[0].stages == () and implicit[0].exclude


def test_goal_over_pairs_uses_the_same_shape_objects():
    style = """
forall Set x {
  x.icon = Circle { }
}
forall Set x; Set y where Subset(x, y) {
  ensure disjoint(x.icon, y.icon, 5)
}
"""
    d = build(style, substance="Set A, B, C\nSubset(A, B)\nSubset(B, C)\n")
    pairs = [(g.args[0].name, g.args[1].name, g.args[2]) for g in d.goals if g.name == "disjoint"]
    assert pairs == [("`A`.icon", "`B`.icon", 5.0), ("`B`.icon", "`C`.icon", 5.0)]
    assert d.goals[0].args[1] is d.goals[1].args[0]


def test_default_order_is_creation_order_and_layer_statements_reorder():
    style = """
forall Set x {
  x.icon = Circle { }
  x.text = Text { string: "t" }
}
forall Set x; Set y where Subset(x, y) {
  layer y.icon above x.icon
  layer x.text below y.icon
}
"""
    plain = build(
        'forall Set x {\n  x.icon = Circle { }\n  x.text = Text { string: "t" }\n}\n', substance="Set A, B\n"
    )
    assert [s.name for s in plain.shapes] == ["`A`.icon", "`A`.text", "`B`.icon", "`B`.text"]
    d = build(style, substance="Set B, A\nSubset(A, B)\n")
    order = [s.name for s in d.shapes]
    assert order.index("`B`.icon") > order.index("`A`.icon")
    assert order.index("`B`.icon") > order.index("`A`.text")


def test_layer_cycle_gives_an_approximate_order_and_a_warning():
    style = """
forall Set x {
  x.icon = Circle { }
}
forall Set x; Set y where Subset(x, y) {
  layer x.icon above y.icon
}
"""
    d = build(style, substance="Set A, B\nSubset(A, B)\nSubset(B, A)\n")
    assert len(d.shapes) == 2
    assert any("LayerCycleWarning" in w for w in d.warnings)
    quiet = build(style, substance="Set A, B\nSubset(A, B)\nSubset(B, A)\n", exclude=("LayerCycleWarning",))
    assert not any("LayerCycleWarning" in w for w in quiet.warnings)


def test_penrose_topsort_is_stable_without_edges_and_respects_edges():
    g = Graph()
    for n in "abcd":
        g.add_node(n)
    assert g.topsort() == list("abcd")
    g.add_edge("d", "a")  # d below a
    order = g.topsort()
    assert order is not None and order.index("d") < order.index("a")


def test_layering_between_groups_orders_the_groups():
    # a in group G1, b in group G2: `layer a above b` puts all of G1 above G2.
    order, cyclic = layer_order(["G1", "a", "G2", "b"], [("b", "a")], {"a": ["G1"], "b": ["G2"]})
    assert not cyclic and order.index("G2") < order.index("G1")
    # a shape and its own group: the edge is a loop, hence a cycle (as in Penrose)
    _, cyclic = layer_order(["G1", "a"], [("G1", "a")], {"a": ["G1"]})
    assert cyclic


def test_goal_arguments_are_checked_against_the_library_parameter_kinds():
    for goal, column, text in [
        ("ensure lessThan(x.icon, 2)", 19, "argument x must be a number, not a Circle shape"),
        ("ensure disjoint(x.icon, 3)", 27, "argument s2 must be a shape"),
        ("ensure perpendicular((1, 2), 2, (3, 4))", 32, "argument p must be a vector, not a number"),
    ]:
        with pytest.raises(DiagramError) as info:
            build(
                "forall Set x {\n  x.icon = Circle { }\n  " + goal + "\n}\n",
                substance="Set A\n",
                library=None,
            )
        e = info.value
        assert (e.kind, e.line, e.column) == ("BadArgumentTypeError", 7, column), str(e)
        assert text in e.message
