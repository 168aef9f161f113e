"""set-theory's tree.style on 128 sets (benchmarks/scaling_trios.py): its frame `Global.box`, a
Rectangle the size of the canvas with a 2 px stroke, can never be on the canvas, so its implicit
`onCanvas` is a violated constant. Penrose draws a diagram on every variation (its weight reaching
1e72 to 1e204); the constant used to drive ours to 1e308, where φ overflowed and the layout failed
on variations 0, 2 and 3 with "caused by an unnamed term"."""

from __future__ import annotations

import pytest
import scaling_trios
from scaling_trios import trio

from service.pipeline import render_trio

REGISTRY = scaling_trios.DEFAULT_REGISTRY


@pytest.mark.skipif(not (REGISTRY / "registry.json").is_file(), reason="needs ../shared/penrose-registry")
def test_the_frame_that_never_fits_does_not_fail_the_layout() -> None:
    t = trio("tree", 128, 0, REGISTRY)
    r = render_trio(t.domain, t.substance, t.style, t.variation, time_limit=300)
    opt = r.optimization
    # The frame alone is violated, reported as infeasible, and the weight stays far from overflow.
    [frame] = opt.infeasible
    report = opt.goals[len(opt.goals.values[0]) + frame]  # type: ignore[attr-defined]
    assert report.name == "ensure onCanvas at style (block Global.box)"
    assert opt.n_violated == 1 and opt.weight < 1e100
    assert any("InfeasibleConstraintWarning" in w and "Global.box" in w for w in r.warnings)
