"""Shapes: defaults, unknown slots for optimized properties, property checks, labels, groups."""

from __future__ import annotations

import numpy as np
import pytest

from energies.expr import Node, evaluate
from energies.lang.errors import DiagramError
from energies.shapes import Color
from energies.text.labels import measure_equation, measure_text

from .conftest import build, shape


def test_unset_optimized_properties_become_unknowns_set_ones_stay():
    d = build(
        "forall Set x {\n  x.icon = Circle { r: 10 }\n  x.box = Rectangle { center: (1, 2) }\n}\n",
        substance="Set A\n",
    )
    c, r = shape(d, "`A`.icon"), shape(d, "`A`.box")
    assert c.props["r"] == 10.0
    assert all(isinstance(v, Node) for v in c.props["center"])
    assert r.props["center"] == [1.0, 2.0]
    assert isinstance(r.props["width"], Node) and isinstance(r.props["height"], Node)
    names = d.unknowns.names
    assert names == ["`A`.icon.center[0]", "`A`.icon.center[1]", "`A`.box.width", "`A`.box.height"]
    x0 = d.unknowns.x0
    assert -400 <= x0[0] < 400 and -350 <= x0[1] < 350  # Penrose: centers uniform over the canvas
    assert 3 <= x0[2] < 800 / 6 and 3 <= x0[3] < 700 / 6  # sizes in [3, canvas / 6)


def test_sampled_colors_are_constants_and_fixed_defaults_are_penroses():
    d = build("forall Set x {\n  x.icon = Circle { }\n  x.l = Line { }\n}\n", substance="Set A\n")
    c, line = shape(d, "`A`.icon"), shape(d, "`A`.l")
    fill = c.props["fillColor"]
    assert isinstance(fill, list) and len(fill) == 4
    assert all(0.1 <= ch < 0.9 for ch in fill[:3]) and fill[3] == 0.5
    assert c.props["strokeColor"] == Color.none() and c.props["strokeWidth"] == 0.0
    assert line.props["strokeColor"] == [0.0, 0.0, 0.0, 1.0] and line.props["strokeWidth"] == 1.0
    assert c.props["name"] == "`A`.icon" and c.props["ensureOnCanvas"] is True


def test_a_path_to_an_unset_property_shares_the_shapes_unknowns():
    d = build(
        "forall Set x {\n  x.icon = Circle { }\n  ensure equal(x.icon.r, x.icon.center[1])\n}\n",
        substance="Set A\n",
    )
    (g,) = [g for g in d.goals if g.name == "equal"]
    c = shape(d, "`A`.icon")
    assert g.args[0] is c.props["r"] and g.args[1] is c.props["center"][1]
    assert len(d.unknowns.x0) == 3


def test_property_type_errors_and_passthrough():
    d = build(
        'forall Set x {\n  x.icon = Circle { r: 2  style: "opacity:0.5"  opacity: 0.5 }\n}\n',
        substance="Set A\n",
    )
    props = shape(d, "`A`.icon").props
    assert props["style"] == "opacity:0.5" and props["opacity"] == 0.5
    for bad, kind in [
        ('r: "big"', "BadShapeParamTypeError"),
        ("center: 3", "BadShapeParamTypeError"),
        ("fillColor: (1, 2)", "BadShapeParamTypeError"),
        ("extra: (1, 2)", "BadShapeParamTypeError"),
    ]:
        with pytest.raises(DiagramError) as info:
            build("forall Set x {\n  x.icon = Circle { " + bad + " }\n}\n", substance="Set A\n")
        assert info.value.kind == kind and info.value.line == 6, str(info.value)


def test_text_and_equation_sizes_come_from_label_measurement():
    style = """
forall Set x {
  x.t = Text { string: x.label + "!"  fontSize: "20px" }
  x.e = Equation { string: x.label }
  x.w = Text { string: "fixed"  width: 5 }
  ensure equal(x.t.width, x.e.height)
}
"""
    d = build(style, substance="Set A\nLabel A $\\alpha$\n")
    t, e, w = shape(d, "`A`.t"), shape(d, "`A`.e"), shape(d, "`A`.w")
    mt = measure_text("\\alpha!", "sans-serif", "20px")
    me = measure_equation("\\alpha", "16px")
    assert (t.props["width"], t.props["height"], t.props["ascent"], t.props["descent"]) == (
        mt.width,
        mt.height,
        mt.ascent,
        mt.descent,
    )
    assert e.props["width"] == me.width and e.props["descent"] == me.descent
    assert w.props["width"] == 5.0 and w.props["height"] == measure_text("fixed").height
    (g,) = [g for g in d.goals if g.name == "equal"]
    assert g.args == [mt.width, me.height]


def test_bad_tex_is_a_located_error():
    with pytest.raises(DiagramError) as info:
        build('forall Set x {\n  x.e = Equation { string: "\\\\frac{" }\n}\n', substance="Set A\n")
    assert info.value.kind == "LabelError" and info.value.line == 6


def test_groups_hold_their_members_which_are_not_drawn_at_top_level():
    style = """
forall Set x {
  x.a = Circle { }
  x.b = Rectangle { }
  x.g = Group { shapes: [x.b, x.a] }
}
"""
    d = build(style, substance="Set A\n")
    assert [s.name for s in d.shapes] == ["`A`.g"]
    members = d.shapes[0].props["shapes"]
    assert [m.name for m in members] == ["`A`.a", "`A`.b"]  # drawn in the global order
    assert members[0] is shape(d, "`A`.a")
    on_canvas = [g.args[0].name for g in d.goals if g.name == "onCanvas"]
    assert on_canvas == ["`A`.a", "`A`.b", "`A`.g"]


def test_unknown_values_evaluate_to_their_initial_values():
    d = build("forall Set x {\n  x.icon = Circle { r: ?[4] * 2 }\n}\n", substance="Set A\n")
    r = shape(d, "`A`.icon").props["r"]
    assert evaluate(r, np.array(d.unknowns.x0)) == 8.0
