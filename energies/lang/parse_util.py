"""Shared machinery of the three parsers: lark LALR parsers that build our AST directly.

Builders are plain classes whose methods take `(meta, children)` like lark's
`v_args(meta=True)` transformers, but they run *inside* the LALR parser (no parse tree is
built, which halves parsing time).  Lark only supports meta-less callbacks there, so
`meta` is recovered from the first child that has a position (a token or an AST node).
Grammar terminals named `KW_*` are statement keywords kept only for that purpose: they
give e.g. `ensure ...` the keyword's position and are dropped before the builder runs.
`run_parser` drives lark's LALR table and contextual lexer with its own, leaner loops
(`_run_lalr`, `_lex`): same tokens, callbacks and errors, faster (docs/benchmarks.md).

This module is the one adapter to lark's internals (its parse table, its contextual lexer's
per-state scanners). Version rule: our loops run only on a lark in `LARK_VERIFIED` whose tables have
the shape they read; any other lark parses with its own public `Lark.parse` (slower, the same
ASTs and errors), and tests/energies/lang/test_lark_adapter.py fails so that the new version is
checked and added.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from pathlib import Path as FsPath
from typing import Any

import lark
import lark.parse_tree_builder
from lark import Token
from lark.exceptions import UnexpectedToken
from lark.parsers.lalr_analysis import Shift

from energies.lang import ast as A
from energies.lang.errors import DiagramError, Source, closest
from energies.limits import check_deadline

_HERE = FsPath(__file__).resolve().parent
LARK_VERIFIED = {(1, 3)}  # lark (major, minor) versions whose internals our loops were checked against


def lark_version() -> tuple[int, int]:
    major, minor = lark.__version__.split(".")[:2]
    return int(major), int(minor)


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


def _is_keyword(child: Any) -> bool:
    return isinstance(child, Token) and child.type.startswith("KW_")


class _Callbacks:
    """Adapts a builder's `(meta, children)` methods to lark's inline `(children)` callbacks.

    The `meta` handed to the builder is the node's `A.Pos` itself (it has `.line` and
    `.column`, and `pos_of` returns it unchanged): one object per node instead of two.
    Only the callbacks named in `keyword_rules` can receive `KW_*` tokens, so only they filter;
    `make_parser` fills the set once lark has compiled the grammar's rules.
    """

    def __init__(self, builder: object) -> None:
        self.keyword_rules: set[str] = set()
        for name in dir(builder):
            method = getattr(builder, name)
            if not name.startswith("_") and callable(method):
                setattr(self, name, self._wrap(method, name, self.keyword_rules))

    @staticmethod
    def _wrap(method: Any, name: str, keyword_rules: set[str]) -> Any:
        # lark hands every callback a fresh list, so the builder may keep or change it
        def callback(children: list[Any]) -> Any:
            if name in keyword_rules:
                return method(_first_pos(children), [c for c in children if not _is_keyword(c)])
            return method(_first_pos(children), children)

        return callback


def _keyword_rules(rules: list[lark.grammar.Rule]) -> frozenset[str]:
    """Callback names whose children can hold a `KW_*` token, directly or via inlined `_rules`."""
    inlined_with_keywords: set[str] = set()
    changed = True
    while changed:  # an inlined `_rule` passes its children (and their keywords) to its parent
        changed = False
        for rule in rules:
            name = rule.origin.name
            if (
                name.startswith("_")
                and name not in inlined_with_keywords
                and _has_keyword(rule, inlined_with_keywords)
            ):
                inlined_with_keywords.add(name)
                changed = True
    return frozenset(
        rule.alias or rule.options.template_source or rule.origin.name
        for rule in rules
        if _has_keyword(rule, inlined_with_keywords)
    )


def _has_keyword(rule: lark.grammar.Rule, inlined_with_keywords: set[str]) -> bool:
    return any(
        s.name.startswith("KW_") if s.is_term else s.name in inlined_with_keywords for s in rule.expansion
    )


@functools.cache
def make_parser(source: Source, builder_cls: type) -> lark.Lark:
    grammar = (_HERE / f"{source}.lark").read_text()
    # cache=True keeps the built LALR tables in the temp dir (0.2 s -> 0.02 s per grammar);
    # lark rebuilds when the grammar changes or the cache file cannot be read.
    callbacks = _Callbacks(builder_cls())
    parser = lark.Lark(grammar, parser="lalr", maybe_placeholders=True, transformer=callbacks, cache=True)
    callbacks.keyword_rules.update(_keyword_rules(parser.rules))
    return parser


def pos_of(meta_or_token: Any) -> A.Pos:
    if type(meta_or_token) is A.Pos:  # the meta `_Callbacks` passes: immutable, so shared
        return meta_or_token
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


def keywords(parser: lark.Lark, statements_only: bool = False) -> frozenset[str]:
    """The words a grammar reserves (`forall`, `layer`, `AutoLabel`, ...); with `statements_only`,
    the `KW_*` words that begin a statement."""
    return frozenset(
        t.pattern.value
        for t in parser.terminals
        if isinstance(t.pattern, lark.lexer.PatternStr)
        and t.pattern.value.isidentifier()
        and (t.name.startswith("KW_") or not statements_only)
    )


_LEADING_WORDS = re.compile(r"\s*([A-Za-z_]\w*)\s+[A-Za-z_]")


def _misspelt_keyword(parser: lark.Lark, text: str, line: int, column: int) -> tuple[int, str] | None:
    """(column, message) when the line begins with two words, the first a near miss of a keyword
    (`ensur x.r > 3`): no statement begins so unless its first word is a keyword, and the parser
    only notices further on, with a message about what follows."""
    lines = text.split("\n")
    m = _LEADING_WORDS.match(lines[line - 1]) if 0 < line <= len(lines) else None
    if m is None or column <= m.end(1):
        return None
    known = keywords(parser)
    word = m[1]
    guess = None if word in known else closest(word, known)
    return (m.start(1) + 1, f"unknown keyword {word} (did you mean {guess}?)") if guess else None


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
        message = f"unexpected character {text[err.pos_in_stream]!r}"  # type: ignore[index]  # set on UnexpectedCharacters
    elif isinstance(err, lark.exceptions.UnexpectedToken) and err.token.type != "$END":
        message = (
            "unexpected end of line" if not str(err.token).strip() else f"unexpected token {str(err.token)!r}"
        )
    else:
        message = "unexpected end of input"
    if expected_text:
        message += f"; expected {expected_text}"
    keyword = _misspelt_keyword(parser, text, line, column or 1)
    if keyword is not None:
        column, message = keyword
    brace = unclosed_brace(text)
    if brace is not None and brace < (line, column or 1):
        n = line - brace[0]
        below = f"{n} line{'s' if n > 1 else ''} below" if n else "on this line"
        message = f"this {{ is never closed: end its block with }} (the parser stopped {below}: {message})"
        line, column = brace
    return DiagramError.at(source, text, line, column or 1, message, kind="ParseError")


_TOKENS = re.compile(r'"(?:[^"\\\n]|\\.)*"|--[^\n]*|/\*.*?\*/|[{}]|\n|\b(?:forall|collect)\b', re.S)


def unclosed_brace(text: str) -> tuple[int, int] | None:
    """Where a `{` that is never closed opens (line, column), judged as a reader would by layout:
    a `}` that starts a line left of its block's first line, a new `forall`/`collect` block while
    one is open (Style blocks do not nest), or the end of the text, ends the innermost open brace.
    Asked only after a syntax error, to point at the cause rather than where the parser noticed."""
    stack: list[tuple[int, int, int]] = []  # line, column, indentation of the brace's line
    line, line_start = 1, 0
    for m in _TOKENS.finditer(text):
        token = m.group()
        if token == "\n":
            line, line_start = line + 1, m.end()
            continue
        if token[0] in '"-/':
            line += token.count("\n")
            if "\n" in token:
                line_start = m.start() + token.rindex("\n") + 1
            continue
        before = text[line_start : m.start()]
        indent = len(before) - len(before.lstrip(" \t"))
        first_on_line = not before.strip()
        if token == "{":
            stack.append((line, m.start() - line_start + 1, indent))
        elif token == "}":
            if stack and first_on_line and indent < stack[-1][2]:
                return stack[-1][:2]
            if stack:
                stack.pop()
        elif stack and first_on_line:  # forall / collect starting a line inside a block
            return stack[-1][:2]
    return stack[-1][:2] if stack else None


# ---- the LALR loop ---------------------------------------------------------------------
#
# lark's own loop (`ParserState.feed_token`) looks up `rule.expansion`, `rule.origin.name`
# and `callbacks[rule]` (a Python-level `Rule.__hash__`, and an `assert` calling `Rule.__eq__`)
# on every reduction, about three per token.  This loop runs the same parse table and the
# same callbacks from rows precomputed once per parser; it raises the `UnexpectedToken`
# lark would, and lark's contextual lexer still reads the parser state it is given.

# terminal or rule name -> next state (shift) or (size, callback, rule name) (reduce), where
# callback None marks a `?rule` of one child: lark's `ExpandSingleChild` would return that
# child, so the value stays on the stack and only the state changes.
_Row = dict[str, Any]


def _reduction(rule: lark.grammar.Rule, callback: Any) -> tuple[int, Any, str]:
    size = len(rule.expansion)
    if size == 1 and type(callback) is lark.parse_tree_builder.ExpandSingleChild:
        return 1, None, rule.origin.name
    return size, callback, rule.origin.name


@functools.cache
def _rows(parser: lark.Lark) -> tuple[dict[Any, _Row], Any]:
    conf = parser.parse_interactive("").parser_state.parse_conf
    if any(isinstance(key, str) for key in conf.callbacks):
        raise TypeError("token callbacks are not supported by the LALR loop")
    rows: dict[Any, _Row] = {}
    for state, actions in conf.states.items():
        rows[state] = {
            name: arg if action is Shift else _reduction(arg, conf.callbacks[arg])
            for name, (action, arg) in actions.items()
        }
    return rows, conf.end_state


# Per parser state, what lark's contextual lexer uses there: the compiled alternations of the
# terminals allowed in that state, their callbacks (keywords that also match IDENT), the
# ignored and the newline-containing terminals.
_Scanner = tuple[list[re.Pattern[str]], dict[str, Any], frozenset[str], frozenset[str]]


class _Scanners(dict[Any, _Scanner]):
    """Parser state -> `_Scanner`, each made on first use (lark compiles its regexes lazily too)."""

    def __init__(self, lexer: lark.lexer.ContextualLexer) -> None:
        super().__init__()
        self.lexer = lexer

    def __missing__(self, state: Any) -> _Scanner:
        basic = self.lexer.lexers[state]
        # a BasicLexer's fields, not its abstract base's (the lark versions of LARK_VERIFIED)
        scanner = self[state] = (basic.scanner._mres, basic.callback, basic.ignore_types, basic.newline_types)  # type: ignore[attr-defined]  # see the line above
        return scanner


@functools.cache
def _scanners(parser: lark.Lark) -> _Scanners | None:
    """None when lark's lexer is not the contextual one this module knows, or lark is not a version
    these tables were checked against (then lark lexes)."""
    if lark_version() not in LARK_VERIFIED:
        return None
    lexer = parser.parse_interactive("").lexer_thread.lexer
    if type(lexer) is not lark.lexer.ContextualLexer:
        return None
    basics = list(lexer.lexers.values())
    if not all(type(b) is lark.lexer.BasicLexer for b in basics) or not basics:
        return None
    if not isinstance(getattr(basics[0].scanner, "_mres", None), list):  # type: ignore[attr-defined]  # a BasicLexer's (checked above)
        return None
    return _Scanners(lexer)


def prepare_lexer(source: Source, builder_cls: type) -> None:
    """Compile the lexer of every parser state now (a host's start-up work) instead of on first use,
    where a Style reaching new states paid for them (5-10 ms on a registry trio)."""
    scanners = _scanners(make_parser(source, builder_cls))
    if scanners is not None:
        for state in scanners.lexer.lexers:
            scanners[state]  # noqa: B018 (made on first access)


def _lex(parser: lark.Lark, interactive: Any) -> Iterator[Token]:
    """The tokens lark's contextual lexer gives, without its three calls per token.

    At a character no terminal of the current state matches, lark's own lexer takes over from
    there, so errors (`UnexpectedCharacters`, or `UnexpectedToken` for a terminal of another
    context) are lark's.
    """
    scanners = _scanners(parser)
    thread, parser_state = interactive.lexer_thread, interactive.parser_state
    if scanners is None:
        yield from thread.lex(parser_state)
        return
    lexer_state = thread.state
    text, end = lexer_state.text.text, lexer_state.text.end
    counter = lexer_state.line_ctr
    pos, line, line_start = counter.char_pos, counter.line, counter.line_start_pos
    state_stack = parser_state.state_stack  # the parser pushes as we yield
    token = None
    while pos < end:
        mres, callbacks, ignore_types, newline_types = scanners[state_stack[-1]]
        for mre in mres:
            match = mre.match(text, pos, end)
            if match:
                break
        else:
            _move_counter(counter, pos, line, line_start)
            lexer_state.last_token = token
            yield from thread.lex(parser_state)
            return
        value = match.group(0)
        kind: str = match.lastgroup  # type: ignore[assignment]  # every terminal is a named group: never None
        start, start_line, column = pos, line, pos - line_start + 1
        if kind in newline_types:
            newlines = value.count("\n")
            if newlines:
                line += newlines
                line_start = pos + value.rindex("\n") + 1
        pos += len(value)
        if kind in ignore_types and kind not in callbacks:
            continue
        item = Token(kind, value, start, start_line, column, line, pos - line_start + 1, pos)
        if kind in callbacks:
            item = callbacks[kind](item)
        if kind not in ignore_types:
            token = item
            yield item
    _move_counter(counter, pos, line, line_start)


def _move_counter(counter: Any, pos: int, line: int, line_start: int) -> None:
    """Leave lark's line counter where `_lex` got to (lark's lexer may go on from there)."""
    counter.char_pos, counter.line, counter.line_start_pos = pos, line, line_start
    counter.column = pos - line_start + 1


def _run_lalr(parser: lark.Lark, text: str) -> Any:
    rows, end_state = _rows(parser)
    interactive = parser.parse_interactive(text)
    parser_state = interactive.parser_state
    state_stack: list[Any] = parser_state.state_stack  # the lexer picks its context from the top
    value_stack: list[Any] = parser_state.value_stack
    for token in _with_end(_lex(parser, interactive)):
        check_deadline("parsing")
        kind = token.type
        while True:  # reduce as often as `token` asks, then shift it
            row = rows[state_stack[-1]]
            try:
                action = row[kind]
            except KeyError:
                expected = {name for name in row if name.isupper()}
                raise UnexpectedToken(token, expected, state=parser_state, interactive_parser=None) from None
            if type(action) is not tuple:
                state_stack.append(action)
                value_stack.append(token)
                break
            size, callback, rule_name = action
            if callback is None:  # the one child is the value: pop its state, push the goto
                state_stack[-1] = rows[state_stack[-2]][rule_name]
                if kind == "$END" and state_stack[-1] == end_state:
                    return value_stack[-1]
                continue
            if size:
                children = value_stack[-size:]
                del state_stack[-size:]
                del value_stack[-size:]
            else:
                children = []
            state_stack.append(rows[state_stack[-1]][rule_name])
            value_stack.append(callback(children))
            if kind == "$END" and state_stack[-1] == end_state:
                return value_stack[-1]
    raise AssertionError("the parse table accepts only at $END")


def _with_end(tokens: Iterator[Token]) -> Iterator[Token]:
    """The lexer's tokens, then lark's `$END` token at the last one's position."""
    token = None
    for token in tokens:
        yield token
    yield Token.new_borrow_pos("$END", "", token) if token else Token("$END", "", 0, 1, 1)


@functools.cache
def _own_loop_fits(parser: lark.Lark) -> bool:
    """Whether this lark still has the parse table `_run_lalr` reads (lark is pinned to the
    version it was written against; another one falls back to `Lark.parse`, slower but right)."""
    if lark_version() not in LARK_VERIFIED:
        return False
    try:
        _rows(parser)
    except (AttributeError, KeyError, TypeError, ValueError):
        return False
    return True


def run_parser(source: Source, text: str, builder_cls: type) -> Any:
    parser = make_parser(source, builder_cls)
    try:
        return _run_lalr(parser, text) if _own_loop_fits(parser) else parser.parse(text)
    except lark.exceptions.UnexpectedInput as err:
        raise _syntax_error(source, text, parser, err) from None
    except UserError as err:
        raise DiagramError.at(source, text, err.pos.line, err.pos.column, err.message, "ParseError") from None
    except RecursionError:
        raise DiagramError.at(source, text, 1, 1, "program is nested too deeply", "ParseError") from None
