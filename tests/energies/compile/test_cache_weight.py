"""The compiled-energy cache's weight against the memory it really holds.

Oracle: tracemalloc, independent of the weight (which reads only the Wasm's length): the bytes
still allocated after compiling into a fresh cache and dropping the problem, the cache entry alone
keeping them. A first compile of the same diagram, uncached, fills the diagram's own goal kinds and
the process-wide tables (interned signatures, Wasm encodings) so they are not counted.
"""

from __future__ import annotations

import gc
import tracemalloc

import pytest

from adcore import LRU
from energies.compile.problem import CACHE, CompiledProblem, functions_weight
from energies.diagram_build import build_diagram
from service.examples import example


@pytest.mark.parametrize("name", ["sets", "vectors"])
def test_weight_of_a_compiled_energy_is_within_2x_of_its_traced_memory(name: str) -> None:
    trio = example(name)
    assert trio is not None
    diagram = build_diagram(trio.domain, trio.substance, trio.style, trio.variation, ())
    CompiledProblem(diagram, cache=None)
    cache: LRU[object, object] = LRU(4, weight=CACHE.weigh)  # the service's cache's weight
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        problem = CompiledProblem(diagram, cache=cache)  # type: ignore[arg-type]
        del problem
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    [(entry, weight)] = cache._items.values()
    assert CACHE.weigh is functions_weight and weight > 0
    assert held / 2 <= weight <= held * 2, (name, weight, held)
