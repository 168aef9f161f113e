"""Layout quality in the harness: the verdict rule, the headline, good-layout rates across
variations, and the bench's --starts and --variations end to end (with a test-only task)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from registry.bench import main
from registry.report import (
    PER_TRIO_HEADER,
    headline,
    pair_rows,
    per_trio_rows,
    summary_tables,
    variation_rates,
    variation_table,
    verdict,
)

from .test_bench import make_registry


def ok(key: str, energy: float, violated: int = 0, **more: float) -> dict:
    return {"key": key, "status": "ok", "energy": energy, "nViolated": violated, **more}


@pytest.mark.parametrize(
    ("ours", "penrose", "expected"),
    [
        (8050.0, -286.8, "worse"),  # graph-domain fig1 before the portfolio
        (100.0, 95.0, "same"),  # within 10% of |Penrose's|
        (106.0, 95.0, "worse"),  # 11 above, margin 9.5
        (1.9, 1.0, "same"),  # small energies: a margin of 1
        (2.1, 1.0, "worse"),
        (0.2, 1.0, "same"),
        (-0.5, 1.0, "better"),
        (-10.0, -5.0, "better"),  # margin max(1, 0.5)
        (0.0, 0.0, "same"),
    ],
)
def test_verdict_by_final_energy(ours: float, penrose: float, expected: str) -> None:
    assert verdict(ok("k", ours), ok("k", penrose)) == expected


def test_no_verdict_without_two_energies() -> None:
    assert verdict(ok("k", 1.0), {"key": "k", "status": "timeout"}) is None
    assert verdict({"key": "k", "status": "ok", "energy": None}, ok("k", 1.0)) is None
    assert verdict(None, ok("k", 1.0)) is None


def test_headline_counts() -> None:
    ours = [ok("a", 50.0, compileMs=1.0, optimizeMs=1.0, optStatus="StageBudget"),
            ok("b", 1.0, 2, compileMs=3.0, optimizeMs=1.0, optStatus="EPConverged"),
            ok("c", -9.0, compileMs=1.0, optimizeMs=1.0), {"key": "d", "status": "crash"}]  # fmt: skip
    theirs = [ok("a", 10.0, compileMs=4.0, optimizeMs=4.0), ok("b", 1.0, compileMs=4.0, optimizeMs=4.0),
              ok("c", 0.0, compileMs=2.0, optimizeMs=2.0), ok("d", 3.0)]  # fmt: skip
    line = headline(pair_rows(ours, theirs))
    assert "worse than Penrose's on 1, the same on 1 and better on 1" in line
    assert "constraints satisfied on 2 of 3 (Penrose 4 of 4)" in line
    assert "median 0.5;" in line  # ratios 2/8, 4/8, 2/4
    assert "1 of our layouts cut short" in line


def test_good_layout_rates_against_penroses_median() -> None:
    ours = [ok("t", 0.0), ok("t@1", 5.0), ok("t@2", 1.5), ok("t@3", 2.5)]
    theirs = [ok("t", 1.0), ok("t@1", 0.5), ok("t@2", 30.0), {"key": "t@3", "status": "timeout"}]
    [rate] = variation_rates(ours, theirs)
    assert rate.bar == 1.0  # median of 1.0, 0.5, 30.0; good means at most 1.0 + max(1, 0.1)
    assert (rate.ours_good, rate.runs) == (2, 4)
    assert (rate.penrose_good, rate.penrose_runs) == (2, 4)
    # Good for one only (t@3 has no Penrose energy to set beside ours): 1.5 <= 2 < 30; 5 > 2 >= 0.5.
    assert (rate.ours_only, rate.penrose_only) == (("@2",), ("@1",))
    assert variation_table([rate]).rows[0][-2:] == ["@2", "@1"]
    # Over several trios a last row adds them up: 2 + 3 of 4 + 5 ours, 2 + 5 of 4 + 5 Penrose's.
    other = replace(rate, key="u", runs=5, ours_good=3, penrose_good=5, penrose_runs=5)
    assert variation_table([rate, other]).rows[-1][:4] == ["all", "", "5/9", "7/9"]
    # Against the reference alone (Penrose did not run the variations here): its one energy is the bar.
    [rate] = variation_rates(ours, [ok("t", 3.0)])
    assert rate.bar == 3.0 and rate.ours_good == 3 and rate.penrose_good is None
    assert rate.ours_only == rate.penrose_only == ()


def test_bench_runs_variations_with_a_start_count(tmp_path: Path) -> None:
    registry = make_registry(tmp_path)
    reference = tmp_path / "ref.jsonl"
    reference.write_text(json.dumps(ok("g/fine", -3.5)) + "\n" + json.dumps(ok("g/alsofine", -10.0)) + "\n")
    out = tmp_path / "out"
    argv = ["--registry", str(registry), "--out", str(out), "--only", "g/*fine", "--no-progress",
            "--penrose-results", str(reference), "--task", "tests.registry.registry_fake_tasks:energetic",
            "--variations", "3", "--starts", "4"]  # fmt: skip
    assert main(argv) == 0
    rows = {r["key"]: r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}
    assert sorted(rows) == ["g/alsofine", "g/alsofine@1", "g/alsofine@2", "g/fine", "g/fine@1", "g/fine@2"]
    assert {r["startsSeen"] for r in rows.values()} == {4}
    assert [rows[f"g/fine{s}"]["energy"] for s in ("", "@1", "@2")] == [-4.0, -3.0, -2.0]
    md = (out / "report.md").read_text()
    # g/fine: -4 against -3.5 is the same; g/alsofine: -4 against -10 is worse (margin 1).
    assert "worse than Penrose's on 1, the same on 1 and better on 0" in md
    assert "| g/fine | -3.5 | 2/3 | – |" in md  # good: at most -3.5 + 1
    assert "| g/alsofine | -10 | 0/3 | – |" in md
    page = (out / "report.html").read_text()
    worse = page.split("<h2>Worse than Penrose (1)</h2>")[1].split("<h2>")[0]
    assert "g/alsofine" in worse and "g/fine " not in worse and "svg/g__alsofine.svg" in worse


def test_bench_shows_the_penrose_svgs_of_an_earlier_run(tmp_path: Path) -> None:
    registry = make_registry(tmp_path)
    # An earlier --run-penrose run: our SVGs in svg/, Penrose's in penrose-svg/.
    earlier = tmp_path / "earlier"
    for folder in ("svg", "penrose-svg"):
        (earlier / folder).mkdir(parents=True)
        (earlier / folder / "g__alsofine.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'/>")
    (earlier / "penrose-results.jsonl").write_text(json.dumps(ok("g/alsofine", -10.0)) + "\n")
    out = tmp_path / "out"
    argv = ["--registry", str(registry), "--out", str(out), "--only", "g/alsofine", "--no-progress",
            "--penrose-results", str(earlier / "penrose-results.jsonl"),
            "--task", "tests.registry.registry_fake_tasks:energetic"]  # fmt: skip
    assert main(argv) == 0
    worse = (out / "report.html").read_text().split("<h2>Worse than Penrose (1)</h2>")[1].split("<h2>")[0]
    assert "earlier/penrose-svg/g__alsofine.svg" in worse and "earlier/svg/" not in worse


def test_bench_rejects_a_zero_start_count(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    registry = make_registry(tmp_path)
    assert main(["--registry", str(registry), "--out", str(tmp_path / "o"), "--starts", "0"]) == 2
    assert "--starts must be at least 1" in capsys.readouterr().err


def test_our_energy_is_judged_at_penroses_final_weight() -> None:
    def ours(objectives: float, penalty: float, rounds: int, violated: int) -> dict:
        energy = objectives + penalty
        return ok(
            "k", energy, violated, EProunds=rounds, objectiveEnergy=objectives, constraintEnergy=penalty
        )

    # nitricacid-lewis: the same squared violation (20.09), ours at λ = 1e13, Penrose's at 1e9.
    penrose = ok("k", 2.009e10, 3, EProunds=6)
    assert verdict(ours(0.0, 2.009e14, 10, 3), penrose) == "same"
    assert verdict(ours(0.0, 3e14, 10, 3), penrose) == "worse"  # 30 against 20.09
    # wet-floor: ours satisfies everything (penalty 732 at λ = 1e12, i.e. 0.0073 at 1e7), Penrose
    # leaves three constraints just violated (112 at 1e7).
    assert verdict(ours(0.0, 731.9, 9, 0), ok("k", 112.3, 3, EProunds=4)) == "better"
    # persistent-homology: both at λ = 1e6: nothing to rescale.
    assert verdict(ours(5.0, 1.36e4, 3, 37), ok("k", 104.9, 19, EProunds=3)) == "worse"
    # An objective part is not rescaled.
    assert verdict(ours(-300.0, 0.0, 5, 0), ok("k", -290.0, 0, EProunds=3)) == "same"
    # Rows without the parts (older runs) are compared as they are.
    assert verdict(ok("k", 2.009e14, 3, EProunds=10), penrose) == "worse"


def test_only_can_be_given_several_times(tmp_path: Path) -> None:
    registry = make_registry(tmp_path)
    out = tmp_path / "out"
    argv = ["--registry", str(registry), "--out", str(out), "--no-progress", "--only", "g/fine",
            "--only", "g/also*", "--task", "tests.registry.registry_fake_tasks:energetic"]  # fmt: skip
    assert main(argv) == 0
    keys = sorted(json.loads(line)["key"] for line in (out / "results.jsonl").read_text().splitlines())
    assert keys == ["g/alsofine", "g/fine"]


def test_satisfied_among_satisfiable_is_counted_apart() -> None:
    # b's violated constraint can never be satisfied (nInfeasible), c's could: the plain count keeps
    # both as unsatisfied, the second count leaves b out, for Penrose too.
    message = "style:7:3: InfeasibleConstraintWarning: ensure onCanvas(`B`.icon) can never be satisfied"
    ours = [ok("a", 0.0, nInfeasible=0), ok("b", 9.0, 1, nInfeasible=1, infeasible=[message]),
            ok("c", 1.0, 1, nInfeasible=0)]  # fmt: skip
    theirs = [ok("a", 0.0), ok("b", 9.0, 1), ok("c", 0.0)]
    pairs = pair_rows(ours, theirs)
    line = headline(pairs)
    assert "constraints satisfied on 1 of 3 (Penrose 2 of 3), on 1 of the 2 with no infeasible" in line
    assert "(Penrose 2);" in line
    quality = dict(summary_tables(pairs))["Layout quality"]
    assert [row[1:] for row in quality.rows[:2]] == [["1 of 3", "2 of 3"], ["1 of 2", "2 of 2"]]
    column = PER_TRIO_HEADER.index("infeasible constraints")
    cells = {row[0]: row[column] for row in per_trio_rows(pairs)}
    assert cells == {
        "a": "0",
        "b": "1: style:7:3: ensure onCanvas(`B`.icon) can never be satisfied",
        "c": "0",
    }


def test_without_a_penrose_reference_the_report_says_so_and_how_to_give_one(tmp_path) -> None:
    from registry.report import write_reports

    ours = [ok("mine/a", 0.0, compileMs=1.0, optimizeMs=1.0), ok("mine/b", 2.0, 1)]
    theirs = [ok("registry/x", 1.0)]  # a reference for other trios only
    for penrose in (theirs, []):
        line = headline(pair_rows(ours, penrose))
        assert line.startswith("No Penrose reference for these trios") and "--penrose-results" in line
        assert "on 0, the same on 0" not in line and "median –" not in line
        assert "every constraint on 1 of the 2 trios that ran" in line
        write_reports(ours, penrose, tmp_path)
        md = (tmp_path / "report.md").read_text()
        assert "No Penrose reference" in md and "--penrose-results" in md
        for chart in ("scatter.svg", "ratios.svg"):
            assert "no Penrose reference" in (tmp_path / chart).read_text()
