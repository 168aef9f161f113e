"""A shape's ``draggingConstraint``, as Penrose's editor reads it: the body of a JavaScript function
of ``[x, y]`` (the dragged shape's center under the pointer, in canvas coordinates, origin at the
canvas's center, y up) that returns the position the shape takes, e.g.

    draggingConstraint: "return [x, y]";
    draggingConstraint: "return [Math.max(0, x), Math.max(0, y)]";
    draggingConstraint: "const a = Math.atan2(y, x); return [107 * Math.cos(a), 107 * Math.sin(a)];"

    constraint = parse_drag_constraint(text, shape="`A`.icon")   # DragConstraintError names the place
    constraint(x, y) -> (x', y')

Penrose runs the text with ``new Function("[x, y]", text)``; here nothing is ever run. The text is
parsed by our own recursive-descent parser for a loop-free subset of JavaScript, and the tree is
walked with JavaScript's number semantics (``1 / 0`` is Infinity, ``Math.sqrt(-1)`` is NaN):
statements ``const|let|var NAME = EXPR``, assignment to a ``let``/``var``, ``if (...) ... else
...``, blocks and ``return``; expressions of numbers, ``true``/``false``, the parameters and locals,
``+ - * / % **``, comparisons, ``&& || !``, ``?:``, parentheses, array literals and ``Math.*``
(``MATH_FUNCTIONS``, ``MATH_CONSTANTS``). The returned value must be an array of two finite numbers.
Without loops or calls of user code, evaluation takes time linear in the text, which is bounded.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NoReturn

from energies.library.fn_ops import div

MAX_LENGTH = 1000  # characters
MAX_DEPTH = 60  # nesting of expressions and statements


def js_round(v: float) -> float:
    return math.floor(v + 0.5) if math.isfinite(v) else v


def js_sign(v: float) -> float:
    return v if v == 0 or math.isnan(v) else math.copysign(1.0, v)


def js_minmax(pick: Callable[..., float], empty: float) -> Callable[..., float]:
    def f(*vs: float) -> float:
        return math.nan if any(math.isnan(v) for v in vs) else pick(vs) if vs else empty

    return f


def nan_outside(f: Callable[..., float]) -> Callable[..., float]:
    """Math.f as JavaScript has it: NaN (or an infinity) where Python's math raises."""

    def g(*vs: float) -> float:
        try:
            return float(f(*vs))
        except OverflowError:
            return math.inf
        except (ValueError, ZeroDivisionError):
            return math.nan

    return g


MATH_FUNCTIONS: dict[str, Callable[..., float]] = {
    **{
        name: nan_outside(getattr(math, name))
        for name in [
            "acos",
            "acosh",
            "asin",
            "asinh",
            "atan",
            "atan2",
            "atanh",
            "cos",
            "cosh",
            "exp",
            "expm1",
            "log1p",
            "log10",
            "log2",
            "sin",
            "sinh",
            "sqrt",
            "tan",
            "tanh",
            "hypot",
        ]
    },
    "abs": abs,
    "cbrt": lambda v: math.copysign(abs(v) ** (1 / 3), v),
    "ceil": nan_outside(lambda v: math.ceil(v) if math.isfinite(v) else v),
    "floor": nan_outside(lambda v: math.floor(v) if math.isfinite(v) else v),
    "trunc": nan_outside(lambda v: math.trunc(v) if math.isfinite(v) else v),
    "log": nan_outside(lambda v: -math.inf if v == 0 else math.log(v)),
    "max": js_minmax(max, -math.inf),
    "min": js_minmax(min, math.inf),
    "pow": nan_outside(lambda a, b: a**b),
    "round": js_round,
    "sign": js_sign,
}
MATH_CONSTANTS = {
    "PI": math.pi, "E": math.e, "LN2": math.log(2), "LN10": math.log(10), "LOG2E": 1 / math.log(2),
    "LOG10E": 1 / math.log(10), "SQRT2": math.sqrt(2), "SQRT1_2": math.sqrt(0.5),
}  # fmt: skip

TOKEN = re.compile(
    r"(?P<space>\s+|//[^\n]*|/\*.*?\*/)"
    r"|(?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)"
    r"|(?P<name>[A-Za-z_$][\w$]*)"
    r"|(?P<op>===|!==|\*\*|<=|>=|==|!=|&&|\|\||[-+*/%<>!?:=()\[\]{},;.])",
    re.S,
)
KEYWORDS = {"const", "let", "var", "return", "if", "else", "true", "false"}


class DragConstraintError(ValueError):
    """A draggingConstraint that cannot be used; the message names the shape and the column."""


DragConstraint = Callable[[float, float], tuple[float, float]]
Value = float | bool | list[Any]


@dataclass
class Token:
    kind: str  # number, name, op, end
    text: str
    col: int  # 1-based


@dataclass
class Node:
    kind: str
    col: int
    args: list[Any] = field(default_factory=list)


class Return(Exception):  # noqa: N818 - a control transfer
    def __init__(self, value: Value):
        self.value = value


class Parser:
    def __init__(self, text: str, where: str):
        self.where = where
        self.tokens: list[Token] = []
        pos = 0
        while pos < len(text):
            m = TOKEN.match(text, pos)
            if m is None:
                self.fail(pos + 1, f"unexpected character {text[pos]!r}")
            if m.lastgroup != "space":
                self.tokens.append(Token(m.lastgroup or "", m.group(), pos + 1))
            pos = m.end()
        self.tokens.append(Token("end", "", len(text) + 1))
        self.i = 0
        self.depth = 0
        self.scopes: list[dict[str, bool]] = [{"x": True, "y": True}]  # name -> may be assigned

    def fail(self, col: int, message: str) -> NoReturn:
        raise DragConstraintError(f"{self.where}, column {col}: {message}")

    @property
    def tok(self) -> Token:
        return self.tokens[self.i]

    def at(self, *texts: str) -> bool:
        return self.tok.kind in ("op", "name") and self.tok.text in texts

    def take(self, *texts: str) -> Token:
        t = self.tok
        if texts and not self.at(*texts):
            found = repr(t.text) if t.kind != "end" else "the end"
            self.fail(t.col, f"expected {' or '.join(repr(s) for s in texts)}, found {found}")
        self.i += 1
        return t

    def nest(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            self.fail(self.tok.col, f"nested more than {MAX_DEPTH} deep")

    def lookup(self, t: Token) -> bool:
        for scope in reversed(self.scopes):
            if t.text in scope:
                return scope[t.text]
        self.fail(t.col, f"unknown name {t.text!r} (the parameters are x and y; use Math.{t.text}?)")
        return False

    # -- statements ---------------------------------------------------------------------------------

    def body(self) -> list[Node]:
        statements = []
        while self.tok.kind != "end":
            statements.append(self.statement())
        return statements

    def statement(self) -> Node:
        self.nest()
        t = self.tok
        if self.at("const", "let", "var"):
            self.take()
            declared = []
            while True:
                name = self.take()
                if name.kind != "name" or name.text in KEYWORDS or name.text == "Math":
                    self.fail(name.col, f"expected a name, found {name.text!r}")
                if name.text in self.scopes[-1]:
                    self.fail(name.col, f"{name.text!r} is already declared")
                self.take("=")
                declared.append((name.text, self.expression()))
                self.scopes[-1][name.text] = t.text != "const"
                if not self.at(","):
                    break
                self.take()
            node = Node("declare", t.col, declared)
        elif self.at("return"):
            self.take()
            node = Node("return", t.col, [self.expression()])
        elif self.at("if"):
            self.take()
            self.take("(")
            condition = self.expression()
            self.take(")")
            then = self.statement()
            otherwise = None
            if self.at("else"):
                self.take()
                otherwise = self.statement()
            node = Node("if", t.col, [condition, then, otherwise])
        elif self.at("{"):
            self.take()
            self.scopes.append({})
            inner = []
            while not self.at("}"):
                if self.tok.kind == "end":
                    self.fail(t.col, "this '{' is not closed")
                inner.append(self.statement())
            self.take("}")
            self.scopes.pop()
            node = Node("block", t.col, inner)
        elif self.at(";"):
            node = Node("block", t.col, [])
        elif t.kind == "name" and self.tokens[self.i + 1].text == "=":
            if not self.lookup(t):
                self.fail(t.col, f"{t.text!r} cannot be assigned (a const or a parameter)")
            self.take()
            self.take("=")
            node = Node("assign", t.col, [t.text, self.expression()])
        else:
            found = repr(t.text) if t.kind != "end" else "the end"
            self.fail(
                t.col,
                f"expected a statement (const, let, if, return), found {found}: the text is "
                'the body of a function of [x, y], e.g. "return [x, 0]"',
            )
        if self.at(";"):
            self.take()
        self.depth -= 1
        return node

    # -- expressions, by JavaScript's precedence -----------------------------------------------------

    def expression(self) -> Node:
        self.nest()
        condition = self.binary(0)
        if self.at("?"):
            t = self.take()
            a = self.expression()
            self.take(":")
            condition = Node("?", t.col, [condition, a, self.expression()])
        self.depth -= 1
        return condition

    LEVELS = (("||",), ("&&",), ("===", "!==", "==", "!="), ("<", "<=", ">", ">="), ("+", "-"),
              ("*", "/", "%"))  # fmt: skip

    def binary(self, level: int) -> Node:
        if level == len(self.LEVELS):
            return self.unary()
        left = self.binary(level + 1)
        while self.tok.kind == "op" and self.tok.text in self.LEVELS[level]:
            t = self.take()
            left = Node(t.text, t.col, [left, self.binary(level + 1)])
        return left

    def unary(self) -> Node:
        node, prefixed = self.prefixed()
        if self.at("**"):
            if prefixed:  # as JavaScript: -x ** 2 is ambiguous
                self.fail(self.tok.col, "put the unary expression before '**' in parentheses")
            t = self.take()
            self.nest()
            node = Node("**", t.col, [node, self.unary()])  # right-associative
            self.depth -= 1
        return node

    def prefixed(self) -> tuple[Node, bool]:
        if not self.at("-", "+", "!"):
            return self.primary(), False
        self.nest()
        t = self.take()
        node = Node("unary" + t.text, t.col, [self.prefixed()[0]])
        self.depth -= 1
        return node, True

    def items(self, closer: str) -> list[Node]:
        """Comma-separated expressions up to `closer` (taken), as in `[a, b]` and `f(a, b)`."""
        found = []
        while not self.at(closer):
            found.append(self.expression())
            if not self.at(closer):
                self.take(",")
        self.take(closer)
        return found

    def primary(self) -> Node:
        t = self.take()
        if t.kind == "number":
            return Node("number", t.col, [float(t.text)])
        if t.text in ("true", "false"):
            return Node("number", t.col, [t.text == "true"])
        if t.text == "(":
            inner = self.expression()
            self.take(")")
            return inner
        if t.text == "[":
            return Node("array", t.col, self.items("]"))
        if t.text == "Math":
            self.take(".")
            member = self.take()
            if member.text in MATH_CONSTANTS:
                return Node("number", t.col, [MATH_CONSTANTS[member.text]])
            if member.text not in MATH_FUNCTIONS:
                self.fail(member.col, f"Math.{member.text} is not available")
            self.take("(")
            return Node("call", t.col, [member.text, self.items(")")])
        if t.kind == "name" and t.text not in KEYWORDS:
            self.lookup(t)
            return Node("name", t.col, [t.text])
        self.fail(t.col, f"unexpected {t.text!r}" if t.kind != "end" else "unexpected end")
        raise AssertionError


def number(v: Value) -> float:
    if isinstance(v, list):
        return math.nan  # JavaScript would turn an array into a string or NaN
    return float(v)


def truthy(v: Value) -> bool:
    return bool(v) if isinstance(v, list) else not (v == 0 or math.isnan(float(v)))


def js_power(a: float, b: float) -> float:
    try:
        return float(a**b) if not (a < 0 and b != int(b)) else math.nan
    except OverflowError:
        return math.inf
    except ZeroDivisionError:
        return math.inf


ARITHMETIC: dict[str, Callable[[float, float], float | bool]] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": div,  # IEEE division, as JavaScript's: x/0 is ±inf, 0/0 NaN
    "%": lambda a, b: math.fmod(a, b) if b != 0 and math.isfinite(a) else (a if math.isinf(b) else math.nan),
    "**": js_power,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "===": lambda a, b: a == b,
    "==": lambda a, b: a == b,
    "!==": lambda a, b: a != b,
    "!=": lambda a, b: a != b,
}


def evaluate(node: Node, env: list[dict[str, Value]]) -> Value:
    k, a = node.kind, node.args
    if k == "number":
        return a[0]
    if k == "name":
        return next(scope[a[0]] for scope in reversed(env) if a[0] in scope)
    if k == "array":
        return [evaluate(e, env) for e in a]
    if k == "call":
        return MATH_FUNCTIONS[a[0]](*(number(evaluate(e, env)) for e in a[1]))
    if k == "?":
        return evaluate(a[1] if truthy(evaluate(a[0], env)) else a[2], env)
    if k == "&&":
        left = evaluate(a[0], env)
        return evaluate(a[1], env) if truthy(left) else left
    if k == "||":
        left = evaluate(a[0], env)
        return left if truthy(left) else evaluate(a[1], env)
    if k == "unary-":
        return -number(evaluate(a[0], env))
    if k == "unary+":
        return number(evaluate(a[0], env))
    if k == "unary!":
        return not truthy(evaluate(a[0], env))
    try:
        return ARITHMETIC[k](number(evaluate(a[0], env)), number(evaluate(a[1], env)))
    except OverflowError:
        return math.inf


def execute(statements: list[Node], env: list[dict[str, Value]]) -> None:
    for s in statements:
        if s.kind == "declare":
            for name, expr in s.args:
                env[-1][name] = evaluate(expr, env)
        elif s.kind == "assign":
            value = evaluate(s.args[1], env)
            next(scope for scope in reversed(env) if s.args[0] in scope)[s.args[0]] = value
        elif s.kind == "return":
            raise Return(evaluate(s.args[0], env))
        elif s.kind == "if":
            branch = s.args[1] if truthy(evaluate(s.args[0], env)) else s.args[2]
            if branch is not None:
                execute([branch], env)
        elif s.kind == "block":
            execute(s.args, [*env, {}])


def parse_drag_constraint(text: str, shape: str) -> DragConstraint:
    where = f"shape {shape}: draggingConstraint"
    if len(text) > MAX_LENGTH:
        raise DragConstraintError(f"{where} is longer than {MAX_LENGTH} characters")
    statements = Parser(text, where).body()
    if not statements:
        raise DragConstraintError(f'{where} is empty: write e.g. "return [x, y]"')

    def constrain(x: float, y: float) -> tuple[float, float]:
        try:
            execute(statements, [{"x": x, "y": y}])
            value: Value = math.nan
            message = 'returns nothing (write e.g. "return [x, 0]")'
        except Return as r:
            value = r.value
            message = "must return a position [x, y]"
        if not (isinstance(value, list) and len(value) == 2):
            raise DragConstraintError(f"{where} {message}")
        px, py = (number(v) for v in value)
        if not (math.isfinite(px) and math.isfinite(py)):
            raise DragConstraintError(f"{where} at x={x:g}, y={y:g} is not a finite position: [{px}, {py}]")
        return px, py

    return constrain
