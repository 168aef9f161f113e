"""The portfolio's evaluation budget begins a further start only when it can hold the costliest start
so far: counts derived by hand from scripted start costs."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from energies.optimize import optimize
from energies.portfolio import PortfolioSettings, optimize_portfolio
from tests.energies.test_portfolio import STARTS, DoubleWell

COSTS = [1_000, 3_000, 1_000, 1_000]  # evaluations each start reports


def _scripted(begun: list[int]):  # type: ignore[no-untyped-def]
    def run(problem, x0, max_iters, **options):
        k = next(i for i, s in enumerate(STARTS) if np.array_equal(s, x0))
        begun.append(k)
        return replace(optimize(problem, x0, max_iters=max_iters, **options), evaluations=COSTS[k])

    return run


def test_no_start_begins_that_the_budget_cannot_hold() -> None:
    # After starts 0 and 1, 4,000 evaluations are spent and the costliest took 3,000: a budget of
    # 6,999 has no room for another like it (start 0's 1,000 would fit), one of 7,000 has.
    for budget, begun_expected, evaluations in ((6_999, [0, 1], 4_000), (7_000, [0, 1, 2], 5_000)):
        begun: list[int] = []
        settings = PortfolioSettings(starts=3, max_evaluations=budget)
        r = optimize_portfolio(DoubleWell(), STARTS[:3], settings=settings, run=_scripted(begun))
        assert begun == begun_expected and r.evaluations == evaluations
        assert [s.start for s in r.starts] == begun_expected
        assert r.stopped == ("evaluations" if len(begun) < 3 else "starts")
