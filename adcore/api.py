"""The user-facing language: `fn`, `opaque`, `jvp`, `vjp`, `vec`, `sum`, `select` and friends (the
loops that carry state, reduce or scatter are in `adcore.loops`).

Running a Python body once with symbolic arguments records one IR Function. Calling an `Fn` inside
another body emits a `call`, so the program stays a DAG of functions; a plain Python function that
builds IR is a macro and is inlined by construction.
"""

from __future__ import annotations

import builtins
import inspect
import itertools
from collections.abc import Callable, Sequence
from typing import Any

from .builder import Builder
from .counts import eager_count, traced_count, zero_value
from .errors import AdcoreTypeError, TraceError
from .gc_pause import gc_paused
from .ir import Atom, Function, Lit, Var
from .lazy import find_lazy
from .types import Bool, Int, Real, RefT, Scalar, StructT, Type, VecT, as_type, is_real_leaf, leaf_types
from .values import (
    STATE,
    Arr,
    Captures,
    Index,
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


def interval_type(t: Type, exact: bool) -> Type:
    """The type of a range of values of type t (see adcore.interval): a Real becomes {"lo": Real,
    "hi": Real}; an Int or a Bool stays itself where `exact` (parameters), else becomes a pair too
    (results); arrays and structs keep their shape, so the IR leaves of a Real leaf are (lo, hi)."""
    if isinstance(t, Scalar):
        base = Real if t.name == "Real" else t
        return StructT((("lo", base), ("hi", base))) if base is Real or not exact else base
    if isinstance(t, VecT):
        return VecT(t.n, interval_type(t.elem, exact))
    if isinstance(t, StructT):
        return StructT(tuple((k, interval_type(ft, exact)) for k, ft in t.fields))
    raise AdcoreTypeError(f"no interval type for {t!r}")


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

    @property
    def interval(self) -> Fn | None:
        """The interval rule replacing the derived one (adcore.interval), if set: a function over
        `interval_type(p, exact=True)` per parameter returning `interval_type(ret, exact=False)`."""
        return self._rule(self.ir.custom_interval)

    @interval.setter
    def interval(self, rule: Fn) -> None:
        self.ir.custom_interval = self._checked_rule(rule)
        self.ir.cache.clear()

    @property
    def interval_near(self) -> Fn | None:
        """A cheaper interval rule, tight on small boxes only, that `adcore.interval(near=True)`
        prefers (same signature as `interval`; it must enclose f on every box too)."""
        return self._rule(self.ir.custom_interval_near)

    @interval_near.setter
    def interval_near(self, rule: Fn) -> None:
        self.ir.custom_interval_near = self._checked_rule(rule)
        self.ir.cache.clear()

    def _rule(self, r: Function | None) -> Fn | None:
        if r is None:
            return None
        return Fn(r, [interval_type(p, True) for p in self.params], interval_type(self.ret, False))

    def _checked_rule(self, rule: Fn) -> Function:
        want = [leaf for p in self.params for leaf in leaf_types(interval_type(p, True))]
        got = [leaf for p in rule.params for leaf in leaf_types(p)]
        ret = interval_type(self.ret, False)
        if got != want or leaf_types(rule.ret) != leaf_types(ret):
            raise AdcoreTypeError(
                f"interval rule {rule.name} of {self.name}: expected signature "
                f"({', '.join(repr(interval_type(p, True)) for p in self.params)}) -> {ret!r}, "
                f"got ({', '.join(map(repr, rule.params))}) -> {rule.ret!r}"
            )
        return rule.ir


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
    (one gradient per parameter; parameters left out by `wrt` get None). In ct, None stands for a
    structurally zero cotangent of that part of the result (a struct field, or all of it): nothing
    flows back from it, at no cost, where zeros passed in would be read and added."""

    def __init__(
        self,
        f: Fn,
        ret: Any,
        residuals: Sequence[Atom],
        mask: tuple[bool, ...] | None,
        wrt: Sequence[int] | None,
    ):
        self.f = f
        self.ret = ret
        self.residuals = tuple(residuals)
        self.mask = mask
        self.wrt = wrt

    def grad(self, cotangent: Any) -> Any:
        from .reverse import backward

        ct_leaves = _cotangent_leaves(self.f.ret, cotangent, f"cotangent of {self.f.name}")
        real_ct = [a for a, t in zip(ct_leaves, leaf_types(self.f.ret)) if is_real_leaf(t)]
        bwd = backward(self.f.ir, self.mask, tuple(a is None for a in real_ct))
        live = [a for a in real_ct if a is not None]
        outs = iter(current_builder().call(bwd, [*self.residuals, *live]))
        b = current_builder()
        grads: list[Any] = []
        for k, t in enumerate(self.f.params):
            if self.wrt is not None and k not in self.wrt:
                grads.append(None)
                continue
            leaves = [next(outs) if is_real_leaf(leaf) else b.zero(leaf) for leaf in leaf_types(t)]
            grads.append(unflatten(t, leaves))
        return grads[0] if len(grads) == 1 else tuple(grads)


def _cotangent_leaves(ty: Any, value: Any, where: str) -> list[Atom | None]:
    """`flatten`'s leaves of a cotangent, None for each leaf of a part given as None."""
    if value is None:
        return [None] * len(leaf_types(ty))
    if isinstance(ty, StructT) and isinstance(value, dict) and set(value) == {k for k, _ in ty.fields}:
        return [a for k, ft in ty.fields for a in _cotangent_leaves(ft, value[k], f"{where}[{k!r}]")]
    return list(flatten(ty, value, where))


def vjp(f: Fn, wrt: Sequence[int] | None = None) -> Callable[..., VJP]:
    """Reverse mode, as forward mode followed by transposition (unzip + transpose). `wrt` lists the
    parameters to differentiate with respect to (default: all)."""
    from .reverse import reverse_pair

    mask = _declared(f, wrt) if wrt is not None or f.captures else None

    def apply(*args: Any) -> VJP:
        b = current_builder(f"vjp({f.name})(...)")
        forward, _ = reverse_pair(f.ir, mask)
        outs = b.call(forward, flatten_args(f, args) + captured_args(f))
        n = len(f.ir.result_types)
        return VJP(f, unflatten(f.ret, outs[:n]), outs[n:], mask, wrt)

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


def vec(n: int, elem: Any, body: Callable[[Index], Any], *, count: Any = None) -> Arr | list[Any]:
    """The array [body(0), ..., body(n-1)], built by one loop (O(1) IR whatever n is).

    `count`: an Int computed at run time, 0 <= count <= n: only body(i) for i < count runs, and the
    elements from count on are zero (the type, and so the memory, stays that of n elements)."""
    if not STATE.stack:
        k = eager_count("vec", n, count)
        zero = zero_value(as_type(elem))
        return [body(i) if i < k else zero for i in range(n)]
    ty = VecT(n, as_type(elem))
    b = current_builder("vec")
    k_atom = traced_count("vec", n, count)
    outs = b.loop(n, lambda i, _: flatten(ty.elem, body(Sym(i)), "element of vec"), count=k_atom)
    return Arr(ty, outs)


def sum(xs: Any, body: Callable[[Index], Any] | None = None, *, count: Any = None) -> Any:  # noqa: A001
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
        return builtins.sum([body(i) for i in range(eager_count("sum", xs, count))])
    return _sum_loop(xs, body, traced_count("sum", xs, count))


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


def to_real(i: Any) -> Sym | float:
    """An Int as a Real."""
    if not STATE.stack:
        return float(i)
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
    "select",
    "sum",
    "vec",
    "vjp",
]
