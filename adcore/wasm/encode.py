"""A small WebAssembly binary encoder: LEB128, sections, an instruction assembler, a module builder.

Only what adcore needs (MVP + multi-value block types), written from the spec's binary format.
A module is built as: ``ModuleBuilder`` -> ``add_import`` / ``add_function`` / ``add_memory`` / ... ->
``to_bytes()``.  Function bodies are produced by ``Asm``, which appends opcodes and immediates.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import groupby

# --- scalar encodings -------------------------------------------------------------------------------

I32, I64, F32, F64 = 0x7F, 0x7E, 0x7D, 0x7C
VALTYPE_NAMES = {I32: "i32", I64: "i64", F32: "f32", F64: "f64"}
EMPTY_BLOCK = 0x40


def uleb(n: int) -> bytes:
    """Unsigned LEB128: 7 bits per byte, low bits first, high bit = 'more follows'."""
    if 0 <= n < _SMALL:
        return _ULEB[n]
    if _SMALL <= n < 1 << 21:  # three bytes: static addresses and offsets in a large frame
        return bytes((n & 0x7F | 0x80, n >> 7 & 0x7F | 0x80, n >> 14))
    return _uleb(n)


def _uleb(n: int) -> bytes:
    if n < 0:
        raise ValueError(f"uleb: negative value {n}")
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


_SMALL = 1 << 14  # local and function indices, offsets: encoded once, looked up after
_ULEB = [_uleb(n) for n in range(_SMALL)]


def sleb(n: int) -> bytes:
    """Signed LEB128: stop once the remaining bits are all copies of the sign bit just written."""
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        done = (n == 0 and not byte & 0x40) or (n == -1 and byte & 0x40)
        out.append(byte | (0 if done else 0x80))
        if done:
            return bytes(out)


def f64_bytes(x: float) -> bytes:
    return struct.pack("<d", x)


def name_bytes(s: str) -> bytes:
    raw = s.encode("utf-8")
    return uleb(len(raw)) + raw


def vec(items: Sequence[bytes]) -> bytes:
    return uleb(len(items)) + b"".join(items)


def functype(params: Sequence[int], results: Sequence[int]) -> bytes:
    return b"\x60" + vec([bytes([t]) for t in params]) + vec([bytes([t]) for t in results])


def limits(minimum: int, maximum: int | None) -> bytes:
    return b"\x00" + uleb(minimum) if maximum is None else b"\x01" + uleb(minimum) + uleb(maximum)


def section(section_id: int, payload: bytes) -> bytes:
    return bytes([section_id]) + uleb(len(payload)) + payload


def locals_decl(local_types: Sequence[int]) -> bytes:
    """Run-length encode the declared (non-parameter) locals: [(count, type), ...]."""
    return vec([uleb(sum(1 for _ in run)) + bytes([t]) for t, run in groupby(local_types)])


# --- opcodes ----------------------------------------------------------------------------------------

# Instructions without immediates, by their text-format name with '.' replaced by '_'.
SIMPLE_OPS: dict[str, int] = {
    "unreachable": 0x00, "nop": 0x01, "else_": 0x05, "end": 0x0B, "return_": 0x0F,
    "drop": 0x1A, "select": 0x1B,
    "i32_eqz": 0x45, "i32_eq": 0x46, "i32_ne": 0x47, "i32_lt_s": 0x48, "i32_lt_u": 0x49,
    "i32_gt_s": 0x4A, "i32_gt_u": 0x4B, "i32_le_s": 0x4C, "i32_le_u": 0x4D, "i32_ge_s": 0x4E,
    "i32_ge_u": 0x4F,
    "i64_eqz": 0x50, "i64_eq": 0x51, "i64_ne": 0x52, "i64_lt_s": 0x53, "i64_lt_u": 0x54,
    "i64_gt_s": 0x55, "i64_gt_u": 0x56, "i64_le_s": 0x57, "i64_le_u": 0x58, "i64_ge_s": 0x59,
    "i64_ge_u": 0x5A,
    "f64_eq": 0x61, "f64_ne": 0x62, "f64_lt": 0x63, "f64_gt": 0x64, "f64_le": 0x65, "f64_ge": 0x66,
    "i32_clz": 0x67, "i32_ctz": 0x68, "i32_popcnt": 0x69, "i32_add": 0x6A, "i32_sub": 0x6B,
    "i32_mul": 0x6C, "i32_div_s": 0x6D, "i32_div_u": 0x6E, "i32_rem_s": 0x6F, "i32_rem_u": 0x70,
    "i32_and": 0x71, "i32_or": 0x72, "i32_xor": 0x73, "i32_shl": 0x74, "i32_shr_s": 0x75,
    "i32_shr_u": 0x76, "i32_rotl": 0x77, "i32_rotr": 0x78,
    "i64_clz": 0x79, "i64_ctz": 0x7A, "i64_popcnt": 0x7B, "i64_add": 0x7C, "i64_sub": 0x7D,
    "i64_mul": 0x7E, "i64_div_s": 0x7F, "i64_div_u": 0x80, "i64_rem_s": 0x81, "i64_rem_u": 0x82,
    "i64_and": 0x83, "i64_or": 0x84, "i64_xor": 0x85, "i64_shl": 0x86, "i64_shr_s": 0x87,
    "i64_shr_u": 0x88, "i64_rotl": 0x89, "i64_rotr": 0x8A,
    "f64_abs": 0x99, "f64_neg": 0x9A, "f64_ceil": 0x9B, "f64_floor": 0x9C, "f64_trunc": 0x9D,
    "f64_nearest": 0x9E, "f64_sqrt": 0x9F, "f64_add": 0xA0, "f64_sub": 0xA1, "f64_mul": 0xA2,
    "f64_div": 0xA3, "f64_min": 0xA4, "f64_max": 0xA5, "f64_copysign": 0xA6,
    "i32_wrap_i64": 0xA7, "i32_trunc_f64_s": 0xAA, "i32_trunc_f64_u": 0xAB,
    "i64_extend_i32_s": 0xAC, "i64_extend_i32_u": 0xAD, "i64_trunc_f64_s": 0xB0,
    "i64_trunc_f64_u": 0xB1, "f64_convert_i32_s": 0xB7, "f64_convert_i32_u": 0xB8,
    "f64_convert_i64_s": 0xB9, "f64_convert_i64_u": 0xBA,
    "i64_reinterpret_f64": 0xBD, "f64_reinterpret_i64": 0xBF,
    "memory_size": 0x3F, "memory_grow": 0x40,
}  # fmt: skip

# Loads/stores take a memarg (alignment exponent, offset); value = (opcode, natural alignment exponent).
MEMORY_OPS: dict[str, tuple[int, int]] = {
    "i32_load": (0x28, 2), "i64_load": (0x29, 3), "f64_load": (0x2B, 3),
    "i32_load8_u": (0x2D, 0), "i32_store": (0x36, 2), "i64_store": (0x37, 3), "f64_store": (0x39, 3),
    "i32_store8": (0x3A, 0),
}  # fmt: skip


# Bulk memory instructions: the 0xFC prefix, their sub-opcode, then their memory indices (memory 0).
BULK_MEMORY_OPS: dict[str, bytes] = {
    "memory_copy": bytes([0xFC, 10, 0, 0]),
    "memory_fill": bytes([0xFC, 11, 0]),
    "i32_trunc_sat_f64_s": bytes([0xFC, 2]),  # (not a memory instruction: the same prefix)
}


class Asm:
    """Appends instructions to a function body.

    Every instruction is a method named like its text form with '.' -> '_' (``a.f64_add()``);
    keywords get a trailing underscore (``if_``, ``else_``, ``return_``).  Methods return ``self``
    so short sequences can be chained.
    """

    def __init__(self) -> None:
        self.code = bytearray()

    def raw(self, data: bytes | bytearray) -> Asm:
        self.code += data
        return self

    def __getattr__(self, name: str) -> Callable[..., Asm]:
        raise AttributeError(f"Asm has no instruction {name!r}")

    # Instructions with immediates.
    def i32_const(self, v: int) -> Asm:
        self.code += i32_const_code(v)
        return self

    def i64_const(self, v: int) -> Asm:
        self.code += _i64_const_code(v)
        return self

    def f64_const(self, v: float) -> Asm:
        self.code += f64_const_code(v)
        return self

    def local_get(self, i: int) -> Asm:
        self.code += _LOCAL_GET[i] if i < _SMALL else b"\x20" + uleb(i)
        return self

    def local_set(self, i: int) -> Asm:
        self.code += _LOCAL_SET[i] if i < _SMALL else b"\x21" + uleb(i)
        return self

    def local_tee(self, i: int) -> Asm:
        return self.raw(b"\x22" + uleb(i))

    def global_get(self, i: int) -> Asm:
        return self.raw(b"\x23" + uleb(i))

    def global_set(self, i: int) -> Asm:
        return self.raw(b"\x24" + uleb(i))

    def call(self, func_index: int) -> Asm:
        return self.raw(b"\x10" + uleb(func_index))

    def block(self, result: int = EMPTY_BLOCK) -> Asm:
        return self.raw(bytes([0x02, result]))

    def loop(self, result: int = EMPTY_BLOCK) -> Asm:
        return self.raw(bytes([0x03, result]))

    def if_(self, result: int = EMPTY_BLOCK) -> Asm:
        return self.raw(bytes([0x04, result]))

    def br(self, depth: int) -> Asm:
        return self.raw(b"\x0c" + uleb(depth))

    def br_if(self, depth: int) -> Asm:
        return self.raw(b"\x0d" + uleb(depth))

    def br_table(self, depths: Sequence[int], default: int) -> Asm:
        return self.raw(b"\x0e" + vec([uleb(d) for d in depths]) + uleb(default))


def _simple(opcode: int, *immediates: int) -> Callable[[Asm], Asm]:
    code = bytes([opcode, *immediates])

    def emit(self: Asm) -> Asm:
        self.code += code
        return self

    return emit


def _memory(opcode: int, natural: int) -> Callable[..., Asm]:
    known: dict[int, bytes] = {}  # by offset: static addresses, few, each used many times

    def emit(self: Asm, offset: int = 0, align: int = natural) -> Asm:
        code = known.get(offset) if align == natural else None
        if code is None:
            code = bytes([opcode]) + uleb(align) + uleb(offset)
            if align == natural:
                if len(known) >= 1 << 16:
                    known.clear()
                known[offset] = code
        self.code += code
        return self

    return emit


# one method per opcode, made once (the assembler is called for every instruction emitted)
for _name, _opcode in SIMPLE_OPS.items():
    setattr(Asm, _name, _simple(_opcode, 0) if _name in ("memory_size", "memory_grow") else _simple(_opcode))
for _name, (_opcode, _align) in MEMORY_OPS.items():
    setattr(Asm, _name, _memory(_opcode, _align))
for _name, _code in BULK_MEMORY_OPS.items():
    setattr(Asm, _name, _simple(*_code))
_LOCAL_GET = [b"\x20" + b for b in _ULEB]
_LOCAL_SET = [b"\x21" + b for b in _ULEB]


# Encoded instructions for code generators that splice bytes (the same few thousand constants and
# locals recur throughout a module: each is encoded once).
def local_get_code(i: int) -> bytes:
    return _LOCAL_GET[i] if i < _SMALL else b"\x20" + uleb(i)


def local_set_code(i: int) -> bytes:
    return _LOCAL_SET[i] if i < _SMALL else b"\x21" + uleb(i)


def local_tee_code(i: int) -> bytes:
    return b"\x22" + uleb(i)


@functools.lru_cache(maxsize=1 << 16)
def i32_const_code(v: int) -> bytes:
    return b"\x41" + sleb(_wrap_signed(v, 32))


@functools.lru_cache(maxsize=1 << 10)
def _i64_const_code(v: int) -> bytes:
    return b"\x42" + sleb(_wrap_signed(v, 64))


def f64_const_code(v: float) -> bytes:
    return b"\x44" + _pack_f64(v)


_pack_f64 = struct.Struct("<d").pack


def _wrap_signed(v: int, bits: int) -> int:
    """Accept both signed and unsigned spellings of a constant (0xFFFFFFFF == -1 as i32)."""
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


# --- module builder ---------------------------------------------------------------------------------


@dataclass
class Function:
    name: str
    type_index: int
    local_types: list[int]
    body: bytes | None  # None until defined


@dataclass
class ModuleBuilder:
    """Collects the parts of a module; function indices count imports first, as the spec says."""

    types: list[bytes] = field(default_factory=list)
    imports: list[bytes] = field(default_factory=list)
    functions: list[Function] = field(default_factory=list)
    memories: list[bytes] = field(default_factory=list)
    globals: list[bytes] = field(default_factory=list)
    exports: list[bytes] = field(default_factory=list)
    data: list[bytes] = field(default_factory=list)
    export_names: set[str] = field(default_factory=set)
    num_imported_funcs: int = 0

    def type_index(self, params: Sequence[int], results: Sequence[int]) -> int:
        encoded = functype(params, results)
        if encoded not in self.types:
            self.types.append(encoded)
        return self.types.index(encoded)

    def add_import(self, module: str, name: str, params: Sequence[int], results: Sequence[int]) -> int:
        if self.functions:
            raise ValueError("add_import: imports must be added before any function is defined")
        desc = b"\x00" + uleb(self.type_index(params, results))
        self.imports.append(name_bytes(module) + name_bytes(name) + desc)
        self.num_imported_funcs += 1
        return self.num_imported_funcs - 1

    def reserve_function(self, name: str, params: Sequence[int], results: Sequence[int]) -> int:
        """Allocate an index now (so bodies can call each other) and fill the body later."""
        self.functions.append(Function(name, self.type_index(params, results), [], None))
        return self.num_imported_funcs + len(self.functions) - 1

    def define_function(self, index: int, local_types: Sequence[int], body: Asm | bytes) -> None:
        fn = self.functions[index - self.num_imported_funcs]
        fn.local_types = list(local_types)
        fn.body = bytes(body.code if isinstance(body, Asm) else body)

    def add_function(
        self,
        name: str,
        params: Sequence[int],
        results: Sequence[int],
        local_types: Sequence[int],
        body: Asm | bytes,
        export: bool = False,
    ) -> int:
        index = self.reserve_function(name, params, results)
        self.define_function(index, local_types, body)
        if export:
            self.export_function(name, index)
        return index

    def add_memory(self, min_pages: int, max_pages: int | None = None, export: str | None = "memory") -> int:
        self.memories.append(limits(min_pages, max_pages))
        index = len(self.memories) - 1
        if export:
            self._export(export, 0x02, index)
        return index

    def add_global(self, valtype: int, mutable: bool, init: Asm) -> int:
        self.globals.append(bytes([valtype, 1 if mutable else 0]) + bytes(init.code) + b"\x0b")
        return len(self.globals) - 1

    def add_data(self, offset: int, payload: bytes, memory: int = 0) -> None:
        init = Asm().i32_const(offset).end()
        head = b"\x00" if memory == 0 else b"\x02" + uleb(memory)
        self.data.append(head + bytes(init.code) + uleb(len(payload)) + payload)

    def export_function(self, name: str, index: int) -> None:
        self._export(name, 0x00, index)

    def _export(self, name: str, kind: int, index: int) -> None:
        if name in self.export_names:
            raise ValueError(f"duplicate export name {name!r}")
        self.export_names.add(name)
        self.exports.append(name_bytes(name) + bytes([kind]) + uleb(index))

    def function_names(self) -> dict[int, str]:
        return {self.num_imported_funcs + i: f.name for i, f in enumerate(self.functions)}

    def to_bytes(self) -> bytes:
        for i, fn in enumerate(self.functions):
            if fn.body is None:
                raise ValueError(f"function {fn.name!r} (index {self.num_imported_funcs + i}) has no body")
        out = bytearray(b"\x00asm\x01\x00\x00\x00")
        out += section(1, vec(self.types))
        if self.imports:
            out += section(2, vec(self.imports))
        out += section(3, vec([uleb(f.type_index) for f in self.functions]))
        if self.memories:
            out += section(5, vec(self.memories))
        if self.globals:
            out += section(6, vec(self.globals))
        if self.exports:
            out += section(7, vec(self.exports))
        bodies = []
        for fn in self.functions:
            code = locals_decl(fn.local_types) + (fn.body or b"") + b"\x0b"
            bodies.append(uleb(len(code)) + code)
        out += section(10, vec(bodies))
        if self.data:
            out += section(11, vec(self.data))
        out += self._name_section()
        return bytes(out)

    def _name_section(self) -> bytes:
        """Custom 'name' section so traps and profilers show our function names."""
        names = vec([uleb(i) + name_bytes(n) for i, n in sorted(self.function_names().items())])
        return section(0, name_bytes("name") + b"\x01" + uleb(len(names)) + names)
