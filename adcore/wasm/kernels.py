"""The L-BFGS two-loop recursion as a Wasm kernel: r = H g over a ring of the last m pairs (s, y).

An optimizer crosses into Wasm once per iteration: ``LbfgsTwoLoop.step(x, g)`` copies the new point
and its gradient into the kernel's memory, and one call

1. pushes the pair s = x - x_prev, y = g - g_prev into the ring (over the oldest once m are kept),
   with ρ = 1 / (yᵀs + ε), and keeps x and g as the next x_prev and g_prev;
2. runs the two-loop recursion over the pairs, newest first: q = g; for each pair α = ρ sᵀq,
   q -= α y; then r = H0 q; then for each pair, oldest first, β = ρ yᵀr, r += s (α - β). H0 is
   γ I with γ = sᵀy / (yᵀy + ε) of the newest pair (Penrose's), or, given ``h0`` (a scale per
   unknown), diag(h0): ``step`` copies h0 into ``.d`` and calls the module's ``step_diagonal``;
3. leaves r in ``.r`` (a numpy view, overwritten by the next step) and returns gᵀr, the Newton
   decrement with this H.

Every dot product is summed sequentially in index order, as the ``dot`` loops of Penrose's
``Lbfgs.ts`` and ``Optimizer.ts`` are, and every element is updated as they update it, so r and gᵀr
are Penrose's numbers bit for bit (a BLAS dot sums in another order and differs in the last bits).
The kernel is generic numerics: it knows nothing of diagrams.

One module, compiled once per process and held here (never evicted: a forked process never
compiles it). An instance serves one optimizer run at a time on one thread; ``borrowed`` keeps one
per thread between runs, which a forked child inherits, as it inherits the energy's instance. Its
linear memory, 6 + 2 m vectors of n doubles, grows to fit n under ``MEMORY_LIMIT``, the energies'
own limit; beyond it ``WasmOutOfMemory`` names the size.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Callable, Iterator

import numpy as np
import wasmtime

from .compiled import MEMORY_LIMIT
from .encode import F64, I32, Asm, ModuleBuilder
from .runtime import WASM_PAGE, FastFunc, Instance, WasmOutOfMemory, load_module

KEEP_BYTES = 16 << 20  # a thread keeps its kernel for reuse up to this much memory

# Linear memory: six vectors of n doubles, x and g (inputs), x_prev, g_prev, r (output, also q), d
# (H0's diagonal, an input of `step_diagonal`); then ρ and α (m doubles each); then the ring of s
# and the ring of y (m vectors each).
VECTORS = 6

# step's parameters, all f64: n, m, the pairs after this push, the newest pair's slot, ε. The
# integers are converted on entry: FastFunc's quick path takes f64 arguments only (mixed types cost
# a few µs more in Python, here once per iteration).
_INTEGER_PARAMS, _EPSD = range(4), 4
# i32 locals: n, m, count, head; bytes of a vector; byte offset; pair index; ring slot; the six
# vectors; the rings, ρ, α; the pair a pass updates with and the pair whose dot product it sums
_N, _M, _COUNT, _HEAD, _N8, _K, _J, _SLOT = range(5, 13)
_XB, _GB, _XPB, _GPB, _RB, _DB, _SB, _YB, _RHO, _ALPHA, _SP, _YP, _DP = range(13, 26)
_DOT, _YS, _YY, _A, _GAMMA, _S, _Y = range(26, 33)  # f64 locals
_LOCALS = [I32] * 21 + [F64] * 7


UNROLL = 8  # elements a loop iteration handles


def _pass(a: Asm, body: Callable[[int], Asm]) -> None:
    """for k in 0, 8, ..., 8 (n - 1): body (k, the byte offset, in _K; ``body(o)`` handles element
    k + o). UNROLL elements an iteration, each at its own constant offset, in index order, then the
    rest one by one: the loop's own work, not the chain of additions, bounds these passes (a whole
    step 2.3x faster at n = 203 and 2.7x at 2,000 than one element an iteration, bit for bit)."""
    a.i32_const(0).local_set(_K)
    for unroll in (UNROLL, 1):
        a.block().loop()
        a.local_get(_K).i32_const(8 * (unroll - 1)).i32_add().local_get(_N8).i32_ge_u().br_if(1)
        for i in range(unroll):
            a.raw(body(8 * i).code)
        a.local_get(_K).i32_const(8 * unroll).i32_add().local_set(_K)
        a.br(0).end().end()


def _addr(a: Asm, base: int) -> Asm:
    """base + k: the address of element k + o with the constant offset o in the load or store."""
    return a.local_get(base).local_get(_K).i32_add()


def _load(a: Asm, base: int, o: int) -> Asm:
    return _addr(a, base).f64_load(o)


def _accumulate(a: Asm, acc: int, u: int, v_local: int, o: int) -> None:
    """acc += u[k + o] · v (v a local): one term of a dot product summed in index order."""
    a.local_get(acc)
    _load(a, u, o).local_get(v_local).f64_mul().f64_add().local_set(acc)


def _pair(a: Asm, s_to: int | None, y_to: int | None) -> None:
    """Point s_to and y_to at the s and y of ring slot _SLOT."""
    for to, base in ((s_to, _SB), (y_to, _YB)):
        if to is not None:
            a.local_get(base).local_get(_SLOT).local_get(_N8).i32_mul().i32_add().local_set(to)


def _slot_step(a: Asm, delta: int) -> None:
    """_SLOT += delta (±1) around the ring of m slots."""
    if delta > 0:
        a.local_get(_SLOT).i32_const(1).i32_add().local_set(_SLOT)
        a.local_get(_SLOT).local_get(_M).i32_eq().if_().i32_const(0).local_set(_SLOT).end()
    else:
        a.local_get(_SLOT).i32_eqz().if_().local_get(_M).local_set(_SLOT).end()
        a.local_get(_SLOT).i32_const(1).i32_sub().local_set(_SLOT)


def _element(base: int, j: int) -> Asm:
    """The address of ρ_j or α_j (j a local)."""
    return Asm().local_get(base).local_get(j).i32_const(8).i32_mul().i32_add()


def q_update(o: int) -> Asm:
    """q -= α y (pair _YP, α in _A); _DOT += s q with the next pair's s (_DP)."""
    q = Asm()
    _addr(q, _RB)
    _load(q, _RB, o).local_get(_A)
    _load(q, _YP, o).f64_mul().f64_sub().local_tee(_S).f64_store(o)
    _accumulate(q, _DOT, _DP, _S, o)
    return q


def last_q_update(diagonal: bool, o: int) -> Asm:
    """r = H0 (q - α y) for the oldest pair (_YP), H0's element γ or d[k]; _DOT += y r with that
    pair's y."""
    q = Asm()
    _addr(q, _RB)
    if diagonal:
        _load(q, _DB, o)
    else:
        q.local_get(_GAMMA)
    _load(q, _RB, o).local_get(_A)
    _load(q, _YP, o).f64_mul().f64_sub().f64_mul().local_tee(_S).f64_store(o)
    _accumulate(q, _DOT, _YP, _S, o)
    return q


def r_update(dot_with: int, o: int) -> Asm:
    """r += s (α - β) (pair _SP, α - β in _A); _DOT += u r with u = dot_with (the next pair's y, or g)."""
    r = Asm()
    _addr(r, _RB)
    _load(r, _RB, o)
    _load(r, _SP, o).local_get(_A).f64_mul().f64_add().local_tee(_S).f64_store(o)
    _accumulate(r, _DOT, dot_with, _S, o)
    return r


def _step_body(diagonal: bool) -> Asm:
    """Each pass over the vectors makes one update and sums the dot product the next update needs
    from the values it just wrote, so a pass's chain of additions overlaps its loads and stores."""
    a = Asm()
    for param, local in zip(_INTEGER_PARAMS, (_N, _M, _COUNT, _HEAD)):
        a.local_get(param).i32_trunc_f64_u().local_set(local)
    a.local_get(_N).i32_const(8).i32_mul().local_set(_N8)
    for k, local in enumerate((_XB, _GB, _XPB, _GPB, _RB, _DB)):
        a.local_get(_N8).i32_const(k).i32_mul().local_set(local)
    a.local_get(_N8).i32_const(VECTORS).i32_mul().local_set(_RHO)
    a.local_get(_RHO).local_get(_M).i32_const(8).i32_mul().i32_add().local_set(_ALPHA)
    a.local_get(_ALPHA).local_get(_M).i32_const(8).i32_mul().i32_add().local_set(_SB)
    a.local_get(_SB).local_get(_M).local_get(_N8).i32_mul().i32_add().local_set(_YB)
    a.local_get(_HEAD).local_set(_SLOT)
    _pair(a, _SP, _YP)
    # push: s = x - x_prev, y = g - g_prev; x_prev = x, g_prev = g; q = g; sums yᵀs (ρ's, and γ's
    # sᵀy: the same products), yᵀy (γ's) and sᵀq (the first α's)
    for acc in (_YS, _YY, _DOT):
        a.f64_const(0.0).local_set(acc)

    def push(o: int) -> Asm:
        p = Asm()
        _addr(p, _SP)
        _load(p, _XB, o)
        _load(p, _XPB, o).f64_sub().local_tee(_S).f64_store(o)
        _addr(p, _YP)
        _load(p, _GB, o)
        _load(p, _GPB, o).f64_sub().local_tee(_Y).f64_store(o)
        for to, source in ((_XPB, _XB), (_GPB, _GB), (_RB, _GB)):
            _addr(p, to)
            _load(p, source, o).f64_store(o)
        p.local_get(_YS).local_get(_Y).local_get(_S).f64_mul().f64_add().local_set(_YS)
        p.local_get(_YY).local_get(_Y).local_get(_Y).f64_mul().f64_add().local_set(_YY)
        p.local_get(_DOT).local_get(_S)
        return _load(p, _GB, o).f64_mul().f64_add().local_set(_DOT)

    _pass(a, push)
    a.local_get(_RHO).local_get(_HEAD).i32_const(8).i32_mul().i32_add()
    a.f64_const(1.0).local_get(_YS).local_get(_EPSD).f64_add().f64_div().f64_store()
    # first loop, newest first: α_j = ρ_j s_jᵀq; q -= α_j y_j (and the next pair's sᵀq). The oldest
    # pair's pass goes on to r = γ q, γ = sᵀy / (yᵀy + EPSD) of the newest pair, and sums that pair's
    # yᵀr for the second loop.
    a.local_get(_YS).local_get(_YY).local_get(_EPSD).f64_add().f64_div().local_set(_GAMMA)
    a.i32_const(0).local_set(_J)
    a.block().loop()
    _pair(a, _SP, _YP)
    a.raw(_element(_RHO, _SLOT).f64_load().code).local_get(_DOT).f64_mul().local_set(_A)
    a.raw(_element(_ALPHA, _J).local_get(_A).f64_store().code)
    a.f64_const(0.0).local_set(_DOT)
    a.local_get(_J).i32_const(1).i32_add().local_tee(_J).local_get(_COUNT).i32_lt_u()
    a.if_()
    _slot_step(a, +1)
    _pair(a, _DP, None)
    _pass(a, q_update)
    a.br(1)
    a.end()
    a.end().end()
    _pass(a, functools.partial(last_q_update, diagonal))
    # second loop, oldest first: β = ρ_j y_jᵀr; r += s_j (α_j - β) (and the next pair's yᵀr; after
    # the newest pair, gᵀr: Penrose's normGrad, Σ g[i] r[i])
    a.block().loop()
    a.local_get(_J).i32_const(1).i32_sub().local_set(_J)
    _pair(a, _SP, None)
    a.raw(_element(_ALPHA, _J).f64_load().code)
    a.raw(_element(_RHO, _SLOT).f64_load().code).local_get(_DOT).f64_mul().f64_sub().local_set(_A)
    a.f64_const(0.0).local_set(_DOT)
    a.local_get(_J).i32_eqz().br_if(1)
    _slot_step(a, -1)
    _pair(a, None, _DP)
    _pass(a, functools.partial(r_update, _DP))
    a.br(0)
    a.end().end()
    _pass(a, functools.partial(r_update, _GB))
    a.local_get(_DOT)
    return a


@functools.cache
def module() -> wasmtime.Module:
    """The kernel's compiled module: built and compiled once per process, and kept."""
    b = ModuleBuilder()
    b.add_memory(1)
    b.add_function("step", [F64] * 5, [F64], _LOCALS, _step_body(diagonal=False), export=True)
    b.add_function("step_diagonal", [F64] * 5, [F64], _LOCALS, _step_body(diagonal=True), export=True)
    return load_module(b.to_bytes())


def memory_bytes(n: int, m: int) -> int:
    """Linear memory the kernel needs for n unknowns and m pairs."""
    return 8 * ((VECTORS + 2 * m) * n + 2 * m)


class LbfgsTwoLoop:
    """One kernel instance: a ring of up to m pairs of n-vectors, ρ = 1 / (yᵀs + epsd) and
    γ = sᵀy / (yᵀy + epsd). Not thread-safe: one per optimizer run, ``borrowed`` per thread."""

    def __init__(self, m: int, n: int, epsd: float, memory_limit: int | None = MEMORY_LIMIT) -> None:
        if m < 1:
            raise ValueError(f"LbfgsTwoLoop: m must be at least 1, got {m}")
        self.m, self.epsd, self.memory_limit = m, epsd, memory_limit
        self._inst = Instance(module(), time_limit=None, memory_limit=memory_limit)
        self._step: FastFunc = self._inst.fast("step")
        self._step_diagonal: FastFunc = self._inst.fast("step_diagonal")
        self.resize(n)

    @classmethod
    @contextlib.contextmanager
    def borrowed(cls, m: int, n: int, epsd: float) -> Iterator[LbfgsTwoLoop]:
        """A kernel for one optimizer run: the one this thread kept from its last run if it has one
        (a nested run makes its own); kept again afterwards unless its memory is over KEEP_BYTES."""
        kernel: LbfgsTwoLoop | None = getattr(_kept, "kernel", None)
        _kept.kernel = None
        if kernel is None or (kernel.m, kernel.epsd) != (m, epsd):
            kernel = cls(m, n, epsd)
        else:
            kernel.resize(n)
        yield kernel
        if kernel.capacity <= KEEP_BYTES:
            _kept.kernel = kernel

    @property
    def capacity(self) -> int:
        """Bytes of linear memory held."""
        return self._inst.memory().data_len(self._inst.store)

    def resize(self, n: int) -> None:
        """Empty the ring and make room for n unknowns (memory grows, never shrinks)."""
        if n < 1:
            raise ValueError(f"LbfgsTwoLoop: n must be at least 1, got {n}")
        need = memory_bytes(n, self.m)
        if need >= 1 << 32 or (self.memory_limit is not None and need > self.memory_limit):
            raise WasmOutOfMemory(
                "<lbfgs kernel>",
                f"{self.m} pairs of {n} unknowns need {need} bytes (limit {self.memory_limit} bytes)",
            )
        missing = need - self.capacity
        if missing > 0:
            self._inst.grow_memory(-(-missing // WASM_PAGE))
        self.n, self.count, self.head = n, 0, 0
        # views built after growing: growth may move the memory
        views = (self._inst.view(k * 8 * n, n).array for k in range(VECTORS))
        self.x, self.g, self.x_prev, self.g_prev, self.r, self.d = views

    def start(self, x: np.ndarray, g: np.ndarray) -> None:
        """Forget the pairs and begin from point x with gradient g (the next pair's x_prev, g_prev)."""
        self.count, self.head = 0, 0
        self.x_prev[...] = x
        self.g_prev[...] = g

    def step(self, x: np.ndarray, g: np.ndarray, h0: np.ndarray | None = None) -> float:
        """Push the pair to (x, g) and compute r = H g into ``.r``; returns gᵀr (module docstring).
        H0 is γ I, or diag(h0) when ``h0`` is given (n positive numbers)."""
        self.x[...] = x
        self.g[...] = g
        self.head = (self.head - 1) % self.m
        self.count = min(self.count + 1, self.m)
        if h0 is None:
            return self._step(self.n, self.m, self.count, self.head, self.epsd)  # one f64
        self.d[...] = h0
        return self._step_diagonal(self.n, self.m, self.count, self.head, self.epsd)


_kept = threading.local()
