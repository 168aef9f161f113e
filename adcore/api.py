"""The user-facing language: `fn`, `opaque`, `jvp`, `vjp`, `vec`, `sum`, `select` and friends.

Running a Python body once with symbolic arguments records one IR Function. Calling an `Fn` inside
another body emits a `call`, so the program stays a DAG of functions; a plain Python function that
builds IR is a macro and is inlined by construction.
"""

from __future__ import annotations

import builtins
import inspect
import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

from .builder import Builder
from .errors import AdcoreTypeError, RangeError, TraceError, count_message, segment_message
from .gc_pause import gc_paused
from .ir import Atom, Function, Lit, Var
from .lazy import find_lazy
from .types import Bool, Int, Real, RefT, Scalar, StructT, Type, VecT, as_type, is_real_leaf, leaf_types
from .values import (
    STATE,
    Arr,
    Captures,
    Sym,
    binary,
    current_builder,
    current_name,
    flatten,
    lift,
    type_of,
    unary,
    unflatten,
)

_anon = itertools.count(1)


def dual_type(t: Type) -> Type:
    """The type of a value paired with its tangent: Real becomes Dual, structure is kept."""
    if isinstance(t, Scalar):
        return StructT((("re", Real), ("du", Real))) if t.name == "Real" else t
    if isinstance(t, VecT):
        return VecT(t.n, dual_type(t.elem))
    if isinstance(t, StructT):
        return StructT(tuple((k, dual_type(ft)) for k, ft in t.fields))
    raise AdcoreTypeError(f"no dual type for {t!r}")


def tangent_mask(types: Sequence[Type]) -> tuple[bool, ...]:
    """Which leaves of the dual types of `types` are tangents (each follows its Real primal)."""
    return tuple(
        m
        for t in types
        for leaf in leaf_types(t)
        for m in ((False, True) if is_real_leaf(leaf) else (False,))
    )


class Fn:
    """A traced (or opaque) function with its user-level signature."""

    def __init__(self, ir: Function, params: Sequence[Type], ret: Type):
        self.ir = ir
        self.params = tuple(params)
        self.ret = ret
        self.associative = False  # declared by `associative`, for `reduce`
        # values of the enclosing trace the function reads (its last parameters; calls pass them)
        self.captures: tuple[Sym, ...] = ()

    @property
    def name(self) -> str:
        return self.ir.name

    def __repr__(self) -> str:
        return f"<fn {self.name}({', '.join(map(repr, self.params))}) -> {self.ret!r}>"

    def __str__(self) -> str:
        return str(self.ir)

    def __call__(self, *args: Any) -> Any:
        if not STATE.stack:  # plain Python values: run it (library code works on numbers and traces alike)
            if self.captures:
                raise TraceError(f"{self.name} reads values of the function traced around it: call it there")
            from .interpreter import interp

            lazy = find_lazy(*args)
            if lazy is not None:
                return lazy.lazy_call(self, args)

            run = self.ir.cache.get("interp")
            if run is None:
                run = self.ir.cache["interp"] = interp(self)
            return run(*args)
        leaves = flatten_args(self, args) + captured_args(self)
        outs = current_builder().call(self.ir, leaves)
        return unflatten(self.ret, outs)

    @property
    def jvp(self) -> Fn | None:
        j = self.ir.custom_jvp
        return None if j is None else Fn(j, [dual_type(p) for p in self.params], dual_type(self.ret))

    @jvp.setter
    def jvp(self, j: Fn) -> None:
        if self.captures or j.captures:
            raise AdcoreTypeError(f"custom jvp of {self.name}: a function reading another's trace has none")
        want = [leaf for p in self.params for leaf in leaf_types(dual_type(p))]
        got = [leaf for p in j.params for leaf in leaf_types(p)]
        if got != want or leaf_types(j.ret) != leaf_types(dual_type(self.ret)):
            raise AdcoreTypeError(
                f"custom jvp {j.name} of {self.name}: expected signature "
                f"({', '.join(repr(dual_type(p)) for p in self.params)}) -> {dual_type(self.ret)!r}, "
                f"got ({', '.join(map(repr, j.params))}) -> {j.ret!r}"
            )
        j.ir.linear_mask = tangent_mask(self.params)
        j.ir.linear_results = tangent_mask([self.ret])
        self.ir.custom_jvp = j.ir
        self.ir.cache.clear()


def captured_args(f: Fn) -> list[Atom]:
    """The values of the enclosing trace f reads, as its calls pass them (captured in turn by a
    function traced in between)."""
    return [lift(c) for c in f.captures]


def flatten_args(f: Fn, args: Sequence[Any]) -> list[Atom]:
    if len(args) != len(f.params):
        raise AdcoreTypeError(f"{f.name} expects {len(f.params)} argument(s), got {len(args)}")
    return [
        a for k, (t, v) in enumerate(zip(f.params, args)) for a in flatten(t, v, f"argument {k} of {f.name}")
    ]


def _check_body_arity(name: str, body: Callable[..., Any], n: int) -> None:
    try:
        inspect.signature(body).bind(*range(n))
    except TypeError:
        raise AdcoreTypeError(
            f"the body of {name} must take {n} parameter(s), as its signature declares"
        ) from None
    except ValueError:  # builtins without a signature
        pass


def _name_of(body: Callable[..., Any], name: str | None) -> str:
    if name:
        return name
    n = getattr(body, "__name__", "")
    return n if n and n != "<lambda>" else f"fn{next(_anon)}"


@gc_paused
def fn(params: Sequence[Any], ret: Any, body: Callable[..., Any], *, name: str | None = None) -> Fn:
    """Trace `body` once with symbolic parameters into a new function.

    A function may be defined while another is being traced (library code generates specialized
    functions on demand, e.g. one bounding-box function per polygon size), and may read the values
    of the functions traced around it: each becomes a parameter after the declared ones, which its
    calls pass (`values.Captures`), so derivatives of the two functions never confuse their
    perturbations.
    """
    name = _name_of(body, name)
    ptypes = [as_type(p) for p in params]
    rtype = as_type(ret)
    _check_body_arity(name, body, len(ptypes))
    groups = [[Var(leaf) for leaf in leaf_types(t)] for t in ptypes]
    builder = Builder()
    captures = Captures()
    STATE.stack.append((builder, name, captures))
    try:
        args = [unflatten(t, g) for t, g in zip(ptypes, groups)]
        results = flatten(rtype, body(*args), f"result of {name}")
    finally:
        STATE.stack.pop()
    flat = [v for g in groups for v in g] + list(captures.params.values())
    ir = builder.finish(name, flat, results, leaf_types(rtype), (tuple(ptypes), rtype))
    f = Fn(ir, ptypes, rtype)
    f.captures = tuple(captures.outer)
    return f


def opaque(params: Sequence[Any], ret: Any, impl: Callable[..., Any], *, name: str | None = None) -> Fn:
    """A function whose body adcore cannot see: `impl` runs in the interpreter; give it a `.jvp`."""
    name = _name_of(impl, name)
    ptypes = [as_type(p) for p in params]
    rtype = as_type(ret)
    flat = tuple(Var(leaf) for t in ptypes for leaf in leaf_types(t))
    ir = Function(name, flat, tuple(leaf_types(rtype)), None, impl=impl, signature=(tuple(ptypes), rtype))
    return Fn(ir, ptypes, rtype)


# -- transformations as user values -----------------------------------------------------------------


def jvp(f: Fn) -> Fn:
    """Forward mode: a function over duals ({"re": x, "du": dx}) giving f and its directional derivative
    (the values f reads from an enclosing trace are constants to it)."""
    from .forward import jvp_function

    wrt = _declared(f) if f.captures else None
    g = Fn(jvp_function(f.ir, wrt), [dual_type(p) for p in f.params], dual_type(f.ret))
    g.captures = f.captures
    return g


def _declared(f: Fn, params: Sequence[int] | None = None) -> tuple[bool, ...]:
    """A mask of f's IR parameters: the leaves of its declared parameters (those listed, if given),
    not those of the values it captures."""
    mask = tuple(params is None or k in params for k, t in enumerate(f.params) for _ in leaf_types(t))
    return mask + (False,) * (len(f.ir.params) - len(mask))


class VJP:
    """The result of `vjp(f)(x)` inside a body: `.ret` is f(x); `.grad(ct)` is the pullback of ct
    (one gradient per parameter; parameters left out by `wrt` get None)."""

    def __init__(
        self, f: Fn, ret: Any, residuals: Sequence[Atom], backward: Function, wrt: Sequence[int] | None
    ):
        self.f = f
        self.ret = ret
        self.residuals = tuple(residuals)
        self.backward = backward
        self.wrt = wrt

    def grad(self, cotangent: Any) -> Any:
        ct_leaves = flatten(self.f.ret, cotangent, f"cotangent of {self.f.name}")
        real_ct = [a for a, t in zip(ct_leaves, leaf_types(self.f.ret)) if is_real_leaf(t)]
        outs = iter(current_builder().call(self.backward, [*self.residuals, *real_ct]))
        b = current_builder()
        grads: list[Any] = []
        for k, t in enumerate(self.f.params):
            if self.wrt is not None and k not in self.wrt:
                grads.append(None)
                continue
            leaves = [next(outs) if is_real_leaf(leaf) else b.zero(leaf) for leaf in leaf_types(t)]
            grads.append(unflatten(t, leaves))
        return grads[0] if len(grads) == 1 else tuple(grads)


def vjp(f: Fn, wrt: Sequence[int] | None = None) -> Callable[..., VJP]:
    """Reverse mode, as forward mode followed by transposition (unzip + transpose). `wrt` lists the
    parameters to differentiate with respect to (default: all)."""
    from .reverse import reverse_pair

    mask = _declared(f, wrt) if wrt is not None or f.captures else None

    def apply(*args: Any) -> VJP:
        b = current_builder(f"vjp({f.name})(...)")
        forward, backward = reverse_pair(f.ir, mask)
        outs = b.call(forward, flatten_args(f, args) + captured_args(f))
        n = len(f.ir.result_types)
        return VJP(f, unflatten(f.ret, outs[:n]), outs[n:], backward, wrt)

    return apply


# -- structured values ------------------------------------------------------------------------------


def select(cond: Any, a: Any, b: Any) -> Any:
    """`a` where `cond` holds, else `b`, for values of any one type. The derivative of the branch not
    taken is exactly zero, even where that branch is inf or NaN (see adcore/transpose.py)."""
    if not STATE.stack:
        return _select_outside(cond, a, b)
    c = lift(cond)
    if c.ty != Bool:
        raise AdcoreTypeError(f"in {current_name()}: select condition must be Bool, got {c.ty!r}")
    ty = type_of(a) if not isinstance(a, (int, float)) or isinstance(b, (int, float)) else type_of(b)
    if ty == Int and (type_of(b) == Real):
        ty = Real
    xs = flatten(ty, a, "first branch of select")
    ys = flatten(ty, b, "second branch of select")
    builder = current_builder()
    return unflatten(ty, [_select_leaf(builder, c, x, y) for x, y in zip(xs, ys)])


def _select_outside(cond: Any, a: Any, b: Any) -> Any:
    lazy = find_lazy(cond)
    if lazy is None:
        return a if cond else b
    if isinstance(a, (list, tuple)):
        return [_select_outside(cond, x, y) for x, y in zip(a, b)]
    if isinstance(a, dict):
        return {k: _select_outside(cond, a[k], b[k]) for k in a}
    return lazy.lazy_select(cond, a, b)


def _select_leaf(b: Builder, c: Atom, x: Atom, y: Atom) -> Atom:
    if isinstance(x.ty, Scalar):
        return b.emit1("select", c, x, y)
    ty = x.ty
    assert isinstance(ty, VecT)
    return b.loop(ty.n, lambda i, _: [_select_leaf(b, c, b.emit1("index", x, i), b.emit1("index", y, i))])[0]


def vec(n: int, elem: Any, body: Callable[[Sym], Any], *, count: Any = None) -> Arr:
    """The array [body(0), ..., body(n-1)], built by one loop (O(1) IR whatever n is).

    `count`: an Int computed at run time, 0 <= count <= n: only body(i) for i < count runs, and the
    elements from count on are zero (the type, and so the memory, stays that of n elements)."""
    if not STATE.stack:
        k = _eager_count("vec", n, count)
        zero = zero_value(as_type(elem))
        return [body(i) if i < k else zero for i in range(n)]  # type: ignore[return-value, arg-type]
    ty = VecT(n, as_type(elem))
    b = current_builder("vec")
    k = _traced_count("vec", n, count)
    outs = b.loop(n, lambda i, _: flatten(ty.elem, body(Sym(i)), "element of vec"), count=k)
    return Arr(ty, outs)


def sum(xs: Any, body: Callable[[Sym], Any] | None = None, *, count: Any = None) -> Any:  # noqa: A001
    """Sum of an array (`sum(xs)`), of a Python list, or of `body(i)` for i < n (`sum(n, body)`);
    `count` (an Int computed at run time, 0 <= count <= n) sums the first `count` terms only."""
    if body is None:
        if count is not None:
            raise AdcoreTypeError(f"in {current_name()}: sum(xs) takes no count; use sum(n, body, count=k)")
        if isinstance(xs, Arr):
            arr = xs
            return _sum_loop(arr.ty.n, lambda i: arr[i], None)
        if isinstance(xs, (list, tuple)):
            total: Any = 0.0
            for x in xs:
                total = total + x
            return total
        raise AdcoreTypeError(f"in {current_name()}: sum expects an array or a list, got {xs!r}")
    if not isinstance(xs, int):
        raise AdcoreTypeError(f"in {current_name()}: sum(n, body) needs a Python int n, got {xs!r}")
    if not STATE.stack:
        return builtins.sum([body(i) for i in range(_eager_count("sum", xs, count))])  # type: ignore[arg-type]
    return _sum_loop(xs, body, _traced_count("sum", xs, count))


def _sum_loop(n: int, body: Callable[[Sym], Any], count: Atom | None) -> Any:
    b = current_builder("sum")
    i = Var(Int)
    b.open_block()
    value = body(Sym(i))
    ty = type_of(value)
    leaves = flatten(ty, value, "summand")
    refs = [Var(RefT(a.ty)) for a in leaves]
    for r, a in zip(refs, leaves):
        if a.ty == Bool:
            raise AdcoreTypeError(f"in {current_name()}: cannot sum Bool values")
        b.emit("accum", (r, a))
    from .ir import Block

    eqns = b.close_block()
    outs = b.emit("for", () if count is None else (count,), n=n, body=Block((i, *refs), tuple(eqns), ()))
    return unflatten(ty, outs)


def fold(n: int, init: Any, body: Callable[[Any, Sym], Any], *, count: Any = None) -> Any:
    """The value carried through `carry = body(carry, i)` for i < n, starting from `init` (Futhark's
    `loop`): one loop whatever n is. The carry may be of any type (a scalar, an array, a struct),
    the type of `init` (a Python int is an Int: write 0.0 for a Real). `count`: as in `vec`, the
    steps from count on do not run."""
    return _carry_loop("fold", n, init, body, count, keep=False)


def scan(n: int, init: Any, body: Callable[[Any, Sym], Any], *, count: Any = None) -> Any:
    """As `fold`, returning the n carries after each step, as an array (with `count`, the ones from
    count on are zero)."""
    return _carry_loop("scan", n, init, body, count, keep=True)


def associative(op: Fn) -> Fn:
    """Declare `op`, an `fn([T, T], T)`, associative, so that `reduce` accepts it (adcore reduces
    from left to right whatever the operator; the declaration is the promise Futhark asks for)."""
    if not isinstance(op, Fn) or len(op.params) != 2 or not op.params[0] == op.params[1] == op.ret:
        raise AdcoreTypeError(f"associative expects an fn([T, T], T), got {op!r}")
    op.associative = True
    return op


def reduce(
    n: int,
    op: Callable[[Any, Any], Any],
    body: Callable[[Sym], Any],
    *,
    count: Any = None,
    identity: Any = None,
) -> Any:
    """The reduction of body(0), ..., body(n-1) by `op`, from left to right: `adcore.math.max`,
    `adcore.math.min` (identities -inf, +inf), `operator.mul` (1), `operator.add` (a `sum`), or an
    `fn([T, T], T)` declared `associative` (its `identity` given, or n >= 1 and no `count`).

    One loop whatever n is. The derivative of max and min goes to the later of tied elements (as
    Penrose's maxList, a left fold of `x > y ? x : y`); NaN propagates (IEEE max and min)."""
    import operator

    from . import math as am

    if op is operator.add:
        return sum(n, body, count=count)
    known = {id(am.max): -math.inf, id(am.min): math.inf, id(operator.mul): 1.0}
    if id(op) in known:
        identity = known[id(op)] if identity is None else identity
    elif not getattr(op, "associative", False):
        raise AdcoreTypeError(
            f"in {current_name()}: reduce's operator must be adcore.math.max, adcore.math.min, "
            f"operator.add, operator.mul or an fn([T, T], T) declared adcore.associative, got {op!r}"
        )
    if identity is None:
        if count is not None or n < 1:
            raise AdcoreTypeError(
                f"in {current_name()}: reducing {'a run-time count of' if count is not None else 'no'} "
                f"elements by {op!r} needs its identity (reduce(..., identity=e))"
            )
        return fold(n - 1, body(0), lambda acc, i: op(acc, body(i + 1)))
    if isinstance(op, Fn) and STATE.stack:
        identity = unflatten(op.ret, flatten(op.ret, identity, f"identity of {op.name}"))
    return fold(n, identity, lambda acc, i: op(acc, body(i)), count=count)


def segment_sum(n: int, m: int, body: Callable[[Sym], Any], *, count: Any = None) -> Any:
    """The m sums out[s] = sum of the values body(i) = (s, value) sends to segment s, for i < n
    (Futhark's reduce_by_index with +; a scatter-add): one loop, its derivative a gather. A segment
    outside 0..m-1 is an error (RangeError, WasmRangeError compiled), never a write."""
    if not isinstance(m, int) or isinstance(m, bool) or m < 1:
        raise AdcoreTypeError(f"in {current_name()}: segment_sum needs a Python int m >= 1, got {m!r}")
    if not STATE.stack:
        k = _eager_count("segment_sum", n, count)
        out: list[Any] = [None] * m
        for i in range(k):
            s, value = body(i)
            if not isinstance(s, int) or not 0 <= s < m:
                raise RangeError(segment_message(current_name(), s, m - 1))
            out[s] = value if out[s] is None else out[s] + value
        zero = next((zero_value(type_of(v)) for v in out if v is not None), 0.0)
        return [zero if v is None else v for v in out]
    b = current_builder("segment_sum")
    i = Var(Int)
    b.open_block()
    try:
        found = body(Sym(i, b))
        if not isinstance(found, (tuple, list)) or len(found) != 2:
            raise AdcoreTypeError(f"in {current_name()}: segment_sum's body must return (segment, value)")
        s, value = found
        seg = lift(s, Int, b)
        if seg.ty != Int:
            raise AdcoreTypeError(
                f"in {current_name()}: a segment must be an Int, got {seg.ty!r} (adcore.floor_int makes one)"
            )
        ty = type_of(value)
        leaves = flatten(ty, value, "value of segment_sum")
        if any(a.ty == Bool for a in leaves):
            raise AdcoreTypeError(f"in {current_name()}: cannot sum Bool values")
        seg = b.emit1("checked", seg, n=m, kind="segment")
        refs = [Var(RefT(VecT(m, a.ty))) for a in leaves]
        for r, a in zip(refs, leaves):
            b.emit("accum", (r, a, seg))
    finally:
        eqns = b.close_block()
    from .ir import Block

    k = _traced_count("segment_sum", n, count)
    outs = b.emit("for", () if k is None else (k,), n=n, body=Block((i, *refs), tuple(eqns), ()))
    return unflatten(VecT(m, ty), outs)


def _carry_loop(what: str, n: int, init: Any, body: Callable[..., Any], count: Any, keep: bool) -> Any:
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise AdcoreTypeError(f"in {current_name()}: {what} needs a Python int n >= 0, got {n!r}")
    if not STATE.stack:  # plain Python values (or another library's lazy ones)
        k = _eager_count(what, n, count)
        carry, steps = init, []
        for i in range(k):
            carry = body(carry, i)
            steps.append(carry)
        if not keep:
            return carry
        zero = zero_value(type_of(init)) if k < n else None
        return steps + [zero] * (n - k)
    b = current_builder(what)
    ty = type_of(init)
    inits = flatten(ty, init, f"initial value of {what}")
    carries = [Var(a.ty) for a in inits]

    def step(i: Var, _: Sequence[Var]) -> list[Atom]:
        value = body(unflatten(ty, carries), Sym(i, b))
        nexts = flatten(ty, value, f"the value {what}'s body returns (the carry has type {ty!r})")
        return [*nexts, *nexts] if keep else nexts  # a scan's elements are its carries

    outs = b.fold(n, inits, carries, step, (), _traced_count(what, n, count))
    if keep:
        return unflatten(VecT(n, ty), outs[len(inits) :])
    return unflatten(ty, outs)


def _traced_count(what: str, n: int, count: Any) -> Atom | None:
    """The atom of a loop's run-time trip count (None: n), checked where it is known now."""
    if count is None:
        return None
    if isinstance(count, int) and not isinstance(count, bool):
        _eager_count(what, n, count)
        return Lit(count, Int)
    if not isinstance(count, Sym) or count.ty != Int:
        raise AdcoreTypeError(f"in {current_name()}: the count of {what} must be an Int, got {count!r}")
    return lift(count)


def _eager_count(what: str, n: int, count: Any) -> int:
    """A trip count given as a Python int (None: n), checked: 0 <= count <= n."""
    if count is None:
        return n
    if not isinstance(count, int) or isinstance(count, bool):
        raise AdcoreTypeError(f"{what}: the count must be an int, got {count!r}")
    if not 0 <= count <= n:
        raise RangeError(count_message(current_name(), count, n))
    return count


def zero_value(t: Type) -> Any:
    """The user-level zero of a type (the elements of a counted `vec` beyond its count)."""
    if isinstance(t, Scalar):
        return 0.0 if t.name == "Real" else 0 if t == Int else False
    if isinstance(t, VecT):
        return [zero_value(t.elem) for _ in range(t.n)]
    if isinstance(t, StructT):
        return {k: zero_value(ft) for k, ft in t.fields}
    raise AdcoreTypeError(f"no zero of type {t!r}")


# -- comparisons and logic (== and != stay Python's, so values remain hashable) ----------------------


def eq(a: Any, b: Any) -> Sym:
    return binary("eq", a, b)


def neq(a: Any, b: Any) -> Sym:
    return binary("ne", a, b)


def and_(a: Any, b: Any) -> Sym:
    return binary("and", a, b)


def or_(a: Any, b: Any) -> Sym:
    return binary("or", a, b)


def not_(a: Any) -> Sym:
    return unary("not", a)


def floor_int(x: Any) -> Sym:
    """floor(x) as an Int, for indices computed from Reals: saturated to [-2^31, 2^31 - 1], NaN as 0
    (an index out of range is caught where it is used: `checked`, bounds checks). Its derivative is
    zero, as floor's."""
    if not STATE.stack:
        return unary("floor_int", float(x)) if find_lazy(x) is None else unary("floor_int", x)
    b = current_builder()
    a = lift(x, Real, b)
    return Sym(b.emit1("floor_int", b.emit1("i2f", a) if a.ty == Int else a), b)


def to_real(i: Any) -> Sym:
    """An Int as a Real."""
    if not STATE.stack:
        return float(i)  # type: ignore[return-value]
    return Sym(current_builder().emit1("i2f", lift(i)))


__all__ = [
    "Fn",
    "Lit",
    "and_",
    "eq",
    "floor_int",
    "fn",
    "jvp",
    "neq",
    "not_",
    "opaque",
    "or_",
    "associative",
    "fold",
    "reduce",
    "scan",
    "segment_sum",
    "select",
    "sum",
    "vec",
    "vjp",
]
