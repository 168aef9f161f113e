"""The multi-start portfolio: its starts, its choice of layout and its bounds, against hand-derived optima."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from energies.diagram import Unknowns
from energies.optimize.optimizer import SATISFIED_TOLERANCE, GoalValues, OptimizeResult, StageSpec, optimize
from energies.optimize.portfolio import PortfolioSettings, best_layout, optimize_portfolio, portfolio_starts

TILT = 0.3


class DoubleWell:
    """One unknown, one objective (x² - 1)² + TILT·x: two wells, the left one deeper; optionally the
    constraint x >= LIMIT, which rules the left well out."""

    n_inputs = 1
    objective_names = ["well(x)"]

    def __init__(self, limit: float | None = None) -> None:
        self.limit = limit
        self.constraint_names = [] if limit is None else ["greaterThan(x, limit)"]
        one = np.ones(1, bool)
        self.stages = [StageSpec("", one, one, np.ones(len(self.constraint_names), bool))]

    def _constraint(self, x: np.ndarray) -> np.ndarray:
        return np.array([] if self.limit is None else [self.limit - x[0]])

    def energy_and_grad(self, x: np.ndarray, stage: int, weight: float) -> tuple[float, np.ndarray]:
        v, active = x[0], self.stages[stage].objectives[0]
        energy, grad = ((v * v - 1) ** 2 + TILT * v, 4 * v * (v * v - 1) + TILT) if active else (0.0, 0.0)
        for c in self._constraint(x):
            if c > 0:
                energy, grad = energy + weight * c * c, grad - 2 * weight * c
        return float(energy), np.array([grad])

    def goal_values(self, x: np.ndarray) -> GoalValues:
        return GoalValues(np.array([(x[0] ** 2 - 1) ** 2 + TILT * x[0]]), self._constraint(x))

    def goal_jacobian(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        raise AssertionError("not called: the energy stays finite")


def wells() -> tuple[float, float]:
    """The two minima of the double well, from the roots of its derivative 4x³ - 4x + TILT."""
    roots = np.sort(np.roots([4.0, 0.0, -4.0, TILT]).real)
    return float(roots[0]), float(roots[2])


def well(x: float) -> float:
    return (x * x - 1) ** 2 + TILT * x


STARTS = [np.array([v]) for v in (0.9, 1.5, -0.5, -1.8, -0.7, 1.1)]


def test_one_start_is_a_single_run_and_stays_in_its_well() -> None:
    _, right = wells()
    r = optimize_portfolio(DoubleWell(), STARTS, settings=PortfolioSettings(starts=1))
    assert [s.start for s in r.starts] == [0] and r.chosen == 0
    assert r.best.x[0] == pytest.approx(right, abs=1e-3)
    single = optimize(DoubleWell(), STARTS[0])
    assert r.best.x.tolist() == single.x.tolist()  # the same run as without a portfolio


def test_the_portfolio_finds_the_deeper_well() -> None:
    left, _ = wells()
    r = optimize_portfolio(DoubleWell(), STARTS, settings=PortfolioSettings(starts=6))
    assert r.best.x[0] == pytest.approx(left, abs=1e-3)
    assert r.best.energy == pytest.approx(well(left), abs=1e-6)
    assert STARTS[r.chosen][0] < 0  # a start in the left well's basin won
    # Two starts in the right well did not stop the search; the third start in the left well did.
    assert r.stopped == "agreement" and len(r.starts) == 5


def test_a_satisfied_layout_beats_a_lower_energy() -> None:
    # With x >= 0.5 required, a start in the left well ends on the constraint's boundary at a higher
    # energy than the right well; the right well must be chosen even from a start that scored lower
    # before the constraint was enforced.
    _, right = wells()
    r = optimize_portfolio(DoubleWell(limit=0.5), STARTS[2:], settings=PortfolioSettings(starts=4))
    assert r.best.n_violated == 0
    assert r.best.x[0] == pytest.approx(right, abs=1e-3)


BASE = optimize(DoubleWell(limit=0.5), STARTS[0])


def outcome(objective: float, weight: float, constraints: list[float]) -> OptimizeResult:
    """A hand-built layout: its objectives' sum, final weight and final-stage constraint values, with
    the energy the optimizer would report."""
    c = np.array(constraints)
    penalty = float(np.sum(np.maximum(c, 0.0) ** 2))
    return replace(
        BASE, energy=objective + weight * penalty, objective_energy=objective, weight=weight, penalty=penalty,
        n_violated=int(np.count_nonzero(c > SATISFIED_TOLERANCE)),
    )  # fmt: skip


def test_layouts_with_violations_rank_by_how_far_not_how_many() -> None:
    # stochastic-process ~2 in an earlier session: three constraints violated by at most 0.36 px
    # (energy 3.9e4) against one violated by 5.5 px (3.0e6), both at weight 1e5:
    # 100 + 1e5·(0.36² + 0.2² + 0.1²) = 18,060 against 50 + 1e5·5.5² = 3,025,050.
    three_small, one_far = outcome(100.0, 1e5, [0.36, 0.2, 0.1]), outcome(50.0, 1e5, [5.5, 0.0])
    assert best_layout([one_far, three_small]) == 1
    # Any satisfied layout comes first, whatever its energy.
    assert best_layout([three_small, outcome(1e9, 1e3, [SATISFIED_TOLERANCE])]) == 1
    # Satisfied layouts by energy; equals go to the earlier one.
    assert best_layout([outcome(5.0, 1e3, [0.0]), outcome(4.0, 1e9, [-1.0])]) == 1
    assert best_layout([outcome(4.0, 1e3, [0.0]), outcome(4.0, 1e3, [0.0])]) == 0


def test_a_satisfied_residual_that_still_reports_energy_is_not_optimal() -> None:
    # Without objectives the least energy is 0. Start 0 satisfies its constraint within the 1e-3
    # tolerance (7.8e-4, lagrange-bases) but reports 1e5 · 7.8e-4² = 0.0608 > EP_STOP: not optimal,
    # so start 1 runs; it reaches 0 and is kept, and nothing can report less, so start 2 does not run.
    problem = DoubleWell(limit=0.5)
    problem.stages = [replace(problem.stages[0], objectives=np.zeros(1, bool))]
    layouts = iter([outcome(0.0, 1e5, [7.8e-4]), outcome(0.0, 1e7, [-0.2]), outcome(0.0, 1e3, [0.0])])
    roomy = PortfolioSettings(starts=3, max_evaluations=10**6)
    r = optimize_portfolio(problem, STARTS[:3], settings=roomy, run=lambda *_, **__: next(layouts))
    assert (r.stopped, r.chosen, [s.start for s in r.starts]) == ("optimal", 1, [0, 1])


def test_violations_compare_at_start_0s_weight() -> None:
    # Start 0 ends at 1e3. Its 2 px report 4,000, another start's 0.5 px at 1e5 report 25,000; at
    # 1e3 they are 4,000 against 250.
    low, high = outcome(0.0, 1e3, [2.0]), outcome(0.0, 1e5, [0.5])
    assert low.energy < high.energy and best_layout([low, high]) == 1
    # c05p13's own variation: start 0 ends at 1e5 with one constraint 6.45 px off; the other starts
    # leave it 0.096, 0.01006 and 0.003667 off. Their own energies: 2,490.53 + 1e6·0.096² = 11,707,
    # 2,752.08 + 1e7·0.01006² = 3,763, 2,867.71 + 1e6·0.003667² = 2,881; at 1e5: 3,412, 2,762 and 2,869.
    starts = [outcome(1652.79, 1e5, [6.45]), outcome(2490.53, 1e6, [0.096]), outcome(2752.08, 1e7, [0.01006]),
              outcome(2867.71, 1e6, [0.003667])]  # fmt: skip
    assert best_layout(starts) == 2


def test_a_non_finite_energy_ranks_last() -> None:
    assert best_layout([outcome(math.inf, 1e3, [1.0]), outcome(1e12, 1e3, [1.0])]) == 1


def test_the_portfolio_keeps_the_least_violated_start() -> None:
    # Start 0 reports the lowest energy at its own weight (4,000), start 2 the least violation.
    layouts = [outcome(0.0, 1e3, [2.0]), outcome(10.0, 1e5, [3.0, 1.0]), outcome(0.0, 1e5, [0.5])]
    made = iter(layouts)
    roomy = PortfolioSettings(starts=3, max_evaluations=10**6)
    r = optimize_portfolio(DoubleWell(), STARTS[:3], settings=roomy, run=lambda *_, **__: next(made))
    assert r.chosen == 2 and r.best is layouts[2] and [s.start for s in r.starts] == [0, 1, 2]


def test_a_satisfied_layout_without_objectives_needs_no_more_starts() -> None:
    problem = DoubleWell(limit=0.5)
    problem.stages = [replace(problem.stages[0], objectives=np.zeros(1, bool))]
    r = optimize_portfolio(problem, STARTS, settings=PortfolioSettings(starts=6))
    assert r.stopped == "optimal" and len(r.starts) == 1
    assert r.best.n_violated == 0 and r.best.energy == pytest.approx(0.0, abs=1e-6)


def test_three_starts_that_find_nothing_better_settle_the_portfolio() -> None:
    # Start 0 ends in the deeper (left) well; the next three end in the right one (L-BFGS's first
    # step carries -1.8 across the barrier), whose minimum is higher by about 2·TILT: none of them
    # beats start 0. Start 0's layout is reached by it alone, so the search goes on (SETTLING = 2).
    left, right = wells()
    assert well(right) > well(left) + 0.5  # the right well is clearly the shallower one
    starts = [np.array([v]) for v in (-0.7, 0.9, 1.1, -1.8, 0.5, 0.9, 1.1)]
    r = optimize_portfolio(DoubleWell(), starts, settings=PortfolioSettings(starts=7))
    assert r.stopped == "starts" and len(r.starts) == 7
    assert r.chosen == 0 and r.best.x[0] == pytest.approx(left, abs=1e-3)
    assert all(s.energy == pytest.approx(well(right), abs=1e-6) for s in r.starts[1:])


@pytest.mark.parametrize(
    ("energies", "begun", "stopped"),
    [
        # The best (1.0) reached by starts 0 and 1 (start 0 kept: the first of equals), and starts
        # 1-3 after it find nothing better: settled before start 4.
        ([1.0, 1.0, 5.0, 6.0, 7.0, 0.5, 0.5], [0, 1, 2, 3], "settled"),
        # Reached once: three worse starts do not settle it; start 5 finds better, reached again by
        # start 6, and the start count ends the search.
        ([1.0, 5.0, 6.0, 7.0, 8.0, 0.5, 0.5], [0, 1, 2, 3, 4, 5, 6], "starts"),
        # Reached once, then twice by start 4: settled once three starts after start 0 found nothing
        # better and two reached it (start 4 ties with start 0, which stays the best).
        ([1.0, 5.0, 6.0, 7.0, 1.0, 0.5, 0.5], [0, 1, 2, 3, 4], "settled"),
    ],
)
def test_a_best_layout_two_starts_reached_settles_after_three_that_find_nothing_better(
    energies: list[float], begun: list[int], stopped: str
) -> None:
    made = iter([outcome(e, 1e3, [0.0]) for e in energies])
    settings = PortfolioSettings(starts=7, max_evaluations=10**6)
    r = optimize_portfolio(DoubleWell(), STARTS[:1] * 7, settings=settings, run=lambda *_, **__: next(made))
    assert [s.start for s in r.starts] == begun and r.stopped == stopped


def test_an_unsatisfied_best_layout_keeps_the_search_going() -> None:
    # The same starts, but every layout reported with a violated constraint: a fourth start may
    # still satisfy it, so only the start count ends the search.
    def run(problem, x0, **options):
        return replace(optimize(problem, x0, **options), n_violated=1)

    starts = [np.array([v]) for v in (-0.7, 0.9, 1.1, -1.8, -0.5, 1.2)]
    r = optimize_portfolio(DoubleWell(), starts, settings=PortfolioSettings(starts=6), run=run)
    assert r.stopped == "starts" and len(r.starts) == 6


def test_ties_go_to_the_earlier_start_and_runs_are_repeatable() -> None:
    a = optimize_portfolio(DoubleWell(), STARTS, settings=PortfolioSettings(starts=6))
    b = optimize_portfolio(DoubleWell(), STARTS, settings=PortfolioSettings(starts=6))
    assert a.chosen == b.chosen and a.best.x.tolist() == b.best.x.tolist()
    same_basin = [np.array([-1.0]), np.array([-1.0])]
    assert optimize_portfolio(DoubleWell(), same_basin).chosen == 0


def test_the_evaluation_budget_keeps_expensive_layouts_to_one_start() -> None:
    first = optimize(DoubleWell(), STARTS[0])
    # No room left for a quarter of start 0's work (module docstring)
    tight = PortfolioSettings(starts=6, max_evaluations=first.evaluations + first.evaluations // 4 - 1)
    r = optimize_portfolio(DoubleWell(), STARTS, settings=tight)
    assert len(r.starts) == 1 and r.stopped == "evaluations" and r.cut_short is None


def test_a_time_budget_that_runs_out_is_reported() -> None:
    r = optimize_portfolio(DoubleWell(), STARTS, settings=PortfolioSettings(starts=6, seconds=1e-9))
    assert len(r.starts) == 1 and r.stopped == "seconds"
    assert r.cut_short is not None and "1 of 6" in r.cut_short


def test_starts_resample_only_sampled_unknowns_within_their_ranges() -> None:
    u = Unknowns()
    u.add(5.0, "A.center[0]", sampled_from=(-100.0, 100.0))
    u.add(7.0, "fixed")  # a value the Style gave: every start keeps it
    u.add(20.0, "A.r", sampled_from=(3.0, 50.0))
    starts = portfolio_starts(u, "seed", 8)
    assert starts[0].tolist() == [5.0, 7.0, 20.0]
    rest = np.array(starts[1:])
    assert np.all(rest[:, 1] == 7.0)
    assert np.all((rest[:, 0] >= -100) & (rest[:, 0] < 100)) and np.all((rest[:, 2] >= 3) & (rest[:, 2] < 50))
    assert len({tuple(s) for s in starts}) == 8
    again = portfolio_starts(u, "seed", 8)
    assert all(a.tolist() == b.tolist() for a, b in zip(starts, again))
    other = portfolio_starts(u, "other seed", 8)
    assert other[1].tolist() != starts[1].tolist()


def test_a_resampled_start_that_fails_is_skipped() -> None:
    calls: list[float] = []

    def run(problem, x0, **options):  # start 2 runs into a NaN region
        from energies.optimize.optimizer import OptimizeError

        calls.append(float(x0[0]))
        if len(calls) == 3:
            raise OptimizeError("energy nan", goal=None, stage="", x=x0)
        return optimize(problem, x0, **options)

    r = optimize_portfolio(DoubleWell(), STARTS[:4], settings=replace(PortfolioSettings(), starts=4), run=run)
    assert len(calls) == 4 and [s.start for s in r.starts] == [0, 1, 3]


def test_a_first_start_that_fails_gives_way_to_the_next() -> None:
    from energies.optimize.optimizer import OptimizeError

    calls: list[int] = []

    def run(problem, x0, **options):  # start 0 (and, in the last case, every start) meets a NaN
        calls.append(len(calls))
        if len(calls) == 1 or fail_all:
            raise OptimizeError("energy nan", goal=None, stage="", x=x0)
        return optimize(problem, x0, **options)

    fail_all = False
    r = optimize_portfolio(DoubleWell(), STARTS[:4], settings=replace(PortfolioSettings(), starts=4), run=run)
    alone = optimize(DoubleWell(), STARTS[1])
    assert r.starts[0].start == 1 and r.starts[0].energy == alone.energy
    assert r.chosen in [s.start for s in r.starts] and 0 not in [s.start for s in r.starts]
    calls.clear()
    with pytest.raises(OptimizeError):  # Penrose's single run fails as it does
        optimize_portfolio(DoubleWell(), STARTS[:4], settings=replace(PortfolioSettings(), starts=1), run=run)
    assert len(calls) == 1
    calls.clear()
    fail_all = True
    with pytest.raises(OptimizeError):
        optimize_portfolio(DoubleWell(), STARTS[:4], settings=replace(PortfolioSettings(), starts=4), run=run)
    assert len(calls) == 4


def test_a_start_cut_by_the_evaluation_budget_is_dropped() -> None:
    first = optimize(DoubleWell(), STARTS[0])
    budget = 3 * first.evaluations
    caps: list[int] = []

    def run(problem, x0, max_iters, **options):
        caps.append(max_iters)
        r = optimize(problem, x0, max_iters=max_iters, **options)
        return replace(r, status="MaxIterations") if len(caps) == 2 else r

    settings = PortfolioSettings(starts=6, max_evaluations=budget)
    r = optimize_portfolio(DoubleWell(), STARTS, settings=settings, run=run)
    assert caps == [100_000, budget - first.evaluations]
    assert [s.start for s in r.starts] == [0] and r.stopped == "evaluations"
    assert r.evaluations > first.evaluations  # the dropped start's work is still counted


def test_a_further_start_may_take_a_few_times_start_0s_work(monkeypatch) -> None:
    import energies.optimize.portfolio as portfolio

    first = optimize(DoubleWell(), STARTS[0])
    caps: list[int] = []

    def run(problem, x0, max_iters, **options):
        caps.append(max_iters)
        return optimize(problem, x0, max_iters=max_iters, **options)

    roomy = PortfolioSettings(starts=2, max_evaluations=10**6)
    optimize_portfolio(DoubleWell(), STARTS[:2], settings=roomy, run=run)
    assert caps == [100_000, portfolio.WANDER_FLOOR]  # a cheap start 0: the floor decides
    monkeypatch.setattr(portfolio, "WANDER_FLOOR", 1)
    monkeypatch.setattr(portfolio, "WANDER_FACTOR", 1.5)
    caps.clear()
    optimize_portfolio(DoubleWell(), STARTS[:2], settings=roomy, run=run)
    assert caps == [100_000, first.evaluations * 3 // 2]  # an iteration count: rounded down


def test_progress_says_which_start_it_comes_from() -> None:
    seen: list[int] = []
    r = optimize_portfolio(
        DoubleWell(), STARTS, settings=PortfolioSettings(starts=3), on_progress=lambda p: seen.append(p.start)
    )
    assert sorted(set(seen)) == [0, 1, 2] == [s.start for s in r.starts]
    assert seen == sorted(seen)  # one start after another


def test_satisfied_layouts_compare_at_start_0s_weight() -> None:
    # graph fig11 ~7: start 0 ends at 1e9; start 5 satisfies every constraint with objectives 3.94, start
    # 6 with objectives -530.34 and a residual of 2.6e-6 (penalty 6.76e-12) after rounds up to 1e15.
    # Their own energies: 3.94 against -530.34 + 1e15·6.76e-12 = 6,229.66; at 1e9: 3.94 against -530.33.
    starts = [outcome(2770.9, 1e9, [0.0]), outcome(3.94, 1e9, [0.0]), outcome(-530.34, 1e15, [2.6e-6])]
    assert starts[2].energy > starts[1].energy and best_layout(starts) == 2


def test_the_same_point_at_other_weights_agrees() -> None:
    # Three satisfied starts end at the same point (objectives 4, a residual of 1e-4) after 1, 4 and 7
    # rounds: their own energies 4.00001, 4.01 and 14 differ, at start 0's 1e3 all are 4.00001, which
    # is agreement: the portfolio stops after the third.
    layouts = [outcome(4.0, 1e3, [1e-4]), outcome(4.0, 1e6, [1e-4]), outcome(4.0, 1e9, [1e-4])] * 2
    made = iter(layouts)
    roomy = PortfolioSettings(starts=6, max_evaluations=10**6)
    r = optimize_portfolio(DoubleWell(), STARTS, settings=roomy, run=lambda *_, **__: next(made))
    assert r.stopped == "agreement" and len(r.starts) == 3 and r.chosen == 0
