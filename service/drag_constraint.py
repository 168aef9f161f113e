"""A shape's ``draggingConstraint``: a small expression over the pointer's ``x`` and ``y`` giving
the position a dragged shape may take, e.g. ``[x, 0]`` (slide along the x axis) or
``[clamp(x, -100, 100), max(y, 0)]``.

    constraint = parse_drag_constraint(text, shape="`A`.icon")   # DragConstraintError names the place
    constraint(x, y) -> (x', y')

The text is parsed by Python's ``ast`` (parsing never runs anything) and only a whitelist of
nodes is accepted: numbers, ``x``, ``y``, ``+ - * / **``, unary minus, the functions in
``FUNCTIONS`` and one outer list or tuple of two items. Evaluation walks that tree with
``math``; nothing is ever handed to ``eval`` or to a browser. A leading ``return`` and a trailing
``;`` (Penrose writes it as a function body) are accepted.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable

MAX_LENGTH = 500  # characters
MAX_NODES = 200

FUNCTIONS: dict[str, Callable[..., float]] = {
    "min": min,
    "max": max,
    "abs": abs,
    "clamp": lambda v, lo, hi: min(max(v, lo), hi),
    "sqrt": math.sqrt,
    "sin": math.sin,
    "cos": math.cos,
    "atan2": math.atan2,
    "hypot": math.hypot,
    "round": round,
}
BINARY: dict[type, Callable[[float, float], float]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.Pow: lambda a, b: a**b,
}
ALLOWED = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.USub, ast.UAdd, ast.Call, ast.Name, ast.Load,
           ast.Constant, ast.List, ast.Tuple, *BINARY)


class DragConstraintError(ValueError):
    """A draggingConstraint that cannot be used; the message names the shape and the column."""


DragConstraint = Callable[[float, float], tuple[float, float]]


def parse_drag_constraint(text: str, shape: str) -> DragConstraint:
    where = f"shape {shape}: draggingConstraint"
    body = text.strip()
    if len(body) > MAX_LENGTH:
        raise DragConstraintError(f"{where} is longer than {MAX_LENGTH} characters")
    offset = len(text) - len(text.lstrip())
    if body.startswith("return "):
        body, offset = body[len("return ") :], offset + len("return ")
    body = body.rstrip().rstrip(";")
    try:
        tree = ast.parse(body, mode="eval")
    except SyntaxError as e:
        raise DragConstraintError(f"{where}, column {(e.offset or 1) + offset}: {e.msg}") from None
    nodes = list(ast.walk(tree))
    if len(nodes) > MAX_NODES:
        raise DragConstraintError(f"{where} has more than {MAX_NODES} terms")
    for node in nodes:
        col = getattr(node, "col_offset", 0) + offset + 1
        if not isinstance(node, ALLOWED):
            raise DragConstraintError(f"{where}, column {col}: {type(node).__name__} is not allowed")
        if isinstance(node, ast.Name) and node.id not in ("x", "y", *FUNCTIONS):
            raise DragConstraintError(f"{where}, column {col}: unknown name {node.id!r} (use x, y)")
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS):
            raise DragConstraintError(f"{where}, column {col}: only {', '.join(FUNCTIONS)} can be called")
        if isinstance(node, ast.Call) and node.keywords:
            raise DragConstraintError(f"{where}, column {col}: keyword arguments are not allowed")
        if isinstance(node, ast.Constant) and not isinstance(node.value, (int, float)):
            raise DragConstraintError(f"{where}, column {col}: only numbers are allowed")
    top = tree.body
    if not (isinstance(top, (ast.List, ast.Tuple)) and len(top.elts) == 2):
        raise DragConstraintError(f"{where} must give a position [x, y]")
    if any(isinstance(n, (ast.List, ast.Tuple)) for e in top.elts for n in ast.walk(e)):
        raise DragConstraintError(f"{where}: only the outer [x, y] may be a list")

    def value(node: ast.AST, env: dict[str, float]) -> float:
        if isinstance(node, ast.Constant):
            return float(node.value)
        if isinstance(node, ast.Name):
            return env[node.id]
        if isinstance(node, ast.UnaryOp):
            v = value(node.operand, env)
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.BinOp):
            return BINARY[type(node.op)](value(node.left, env), value(node.right, env))
        assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        return float(FUNCTIONS[node.func.id](*(value(a, env) for a in node.args)))

    def constrain(x: float, y: float) -> tuple[float, float]:
        try:
            px, py = (value(e, {"x": x, "y": y}) for e in top.elts)
        except (ArithmeticError, ValueError, TypeError) as e:
            raise DragConstraintError(f"{where} at x={x:g}, y={y:g}: {e}") from None
        if not (math.isfinite(px) and math.isfinite(py)):
            raise DragConstraintError(f"{where} at x={x:g}, y={y:g} is not a finite position")
        return px, py

    return constrain
