"""Wasm locals for adcore variables, shared by variables whose lifetimes do not overlap.

Engines reject functions with too many locals, and a derivative function can have tens of
thousands of SSA variables. The code generator walks each block from its last instruction to its
first, so a variable is first met at its last read: it `take`s a local there, from the pool of free
locals of its Wasm type, and gives it back (`release`) at its definition, where its lifetime
begins. This is linear-scan allocation run backwards, and it needs no separate liveness pass.
"""

from __future__ import annotations

from collections.abc import Callable

from ..ir import Var
from ..types import Real, Type
from .encode import SIMPLE_OPS, local_get_code, local_set_code, local_tee_code


class Locals:
    """variable -> the code that reads it (`reads`): `local.get` of its local, or a load for a
    variable kept in memory (`in_memory`: variable -> the code loading it), which gets no local. A
    variable enters `reads` at its last read, so `v in reads` tells whether anything after the
    current point reads v. A local is known by its `local.get` code, and `slots` gives its
    `local.set` code, the pool of free locals of its type and its `local.tee` code (parameters
    have no slot: they are never written)."""

    def __init__(
        self,
        n_params: int,
        storage_type: Callable[[Type], int],
        in_memory: dict[Var, bytes],
    ):
        self.n_params = n_params
        self.types: list[int] = []  # the declared locals' Wasm types, after the parameters
        self.reads: dict[Var, bytes] = {}
        self.slots: dict[bytes, tuple[bytes, list[bytes], bytes]] = {}
        self.pools: dict[int, list[bytes]] = {}  # Wasm type -> free locals
        # adcore type -> its Wasm type and that type's pool (a handful of types in all)
        self.kinds: dict[Type, tuple[int, list[bytes]]] = {}
        self.storage_type = storage_type
        self.in_memory = in_memory
        self.real_pool = self.kind(Real)[1]  # the free locals nearly every variable takes from

    def fix(self, v: Var, idx: int) -> None:
        """v lives in local idx for the whole function (a parameter)."""
        self.reads[v] = local_get_code(idx)

    def new(self, wtype: int) -> int:
        """A fresh local (never pooled: scratch locals)."""
        self.types.append(wtype)
        return self.n_params + len(self.types) - 1

    def new_pooled(self, wtype: int) -> bytes:
        """A fresh local of the pool of its type, as its `local.get` code."""
        idx = self.new(wtype)
        get = local_get_code(idx)
        self.slots[get] = (local_set_code(idx), self.pools[wtype], local_tee_code(idx))
        return get

    def take(self, v: Var) -> bytes:
        """v is read here for the last time: give it a free local of its type (or its memory slot);
        returns the code that reads it."""
        code = self.in_memory.get(v)
        if code is not None:
            self.reads[v] = code
            return code
        wtype, pool = self.kinds.get(v.ty) or self.kind(v.ty)
        code = self.reads[v] = pool.pop() if pool else self.new_pooled(wtype)
        return code

    def kind(self, t: Type) -> tuple[int, list[bytes]]:
        """t's Wasm type and the pool of free locals of that type."""
        wtype = self.storage_type(t)
        kind = self.kinds[t] = (wtype, self.pools.setdefault(wtype, []))
        return kind

    def release(self, v: Var) -> None:
        """v is defined here: before this point its local is free (v keeps it in `reads`, for the
        code that writes v)."""
        code = self.reads.get(v)
        if code is not None:
            slot = self.slots.get(code)
            if slot is not None:
                slot[1].append(code)

    def write(self, v: Var) -> bytes:
        """The code storing the stack's top into v (dropping it if nothing reads v)."""
        code = self.reads.get(v)
        return _DROP if code is None else self.slots[code][0]


_DROP = bytes([SIMPLE_OPS["drop"]])
