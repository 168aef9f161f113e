"""Domain and Substance checking: environments built by hand-derived expectations, and errors."""

from __future__ import annotations

import pytest

from energies.lang.domain_env import check_domain
from energies.lang.errors import DiagramError, DiagramErrors
from energies.lang.parse import parse_domain, parse_substance
from energies.lang.substance_env import (
    Binding,
    Label,
    Literal,
    ObjectDecl,
    PredicateFact,
    check_substance,
)

DOMAIN = """type Shape
type Set <: Shape
type Point
type Circle
type Ring
Circle <: Set
predicate IsSubset(Set a, Set b)
symmetric predicate Disjoint(Set a, Set b)
predicate Named(Shape s, String name)
function Union(Set a, Set b) -> Set
constructor MkPoint(Number x, Number y) -> Point
constructor Ring(Point c)
"""


def domain():
    return check_domain(parse_domain(DOMAIN), DOMAIN)


def substance(text: str):
    return check_substance(parse_substance(text), domain(), text)


def test_domain_env_subtyping_and_signatures():
    env = domain()
    assert env.is_subtype("Circle", "Shape")  # transitive through Set
    assert env.is_subtype("Set", "Set")
    assert not env.is_subtype("Shape", "Set")
    assert env.predicates["Disjoint"].symmetric
    assert env.functions["Union"].arg_types == ("Set", "Set")
    assert env.constructors["Ring"].output == "Ring"  # short constructor form
    assert env.callable("MkPoint").kind == "constructor"


def test_substance_env_contents():
    env = substance(
        """Set A, B
Circle C
IsSubset(C, A)
Named(A, "first")
Set U := Union(A, B)
Point P := MkPoint(1, 2)
Let R := Ring(P)
Label A $\\alpha$
Label B "bee"
"""
    )
    assert env.objects == {"A": "Set", "B": "Set", "C": "Circle", "U": "Set", "P": "Point", "R": "Ring"}
    assert env.statements == (
        ObjectDecl("A", "Set"),
        ObjectDecl("B", "Set"),
        ObjectDecl("C", "Circle"),
        PredicateFact("IsSubset", ("C", "A")),
        PredicateFact("Named", ("A", Literal("first"))),
        ObjectDecl("U", "Set"),
        Binding("U", "Union", "function", ("A", "B")),
        ObjectDecl("P", "Point"),
        Binding("P", "MkPoint", "constructor", (Literal(1.0), Literal(2.0))),
        ObjectDecl("R", "Ring"),
        Binding("R", "Ring", "constructor", ("P",)),
    )
    assert env.labels["A"] == Label("\\alpha", "MathLabel")
    assert env.labels["B"] == Label("bee", "TextLabel")
    assert env.labels["C"] == Label("", "NoLabel")
    assert env.literals == (Literal("first"), Literal(1.0), Literal(2.0))


def test_let_uses_the_constructor_name_as_type():
    with pytest.raises(DiagramError) as info:
        substance("Let P := MkPoint(1, 2)\n")  # as in Penrose: there is no type `MkPoint`
    assert (info.value.kind, info.value.column) == ("TypeNotFound", 10)


def test_autolabel_all_relabels_everything_and_nolabel_clears():
    env = substance('Set A, B, C\nLabel A "x"\nAutoLabel All\nNoLabel C\n')
    # Penrose applies AutoLabel All after the explicit label, overwriting it
    assert env.labels == {
        "A": Label("A", "MathLabel"),
        "B": Label("B", "MathLabel"),
        "C": Label("", "NoLabel"),
    }


def test_index_sets_expand_in_penrose_order():
    env = substance(
        """Set s_i for i in [0, 3]
IsSubset(s_i, s_j) for i in [0, 3], j in [0, 3] where i == j + 1 || (i == 0 && j == 3)
Set t_i, u_i for i in [1, 2]
"""
    )
    names = [s.name for s in env.statements if isinstance(s, ObjectDecl)]
    assert names == ["s_0", "s_1", "s_2", "s_3", "t_1", "u_1", "t_2", "u_2"]
    facts = [s.args for s in env.statements if isinstance(s, PredicateFact)]
    # i outermost: (0,3), (1,0), (2,1), (3,2)
    assert facts == [("s_0", "s_3"), ("s_1", "s_0"), ("s_2", "s_1"), ("s_3", "s_2")]


def test_index_variable_as_argument_becomes_number():
    env = substance("Point p_i := MkPoint(i, 2) for i in [5, 6]\n")
    binds = [s for s in env.statements if isinstance(s, Binding)]
    assert [b.args for b in binds] == [(Literal(5.0), Literal(2.0)), (Literal(6.0), Literal(2.0))]


def test_large_index_set_is_fast_and_exact():
    env = substance(
        "Set s_i for i in [0, 400]\nIsSubset(s_i, s_j) for i in [0, 400], j in [0, 400] where i == 2 * j\n"
    )
    facts = [s.args for s in env.statements if isinstance(s, PredicateFact)]
    assert len(facts) == 201  # j in 0..200
    assert facts[-1] == ("s_400", "s_200")


def _error(text: str) -> DiagramError:
    with pytest.raises(DiagramError) as info:
        substance(text)
    return info.value


@pytest.mark.parametrize(
    ("text", "kind", "line", "column", "words"),
    [
        ("Set A\nBlob B\n", "TypeNotFound", 2, 1, "unknown type Blob"),
        ("Set A\nIsBig(A)\n", "TypeNotFound", 2, 1, "unknown predicate IsBig"),
        ("Set A\nSet U := Onion(A, A)\n", "TypeNotFound", 2, 10, "Onion"),
        ("Set A\nIsSubset(A, Z)\n", "VarNotFound", 2, 13, "unknown object Z"),
        # a near miss of a known name says which one (letter case aside); a far one does not guess
        (
            "Set A\nIsSubst(A, A)\n",
            "TypeNotFound",
            2,
            1,
            "unknown predicate IsSubst (did you mean IsSubset?)",
        ),
        ("Set A\nset B\n", "TypeNotFound", 2, 1, "unknown type set (did you mean Set?)"),
        ("Set A\nAutolabel All\n", "TypeNotFound", 2, 1, "unknown type Autolabel (did you mean AutoLabel?)"),
        (
            "Set Apple\nIsSubset(Apple, Aple)\n",
            "VarNotFound",
            2,
            17,
            "unknown object Aple (did you mean Apple?)",
        ),
        ("Set A\nSet U := Unon(A, A)\n", "TypeNotFound", 2, 10, "Unon (did you mean Union?)"),
        ("Set A\nSet A\n", "DuplicateName", 2, 5, "already declared"),
        ("Set A\nIsSubset(A)\n", "ArgLengthMismatch", 2, 1, "takes 2 argument(s) but got 1"),
        ("Set A\nPoint p\nIsSubset(A, p)\n", "TypeMismatch", 3, 13, "expected Set"),
        ("Shape S\nSet A\nIsSubset(S, A)\n", "TypeMismatch", 3, 10, "has type Shape"),
        ("Point p := Union(A, A)\n", "VarNotFound", 1, 18, "unknown object A"),
        ("Set A, B\nPoint p := Union(A, B)\n", "TypeMismatch", 2, 1, "cannot bind p"),
        ("String s\n", "DeclLiteralError", 1, 1, "built-in type String"),
        ("Set A\nLabel Q $q$\n", "VarNotFound", 2, 7, "unknown object Q"),
        ("Set s_i for i in [0, 1.5]\n", "BadSetIndexRangeError", 1, 22, "not an integer"),
        ("Set s_k for i in [0, 2]\n", "InvalidSetIndexingError", 1, 5, "not an index"),
        ("Set s_i for i in [0, 2], i in [0, 1]\n", "DuplicateIndexError", 1, 26, "declared twice"),
        ("Set s_i for i in [0, 2] where i / 0 > 1\n", "DivideByZeroError", 1, 31, "division by zero"),
    ],
)
def test_substance_errors_name_the_place(text, kind, line, column, words):
    err = _error(text)
    assert (err.kind, err.source, err.line, err.column) == (kind, "substance", line, column)
    assert words in err.message
    rendered = str(err)
    assert rendered.startswith(f"substance:{line}:{column}: ")
    src_line, caret = rendered.splitlines()[1:3]
    assert src_line == text.splitlines()[line - 1]
    assert caret == " " * (column - 1) + "^"


def test_a_name_far_from_every_known_one_gets_no_guess():
    assert "did you mean" not in _error("Set A\nBlob B\n").message
    assert "did you mean" not in _error("Set A\nZzz(A)\n").message


def test_several_substance_errors_are_reported_together():
    with pytest.raises(DiagramErrors) as info:
        substance("Set A\nBlob B\nIsBig(A)\n")
    assert [e.kind for e in info.value.errors] == ["TypeNotFound", "TypeNotFound"]
    assert [e.line for e in info.value.errors] == [2, 3]


@pytest.mark.parametrize(
    ("text", "kind", "line", "column"),
    [
        ("type A\ntype A\n", "TypeDeclared", 2, 6),
        ("type A\npredicate P(B b)\n", "TypeNotFound", 2, 13),
        ("type A\nA <: Q\n", "TypeNotFound", 2, 6),
        ("type A\nA <: String\n", "SubOrSuperLiteralTypeError", 2, 6),
        ("type A\nfunction f(A a) -> Number\n", "OutputLiteralTypeError", 2, 20),
        ("type A\ntype B\nA <: B\nB <: A\n", "CyclicSubtypes", 1, 6),
        ("type A\nsymmetric predicate P(A a, A b, A c)\n", "SymmetricArgLengthMismatch", 2, 21),
        ("type A\ntype B\nsymmetric predicate P(A a, B b)\n", "SymmetricTypeMismatch", 3, 21),
        ("type A\npredicate P(A a)\npredicate P(A a)\n", "DuplicateName", 3, 11),
    ],
)
def test_domain_errors(text, kind, line, column):
    with pytest.raises(DiagramError) as info:
        check_domain(parse_domain(text), text)
    err = info.value
    assert (err.kind, err.source, err.line, err.column) == (kind, "domain", line, column)
    assert str(err).splitlines()[1:] == [text.splitlines()[line - 1], " " * (column - 1) + "^"]
