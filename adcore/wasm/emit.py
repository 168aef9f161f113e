"""Emitting one adcore function as one Wasm function.

State: the assembler, variable -> local (shared by liveness, see `locals.py`), and the bump pointer
of the function's static frame. Every function owns a frame for the arrays it makes (the call graph
is a DAG, so no function is ever active twice at once). A scalar accumulator of a `for` is a local;
an array accumulator is a zeroed region of the frame.
"""

from __future__ import annotations

from ..ir import Atom, Block, Eqn, Function, Lit, Var
from ..types import Bool, Int, Real, RefT, Scalar, Type, VecT
from .encode import (
    F64,
    I32,
    I64,
    Asm,
    f64_const_code,
    i32_const_code,
    local_get_code,
    local_set_code,
    local_tee_code,
)
from .layout import (
    CodegenError,
    _align,
    _load_slot,
    _store_slot,
    buffer_slots,
    emit_call,
    is_array,
    memory_copy,
    memory_fill,
    size_of,
    spilled,
    wasm_type,
)
from .locals import allocate_locals

SCALAR_F64 = {
    "add": "f64_add", "sub": "f64_sub", "mul": "f64_mul", "div": "f64_div", "min": "f64_min",
    "max": "f64_max", "copysign": "f64_copysign", "neg": "f64_neg", "abs": "f64_abs",
    "sqrt": "f64_sqrt", "floor": "f64_floor", "ceil": "f64_ceil", "trunc": "f64_trunc",
    "lt": "f64_lt", "le": "f64_le", "gt": "f64_gt", "ge": "f64_ge", "eq": "f64_eq", "ne": "f64_ne",
}  # fmt: skip
SCALAR_I32 = {
    "add": "i32_add", "sub": "i32_sub", "mul": "i32_mul", "idiv": "i32_div_s", "imod": "i32_rem_s",
    "lt": "i32_lt_s", "le": "i32_le_s", "gt": "i32_gt_s", "ge": "i32_ge_s", "eq": "i32_eq",
    "ne": "i32_ne", "and": "i32_and", "or": "i32_or",
}  # fmt: skip
_F64_OPCODES = {prim: bytes(getattr(Asm(), name)().code) for prim, name in SCALAR_F64.items()}
_I32_OPCODES = {prim: bytes(getattr(Asm(), name)().code) for prim, name in SCALAR_I32.items()}


Location = tuple[int | None, int, Type]  # (address, or None for the buffer in local 0; offset; type)


class FunctionGen:
    """Emits one function. State: the assembler, variable -> local, and the frame's bump pointer."""

    def __init__(self, f: Function, index: dict[int, int], frame_base: int, bounds_checks: bool):
        assert f.body is not None
        self.f = f
        self.index = index
        self.bounds_checks = bounds_checks
        self.asm = Asm()
        self.frame_end = frame_base
        self.loop_depth = 0
        self.bits_scratch: int | None = None  # one i64 local for branch-free selects
        n_out = sum(is_array(t) for t in f.result_types)
        self.spilled = spilled(f)
        # Variables that stay in memory and are loaded where used: a wide function's parameters (in
        # its buffer) and the scalar results of a wide call made once per activation, at top level
        # (in the call's buffer, which nothing overwrites before the function returns). Thousands of
        # them held in locals would be spilled by the engine anyway.
        self.in_memory: dict[Var, Location] = {}
        self.buffered_results = {
            o
            for e in f.body.eqns
            if e.prim == "call" and spilled(e.params["fn"])
            for o in e.outs
            if not is_array(o.ty)
        }
        self.stored_results: dict[Var, list[int]] = {}  # scalar results written where they are defined
        if self.spilled:  # local 0 is the buffer; output pointers are loaded from it
            self.in_memory.update(
                (p, (None, 8 * k, Int if is_array(p.ty) else p.ty)) for k, p in enumerate(f.params)
            )
            first = len(f.params) + n_out
            # a result defined by the body is defined at its top level (loop bodies are scopes)
            params = set(f.params)
            scalars = [r for r in f.body.results if not is_array(r.ty)]
            for j, r in enumerate(scalars):
                if isinstance(r, Var) and r not in params and r not in self.buffered_results:
                    self.stored_results.setdefault(r, []).append(8 * (first + j))
            self.out_ptrs = list(range(1, 1 + n_out))
            self.n_params = 1
            no_local = set(self.in_memory) | self.buffered_results
            self.local, types = allocate_locals(
                f.body, {}, 1 + n_out, self.storage_type, no_local, set(self.stored_results)
            )
            self.local_types = [I32] * n_out + types
        else:
            n_params = len(f.params) + n_out
            self.out_ptrs = list(range(len(f.params), n_params))
            self.n_params = n_params
            fixed = {p: k for k, p in enumerate(f.params)}
            self.local, self.local_types = allocate_locals(
                f.body, fixed, n_params, self.storage_type, self.buffered_results
            )
        # each variable's local.get and local.set, encoded once (most instructions are a few of them)
        n_locals = self.n_params + len(self.local_types)
        gets = [local_get_code(k) for k in range(n_locals)]
        sets = [local_set_code(k) for k in range(n_locals)]
        self.reads = {v: gets[k] for v, k in self.local.items()}
        self.writes = {v: sets[k] for v, k in self.local.items()}

    @staticmethod
    def storage_type(v: Var) -> int:
        t = v.ty
        if t is Real:  # scalars first: nearly every variable is one
            return F64
        if t is Int or t is Bool:
            return I32
        if isinstance(t, RefT):
            return I32 if isinstance(t.of, VecT) else wasm_type(t.of)
        return I32 if is_array(t) else wasm_type(t)

    # -- helpers -------------------------------------------------------------------------------------
    def temp(self, wtype: int) -> int:
        """A fresh scratch local (scratch locals are never reused, and few: one per nested copy loop)."""
        self.local_types.append(wtype)
        return self.n_params + len(self.local_types) - 1

    def alloc(self, size: int) -> int:
        addr = self.frame_end
        self.frame_end += _align(size)
        return addr

    def get(self, a: Atom) -> None:
        self.asm.code += self.read(a)

    def read(self, a: Atom) -> bytes:
        """The code pushing a's value."""
        if a.__class__ is Lit:  # tested first: a literal would hash as a dataclass, slowly
            return f64_const_code(float(a.val)) if a.ty is Real else i32_const_code(int(a.val))  # type: ignore[union-attr]
        code = self.reads.get(a)  # type: ignore[call-overload]
        if code is None:
            base, offset, t = self.in_memory[a]  # type: ignore[index]
            load = Asm().local_get(0) if base is None else Asm().i32_const(base)
            _load_slot(load, t, offset)
            code = bytes(load.code)
        return code

    def slot_address(self, a: Atom) -> int | None:
        """The static address of the 8-byte slot holding a, if a lives in a call's buffer."""
        where = self.in_memory.get(a) if a.__class__ is Var else None  # type: ignore[call-overload]
        return None if where is None or where[0] is None else where[0] + where[1]

    def set(self, v: Var) -> None:
        self.asm.code += self.writes.get(v, _DROP)

    def load(self, t: Type, offset: int = 0) -> None:
        (self.asm.f64_load if t == Real else self.asm.i32_load)(offset)

    def store(self, t: Type, offset: int = 0) -> None:
        (self.asm.f64_store if t == Real else self.asm.i32_store)(offset)

    # -- functions and blocks ---------------------------------------------------------------------
    def emit_body(self) -> None:
        body = self.f.body
        assert body is not None
        a = self.asm
        if self.spilled:
            for j, local in enumerate(self.out_ptrs):
                a.local_get(0)
                a.i32_load(8 * (len(self.f.params) + j))
                a.local_set(local)
        self.block(body, self.stored_results)
        outs = iter(self.out_ptrs)
        for r in body.results:
            if is_array(r.ty):
                a.local_get(next(outs))
                self.get(r)
                a.i32_const(size_of(r.ty))
                memory_copy(a)
        first = len(self.f.params) + len(self.out_ptrs)
        for j, r in enumerate(r for r in body.results if not is_array(r.ty)):
            if self.spilled:
                if r in self.stored_results:
                    continue
                a.local_get(0)
                self.get(r)
                _store_slot(a, r.ty, 8 * (first + j))
            else:
                self.get(r)

    def block(self, block: Block, stored: dict[Var, list[int]] | None = None) -> None:
        """The block's instructions; the `stored` results of a wide function are written to its
        buffer where they are defined."""
        # `scalar`'s first case inline: most instructions are an operation on locals
        code, reads, writes, read = self.asm.code, self.reads, self.writes, self.read
        for e in block.eqns:
            args = e.args
            x = args[0] if args else None
            ty = x.ty if x is not None else None
            op = _F64_OPCODES.get(e.prim) if ty is Real else _I32_OPCODES.get(e.prim) if ty is Int else None
            if op is not None and len(args) <= 2:
                cx = reads.get(x) if x.__class__ is Var else None  # type: ignore[call-overload]
                if len(args) == 2:
                    y = args[1]
                    cy = reads.get(y) if y.__class__ is Var else None  # type: ignore[call-overload]
                    code += (cx or read(x)) + (cy or read(y)) + op + writes.get(e.outs[0], _DROP)  # type: ignore[arg-type]
                else:
                    code += (cx or read(x)) + op + writes.get(e.outs[0], _DROP)  # type: ignore[arg-type]
            else:
                self.eqn(e)
            if stored:
                for o in e.outs:
                    for offset in stored.get(o, ()):
                        self.asm.local_get(0)
                        self.get(o)
                        _store_slot(self.asm, o.ty, offset)

    def eqn(self, e: Eqn) -> None:
        rule = _RULES.get(e.prim)
        if rule is not None:
            rule(self, e)
        else:
            self.scalar(e)

    def scalar(self, e: Eqn) -> None:
        """Scalar instructions other than a plain operation on its operands (`block` emits those)."""
        args = e.args
        ty = args[0].ty if args else None
        a = self.asm
        table = SCALAR_F64 if ty == Real else SCALAR_I32
        prim = e.prim
        if prim in _ZERO_SAFE:
            x, y = e.args
            rx = self.read(x)
            if self.loop_depth:
                # in a loop the engine's branch (it has no float conditional move) repeats and is
                # predicted well: x * y (x / y), or +0 where x == 0
                a.code += _F64_ZERO + rx + self.read(y) + _ZERO_SAFE[prim] + rx + _IF_ZERO_SELECT
            else:
                # in straight-line code, thousands of branches taken once per call are mispredicted:
                # mask the product's bits by (x != 0) instead
                a.code += rx + self.read(y) + _ZERO_SAFE[prim] + _MASK_HEAD + rx + _MASK_BY_NONZERO
        elif prim == "select" and e.outs[0].ty == Real and not self.loop_depth:
            # straight-line code: y ^ ((x ^ y) & -c) on the bits, no branch to mispredict
            c, x, y = e.args
            if self.bits_scratch is None:
                self.bits_scratch = self.temp(I64)
            scratch = self.bits_scratch
            a.code += self.read(y) + _BITS + local_tee_code(scratch) + self.read(x) + _BITS
            a.code += local_get_code(scratch) + _XOR_THEN_ZERO + self.read(c) + _BLEND_BY_CONDITION
        elif prim == "select":
            c, x, y = e.args
            self.get(x)
            self.get(y)
            self.get(c)
            a.select()
        elif prim == "not":
            self.get(e.args[0])
            a.i32_eqz()
        elif prim == "i2f":
            self.get(e.args[0])
            a.f64_convert_i32_s()
        elif ty in (Int, Bool) and prim == "neg":
            a.i32_const(0)
            self.get(e.args[0])
            a.i32_sub()
        elif ty in (Int, Bool) and prim in ("abs", "min", "max"):
            self.int_select(e)
        elif prim in table:
            for x in e.args:
                self.get(x)
            getattr(a, table[prim])()
        else:
            raise CodegenError(f"in {self.f.name}: no Wasm code for primitive {prim} on {ty!r}")
        self.set(e.outs[0])

    def int_select(self, e: Eqn) -> None:
        x = e.args[0]
        y = e.args[1] if len(e.args) > 1 else Lit(0, Int)
        if e.prim == "abs":
            self.asm.i32_const(0)
            self.get(x)
            self.asm.i32_sub()
            self.get(x)
            self.get(x)
            self.asm.i32_const(0)
            self.asm.i32_lt_s()
            self.asm.select()
            return
        self.get(x)
        self.get(y)
        self.get(x)
        self.get(y)
        (self.asm.i32_lt_s if e.prim == "min" else self.asm.i32_gt_s)()
        self.asm.select()

    # -- arrays -------------------------------------------------------------------------------------
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
                memory_copy(self.asm)
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
        memory_fill(self.asm)

    def op_call(self, e: Eqn) -> None:
        g: Function = e.params["fn"]
        if not spilled(g) and not any(map(is_array, g.result_types)):
            # the usual call (a math function, a small kernel): arguments, call, scalar results
            read = self.read
            self.asm.code += b"".join([read(x) for x in e.args])
            self.asm.call(self.index[id(g)])
            for o in reversed(e.outs):
                self.set(o)
            return
        out_addrs = [(o, self.alloc(size_of(o.ty))) for o in e.outs if is_array(o.ty)]
        outs = [o for o in e.outs if not is_array(o.ty)]
        scalars = iter(outs)
        buffer = self.alloc(8 * buffer_slots(g)) if spilled(g) else None
        resident = buffer is not None and all(o in self.buffered_results for o in outs)
        if resident:
            first = len(g.params) + len(out_addrs)
            self.in_memory.update((o, (buffer, 8 * (first + j), o.ty)) for j, o in enumerate(outs))
        emit_call(
            self.asm,
            g,
            self.index[id(g)],
            e.args,
            self.get,
            [a for _, a in out_addrs],
            buffer,
            None if resident else lambda t: self.set(next(scalars)),
            self.slot_address,
        )
        if buffer is None:
            for o in reversed(outs):
                self.set(o)
        for o, addr in out_addrs:
            if o in self.local:
                self.asm.i32_const(addr)
                self.asm.local_set(self.local[o])

    def op_for(self, e: Eqn) -> None:
        a = self.asm
        n = e.params["n"]
        body: Block = e.params["body"]
        i, *refs = body.params
        n_elems = len(body.results)
        elem_addrs = []
        for o in e.outs[:n_elems]:
            addr = self.alloc(size_of(o.ty))
            elem_addrs.append(addr)
        for r in refs:
            acc_t = r.ty.of  # type: ignore[union-attr]
            if is_array(acc_t):
                addr = self.alloc(size_of(acc_t))
                self.fill_zero(addr, size_of(acc_t))
                a.i32_const(addr)
            else:
                self.get(Lit(0.0, Real) if acc_t == Real else Lit(0, Int))
            a.local_set(self.local[r])
        a.i32_const(0)
        a.local_set(self.local[i])
        a.block()
        a.loop()
        a.local_get(self.local[i])
        a.i32_const(n)
        a.i32_ge_s()
        a.br_if(1)
        self.loop_depth += 1
        self.block(body)
        self.loop_depth -= 1
        for r, addr in zip(body.results, elem_addrs):
            es = size_of(r.ty)
            a.local_get(self.local[i])
            a.i32_const(es)
            a.i32_mul()
            self.get(r)
            if is_array(r.ty):
                a.raw(b"")
                self._copy_to_element(addr, es)
            else:
                self.store(r.ty, addr)
        a.local_get(self.local[i])
        a.i32_const(1)
        a.i32_add()
        a.local_set(self.local[i])
        a.br(0)
        a.end()
        a.end()
        for o, addr in zip(e.outs[:n_elems], elem_addrs):
            if o in self.local:
                a.i32_const(addr)
                a.local_set(self.local[o])
        for r, o in zip(refs, e.outs[n_elems:]):
            if o in self.local and self.local[o] != self.local[r]:
                a.local_get(self.local[r])
                a.local_set(self.local[o])

    def _copy_to_element(self, addr: int, es: int) -> None:
        # stack: [i*es, src]; memory.copy wants (dst, src, n)
        src = self.temp(I32)
        self.asm.local_set(src)
        self.asm.i32_const(addr)
        self.asm.i32_add()
        self.asm.local_get(src)
        self.asm.i32_const(es)
        memory_copy(self.asm)

    def op_accum(self, e: Eqn) -> None:
        ref, value, *idx = e.args
        assert isinstance(ref, Var) and isinstance(ref.ty, RefT)
        a = self.asm
        if not is_array(ref.ty.of):
            a.local_get(self.local[ref])
            self.get(value)
            a.f64_add() if ref.ty.of == Real else a.i32_add()
            a.local_set(self.local[ref])
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


def _code(*ops: str) -> bytes:
    """Instructions without immediates, encoded (pieces of the fixed sequences spliced above)."""
    a = Asm()
    for op in ops:
        getattr(a, op)()
    return bytes(a.code)


_F64_ZERO = f64_const_code(0.0)
_I64_ZERO = bytes(Asm().i64_const(0).code)
_ZERO_SAFE = {"zmul": _code("f64_mul"), "zdiv": _code("f64_div")}
_IF_ZERO_SELECT = _F64_ZERO + _code("f64_eq", "select")  # [+0, x op y, x] -> x == 0 ? +0 : x op y
_MASK_HEAD = _code("i64_reinterpret_f64") + _I64_ZERO  # [x op y] -> [bits(x op y), 0]
_MASK_BY_NONZERO = _F64_ZERO + _code(
    "f64_ne", "i64_extend_i32_u", "i64_sub", "i64_and", "f64_reinterpret_i64"
)
_BITS = _code("i64_reinterpret_f64")
_XOR_THEN_ZERO = _code("i64_xor") + _I64_ZERO
_BLEND_BY_CONDITION = _code("i64_extend_i32_u", "i64_sub", "i64_and", "i64_xor", "f64_reinterpret_i64")

_RULES = {
    "index": FunctionGen.op_index,
    "vec": FunctionGen.op_vec,
    "zeros": FunctionGen.op_zeros,
    "call": FunctionGen.op_call,
    "for": FunctionGen.op_for,
    "accum": FunctionGen.op_accum,
}
_DROP = bytes(Asm().drop().code)


def _scalar_of(t: Type) -> Scalar:
    while isinstance(t, VecT):
        t = t.elem
    assert isinstance(t, Scalar)
    return t
