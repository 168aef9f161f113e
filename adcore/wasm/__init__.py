"""WebAssembly foundations of adcore: binary encoder and an in-Wasm math library."""

from adcore.wasm.encode import F64, I32, I64, Asm, ModuleBuilder, sleb, uleb

__all__ = ["F64", "I32", "I64", "Asm", "ModuleBuilder", "sleb", "uleb"]
