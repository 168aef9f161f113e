"""Diagnostics a person can act on: a misspelt shape property warns with the closest name and still
passes through (as in Penrose), each mistake is reported once however many matches share it,
excludeWarnings silences warnings found while compiling too, and messages speak Style."""

from __future__ import annotations

import pytest

from energies.compile import compile_problem
from energies.diagram_build import build_diagram
from energies.lang.errors import DiagramError, DiagramErrors

DOMAIN = "type Set"
SUBSTANCE = "Set A, B, C, D"
CANVAS = "canvas {\n  width = 300\n  height = 200\n}\n"


def build(style: str, exclude: tuple[str, ...] = ()):
    return build_diagram(DOMAIN, SUBSTANCE, CANVAS + style, "v", exclude)


def test_misspelt_property_warns_once_with_the_closest_name_and_passes_through():
    d = build("forall Set s {\n  s.c = Circle { strokeWidht: 2\n opacity: 0.5 }\n}")
    assert d.warnings == [
        "style:6:18: UnknownPropertyWarning: Circle has no property strokeWidht (did you mean strokeWidth?);"
        " it passes through to the SVG as an attribute"
    ]  # once for the four matches; opacity, a plain SVG attribute, passes silently
    assert all(s.props["strokeWidht"] == 2 for s in d.shapes)
    assert (
        build("forall Set s {\n  s.c = Circle { strokeWidht: 2 }\n}", ("UnknownPropertyWarning",)).warnings
        == []
    )


def test_one_error_per_mistake_not_per_match():
    with pytest.raises(DiagramErrors) as info:
        build("forall Set s {\n  s.c = Circle { r: s.nope }\n  s.t = Text { string: 3 }\n}")
    errors = info.value.errors
    assert [(e.line, e.column) for e in errors] == [(6, 21), (7, 16)]
    assert errors[0].message == "`A`.nope is not defined (and the same in 3 more matches of this block)"
    assert errors[1].message.startswith("`A`.t.string must be a string to measure the label, not a number")


def test_messages_name_value_kinds_in_style_words():
    with pytest.raises(DiagramError) as info:
        build("forall Set s {\n  s.c = Circle { center: 3 }\n}")
    assert "must be a vector, not a number" in info.value.message
    with pytest.raises(DiagramError) as info:
        build('forall Set s {\n  s.c = Circle { r: "big" }\n}')
    assert "must be a number, not a string" in info.value.message
    for e in [info.value]:
        assert "FloatV" not in str(e) and "StrV" not in str(e)


def test_exclude_warnings_applies_to_warnings_found_while_compiling():
    style = "forall Set s {\n  s.r = Rectangle { }\n  s.l = Line { }\n  ensure contains(s.r, s.l)\n}"
    shown = build(style)
    compile_problem(shown, cache=None)
    assert any(w.startswith("BBoxApproximationWarning: contains(Rectangle, Line)") for w in shown.warnings)
    hidden = build(style, ("BBoxApproximationWarning",))
    compile_problem(hidden, cache=None)
    assert not any("BBoxApproximationWarning" in w for w in hidden.warnings)
