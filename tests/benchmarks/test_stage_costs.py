"""benchmarks/stage_costs.py on the graph series at 64 vertices: it runs one layout and accounts
for it. Its costs are measurements, not asserted."""

from __future__ import annotations

import pytest
import scaling_trios
import stage_costs

REGISTRY = scaling_trios.DEFAULT_REGISTRY


@pytest.mark.skipif(not (REGISTRY / "registry.json").is_file(), reason="needs ../shared/penrose-registry")
def test_the_benchmark_accounts_for_each_stage(capsys: pytest.CaptureFixture[str]) -> None:
    costs, timings = stage_costs.main(["--registry", str(REGISTRY), "--series", "graph", "--n", "64"])
    # the Style's own `layout = [dots, text]`
    assert [stage.name for stage in costs] == ["dots", "text"]
    for stage in costs:
        weights = [weight for weight, *_ in stage.rounds]
        # Penrose's schedule: λ starts at 1e3 and grows tenfold a round
        assert weights == pytest.approx([1e3 * 10**r for r in range(len(weights))])
        # every evaluation of a round is at least one energy call
        calls = sum(int(cell[0]) for cell in stage.evaluations.values())
        assert calls >= sum(evals for _, evals, *_ in stage.rounds) > 0
        assert 0 < stage.seconds <= timings["optimize"] / 1e3
        # 64 vertices: the three-vertex block's 5,056 rows are culled in the text stage, so some
        # evaluations list fewer rows than the whole stage
        if stage.name == "text":
            rows = {lists: cell[1] / cell[0] for (_, lists), cell in stage.evaluations.items()}
            assert "whole" not in rows or min(rows.values()) < rows["whole"]
    out = capsys.readouterr().out
    assert "## stage 1 `text`" in out and "| round | λ |" in out
