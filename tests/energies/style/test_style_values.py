"""Expressions: arithmetic, vectors and matrices, indexing, colors, unknowns, Substance values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from energies.expr import Node, evaluate
from energies.lang.errors import DiagramError

from .conftest import build


def goal_args(style_body: str, substance: str = "Set A\n", **kw) -> list:
    """Arguments of each `ensure equal(...)` in a `forall Set x` block (first match)."""
    d = build("forall Set x {\n" + style_body + "\n}\n", substance=substance, **kw)
    return [g.args for g in d.goals if g.name == "equal"]


def test_scalar_arithmetic_follows_penrose_precedence():
    (args,) = goal_args("ensure equal(1 + 2 * 3 ^ 2 - 8 / 4, -2 ^ 2)")
    assert args == [17.0, 4.0]  # Penrose: unary minus binds tighter than ^, so (-2)^2


def test_js_division_and_power_edge_cases():
    (args,) = goal_args("ensure equal(1 / 0, (-8) ^ 0.5)")
    assert args[0] == math.inf and math.isnan(args[1])


def test_vector_and_matrix_operations():
    body = """
    v = (1, 2)
    w = (3, 5)
    m = ((1, 2), (3, 4))
    ensure equal(v + w, v - w)
    ensure equal(v .* w, w ./ v)
    ensure equal(2 * v, v / 2)
    ensure equal(m * v, v * m)
    ensure equal(m * m, m')
    ensure equal(m .* m, -v)
    """
    got = goal_args(body)
    assert got[0] == [[4.0, 7.0], [-2.0, -3.0]]
    assert got[1] == [[3.0, 10.0], [3.0, 2.5]]
    assert got[2] == [[2.0, 4.0], [0.5, 1.0]]
    assert got[3] == [[5.0, 11.0], [7.0, 10.0]]  # m v = (1*1+2*2, 3*1+4*2); v m = (1+6, 2+8)
    assert got[4] == [[[7.0, 10.0], [15.0, 22.0]], [[1.0, 3.0], [2.0, 4.0]]]
    assert got[5] == [[[1.0, 4.0], [9.0, 16.0]], [-1.0, -2.0]]


def test_indexing_strings_colors_and_tuples():
    body = """
    m = ((1, 2), (3, 4))
    l = [10, 20, 30]
    ensure equal(m[1][0], l[2])
    ensure equal(m[0], {5, 6})
    ensure equal("ab" + "cd", #ff000080)
    """
    got = goal_args(body)
    assert got[0] == [3.0, 30.0]
    assert got[1] == [[1.0, 2.0], [5.0, 6.0]]
    assert got[2][0] == "abcd"
    assert got[2][1] == pytest.approx([1.0, 0.0, 0.0, 128 / 255])


def test_matrix_entries_scan_their_matrix_once(monkeypatch):
    from energies.style import arith

    scanned = []
    is_matrix = arith.is_matrix
    monkeypatch.setattr(arith, "is_matrix", lambda v: scanned.append(v) or is_matrix(v))
    rows = ", ".join(f"({i}, {i + 1})" for i in range(40))
    entries = " + ".join(f"m[{i}][1]" for i in range(40))
    (args,) = goal_args(f"m = ({rows})\n  ensure equal({entries}, m[39][0])")
    assert args == [sum(range(1, 41)), 39.0]
    # every m[i][j] needs m to be a matrix; one scan of its 40 rows answers all 41 accesses
    assert sum(1 for v in scanned if isinstance(v, list) and len(v) == 40) == 1


def test_unknowns_initial_values_names_and_stages():
    d = build(
        "layout = [a, b]\nforall Set x {\n  x.p = ?[3]\n  x.q = ? in a\n  x.r = ? except [a, b]\n"
        "  ensure equal(x.p + x.q, x.r)\n}\n",
        substance="Set A\n",
    )
    u = d.unknowns
    assert d.stages == ["a", "b"]
    assert len(u.x0) == 3
    assert u.x0[0] == 3.0
    assert -400 <= u.x0[1] < 400 and -400 <= u.x0[2] < 400  # a bare ? samples across the canvas width
    assert u.stages == [((), True), (("a",), False), (("a", "b"), True)]
    assert list(u.varying_mask("a")) == [True, True, False]
    assert list(u.varying_mask("b")) == [True, False, False]
    (goal,) = [g for g in d.goals if g.name == "equal"]
    left, right = goal.args
    assert isinstance(left, Node) and isinstance(right, Node)
    x = np.array([1.0, 2.0, 5.0])
    assert evaluate(left, x) == 3.0 and evaluate(right, x) == 5.0
    assert "`A`.p" in u.names[0]


def test_same_variation_same_unknowns_and_different_variation_differs():
    style = "forall Set x {\n  x.icon = Circle {}\n  x.p = ?\n}\n"
    a = build(style, variation="one").unknowns.x0
    b = build(style, variation="one").unknowns.x0
    c = build(style, variation="two").unknowns.x0
    assert a == b and a != c


def test_match_id_match_total_nameof_numberof_listof():
    style = """
forall Set x {
  x.val = match_id * 10 + match_total
  x.name = nameof x
}
collect Set s into ss {
  ensure equal(numberof ss, listof val from ss)
}
"""
    d = build(style, substance="Set A, B, C\n")
    (goal,) = [g for g in d.goals if g.name == "equal"]
    assert goal.args == [3.0, [13.0, 23.0, 33.0]]


def test_substance_literals_are_values():
    domain = "type Set\npredicate Size(Set, Number)\npredicate Named(Set, String)\n"
    style = """
forall Set x; Number n where Size(x, n) {
  ensure equal(n * 2, nameof n)
}
forall Set x; String s where Named(x, s) {
  ensure equal(s, nameof x)
}
"""
    d = build(style, substance='Set A\nSize(A, 3)\nNamed(A, "hello")\n', domain=domain)
    assert [g.args for g in d.goals if g.name == "equal"] == [[6.0, "3"], ["hello", "A"]]


def test_labels_are_fields_of_substance_objects():
    d = build(
        'forall Set x {\n  ensure equal(x.label, x.label + "!")\n}\n',
        substance="Set A, B\nLabel A $\\alpha$\n",
    )
    assert [g.args for g in d.goals if g.name == "equal"] == [["\\alpha", "\\alpha!"], ["", "!"]]


def test_computed_functions_on_constants_and_unknowns():
    d = build(
        "forall Set x {\n  x.p = ?[2]\n  ensure equal(twice(4), first(pair(twice(x.p), 1)))\n}\n",
        substance="Set A\n",
    )
    (g,) = [g for g in d.goals if g.name == "equal"]
    assert g.args[0] == 8
    assert evaluate(g.args[1], np.array([5.0])) == 10.0


def test_real_library_function_runs():
    d = build(
        "forall Set x {\n  ensure equal(max(2, 7), norm((3, 4)))\n}\n", substance="Set A\n", library=None
    )
    (g,) = [g for g in d.goals if g.name == "equal"]
    assert float(g.args[0]) == 7.0 and float(g.args[1]) == pytest.approx(5.0)


@pytest.mark.parametrize(
    ("body", "kind", "line", "column", "text"),
    [
        ('ensure equal("a" - "b", 1)', "BinOpTypeError", 6, 16, "not defined on strings"),
        ("ensure equal((1, 2) + 3, 1)", "BinOpTypeError", 6, 17, "a vector and a number"),
        ("ensure equal(nope(1), 1)", "InvalidFunctionNameError", 6, 16, "unknown function nope"),
        ("ensure equal(twice(1, 2), 1)", "ArgLengthMismatch", 6, 16, "expects 1 argument"),
        ("ensure equal(fail(1), 1)", "FunctionInternalError", 6, 16, "function fail"),
        ("ensure equal(x.missing, 1)", "MissingPathError", 6, 16, "`A`.missing is not defined"),
        ("v = [1, 2]\n  ensure equal(v[5], 1)", "OutOfBoundsError", 7, 16, "out of bounds"),
        ("v = [1, 2]\n  ensure equal(v[0.5], 1)", "BadIndexError", 7, 18, "whole number"),
        ("v = [1, 2]\n  ensure equal(v[0][1], 1)", "UnindexableItemError", 7, 16, "too many indices (2)"),
        ('v = [1, "a"]', "BadElementError", 6, 8, "list element 1"),
        ("ensure equal(x, 1)", "PathToSubstanceError", 6, 16, "Substance object"),
        ("a = b\n  b = a", "CyclicAssignmentError", 6, 7, "depend on each other"),
        ("ensure lessThan(1)", "ArgLengthMismatch", 6, 10, "expects 2 argument"),
        ("ensure bogus(1)", "InvalidConstraintNameError", 6, 10, "unknown constraint bogus"),
        ("ensure lesThan(1, 2)", "InvalidConstraintNameError", 6, 10, "lesThan (did you mean lessThan?)"),
        ("ensure equal(twic(1), 1)", "InvalidFunctionNameError", 6, 16, "twic (did you mean twice?)"),
        ("x.s = Circel {}", "InvalidGPITypeError", 6, 9, "unknown shape type Circel (did you mean Circle?)"),
        ("x.s = Blob {}", "InvalidGPITypeError", 6, 9, "Blob; expected one of Circle, Ellipse"),
        ("encourage lessThan(1, 2)", "InvalidObjectiveNameError", 6, 13, "use ensure"),
    ],
)
def test_errors_are_located(body, kind, line, column, text):
    with pytest.raises(DiagramError) as info:
        build("forall Set x {\n  " + body + "\n}\n", substance="Set A\n")
    errors = getattr(info.value, "errors", (info.value,))
    e = errors[0]
    assert (e.source, e.kind, e.line, e.column) == ("style", kind, line, column), str(e)
    assert text in e.message, e.message
