"""Culling is exact on the scaling series' Styles (tree.style's all-pairs `notTooClose` is constant
nowhere, so nothing of it is culled): at points of a layout in progress, and at points
inside and outside each box, the culled energy and gradient equal the full ones within 1e-12
relative (the issue's bar), every stage, with culling forced on at every evaluation (its policy is
tested in tests/energies/compile/test_culling.py). The oracle is the same problem compiled without
culling."""

from __future__ import annotations

import numpy as np
import pytest
import scaling_trios
from scaling_trios import trio

from energies.compile.problem import CompiledProblem
from energies.diagram_build import build_diagram
from energies.optimize.optimizer import optimize
from energies.optimize.portfolio import portfolio_starts

REGISTRY = scaling_trios.DEFAULT_REGISTRY
needs_registry = pytest.mark.skipif(
    not (REGISTRY / "registry.json").is_file(), reason="needs ../shared/penrose-registry"
)


@needs_registry
@pytest.mark.parametrize(("series", "n"), [("graph", 64), ("venn", 512), ("circles", 128)])
def test_culled_energies_equal_the_full_ones(series: str, n: int) -> None:
    t = trio(series, n, 0, REGISTRY)
    d = build_diagram(t.domain, t.substance, t.style, t.variation, ())
    full = CompiledProblem(d, cache=None, culling=False)
    culled = CompiledProblem(d, cache=None, culling=True)
    c = culled.culler
    assert c is not None and c.which  # the Style has kinds worth culling
    c.wants = lambda: True  # type: ignore[method-assign]
    c.box_lasts = lambda x, varying: True  # type: ignore[method-assign]
    x = portfolio_starts(d.unknowns, t.variation, 2, d)[0]
    x = optimize(full, x, max_iters=40).x  # a layout in progress: goals near and far
    rng = np.random.default_rng(n)
    checked = culled_somewhere = 0
    for s in range(len(culled.stages)):
        for weight in (1.0, 1e4):
            c.center = None  # a box at x
            culled.energy_and_grad(x, s, weight)
            points = [x + rng.uniform(-1, 1, len(x)) * c.radius for _ in range(4)]  # inside the box
            points += [x + rng.normal(0, 4 * max(float(c.radius.max()), 1.0), len(x)) for _ in range(2)]
            for p in points:
                e, g = culled.energy_and_grad(p, s, weight)
                e_full, g_full = full.energy_and_grad(p, s, weight)
                scale = max(1.0, abs(e_full))
                assert abs(e - e_full) <= 1e-12 * scale + 1e-9, (s, weight, e, e_full)
                np.testing.assert_allclose(g, g_full, rtol=1e-12, atol=1e-12 * max(1.0, np.abs(g_full).max()))
                checked += 1
                culled_somewhere += sum(culled.counts) < sum(len(r) for r in culled._whole)
    assert checked == 12 * len(culled.stages)
    assert culled_somewhere > 0  # goals were left out, so the comparison means something
