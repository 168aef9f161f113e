"""The Wasm encoder: LEB128 against known vectors, and every opcode executed by wasmtime against Python."""

from __future__ import annotations

import math
import operator
import struct

import numpy as np
import pytest
import wasmtime
from hypothesis import given
from hypothesis import strategies as st

from adcore.wasm.encode import F64, I32, I64, Asm, ModuleBuilder, sleb, uleb
from adcore.wasm.runtime import Instance, engine, load_module


def decode_uleb(data: bytes) -> int:
    value = 0
    for i, byte in enumerate(data):
        value |= (byte & 0x7F) << (7 * i)
        if not byte & 0x80:
            assert i == len(data) - 1
            return value
    raise AssertionError("unterminated")


def decode_sleb(data: bytes) -> int:
    value = decode_uleb(data)
    bits = 7 * len(data)
    return value - (1 << bits) if data[-1] & 0x40 else value


def test_leb128_known_vectors() -> None:
    # Examples from the DWARF specification (section 7.6).
    assert uleb(2) == b"\x02" and uleb(127) == b"\x7f" and uleb(128) == b"\x80\x01"
    assert uleb(129) == b"\x81\x01" and uleb(12857) == b"\xb9\x64" and uleb(624485) == b"\xe5\x8e\x26"
    assert sleb(2) == b"\x02" and sleb(-2) == b"\x7e" and sleb(127) == b"\xff\x00"
    assert sleb(-127) == b"\x81\x7f" and sleb(128) == b"\x80\x01" and sleb(-128) == b"\x80\x7f"
    assert sleb(-123456) == b"\xc0\xbb\x78"
    with pytest.raises(ValueError):
        uleb(-1)


@given(st.integers(min_value=0, max_value=2**64))
def test_uleb_round_trip(n: int) -> None:
    assert decode_uleb(uleb(n)) == n


@given(st.integers(min_value=-(2**63), max_value=2**63))
def test_sleb_round_trip(n: int) -> None:
    assert decode_sleb(sleb(n)) == n


def binary_module(ops: dict[str, tuple[int, int]]) -> Instance:
    """One exported function per op: (a, b) -> a op b, with the given operand/result types."""
    b = ModuleBuilder()
    for name, (t, rt) in ops.items():
        body = Asm().local_get(0).local_get(1)
        getattr(body, name)()
        b.add_function(name, [t, t], [rt], [], body, export=True)
    return Instance(b.to_bytes())


def tdiv(a: int, b: int) -> int:
    """Integer division truncating toward zero (Wasm div_s), exact for 64-bit values."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def wrap(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


F64_BINARY = {
    "f64_add": operator.add, "f64_sub": operator.sub, "f64_mul": operator.mul,
    "f64_div": lambda a, b: a / b if b else math.copysign(math.inf, a) * math.copysign(1, b),
    "f64_min": min, "f64_max": max, "f64_copysign": math.copysign,
}  # fmt: skip
F64_COMPARE = {"f64_eq": operator.eq, "f64_ne": operator.ne, "f64_lt": operator.lt, "f64_gt": operator.gt,
               "f64_le": operator.le, "f64_ge": operator.ge}  # fmt: skip


def int_ops(bits: int) -> dict[str, object]:
    p, mask = f"i{bits}", (1 << bits) - 1

    def u(v: int) -> int:
        return v & mask

    return {
        f"{p}_add": lambda a, b: wrap(a + b, bits), f"{p}_sub": lambda a, b: wrap(a - b, bits),
        f"{p}_mul": lambda a, b: wrap(a * b, bits), f"{p}_and": lambda a, b: wrap(a & b, bits),
        f"{p}_or": lambda a, b: wrap(a | b, bits), f"{p}_xor": lambda a, b: wrap(a ^ b, bits),
        f"{p}_shl": lambda a, b: wrap(a << (b % bits), bits), f"{p}_shr_s": lambda a, b: a >> (b % bits),
        f"{p}_shr_u": lambda a, b: wrap(u(a) >> (b % bits), bits),
        f"{p}_div_s": lambda a, b: wrap(tdiv(a, b), bits),
        f"{p}_div_u": lambda a, b: wrap(u(a) // u(b), bits),
        f"{p}_rem_s": lambda a, b: a - b * tdiv(a, b), f"{p}_rem_u": lambda a, b: wrap(u(a) % u(b), bits),
        f"{p}_rotl": lambda a, b: wrap((u(a) << (b % bits)) | (u(a) >> (bits - b % bits)), bits),
        f"{p}_rotr": lambda a, b: wrap((u(a) >> (b % bits)) | (u(a) << (bits - b % bits)), bits),
        f"{p}_eq": lambda a, b: int(a == b), f"{p}_ne": lambda a, b: int(a != b),
        f"{p}_lt_s": lambda a, b: int(a < b), f"{p}_lt_u": lambda a, b: int(u(a) < u(b)),
        f"{p}_gt_s": lambda a, b: int(a > b), f"{p}_gt_u": lambda a, b: int(u(a) > u(b)),
        f"{p}_le_s": lambda a, b: int(a <= b), f"{p}_le_u": lambda a, b: int(u(a) <= u(b)),
        f"{p}_ge_s": lambda a, b: int(a >= b), f"{p}_ge_u": lambda a, b: int(u(a) >= u(b)),
    }  # fmt: skip


def test_f64_binary_ops_execute_as_python_computes() -> None:
    ops = {n: (F64, F64) for n in F64_BINARY} | {n: (F64, I32) for n in F64_COMPARE}
    inst = binary_module(ops)
    values = [0.5, -3.25, 7.0, 1e300, -(2.0**-1070)]
    for a in values:
        for b in values:
            for name, ref in (F64_BINARY | F64_COMPARE).items():
                assert inst.fast(name)(a, b) == ref(a, b), (name, a, b)


@pytest.mark.parametrize(("bits", "t"), [(32, I32), (64, I64)])
def test_integer_ops_execute_as_python_computes(bits: int, t: int) -> None:
    table = int_ops(bits)
    ops = {n: (t, I32 if n.split("_", 1)[1] in ("eq", "ne") or n[4:6] in ("lt", "gt", "le", "ge") else t)
           for n in table}  # fmt: skip
    inst = binary_module(ops)
    values = [7, -7, 3, 1, -(2 ** (bits - 1)) + 5, 2 ** (bits - 1) - 9, 12345]
    for a in values:
        for b in values:
            for name, ref in table.items():
                assert inst.fast(name)(a, b) == ref(a, b), (name, a, b)


def test_unary_conversion_and_reinterpret_ops() -> None:
    cases = [  # (op, param, result, input, expected)
        ("f64_sqrt", F64, F64, 2.0, math.sqrt(2.0)), ("f64_abs", F64, F64, -0.0, 0.0),
        ("f64_neg", F64, F64, 2.5, -2.5), ("f64_floor", F64, F64, -1.5, -2.0),
        ("f64_ceil", F64, F64, -1.5, -1.0),
        ("f64_trunc", F64, F64, -1.7, -1.0), ("f64_nearest", F64, F64, 2.5, 2.0),
        ("i32_trunc_f64_s", F64, I32, -7.9, -7), ("i64_trunc_f64_s", F64, I64, 2.0**40 + 0.5, 2**40),
        ("f64_convert_i32_s", I32, F64, -5, -5.0), ("f64_convert_i32_u", I32, F64, -1, 4294967295.0),
        ("f64_convert_i64_s", I64, F64, -(2**40), -(2.0**40)), ("i64_extend_i32_s", I32, I64, -2, -2),
        ("i64_extend_i32_u", I32, I64, -2, 2**32 - 2), ("i32_wrap_i64", I64, I32, 2**32 + 9, 9),
        ("i64_reinterpret_f64", F64, I64, 1.0, 0x3FF0000000000000),
        ("f64_reinterpret_i64", I64, F64, 0x4000000000000000, 2.0),
        ("i32_clz", I32, I32, 1, 31), ("i32_ctz", I32, I32, 8, 3), ("i32_popcnt", I32, I32, 255, 8),
        ("i64_clz", I64, I64, 1, 63), ("i32_eqz", I32, I32, 0, 1), ("i64_eqz", I64, I32, 5, 0),
    ]  # fmt: skip
    b = ModuleBuilder()
    for op, pt, rt, _, _ in cases:
        body = Asm().local_get(0)
        getattr(body, op)()
        b.add_function(op, [pt], [rt], [], body, export=True)
    inst = Instance(b.to_bytes())
    for op, _, _, x, want in cases:
        got = inst.fast(op)(x)
        assert got == want and (
            not isinstance(want, float) or math.copysign(1, got) == math.copysign(1, want)
        ), op


def test_control_flow_locals_globals_memory_imports_and_data() -> None:
    b = ModuleBuilder()
    seen: list[float] = []
    log = b.add_import("env", "log", [F64], [])
    b.add_memory(1, 3)
    b.add_data(64, struct.pack("<2d", 1.25, -8.5))
    counter = b.add_global(I64, True, Asm().i64_const(100))
    # sum_to(n): a loop with br_if, locals, local.tee; also logs n via the import and bumps a global.
    body = Asm()
    body.local_get(0).f64_convert_i32_s().call(log)
    body.global_get(counter).i64_const(1).i64_add().global_set(counter)
    body.block().loop()
    body.local_get(0).i32_eqz().br_if(1)
    body.local_get(1).local_get(0).f64_convert_i32_s().f64_add().local_set(1)
    body.local_get(0).i32_const(1).i32_sub().local_tee(0).drop()
    body.br(0).end().end()
    body.local_get(1)
    sum_to = b.add_function("sum_to", [I32], [F64], [F64], body, export=True)
    # sign(x): if/else with a result type, select, return.
    sign = Asm().local_get(0).f64_const(0.0).f64_lt().if_(F64).f64_const(-1.0).else_()
    sign.f64_const(1.0).f64_const(0.0).local_get(0).f64_const(0.0).f64_gt().select().end()
    b.add_function("sign", [F64], [F64], [], sign, export=True)
    b.add_function(
        "twice_sum", [I32], [F64], [], Asm().local_get(0).call(sum_to).f64_const(2.0).f64_mul(), True
    )
    b.add_function("data", [I32], [F64], [], Asm().local_get(0).f64_load(64), True)
    b.add_function("counter", [], [I64], [], Asm().global_get(counter), True)
    b.add_function("pages", [], [I32], [], Asm().memory_size(), True)
    wasm = b.to_bytes()

    imports = []
    store = wasmtime.Store(engine())
    store.set_epoch_deadline(1 << 40)
    f64t = wasmtime.ValType.f64()
    imports.append(wasmtime.Func(store, wasmtime.FuncType([f64t], []), seen.append))
    inst = wasmtime.Instance(store, load_module(wasm), imports)
    ex = inst.exports(store)
    assert ex["sum_to"](store, 4) == 10.0 and ex["twice_sum"](store, 3) == 12.0
    assert seen == [4.0, 3.0]
    assert ex["counter"](store) == 102
    assert [ex["sign"](store, v) for v in (-3.0, 0.0, 5.0)] == [-1.0, 0.0, 1.0]
    assert ex["data"](store, 0) == 1.25 and ex["data"](store, 8) == -8.5
    assert ex["pages"](store) == 1


def test_function_names_and_errors() -> None:
    b = ModuleBuilder()
    b.add_function("f", [], [], [], Asm(), export=True)
    with pytest.raises(ValueError, match="duplicate export"):
        b.export_function("f", 0)
    with pytest.raises(ValueError, match="imports must be added before"):
        b.add_import("env", "g", [], [])
    b.reserve_function("never_defined", [], [])
    with pytest.raises(ValueError, match="'never_defined'.*has no body"):
        b.to_bytes()
    with pytest.raises(AttributeError, match="no instruction 'f64_frobnicate'"):
        Asm().f64_frobnicate()
    assert Asm().i32_const(0xFFFFFFFF).code == Asm().i32_const(-1).code
    assert np.frombuffer(bytes(Asm().f64_const(1.5).code[1:]), np.float64)[0] == 1.5
