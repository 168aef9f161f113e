"""Local allocation by liveness: variables whose lifetimes do not overlap share a Wasm local.

Engines reject functions with too many locals, and a derivative function can have tens of
thousands of SSA variables. A variable used inside a loop but defined outside it stays live until
the loop ends (the body runs again); a loop's index and accumulators live across the whole loop.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable

from ..ir import Block, Var


class _Lifetimes:
    def __init__(self) -> None:
        self.pos = 0
        self.defined: dict[Var, tuple[int, tuple[int, ...]]] = {}
        self.last_use: dict[Var, int] = {}
        self.used_in_loop: dict[Var, list[int]] = {}  # uses that keep v alive until a loop's end
        self.loop_end: dict[int, int] = {}

    def define(self, v: Var, loops: tuple[int, ...]) -> None:
        self.defined[v] = (self.pos, loops)

    def use(self, v: Var, loops: tuple[int, ...]) -> None:
        if v not in self.defined:
            return  # a parameter of the function: it keeps its own local
        def_loops = self.defined[v][1]
        if len(loops) > len(def_loops):
            self.used_in_loop.setdefault(v, []).append(loops[len(def_loops)])
        else:
            self.last_use[v] = self.pos  # positions only grow: the latest use is this one

    def block(self, b: Block, loops: tuple[int, ...]) -> None:
        defined, last_use, depth = self.defined, self.last_use, len(loops)
        for e in b.eqns:
            self.pos = read_at = self.pos + 1
            for a in e.args:
                if a.__class__ is Var:
                    d = defined.get(a)  # type: ignore[call-overload]
                    if d is not None and len(d[1]) == depth:  # the common case of `use`, inline
                        last_use[a] = read_at  # type: ignore[index]
                    elif d is not None:
                        self.use(a, loops)  # type: ignore[arg-type]
            if e.prim == "for":
                body: Block = e.params["body"]
                loop_id = self.pos
                for p in body.params:  # index and accumulators live across iterations
                    self.define(p, loops)
                inner = (*loops, loop_id)
                self.block(body, inner)
                self.pos += 1
                for r in body.results:
                    if isinstance(r, Var):
                        self.use(r, inner)
                self.loop_end[loop_id] = self.pos
                self.pos += 1
                for p in body.params:  # read when the loop's outputs are written: no sharing with them
                    self.use(p, loops)
            else:
                self.pos += 1
            written = (self.pos, loops)
            for o in e.outs:
                defined[o] = written

    def ends(self) -> dict[Var, int]:
        ends = dict(self.last_use)
        for v, loop_ids in self.used_in_loop.items():
            ends[v] = max([ends.get(v, 0), *(self.loop_end[k] for k in loop_ids)])
        return ends


def allocate_locals(
    body: Block,
    fixed: dict[Var, int],
    n_params: int,
    storage_type: Callable[[Var], int],
    in_memory: set[Var] = frozenset(),  # type: ignore[assignment]
    stored_at_definition: set[Var] = frozenset(),  # type: ignore[assignment]
) -> tuple[dict[Var, int], list[int]]:
    """Map each used variable to a local index; returns the mapping and the declared locals' types.
    Variables `in_memory` get no local; results `stored_at_definition` live only until just after
    their definition (unless used later)."""
    life = _Lifetimes()
    life.block(body, ())
    life.pos += 1
    for r in body.results:
        if isinstance(r, Var) and r not in stored_at_definition:
            life.use(r, ())
    ends = life.ends()
    for r in stored_at_definition:  # (thousands in a wide function: no call per result)
        stored_by = life.defined[r][0] + 1
        if ends.get(r, 0) < stored_by:
            ends[r] = stored_by
    local = dict(fixed)
    types: list[int] = []
    free: dict[int, list[int]] = {}
    # the locals in use, as end << 24 | index (ints compare faster than tuples); the index finds
    # the local's type in `types`
    active: list[int] = []
    storage: dict[object, int] = {}  # by type: nearly all variables share a handful of types
    end_of, pop, push = ends.get, heapq.heappop, heapq.heappush
    for v, (start, _) in life.defined.items():  # defined in order of position (never parameters)
        end = end_of(v)
        if end is None or (in_memory and v in in_memory):
            continue
        start <<= 24
        while active and active[0] < start:
            idx = pop(active) & 0xFFFFFF
            free[types[idx - n_params]].append(idx)
        t = storage.get(v.ty)  # type: ignore[assignment]
        if t is None:
            t = storage[v.ty] = storage_type(v)
            free.setdefault(t, [])
        pool = free[t]
        if pool:
            idx = pool.pop()
        else:
            types.append(t)
            idx = n_params + len(types) - 1
        local[v] = idx
        push(active, end << 24 | idx)
    return local, types
