"""benchmarks/value_only.py on 64 all-pairs circles (2,016 pairs: the smallest of the series with φ
alone): it runs, checks φ alone against φ on every stage, and classes every line-search trial of a
layout. Its costs are measurements, not asserted."""

from __future__ import annotations

import pytest
import scaling_trios
import value_only

REGISTRY = scaling_trios.DEFAULT_REGISTRY


@pytest.mark.skipif(not (REGISTRY / "registry.json").is_file(), reason="needs ../shared/penrose-registry")
def test_the_benchmark_classes_every_trial_of_a_layout(capsys: pytest.CaptureFixture[str]) -> None:
    out = value_only.main(
        ["--registry", str(REGISTRY), "--series", "circles", "--sizes", "64", "--rounds", "2", "--trials"]
    )
    ((stage, full, alone),) = out["costs"]["circles", 64]
    assert full > 0 and alone > 0
    classes = out["trials"]["circles", 64]
    # every exterior-point round begins along the raw gradient; a class "after a failure" exists only
    # where some trial failed in its search, which the raw gradient's steps do
    assert classes["raw gradient"]
    failed = {name: sum(fails for fails, _ in trials) for name, trials in classes.items()}
    assert failed["raw gradient"] >= 1
    assert set(classes) <= {
        "raw gradient",
        "first of an L-BFGS step",
        "after a failure, flagged",
        "after a failure, not flagged",
    }
    table = capsys.readouterr().out
    assert "| circles N = 64: raw gradient |" in table
