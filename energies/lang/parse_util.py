"""Shared machinery of the three parsers: lark LALR parsers that build our AST directly.

Builders are plain classes whose methods take `(meta, children)` like lark's
`v_args(meta=True)` transformers, but they run *inside* the LALR parser (no parse tree is
built, which halves parsing time).  Lark only supports meta-less callbacks there, so
`meta` is recovered from the first child that has a position (a token or an AST node).
Grammar terminals named `KW_*` are statement keywords kept only for that purpose: they
give e.g. `ensure ...` the keyword's position and are dropped before the builder runs.
"""

from __future__ import annotations

import functools
from pathlib import Path as FsPath
from types import SimpleNamespace
from typing import Any

import lark
from lark import Token

from energies.lang import ast as A
from energies.lang.errors import DiagramError, Source

_HERE = FsPath(__file__).resolve().parent


def _first_pos(children: Any) -> A.Pos:
    for c in children:
        if isinstance(c, Token):
            return A.Pos(c.line or 0, c.column or 0)
        pos = getattr(c, "pos", None)
        if isinstance(pos, A.Pos) and pos.line:
            return pos
        if isinstance(c, list | tuple) and c:
            inner = _first_pos(c)
            if inner.line:
                return inner
    return A.NOPOS


class _Callbacks:
    """Adapts a builder's `(meta, children)` methods to lark's inline `(children)` callbacks."""

    def __init__(self, builder: object) -> None:
        for name in dir(builder):
            method = getattr(builder, name)
            if not name.startswith("_") and callable(method):
                setattr(self, name, self._wrap(method))

    @staticmethod
    def _wrap(method: Any) -> Any:
        def callback(children: list[Any]) -> Any:
            pos = _first_pos(children)
            kept = [c for c in children if not (isinstance(c, Token) and c.type.startswith("KW_"))]
            return method(SimpleNamespace(line=pos.line, column=pos.column), kept)

        return callback


@functools.cache
def make_parser(source: Source, builder_cls: type) -> lark.Lark:
    grammar = (_HERE / f"{source}.lark").read_text()
    # cache=True keeps the built LALR tables in the temp dir (0.2 s -> 0.02 s per grammar);
    # lark rebuilds when the grammar changes or the cache file cannot be read.
    return lark.Lark(
        grammar, parser="lalr", maybe_placeholders=True, transformer=_Callbacks(builder_cls()), cache=True
    )


def pos_of(meta_or_token: Any) -> A.Pos:
    line = getattr(meta_or_token, "line", None)
    column = getattr(meta_or_token, "column", None)
    return A.Pos(line or 0, column or 0)


def name_of(tok: Token | A.Name) -> A.Name:
    return tok if isinstance(tok, A.Name) else A.Name(str(tok), pos_of(tok))


def present(children: list[Any]) -> list[Any]:
    """Children minus lark's placeholders for absent `[...]` parts."""
    return [c for c in children if c is not None]


class UserError(Exception):
    """Raised inside transformers for a well-formed parse that the language still rejects."""

    def __init__(self, pos: A.Pos, message: str) -> None:
        super().__init__(message)
        self.pos = pos
        self.message = message


# ---- error reporting ------------------------------------------------------------------


def _describe_terminal(parser: lark.Lark, name: str) -> str:
    try:
        pattern = parser.get_terminal(name).pattern
    except KeyError:
        return name
    if isinstance(pattern, lark.lexer.PatternStr):
        return f"'{pattern.value}'"
    return {
        "IDENT": "a name",
        "NUMBER": "a number",
        "STRING": "a string",
        "TEX": "a $math$ label",
        "HEX": "a color",
        "_NL": "a newline",
        "ADD_OP": "'+'/'-'",
        "MUL_OP": "an operator",
        "COMPARE": "a comparison",
    }.get(name, name.lower())


def _syntax_error(
    source: Source, text: str, parser: lark.Lark, err: lark.exceptions.LarkError
) -> DiagramError:
    line = getattr(err, "line", None)
    column = getattr(err, "column", None)
    at_end = isinstance(err, lark.exceptions.UnexpectedEOF) or (
        isinstance(err, lark.exceptions.UnexpectedToken) and err.token.type == "$END"
    )
    if at_end or not isinstance(line, int) or line < 1:
        # point just past the last non-blank line
        lines = text.rstrip().split("\n") if text.strip() else [""]
        line, column = len(lines), len(lines[-1]) + 1
    expected = sorted(getattr(err, "expected", None) or getattr(err, "allowed", None) or ())
    expected_text = ", ".join(_describe_terminal(parser, n) for n in expected[:8])
    if len(expected) > 8:
        expected_text += ", ..."
    if isinstance(err, lark.exceptions.UnexpectedCharacters):
        message = f"unexpected character {text[err.pos_in_stream]!r}"
    elif isinstance(err, lark.exceptions.UnexpectedToken) and err.token.type != "$END":
        shown = str(err.token).replace("\n", "\\n") or err.token.type
        message = f"unexpected token {shown!r}"
    else:
        message = "unexpected end of input"
    if expected_text:
        message += f"; expected {expected_text}"
    return DiagramError.at(source, text, line, column or 1, message, kind="ParseError")


def run_parser(source: Source, text: str, builder_cls: type) -> Any:
    parser = make_parser(source, builder_cls)
    try:
        return parser.parse(text)
    except lark.exceptions.UnexpectedInput as err:
        raise _syntax_error(source, text, parser, err) from None
    except UserError as err:
        raise DiagramError.at(source, text, err.pos.line, err.pos.column, err.message, "ParseError") from None
    except RecursionError:
        raise DiagramError.at(source, text, 1, 1, "program is nested too deeply", "ParseError") from None
