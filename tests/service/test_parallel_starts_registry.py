"""Registry trios laid out with their starts in forked processes: the same SVG, byte for byte, and
the same report as the sequential portfolio in this process (the oracle)."""

from __future__ import annotations

from typing import Any

import pytest

import service.pipeline
from energies.optimize.parallel_starts import MIN_EVALUATIONS, ParallelStarts, PoolStats
from energies.optimize.portfolio import PortfolioSettings

from .service_support import HAS_REGISTRY, render_registry_trio

pytestmark = pytest.mark.skipif(not HAS_REGISTRY, reason="needs ../shared registry data")


def comparable(report: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in report.items() if k not in ("timingsMs", "cached")}


@pytest.fixture
def pools(monkeypatch: pytest.MonkeyPatch) -> list[PoolStats]:
    """The stats of every pool the pipeline uses, in order."""
    found: list[PoolStats] = []

    class Recorded(ParallelStarts):
        def close(self) -> None:
            super().close()
            found.append(self.stats)

    monkeypatch.setattr(service.pipeline, "ParallelStarts", Recorded)
    return found


@pytest.mark.parametrize(
    "key",
    [
        "minkowski-tests/maze/non-convex",  # every start runs
        "molecules/nitricacid-lewis",  # labels and text
        "triangle-mesh-2d/diagrams/angle-equivalence",  # stopped by the evaluation budget: caps shrink
    ],
)
def test_parallel_starts_draw_the_sequential_svg(key: str, pools: list[PoolStats]) -> None:
    sequential = render_registry_trio(key, portfolio=PortfolioSettings(processes=1))
    parallel = render_registry_trio(key, portfolio=PortfolioSettings(processes=2))
    assert parallel.svg == sequential.svg
    assert comparable(parallel.report()) == comparable(sequential.report())
    assert len(sequential.portfolio.starts) > 1
    assert pools[0].forked == 0 and pools[1].forked >= 1  # the second really ran starts elsewhere


def test_a_cheap_layout_keeps_its_starts_in_process(pools: list[PoolStats]) -> None:
    key = "curve-examples/catmull-rom/catmull-rom"
    r = render_registry_trio(key, portfolio=PortfolioSettings(processes=2))
    assert r.portfolio.starts[0].evaluations < MIN_EVALUATIONS and len(r.portfolio.starts) > 1
    assert pools[0].forked == 0
