"""Parsers for Domain, Substance and Style: lark LALR grammars -> frozen-dataclass ASTs.

    parse_domain(text: str) -> DomainProg
    parse_substance(text: str) -> SubstanceProg
    parse_style(text: str) -> StyleProg

Syntax errors raise `DiagramError(source, line, column, message, excerpt)`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Literal, TypeVar

from lark import Token

from adcore import LRU
from energies.lang import ast as A
from energies.lang import style_ast as S
from energies.lang.parse_util import (
    UserError,
    keywords,
    make_parser,
    name_of,
    pos_of,
    prepare_lexer,
    present,
    run_parser,
)
from energies.lang.style_parse import StyleBuilder

# ---- Domain ----------------------------------------------------------------------------


class _DomainBuilder:
    def start(self, meta: Any, children: list[Any]) -> A.DomainProg:
        return A.DomainProg(tuple(children), pos_of(meta))

    def name(self, meta: Any, children: list[Token]) -> A.Name:
        return name_of(children[0])

    def arg(self, meta: Any, children: list[A.Name]) -> A.Arg:
        return A.Arg(children[0], children[1] if len(children) > 1 else None, pos_of(meta))

    named_arg = arg

    def out_arg(self, meta: Any, children: list[A.Name]) -> tuple[str, A.Arg]:
        return ("output", self.arg(meta, children))

    def type_decl(self, meta: Any, children: list[Any]) -> A.TypeDecl:
        names = [c for c in children if isinstance(c, A.Name)]
        return A.TypeDecl(names[0], tuple(names[1:]), pos_of(meta))

    def subtype_decl(self, meta: Any, children: list[Any]) -> A.SubtypeDecl:
        return A.SubtypeDecl(children[0], children[2], pos_of(meta))

    def predicate_decl(self, meta: Any, children: list[Any]) -> A.PredicateDecl:
        symmetric = isinstance(children[0], Token) and children[0].type == "SYMMETRIC"
        rest = present(children[1:] if symmetric else children)
        return A.PredicateDecl(rest[0], tuple(rest[1:]), symmetric, pos_of(meta))

    def _callable(self, meta: Any, children: list[Any]) -> tuple[A.Name, tuple[A.Arg, ...], A.Arg | None]:
        items = present(children)
        output = next((c[1] for c in items if isinstance(c, tuple)), None)
        args = tuple(c for c in items[1:] if isinstance(c, A.Arg))
        return items[0], args, output

    def function_decl(self, meta: Any, children: list[Any]) -> A.FunctionDecl:
        name, args, output = self._callable(meta, children)
        assert output is not None  # the grammar requires `-> T`
        return A.FunctionDecl(name, args, output, pos_of(meta))

    def constructor_decl(self, meta: Any, children: list[Any]) -> A.ConstructorDecl:
        name, args, output = self._callable(meta, children)
        # `constructor C(...)` without `->` constructs a value of type `C`
        return A.ConstructorDecl(name, args, output or A.Arg(name, None, name.pos), pos_of(meta))


# ---- Substance -------------------------------------------------------------------------


def _number(tok: Token) -> A.NumberLit:
    return A.NumberLit(float(tok), pos_of(tok))


class _SubstanceBuilder:
    def start(self, meta: Any, children: list[Any]) -> A.SubstanceProg:
        return A.SubstanceProg(tuple(children), pos_of(meta))

    def name(self, meta: Any, children: list[Token]) -> A.Name:
        return name_of(children[0])

    def number(self, meta: Any, children: list[Token]) -> A.NumberLit:
        return _number(children[0])

    def string(self, meta: Any, children: list[Token]) -> A.StringLit:
        return A.StringLit(str(children[0])[1:-1], pos_of(children[0]))

    def decl(self, meta: Any, children: list[A.Name]) -> A.Decl:
        return A.Decl(children[0], tuple(children[1:]), pos_of(meta))

    def decl_bind(self, meta: Any, children: list[Any]) -> A.DeclBind:
        return A.DeclBind(children[0], children[1], children[2], False, pos_of(meta))

    def let_bind(self, meta: Any, children: list[Any]) -> A.DeclBind:
        var, expr = children
        if not isinstance(expr, A.Func):
            raise UserError(pos_of(meta), "`Let` needs a function or constructor application on the right")
        return A.DeclBind(A.Name(expr.name.value, expr.name.pos), var, expr, True, pos_of(meta))

    def bind(self, meta: Any, children: list[Any]) -> A.Bind:
        return A.Bind(children[0], children[1], pos_of(meta))

    def apply_predicate(self, meta: Any, children: list[Any]) -> A.ApplyPredicate:
        return A.ApplyPredicate(children[0], tuple(present(children[1:])), pos_of(meta))

    def func(self, meta: Any, children: list[Any]) -> A.Func:
        return A.Func(children[0], tuple(present(children[1:])), pos_of(meta))

    def label_decl(self, meta: Any, children: list[Any]) -> A.LabelDecl:
        var, tok = children
        kind: Literal["MathLabel", "TextLabel"] = "MathLabel" if tok.type == "TEX" else "TextLabel"
        return A.LabelDecl(var, str(tok)[1:-1], kind, pos_of(meta))

    def auto_label(self, meta: Any, children: list[Any]) -> A.AutoLabel:
        if isinstance(children[0], Token) and children[0].type == "ALL":
            return A.AutoLabel(None, pos_of(meta))
        return A.AutoLabel(tuple(children), pos_of(meta))

    def no_label(self, meta: Any, children: list[A.Name]) -> A.NoLabel:
        return A.NoLabel(tuple(children), pos_of(meta))

    def stmt_set(self, meta: Any, children: list[Any]) -> A.StmtSet:
        return A.StmtSet(children[0], children[1], pos_of(meta))

    def iset(self, meta: Any, children: list[Any]) -> A.IndexSet:
        ranges = tuple(c for c in children if isinstance(c, A.RangeAssign))
        rest = [c for c in children if not isinstance(c, A.RangeAssign)]
        return A.IndexSet(ranges, rest[0] if rest else None, pos_of(meta))

    def range_assign(self, meta: Any, children: list[Any]) -> A.RangeAssign:
        return A.RangeAssign(children[0], children[1], children[2], pos_of(meta))

    def bool_or(self, meta: Any, children: list[Any]) -> A.BoolBin:
        return A.BoolBin("||", children[0], children[1], pos_of(meta))

    def bool_and(self, meta: Any, children: list[Any]) -> A.BoolBin:
        return A.BoolBin("&&", children[0], children[1], pos_of(meta))

    def bool_not(self, meta: Any, children: list[Any]) -> A.BoolNot:
        return A.BoolNot(children[0], pos_of(meta))

    def bool_true(self, meta: Any, children: list[Any]) -> A.BoolConst:
        return A.BoolConst(True, pos_of(meta))

    def bool_false(self, meta: Any, children: list[Any]) -> A.BoolConst:
        return A.BoolConst(False, pos_of(meta))

    def compare(self, meta: Any, children: list[Any]) -> A.Compare:
        return A.Compare(str(children[1]), children[0], children[2], pos_of(meta))

    def num_bin(self, meta: Any, children: list[Any]) -> A.NumBin:
        op = str(children[1])
        return A.NumBin("%" if op == "mod" else op, children[0], children[2], pos_of(meta))

    def num_neg(self, meta: Any, children: list[Any]) -> A.NumNeg:
        return A.NumNeg(children[0], pos_of(meta))


# ---- public API ------------------------------------------------------------------------


# ASTs are immutable, so identical texts (trios share Style files) parse once. The parsed programs
# of all three languages share one LRU, bounded in bytes by a host (the service's workers:
# PENROSE_PARSE_CACHE_MB); an entry weighs its AST, estimated per character of text (the
# measurement behind BYTES_PER_CHAR: docs/operations.md), and the text itself, kept as the key.
BYTES_PER_CHAR = 50
PARSED: LRU[tuple[str, str], tuple[Any, int]] = LRU(768, weight=lambda entry: entry[1] * BYTES_PER_CHAR)

P = TypeVar("P")


def _cached(language: str) -> Callable[[Callable[[str], P]], Callable[[str], P]]:
    """A parser answering repeated texts from PARSED (`cache_clear` empties it, `__wrapped__` parses)."""

    def wrap(parse: Callable[[str], P]) -> Callable[[str], P]:
        @functools.wraps(parse)
        def cached(text: str) -> P:
            found = PARSED.get((language, text))
            if found is None:
                found = (parse(text), len(text))
                PARSED.put((language, text), found)
            return found[0]

        cached.cache_clear = PARSED.clear  # type: ignore[attr-defined]
        return cached

    return wrap


@_cached("domain")
def parse_domain(text: str) -> A.DomainProg:
    return run_parser("domain", text, _DomainBuilder)


@_cached("substance")
def parse_substance(text: str) -> A.SubstanceProg:
    return run_parser("substance", text, _SubstanceBuilder)


@_cached("style")
def parse_style(text: str) -> S.StyleProg:
    return run_parser("style", text, StyleBuilder)


@functools.cache
def substance_keywords() -> frozenset[str]:
    """The words that begin a Substance statement (`AutoLabel`, `Let`, ...)."""
    return keywords(make_parser("substance", _SubstanceBuilder), statements_only=True)


def prepare_parsers() -> None:
    """Build the three parsers and all their lexers (process start-up, `service.workers.warm_up`)."""
    prepare_lexer("domain", _DomainBuilder)
    prepare_lexer("substance", _SubstanceBuilder)
    prepare_lexer("style", StyleBuilder)
