"""Robustness across variations (registry/robustness.py): Penrose's optimizer study's clean rule on
hand-made rows, the table and its totals, and the bench's report end to end with a test-only task."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from registry.bench import main
from registry.robustness import CLEAN_SUM, clean, constraint_sum, robustness, robustness_rows, total_line

from .test_bench import make_registry


def ok(key: str, **fields: float) -> dict:
    return {"key": key, "status": "ok", **fields}


@pytest.mark.parametrize(
    ("row", "total", "exact", "is_clean"),
    [
        (ok("k", constraintSum=0.0999, nViolated=9, maxConstrViolation=5.0), 0.0999, True, True),
        (ok("k", constraintSum=CLEAN_SUM), CLEAN_SUM, True, False),  # below 0.1, not at it
        # Without the exact sum: nViolated · max², 2 · 0.2² = 0.08 and 3 · 0.2² = 0.12 (rounded).
        (ok("k", nViolated=2, maxConstrViolation=0.2), 0.08, False, True),
        (ok("k", nViolated=3, maxConstrViolation=0.2), 0.12, False, False),
        (ok("k", nViolated=0, maxConstrViolation=-3.0), 0.0, False, True),
        (ok("k"), None, False, False),  # nothing to judge by
        ({"key": "k", "status": "timeout", "constraintSum": 0.0}, 0.0, True, False),  # did not run ok
    ],
)
def test_the_study_s_rule_on_one_row(row: dict, total: float | None, exact: bool, is_clean: bool) -> None:
    found, found_exact = constraint_sum(row)
    assert found == (None if total is None else pytest.approx(total)) and found_exact == exact
    assert clean(row) == is_clean


def test_counts_per_trio_and_in_total() -> None:
    ours = [
        ok("t", constraintSum=0.0, nViolated=0),
        ok("t@1", constraintSum=0.2, nViolated=1, nInfeasible=1),  # unclean, proved infeasible
        ok("t@2", constraintSum=0.05, nViolated=1),  # clean but not satisfied
        {"key": "t@3", "status": "timeout"},  # unclean
        ok("u", constraintSum=0.0, nViolated=0),
        ok("u@1", constraintSum=0.0, nViolated=0),
        ok("single", constraintSum=5.0, nViolated=1),  # one variation only: not in the table
    ]
    # Penrose ran u's variations here (one with the exact sum, one judged by the bound); t has only a
    # reference row, which does not count.
    penrose = [ok("t", nViolated=0), ok("u", constraintSum=0.3)]
    penrose.append(ok("u@1", nViolated=1, maxConstrViolation=0.1))
    t, u = robustness(ours, penrose)
    assert (t.key, t.runs, t.clean, t.satisfied, t.unclean, t.infeasible) == ("t", 4, 2, 1, ("@1", "@3"), 1)
    assert (t.penrose_runs, t.clean_example) == (0, "")
    assert (u.runs, u.clean, u.unclean, u.penrose_runs, u.penrose_clean, u.penrose_exact) == (
        2, 2, (), 2, 1, False,
    )  # fmt: skip
    header, rows = robustness_rows([t, u])
    assert rows[0] == ["t", "2/4", "1/4", "–", "@1 @3", "1"]
    assert rows[1] == ["u", "2/2", "2/2", "1/2 (bound)", "–", "–"]
    assert rows[2] == ["trios clean on every variation", "1 of 2", "1 of 2", "0 of 1", "2 variations", "1"]
    line = total_line([t, u])
    assert "on all their variations: 1 of 2 trios" in line
    assert "multi-start L-BFGS 161, parallel tempering 167, 26 under no method" in line


def test_the_report_draws_each_unclean_variation_beside_a_clean_one(tmp_path: Path) -> None:
    registry = make_registry(tmp_path)
    reference = tmp_path / "ref.jsonl"
    reference.write_text(json.dumps(ok("g/fine", energy=0.0, nViolated=0)) + "\n")
    out = tmp_path / "out"
    argv = ["--registry", str(registry), "--out", str(out), "--only", "g/fine", "--no-progress",
            "--penrose-results", str(reference), "--task", "tests.registry.registry_fake_tasks:violating",
            "--variations", "4"]  # fmt: skip
    assert main(argv) == 0
    rows = {r["key"]: r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}
    assert [rows[f"g/fine{s}"]["constraintSum"] for s in ("", "@1", "@2", "@3")] == [0.0, 0.05, 0.1, 0.15]
    md = (out / "report.md").read_text()
    # Sums 0, 0.05 clean; 0.1 and 0.15 not.
    assert "| g/fine | 2/4 | 1/4 | – | @2 @3 | 0 |" in md
    assert "Clean (Σ max(c, 0)² < 0.1) on all 4 variations: 0 of 1 trios." in md
    page = (out / "report.html").read_text()
    heading = "Unclean variations (2), each beside a clean one of its trio</h2>"
    gallery = page.split(heading)[1].split("<h2>")[0]
    assert "svg/g__fine@2.svg" in gallery and "svg/g__fine@3.svg" in gallery
    assert gallery.count("svg/g__fine.svg") == 2  # the clean own variation beside each
