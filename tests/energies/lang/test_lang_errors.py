"""Syntax errors: located, with an excerpt and caret; malformed registry trios never crash."""

from __future__ import annotations

import random
import re
import signal
from contextlib import contextmanager

import pytest

from energies.lang.domain_env import check_domain
from energies.lang.errors import DiagramError, DiagramWarning, visible_warnings
from energies.lang.match import match_style
from energies.lang.parse import parse_domain, parse_style, parse_substance
from energies.lang.substance_env import check_substance


@pytest.mark.parametrize(
    ("parse", "text", "line", "column", "words"),
    [
        (parse_style, "forall Set x {\n  x.a = (1, \n}", 3, 1, "unexpected token '}'"),
        (parse_style, "forall Set x {\n  x.a = 1 @ 2\n}", 2, 11, "unexpected character '@'"),
        (
            parse_style,
            "forall Set x {\n  x.a = 1",
            1,
            14,
            "never closed: end its block with } (the parser stopped 1 line below: unexpected end of input",
        ),
        # an unclosed block is reported at its opening brace, not where the parser noticed
        (parse_style, "forall Set x {\n  x.a = 1\n\nforall Set y {\n}", 1, 14, "this { is never closed"),
        (parse_style, "forall Set x {\n  x.c = Circle {\n}", 2, 16, "this { is never closed"),
        (parse_style, "forall Set x {\n  x.c = Circle {\n  }\n", 1, 14, "this { is never closed"),
        (
            parse_style,
            '-- a { in a comment\nforall Set x {\n  x.s = "{"\n  x.a = (1, \n}',
            5,
            1,
            "unexpected",
        ),
        (parse_style, "forall Set x where {\n}", 1, 20, "unexpected token '{'"),
        (parse_style, 'canvas {\n  s = "open\n}', 2, 7, "unexpected character '\"'"),
        (parse_style, "shapes = [a]\n", 1, 1, "only `layout = [...]`"),
        (parse_style, "collect Set s into c where A(s) where B(s) {}", 1, 1, "more than one `where`"),
        (parse_style, "canvas { c = #12345 }", 1, 14, "3, 4, 6 or 8 hex digits"),
        (parse_substance, "Set A\nIsSubset(A, B\nSet C", 2, 14, "expected"),
        (parse_substance, "Set A\nLabel A $unterminated\n", 2, 9, "unexpected character '$'"),
        (parse_substance, "Let x := y\n", 1, 1, "`Let` needs a function"),
        (parse_domain, "type A\npredicate P(A a\n", 2, 16, "unexpected end of line; expected ',', ')'"),
        # a misspelt keyword is named where it stands, not where the parser noticed
        (
            parse_style,
            "forall Set x {\n  ensur x.r > 30\n}",
            2,
            3,
            "unknown keyword ensur (did you mean ensure?)",
        ),
        (parse_style, "forall Set x {\n  encourag near(x.a, x.b)\n}", 2, 3, "did you mean encourage?"),
        (parse_domain, "typ Set\n", 1, 1, "unknown keyword typ (did you mean type?)"),
        (parse_domain, "type Set\npredicat In(Set a)\n", 2, 1, "did you mean predicate?"),
        (parse_domain, "type\n", 1, 5, "expected a name"),
    ],
)
def test_syntax_errors_are_located(parse, text, line, column, words):
    with pytest.raises(DiagramError) as info:
        parse(text)
    err = info.value
    assert (err.line, err.column) == (line, column)
    assert words in err.message
    head, src, caret = str(err).splitlines()
    assert head.startswith(f"{err.source}:{line}:{column}: ")
    assert src == text.splitlines()[line - 1]
    assert caret == " " * (column - 1) + "^"


def test_a_line_that_begins_with_no_near_keyword_gets_no_guess():
    with pytest.raises(DiagramError) as info:
        parse_style("forall Set x {\n  zzz x.r > 30\n}")
    assert "did you mean" not in info.value.message and info.value.column > 3


def test_errors_come_in_reading_order():
    """A Style is evaluated in dependency order, but its errors are listed from the top."""
    from energies.lang.errors import DiagramErrors, raise_all

    errors = [
        DiagramError("style", 9, 1, "late"),
        DiagramError("substance", 4, 2, "sub"),
        DiagramError("style", 2, 7, "early"),
    ]
    with pytest.raises(DiagramErrors) as info:
        raise_all(errors)
    assert [e.message for e in info.value.errors] == ["sub", "early", "late"]


def test_an_error_of_the_whole_program_shows_no_place():
    assert str(DiagramError("style", 0, 0, "the Style must set canvas.width")) == (
        "style: the Style must set canvas.width"
    )


def test_warning_filter_honors_exclude_warnings():
    warns = [
        DiagramWarning("BBoxApproximationWarning", "approx"),
        DiagramWarning("NoopDeleteWarning", "noop"),
    ]
    assert visible_warnings(warns, ["BBoxApproximationWarning"]) == [warns[1]]
    assert visible_warnings(warns, None) == warns


# ---- malformed variants of registry trios --------------------------------------------

_TOKEN = re.compile(r"[A-Za-z_][A-Za-z_0-9]*|\d+(?:\.\d+)?|[^\sA-Za-z_0-9]")


def _mutate(text: str, rng: random.Random) -> str:
    """One random edit: delete a line, swap or drop a token, rename an identifier, add junk."""
    tokens = list(_TOKEN.finditer(text))
    lines = text.split("\n")
    op = rng.choice(["delete_line", "swap", "drop", "rename", "junk", "duplicate_line"])
    if op in ("delete_line", "duplicate_line") or len(tokens) < 2:
        i = rng.randrange(len(lines))
        lines[i : i + 1] = [] if op == "delete_line" else [lines[i], lines[i]]
        return "\n".join(lines)
    i = rng.randrange(len(tokens) - 1)
    a, b = tokens[i], tokens[i + 1]
    if op == "swap":
        return text[: a.start()] + b.group() + text[a.end() : b.start()] + a.group() + text[b.end() :]
    if op == "drop":
        return text[: a.start()] + text[a.end() :]
    if op == "rename":
        idents = [t for t in tokens if t.group()[0].isalpha()]
        t = rng.choice(idents or tokens)
        return text[: t.start()] + "Zq" + t.group() + text[t.end() :]
    junk = rng.choice(["(", ")", "{", "}", ",", ";", ":=", "$", '"', "#", "->", "<:", "?", "[", "."])
    return text[: a.start()] + junk + text[a.start() :]


@contextmanager
def _time_limit(seconds: float):
    def fail(signum, frame):
        raise TimeoutError(f"case took longer than {seconds} s")

    previous = signal.signal(signal.SIGALRM, fail)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _run_pipeline(domain: str, substance: str, style: str) -> None:
    denv = check_domain(parse_domain(domain), domain)
    senv = check_substance(parse_substance(substance), denv, substance)
    match_style(parse_style(style), denv, senv, style)


def test_malformed_registry_trios_raise_diagram_errors_only(registry_trios):
    rng = random.Random(20261121)
    trios = rng.sample(registry_trios, 40)
    outcomes = {"error": 0, "ok": 0}
    for case in range(240):
        trio = trios[case % len(trios)]
        parts = {"domain": trio.domain, "substance": trio.substance, "style": trio.style}
        target = ("domain", "substance", "style")[case % 3]
        parts[target] = _mutate(parts[target], rng)
        try:
            with _time_limit(10.0):
                _run_pipeline(parts["domain"], parts["substance"], parts["style"])
            outcomes["ok"] += 1
        except DiagramError as err:
            outcomes["error"] += 1
            text = parts[err.source]
            assert 1 <= err.line <= max(1, text.count("\n") + 1), (trio.key, target, str(err))
            assert err.excerpt, (trio.key, str(err))
        except Exception as exc:  # noqa: BLE001 - any other exception is the bug under test
            pytest.fail(f"{trio.key} ({target} mutated, case {case}): {type(exc).__name__}: {exc}")
    # most single edits break a program; some (e.g. deleting a blank line) do not
    assert outcomes["error"] > 120


@pytest.mark.parametrize(
    ("substance", "style"),
    [
        ("Set A", "canvas { x = " + "(" * 3000 + "1" + ")" * 3000 + " }"),
        ("Set A", "canvas { x = " + "+".join(["1"] * 20000) + " }"),
        ("Set s_i for i in [0, 3] where " + "-(" * 3000 + "i" + ")" * 3000 + " > 1", "canvas {}"),
        ("Set s_i for i in [0, 100000000]", "canvas {}"),
        ("Set A\n" * 2 + "\x00", "canvas {}"),
        ("Set A", 'canvas { s = "\\" }'),
    ],
)
def test_pathological_inputs_end_in_a_result_or_a_diagram_error(substance, style):
    domain = "type Set\npredicate P(Set a)"
    with _time_limit(10.0):
        try:
            _run_pipeline(domain, substance, style)
        except DiagramError as err:
            assert err.line >= 1 and err.excerpt
