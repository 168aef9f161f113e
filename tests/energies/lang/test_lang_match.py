"""Selector matching on crafted programs; every expectation below is derived by hand."""

from __future__ import annotations

import pytest

from energies.lang import style_ast as S
from energies.lang.domain_env import check_domain
from energies.lang.errors import DiagramError
from energies.lang.match import CollectionMatch, match_style
from energies.lang.parse import parse_domain, parse_style, parse_substance
from energies.lang.substance_env import Literal, check_substance

DOMAIN = """type Set
type Point
type Circle <: Set
predicate IsSubset(Set a, Set b)
symmetric predicate Disjoint(Set a, Set b)
predicate On(Point p, Set s)
predicate Named(Set s, String n)
function Union(Set a, Set b) -> Set
"""

SUBSTANCE = """Set A, B
Circle C
IsSubset(C, A)
IsSubset(B, A)
Disjoint(B, C)
Point p, q
On(p, A)
On(q, A)
On(q, B)
Set U := Union(A, B)
Named(A, "alpha")
Label A $A$
Label B "bee"
"""


def blocks(style: str, domain: str = DOMAIN, substance: str = SUBSTANCE):
    denv = check_domain(parse_domain(domain), domain)
    senv = check_substance(parse_substance(substance), denv, substance)
    return match_style(parse_style(style), denv, senv, style)


def substs(header: str, keys: str) -> list[tuple]:
    """The matches of a single selector, as tuples of the given variables' values."""
    (bm,) = blocks(header + " {}")
    return [tuple(m.subst[k] for k in keys.split()) for m in bm.matches]


@pytest.mark.parametrize(
    ("header", "keys", "expected"),
    [
        # subtypes match (Circle <: Set), in declaration order
        ("forall Set x", "x", [("A",), ("B",), ("C",), ("U",)]),
        ("forall Circle x", "x", [("C",)]),
        # two free variables: each unordered pair once, never the same object twice
        (
            "forall Set x; Set y",
            "x y",
            [("A", "B"), ("A", "C"), ("A", "U"), ("B", "C"), ("B", "U"), ("C", "U")],
        ),
        # repeatable allows x == y; pairs are still deduplicated as sets
        (
            "forall repeatable Set x; Set y",
            "x y",
            [("A", "A"), ("A", "B"), ("A", "C"), ("A", "U"), ("B", "B")]
            + [("B", "C"), ("B", "U"), ("C", "C"), ("C", "U"), ("U", "U")],
        ),
        # predicates in Substance order
        ("forall Set x, y where IsSubset(x, y)", "x y", [("C", "A"), ("B", "A")]),
        # a symmetric predicate matches both ways, the flip is a duplicate of the same fact
        ("forall Set x, y where Disjoint(x, y)", "x y", [("B", "C")]),
        ("forall Set x, y where Disjoint(y, x)", "x y", [("C", "B")]),
        # ... but the flip matters when another relation pins the order
        (
            "forall Set x, y, z where Disjoint(x, y); IsSubset(y, z)",
            "x y z",
            [("B", "C", "A"), ("C", "B", "A")],
        ),
        ("forall Point p; Set s where On(p, s)", "p s", [("p", "A"), ("q", "A"), ("q", "B")]),
        ("forall Point p with Set s where On(p, s)", "p s", [("p", "A"), ("q", "A"), ("q", "B")]),
        ("forall Set u, a, b where u := Union(a, b)", "u a b", [("U", "A", "B")]),
        ("forall Set s; String n where Named(s, n)", "s n", [("A", Literal("alpha"))]),
        # an undeclared variable in a String position is inferred to be a String
        ("forall Set s where Named(s, n)", "s n", [("A", Literal("alpha"))]),
        ('forall Set s where Named(s, "alpha")', "s", [("A",)]),
        ('forall Set s where Named(s, "beta")', "s", []),
        ("forall Set s where s has label", "s", [("A",), ("B",)]),
        ("forall Set s where s has math label", "s", [("A",)]),
        ("forall Set s where s has text label", "s", [("B",)]),
        ("forall Set `A`", "`A`", [("A",)]),
        ("forall Set x; Set `A` where IsSubset(x, `A`)", "x `A`", [("C", "A"), ("B", "A")]),
        ("forall Set x, y where IsSubset(x, y); IsSubset(y, x)", "x", []),
        ("forall Set x, y; Point p where On(p, x); IsSubset(x, y)", "p x y", [("q", "B", "A")]),
    ],
)
def test_selector_matches(header, keys, expected):
    assert substs(header, keys) == expected


def test_alias_binds_the_predicate_instance():
    assert substs("forall Set x, y where IsSubset(x, y) as r", "r") == [("IsSubset_C_A",), ("IsSubset_B_A",)]


def test_match_metadata_and_namespaces():
    canvas, sel = blocks("canvas { width = 1 }\nforall Set x, y where IsSubset(x, y) { }")
    assert [(m.subst, m.match_id, m.match_total) for m in canvas.matches] == [({}, 1, 1)]
    assert [(m.match_id, m.match_total) for m in sel.matches] == [(1, 2), (2, 2)]
    assert (canvas.item_index, sel.item_index) == (0, 1)
    assert sel.var_types == {"x": "Set", "y": "Set"}


def test_collect_groups_by_foreach_in_first_appearance_order():
    (bm,) = blocks("collect Point p into ps where On(p, s) foreach Set s { }")
    assert bm.matches == (
        CollectionMatch({"s": "A"}, "ps", ("p", "q"), 1, 2),
        CollectionMatch({"s": "B"}, "ps", ("q",), 2, 2),
    )


def test_collect_without_foreach_is_one_collection():
    (bm,) = blocks("collect Set s into all { }")
    assert bm.matches == (CollectionMatch({}, "all", ("A", "B", "C", "U"), 1, 1),)


def test_block_index_counts_layout_items():
    _, bm = blocks("layout = [a]\ncanvas { }\nforall Circle c { }")
    assert bm.item_index == 2 and isinstance(bm.block.header, S.Selector)


@pytest.mark.parametrize(
    ("style", "kind", "line", "column"),
    [
        ("canvas {}\nforall Blob x {}", "TypeNotFound", 2, 8),
        ("forall Set x where Isbig(x) {}", "TypeNotFound", 1, 20),
        ("forall Set x where IsSubset(x, y) {}", "VarNotFound", 1, 32),
        ("forall Set x, x {}", "SelectorVarMultipleDecl", 1, 15),
        ("forall Set x where IsSubset(x) {}", "ArgLengthMismatch", 1, 20),
        ("forall Point p; Set x where IsSubset(p, x) {}", "TypeMismatch", 1, 38),
        ("forall Set x, y where IsSubset(x, y) as Set {}", "SelectorAliasNamingError", 1, 41),
        ("forall Set x, y where IsSubset(x, y) as y {}", "SelectorAliasNamingError", 1, 41),
        ("forall Set x where x has color {}", "SelectorFieldNotSupported", 1, 26),
        ("forall Point p; Set a, b where p := Union(a, b) {}", "TypeMismatch", 1, 32),
        ("forall Set x where x := Onion(x) {}", "TypeNotFound", 1, 25),
        ("forall Set x where IsSubset(x, `A`) {}", "VarNotFound", 1, 32),
    ],
)
def test_selector_errors_name_the_place(style, kind, line, column):
    with pytest.raises(DiagramError) as info:
        blocks(style)
    err = info.value
    assert (err.kind, err.source, err.line, err.column) == (kind, "style", line, column)
    assert str(err).splitlines()[2] == " " * (column - 1) + "^"


def test_exploding_selector_is_refused_not_enumerated():
    many = "Set " + ", ".join(f"s{i}" for i in range(120)) + "\n"
    with pytest.raises(DiagramError) as info:
        blocks("forall Set a; Set b; Set c; Set d {}", substance=many)
    assert info.value.kind == "MatchLimitError"


def test_hand_counted_registry_trio(registry_trios):
    """set-theory-domain/tree-venn: counts read off tree.substance by hand."""
    trio = next(t for t in registry_trios if t.key == "set-theory-domain/tree-venn")
    got = blocks(trio.style, trio.domain, trio.substance)
    by_header = {}
    for bm in got:
        h = bm.block.header
        rel = h.where[0].name.value if isinstance(h, S.Selector) and h.where else type(h).__name__
        by_header[rel] = [tuple(m.subst.values()) for m in bm.matches]
    assert len(by_header["Selector"]) == 7  # Set A..G
    assert by_header["IsSubset"] == [("B", "A"), ("C", "A"), ("D", "B"), ("E", "B"), ("F", "C"), ("G", "C")]
    assert by_header["NotIntersecting"] == [("E", "D"), ("F", "G"), ("B", "C")]
    assert by_header["Intersecting"] == []


# Scenarios documented by Penrose's own compiler tests (Style.test.ts, "number of matchings",
# "symmetric predicates", "predicate alias", "faster matching", "selector literals"), restated
# here as data; the expected number of matches is what Penrose reports for them.
ATOMS = "type Atom\ntype Hydrogen <: Atom\ntype Oxygen <: Atom\n"
PENROSE_SCENARIOS = [
    (
        ATOMS + "predicate Bond(Atom, Atom)",
        "Hydrogen H\nOxygen O\nBond(H, O)",
        "forall Hydrogen h; Oxygen o where Bond(o, h)",
        0,
    ),
    (
        ATOMS + "symmetric predicate Bond(Atom, Atom)",
        "Hydrogen H\nOxygen O\nBond(H, O)",
        "forall Hydrogen h; Oxygen o where Bond(o, h)",
        1,
    ),
    (
        "type Set\nsymmetric predicate Equal(Set, Set)",
        "Set A, B, C\nEqual(A, B)\nEqual(A, C)",
        "forall Set x, y, z where Equal(x, y); Equal(y, z)",
        1,
    ),
    (
        ATOMS + "predicate Bond(Atom, Atom)",
        "Hydrogen H1, H2\nOxygen O\nBond(O, H1)\nBond(O, H2)",
        "forall Oxygen o; Hydrogen h1; Hydrogen h2 where Bond(o, h1); Bond(o, h2)",
        1,
    ),
    (
        "type Atom\nsymmetric predicate Bond(Atom, Atom)",
        "Atom A1, A2\nBond(A1, A2)",
        "forall Atom a1; Atom a2 where Bond(a1, a2)",
        1,
    ),
    (
        ATOMS + "predicate Bond(Atom, Atom)",
        "Hydrogen H1, H2\nOxygen O\nBond(O, H1)\nBond(O, H2)\nHydrogen H3, H4",
        "forall Oxygen o; Hydrogen h1; Hydrogen h2; Hydrogen h3 where Bond(o, h1); Bond(o, h2)",
        2,
    ),
    ("type Atom", "Atom A1, A2", "forall Atom a1; Atom a2", 1),
    (
        "type T\npredicate P(T, T, T)",
        "T t1, t2, t3\nP(t1, t2, t3)\nP(t1, t1, t3)\nP(t2, t2, t3)\nP(t1, t3, t1)",
        "forall repeatable T t1; T t2",
        6,
    ),
    (
        "type T\npredicate P(T, T, T)",
        "T t1, t2, t3\nP(t1, t2, t3)\nP(t1, t1, t3)\nP(t2, t2, t3)\nP(t1, t3, t1)",
        "forall repeatable T t1; T t2; T t3 where P(t1, t2, t3)",
        4,
    ),
    (
        ATOMS + "symmetric predicate Bond(Atom, Atom)",
        "Hydrogen H1, H2\nOxygen O\nBond(O, H1)\nBond(O, H2)",
        "forall Oxygen o; Hydrogen h where Bond(h, o) as b",
        2,
    ),
    (
        "type Set\npredicate Subset(Set, Set)",
        "Set A\nSet B\nSet C\nSubset(B, A)\nSubset(C, B)",
        "forall Set a; Set b where Subset(a, b) as foo",
        2,
    ),
    (
        "type MySet\ntype OtherType\npredicate MyPred(OtherType, MySet, MySet)\n"
        "predicate MyOtherPred(MySet, MySet)",
        "MySet X, Y\nOtherType Z\nMyPred(Z, X, Y)\nMyOtherPred(X, Y)",
        "forall MySet X; MySet Y; OtherType Z where MyPred(Z, X, Y); MyOtherPred(X, Y)",
        1,
    ),
    (
        "type S\ntype T\nconstructor f(T t1, T t2, T t3, T t4, T t5, T t6, T t7, T t8) -> S",
        "T t1, t2, t3, t4, t5, t6, t7, t8\nS s := f(t1, t2, t3, t4, t5, t6, t7, t8)",
        "forall S s; T t1; T t2; T t3; T t4; T t5; T t6; T t7; T t8 "
        "where s := f(t1, t2, t3, t4, t5, t6, t7, t8)",
        1,
    ),
    (
        "predicate Even(Number n)",
        "Even(-4)\nEven(-2)\nEven(0)\nEven(2)\nEven(4)",
        "forall Number n where Even(n)",
        5,
    ),
    (
        "type Set\npredicate Has(Set s, Number n)",
        "Set s\nHas(s, -1.234)\nHas(s, 3)\nHas(s, 5.678)",
        "forall Set s where Has(s, n)",
        3,
    ),
    (
        "type Set\npredicate Has(Set s, String str)",
        'Set s1, s2\nHas(s1, "Up")\nHas(s2, "Down")',
        'forall Set s where Has(s, "Down")',
        1,
    ),
    ("type MyType", "MyType t1, t2, t3", "forall MyType t", 3),
]


@pytest.mark.parametrize(("domain", "substance", "header", "count"), PENROSE_SCENARIOS)
def test_penrose_documented_match_counts(domain, substance, header, count):
    (bm,) = blocks(header + " {}", domain, substance)
    assert len(bm.matches) == count


def test_penrose_documented_collections():
    domain = "type T\ntype U\npredicate P(T, U)"
    substance = "T t1, t2, t3\nU u1, u2\nP(t1, u1)\nP(t2, u1)\nP(t3, u2)\nAutoLabel All"
    pure, grouped = blocks(
        "collect T t into ts {}\ncollect T t into ts where P(t, u) foreach U u {}", domain, substance
    )
    assert [len(m.contents) for m in pure.matches] == [3]
    assert sorted(len(m.contents) for m in grouped.matches) == [1, 2]
    literal_domain = "type Set\npredicate Has(Set s, Number n)"
    literal_sub = "Set s1, s2\nHas(s1, 1)\nHas(s1, 5)\nHas(s1, 100)\nHas(s2, -1)\nHas(s2, -5)\nHas(s2, -100)"
    (means,) = blocks(
        "collect Number n into ns where Has(s, n) foreach Set s {}", literal_domain, literal_sub
    )
    by_set = {m.groupby["s"]: [lit.value for lit in m.contents] for m in means.matches}
    assert by_set == {"s1": [1.0, 5.0, 100.0], "s2": [-1.0, -5.0, -100.0]}
    assert means.matches[0].contents[0].unique_name == "{n1}"


def test_run_front_end_and_literal_names():
    from energies.lang import run_front_end
    from energies.lang.substance_env import unique_name

    fe = run_front_end(
        "type Set\npredicate Has(Set s, Number n)\npredicate Tag(Set s, String t)",
        'Set A\nHas(A, 3)\nHas(A, -1.5)\nTag(A, "hi")',
        "forall Set s; Number n where Has(s, n) { }\nforall Set s where Tag(s, t) { }",
    )
    has, tag = fe.blocks
    assert [unique_name(m.subst["n"]) for m in has.matches] == ["{n3}", "{n-1.5}"]
    assert [unique_name(m.subst["t"]) for m in tag.matches] == ["{shi}"]
    assert unique_name(has.matches[0].subst["s"]) == "A"
