"""Symbolic values seen by the Python bodies of `fn`, and their operators.

A `Sym` wraps one scalar IR atom; an `Arr` wraps the leaves of one user array (one IR array per
struct field of the element type); structs are plain Python dicts. Arithmetic on them emits IR into
the builder of the function being traced; on arrays it is elementwise (`elementwise`). A Python
sequence that is also an adcore array (its `__adcore_array__`, another library's lazily unrolled
list) is passed to functions as that array.

Closures: a function traced while another is (`fn` inside a body) may read the enclosing trace's
values. Each one it reads becomes an extra parameter of the inner function (`Captures`), and every
call passes the outer value (itself captured in turn by a function traced in between), so a
derivative of the inner function holds it constant and a derivative of the outer one sees it as an
argument: no perturbation confusion. A value of a loop body or function that is no longer being
traced is still an error.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, final

from .builder import Builder
from .errors import AdcoreTypeError, TraceError
from .ir import Atom, Lit, Var
from .lazy import find_lazy
from .types import Bool, Int, Real, Scalar, StructT, Type, VecT, as_type, leaf_types


class Captures:
    """The values of enclosing traces a function being traced reads: each outer atom's parameter,
    and the outer values in order of capture (what its calls pass after their arguments)."""

    def __init__(self) -> None:
        self.params: dict[Var, Var] = {}
        self.outer: list[Sym] = []


class TraceState(threading.local):
    def __init__(self) -> None:
        self.stack: list[tuple[Builder, str, Captures]] = []


STATE = TraceState()


def current_builder(what: str = "this operation") -> Builder:
    if not STATE.stack:
        raise TraceError(f"{what} only makes sense inside the body of an adcore function (fn)")
    return STATE.stack[-1][0]


def current_name() -> str:
    return STATE.stack[-1][1] if STATE.stack else "<top level>"


class Sym:
    __slots__ = ("atom", "block")

    def __init__(self, atom: Atom, builder: Builder | None = None):
        self.atom = atom
        self.block = (builder or current_builder()).blocks[-1]

    @property
    def ty(self) -> Type:
        return self.atom.ty

    def __repr__(self) -> str:
        return f"Sym({self.atom!r}: {self.ty!r})"

    # Python control flow cannot branch on a traced value.
    def __bool__(self) -> bool:
        raise TraceError(
            f"in {current_name()}: a symbolic {self.ty!r} cannot drive a Python `if`, `while`, `and`, "
            "`or` or `not`; use adcore.select(cond, a, b) (and adcore.and_/or_/not_ for logic)"
        )

    def __float__(self) -> float:
        raise TraceError(f"in {current_name()}: a symbolic value has no Python float while tracing")

    def __index__(self) -> int:
        raise TraceError(f"in {current_name()}: a symbolic value cannot be a Python index or size")

    __hash__ = object.__hash__

    def __add__(self, o: Any) -> Sym:
        return binary("add", self, o)

    def __radd__(self, o: Any) -> Sym:
        return binary("add", o, self)

    def __sub__(self, o: Any) -> Sym:
        return binary("sub", self, o)

    def __rsub__(self, o: Any) -> Sym:
        return binary("sub", o, self)

    def __mul__(self, o: Any) -> Sym:
        return binary("mul", self, o)

    def __rmul__(self, o: Any) -> Sym:
        return binary("mul", o, self)

    def __truediv__(self, o: Any) -> Sym:
        return binary("div", self, o, real=True)

    def __rtruediv__(self, o: Any) -> Sym:
        return binary("div", o, self, real=True)

    def __floordiv__(self, o: Any) -> Sym:
        return binary("idiv", self, o) if _is_int(self, o) else floor(binary("div", self, o, real=True))

    def __mod__(self, o: Any) -> Sym:
        if not _is_int(self, o):
            raise TraceError(f"in {current_name()}: % is defined on Int values only")
        return binary("imod", self, o)

    def __neg__(self) -> Sym:
        return unary("neg", self)

    def __pos__(self) -> Sym:
        return self

    def __abs__(self) -> Sym:
        return unary("abs", self)

    def __pow__(self, o: Any) -> Sym:
        if isinstance(o, int) and not isinstance(o, bool):
            return int_power(self, o)
        from . import math as am

        return am.pow(self, o)

    def __rpow__(self, o: Any) -> Sym:
        from . import math as am

        return am.pow(o, self)

    def __lt__(self, o: Any) -> Sym:
        return binary("lt", self, o)

    def __le__(self, o: Any) -> Sym:
        return binary("le", self, o)

    def __gt__(self, o: Any) -> Sym:
        return binary("gt", self, o)

    def __ge__(self, o: Any) -> Sym:
        return binary("ge", self, o)


def _is_int(*xs: Any) -> bool:
    return all(
        (isinstance(x, Sym) and x.ty == Int) or (isinstance(x, int) and not isinstance(x, bool)) for x in xs
    )


def lift(x: Any, like: Type | None = None, builder: Builder | None = None) -> Atom:
    """A Python scalar or Sym as an atom (Python ints become Reals next to Reals)."""
    if isinstance(x, Sym):
        return scoped(x.atom, x.block, builder)
    if isinstance(x, bool):
        return Lit(x, Bool)
    if isinstance(x, int):
        return Lit(x, Int) if like in (None, Int) else Lit(float(x), Real)
    if isinstance(x, float):
        return Lit(x, Real)
    raise TraceError(f"in {current_name()}: expected a scalar, got {type(x).__name__} {x!r}")


def scoped(atom: Atom, block: list[Any], builder: Builder | None = None) -> Atom:
    """The atom standing for a value computed in `block`, here: the atom itself in its own function
    (in a block still open), the parameter capturing it in a function traced inside that one."""
    blocks = (builder or current_builder()).blocks
    if block is blocks[-1] or type(atom) is Lit:  # the common case: computed in the block traced
        return atom
    for b in blocks:
        if block is b:
            return atom
    return capture(atom, block)


def capture(atom: Var, block: list[Any]) -> Var:
    captures = STATE.stack[-1][2]
    found = captures.params.get(atom)
    if found is not None:
        return found
    if not any(block is b for trace in STATE.stack[:-1] for b in trace[0].blocks):
        raise TraceError(
            f"in {current_name()}: a value is used outside the function or loop body that computed it "
            "(a loop body's values stay in it; a function may read those of the functions traced around it)"
        )
    param = captures.params[atom] = Var(atom.ty)
    outer = Sym.__new__(Sym)
    outer.atom, outer.block = atom, block
    captures.outer.append(outer)
    return param


def scoped_leaves(x: Arr) -> list[Atom]:
    return [scoped(a, x.block) for a in x.leaves]


def to_real(a: Atom) -> Atom:
    if a.ty == Int:
        return current_builder().emit1("i2f", a)
    return a


def eager(prim: str, *xs: Any) -> Any:
    """Outside a trace, primitives on Python numbers compute right away (IEEE, as compiled code)."""
    from .interpreter import EVAL

    if prim in ("div", "copysign", "zmul", "zdiv", "sqrt", "floor", "ceil", "trunc") or (
        prim in ("min", "max", "abs", "add", "sub", "mul", "neg") and any(isinstance(x, float) for x in xs)
    ):
        xs = tuple(float(x) for x in xs)
    return EVAL[prim](*xs)


def binary(prim: str, a: Any, b: Any, *, real: bool = False) -> Any:
    """prim(a, b): a Sym while tracing (an Arr elementwise on arrays), else a Python number or what
    a lazy value's class makes of it."""
    if not STATE.stack and not isinstance(a, Sym) and not isinstance(b, Sym):
        lazy = find_lazy(a, b)
        return lazy.lazy_prim(prim, (a, b)) if lazy else eager(prim, a, b)
    if type(a) is Arr or type(b) is Arr:
        return elementwise(prim, (a, b), real)
    builder = current_builder()
    like = a.atom.ty if isinstance(a, Sym) else b.atom.ty if isinstance(b, Sym) else None
    x, y = lift(a, like, builder), lift(b, like, builder)
    if real or x.ty is not y.ty:
        x, y = to_real(x), to_real(y)
    if x.ty is not y.ty or not isinstance(x.ty, Scalar):
        raise AdcoreTypeError(f"in {current_name()}: {prim} of {x.ty!r} and {y.ty!r}")
    return Sym(builder.emit1(prim, x, y), builder)


def unary(prim: str, a: Any) -> Any:
    """prim(a), as `binary`."""
    if not STATE.stack and not isinstance(a, Sym):
        lazy = find_lazy(a)
        return lazy.lazy_prim(prim, (a,)) if lazy else eager(prim, a)
    if type(a) is Arr:
        return elementwise(prim, (a,), False)
    return Sym(current_builder().emit1(prim, lift(a)))


def elementwise(prim: str, operands: tuple[Any, ...], real: bool) -> Arr:
    """prim applied element by element to arrays of one length (nested arrays too), scalars
    broadcast: one loop."""
    arrays = [x for x in operands if type(x) is Arr]
    n = arrays[0].ty.n
    for x in arrays:
        if x.ty.n != n or not _of_scalars(x.ty):
            shapes = ", ".join(repr(y.ty) if type(y) is Arr else describe(y) for y in operands)
            raise AdcoreTypeError(
                f"in {current_name()}: {prim} elementwise needs arrays of one length of scalars or "
                f"arrays, got {shapes}"
            )
    b = current_builder()
    for x in operands:
        if type(x) is not Arr:
            lift(x, None, b)  # a broadcast scalar (checked here, read in the loop)

    def body(i: Any, _: Any) -> list[Atom]:
        idx = Sym(i, b)
        elems = [x[idx] if type(x) is Arr else x for x in operands]
        out = binary(prim, *elems, real=real) if len(elems) == 2 else unary(prim, *elems)
        return [out.leaves[0] if type(out) is Arr else out.atom]

    (leaf,) = b.loop(n, body)
    assert isinstance(leaf.ty, VecT)  # a loop's element result: an array
    return Arr(leaf.ty, [leaf])


def _of_scalars(t: Type) -> bool:
    """Whether t is an array of scalars or of such arrays (no structs)."""
    while isinstance(t, VecT):
        t = t.elem
    return isinstance(t, Scalar)


def floor(a: Any) -> Sym:
    return unary("floor", a)


def int_power(x: Sym, k: int) -> Sym:
    """x**k by repeated squaring: O(log k) multiplications, exact for small k."""
    if k < 0:
        return 1.0 / int_power(x, -k)
    result: Sym | None = None
    base = x
    while k:
        if k & 1:
            result = base if result is None else result * base
        k >>= 1
        if k:
            base = base * base
    return result if result is not None else binary("add", 0.0 * x, 1.0)


Index = Sym | int  # the index a loop hands its body: a traced Int, or a Python int outside a trace


@final  # no subclasses: code tests `type(x) is Arr`
class Arr:
    """A user array value: `ty` is its user type, `leaves` its IR arrays (one per element leaf)."""

    __slots__ = ("ty", "leaves", "block")

    def __init__(self, ty: VecT, leaves: Sequence[Atom]):
        self.ty = ty
        self.leaves = tuple(leaves)
        self.block = current_builder().blocks[-1]

    def __len__(self) -> int:
        return self.ty.n

    def __getitem__(self, i: Any) -> Any:
        b = current_builder()
        leaves = self.leaves if self.block is b.blocks[-1] else scoped_leaves(self)
        if isinstance(i, int) and not isinstance(i, bool):
            if not -self.ty.n <= i < self.ty.n:
                raise TraceError(f"in {current_name()}: index {i} out of range for {self.ty!r}")
            idx: Atom = Lit(i % self.ty.n, Int)
        elif isinstance(i, Sym) and i.ty == Int:
            idx = lift(i, None, b)
        else:
            raise TraceError(f"in {current_name()}: array index must be an int or symbolic Int, got {i!r}")
        return unflatten(self.ty.elem, [b.emit1("index", leaf, idx) for leaf in leaves])

    def __iter__(self) -> Any:
        return (self[i] for i in range(self.ty.n))

    # elementwise arithmetic, scalars broadcast (`elementwise`)
    def __add__(self, o: Any) -> Arr:
        return elementwise("add", (self, o), False)

    def __radd__(self, o: Any) -> Arr:
        return elementwise("add", (o, self), False)

    def __sub__(self, o: Any) -> Arr:
        return elementwise("sub", (self, o), False)

    def __rsub__(self, o: Any) -> Arr:
        return elementwise("sub", (o, self), False)

    def __mul__(self, o: Any) -> Arr:
        return elementwise("mul", (self, o), False)

    def __rmul__(self, o: Any) -> Arr:
        return elementwise("mul", (o, self), False)

    def __truediv__(self, o: Any) -> Arr:
        return elementwise("div", (self, o), True)

    def __rtruediv__(self, o: Any) -> Arr:
        return elementwise("div", (o, self), True)

    def __neg__(self) -> Arr:
        return elementwise("neg", (self,), False)

    def __pos__(self) -> Arr:
        return self

    def __abs__(self) -> Arr:
        return elementwise("abs", (self,), False)

    def __bool__(self) -> bool:
        return True

    def __repr__(self) -> str:
        return f"Arr({self.ty!r})"


def unflatten(ty: Type, atoms: Sequence[Atom]) -> Any:
    """Rebuild the user-level value of type `ty` from its IR leaves."""
    it = iter(atoms)
    value = _unflatten(ty, it)
    assert next(it, None) is None
    return value


def _unflatten(ty: Type, it: Any) -> Any:
    if isinstance(ty, Scalar):
        return Sym(next(it))
    if isinstance(ty, VecT):
        return Arr(ty, [next(it) for _ in leaf_types(ty.elem)])
    if isinstance(ty, StructT):
        return {k: _unflatten(ft, it) for k, ft in ty.fields}
    raise AdcoreTypeError(f"cannot build a value of type {ty!r}")


def flatten(ty: Type, value: Any, where: str) -> list[Atom]:
    """The IR leaves of a user value (Sym, Arr, dict, list, Python number) expected to have type `ty`."""
    if isinstance(ty, Scalar):
        if isinstance(value, (Arr, dict, list, tuple)):
            raise AdcoreTypeError(f"{where}: expected {ty!r}, got {describe(value)}")
        want = Real if ty.name == "Real" else ty
        atom = lift(value, want)
        if atom.ty == Int and want == Real:
            atom = to_real(atom)
        if atom.ty != want:
            raise AdcoreTypeError(f"{where}: expected {ty!r}, got {atom.ty!r}")
        return [atom]
    if isinstance(ty, VecT):
        if not isinstance(value, (Arr, list, tuple)):
            value = getattr(value, "__adcore_array__", value)  # a sequence that is also an array
        if isinstance(value, Arr):
            if leaf_types(value.ty) != leaf_types(ty):
                raise AdcoreTypeError(f"{where}: expected {ty!r}, got {value.ty!r}")
            return scoped_leaves(value)
        if not isinstance(value, (list, tuple)):
            raise AdcoreTypeError(f"{where}: expected {ty!r}, got {describe(value)}")
        if len(value) != ty.n:
            raise AdcoreTypeError(f"{where}: expected {ty.n} elements for {ty!r}, got {len(value)}")
        elems = [flatten(ty.elem, v, f"{where}[{k}]") for k, v in enumerate(value)]
        b = current_builder()
        return [b.emit("vec", [e[j] for e in elems], elem=lt)[0] for j, lt in enumerate(leaf_types(ty.elem))]
    if isinstance(ty, StructT):
        if not isinstance(value, dict) or set(value) != {k for k, _ in ty.fields}:
            raise AdcoreTypeError(f"{where}: expected a struct {ty!r}, got {describe(value)}")
        return [a for k, ft in ty.fields for a in flatten(ft, value[k], f"{where}[{k!r}]")]
    raise AdcoreTypeError(f"{where}: unsupported type {ty!r}")


def describe(value: Any) -> str:
    if isinstance(value, Sym):
        return f"a symbolic {value.ty!r}"
    if isinstance(value, Arr):
        return f"an array {value.ty!r}"
    if isinstance(value, dict):
        return f"a struct with fields {sorted(value)}"
    if isinstance(value, (list, tuple)):
        return f"a list of {len(value)}"
    return f"{type(value).__name__} {value!r}"


def type_of(value: Any) -> Type:
    """The user type of a traced value (used where a body's result type is not declared)."""
    if isinstance(value, Sym):
        return value.ty
    if isinstance(value, Arr):
        return value.ty
    if isinstance(value, bool):
        return Bool
    if isinstance(value, int):
        return Int
    if isinstance(value, float):
        return Real
    if isinstance(value, dict):
        return as_type({k: type_of(v) for k, v in value.items()})
    if hasattr(value, "__adcore_array__"):
        return value.__adcore_array__.ty
    if isinstance(value, (list, tuple)) and value:
        return VecT(len(value), type_of(value[0]))
    raise TraceError(f"in {current_name()}: cannot infer the type of {describe(value)}")
