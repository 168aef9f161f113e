"""Lazy expressions over the unknowns of a diagram.

While the Style program runs, a value that depends on an unknown (`?`, or a shape property Penrose
optimizes) is a `Node`: a small expression DAG whose leaves are slots of the unknowns vector `x`.
Library code runs on Nodes unchanged (adcore's lazy-value protocol records its operations), so a
computed function applied to unknowns yields a Node with the right structure (a vector is a list).

Three things happen to Nodes later:
- `signature(value)` abstracts numbers into slots: values of one signature are computed by one
  adcore function, whatever their numbers (this is how compiled code stays proportional to the
  number of *kinds* of goals, not to the number of goals);
- `replay(value, inputs, consts)` rebuilds the value from traced slot values inside that function;
- `evaluate(value, x)` computes it on numbers (for rendering after optimization).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from adcore.values import _eager, binary, unary

_INTERN: dict[tuple[Any, ...], int] = {}


def intern(sig: tuple[Any, ...]) -> int:
    """A small integer naming a signature (signatures nest, so hashing stays cheap)."""
    found = _INTERN.get(sig)
    if found is None:
        found = _INTERN[sig] = len(_INTERN)
    return found


class UnknownBranchError(Exception):
    """A Style program used an unknown where a plain value is needed (a Python branch, an index)."""


class Node:
    """op: "input" (static = slot), a primitive name ("add", "sin" ...), "select", "ipow"
    (static = exponent), "call" (static = adcore Fn; args = its arguments) or "part" (static =
    path into a call's result)."""

    __adcore_lazy__ = True
    __slots__ = ("op", "args", "static", "_sig")

    def __init__(self, op: str, args: tuple[Any, ...] = (), static: Any = None):
        self.op = op
        self.args = args
        self.static = static
        self._sig: tuple[int, tuple[int, ...], tuple[float, ...]] | None = None

    def __repr__(self) -> str:
        if self.op == "input":
            return f"x[{self.static}]"
        name = getattr(self.static, "name", self.static)
        return f"{self.op}{'' if name is None else '<' + str(name) + '>'}({', '.join(map(repr, self.args))})"

    def __bool__(self) -> bool:
        raise UnknownBranchError("a value that depends on an unknown (?) cannot decide a choice here")

    def __float__(self) -> float:
        raise UnknownBranchError("a value that depends on an unknown (?) has no fixed number before layout")

    __hash__ = object.__hash__

    # -- the lazy protocol of adcore ------------------------------------------------------------------
    @classmethod
    def lazy_prim(cls, prim: str, args: Sequence[Any]) -> Any:
        if all(not isinstance(a, Node) for a in args):
            return _eager(prim, *args)
        return Node(prim, tuple(args))

    @classmethod
    def lazy_select(cls, cond: Any, a: Any, b: Any) -> Any:
        if not isinstance(cond, Node):
            return a if cond else b
        return Node("select", (cond, a, b))

    @classmethod
    def lazy_call(cls, fn: Any, args: Sequence[Any]) -> Any:
        call = Node("call", tuple(args), fn)
        return _parts(call, fn.ret, ())

    # -- arithmetic ---------------------------------------------------------------------------------
    def __add__(self, o: Any) -> Any:
        return binary("add", self, o)

    def __radd__(self, o: Any) -> Any:
        return binary("add", o, self)

    def __sub__(self, o: Any) -> Any:
        return binary("sub", self, o)

    def __rsub__(self, o: Any) -> Any:
        return binary("sub", o, self)

    def __mul__(self, o: Any) -> Any:
        return binary("mul", self, o)

    def __rmul__(self, o: Any) -> Any:
        return binary("mul", o, self)

    def __truediv__(self, o: Any) -> Any:
        return binary("div", self, o)

    def __rtruediv__(self, o: Any) -> Any:
        return binary("div", o, self)

    def __neg__(self) -> Any:
        return unary("neg", self)

    def __pos__(self) -> Any:
        return self

    def __abs__(self) -> Any:
        return unary("abs", self)

    def __pow__(self, o: Any) -> Any:
        if isinstance(o, int) and not isinstance(o, bool):
            return Node("ipow", (self,), o)
        from adcore import math as am

        return am.pow(self, o)

    def __rpow__(self, o: Any) -> Any:
        from adcore import math as am

        return am.pow(o, self)

    def __lt__(self, o: Any) -> Any:
        return binary("lt", self, o)

    def __le__(self, o: Any) -> Any:
        return binary("le", self, o)

    def __gt__(self, o: Any) -> Any:
        return binary("gt", self, o)

    def __ge__(self, o: Any) -> Any:
        return binary("ge", self, o)


def _parts(call: Node, ty: Any, path: tuple[Any, ...]) -> Any:
    """The user-level result of a lazy call: nested lists/dicts of `part` Nodes."""
    from adcore.types import Scalar, StructT, VecT

    if isinstance(ty, Scalar):
        return Node("part", (call,), path)
    if isinstance(ty, VecT):
        return [_parts(call, ty.elem, (*path, i)) for i in range(ty.n)]
    if isinstance(ty, StructT):
        return {k: _parts(call, ft, (*path, k)) for k, ft in ty.fields}
    raise TypeError(f"cannot make a lazy value of type {ty!r}")


def input_node(slot: int) -> Node:
    return Node("input", (), slot)


def depends_on_unknowns(value: Any) -> bool:
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, Node):
            return True
        if isinstance(v, (list, tuple)):
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
    return False


# -- signatures -------------------------------------------------------------------------------------

Sig = tuple[int, tuple[int, ...], tuple[float, ...]]  # (signature id, input slots, constants)
PropsOf = Callable[[Any], Sequence[tuple[str, Any]] | None]


def _no_shapes(value: Any) -> None:
    return None


def signature(value: Any, props_of: PropsOf = _no_shapes, memo: dict[int, Sig] | None = None) -> Sig:
    """The structure of `value` with its numbers abstracted into slots, in a fixed traversal order.

    `props_of(v)` returns (kind, ((prop, value), ...)) for objects standing for shapes, or None.
    `memo` caches the signatures of shapes by identity (they are shared by many goals).
    """
    if isinstance(value, Node):
        return _node_sig(value, props_of)
    if isinstance(value, bool):
        return intern(("bool", value)), (), ()
    if isinstance(value, (int, float, np.floating, np.integer)):
        return _CONST_SIG, (), (float(value),)
    if isinstance(value, str):
        return intern(("str", value)), (), ()
    if isinstance(value, (list, tuple)):
        return _combine("list", [signature(v, props_of, memo) for v in value])
    if isinstance(value, dict):
        keys = tuple(value)
        sid, ins, cs = _combine("dict", [signature(value[k], props_of) for k in keys])
        return intern(("keys", keys, sid)), ins, cs
    if memo is not None and id(value) in memo:
        return memo[id(value)]
    described = props_of(value)
    if described is not None:
        kind, props = described
        names = tuple(p for p, _ in props)
        sid, ins, cs = _combine("shape", [signature(v, props_of) for _, v in props])
        result = intern(("shape", kind, names, sid)), ins, cs
        if memo is not None:
            memo[id(value)] = result
        return result
    if value is None:
        return intern(("none",)), (), ()
    sig = getattr(value, "static_signature", None)  # e.g. path commands: (tag, fields)
    if sig is not None:
        tag, fields = sig()
        sid, ins, cs = _combine("obj", [signature(f, props_of) for f in fields])
        return intern(("obj", tag, sid)), ins, cs
    raise TypeError(f"cannot abstract a value of type {type(value).__name__}: {value!r}")


_CONST_SIG = intern(("const",))
_INPUT_SIG = intern(("input",))


def _combine(tag: str, parts: list[Sig]) -> Sig:
    ids = tuple(p[0] for p in parts)
    ins: tuple[int, ...] = tuple(i for p in parts for i in p[1])
    cs: tuple[float, ...] = tuple(c for p in parts for c in p[2])
    return intern((tag, ids)), ins, cs


def _node_sig(node: Node, props_of: PropsOf) -> Sig:
    if node._sig is not None:
        return node._sig
    if node.op == "input":
        result: Sig = (_INPUT_SIG, (node.static,), ())
    else:
        static = node.static
        if node.op == "call":
            static = id(static)  # functions are compared by identity
        sid, ins, cs = _combine("args", [signature(a, props_of) for a in node.args])
        result = (intern((node.op, static, sid)), ins, cs)
    node._sig = result
    return result


# -- replay inside a trace, and evaluation on numbers -----------------------------------------------


def replay(value: Any, inputs: Iterator[Any], consts: Iterator[Any], rebuild_shape: Callable[..., Any] | None = None,
           props_of: PropsOf = _no_shapes) -> Any:
    """Rebuild `value` with its slots taken, in signature order, from `inputs` and `consts`."""
    if isinstance(value, Node):
        return _replay_node(value, inputs, consts, rebuild_shape, props_of)
    if isinstance(value, (bool, str)) or value is None:
        return value
    if isinstance(value, (int, float, np.floating, np.integer)):
        return next(consts)
    if isinstance(value, (list, tuple)):
        return [replay(v, inputs, consts, rebuild_shape, props_of) for v in value]
    if isinstance(value, dict):
        return {k: replay(v, inputs, consts, rebuild_shape, props_of) for k, v in value.items()}
    described = props_of(value)
    if described is not None:
        kind, props = described
        new = {p: replay(v, inputs, consts, rebuild_shape, props_of) for p, v in props}
        assert rebuild_shape is not None
        return rebuild_shape(value, kind, new)
    sig = getattr(value, "static_signature", None)
    if sig is not None:
        _, fields = sig()
        return value.rebuild([replay(f, inputs, consts, rebuild_shape, props_of) for f in fields])
    raise TypeError(f"cannot replay a value of type {type(value).__name__}")


def _replay_node(node: Node, inputs: Iterator[Any], consts: Iterator[Any], rebuild_shape: Any, props_of: PropsOf) -> Any:
    if node.op == "input":
        return next(inputs)
    args = [replay(a, inputs, consts, rebuild_shape, props_of) for a in node.args]
    return apply_op(node, args)


def apply_op(node: Node, args: list[Any]) -> Any:
    """Apply a node's operation to already computed (traced or numeric) arguments."""
    from adcore.api import select

    op = node.op
    if op == "select":
        return select(*args)
    if op == "ipow":
        base = args[0]
        return base**node.static
    if op == "call":
        return node.static(*args)
    if op == "part":
        v = args[0]
        for p in node.static:
            v = v[p]
        return v
    if len(args) == 1:
        return unary(op, args[0])
    return binary(op, args[0], args[1])


def evaluate(value: Any, x: np.ndarray, memo: dict[int, Any] | None = None) -> Any:
    """`value` computed on the numbers `x` (Nodes replaced by floats; the structure kept)."""
    memo = {} if memo is None else memo
    if isinstance(value, Node):
        found = memo.get(id(value))
        if found is None:
            if value.op == "input":
                found = float(x[value.static])
            elif value.op == "part":
                found = apply_op(value, [evaluate(value.args[0], x, memo)])
            else:
                found = apply_op(value, [evaluate(a, x, memo) for a in value.args])
            memo[id(value)] = (found, value)  # keep value alive so its id stays unique
            return found
        return found[0]
    if isinstance(value, list):
        return [evaluate(v, x, memo) for v in value]
    if isinstance(value, tuple):
        return tuple(evaluate(v, x, memo) for v in value)
    if isinstance(value, dict):
        return {k: evaluate(v, x, memo) for k, v in value.items()}
    rebuild = getattr(value, "rebuild", None)
    if rebuild is not None and hasattr(value, "static_signature"):
        _, fields = value.static_signature()
        return rebuild([evaluate(f, x, memo) for f in fields])
    return value
