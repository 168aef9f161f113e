"""The portfolio's evaluation budget begins a further start only when it can hold the costliest
resampled start so far (a quarter of start 0's while none has finished): counts derived by hand from
scripted start costs."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from energies.optimize.optimizer import optimize
from energies.optimize.portfolio import PortfolioSettings, optimize_portfolio
from tests.energies.optimize.test_portfolio import STARTS, DoubleWell

COSTS = [1_000, 3_000, 1_000, 1_000]  # evaluations each start reports


def _scripted(begun: list[int], costs: list[int] = COSTS, caps: list[int] | None = None):  # type: ignore[no-untyped-def]
    def run(problem, x0, max_iters, **options):
        k = next(i for i, s in enumerate(STARTS) if np.array_equal(s, x0))
        begun.append(k)
        if caps is not None:
            caps.append(max_iters)
        return replace(optimize(problem, x0, max_iters=max_iters, **options), evaluations=costs[k])

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


@pytest.mark.parametrize(
    ("budget", "begun_expected", "caps_expected"),
    [(5_200, [0, 1, 2], [100_000, 1_200, 600]), (4_999, [0], [100_000])],
)
def test_start_0_alone_asks_for_a_quarter_of_its_work_then_the_costliest_resampled_start(
    budget: int, begun_expected: list[int], caps_expected: list[int]
) -> None:
    # Start 0 takes 4,000 evaluations, resampled starts 600 each. Budget 5,200: 4,000 + 4,000 // 4 =
    # 5,000 fits, so start 1 runs, capped at the 1,200 left; then 4,600 + 600 (start 1's, not start
    # 0's 4,000) = 5,200 fits, start 2 runs capped at 600; then 5,200 + 600 does not. Budget 4,999:
    # 5,000 does not fit and start 0 stays alone.
    costs = [4_000, 600, 600, 600]
    begun: list[int] = []
    caps: list[int] = []
    settings = PortfolioSettings(starts=4, max_evaluations=budget)
    r = optimize_portfolio(DoubleWell(), STARTS[:4], settings=settings, run=_scripted(begun, costs, caps))
    assert begun == begun_expected and caps == caps_expected
    assert r.stopped == "evaluations" and r.evaluations == sum(costs[k] for k in begun_expected)
