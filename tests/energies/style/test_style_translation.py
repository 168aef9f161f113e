"""The translation: scopes, path resolution, override / delete and their warnings, canvas, stages."""

from __future__ import annotations

import pytest

from energies.lang.errors import DiagramError

from .conftest import build, shape


def equal_args(d):
    return [g.args for g in d.goals if g.name == "equal"]


def test_later_blocks_override_earlier_ones_with_a_warning():
    style = """
forall Set x {
  x.v = 1
  x.w = 2
}
forall Set x {
  x.v = 10
  override x.w = 20
  ensure equal(x.v, x.w)
}
"""
    d = build(style, substance="Set A\n")
    assert equal_args(d) == [[10.0, 20.0]]
    implicit = [w for w in d.warnings if "ImplicitOverrideWarning" in w]
    assert len(implicit) == 1 and "`A`.v" in implicit[0] and "style:11:" in implicit[0]


def test_a_reference_sees_the_final_value_even_from_an_earlier_block():
    # Penrose builds the whole translation before evaluating anything.
    style = """
forall Set x {
  ensure equal(x.v, 0)
}
forall Set x {
  x.v = 5
}
"""
    assert equal_args(build(style, substance="Set A\n")) == [[5.0, 0.0]]


def test_delete_and_noop_delete_warning_and_excluding_it():
    style = """
forall Set x {
  x.icon = Circle { r: 3 }
  x.extra = Circle { r: 4 }
}
forall Set x {
  delete x.extra
  delete x.never
  delete x.icon.r
}
"""
    d = build(style, substance="Set A\n")
    assert [s.name for s in d.shapes] == ["`A`.icon"]
    assert d.shapes[0].props["r"] != 3.0  # the property fell back to its (sampled, unknown) default
    assert [w for w in d.warnings if "NoopDeleteWarning" in w and "`A`.never" in w]
    quiet = build(style, substance="Set A\n", exclude=("NoopDeleteWarning",))
    assert not [w for w in quiet.warnings if "NoopDeleteWarning" in w]


def test_override_of_a_missing_path_warns_like_penrose():
    d = build("forall Set x {\n  override x.v = 1\n}\n", substance="Set A\n")
    assert any("NoopDeleteWarning" in w for w in d.warnings)


def test_local_names_are_per_match_and_namespaces_are_global():
    style = """
const {
  k = 7
  twiceK = k * 2
}
forall Set x {
  s = Circle { r: const.twiceK + match_id }
}
"""
    d = build(style, substance="Set A, B\n")
    assert [(s.name, s.props["r"]) for s in d.shapes] == [("2:0.s", 15.0), ("2:1.s", 16.0)]


def test_namespace_declared_twice_is_an_error():
    with pytest.raises(DiagramError) as info:
        build("const {\n  a = 1\n}\nconst {\n  b = 2\n}\n")
    assert info.value.kind == "RedeclareNamespaceError" and info.value.line == 8


def test_missing_or_non_numeric_canvas_is_an_error():
    from energies.diagram_build import build_diagram

    with pytest.raises(DiagramError) as info:
        build_diagram("type Set\n", "Set A\n", "forall Set x {\n  x.v = 1\n}\n", "v")
    assert info.value.kind == "CanvasNonexistentDimsError" and "canvas.width" in info.value.message
    with pytest.raises(DiagramError) as info:
        build_diagram("type Set\n", "", 'canvas {\n  width = "wide"\n  height = 10\n}\n', "v")
    assert info.value.kind == "CanvasNonexistentDimsError" and info.value.line == 2


def test_canvas_size_and_default_stage():
    d = build("", substance="")
    assert d.canvas == (800.0, 700.0) and d.stages == [""]


@pytest.mark.parametrize(
    ("stmt", "kind"),
    [
        ("x.icon.r = 3", "MissingShapeError"),
        ("x.v = 1\n  x.v.r = 3", "NotShapeError"),
        ("x.icon = Blob { }", "InvalidGPITypeError"),
        ("x.icon = Circle { r: Circle { } }", "NestedShapeError"),
        ("x = 3", "AssignSubstanceError"),
        ("x.a.b.c = 1", "NonWellFormedPathError"),
        ("ensure equal(`B`.v, 1)", "UndeclaredSubVarError"),
        ("x.v[0] = 1", "AssignAccessError"),
    ],
)
def test_translation_errors(stmt, kind):
    with pytest.raises(DiagramError) as info:
        build("forall Set x {\n  " + stmt + "\n}\n", substance="Set A\n")
    assert info.value.kind == kind and info.value.source == "style" and info.value.line >= 6, str(info.value)


def test_errors_of_independent_paths_are_reported_together():
    with pytest.raises(DiagramError) as info:
        build("forall Set x {\n  x.a = nope1()\n  x.b = nope2()\n}\n", substance="Set A\n")
    assert [e.line for e in info.value.errors] == [6, 7]


def test_a_collection_of_number_literals_is_a_vector():
    domain = "type Set\npredicate Size(Set, Number)\n"
    style = """
collect Number n into sizes where Size(s, n) foreach Set s {
  ensure equal(sizes, numberof sizes)
}
"""
    d = build(style, substance="Set A\nSize(A, 2)\nSize(A, 5)\n", domain=domain)
    assert equal_args(d) == [[[2.0, 5.0], 2.0]]


def test_shape_helper_finds_names():
    d = build("forall Set x {\n  x.icon = Circle { }\n}\n", substance="Set A\n")
    assert shape(d, "`A`.icon").kind == "Circle"
