"""Hypothesis against the languages' entry points: whatever the text, a program is built or refused
with a DiagramError naming a place inside it; nothing else escapes (no KeyError, no MemoryError,
no hang: each example runs under a deadline, and running out of it is the one other answer).

Programs are drawn from each language's own vocabulary (keywords, names, punctuation, odd numbers
and strings with control characters), so most examples get past the lexer into the checkers, the
matcher and the Style evaluator.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from energies.diagram_build import build_diagram
from energies.lang.errors import DiagramError
from energies.limits import DeadlineExceeded, deadline

DOMAIN = "type Set\ntype Point\nPoint <: Set\npredicate In(Set, Set)\nfunction Pair(Set, Set) -> Set\n"
SUBSTANCE = 'Set A, B\nPoint p\nIn(A, B)\nSet C := Pair(A, B)\nLabel A $x^2$\nLabel B "b"\n'
STYLE = "canvas {\n  width = 400\n  height = 300\n}\n"

NUMBERS = ["0", "1", "-1", "2.5", "1e308", "-1e308", "1e-320", "100000000000", "3000000"]
STRINGS = ['"s"', '""', '"\\x00"', '"a\x01b"', '"\x1b"', '"url(http://e/)"', '"on"', '"$x$"']
PUNCTUATION = ["{", "}", "(", ")", "[", "]", "=", ":", ",", ";", ".", "+", "-", "*", "/", "^", "?", "<:"]
STYLE_WORDS = [
    "forall",
    "where",
    "with",
    "as",
    "in",
    "except",
    "collect",
    "into",
    "foreach",
    "namespace",
    "canvas",
    "width",
    "height",
    "Set",
    "Point",
    "s",
    "t",
    "u",
    "A",
    "B",
    "In",
    "Pair",
    "ensure",
    "encourage",
    "override",
    "delete",
    "layer",
    "above",
    "below",
    "has",
    "label",
    "math",
    "text",
    "Circle",
    "Rectangle",
    "Text",
    "Equation",
    "Line",
    "Path",
    "Polygon",
    "Group",
    "Image",
    "shapes",
    "string",
    "center",
    "r",
    "fillColor",
    "disjoint",
    "contains",
    "near",
    "lessThan",
    "equal",
    "repeat",
    "identity",
    "count",
    "sum",
    "rgba",
    "get",
    "match_id",
    "match_total",
    "onmouseover",
    "style",
    "href",
    "x",
    "y",
]
SUBSTANCE_WORDS = [
    "Set",
    "Point",
    "A",
    "B",
    "C",
    "p",
    "q",
    "In",
    "Pair",
    "Label",
    "AutoLabel",
    "All",
    "NoLabel",
    "for",
    "in",
    "where",
    "i",
    "j",
    "s_i",
    "p_i",
    "true",
    "false",
    ":=",
    "=",
    "==",
    "<",
    ">",
    "&&",
    "||",
    "%",
    "(",
    ")",
    ",",
    ";",
]
DOMAIN_WORDS = [
    "type",
    "subtype",
    "predicate",
    "function",
    "constructor",
    "symmetric",
    "Set",
    "Point",
    "In",
    "Pair",
    "->",
    "<:",
    "(",
    ")",
    ",",
    ":",
    "a",
    "b",
    "literal",
    "String",
    "Number",
]


def program(words: list[str]) -> st.SearchStrategy[str]:
    """Token soup: exercises the lexers and parsers' error paths."""
    token = st.sampled_from(words + NUMBERS + STRINGS + PUNCTUATION)
    separator = st.sampled_from([" ", " ", "\n", ""])
    return st.lists(st.tuples(token, separator), max_size=60).map(
        lambda parts: "".join(t + s for t, s in parts)
    )


# -- well-formed programs with arbitrary parts: exercise the checkers, matcher and evaluator -----------

FIELDS = ["c", "t", "x", "v", "l"]
PATHS = st.sampled_from(["s.c", "s.t", "s.x", "s.v", "s.c.r", "s.c.center", "s.t.width", "s.label", "t.c"])
FUNCTIONS = ["repeat", "identity", "count", "sum", "get", "rgba", "max", "sqrt", "norm", "vdist", "dot"]
SHAPES = ["Circle", "Rectangle", "Text", "Equation", "Line", "Polygon", "Path", "Image", "Group"]
PROPS = [
    "r",
    "center",
    "width",
    "string",
    "fillColor",
    "points",
    "start",
    "end",
    "href",
    "shapes",
    "style",
    "onclick",
    "d",
]
OPS = ["+", "-", "*", "/", "^"]


def exprs() -> st.SearchStrategy[str]:
    leaf = st.sampled_from(NUMBERS + STRINGS) | PATHS | st.just("?")
    return st.recursive(
        leaf,
        lambda inner: (
            st.tuples(inner, st.sampled_from(OPS), inner).map(lambda t: f"({t[0]} {t[1]} {t[2]})")
            | st.tuples(st.sampled_from(FUNCTIONS), st.lists(inner, max_size=3)).map(
                lambda t: f"{t[0]}({', '.join(t[1])})"
            )
            | st.lists(inner, min_size=2, max_size=3).map(lambda xs: f"({', '.join(xs)})")
            | st.lists(inner, max_size=3).map(lambda xs: f"[{', '.join(xs)}]")
        ),
        max_leaves=8,
    )


def statements() -> st.SearchStrategy[str]:
    field = st.sampled_from(FIELDS)
    shape = st.tuples(
        st.sampled_from(SHAPES), st.lists(st.tuples(st.sampled_from(PROPS), exprs()), max_size=3)
    )
    goal = st.tuples(
        st.sampled_from(["ensure", "encourage"]),
        st.sampled_from(["disjoint", "contains", "near", "lessThan", "equal", "onCanvas", "nope"]),
        st.lists(exprs(), max_size=3),
    )
    return st.one_of(
        st.tuples(field, exprs()).map(lambda t: f"s.{t[0]} = {t[1]}"),
        st.tuples(field, shape).map(
            lambda t: f"s.{t[0]} = {t[1][0]} {{ " + " ".join(f"{k}: {v}" for k, v in t[1][1]) + " }"
        ),
        goal.map(lambda t: f"{t[0]} {t[1]}({', '.join(t[2])})"),
        st.tuples(field, exprs()).map(lambda t: f"override s.{t[0]} = {t[1]}"),
        field.map(lambda f: f"delete s.{f}"),
        st.tuples(field, field).map(lambda t: f"layer s.{t[0]} above s.{t[1]}"),
    )


HEADERS = [
    "forall Set s",
    "forall Point s",
    "forall Set s; Set t where In(s, t)",
    "forall Set s where s has label",
]
STYLES = st.lists(
    st.tuples(st.sampled_from(HEADERS), st.lists(statements(), min_size=1, max_size=5)),
    min_size=1,
    max_size=3,
).map(lambda blocks: STYLE + "".join(f"{h} {{\n  " + "\n  ".join(body) + "\n}\n" for h, body in blocks))

NAMES = st.sampled_from(["A", "B", "C", "p", "q", "s_i", "p_i"])
SUBSTANCE_STATEMENTS = st.one_of(
    st.tuples(st.sampled_from(["Set", "Point"]), NAMES).map(lambda t: f"{t[0]} {t[1]}"),
    st.tuples(NAMES, NAMES).map(lambda t: f"In({t[0]}, {t[1]})"),
    st.tuples(NAMES, NAMES, NAMES).map(lambda t: f"Set {t[0]} := Pair({t[1]}, {t[2]})"),
    st.tuples(NAMES, st.sampled_from(STRINGS + ["$x^2$", "$\\frac{1}{0}$", "$\x01$"])).map(
        lambda t: f"Label {t[0]} {t[1]}"
    ),
    st.sampled_from(["AutoLabel All", "NoLabel A"]),
    st.tuples(
        st.sampled_from(["Set s_i", "In(s_i, s_j)", "Point p_i"]),
        st.sampled_from(NUMBERS),
        st.sampled_from(NUMBERS),
        st.sampled_from(["", " where i > 2", " where i % 0 == 1", " where i == j + 1"]),
    ).map(lambda t: f"{t[0]} for i in [{t[1]}, {t[2]}]{t[3]}"),
)
SUBSTANCES = st.lists(SUBSTANCE_STATEMENTS, max_size=8).map("\n".join)


def built_or_refused(domain: str, substance: str, style: str) -> None:
    try:
        with deadline(5.0):
            build_diagram(domain, substance, style, "fuzz")
    except DiagramError as e:
        for error in getattr(e, "errors", (e,)):
            assert error.source in ("domain", "substance", "style")
            assert error.line >= 0 and error.column >= 0 and error.message
    except DeadlineExceeded:
        pass


FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


@FUZZ
@given(style=program(STYLE_WORDS))
def test_any_style_is_built_or_refused_with_its_place(style):
    built_or_refused(DOMAIN, SUBSTANCE, STYLE + style)


@FUZZ
@given(style=STYLES)
def test_any_well_formed_style_is_built_or_refused_with_its_place(style):
    built_or_refused(DOMAIN, SUBSTANCE, style)


@FUZZ
@given(substance=SUBSTANCES, style=STYLES)
def test_any_well_formed_substance_is_built_or_refused_with_its_place(substance, style):
    built_or_refused(DOMAIN, substance, style)


@FUZZ
@given(substance=program(SUBSTANCE_WORDS))
def test_any_substance_is_built_or_refused_with_its_place(substance):
    built_or_refused(DOMAIN, substance, STYLE + "forall Set s {\n  s.c = Circle { }\n}\n")


@FUZZ
@given(domain=program(DOMAIN_WORDS))
def test_any_domain_is_built_or_refused_with_its_place(domain):
    built_or_refused(domain, SUBSTANCE, STYLE)


@pytest.mark.parametrize("text", ["\x00", "\ud800", "\ufeff", "{" * 5000, "(" * 5000 + "1", "a" * 200_000])
def test_odd_texts_in_every_program(text):
    built_or_refused(text, SUBSTANCE, STYLE)
    built_or_refused(DOMAIN, text, STYLE)
    built_or_refused(DOMAIN, SUBSTANCE, STYLE + text)
