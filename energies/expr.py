"""Lazy expressions over the unknowns of a diagram.

While the Style program runs, a value that depends on an unknown (`?`, or a shape property Penrose
optimizes) is a `Node`: a small expression DAG whose leaves are slots of the unknowns vector `x`.
Library code runs on Nodes unchanged (adcore's lazy-value protocol records its operations), so a
computed function applied to unknowns yields a Node with the right structure (a vector is a list).

Three things happen to Nodes later:
- `signature(value)` abstracts numbers into slots: values of one signature are computed by one
  adcore function, whatever their numbers (this is how compiled code stays proportional to the
  number of *kinds* of goals, not to the number of goals);
- `replay(value, inputs, consts)` rebuilds the value from traced slot values inside that function
  (a long list of plain slots, such as a polygon's points, also as one adcore array: `LoopList`);
- `evaluate(value, x)` computes it on numbers (for rendering after optimization).

A *template* is a value whose leaves may also be *holes* (`hole_node(column, path)`, and
`Hole` for a whole shape): the Style's bulk evaluation computes a statement's arguments once
over holes standing for "this path of the matched object", and `replay(..., holes=...)` or
`instantiate` fills them in (with traced values inside a kind function, or with one match's own
values). A hole's `path` leads from its column's value to the leaf: an int indexes a list or
tuple, a str names a shape's property (or a dict's key, or a dataclass's field).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from adcore import LRU, binary, eager, unary

# Signature ids name signatures inside the keys of the energy cache, so an id must never name two
# signatures: ids come from a counter that never restarts, and the table forgets the signatures
# least recently used beyond INTERN_ENTRIES (a long-lived worker would otherwise keep every
# signature it ever met). A signature interned again after that gets a new id, so cached energies
# keyed by the old one just stop matching.
INTERN_ENTRIES = 1_000_000  # about 100 MB of signature tuples at most
_INTERN: LRU[tuple[Any, ...], int] = LRU(INTERN_ENTRIES)
_IDS = itertools.count()


def intern(sig: tuple[Any, ...]) -> int:
    """A small integer naming a signature (signatures nest, so hashing stays cheap)."""
    found = _INTERN.get(sig)
    if found is None:
        found = next(_IDS)
        _INTERN.put(sig, found)
    return found


class UnknownBranchError(Exception):
    """A Style program used an unknown where a plain value is needed (a Python branch, an index)."""


class Node:
    """op: "input" (static = slot), a primitive name ("add", "sin" ...), "select", "ipow"
    (static = exponent), "call" (static = adcore Fn or `Deferred`; args = its arguments), "part"
    (static = path into a call's result) or "hole" (static = (column, path), see the module
    docstring)."""

    __adcore_lazy__ = True
    __slots__ = ("op", "args", "static")

    def __init__(self, op: str, args: tuple[Any, ...] = (), static: Any = None):
        self.op = op
        self.args = args
        self.static = static

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
            return eager(prim, *args)
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


class Deferred:
    """A library function returning one number (a `call` Node's static), run when its Node is
    replayed or evaluated rather than when it is called: on a long list of unknowns, a function written for
    loops then sees the list as one array (`LoopList`) instead of recording an unrolled DAG. One
    object per function (`deferred`), so that its calls share a signature."""

    def __init__(self, impl: Callable[..., Any], name: str):
        from adcore import Real

        self.impl, self.name, self.ret = impl, name, Real

    def __call__(self, *args: Any) -> Any:
        return self.impl(*args)


_DEFERRED: dict[Callable[..., Any], Deferred] = {}


def deferred_call(impl: Callable[..., Any], name: str, args: Sequence[Any]) -> Any:
    """impl(*args) as a Node, run when replayed (see `Deferred`)."""
    found = _DEFERRED.get(impl)
    if found is None:
        found = _DEFERRED[impl] = Deferred(impl, name)
    return Node.lazy_call(found, args)


def _parts(call: Node, ty: Any, path: tuple[Any, ...]) -> Any:
    """The user-level result of a lazy call: nested lists/dicts of `part` Nodes."""
    from adcore import Scalar, StructT, VecT

    if isinstance(ty, Scalar):
        return Node("part", (call,), path)
    if isinstance(ty, VecT):
        return [_parts(call, ty.elem, (*path, i)) for i in range(ty.n)]
    if isinstance(ty, StructT):
        return {k: _parts(call, ft, (*path, k)) for k, ft in ty.fields}
    raise TypeError(f"cannot make a lazy value of type {ty!r}")


def input_node(slot: int) -> Node:
    return Node("input", (), slot)


Path = tuple[int | str, ...]


def hole_node(column: int, path: Path) -> Node:
    return Node("hole", (), (column, path))


class Hole:
    """A whole value of a hole column inside a template, standing for the value at `hole`
    (`diagram.HoleShape`: a shape, e.g. `x.icon` in `disjoint(x.icon, y.icon)`)."""

    hole: tuple[int, Path]


@dataclasses.dataclass(frozen=True)
class Fixed:
    """A number that is part of a value's structure rather than a constant slot: values whose
    signatures agree share it, and code traced from them sees the number itself (`props_of` makes
    a rectangle's rotation of 0 one, so that its box is traced axis-aligned, without a turn)."""

    value: float


def is_zero(v: Any) -> bool:
    """Whether `v` is the number 0 itself (a Python or numpy number, not a bool, a slot or an
    unknown): the test by which `props_of` fixes a rotation and the library leaves out a turn."""
    return isinstance(v, (int, float, np.floating, np.integer)) and not isinstance(v, bool) and v == 0


def at_path(value: Any, path: Path) -> Any:
    """The leaf of `value` that a hole's path leads to."""
    for step in path:
        if isinstance(step, int) or isinstance(value, dict):
            value = value[step]
        else:
            props = getattr(value, "props", None)
            value = props[step] if isinstance(props, dict) else getattr(value, step)
    return value


def hole_places(template: Any) -> dict[int, set[int | str] | None]:
    """Per hole column a template reads: the first steps of its holes' paths (the places of the
    column's value it reads), or None where a hole stands for the column's whole value."""
    places: dict[int, set[int | str] | None] = {}
    seen: set[int] = set()
    stack = [template]
    while stack:
        v = stack.pop()
        hole = v.static if isinstance(v, Node) and v.op == "hole" else v.hole if isinstance(v, Hole) else None
        if hole is not None:
            column, path = hole
            read = places.setdefault(column, set())
            if not path:
                places[column] = None
            elif read is not None:
                read.add(path[0])
        elif isinstance(v, Node):
            if id(v) not in seen:  # a DAG: each node once
                seen.add(id(v))
                stack.extend(v.args)
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(getattr(v, "props", None), dict):
            stack.extend(v.props.values())
    return places


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


# -- signatures ---------------------------------------------------------------------------------------

Sig = tuple[int, tuple[int, ...], tuple[float, ...]]  # (signature id, input slots, constants)
PropsOf = Callable[[Any], tuple[str, Sequence[tuple[str, Any]]] | None]  # a shape's (kind, its props)


def _no_shapes(value: Any) -> None:
    return None


def signature(value: Any, props_of: PropsOf = _no_shapes, memo: dict[int, Sig] | None = None) -> Sig:
    """The structure of `value` with its numbers abstracted into slots.

    Values are DAGs (a group's bounding box reuses its members' boxes many times), so the signature
    is the DAG's canonical form: nodes numbered in first-visit order, children referring to those
    numbers, each distinct unknown x[k] one input slot, each number one constant slot. Two values
    with one signature are computed by the same code from their slots (`replay`).
    `props_of(v)` returns (kind, ((prop, value), ...)) for objects standing for shapes, or None.
    `memo` caches whole signatures by object identity (a shape shared by many goals).
    """
    if memo is not None and id(value) in memo:
        return memo[id(value)]
    walk = _Canonical(props_of)
    shape = walk.value(value)
    result = intern((shape, tuple(walk.entries))), tuple(walk.inputs), tuple(walk.consts)
    if memo is not None:
        memo[id(value)] = result
    return result


class _Canonical:
    """One traversal in canonical order; `replay` mirrors it exactly."""

    def __init__(self, props_of: PropsOf):
        self.props_of = props_of
        self.node_index: dict[int, int] = {}
        self.input_index: dict[int, int] = {}
        self.entries: list[tuple[Any, ...]] = []
        self.inputs: list[int] = []
        self.consts: list[float] = []

    def value(self, v: Any) -> Any:
        if isinstance(v, Node):
            return ("n", self.node(v))
        if isinstance(v, bool):
            return ("b", v)
        if isinstance(v, (int, float, np.floating, np.integer)):
            self.consts.append(float(v))
            return "c"
        if isinstance(v, str):
            return ("s", v)
        if v is None:
            return None
        if isinstance(v, (list, tuple)):
            return ("l", tuple(self.value(e) for e in v))
        if isinstance(v, dict):
            return ("d", tuple((k, self.value(e)) for k, e in v.items()))
        if isinstance(v, Hole):
            return ("hole", v.hole)
        if isinstance(v, Fixed):
            return ("fixed", v.value)
        described = self.props_of(v)
        if described is not None:
            kind, props = described
            return ("shape", kind, tuple((p, self.value(e)) for p, e in props))
        if dataclasses.is_dataclass(v):
            names, fields = _fields(v)
            return ("obj", type(v).__qualname__, tuple((n, self.value(f)) for n, f in zip(names, fields)))
        raise TypeError(f"cannot abstract a value of type {type(v).__name__}: {v!r}")

    def node(self, node: Node) -> int:
        found = self.node_index.get(id(node))
        if found is not None:
            return found
        if node.op == "input":
            slot = self.input_index.get(node.static)
            if slot is None:
                slot = self.input_index[node.static] = len(self.inputs)
                self.inputs.append(node.static)
            entry: tuple[Any, ...] = ("input", slot)
        else:
            static = id(node.static) if node.op == "call" else node.static
            parts: list[Any] = []
            for a in node.args:  # `value` inlined for the usual operands: this walk is hot
                cls = a.__class__
                if cls is Node:
                    parts.append(("n", self.node(a)))
                elif cls is float:
                    self.consts.append(a)
                    parts.append("c")
                else:
                    parts.append(self.value(a))
            entry = (node.op, static, tuple(parts))
        self.node_index[id(node)] = len(self.entries)
        self.entries.append(entry)
        return self.node_index[id(node)]


# -- replay inside a trace, and evaluation on numbers -----------------------------------------------


# Lists of plain slots at least this long are replayed as arrays (`LoopList`): far above Penrose's
# registry (its longest polygon has 100 points), whose goals keep their unrolled code bit for bit.
LOOP_MIN = 256


class SlotReader:
    """The slots of one vector (a kind function's inputs or constants, an adcore array), read in
    order: `next` gives the next slot's value; `position` is how many were read."""

    def __init__(self, source: Any):
        self.source = source
        self.position = 0

    def __iter__(self) -> SlotReader:
        return self

    def __next__(self) -> Any:
        value = self.source[self.position]
        self.position += 1
        return value


MAX_UNROLLED = 5_000  # elements of a LoopList code not written for loops may read (and unroll)


class LoopList(Sequence[Any]):
    """A replayed list of plain slots (numbers, unknowns, or short lists of them, all in one
    pattern), as one adcore array: `array`, gathered from the slot vectors by one loop. Library code
    written for loops reads `array` and `len`, and adcore functions called with it take the array as
    it is (`__adcore_array__`), so code size does not grow with the length. Any other code reads it
    as the list it always was: each reading makes the elements (index instructions the builder
    numbers, so none is emitted twice in one scope), up to MAX_UNROLLED of them; beyond, reading
    them is a SizeLimitError, not a module too large to compile."""

    def __init__(self, array: Any, n: int, element: Callable[[int], Any]):
        self.array = array
        self._n = n
        self._element = element

    @property
    def __adcore_array__(self) -> Any:
        return self.array

    def __len__(self) -> int:
        return self._n

    def items(self) -> list[Any]:
        if self._n > MAX_UNROLLED:
            from energies.limits import SizeLimitError

            raise SizeLimitError(
                f"a list of {self._n:,} elements reached library code that unrolls over them (at "
                f"most {MAX_UNROLLED:,}); functions written as loops (maxList, sum, perimeter, "
                "elasticEnergy, bounding boxes of polygons...) take up to the shape limit"
            )
        return [self._element(k) for k in range(self._n)]

    def __getitem__(self, k: Any) -> Any:
        if isinstance(k, int) and -self._n <= k < self._n:
            return self._element(k % self._n)  # one element: no need to make them all
        return self.items()[k]

    def __iter__(self) -> Iterator[Any]:
        return iter(self.items())

    def __add__(self, other: Any) -> list[Any]:
        return self.items() + list(other)

    def __radd__(self, other: Any) -> list[Any]:
        return list(other) + self.items()


class _Pending:
    """An input slot a LoopList read without making its value (made on first use elsewhere)."""

    __slots__ = ("position",)

    def __init__(self, position: int):
        self.position = position


def replay(
    value: Any,
    inputs: Iterator[Any],
    consts: Iterator[Any],
    rebuild_shape: Callable[..., Any] | None = None,
    props_of: PropsOf = _no_shapes,
    holes: Sequence[Any] = (),
) -> Any:
    """Rebuild `value` with its slots taken, in signature order, from `inputs` and `consts`, and
    its holes (a template's) from the values `holes` (one per hole column).

    `value` is the representative of its signature; the traversal is the one `signature` made, so
    the n-th slot lands where the n-th slot of every other value of that signature belongs.
    """
    return _Replay(inputs, consts, rebuild_shape, props_of, holes).value(value)


def instantiate(template: Any, holes: Sequence[Any]) -> Any:
    """A template with its holes filled in by one match's own values (unknowns stay Nodes)."""
    _, slots, consts = signature(template)
    return replay(template, map(input_node, slots), iter(consts), holes=holes)


class _Replay:
    def __init__(
        self,
        inputs: Iterator[Any],
        consts: Iterator[Any],
        rebuild_shape: Any,
        props_of: PropsOf,
        holes: Sequence[Any] = (),
    ):
        self.inputs = inputs
        self.consts = consts
        self.rebuild_shape = rebuild_shape
        self.props_of = props_of
        self.holes = holes
        self.nodes: dict[int, Any] = {}
        self.input_values: dict[int, Any] = {}

    def value(self, v: Any) -> Any:
        if isinstance(v, Node):
            return self.node(v)
        if isinstance(v, (bool, str)) or v is None:
            return v
        if isinstance(v, Hole):
            return at_path(self.holes[v.hole[0]], v.hole[1])
        if isinstance(v, Fixed):
            return v.value
        if isinstance(v, (int, float, np.floating, np.integer)):
            return next(self.consts)
        if isinstance(v, (list, tuple)):
            if (
                len(v) >= LOOP_MIN
                and isinstance(self.inputs, SlotReader)
                and isinstance(self.consts, SlotReader)
            ):
                pattern = self.plain_pattern(v)
                if pattern is not None:
                    return self.loop_list(v, pattern)
            return [self.value(e) for e in v]
        if isinstance(v, dict):
            return {k: self.value(e) for k, e in v.items()}
        described = self.props_of(v)
        if described is not None:
            kind, props = described
            new = {p: self.value(e) for p, e in props}
            assert self.rebuild_shape is not None
            return self.rebuild_shape(v, kind, new)
        if dataclasses.is_dataclass(v):
            names, fields = _fields(v)
            return dataclasses.replace(v, **{n: self.value(f) for n, f in zip(names, fields)})  # type: ignore[type-var]
        raise TypeError(f"cannot replay a value of type {type(v).__name__}")

    def plain_pattern(self, v: Sequence[Any]) -> tuple[bool | None, ...] | None:
        """For a list whose every element is a plain slot (True: an unknown read for the first
        time, False: a number), or a list of them in one pattern: that pattern (one entry for scalar
        elements, marked by a leading None); else None."""
        first = v[0]
        scalar = not isinstance(first, (list, tuple))
        width = 1 if scalar else len(first)
        if width == 0:
            return None
        pattern: list[bool] | None = None
        seen: set[int] = set()
        for e in v:
            coords = (e,) if scalar else e
            if not scalar and (not isinstance(e, (list, tuple)) or len(e) != width):
                return None
            kinds = []
            for c in coords:
                if c.__class__ is Node:
                    if c.op != "input" or c.static in self.input_values or c.static in seen:
                        return None
                    seen.add(c.static)
                    kinds.append(True)
                elif isinstance(c, (int, float, np.floating, np.integer)) and not isinstance(c, bool):
                    kinds.append(False)
                else:
                    return None
            if pattern is None:
                pattern = kinds
            elif kinds != pattern:
                return None
        assert pattern is not None
        return (None, *pattern) if scalar else tuple(pattern)

    def loop_list(self, v: Sequence[Any], pattern: tuple[Any, ...]) -> LoopList:
        """The list of plain slots v as a LoopList: its slots are read (positions taken, unknowns
        registered as pending) in the order the element-by-element replay would read them."""
        import adcore
        from adcore import Real, Vec

        scalar = pattern[0] is None
        kinds = pattern[1:] if scalar else pattern
        n, n_in, n_c = len(v), sum(kinds), len(kinds) - sum(kinds)
        reader_in, reader_c = self.inputs, self.consts
        assert isinstance(reader_in, SlotReader) and isinstance(reader_c, SlotReader)
        first_in, first_c = reader_in.position, reader_c.position
        for k, e in enumerate(v):
            for j, c in enumerate((e,) if scalar else e):
                if kinds[j]:
                    self.input_values[c.static] = _Pending(first_in + k * n_in + sum(kinds[:j]))
        reader_in.position += n * n_in
        reader_c.position += n * n_c
        inputs, consts = reader_in.source, reader_c.source

        def coordinates(k: Any) -> list[Any]:
            coords, a, b = [], 0, 0
            for is_input in kinds:
                if is_input:
                    coords.append(inputs[k * n_in + (first_in + a)])
                    a += 1
                else:
                    coords.append(consts[k * n_c + (first_c + b)])
                    b += 1
            return coords

        def element(k: Any) -> Any:
            coords = coordinates(k)
            return coords[0] if scalar else coords

        array = adcore.vec(n, Real if scalar else Vec(len(kinds), Real), element)
        return LoopList(array, n, element)

    def node(self, node: Node) -> Any:
        if id(node) in self.nodes:
            return self.nodes[id(node)]
        if node.op == "input":
            if node.static not in self.input_values:
                self.input_values[node.static] = next(self.inputs)
            result = self.input_values[node.static]
            if result.__class__ is _Pending:  # read by a LoopList: made now
                result = self.input_values[node.static] = self.inputs.source[result.position]  # type: ignore[attr-defined]
        elif node.op == "hole":
            column, path = node.static
            result = at_path(self.holes[column], path)
        else:
            result = apply_op(node, [self.value(a) for a in node.args])
        self.nodes[id(node)] = result
        return result


def _child_nodes(value: Any) -> list[Node]:
    """The Nodes directly inside a node argument (through lists, dicts and dataclasses)."""
    out: list[Node] = []
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, Node):
            out.append(v)
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif dataclasses.is_dataclass(v) and not isinstance(v, type):
            stack.extend(_fields(v)[1])
    return out


def _evaluate_dag(root: Node, x: np.ndarray, memo: dict[int, Any]) -> None:
    """Post-order evaluation with an explicit stack: value DAGs can be chains thousands deep."""
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, ready = stack.pop()
        if id(node) in memo:
            continue
        if node.op == "input":
            memo[id(node)] = (float(x[node.static]), node)
        elif ready:
            args = [evaluate(a, x, memo) for a in node.args]  # children are done: shallow calls
            memo[id(node)] = (apply_op(node, args), node)  # keep node alive so its id stays unique
        else:
            stack.append((node, True))
            stack.extend((c, False) for c in _child_nodes(list(node.args)) if id(c) not in memo)


def _fields(value: Any) -> tuple[tuple[str, ...], list[Any]]:
    names = tuple(f.name for f in dataclasses.fields(value))
    return names, [getattr(value, n) for n in names]


def apply_op(node: Node, args: list[Any]) -> Any:
    """Apply a node's operation to already computed (traced or numeric) arguments."""
    from adcore import select

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
            _evaluate_dag(value, x, memo)
            found = memo[id(value)]
        return found[0]
    if isinstance(value, list):
        return [evaluate(v, x, memo) for v in value]
    if isinstance(value, tuple):
        return tuple(evaluate(v, x, memo) for v in value)
    if isinstance(value, dict):
        return {k: evaluate(v, x, memo) for k, v in value.items()}
    if (
        dataclasses.is_dataclass(value)
        and not isinstance(value, type)
        and depends_on_unknowns(_fields(value)[1])
    ):
        names, fields = _fields(value)
        return dataclasses.replace(value, **{n: evaluate(f, x, memo) for n, f in zip(names, fields)})
    return value
