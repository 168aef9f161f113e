"""The fast LALR loop and lexer of `parse_util` agree with lark's own, positions included.

Oracles:
- lark's `Lark.parse` (its own lexer and parser loop) driving the same builders: every
  registry Domain, Substance and Style text, and a few broken variants of each, must give
  the same AST (compared field by field, `pos` included, which `==` ignores) or the same
  error message;
- the source text itself: a `Name` starts where its text is, and a statement that begins
  with a keyword (`ensure`, `forall`, `Let`, ...) starts at that keyword.
"""

from __future__ import annotations

import dataclasses
import functools
import random
from typing import Any

import pytest

from energies.lang import ast as A
from energies.lang import parse_util
from energies.lang import style_ast as S
from energies.lang.errors import DiagramError
from energies.lang.parse import parse_domain, parse_style, parse_substance

PARSERS = {"domain": parse_domain, "substance": parse_substance, "style": parse_style}

# node type -> the keywords its text may start with
KEYWORD_NODES: dict[type, tuple[str, ...]] = {
    A.TypeDecl: ("type",),
    A.PredicateDecl: ("predicate", "symmetric"),
    A.FunctionDecl: ("function",),
    A.ConstructorDecl: ("constructor",),
    A.LabelDecl: ("Label",),
    A.AutoLabel: ("AutoLabel",),
    A.NoLabel: ("NoLabel",),
    S.Selector: ("forall",),
    S.Collector: ("collect",),
    S.Override: ("override",),
    S.Delete: ("delete",),
    S.ObjFn: ("encourage",),
    S.ConstrFn: ("ensure",),
}


@functools.cache
def field_names(cls: type) -> tuple[str, ...] | None:
    return tuple(f.name for f in dataclasses.fields(cls)) if dataclasses.is_dataclass(cls) else None


def full(node: Any) -> Any:
    """A node as nested tuples, positions included (dataclass `==` skips them)."""
    names = field_names(type(node))
    if names is not None:
        return (type(node).__name__, *(full(getattr(node, n)) for n in names))
    if isinstance(node, list | tuple):
        return (type(node).__name__, *(full(x) for x in node))
    return (type(node).__name__, repr(node))


def outcome(lang: str, text: str) -> Any:
    try:
        return full(PARSERS[lang].__wrapped__(text))  # uncached: both loops really run
    except DiagramError as err:
        return str(err)


def nodes(node: Any) -> Any:
    if isinstance(node, A.Pos):
        return
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        yield node
        for f in dataclasses.fields(node):
            yield from nodes(getattr(node, f.name))
    elif isinstance(node, list | tuple):
        for x in node:
            yield from nodes(x)


def programs(registry_trios: list[Any], every: int = 1) -> list[tuple[str, str]]:
    """The distinct registry programs of each language (every `every`-th, to keep the suite quick:
    the rest of the suite parses all of them with the fast loop)."""
    return [
        (lang, text)
        for lang in PARSERS
        for text in sorted({getattr(t, lang) for t in registry_trios})[::every]
    ]


def broken(text: str, rng: random.Random) -> str:
    """`text` cut, or with a stray character or `=`, at a random place."""
    k = rng.randrange(max(1, len(text)))
    return rng.choice(
        [text[:k], text[:k] + "@" + text[k:], text[:k] + "{" + text[k:], text[:k] + " = " + text[k:]]
    )


@pytest.fixture
def lark_loop(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Switches `run_parser` to lark's own `Lark.parse` while the returned function runs."""

    def run(lang: str, text: str) -> Any:
        with monkeypatch.context() as m:
            m.setattr(parse_util, "_run_lalr", lambda parser, text: parser.parse(text))
            return outcome(lang, text)

    return run


def test_registry_programs_parse_as_with_lark_loop(registry_trios, lark_loop):
    for lang, text in programs(registry_trios, every=3):
        fast = outcome(lang, text)
        assert not isinstance(fast, str), fast
        assert fast == lark_loop(lang, text), (lang, text[:200])


def test_broken_registry_programs_fail_as_with_lark_loop(registry_trios, lark_loop):
    rng = random.Random(20261121)
    errors = 0
    for lang, text in programs(registry_trios, every=2):
        bad = broken(text, rng)
        fast = outcome(lang, bad)
        assert fast == lark_loop(lang, bad), (lang, bad[-200:])
        errors += isinstance(fast, str)
    assert errors > 100  # most variants are errors: the error paths were exercised


def test_positions_point_at_the_source_text(registry_trios):
    checked = 0
    for lang, text in programs(registry_trios, every=2):
        lines = text.split("\n")
        for node in nodes(PARSERS[lang].__wrapped__(text)):
            if not node.pos.line:
                continue
            at = lines[node.pos.line - 1][node.pos.column - 1 :]
            if isinstance(node, A.Name):
                assert at.startswith(node.value), (lang, node)
                checked += 1
            elif type(node) in KEYWORD_NODES:
                assert at.startswith(KEYWORD_NODES[type(node)]), (lang, node.pos, at[:40])
                checked += 1
    assert checked > 5_000


def test_a_lark_without_the_expected_table_falls_back_to_lark_parse(monkeypatch: pytest.MonkeyPatch):
    from energies.lang.parse import StyleBuilder

    text = "canvas {\n  width = 400\n  height = 300\n}\nforall Set x {\n  x.icon = Circle { r : 10 }\n}\n"
    expected = outcome("style", text)

    def unreadable(parser: Any) -> Any:
        raise AttributeError("'ParseConf' object has no attribute 'states'")

    def must_not_run(parser: Any, text: str) -> Any:
        raise AssertionError("the own loop ran")

    monkeypatch.setattr(parse_util, "_rows", unreadable)
    monkeypatch.setattr(parse_util, "_run_lalr", must_not_run)
    parse_util._own_loop_fits.cache_clear()
    try:
        assert not parse_util._own_loop_fits(parse_util.make_parser("style", StyleBuilder))
        assert outcome("style", text) == expected
        with pytest.raises(DiagramError, match="style:2:11: unexpected token"):
            PARSERS["style"].__wrapped__("canvas {\n  width = = 400\n}\n")
    finally:
        parse_util._own_loop_fits.cache_clear()


def test_prepared_parsers_compile_every_lexer_before_parsing():
    # the start-up work leaves no parser state without its lexer: lark compiles one on a state's
    # first use, which a program reaching new states paid for while being timed
    from energies.lang.parse import StyleBuilder, _DomainBuilder, _SubstanceBuilder, prepare_parsers
    from energies.lang.parse_util import make_parser

    prepare_parsers()
    for lang, builder in (
        ("domain", _DomainBuilder),
        ("substance", _SubstanceBuilder),
        ("style", StyleBuilder),
    ):
        lexers = make_parser(lang, builder).parse_interactive("").lexer_thread.lexer.lexers
        assert len(lexers) > 100 and all(basic._scanner is not None for basic in lexers.values())
