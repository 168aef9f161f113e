"""The bench command end to end with test-only tasks, and the report's numbers and charts."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from registry.bench import main
from registry.report import histogram_svg, pair_rows, quartiles, scatter_svg, summary_tables


def make_registry(root: Path) -> Path:
    registry = root / "reg"
    (registry / "g").mkdir(parents=True)
    for stem, mode in [("fine", "ok"), ("alsofine", "ok"), ("boom", "raise")]:
        (registry / "g" / f"{stem}.sub").write_text("")
        trio = {
            "substance": f"{stem}.sub",
            "style": f"{stem}.sub",
            "domain": f"{stem}.sub",
            "variation": mode,
        }
        (registry / "g" / f"{stem}.trio.json").write_text(json.dumps(trio))
    index = {"g/fine": {"name": "Fine"}, "g/alsofine": {}, "g/boom": {}, "g/absent": {}, "h/skip": {}}
    (registry / "registry.json").write_text(json.dumps(index))
    return registry


def make_penrose(root: Path) -> Path:
    reference = root / "ref"
    (reference / "svg").mkdir(parents=True)
    rows = [
        {"key": "g/fine", "status": "ok", "totalMs": 24.0, "compileMs": 20.0, "optimizeMs": 2.5,
         "renderMs": 1.5, "nViolated": 1, "maxConstrViolation": 0.2},
        {"key": "g/alsofine", "status": "ok", "totalMs": 300.0, "compileMs": 250.0, "optimizeMs": 40.0,
         "renderMs": 10.0, "nViolated": 0, "maxConstrViolation": 0.0},
        {"key": "g/boom", "status": "ok", "totalMs": 50.0},
        {"key": "g/absent", "status": "compile-error", "error": "nope"},
    ]  # fmt: skip
    (reference / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (reference / "svg" / "g__fine.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'/>")
    return reference / "results.jsonl"


def test_bench_command_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    registry, penrose = make_registry(tmp_path), make_penrose(tmp_path)
    out = tmp_path / "out"
    task = "tests.registry.registry_fake_tasks:behave"
    argv = ["--registry", str(registry), "--out", str(out), "--jobs", "2", "--only", "g/*", "--timeout", "30",
            "--penrose-results", str(penrose), "--task", task]  # fmt: skip
    assert main(argv) == 0
    rows = {r["key"]: r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}
    assert {k: r["status"] for k, r in rows.items()} == {
        "g/fine": "ok", "g/alsofine": "ok", "g/boom": "crash", "g/absent": "compile-error",
    }  # fmt: skip
    assert "g/absent.trio.json" in rows["g/absent"]["error"]
    svg_file = out / "svg" / "g__fine.svg"
    assert rows["g/fine"]["svgBytes"] == svg_file.stat().st_size and "svg" not in rows["g/fine"]
    assert rows["g/fine"]["name"] == "Fine" and rows["g/fine"]["timeoutSeen"] == 30.0
    # Progress: the tqdm bar shows running counts.
    err = capsys.readouterr().err
    assert "ok=2" in err and "crash=1" in err

    md = (out / "report.md").read_text()
    assert "| ok | 2 | 3 |" in md and "| crash | 1 | 0 |" in md and "| compile-error | 1 | 1 |" in md
    # totalMs: ours 10·len(key)+6 = 66 for g/fine (Penrose 24) and 106 for g/alsofine (Penrose 300).
    ratio_fine, ratio_also = 66 / 24, 106 / 300
    assert f"{ratio_fine:.3g}" in md and f"{ratio_also:.3g}" in md
    # compile+optimize: ours 65 and 105 (quartiles 75 / 85 / 95) against Penrose's 22.5 and 290.
    low, high = sorted([65 / 22.5, 105 / 290])
    expected = " / ".join(
        f"{v:.3g}" for v in (low + (high - low) / 4, (low + high) / 2, high - (high - low) / 4)
    )
    assert f"| compileMs+optimizeMs | 75 / 85 / 95 | 89.4 / 156 / 223 | {expected} | 2 |" in md
    html = (out / "report.html").read_text()
    assert html.count("<circle") == 2  # one point per trio both ran ok
    for link in re.findall(r"<img src='([^']+)'", html):
        assert (out / link).resolve().is_file()
    assert "svg/g__fine.svg" in html and "ref/svg/g__fine.svg" in html


def test_bench_rejects_bad_arguments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    registry = make_registry(tmp_path)
    assert main(["--registry", str(registry), "--out", str(tmp_path / "o"), "--only", "zzz*"]) == 2
    assert "matches --only" in capsys.readouterr().err
    assert main(["--registry", str(registry), "--out", str(tmp_path / "o"), "--task", "nosuch:thing"]) == 2
    assert "--task 'nosuch:thing'" in capsys.readouterr().err
    assert main(["--registry", str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    assert "registry.json" in capsys.readouterr().err


def test_start_processes_default_to_the_cores_left_per_job(tmp_path: Path) -> None:
    registry = make_registry(tmp_path)
    task = "tests.registry.registry_fake_tasks:parallel"

    def seen(*extra: str) -> set[int]:
        out = tmp_path / f"out{len(extra)}"
        argv = ["--registry", str(registry), "--out", str(out), "--only", "g/fine", "--task", task, *extra]
        assert main(argv) == 0
        rows = (out / "results.jsonl").read_text().splitlines()
        return {json.loads(line)["processesSeen"] for line in rows}

    assert seen("--jobs", "2") == {max(1, len(os.sched_getaffinity(0)) // 2)}
    assert seen("--jobs", "1", "--start-processes", "3") == {3}
    behave = "tests.registry.registry_fake_tasks:behave"  # a task that takes no processes
    argv = ["--registry", str(registry), "--out", str(tmp_path / "o"), "--task", behave]
    assert main([*argv, "--start-processes", "2"]) == 2


def test_quartiles_by_hand() -> None:
    assert quartiles([5, 1, 4, 2, 3]) == (2, 3, 4)
    assert quartiles([1, 2, 3, 4]) == (1.75, 2.5, 3.25)
    assert quartiles([7.0]) == (7.0, 7.0, 7.0) and quartiles([]) is None
    assert quartiles([1.0, float("nan"), 3.0]) == (1.5, 2.0, 2.5)


def test_ratios_and_tables_only_count_trios_both_ran_ok() -> None:
    ours = [
        {"key": "a", "status": "ok", "totalMs": 30.0, "nViolated": 0},
        {"key": "b", "status": "ok", "totalMs": 10.0, "nViolated": 2},
        {"key": "c", "status": "timeout", "totalMs": None, "nViolated": None},
    ]
    theirs = [
        {"key": "a", "status": "ok", "totalMs": 10.0, "nViolated": 0},
        {"key": "b", "status": "compile-error"},
        {"key": "c", "status": "ok", "totalMs": 5.0, "nViolated": 0},
    ]
    pairs = pair_rows(ours, theirs)
    assert [p.ratio("totalMs") for p in pairs] == [3.0, None, None]
    tables = dict(summary_tables(pairs))
    times = {row[0]: row for row in tables["Times"].rows}
    assert times["totalMs"][3] == "3 / 3 / 3" and times["totalMs"][4] == "1"
    assert times["compileMs+optimizeMs"][4] == "0"  # neither side has those fields here
    assert tables["Layout quality"].rows[0][1:] == ["1 of 2", "2 of 2"]


def test_charts_draw_every_point_and_bin() -> None:
    svg = scatter_svg([(1.0, 2.0, "a"), (100.0, 50.0, "b"), (0.0, 1.0, "dropped")], xlabel="x", ylabel="y")
    assert svg.count("<circle") == 2
    hist = histogram_svg([0.5, 0.6, 2.0, 30.0], label="r", bins_per_decade=1)
    counts = [int(n) for n in re.findall(r": (\d+)</title></rect>", hist)]
    # decades [0.1, 1): 2, [1, 10): 1, [10, 100): 1
    assert counts == [2, 1, 1]
