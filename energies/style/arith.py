"""Style values and Penrose's operators on them.

Values are plain Python (docs/energies-design.md): a number is a `float` or a lazy `Node`; vectors
and lists are `list`s of numbers; a matrix is a list of rows; colors are rgba lists (or the
library's `none()`); strings and booleans are themselves; shapes are `ShapeInstance`s. Operators
follow Penrose's table (Style.ts evalBinOp): `+ -` on numbers, vectors, matrices and (`+`) strings;
`*` scalar/vector/matrix products; `/` by a scalar; `^` on numbers; `.*` `./` elementwise on vectors
and matrices. Anything else is a `StyleTypeError` the caller turns into a located `BinOpTypeError`.
"""

from __future__ import annotations

import math
from typing import Any

from energies.diagram import ShapeInstance
from energies.expr import Node
from energies.limits import MAX_MATRIX_PRODUCT, MAX_STRING_LENGTH


class StyleTypeError(Exception):
    """An operator or index applied to values of the wrong kind (message says which)."""


def is_number(v: Any) -> bool:
    return isinstance(v, int | float | Node) and not isinstance(v, bool)


def is_vector(v: Any) -> bool:
    return isinstance(v, list | tuple) and all(is_number(x) for x in v)


def is_matrix(v: Any) -> bool:
    return isinstance(v, list | tuple) and len(v) > 0 and all(is_vector(row) for row in v)


def kind_of(v: Any) -> str:
    """The kind of a value in Style's words, with its article ("a number"), for messages."""
    if isinstance(v, bool):
        return "a boolean"
    if is_number(v):
        return "a number"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, ShapeInstance):
        return f"a {v.kind} shape"
    if is_vector(v):
        return "a vector"
    if is_matrix(v):
        return "a matrix"
    if isinstance(v, list | tuple) and v and all(isinstance(x, ShapeInstance) for x in v):
        return "a list of shapes"
    if isinstance(v, list | tuple) and v and all(hasattr(x, "cmd") for x in v):
        return "path data"
    if isinstance(v, list | tuple):
        return "a list"
    return "a color" if hasattr(v, "is_none") else "a value of another kind"


# ---- scalars with JavaScript's arithmetic on constants --------------------------------------------


def js_div(a: Any, b: Any) -> Any:
    if isinstance(a, Node) or isinstance(b, Node):
        return a / b
    if b == 0:
        if a == 0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def js_pow(a: Any, b: Any) -> Any:
    if isinstance(b, float) and b.is_integer() and abs(b) <= 64:
        b = int(b)  # exact repeated products, and defined for negative bases
    if isinstance(a, Node) or isinstance(b, Node):
        return a**b
    try:
        return math.pow(a, b)
    except OverflowError:
        return math.inf
    except (ValueError, ZeroDivisionError):
        if a == 0 and b < 0:
            return math.inf
        return math.nan


def _scalar_op(op: str, a: Any, b: Any) -> Any:
    if op == "BPlus":
        return a + b
    if op == "BMinus":
        return a - b
    if op == "Multiply":
        return a * b
    if op == "Divide":
        return js_div(a, b)
    if op == "Exp":
        return js_pow(a, b)
    raise StyleTypeError(f"{_SYMBOL[op]} is not defined on two numbers")


_SYMBOL = {
    "BPlus": "+",
    "BMinus": "-",
    "Multiply": "*",
    "Divide": "/",
    "Exp": "^",
    "EWMultiply": ".*",
    "EWDivide": "./",
}


def _same_length(a: Any, b: Any, what: str) -> None:
    if len(a) != len(b):
        raise StyleTypeError(f"{what} of different sizes ({len(a)} and {len(b)})")


def _matmul(a: list, b: list) -> list:
    if any(len(row) != len(b) for row in a):
        raise StyleTypeError("matrix product of incompatible sizes")
    cols = len(b[0]) if b else 0
    if len(a) * len(b) * cols > MAX_MATRIX_PRODUCT:
        work = len(a) * len(b) * cols
        raise StyleTypeError(
            f"the matrix product needs {work:,} multiply-adds, above the limit of {MAX_MATRIX_PRODUCT:,}"
        )
    return [[_dot(row, [b[k][j] for k in range(len(b))]) for j in range(cols)] for row in a]


def _dot(u: Any, v: Any) -> Any:
    total: Any = 0.0
    for a, b in zip(u, v, strict=True):
        total = total + a * b
    return total


def binop(op: str, left: Any, right: Any) -> Any:
    """Penrose's binary operators; raises StyleTypeError on a combination Penrose rejects."""
    sym = _SYMBOL.get(op, op)
    if is_number(left) and is_number(right):
        return _scalar_op(op, left, right)
    if isinstance(left, str) and isinstance(right, str):
        if op == "BPlus":
            if len(left) + len(right) > MAX_STRING_LENGTH:  # doubling a string 40 times is 2^40
                n = len(left) + len(right)
                raise StyleTypeError(
                    f"the string would be {n:,} characters, above the limit of {MAX_STRING_LENGTH:,}"
                )
            return left + right
        raise StyleTypeError(f"{sym} is not defined on strings")
    if is_vector(left) and is_vector(right):
        _same_length(left, right, "vectors")
        elementwise = {"BPlus": "BPlus", "BMinus": "BMinus", "EWMultiply": "Multiply", "EWDivide": "Divide"}
        if op in elementwise:
            return [_scalar_op(elementwise[op], a, b) for a, b in zip(left, right, strict=True)]
        raise StyleTypeError(f"{sym} is not defined on two vectors (use .* or ./ for elementwise)")
    if is_number(left) and is_vector(right):
        if op == "Multiply":
            return [left * x for x in right]
    elif is_vector(left) and is_number(right):
        if op == "Multiply":
            return [x * right for x in left]
        if op == "Divide":
            return [js_div(x, right) for x in left]
    elif is_number(left) and is_matrix(right):
        if op == "Multiply":
            return [[left * x for x in row] for row in right]
    elif is_matrix(left) and is_number(right):
        if op == "Multiply":
            return [[x * right for x in row] for row in left]
        if op == "Divide":
            return [[js_div(x, right) for x in row] for row in left]
    elif is_matrix(left) and is_vector(right):
        if op == "Multiply":
            if any(len(row) != len(right) for row in left):
                raise StyleTypeError("matrix-vector product of incompatible sizes")
            return [_dot(row, right) for row in left]
    elif is_vector(left) and is_matrix(right):
        if op == "Multiply":
            _same_length(left, right, "vector-matrix product")
            return [_dot(left, [row[j] for row in right]) for j in range(len(right[0]))]
    elif is_matrix(left) and is_matrix(right):
        if op == "Multiply":
            return _matmul(list(left), list(right))
        elementwise = {"BPlus": "BPlus", "BMinus": "BMinus", "EWMultiply": "Multiply", "EWDivide": "Divide"}
        if op in elementwise:
            _same_length(left, right, "matrices")
            out = []
            for ra, rb in zip(left, right, strict=True):
                _same_length(ra, rb, "matrices")
                out.append([_scalar_op(elementwise[op], a, b) for a, b in zip(ra, rb, strict=True)])
            return out
    raise StyleTypeError(f"{sym} is not defined on {kind_of(left)} and {kind_of(right)}")


def negate(v: Any) -> Any:
    if is_number(v):
        return -v
    if is_vector(v):
        return [-x for x in v]
    raise StyleTypeError(f"unary - is not defined on {kind_of(v)}")


def transpose(v: Any) -> Any:
    if is_matrix(v):
        n = len(v[0])
        if any(len(row) != n for row in v):
            raise StyleTypeError("transpose of a ragged matrix")
        return [[row[j] for row in v] for j in range(n)]
    raise StyleTypeError(f"transpose (') is only defined on matrices, not {kind_of(v)}")


def index_value(v: Any, indices: list[int], matrix: bool | None = None) -> Any:
    """Penrose's `a[i]` / `m[i][j]` (one index on a list or vector, one or two on a matrix).
    `matrix` is `is_matrix(v)` when the caller knows it (a scan of every entry)."""
    if isinstance(v, ShapeInstance) or not isinstance(v, list | tuple):
        raise StyleTypeError(f"{kind_of(v)} cannot be indexed")
    if len(indices) == 2 and matrix is None:
        matrix = is_matrix(v)
    if len(indices) > 2 or (len(indices) == 2 and not matrix):
        raise StyleTypeError(f"too many indices ({len(indices)}) for {kind_of(v)}")
    out: Any = v
    for i in indices:
        if not isinstance(out, list | tuple) or not 0 <= i < len(out):
            raise IndexError(f"index {i} is out of bounds for a value of length {len(out)}")
        out = out[i]
    return out


def to_plain(v: Any) -> Any:
    """Library results normalized: tuples become lists, numpy scalars floats."""
    if isinstance(v, tuple):
        return [to_plain(x) for x in v]
    if isinstance(v, list):
        return [to_plain(x) for x in v] if any(isinstance(x, tuple | list) for x in v) else v
    if type(v).__module__ == "numpy" and hasattr(v, "item"):
        return v.item()
    return v
