"""The rules of `FunctionGen` that address linear memory: indexing, array literals, zeroed arrays,
and accumulation into arrays (a scalar accumulator is a local; an array accumulator is a zeroed region
of the function's frame)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..ir import Atom, Eqn, Lit, Var
from ..types import Int, Real, RefT, Scalar, Type, VecT
from .encode import I32, Asm
from .layout import is_array, size_of


class MemoryRules:
    """Mixed into `FunctionGen`, which provides the assembler (`asm`) and the helpers these rules use:
    `get`/`set` (push or pop a variable), `alloc` (frame bytes) and `temp` (a scratch local)."""

    asm: Asm
    bounds_checks: bool

    if TYPE_CHECKING:  # FunctionGen's, declared for the type checker only (defined there at run time)

        def get(self, a: Atom) -> None: ...
        def set(self, v: Var) -> None: ...
        def alloc(self, size: int) -> int: ...
        def temp(self, wtype: int) -> int: ...

    def load(self, t: Type, offset: int = 0) -> None:
        (self.asm.f64_load if t == Real else self.asm.i32_load)(offset)

    def store(self, t: Type, offset: int = 0) -> None:
        (self.asm.f64_store if t == Real else self.asm.i32_store)(offset)

    def address(self, base: Atom, ty: Type, idx: list[Atom]) -> int:
        """Push base + dynamic part of the index path; return the static byte offset."""
        self.get(base)
        offset = 0
        t = ty.of if isinstance(ty, RefT) else ty
        for i in idx:
            assert isinstance(t, VecT)
            stride = size_of(t.elem)
            if isinstance(i, Lit):
                offset += int(i.val) * stride
            else:
                self.checked_index(i, t.n)
                if stride != 1:
                    self.asm.i32_const(stride)
                    self.asm.i32_mul()
                self.asm.i32_add()
            t = t.elem
        return offset

    def checked_index(self, i: Atom, n: int) -> None:
        self.get(i)
        if self.bounds_checks:
            self.get(i)
            self.asm.i32_const(n)
            self.asm.i32_ge_u()
            self.asm.if_()
            self.asm.unreachable()
            self.asm.end()

    def op_index(self, e: Eqn) -> None:
        arr, i = e.args
        out = e.outs[0]
        offset = self.address(arr, arr.ty, [i])
        if is_array(out.ty):
            if offset:
                self.asm.i32_const(offset)
                self.asm.i32_add()
        else:
            self.load(out.ty, offset)
        self.set(out)

    def op_vec(self, e: Eqn) -> None:
        out = e.outs[0]
        elem = e.params["elem"]
        es = size_of(elem)
        addr = self.alloc(size_of(out.ty))
        for k, x in enumerate(e.args):
            self.asm.i32_const(addr + k * es)
            self.get(x)
            if is_array(elem):
                self.asm.i32_const(es)
                self.asm.memory_copy()
            else:
                self.store(elem)
        self.asm.i32_const(addr)
        self.set(out)

    def op_zeros(self, e: Eqn) -> None:
        out = e.outs[0]
        if not is_array(out.ty):
            self.get(Lit(0.0, Real) if out.ty == Real else Lit(0, Int))
        else:
            addr = self.alloc(size_of(out.ty))
            self.fill_zero(addr, size_of(out.ty))
            self.asm.i32_const(addr)
        self.set(out)

    def fill_zero(self, addr: int, size: int) -> None:
        self.asm.i32_const(addr)
        self.asm.i32_const(0)
        self.asm.i32_const(size)
        self.asm.memory_fill()

    def _copy_to_element(self, addr: int, es: int) -> None:
        # stack: [i*es, src]; memory.copy wants (dst, src, n)
        src = self.temp(I32)
        self.asm.local_set(src)
        self.asm.i32_const(addr)
        self.asm.i32_add()
        self.asm.local_get(src)
        self.asm.i32_const(es)
        self.asm.memory_copy()

    def op_accum(self, e: Eqn) -> None:
        ref, value, *idx = e.args
        assert isinstance(ref, Var) and isinstance(ref.ty, RefT)
        a = self.asm
        if not is_array(ref.ty.of):
            self.get(ref)
            self.get(value)
            a.f64_add() if ref.ty.of == Real else a.i32_add()
            self.set(ref)
            return
        offset = self.address(ref, ref.ty, list(idx))
        if not is_array(value.ty):
            addr = self.temp(I32)
            a.local_tee(addr)
            a.local_get(addr)
            self.load(value.ty, offset)
            self.get(value)
            a.f64_add() if value.ty == Real else a.i32_add()
            self.store(value.ty, offset)
            return
        self.add_array_into(offset, value)

    def add_array_into(self, offset: int, value: Atom) -> None:
        """dst[k] += src[k] for every scalar of the array `value`; the stack holds dst - offset."""
        a = self.asm
        scalar_t = _scalar_of(value.ty)
        width = size_of(scalar_t)
        count = size_of(value.ty) // width
        dst, src, k = self.temp(I32), self.temp(I32), self.temp(I32)
        if offset:
            a.i32_const(offset)
            a.i32_add()
        a.local_set(dst)
        self.get(value)
        a.local_set(src)
        a.i32_const(0)
        a.local_set(k)
        a.block()
        a.loop()
        a.local_get(k)
        a.i32_const(count * width)
        a.i32_ge_s()
        a.br_if(1)
        a.local_get(dst)
        a.local_get(k)
        a.i32_add()
        a.local_get(dst)
        a.local_get(k)
        a.i32_add()
        self.load(scalar_t)
        a.local_get(src)
        a.local_get(k)
        a.i32_add()
        self.load(scalar_t)
        a.f64_add() if scalar_t == Real else a.i32_add()
        self.store(scalar_t)
        a.local_get(k)
        a.i32_const(width)
        a.i32_add()
        a.local_set(k)
        a.br(0)
        a.end()
        a.end()


def _scalar_of(t: Type) -> Scalar:
    while isinstance(t, VecT):
        t = t.elem
    assert isinstance(t, Scalar)
    return t
