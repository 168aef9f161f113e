"""Interval evaluation: each function f gets a function over ranges of its arguments.

    interval(f)(box) -> {"lo": L, "hi": H}    with L <= f(x) <= H for every x in the box

Contract. For every argument x in the box (each Real leaf anywhere in its [lo, hi], Ints and Bools
as given), the value f computes at x lies in the returned range, in the same backend (the
interpreter with the C library's math functions, or compiled code with our Wasm libm). A point
result (lo == hi) therefore means f is constant on the box with exactly that value.

Representation, while transforming and in the calling convention (`interval_type` in api.py):
- a Real is a pair (lo, hi): the closed range [lo, hi] of the extended line. Top, "any value, NaN
  included", is (NaN, NaN). Invariant: lo is NaN exactly when hi is, else lo <= hi; a range that may
  hold a NaN is thus never a point. Rules combine with min/max, which propagate NaN, so a NaN
  endpoint spreads to both ends. `[-inf, inf]` from + - * and sums becomes top: opposite infinities
  meeting there may give NaN, and nothing tighter is lost.
- an Int stays one exact Int, and a Bool one exact Bool, unless it depends on Reals (a comparison of
  Reals, a `select` on one): then it is a pair too, ordered false < true for Bools (lo = certainly
  true, hi = possibly true). Ints come from Reals only through such selects (no primitive turns a
  Real into an Int: floor gives a Real). An uncertain Int supports arithmetic, comparisons, select
  and i2f; as an array position it reads a Real or Bool element exactly when the range is one
  position, else top; reading an Int element or accumulating there, or dividing by an uncertain
  Int, is refused with an AdcoreError (no sound bound exists in i32). Int overflow is ignored, as
  in plain programs.
- the sign of zero is not tracked: a range holding 0 may hold -0, and the rules that see the sign
  (copysign, division, atan2, pow) treat such a zero as either sign.

Floating point (why the bounds hold, and why points are honest):
- + - * / sqrt are correctly rounded, and rounding to nearest is monotone, so endpoints computed in
  the program's own arithmetic enclose what the program computes anywhere in the box. Each result
  is then widened outward by the relative amount WIDEN (at least 3 ulps), unless every operand is
  a point: a point result then comes only from point operands or from an exact operation, never
  from absorption (x + 1e20 - 1e20 on x in [0, 1] is not a point), and each bound also encloses the
  exact result of the operation (in the normal range: below 2^-1022 the relative widening vanishes).
  Exact operations are not widened: neg, abs, min, max, copysign, floor/ceil/trunc, select, i2f,
  products and quotients by a power of two. So max(0, f) with hi(f) <= 0 is exactly [0, 0].
- sums in loops: a sum in a fixed order is monotone in each term, so its bounds are the sums of the
  terms' lo and of their hi; another order of the same numbers differs by at most 2 (n - 1) u
  sum(|lo|) (u = 2^-53), so when some term is not a point lo moves down by n 2^-52 sum(|lo|) and hi
  up by n 2^-52 sum(|hi|): the bounds hold for every summation order (the compiler may reorder sums,
  adcore/wasm/fuse.py), a sum of non-negative terms stays non-negative, and a sum that absorbed a
  range is not a point.
- math functions (adcore.math): endpoint values from the same implementation, ordered, widened by
  MATH_WIDEN (both implementations are within 1 ulp, docs/libm-accuracy.md, so this covers their
  error and any non-monotonicity at the ulp scale), clamped to the function's range; periodic ones
  include the extrema inside the range. A point argument gives exactly the function's value.

Calls stay calls: each callee is transformed once per pattern of uncertain Int/Bool arguments
(memoized in `Function.cache`); loops stay loops. Opaque functions use their `interval` rule
(`Fn.interval`) when they have one; the math functions have theirs here (MATH); any other opaque
function gives top and is never called.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from . import math as am
from .api import Fn, interval_type
from .builder import Builder
from .errors import AdcoreError
from .gc_pause import gc_paused
from .ir import Atom, Block, Eqn, Function, Lit, Var, call_graph
from .prims import COMPARE
from .types import Bool, Int, Real, Scalar, Type, VecT, is_real_leaf

WIDEN = 2.0**-50  # relative widening of + - * / sqrt: >= 4 ulps before rounding
MATH_WIDEN = 2.0**-48  # of math functions: >= 16 ulps, against two implementations' 1 ulp each
SUM_WIDEN = 2.0**-52  # per term of a sum, times sum(|lo|) (or |hi|): above the reordering error
PERIODS_SLACK = 2.0**-20  # periods counted as "near an extremum" by the periodic rules
PERIODIC_LIMIT = 2.0**20  # beyond this |x| the periodic rules give the whole range

Value = Atom | tuple[Atom, Atom]  # exact, or (lo, hi)
NAN = Lit(math.nan, Real)
ZERO, ONE = Lit(0.0, Real), Lit(1.0, Real)
TRUE, FALSE = Lit(True, Bool), Lit(False, Bool)
PI_UP = math.nextafter(math.pi, math.inf)  # above pi, and above any faithful rounding of it
HALF_PI_UP = math.nextafter(math.pi / 2, math.inf)


@dataclass(frozen=True)
class Transformed:
    fn: Function  # over (lo, hi) per Real leaf and per uncertain Int/Bool leaf; exact leaves once
    pair_results: tuple[bool, ...]  # which results of the original are (lo, hi) pairs (every Real)


def interval(f: Fn, near: bool = False) -> Fn:
    """The interval version of f. Calling convention (`api.interval_type`): each Real leaf of a
    parameter becomes {"lo": Real, "hi": Real} (a Vec(n, Real) becomes Vec(n, {"lo", "hi"}), two
    arrays in the IR); Int and Bool parameters stay exact, one value each. Every scalar leaf of the
    result becomes {"lo": T, "hi": T}: for a Bool, lo = certainly true and hi = possibly true; a
    possible NaN is {"lo": nan, "hi": nan}. See the module docstring for the contract.
    `near`: for boxes known to be small, each call uses its function's cheaper rule for them
    (`Fn.interval_near`) where one is set; the contract holds either way."""
    key = ("interval", near)
    g = f.ir.cache.get(key)
    if g is None:
        g = f.ir.cache[key] = _entry(f.ir, near)
    return Fn(g, [interval_type(p, True) for p in f.params], interval_type(f.ret, False))


def has_near_rules(f: Fn) -> bool:
    """Whether f or a function it calls has a rule for small boxes: else `interval(f, near=True)`
    computes what `interval(f)` does."""
    return any(g.custom_interval_near is not None for g in call_graph(f.ir))


def _entry(f: Function, near: bool) -> Function:
    """interval_function(f) with exact Int/Bool arguments, every result as a pair."""
    t = interval_function(f, tuple(False for p in f.params if not is_real_leaf(p.ty)), near)
    if all(t.pair_results):
        return t.fn
    b = Builder()
    params = [Var(p.ty) for p in t.fn.params]
    outs = iter(b.call(t.fn, params))
    results: list[Atom] = []
    for pair in t.pair_results:
        results += [next(outs), next(outs)] if pair else [o := next(outs), o]
    return b.finish(f"{f.name}_interval", params, results)


@gc_paused
def interval_function(f: Function, pairs: tuple[bool, ...], near: bool = False) -> Transformed:
    """f over ranges; `pairs` marks which Int/Bool parameter leaves (in order) are uncertain;
    `near`: calls use their functions' rules for small boxes (`interval`)."""
    key = ("interval", pairs, near)
    cached = f.cache.get(key)
    if cached is not None:
        return cached
    s = IntervalState(f.name, near)
    params: list[Var] = []
    args: list[Value] = []
    uncertain = iter(pairs)
    for p in f.params:
        if is_real_leaf(p.ty) or next(uncertain):
            lo, hi = Var(p.ty), Var(p.ty)
            params += (lo, hi)
            args.append((lo, hi))
        else:
            params.append(x := Var(p.ty))
            args.append(x)
    if f.body is None or (_rule(f, near) is not None and not any(pairs)):
        outs = s.apply(f, args)
    else:
        s.env.update(zip(f.body.params, args))
        s.block(f.body)
        outs = [s.get(r) for r in f.body.results]
    g = s.b.finish(f"{f.name}_interval", params, _flat(outs))
    result = f.cache[key] = Transformed(g, tuple(isinstance(o, tuple) for o in outs))
    return result


def _flat(values: Sequence[Value]) -> list[Atom]:
    return [a for v in values for a in (v if isinstance(v, tuple) else (v,))]


def pair(v: Value) -> tuple[Atom, Atom]:
    return v if isinstance(v, tuple) else (v, v)


class _Retry(Exception):
    """An exact Int accumulator received an uncertain value: its loop is transformed again with the
    accumulator as a pair."""

    def __init__(self, ref: Var):
        self.ref = ref


def _rule(g: Function, near: bool) -> Function | None:
    """g's own interval rule: its rule for small boxes when `near` and it has one."""
    return g.custom_interval_near if near and g.custom_interval_near is not None else g.custom_interval


class IntervalState:
    def __init__(self, name: str, near: bool = False) -> None:
        self.name = name
        self.near = near
        self.b = Builder()
        self.env: dict[Var, Value] = {}
        self.defs: dict[Var, Eqn] = {}  # comparisons of the original, for select's min/max patterns
        self.refs: dict[Var, tuple[Var, ...]] = {}  # accumulator -> its new references (see `loop`)
        self.terms: dict[Var, int] = {}  # Real accumulator -> how many terms its sum has, at most
        self.trips: list[int] = []  # trip counts of the loops being transformed, outermost first
        self.depth: dict[Var, int] = {}  # accumulator -> len(trips) inside its loop

    def get(self, a: Atom) -> Value:
        if type(a) is Var:
            return self.env[a]
        return (a, a) if a.ty is Real else a

    def fail(self, what: str) -> AdcoreError:
        return AdcoreError(f"interval({self.name}): {what}")

    def block(self, block: Block) -> None:
        env, b = self.env, self.b
        for e in block.eqns:
            prim = e.prim
            if prim == "for":
                self.loop(e)
                continue
            if prim == "accum":
                self.accum(e)
                continue
            xs = [self.get(a) for a in e.args]
            exact = [x for x in xs if not isinstance(x, tuple)]
            if prim == "call":
                outs = self.apply(e.params["fn"], xs)
            elif len(exact) == len(xs):  # exact Int/Bool work, i2f, zeros: as it is
                outs = [(o, o) if is_real_leaf(o.ty) else o for o in b.emit(prim, exact, **e.params)]
            else:
                rule = RULES.get(prim)
                if rule is None:
                    raise self.fail(f"no interval rule for primitive {prim}")
                outs = rule(self, e, xs)
            if prim in COMPARE:
                self.defs[e.outs[0]] = e
            for o, v in zip(e.outs, outs):
                env[o] = v

    # -- calls --------------------------------------------------------------------------------------
    def apply(self, g: Function, xs: Sequence[Value]) -> list[Value]:
        uncertain = tuple(isinstance(x, tuple) for p, x in zip(g.params, xs) if not is_real_leaf(p.ty))
        rule = _rule(g, self.near)
        if rule is not None and not any(uncertain):
            outs = iter(self.b.call(rule, _flat(xs)))
            return [(next(outs), next(outs)) for _ in g.result_types]
        if g.body is None:
            math_rule = MATH.get(g.name)
            if math_rule is not None and am_function(g) is not None:
                return [math_rule(self, g, [pair(x) for x in xs])]
            return [self.top(t, g) for t in g.result_types]
        t = interval_function(g, uncertain, self.near)
        outs = iter(self.b.call(t.fn, _flat(xs)))
        return [(next(outs), next(outs)) if p else next(outs) for p in t.pair_results]

    def top(self, t: Type, g: Function) -> Value:
        """Any value of type t (NaN included): what an opaque function without a rule returns."""
        scalar = t
        while isinstance(scalar, VecT):
            scalar = scalar.elem
        if scalar is Int:
            raise self.fail(f"opaque function {g.name} returns {t!r} and has no interval rule")
        ends = (NAN, NAN) if scalar is not Bool else (FALSE, TRUE)
        if isinstance(t, Scalar):
            return ends
        zeros = self.b.zero(t)
        lo, hi = _map(self.b, t, lambda b, z: ends, zeros)
        return lo, hi

    # -- loops --------------------------------------------------------------------------------------
    def loop(self, e: Eqn) -> None:
        """A loop over ranges: each Real accumulator becomes five (the sums of lo, hi, |lo|, |hi| and
        hi - lo, for `sum_bounds`), an uncertain Int accumulator two (lo, hi)."""
        body: Block = e.params["body"]
        n: int = e.params["n"]
        i, *refs = body.params
        uncertain: set[Var] = set()
        b = self.b
        while True:
            index = Var(Int)
            self.env[i] = index
            for r in refs:
                ways = 5 if is_real_leaf(r.ty.of) else 2 if r in uncertain else 1  # type: ignore[union-attr]
                self.refs[r] = tuple(Var(r.ty) for _ in range(ways))
                self.terms[r] = 0
                self.depth[r] = len(self.trips) + 1
            self.trips.append(n)
            b.open_block()
            try:
                self.block(body)
                elems = [self.get(a) for a in body.results]
            except _Retry as retry:
                b.close_block()
                if retry.ref not in refs:
                    raise
                uncertain.add(retry.ref)
                continue
            finally:
                self.trips.pop()
            eqns = b.close_block()
            break
        new_refs = [v for r in refs for v in self.refs[r]]
        new_body = Block((index, *new_refs), tuple(eqns), tuple(_flat(elems)))
        outs = iter(b.emit("for", (), n=n, body=new_body))
        values: list[Value] = [
            (next(outs), next(outs)) if isinstance(x, tuple) else next(outs) for x in elems
        ]
        for r in refs:
            parts = [next(outs) for _ in self.refs[r]]
            if len(parts) == 5:
                values.append(self.sum_bounds(r.ty.of, self.terms[r], parts))  # type: ignore[union-attr]
            else:
                values.append(tuple(parts) if len(parts) == 2 else parts[0])  # type: ignore[arg-type]
        for o, v in zip(e.outs, values):
            self.env[o] = v

    def accum(self, e: Eqn) -> None:
        ref, value, *idx = e.args
        targets = self.refs[ref]  # type: ignore[index]
        where = [self.get(a) for a in idx]
        if any(isinstance(w, tuple) for w in where):
            raise self.fail("accumulating at a position that depends on Real values is not supported")
        v = self.get(value)
        b = self.b
        if len(targets) == 5:
            lo, hi = pair(v)
            for target, x in zip(targets, (lo, hi, *_map(b, value.ty, _magnitudes_width, lo, hi))):
                b.emit("accum", (target, x, *where))  # type: ignore[arg-type]
            trips = self.trips[self.depth[ref] - 1 :]  # type: ignore[index]
            self.terms[ref] += math.prod(trips)  # type: ignore[index]
        elif len(targets) == 2:
            for target, x in zip(targets, pair(v)):
                b.emit("accum", (target, x, *where))  # type: ignore[arg-type]
        elif isinstance(v, tuple):
            raise _Retry(ref)  # type: ignore[arg-type]
        else:
            b.emit("accum", (targets[0], v, *where))  # type: ignore[arg-type]

    def sum_bounds(self, ty: Type, terms: int, parts: list[Var]) -> tuple[Atom, Atom]:
        """Bounds of a sum of `terms` ranges from its five accumulators, for any summation order."""
        per_term = Lit(terms * SUM_WIDEN, Real)

        def bounds(
            b: Builder, lo: Atom, hi: Atom, lo_mag: Atom, hi_mag: Atom, width: Atom
        ) -> tuple[Atom, ...]:
            k = b.emit1("select", b.emit1("gt", width, ZERO), per_term, ZERO)
            down, up = b.emit1("mul", lo_mag, k), b.emit1("mul", hi_mag, k)
            return unbounded_is_top(b, b.emit1("sub", lo, down), b.emit1("add", hi, up))

        lo, hi = _map(self.b, ty, bounds, *parts)
        return lo, hi


def _magnitudes_width(b: Builder, lo: Atom, hi: Atom) -> tuple[Atom, ...]:
    return b.emit1("abs", lo), b.emit1("abs", hi), b.emit1("sub", hi, lo)


def _map(b: Builder, ty: Type, f: Callable[..., tuple[Atom, ...]], *atoms: Atom) -> tuple[Atom, ...]:
    """f applied to scalars, or elementwise (by loops) to arrays of type ty."""
    if not isinstance(ty, VecT):
        return f(b, *atoms)
    elem = ty.elem
    return b.loop(ty.n, lambda i, _: _map(b, elem, f, *(b.emit1("index", a, i) for a in atoms)))


# -- helpers over (lo, hi) pairs ---------------------------------------------------------------------


def points(b: Builder, *xs: tuple[Atom, Atom]) -> Atom:
    """Whether every range is a single value (TRUE when known while transforming)."""
    out: Atom = TRUE
    for lo, hi in xs:
        if lo is not hi:
            same = b.emit1("eq", lo, hi)
            out = same if out is TRUE else b.emit1("and", out, same)
    return out


def widen(b: Builder, lo: Atom, hi: Atom, k: Atom) -> tuple[Atom, Atom]:
    """[lo, hi] moved outward by the relative amount k: lo (1 -+ k) and hi (1 +- k) by their signs
    (a zero stays zero, an infinity stays itself, NaN stays NaN)."""
    down = b.emit1("sub", ONE, b.emit1("copysign", k, lo))
    up = b.emit1("add", ONE, b.emit1("copysign", k, hi))
    return b.emit1("mul", lo, down), b.emit1("mul", hi, up)


def inexact(
    b: Builder, lo: Atom, hi: Atom, operands: Sequence[tuple[Atom, Atom]], k: float = WIDEN
) -> tuple[Atom, Atom]:
    """Bounds of a rounded operation, widened unless every operand is a point."""
    same = points(b, *operands)
    if same is TRUE:
        return lo, hi
    return widen(b, lo, hi, b.emit1("select", same, ZERO, Lit(k, Real)))


def ordered(b: Builder, x: Atom, y: Atom) -> tuple[Atom, Atom]:
    """(min, max) of two candidate bounds: NaN in either gives (NaN, NaN)."""
    return b.emit1("min", x, y), b.emit1("max", x, y)


def hull(b: Builder, xs: Sequence[Atom]) -> tuple[Atom, Atom]:
    """(min, max) of candidate bounds, NaN-propagating."""
    lo, hi = xs[0], xs[0]
    for x in xs[1:]:
        lo, hi = b.emit1("min", lo, x), b.emit1("max", hi, x)
    return lo, hi


def unbounded_is_top(b: Builder, lo: Atom, hi: Atom) -> tuple[Atom, Atom]:
    """(NaN, NaN) where lo + hi is NaN: a NaN bound, or [-inf, inf] (where + - * and sums may hide
    a NaN from opposite infinities)."""
    s = b.emit1("add", lo, hi)
    bad = b.emit1("ne", s, s)
    return b.emit1("select", bad, s, lo), b.emit1("select", bad, s, hi)


def nearest_zero(b: Builder, lo: Atom, hi: Atom) -> Atom:
    """The point of [lo, hi] nearest to 0 (0 itself when the range holds it)."""
    zero = Lit(0.0, Real) if lo.ty is Real else Lit(0, Int)
    return b.emit1("max", lo, b.emit1("min", hi, zero))


def farthest_from_zero(b: Builder, lo: Atom, hi: Atom) -> Atom:
    return b.emit1("select", b.emit1("gt", b.emit1("abs", lo), b.emit1("abs", hi)), lo, hi)


def join(b: Builder, x: tuple[Atom, Atom], y: tuple[Atom, Atom]) -> tuple[Atom, Atom]:
    if x[0].ty is Bool:
        return b.emit1("and", x[0], y[0]), b.emit1("or", x[1], y[1])
    return b.emit1("min", x[0], y[0]), b.emit1("max", x[1], y[1])


def _finite_lit(a: Atom) -> bool:
    return type(a) is Lit and math.isfinite(a.val)


def _power_of_two(c: float) -> bool:
    return c != 0 and math.isfinite(c) and math.frexp(abs(c))[0] == 0.5


# -- rules for primitives: (state, eqn, values of the arguments) -> values of the results ----------

Rule = Callable[[IntervalState, Eqn, list[Value]], list[Value]]


def _add_sub(s: IntervalState, e: Eqn, xs: list[Value]) -> list[Value]:
    b = s.b
    (alo, ahi), (blo, bhi) = x, y = pair(xs[0]), pair(xs[1])
    if e.prim == "add":
        lo, hi = b.emit1("add", alo, blo), b.emit1("add", ahi, bhi)
    else:
        lo, hi = b.emit1("sub", alo, bhi), b.emit1("sub", ahi, blo)
    if alo.ty is not Real:
        return [(lo, hi)]
    if not (_finite_lit(e.args[0]) or _finite_lit(e.args[1])):
        lo, hi = unbounded_is_top(b, lo, hi)
    return [inexact(b, lo, hi, (x, y))]


def _scale(s: IntervalState, x: tuple[Atom, Atom], c: float, prim: str, first: bool) -> list[Value]:
    """x * c, c * x or x / c for a finite literal c: monotone, exact for a power of two."""
    b = s.b
    lit = Lit(c, Real)
    lo, hi = ((b.emit1(prim, lit, v) if first else b.emit1(prim, v, lit)) for v in x)
    if c == 0:
        return [ordered(b, lo, hi)]  # 0 * x: [0, 0], or NaN with an infinite x
    if c < 0:
        lo, hi = hi, lo
    if _power_of_two(c):
        return [(lo, hi)]
    return [inexact(b, lo, hi, (x,))]


def _mul(s: IntervalState, e: Eqn, xs: list[Value]) -> list[Value]:
    b = s.b
    x, y = pair(xs[0]), pair(xs[1])
    a0, a1 = e.args
    if x[0].ty is Real and e.prim == "mul":
        if a0 is a1:  # x * x
            near = nearest_zero(b, *x)
            lo = b.emit1("mul", near, near)
            hi = b.emit1("max", b.emit1("mul", x[0], x[0]), b.emit1("mul", x[1], x[1]))
            return [inexact(b, lo, hi, (x,))]
        if _finite_lit(a0):
            return _scale(s, y, a0.val, "mul", True)  # type: ignore[union-attr]
        if _finite_lit(a1):
            return _scale(s, x, a1.val, "mul", False)  # type: ignore[union-attr]
    corners = [b.emit1(e.prim, p, q) for p in x for q in y]
    lo, hi = hull(b, corners)
    if x[0].ty is not Real:
        return [(lo, hi)]
    lo, hi = inexact(b, *unbounded_is_top(b, lo, hi), (x, y))
    if e.prim == "zmul":  # 0 * anything is 0, even inf or NaN
        zero = b.emit1("and", b.emit1("eq", x[0], ZERO), b.emit1("eq", x[1], ZERO))
        lo, hi = b.emit1("select", zero, ZERO, lo), b.emit1("select", zero, ZERO, hi)
    return [(lo, hi)]


def _div(s: IntervalState, e: Eqn, xs: list[Value]) -> list[Value]:
    b = s.b
    x, y = pair(xs[0]), pair(xs[1])
    a1 = e.args[1]
    if e.prim == "div" and _finite_lit(a1) and a1.val != 0:  # type: ignore[union-attr]
        return _scale(s, x, a1.val, "div", False)  # type: ignore[union-attr]
    lo, hi = hull(b, [b.emit1(e.prim, p, q) for p in x for q in y])
    lo, hi = inexact(b, lo, hi, (x, y))
    # a divisor range holding 0 (of either sign) gives infinities of both signs, or NaN for 0 / 0
    spans = b.emit1("and", b.emit1("le", y[0], ZERO), b.emit1("ge", y[1], ZERO))
    lo, hi = b.emit1("select", spans, NAN, lo), b.emit1("select", spans, NAN, hi)
    if e.prim == "zdiv":
        zero = b.emit1("and", b.emit1("eq", x[0], ZERO), b.emit1("eq", x[1], ZERO))
        lo, hi = b.emit1("select", zero, ZERO, lo), b.emit1("select", zero, ZERO, hi)
    return [(lo, hi)]


def _neg(s: IntervalState, e: Eqn, xs: list[Value]) -> list[Value]:
    lo, hi = pair(xs[0])
    return [(s.b.emit1("neg", hi), s.b.emit1("neg", lo))]


def _abs(s: IntervalState, e: Eqn, xs: list[Value]) -> list[Value]:
    b = s.b
    lo, hi = pair(xs[0])
    return [(b.emit1("abs", nearest_zero(b, lo, hi)), b.emit1("max", b.emit1("abs", lo), b.emit1("abs", hi)))]


def _minmax(s: IntervalState, e: Eqn, xs: list[Value]) -> list[Value]:
    (alo, ahi), (blo, bhi) = pair(xs[0]), pair(xs[1])
    return [(s.b.emit1(e.prim, alo, blo), s.b.emit1(e.prim, ahi, bhi))]


def _monotone(s: IntervalState, e: Eqn, xs: list[Value]) -> list[Value]:
    """floor, ceil, trunc, i2f: exact and non-decreasing."""
    lo, hi = pair(xs[0])
    return [(s.b.emit1(e.prim, lo), s.b.emit1(e.prim, hi))]


def _sqrt(s: IntervalState, e: Eqn, xs: list[Value]) -> list[Value]:
    b = s.b
    x = pair(xs[0])
    lo = b.emit1("sqrt", x[0])  # NaN below 0, which `max` carries to hi
    hi = b.emit1("max", lo, b.emit1("sqrt", x[1]))
    return [inexact(b, lo, hi, (x,))]


def _copysign(s: IntervalState, e: Eqn, xs: list[Value]) -> list[Value]:
    """|x| with the sign of y: a y range holding 0 may hold -0, so both signs."""
    b = s.b
    mag_lo, mag_hi = pair(_abs(s, e, xs[:1])[0])
    ylo, yhi = pair(xs[1])
    positive, negative = b.emit1("gt", ylo, ZERO), b.emit1("lt", yhi, ZERO)
    lo = b.emit1("select", positive, mag_lo, b.emit1("neg", mag_hi))
    hi = b.emit1("select", negative, b.emit1("neg", mag_lo), mag_hi)
    return [(lo, hi)]


def _idiv_imod(s: IntervalState, e: Eqn, xs: list[Value]) -> list[Value]:
    b = s.b
    if isinstance(xs[1], tuple):
        raise s.fail(f"{e.prim} by an Int that depends on Real values is not supported")
    (lo, hi), d = pair(xs[0]), xs[1]
    if e.prim == "idiv":  # truncating division by d: monotone in the dividend, decreasing for d < 0
        qlo, qhi = b.emit1("idiv", lo, d), b.emit1("idiv", hi, d)
        positive = b.emit1("gt", d, Lit(0, Int))
        return [(b.emit1("select", positive, qlo, qhi), b.emit1("select", positive, qhi, qlo))]
    # the remainder has the dividend's sign and |r| < |d|, |r| <= |dividend|
    limit = b.emit1("sub", b.emit1("abs", d), Lit(1, Int))
    rlo = b.emit1("max", b.emit1("min", lo, Lit(0, Int)), b.emit1("neg", limit))
    rhi = b.emit1("min", b.emit1("max", hi, Lit(0, Int)), limit)
    same = b.emit1("eq", lo, hi)
    exact = b.emit1("imod", lo, d)
    return [(b.emit1("select", same, exact, rlo), b.emit1("select", same, exact, rhi))]


def _compare(s: IntervalState, e: Eqn, xs: list[Value]) -> list[Value]:
    """(certainly, possibly): "possibly" is the negation of the opposite certainty, so a NaN (which
    compares false) makes it true."""
    b = s.b
    (alo, ahi), (blo, bhi) = pair(xs[0]), pair(xs[1])
    lt = lambda p, q: b.emit1("lt", p, q)  # noqa: E731
    le = lambda p, q: b.emit1("le", p, q)  # noqa: E731
    no = lambda p: b.emit1("not", p)  # noqa: E731
    prim = e.prim
    if prim == "lt":
        return [(lt(ahi, blo), no(le(bhi, alo)))]
    if prim == "le":
        return [(le(ahi, blo), no(lt(bhi, alo)))]
    if prim == "gt":
        return [(lt(bhi, alo), no(le(ahi, blo)))]
    if prim == "ge":
        return [(le(bhi, alo), no(lt(ahi, blo)))]
    single = b.emit1("and", b.emit1("eq", alo, bhi), b.emit1("eq", ahi, blo))  # one and the same value
    apart = b.emit1("or", lt(ahi, blo), lt(bhi, alo))
    return [(single, no(apart))] if prim == "eq" else [(apart, no(single))]


def _logic(s: IntervalState, e: Eqn, xs: list[Value]) -> list[Value]:
    (alo, ahi), (blo, bhi) = pair(xs[0]), pair(xs[1])
    return [(s.b.emit1(e.prim, alo, blo), s.b.emit1(e.prim, ahi, bhi))]


def _not(s: IntervalState, e: Eqn, xs: list[Value]) -> list[Value]:
    lo, hi = pair(xs[0])
    return [(s.b.emit1("not", hi), s.b.emit1("not", lo))]


_MIN_MAX = {"lt": "min", "le": "min", "gt": "max", "ge": "max"}
_SWAP = {"min": "max", "max": "min"}


def _select(s: IntervalState, e: Eqn, xs: list[Value]) -> list[Value]:
    b = s.b
    c, a, other = xs
    x, y = pair(a), pair(other)
    if not isinstance(c, tuple):
        return [(b.emit1("select", c, x[0], y[0]), b.emit1("select", c, x[1], y[1]))]
    cond = s.defs.get(e.args[0])  # type: ignore[arg-type]
    guarded: tuple[str, tuple[Atom, Atom]] | None = None
    if cond is not None and cond.prim in _MIN_MAX and x[0].ty is not Bool:
        # select(p < q, p, q) is min(p, q) (and the like): tighter than joining the branches
        if cond.args == e.args[1:]:
            return _minmax(s, Eqn(e.outs, _MIN_MAX[cond.prim], e.args[1:]), [a, other])
        if cond.args == e.args[:0:-1]:
            return _minmax(s, Eqn(e.outs, _SWAP[_MIN_MAX[cond.prim]], e.args[1:]), [a, other])
        # select(p < q, r, q) where r is p's number read again (a kind's table holds each
        # occurrence of a constant in a slot of its own): min(p, q) where p and r are the same point
        if cond.args[1] == e.args[2]:
            guarded = _MIN_MAX[cond.prim], pair(s.get(cond.args[0]))
        elif cond.args[0] == e.args[2]:
            guarded = _SWAP[_MIN_MAX[cond.prim]], pair(s.get(cond.args[1]))
    certain, possible = c
    either = join(b, x, y)

    def bound(k: int) -> Atom:
        return b.emit1("select", certain, x[k], b.emit1("select", possible, either[k], y[k]))

    lo, hi = bound(0), bound(1)
    if guarded is not None:
        prim, p = guarded
        same = b.emit1(
            "and",
            b.emit1("eq", p[0], p[1]),
            b.emit1("and", b.emit1("eq", x[0], p[0]), b.emit1("eq", x[1], p[1])),
        )
        lo = b.emit1("select", same, b.emit1(prim, x[0], y[0]), lo)
        hi = b.emit1("select", same, b.emit1(prim, x[1], y[1]), hi)
    return [(lo, hi)]


def _vec(s: IntervalState, e: Eqn, xs: list[Value]) -> list[Value]:
    los, his = zip(*map(pair, xs))
    return [(s.b.emit("vec", los, **e.params)[0], s.b.emit("vec", his, **e.params)[0])]


def _index(s: IntervalState, e: Eqn, xs: list[Value]) -> list[Value]:
    b = s.b
    arr, i = xs
    if not isinstance(i, tuple):
        lo, hi = pair(arr)
        return [(b.emit1("index", lo, i), b.emit1("index", hi, i))]
    ty = e.outs[0].ty
    if ty is Int or not isinstance(ty, Scalar):
        raise s.fail(f"reading a {ty!r} at a position that depends on Real values is not supported")
    # one position: its element; several: top
    n = e.args[0].ty.n  # type: ignore[union-attr]
    at = b.emit1("max", b.emit1("min", i[0], Lit(n - 1, Int)), Lit(0, Int))
    lo, hi = (b.emit1("index", a, at) for a in pair(arr))
    top = (NAN, NAN) if ty is Real else (FALSE, TRUE)
    same = b.emit1("eq", i[0], i[1])
    return [(b.emit1("select", same, lo, top[0]), b.emit1("select", same, hi, top[1]))]


RULES: dict[str, Rule] = {
    "add": _add_sub,
    "sub": _add_sub,
    "mul": _mul,
    "zmul": _mul,
    "div": _div,
    "zdiv": _div,
    "neg": _neg,
    "abs": _abs,
    "min": _minmax,
    "max": _minmax,
    "sqrt": _sqrt,
    "copysign": _copysign,
    "idiv": _idiv_imod,
    "imod": _idiv_imod,
    "and": _logic,
    "or": _logic,
    "not": _not,
    "select": _select,
    "vec": _vec,
    "index": _index,
    **{p: _monotone for p in ("floor", "ceil", "trunc", "i2f")},
    **{p: _compare for p in COMPARE},
}


# -- math functions: (state, the opaque function, argument ranges) -> result range -----------------

MathRule = Callable[[IntervalState, Function, list[tuple[Atom, Atom]]], Value]


def am_function(g: Function) -> Fn | None:
    """The adcore.math function whose IR is g, if any (a user function may share a name)."""
    f = am.UNARY.get(g.name) or am.BINARY.get(g.name)
    return f if f is not None and f.ir is g else None


def _finish(
    b: Builder, lo: Atom, hi: Atom, xs: Sequence[tuple[Atom, Atom]], low: float, high: float
) -> tuple[Atom, Atom]:
    """Candidate bounds of a math function: widened unless every argument is a point, clamped."""
    lo, hi = inexact(b, lo, hi, xs, MATH_WIDEN)
    if low > -math.inf:
        lo = b.emit1("max", lo, Lit(low, Real))
    if high < math.inf:
        hi = b.emit1("min", hi, Lit(high, Real))
    return lo, hi


def _call1(b: Builder, g: Function, x: Atom) -> Atom:
    return b.call(g, [x])[0]


def _increasing(low: float = -math.inf, high: float = math.inf) -> MathRule:
    """A monotone function with values in [low, high] (decreasing ones too: `ordered` sorts)."""

    def rule(s: IntervalState, g: Function, xs: list[tuple[Atom, Atom]]) -> Value:
        b = s.b
        ((lo, hi),) = xs
        vlo = _call1(b, g, lo)
        if lo is hi:
            return (vlo, vlo)
        return _finish(b, *ordered(b, vlo, _call1(b, g, hi)), xs, low, high)

    return rule


def _cosh(s: IntervalState, g: Function, xs: list[tuple[Atom, Atom]]) -> Value:
    """Even, smallest at 0: the argument nearest 0 and the farthest (each x itself at a point)."""
    b = s.b
    ((lo, hi),) = xs
    near, far = nearest_zero(b, lo, hi), farthest_from_zero(b, lo, hi)
    return _finish(b, *ordered(b, _call1(b, g, near), _call1(b, g, far)), xs, 1.0, math.inf)


def _crosses(b: Builder, lo: Atom, hi: Atom, at: float, period: float) -> Atom:
    """Whether [lo, hi] may hold a point at + k period (counted generously near the ends)."""
    scale = Lit(1.0 / period, Real)
    t_lo = b.emit1("mul", b.emit1("sub", lo, Lit(at, Real)), scale)
    t_hi = b.emit1("mul", b.emit1("sub", hi, Lit(at, Real)), scale)
    first = b.emit1("ceil", b.emit1("sub", t_lo, Lit(PERIODS_SLACK, Real)))
    last = b.emit1("floor", b.emit1("add", t_hi, Lit(PERIODS_SLACK, Real)))
    return b.emit1("le", first, last)


def _far(b: Builder, lo: Atom, hi: Atom) -> Atom:
    limit = Lit(PERIODIC_LIMIT, Real)
    return b.emit1("or", b.emit1("lt", lo, b.emit1("neg", limit)), b.emit1("gt", hi, limit))


def _sin_cos(top_at: float, bottom_at: float) -> MathRule:
    """sin (tops at pi/2 + 2k pi) and cos (at 2k pi): endpoint values, and +-1 where an extremum
    may lie inside; the whole [-1, 1] far from 0, where the reduction is not checked here."""

    def rule(s: IntervalState, g: Function, xs: list[tuple[Atom, Atom]]) -> Value:
        b = s.b
        ((lo, hi),) = xs
        vlo = _call1(b, g, lo)
        if lo is hi:
            return (vlo, vlo)
        vhi = _call1(b, g, hi)
        cand_lo, cand_hi = _finish(b, *ordered(b, vlo, vhi), xs, -1.0, 1.0)
        far = _far(b, lo, hi)
        top = b.emit1("or", far, _crosses(b, lo, hi, top_at, 2 * math.pi))
        bottom = b.emit1("or", far, _crosses(b, lo, hi, bottom_at, 2 * math.pi))
        cand_hi = b.emit1("max", cand_hi, b.emit1("select", top, ONE, Lit(-1.0, Real)))
        cand_lo = b.emit1("min", cand_lo, b.emit1("select", bottom, Lit(-1.0, Real), ONE))
        same = b.emit1("eq", lo, hi)  # a point argument: exactly its value
        return b.emit1("select", same, vlo, cand_lo), b.emit1("select", same, vlo, cand_hi)

    return rule


def _tan(s: IntervalState, g: Function, xs: list[tuple[Atom, Atom]]) -> Value:
    """Increasing between poles at pi/2 + k pi; across one (or far from 0), the whole line."""
    b = s.b
    ((lo, hi),) = xs
    vlo = _call1(b, g, lo)
    if lo is hi:
        return (vlo, vlo)
    vhi = _call1(b, g, hi)
    cand_lo, cand_hi = _finish(b, *ordered(b, vlo, vhi), xs, -math.inf, math.inf)
    pole = b.emit1("or", _far(b, lo, hi), _crosses(b, lo, hi, math.pi / 2, math.pi))
    cand_lo = b.emit1("min", cand_lo, b.emit1("select", pole, Lit(-math.inf, Real), Lit(math.inf, Real)))
    cand_hi = b.emit1("max", cand_hi, b.emit1("select", pole, Lit(math.inf, Real), Lit(-math.inf, Real)))
    same = b.emit1("eq", lo, hi)
    return b.emit1("select", same, vlo, cand_lo), b.emit1("select", same, vlo, cand_hi)


def _atan2(s: IntervalState, g: Function, xs: list[tuple[Atom, Atom]]) -> Value:
    """atan2(y, x): over a box off the origin and off the cut (x <= 0, y = +-0), the angle is
    continuous and its extremes are at corners; touching the cut or the origin, [-pi, pi]."""
    b = s.b
    (ylo, yhi), (xlo, xhi) = xs
    corners = [b.call(g, [p, q])[0] for p in (ylo, yhi) for q in (xlo, xhi)]
    lo, hi = _finish(b, *hull(b, corners), xs, -PI_UP, PI_UP)
    cut = b.emit1(
        "and", b.emit1("and", b.emit1("le", ylo, ZERO), b.emit1("ge", yhi, ZERO)), b.emit1("le", xlo, ZERO)
    )
    lo = b.emit1("min", lo, b.emit1("select", cut, Lit(-PI_UP, Real), Lit(math.inf, Real)))
    hi = b.emit1("max", hi, b.emit1("select", cut, Lit(PI_UP, Real), Lit(-math.inf, Real)))
    return lo, hi


def _hypot(s: IntervalState, g: Function, xs: list[tuple[Atom, Atom]]) -> Value:
    """Increasing in |x| and |y|: the arguments nearest 0 and the farthest (x, y themselves at a point)."""
    b = s.b
    near = [nearest_zero(b, *x) for x in xs]
    far = [farthest_from_zero(b, *x) for x in xs]
    return _finish(b, *ordered(b, b.call(g, near)[0], b.call(g, far)[0]), xs, 0.0, math.inf)


def _pow(s: IntervalState, g: Function, xs: list[tuple[Atom, Atom]]) -> Value:
    """pow(x, y) = exp(y log x) for x > 0, and pow(+-0, y > 0) = 0: y log x is bilinear in (log x, y),
    so the extremes are at corners. Elsewhere (negative or zero bases with y <= 0): the value at a
    point, except pow(0, y < 0) whose infinity's sign is the sign of the zero; else top."""
    b = s.b
    (xlo, xhi), (ylo, yhi) = xs
    corners = [b.call(g, [p, q])[0] for p in (xlo, xhi) for q in (ylo, yhi)]
    lo, hi = _finish(b, *hull(b, corners), xs, -math.inf, math.inf)
    positive = b.emit1(
        "or", b.emit1("gt", xlo, ZERO), b.emit1("and", b.emit1("ge", xlo, ZERO), b.emit1("gt", ylo, ZERO))
    )
    point = b.emit1("and", points(b, *xs), b.emit1("or", b.emit1("ne", xlo, ZERO), b.emit1("ge", ylo, ZERO)))
    known = b.emit1("or", positive, point)
    return b.emit1("select", known, lo, NAN), b.emit1("select", known, hi, NAN)


MATH: dict[str, MathRule] = {
    "exp": _increasing(0.0),
    "expm1": _increasing(-1.0),
    "log": _increasing(),
    "log1p": _increasing(),
    "log2": _increasing(),
    "log10": _increasing(),
    "sin": _sin_cos(math.pi / 2, -math.pi / 2),
    "cos": _sin_cos(0.0, math.pi),
    "tan": _tan,
    "asin": _increasing(-HALF_PI_UP, HALF_PI_UP),
    "acos": _increasing(0.0, PI_UP),  # decreasing
    "atan": _increasing(-HALF_PI_UP, HALF_PI_UP),
    "sinh": _increasing(),
    "cosh": _cosh,
    "tanh": _increasing(-1.0, 1.0),
    "asinh": _increasing(),
    "acosh": _increasing(0.0),
    "atanh": _increasing(),
    "cbrt": _increasing(),
    "atan2": _atan2,
    "pow": _pow,
    "hypot": _hypot,
}

__all__ = ["MATH", "RULES", "Transformed", "interval", "interval_function"]
