"""A math library inside WebAssembly: registry, linking into a module, and a test/benchmark module.

Each function is a ``LibmFn``: its Wasm signature, the libm functions it calls, and a Python builder
that emits its body with ``fnbuild``.  The algorithms (argument reduction + polynomial/rational
kernels) follow fdlibm/musl; the builders live in ``libm_exp``, ``libm_log``, ``libm_trig``,
``libm_pow``.  The code generator links what it needs with ``add_libm(builder, names)``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from adcore.wasm.encode import F64, I32, Asm, ModuleBuilder
from adcore.wasm.fnbuild import Fn

Build = Callable[[Fn, dict[str, int]], None]


@dataclass(frozen=True)
class LibmFn:
    name: str
    params: tuple[int, ...]
    results: tuple[int, ...]
    deps: tuple[str, ...]
    build: Build
    public: bool  # internal helpers (kernels, reductions) are not part of the math API

    @property
    def arity(self) -> int:
        return len(self.params)


LIBM: dict[str, LibmFn] = {}


def libm_function(
    name: str,
    arity: int = 1,
    deps: Sequence[str] = (),
    params: Sequence[int] | None = None,
    results: Sequence[int] = (F64,),
    public: bool = True,
) -> Callable[[Build], Build]:
    """Register a body builder under ``name``; ``deps`` are libm names its body calls."""

    def register(build: Build) -> Build:
        sig = tuple(params) if params is not None else (F64,) * arity
        LIBM[name] = LibmFn(name, sig, tuple(results), tuple(deps), build, public)
        return build

    return register


def _load_all() -> None:
    # Importing the builder modules fills LIBM (each registers its functions).
    from adcore.wasm import libm_atrig, libm_exp, libm_log, libm_pow, libm_trig  # noqa: F401


def public_names() -> list[str]:
    _load_all()
    return sorted(n for n, f in LIBM.items() if f.public)


def dependency_closure(names: Iterable[str]) -> list[str]:
    """The requested names plus everything they call, each once, in first-seen order."""
    _load_all()
    order: list[str] = []
    stack = list(names)
    while stack:
        name = stack.pop()
        if name in order:
            continue
        if name not in LIBM:
            raise KeyError(f"libm has no function {name!r}; available: {', '.join(public_names())}")
        order.append(name)
        stack.extend(LIBM[name].deps)
    return order


def add_libm(builder: ModuleBuilder, names: Iterable[str], prefix: str = "libm.") -> dict[str, int]:
    """Add the named functions and their dependencies; returns name -> function index (incl. deps).

    Indices are reserved first so bodies may call each other in any order.
    """
    closure = dependency_closure(names)
    index = {n: builder.reserve_function(prefix + n, LIBM[n].params, LIBM[n].results) for n in closure}
    links = tuple(index.items())
    for n in closure:
        # a body depends only on the indices it calls: modules using the same functions share it
        key = (n, links)
        body = _BODIES.get(key)
        if body is None:
            fn = Fn(LIBM[n].params, LIBM[n].results)
            LIBM[n].build(fn, index)
            body = (fn.local_types, bytes(fn.asm.unreachable().code))  # as Fn.define ends a body
            if len(_BODIES) < 4096:
                _BODIES[key] = body
        builder.define_function(index[n], *body)
    return index


_BODIES: dict[tuple[str, tuple[tuple[str, int], ...]], tuple[list[int], bytes]] = {}


def _map_loop(arity: int, func_index: int) -> Asm:
    """Body of ``map(n, in_ptr, out_ptr)``: out[i] = f(in0[i], ...) with inputs interleaved.

    Lets a benchmark evaluate an array of points with one call from Python.
    Locals: 0=n, 1=in_ptr, 2=out_ptr, 3=i.
    """
    a = Asm()
    a.block().loop()
    a.local_get(3).local_get(0).i32_ge_u().br_if(1)
    a.local_get(2).local_get(3).i32_const(8).i32_mul().i32_add()
    for j in range(arity):
        a.local_get(1).local_get(3).i32_const(8 * arity).i32_mul().i32_add().f64_load(8 * j)
    a.call(func_index).f64_store()
    a.local_get(3).i32_const(1).i32_add().local_set(3).br(0)
    a.end().end()
    return a


def libm_module(
    names: Iterable[str] | None = None, map_helpers: bool = True, memory_pages: int = 64
) -> bytes:
    """A module exporting each requested public function (default: all), plus ``map_<name>`` loops
    and a ``memory`` for batch evaluation."""
    wanted = list(names) if names is not None else public_names()
    b = ModuleBuilder()
    index = add_libm(b, wanted)
    for n in wanted:
        b.export_function(n, index[n])
    if map_helpers:
        b.add_memory(memory_pages)
        for n in wanted:
            b.add_function(f"map_{n}", [I32, I32, I32], [], [I32], _map_loop(LIBM[n].arity, index[n]), True)
    return b.to_bytes()
