"""Emitting one adcore function as one Wasm function.

Each block is walked once, from its last instruction to its first: an instruction nothing reads is
dead and emits nothing, a variable takes a local at its last read and frees it at its definition
(`locals.py`), and each instruction's code is encoded on the way; the pieces are joined in program
order at the end. Dead code removal, liveness, allocation and emission are thus one pass.

State: the assembler, the locals, and the bump pointer of the function's static frame. Every
function owns a frame for the arrays it makes (the call graph is a DAG, so no function is ever
active twice at once). A scalar accumulator of a `for` is a local; an array accumulator is a zeroed
region of the frame (`emit_memory.py`). A loop with a run-time count checks it once, before its first
iteration (`check_at_most`: a failure calls the module's check import, which raises, so no iteration
touches memory), tests it at every iteration and zeroes the elements of the iterations it skipped
(its element arrays are frame memory that earlier calls wrote).
"""

from __future__ import annotations

from collections import Counter

from ..ir import (
    LOOPS,
    Atom,
    Block,
    Eqn,
    Function,
    Lit,
    Var,
    call_graph,
    callees,
    free_vars,
    loop_carries,
    loop_count,
)
from ..types import Bool, Int, Real, RefT, Type, VecT, accumulated
from .emit_memory import MemoryRules
from .encode import (
    F64,
    I32,
    MEMORY_OPS,
    Asm,
    f64_const_code,
    i32_const_code,
    local_get_code,
    uleb,
)
from .layout import (
    CodegenError,
    _align,
    _store_slot,
    buffer_slots,
    emit_call,
    is_array,
    size_of,
    spilled,
    wasm_type,
)
from .locals import Locals

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
_OPCODES: dict[Type, dict[str, bytes]] = {
    Real: _F64_OPCODES,
    Int: _I32_OPCODES,
}  # operand type -> prim -> opcode
_NO_OPCODES: dict[str, bytes] = {}


class FunctionGen(MemoryRules):
    """Emits one function. State: the assembler, the locals (`locals.py`), and the frame's bump
    pointer.

    Each block is emitted from its last instruction to its first (`block`), in one pass that removes
    dead instructions, allocates locals and encodes the code; the pieces are joined in program order
    at the end."""

    def __init__(
        self,
        f: Function,
        index: dict[int, int],
        frame_base: int,
        bounds_checks: bool,
        checks: tuple[int | None, list[tuple[str, str, int]] | None] = (None, None),
        entry: bool = False,
    ):
        assert f.body is not None
        self.f = f
        # The module's root function, called once per `main` call and by nothing else: each of its
        # frame's arrays and results is written by one instruction only, so a loop's array keeps
        # its contents from call to call (see `op_for`'s tail).
        self.entry = entry
        self.dest: dict[Var, int] = {}  # a result written by a loop in place: its output pointer local
        self.index = index
        self.bounds_checks = bounds_checks
        # the import reporting a failed run-time check, and the module's check sites (`Plan.checks`)
        self.check_index, self.check_sites = checks
        self.asm = Asm()
        self.frame_end = frame_base
        self.loop_depth = 0
        n_out = sum(1 for t in f.result_types if t is not Real and is_array(t))
        self.spilled = spilled(f)
        # Variables that stay in memory and are loaded where used: a wide function's parameters (in
        # its buffer, in local 0) and the scalar results of a wide call made at top level (in the
        # call's buffer, which nothing overwrites before the function returns; `in_memory` gives
        # their address). Thousands of them held in locals would be spilled anyway.
        self.in_memory: dict[Var, int] = {}
        self.call_buffers: dict[int, int] = {}  # id of a wide call at top level -> its buffer
        loads: dict[Var, bytes] = {}  # the code loading each of them
        wide_calls = any(spilled(g) for g in callees(f))
        for e in f.body.eqns if wide_calls else ():
            if e.prim == "call" and spilled(e.params["fn"]):
                g: Function = e.params["fn"]
                buffer = self.call_buffers[id(e)] = self.alloc(8 * buffer_slots(g))
                scalars = [o for o in e.outs if o.ty is Real or not is_array(o.ty)]
                first = len(g.params) + len(e.outs) - len(scalars)
                start = buffer + 8 * first
                self.in_memory.update(zip(scalars, range(start, start + 8 * len(scalars), 8)))
                base = i32_const_code(buffer)
                loads.update(
                    (o, base + (_F64_LOAD if o.ty is Real else _I32_LOAD) + u)
                    for o, u in zip(scalars, _slot_offsets(first, len(scalars)))
                )
        # scalar results written where they are defined (the store instructions, after the value)
        self.stored_results: dict[Var, list[bytes]] = {}
        if self.spilled:  # local 0 is the buffer; output pointers are loaded from it
            # a result defined by the body is defined at its top level (loop bodies are scopes)
            params = set(f.params)
            scalar_results = [r for r in f.body.results if r.ty is Real or not is_array(r.ty)]
            stored = self.stored_results
            first = 8 * (len(f.params) + n_out)
            for r, offset in zip(scalar_results, range(first, first + 8 * len(scalar_results), 8)):
                if type(r) is Var and r not in params and r not in self.in_memory:
                    code = _real_store(offset) if r.ty is Real else _I32_STORE + uleb(offset)
                    if r in stored:
                        stored[r].append(code)
                    else:
                        stored[r] = [code]
            self.out_ptrs = list(range(1, 1 + n_out))
            self.n_params = 1 + n_out
        else:
            self.n_params = len(f.params) + n_out
            self.out_ptrs = list(range(len(f.params), self.n_params))
        self.locals = Locals(self.n_params, self.storage_type, loads)
        if self.spilled:  # read from the buffer where used
            self.locals.reads.update(zip(f.params, _buffer_loads(f.params)))
        else:
            for k, p in enumerate(f.params):
                self.locals.fix(p, k)
        # callee id -> its call instruction, for callees taking and returning scalars in the usual way
        self.direct_calls = {
            k: bytes(Asm().call(i).code)
            for g in call_graph(f)
            if (k := id(g)) in index
            and (i := index[k]) is not None
            and not spilled(g)
            and not any(map(is_array, g.result_types))
        }
        self.reads = self.locals.reads
        # the free Real locals, for `operand`'s common case (unless some variables live in memory)
        self.real_pool = () if self.in_memory else self.locals.real_pool

    @property
    def local_types(self) -> list[int]:
        return [I32] * len(self.out_ptrs) + self.locals.types if self.spilled else self.locals.types

    @staticmethod
    def storage_type(t: Type) -> int:
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
        return self.locals.new(wtype)

    def alloc(self, size: int) -> int:
        addr = self.frame_end
        self.frame_end += _align(size)
        return addr

    def get(self, a: Atom) -> None:
        self.asm.code += self.read(a)

    def read(self, a: Atom) -> bytes:
        """The code pushing a's value."""
        if type(a) is Lit:  # tested first: a literal would hash as a dataclass, slowly
            return f64_const_code(float(a.val)) if a.ty is Real else i32_const_code(int(a.val))
        return self.reads[a]

    def slot_address(self, a: Atom) -> int | None:
        """The static address of the 8-byte slot holding a, if a lives in a call's buffer."""
        return self.in_memory.get(a) if type(a) is Var else None

    def set(self, v: Var) -> None:
        self.asm.code += self.locals.write(v)

    # -- functions and blocks ---------------------------------------------------------------------
    def emit_body(self) -> None:
        body = self.f.body
        assert body is not None
        first = len(self.f.params) + len(self.out_ptrs)
        arrays = [(k, r) for k, r in enumerate(body.results) if r.ty is not Real and is_array(r.ty)]
        stored, reads = self.stored_results, self.reads
        # scalar results not written where they are defined: read after the body
        tail = [(j, r) for j, r in enumerate(r for r in body.results if r.ty is Real or not is_array(r.ty))]
        tail = [(j, r) for j, r in tail if r not in stored]
        for _, r in arrays + tail:
            if type(r) is Var and r not in reads:
                self.locals.take(r)
        if self.entry:
            results = {r: ptr for ptr, (_, r) in zip(self.out_ptrs, arrays) if type(r) is Var}
            self.dest = _loops_in_place(body, results)
        code = self.block(body, stored or None)
        self.asm = a = Asm()
        if self.spilled:
            for j, local in enumerate(self.out_ptrs):
                a.local_get(0)
                a.i32_load(8 * (len(self.f.params) + j))
                a.local_set(local)
        a.code += code
        for local, (_, r) in zip(self.out_ptrs, arrays):
            if r in self.dest:
                continue  # written there by its loop
            a.local_get(local)
            self.get(r)
            a.i32_const(size_of(r.ty))
            a.memory_copy()
        for j, r in tail:
            if self.spilled:
                a.local_get(0)
                self.get(r)
                _store_slot(a, r.ty, 8 * (first + j))
            else:
                self.get(r)

    def block(self, block: Block, stored: dict[Var, list[bytes]] | None = None) -> bytes:
        """The block's code (its results must have their locals already). Walks the instructions
        last to first, and for each:

        1. its results (`result_code`): if nothing after it reads them it is dead and emits nothing;
           otherwise their lifetimes begin here, so their locals are free before it;
        2. its operands (`operand`): a variable met for the first time is read here for the last
           time, and takes a local;
        3. its code: a plain operation is its operands, one opcode and the write of its result;
           others have a rule (`eqn`).

        Code is collected in pieces, each instruction's last piece first, and joined reversed. The
        `stored` results of a wide function are written to its buffer where they are defined."""
        pieces: list[bytes] = []  # backwards; each instruction's pieces backwards too
        operand, reads_get, slots_get = self.operand, self.reads.get, self.locals.slots.get
        direct = self.direct_calls
        straight = not self.loop_depth  # straight-line code, not a loop body
        for e in reversed(block.eqns):
            prim, args = e.prim, e.args
            if prim == "for" or prim == "fold":
                if stored is not None and not stored.keys().isdisjoint(e.outs):
                    # a wide function's result made by a loop: stored right after it
                    kept = [o for o in e.outs if o in stored]
                    for o in kept:
                        if o not in self.reads:
                            self.locals.take(o)
                    pieces.append(b"".join([self.stores(o, stored) for o in kept]))
                pieces.append(self.op_for(e))
                continue
            outs = e.outs
            if len(outs) == 1 and (stored is None or outs[0] not in stored):  # most: one result, in a local
                write = reads_get(outs[0])
                if write is None:
                    continue  # dead: nothing after it reads its result
                slot = slots_get(write)
                if slot is not None:  # its lifetime begins here: its local is free before
                    slot[1].append(write)
                    write = slot[0]
                head = b""
            else:
                result = self.result_code(e, stored, pieces)
                if result is None:
                    continue  # dead
                write, head = result
            if len(args) == 2:  # spelled out for the commonest arities: no list to build
                x, y = args
                # a variable read later too has its local already (`operand` gives the others one)
                cx = type(x) is Var and reads_get(x) or operand(x)
                cy = type(y) is Var and reads_get(y) or operand(y)
                op = (_F64_OPCODES if x.ty is Real else _opcodes(x.ty)).get(prim)  # Real: no call
                if op is not None:
                    pieces += (write, op, cy, cx, head)
                    continue
                guarded = _ZERO_GUARDED.get(prim) if straight else None
                if guarded is not None:
                    # x * y (x / y), or +0 where x == 0, chosen on the bits by an integer select: the
                    # engine has no float conditional move, and in straight-line code thousands of
                    # branches taken once per call would be mispredicted
                    pieces += (write, _IF_NONZERO, cx, guarded, cy, cx)
                    continue
            elif len(args) == 1:
                x = args[0]
                cx = type(x) is Var and reads_get(x) or operand(x)
                op = (_F64_OPCODES if x.ty is Real else _opcodes(x.ty)).get(prim)
                if op is not None:
                    pieces += (write, op, cx, head)
                    continue
            else:  # read by the instruction's rule (below); here, the last reads take their locals
                for x in args:
                    if type(x) is Var and reads_get(x) is None:
                        operand(x)
            assert not head, "a result written to the buffer as it is made needs a plain operation"
            call = direct.get(id(e.params["fn"])) if prim == "call" else None
            if call is not None:
                # the usual call (a math function, a small kernel): arguments, call, scalar results
                read, write_local = self.read, self.locals.write
                pieces.append(
                    b"".join([read(x) for x in args]) + call + b"".join(map(write_local, e.outs[::-1]))
                )
            else:
                self.asm = Asm()
                self.eqn(e)
                pieces.append(bytes(self.asm.code))
        pieces.reverse()
        return b"".join(pieces)

    def operand(self, x: Atom) -> bytes:
        """The code reading operand x here. A variable not read after this point is read here for
        the last time: it takes a free local (its lifetime ends here, walking backwards)."""
        if type(x) is Lit:
            return f64_const_code(float(x.val)) if x.ty is Real else i32_const_code(int(x.val))
        code = self.reads.get(x)
        if code is None:
            pool = self.real_pool
            if pool and x.ty is Real:  # take()'s common case: a Real, a free local, none in memory
                code = self.reads[x] = pool.pop()
            else:
                code = self.locals.take(x)
        return code

    def result_code(
        self, e: Eqn, stored: dict[Var, list[bytes]] | None, pieces: list[bytes]
    ) -> tuple[bytes, bytes] | None:
        """None if e is dead (nothing later reads its results); else (the code writing its one
        result, the code before its operands). The result's lifetime begins here, so its local is
        free before e. A result a wide function returns is also stored to its buffer: as it is
        made when e is a plain operation (the buffer, `local.get 0`, pushed before the operands,
        the store as the write), else by stores appended after e. Instructions with several
        results or none write them in their rule; their stores are appended here."""
        outs = e.outs
        if len(outs) != 1:
            if e.prim == "accum":
                return b"", b""
            after = self.release_results(outs, stored)
            if after is None:
                return None
            if after:
                pieces.append(after)
            return b"", b""
        o = outs[0]
        write = self.reads.get(o)
        if stored is not None and o in stored:
            if _plain(e.prim, e.args) and len(stored[o]) == 1:
                if write is None:
                    return stored[o][0], _LOCAL_0
                slot = self.locals.slots[write]
                slot[1].append(write)
                return slot[2] + stored[o][0], _LOCAL_0  # local.tee, then the store
            if write is None:
                write = self.locals.take(o)  # read by the store right after the definition
            pieces.append(self.stores(o, stored))
        elif write is None:
            return None
        pooled = self.locals.slots.get(write)
        if pooled is not None:
            pooled[1].append(write)
            write = pooled[0]
        return write, b""

    def release_results(self, outs: tuple[Var, ...], stored: dict[Var, list[bytes]] | None) -> bytes | None:
        """None if an instruction with several results is dead; else its results' locals are
        released, and the stores of its `stored` results (which follow it) are returned."""
        if not stored:  # (a wide call's thousands of results: the loops run in C)
            kept = list(filter(self.reads.__contains__, outs))
            codes = list(map(self.reads.__getitem__, kept))
            for code, slot in zip(codes, map(self.locals.slots.get, codes)):
                if slot is not None:
                    slot[1].append(code)
            return b"" if kept else None
        kept = [o for o in outs if o in self.reads or o in stored]
        if not kept:
            return None
        for o in kept:
            if o not in self.reads:
                self.locals.take(o)  # read by the store right after the definition
        for o in kept:  # (after every result has its local: results never share one)
            self.locals.release(o)
        return b"".join([self.stores(o, stored) for o in kept if o in stored])

    def stores(self, o: Var, stored: dict[Var, list[bytes]]) -> bytes:
        """The stores of a wide function's result o into its buffer, right after its definition."""
        return b"".join([_LOCAL_0 + self.reads[o] + store for store in stored[o]])

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
        if prim in _ZERO_SAFE:  # in a loop (`block` emits straight-line code's on the bits)
            # the engine's branch (it has no float conditional move) repeats and is predicted well:
            # x * y (x / y), or +0 where x == 0
            x, y = e.args
            rx = self.read(x)
            a.code += _F64_ZERO + rx + self.read(y) + _ZERO_SAFE[prim] + rx + _IF_ZERO_SELECT
        elif prim == "select" and e.outs[0].ty == Real and not self.loop_depth:
            # straight-line code: on the bits, by an integer select (a branch would be mispredicted)
            c, x, y = e.args
            a.code += self.read(x) + _BITS + self.read(y) + _BITS + self.read(c) + _SELECT_BITS
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
        elif prim == "floor_int":
            self.get(e.args[0])
            a.f64_floor()
            a.i32_trunc_sat_f64_s()
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
        outs = [o for o in e.outs if o.ty is Real or not is_array(o.ty)]
        out_addrs = [(o, self.alloc(size_of(o.ty))) for o in e.outs if o.ty is not Real and is_array(o.ty)]
        scalars = iter(outs)
        resident = id(e) in self.call_buffers  # its scalar results stay in its buffer
        buffer = (
            self.call_buffers[id(e)] if resident else self.alloc(8 * buffer_slots(g)) if spilled(g) else None
        )
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
            if o in self.reads:
                self.asm.i32_const(addr)
                self.set(o)

    def op_for(self, e: Eqn) -> bytes:
        """A loop's code (a `for`, or a `fold`: a `for` with carries). Its accumulators and carries
        are read when its outputs are written, so they take locals before the outputs release
        theirs; what the body reads from outside, the count and the index live across all
        iterations, so they take locals before the body is walked; the initial carries are read
        before the loop, all of them before any carry is set (through the stack), so they may share
        locals with the carries.

        A scalar carry is a local; an array carry points to one of two frame buffers, the one its
        last value was copied into: an iteration copies each next array into the buffer its carry
        does not point to, so it never overwrites what the iteration reads (arrays swapped between
        carries included). Next values are pushed, then all carries set, so carries may swap."""
        n = e.params["n"]
        body: Block = e.params["body"]
        c = loop_carries(e)
        i, carries, refs = body.params[0], body.params[1 : 1 + c], body.params[1 + c :]
        n_results = len(body.results)
        count = loop_count(e)
        locals_ = self.locals
        for r in (*carries, *refs):
            locals_.take(r)
        for o in e.outs:
            locals_.release(o)
        for v in free_vars(body):
            if v not in self.reads:
                locals_.take(v)
        if type(count) is Var and count not in self.reads:
            locals_.take(count)  # read at every iteration's test
        locals_.take(i)
        for res in body.results:  # read after each iteration
            if type(res) is Var and res not in self.reads:
                locals_.take(res)
        self.loop_depth += 1
        body_code = self.block(body)
        self.loop_depth -= 1
        locals_.release(i)
        for r in (*carries, *refs):
            locals_.release(r)
        for x in e.args[:c]:  # the initial carries, read before the loop
            if type(x) is Var and x not in self.reads:
                self.operand(x)
        reads = self.reads
        self.asm = a = Asm()
        dest = [self.dest.get(o) if type(o) is Var else None for o in e.outs[c:n_results]]
        elem_addrs = [
            0 if d is not None else self.alloc(size_of(o.ty)) for o, d in zip(e.outs[c:n_results], dest)
        ]
        buffers = {
            j: (self.alloc(size_of(p.ty)), self.alloc(size_of(p.ty)))
            for j, p in enumerate(carries)
            if is_array(p.ty)
        }
        for x in e.args[:c]:
            self.get(x)
        for p in reversed(carries):
            self.set(p)
        for r in refs:
            acc_t = accumulated(r.ty)
            if is_array(acc_t):
                addr = self.alloc(size_of(acc_t))
                self.fill_zero(addr, size_of(acc_t))
                a.i32_const(addr)
            else:
                self.get(Lit(0.0, Real) if acc_t == Real else Lit(0, Int))
            self.set(r)
        if count is not None:
            self.check_at_most(count, n, "count")
        # in the entry function, each result's count when last written (`zero_tail_since`), raised
        # to max(last, count) before the loop writes
        lasts = [self.alloc(8) for _ in dest] if self.entry and count is not None else []
        for last in lasts:
            assert count is not None
            a.i32_const(last)
            self.get(count)
            a.i32_const(last)
            a.i32_load(0)
            self.get(count)
            a.i32_const(last)
            a.i32_load(0)
            a.i32_gt_s()
            a.select()
            a.i32_store(0)
        a.i32_const(0)
        self.set(i)
        a.block()
        a.loop()
        self.get(i)
        self.get(Lit(n, Int) if count is None else count)
        a.i32_ge_s()
        a.br_if(1)
        a.code += body_code
        for res, addr, d in zip(body.results[c:], elem_addrs, dest):
            es = size_of(res.ty)
            if d is not None:
                a.local_get(d)
            self.get(i)
            a.i32_const(es)
            a.i32_mul()
            if d is not None:
                a.i32_add()
            self.get(res)
            if is_array(res.ty):
                self._copy_to_element(addr, es)
            else:
                self.store(res.ty, addr)
        targets = {}
        for j, (first, second) in buffers.items():  # the next arrays, into the other buffer
            targets[j] = t = self.temp(I32)
            a.i32_const(second)
            a.i32_const(first)
            self.get(carries[j])
            a.i32_const(first)
            a.i32_eq()
            a.select()
            a.local_tee(t)
            self.get(body.results[j])
            a.i32_const(size_of(carries[j].ty))
            a.memory_copy()
        for j, res in enumerate(body.results[:c]):
            if j in targets:
                a.local_get(targets[j])
            else:
                self.get(res)
        for p in reversed(carries):
            self.set(p)
        self.get(i)
        a.i32_const(1)
        a.i32_add()
        self.set(i)
        a.br(0)
        a.end()
        a.end()
        if count is not None:  # the elements of the iterations that did not run are zero
            for k, (res, addr, d) in enumerate(zip(body.results[c:], elem_addrs, dest)):
                if lasts:
                    self.zero_tail_since(addr, d, size_of(res.ty), count, lasts[k])
                else:
                    self.zero_tail(addr, size_of(res.ty), count, n)
        for o, p in zip(e.outs[:c], carries):
            if o in reads:
                a.code += reads[p]
                self.set(o)
        for o, addr, d in zip(e.outs[c:n_results], elem_addrs, dest):
            if o in reads:
                if d is not None:
                    a.local_get(d)
                else:
                    a.i32_const(addr)
                self.set(o)
        for r, o in zip(refs, e.outs[n_results:]):
            if o in reads:
                a.code += reads[r]
                self.set(o)
        return bytes(a.code)

    def check_at_most(self, value: Atom, bound: int, kind: str) -> None:
        """Stop with the error of `kind` (`errors.RANGE_MESSAGES`) unless 0 <= value <= bound: the
        check import raises it (one unsigned comparison; the call never returns)."""
        assert self.check_index is not None and self.check_sites is not None, "no check import"
        a = self.asm
        self.get(value)
        a.i32_const(bound)
        a.i32_gt_u()
        a.if_()
        a.i32_const(len(self.check_sites))
        self.get(value)
        a.call(self.check_index)
        a.unreachable()
        a.end()
        self.check_sites.append((kind, self.f.name, bound))

    def op_checked(self, e: Eqn) -> None:
        (x,) = e.args
        self.check_at_most(x, e.params["n"] - 1, e.params["kind"])
        self.get(x)
        self.set(e.outs[0])

    def zero_tail_since(self, addr: int, dest: int | None, elem_size: int, count: Atom, last: int) -> None:
        """`zero_tail` in the entry function, whose arrays keep their memory from call to call
        (`entry`): elements from the `last` count on are zero already, so only count..last-1 are
        zeroed, and the count is kept for the next call in the frame's slot `last` (zero in a fresh
        instance, whose memory is zero). Before the loop runs, `last` is raised to the count, so a
        call stopped inside the loop (a time limit) leaves no element beyond `last` written. A
        layout lists few of a table's rows at a time: zeroing the whole tail would cost a pass over
        the table at every call."""
        a = self.asm

        def base() -> None:
            if dest is None:
                a.i32_const(addr)
            else:
                a.local_get(dest)

        a.i32_const(last)
        a.i32_load(0)
        self.get(count)
        a.i32_gt_s()
        a.if_()
        base()
        self.get(count)
        a.i32_const(elem_size)
        a.i32_mul()
        a.i32_add()
        a.i32_const(0)
        a.i32_const(last)
        a.i32_load(0)
        self.get(count)
        a.i32_sub()
        a.i32_const(elem_size)
        a.i32_mul()
        a.memory_fill()
        a.end()
        a.i32_const(last)
        self.get(count)
        a.i32_store(0)

    def zero_tail(self, addr: int, elem_size: int, count: Atom, n: int) -> None:
        """Zero elements count..n-1 of the array of n elements of `elem_size` bytes at addr."""
        a = self.asm
        self.get(count)
        a.i32_const(elem_size)
        a.i32_mul()
        a.i32_const(addr)
        a.i32_add()
        a.i32_const(0)
        a.i32_const(n)
        self.get(count)
        a.i32_sub()
        a.i32_const(elem_size)
        a.i32_mul()
        a.memory_fill()


def _loops_in_place(body: Block, out_ptrs: dict[Var, int]) -> dict[Var, int]:
    """The entry function's array results that a top-level loop with a run-time count defines
    element by element (scalar elements), each returned once: the loop writes them at their output
    pointer, with no copy at the end (`op_for`)."""
    returned = Counter(r for r in body.results if type(r) is Var)
    found = {}
    for e in body.eqns:
        if e.prim != "for" or loop_count(e) is None:
            continue
        for o in e.outs[loop_carries(e) : len(e.params["body"].results)]:
            ty = o.ty
            if o in out_ptrs and returned[o] == 1 and isinstance(ty, VecT) and not is_array(ty.elem):
                found[o] = out_ptrs[o]
    return found


def runtime_checked(f: Function) -> bool:
    """Whether f's code checks a value at run time through the check import (a loop's count, a
    `checked` index)."""
    found = f.cache.get("runtime_checked")
    if found is None:
        found = False
        blocks = [f.body] if f.body is not None else []
        while blocks and not found:
            for e in blocks.pop().eqns:
                if e.prim in LOOPS:
                    found = found or loop_count(e) is not None
                    blocks.append(e.params["body"])
                elif e.prim == "checked":
                    found = True
        f.cache["runtime_checked"] = found
    return found


def _opcodes(t: Type) -> dict[str, bytes]:
    """The primitives that are one opcode on operands of type t (Real tested first: a type hashes
    slowly, and nearly every operand is a Real)."""
    return _F64_OPCODES if t is Real else _OPCODES.get(t, _NO_OPCODES)


def _plain(prim: str, args: tuple[Atom, ...]) -> bool:
    """Whether `block` emits this instruction as one opcode after its operands."""
    return 1 <= len(args) <= 2 and prim in _OPCODES.get(args[0].ty, _NO_OPCODES)


def _slot_offsets(first: int, n: int) -> list[bytes]:
    """The encoded byte offsets of n consecutive 8-byte slots from slot `first` on (the codes of the
    first slots are made once per process: wide functions load and store thousands of them)."""
    while len(_SLOT_OFFSETS) < first + n:
        _SLOT_OFFSETS.append(uleb(8 * len(_SLOT_OFFSETS)))
    return _SLOT_OFFSETS[first : first + n]


def _slot_codes(cache: list[bytes], prefix: bytes, n: int) -> list[bytes]:
    """`cache`, made to hold at least n codes: prefix + the encoded offset of slot k, for each k."""
    have = len(cache)
    if have < n:
        cache.extend(prefix + u for u in _slot_offsets(have, n - have))
    return cache


def _buffer_loads(params: tuple[Var, ...]) -> list[bytes]:
    """The code loading each parameter from the buffer in local 0 (an array as its address)."""
    codes = _slot_codes(_REAL_LOADS, _LOCAL_0 + _F64_LOAD, len(params))[: len(params)]
    for k, p in enumerate(params):
        if p.ty is not Real:
            codes[k] = _LOCAL_0 + _I32_LOAD + uleb(8 * k)
    return codes


def _real_store(offset: int) -> bytes:
    """f64.store at an offset that is a multiple of 8."""
    k = offset >> 3
    return _slot_codes(_REAL_STORES, _F64_STORE, k + 1)[k]


def _memarg_prefix(name: str) -> bytes:
    """A load or store with its natural alignment, before its offset (which follows, encoded)."""
    opcode, align = MEMORY_OPS[name]
    return bytes([opcode]) + uleb(align)


_F64_LOAD, _I32_LOAD = _memarg_prefix("f64_load"), _memarg_prefix("i32_load")
_F64_STORE, _I32_STORE = _memarg_prefix("f64_store"), _memarg_prefix("i32_store")
_SLOT_OFFSETS: list[bytes] = []
_REAL_LOADS: list[bytes] = []  # from the buffer in local 0
_REAL_STORES: list[bytes] = []


def _code(*ops: str) -> bytes:
    """Instructions without immediates, encoded (pieces of the fixed sequences spliced above)."""
    a = Asm()
    for op in ops:
        getattr(a, op)()
    return bytes(a.code)


_F64_ZERO = f64_const_code(0.0)
_ZERO_SAFE = {"zmul": _code("f64_mul"), "zdiv": _code("f64_div")}
_IF_ZERO_SELECT = _F64_ZERO + _code("f64_eq", "select")  # [+0, x op y, x] -> x == 0 ? +0 : x op y
_BITS = _code("i64_reinterpret_f64")
_ZERO_GUARDED = {  # [x, y] -> [bits(x op y), 0]; then x, then _IF_NONZERO
    prim: op + _BITS + bytes(Asm().i64_const(0).code) for prim, op in _ZERO_SAFE.items()
}
_IF_NONZERO = _F64_ZERO + _code("f64_ne", "select", "f64_reinterpret_i64")
_SELECT_BITS = _code("select", "f64_reinterpret_i64")  # [bits(x), bits(y), c] -> c ? x : y

_RULES = {
    "index": FunctionGen.op_index,
    "vec": FunctionGen.op_vec,
    "zeros": FunctionGen.op_zeros,
    "call": FunctionGen.op_call,
    "for": FunctionGen.op_for,
    "fold": FunctionGen.op_for,
    "checked": FunctionGen.op_checked,
    "accum": FunctionGen.op_accum,
}
_LOCAL_0 = local_get_code(0)
