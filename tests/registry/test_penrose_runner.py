"""The Penrose side of the bench: the task's process handling (with fake runners, always) and real
Penrose in Node on registry trios checked against the reference results (when installed)."""

from __future__ import annotations

import dataclasses
import functools
import json
import re
import shutil
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from energies.text.labels import measure_text
from registry.bench import main
from registry.penrose_task import (
    PENROSE_PACKAGE,
    RUNNER_DIR,
    PenroseSetupError,
    ensure_runner_installed,
    our_text_sizes,
    parse_runner_output,
    penrose_font_rule,
    penrose_task,
    run_penrose_process,
    trio_payload,
)
from registry.runner import run_isolated
from service.trios import TrioSpec, load_registry, svg_name

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
REGISTRY = SHARED / "penrose-registry"
REFERENCE = SHARED / "penrose-reference"

# A stand-in for `node run.mjs`, in Python so this part runs without Node: it behaves according to
# the trio's variation and echoes what it was sent.
FAKE_RUNNER = textwrap.dedent(
    """
    import json, sys, time
    trio = json.load(sys.stdin)
    mode = trio["variation"]
    print("penrose says hello")  # noise before the row, as Penrose's own logging could be
    if mode == "hang":
        time.sleep(600)
    if mode == "die":
        print("something broke", file=sys.stderr)
        sys.exit(3)
    if mode == "garbage":
        print("{not json")
        sys.exit(0)
    row = {"status": "ok", "compileMs": 1.5, "echo": trio, "svg": "<svg/>"}
    print(json.dumps(row))
    """
)


def fake_trio(variation: str, key: str = "k/fake") -> TrioSpec:
    return TrioSpec(key, None, "type Set", "Set A", "canvas {}", variation, ("W1",), Path("/some/dir"))


@pytest.fixture
def fake_runner(tmp_path: Path) -> list[str]:
    script = tmp_path / "fake_runner.py"
    script.write_text(FAKE_RUNNER)
    return [sys.executable, str(script)]


def test_the_runner_receives_the_trio_and_its_row_is_parsed(fake_runner: list[str], tmp_path: Path) -> None:
    trio = fake_trio("ok")
    row = run_penrose_process(trio_payload(trio), 30, fake_runner, tmp_path)
    assert row["status"] == "ok" and row["compileMs"] == 1.5 and row["svg"] == "<svg/>"
    assert row["echo"] == {
        "key": "k/fake", "domain": "type Set", "substance": "Set A", "style": "canvas {}", "variation": "ok",
        "excludeWarnings": ["W1"], "baseDir": "/some/dir",
    }  # fmt: skip


def test_a_hung_runner_is_killed_at_the_timeout(fake_runner: list[str], tmp_path: Path) -> None:
    begin = time.perf_counter()
    row = run_penrose_process(trio_payload(fake_trio("hang")), 0.5, fake_runner, tmp_path)
    assert row["status"] == "timeout" and "killed after 0.5s" in row["error"]
    assert time.perf_counter() - begin < 10


def test_a_runner_without_a_row_is_a_crash_with_its_output(fake_runner: list[str], tmp_path: Path) -> None:
    died = run_penrose_process(trio_payload(fake_trio("die")), 30, fake_runner, tmp_path)
    assert died["status"] == "crash" and "exited with status 3" in died["error"]
    assert "something broke" in died["error"] and "penrose says hello" in died["error"]
    garbage = run_penrose_process(trio_payload(fake_trio("garbage")), 30, fake_runner, tmp_path)
    assert garbage["status"] == "crash" and "without a JSON row" in garbage["error"]
    missing = run_penrose_process({}, 30, [str(tmp_path / "no-such-node")], tmp_path)
    assert missing["status"] == "crash" and "could not start" in missing["error"]


def test_parse_runner_output_distrusts_an_ok_row_from_a_failed_process() -> None:
    compile_error = parse_runner_output('{"status": "compile-error", "error": "x"}\n\n', "", 0)
    assert compile_error == {"status": "compile-error", "error": "x"}
    failed = parse_runner_output('{"status": "ok"}', "", 1)
    assert failed["status"] == "crash" and "status 1" in failed["error"]
    killed = parse_runner_output("", "", -9)
    assert killed["status"] == "crash" and "signal 9" in killed["error"]
    assert parse_runner_output('["status"]', "", 0)["status"] == "crash"


def test_font_rule_is_the_one_penrose_sets_on_its_canvas() -> None:
    # Penrose's toFontRule: `${fontStretch} ${fontStyle} ${fontVariant} ${fontWeight} ${fontSize}
    # ${fontFamily}`, then `/${lineHeight}` when lineHeight is not empty (its defaults are "").
    unset = dict.fromkeys(("fontStretch", "fontStyle", "fontVariant", "fontWeight", "lineHeight"), "")
    assert penrose_font_rule({**unset, "fontSize": "18px", "fontFamily": "Palatino"}) == "    18px Palatino"
    props = {**unset, "fontWeight": "bold", "fontSize": "9px", "fontFamily": "Menlo", "lineHeight": "2"}
    assert penrose_font_rule(props) == "   bold 9px Menlo/2"


def test_our_text_sizes_are_keyed_by_penroses_font_rule() -> None:
    style = """
    canvas { width = 200
    height = 100 }
    forall Set x {
      x.t = Text { string: "abc"  fontFamily: "monospace"  fontSize: "9px" }
      x.g = Group { shapes: [x.t] }
    }
    """
    trio = TrioSpec("k/menlo", None, "type Set", "Set A\nSet B", style, "v", (), Path("."))
    sizes = our_text_sizes(trio)
    assert sizes is not None and len(sizes) == 1  # two labels of one text and font: one size
    (size,) = sizes
    assert size["font"] == "    9px monospace" and size["text"] == "abc"
    assert size["width"] == measure_text("abc", "monospace", "9px").width and size["ascent"] > 0
    assert our_text_sizes(dataclasses.replace(trio, substance="Set A\nSet A")) is None  # no diagram


def test_missing_node_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no node, no npm
    with pytest.raises(PenroseSetupError, match="node and npm not found"):
        ensure_runner_installed(RUNNER_DIR)
    with pytest.raises(PenroseSetupError, match="not a Penrose runner folder"):
        ensure_runner_installed(tmp_path)


# ---------------------------------------------------------------------------------------------
# Real Penrose (skipped unless `npm install` has been run in registry/penrose_runner).

needs_penrose = pytest.mark.skipif(
    shutil.which("node") is None or not (RUNNER_DIR / PENROSE_PACKAGE).is_file() or not REGISTRY.is_dir(),
    reason="needs node, `npm install` in registry/penrose_runner, and ../shared/penrose-registry",
)
# Small trios: one of circles only, one whose layout depends on measured Text labels.
E2E_KEYS = ("set-theory-domain/tree-venn", "set-theory-domain/tree-tree")


def reference_row(key: str) -> dict:
    rows = (json.loads(line) for line in (REFERENCE / "results.jsonl").read_text().splitlines() if line)
    return next(r for r in rows if r["key"] == key)


def titles(svg: str) -> set[str]:
    return set(re.findall(r"<title>([^<]*)</title>", svg))


@needs_penrose
@pytest.mark.parametrize("key", E2E_KEYS)
def test_real_penrose_matches_the_reference_run(key: str) -> None:
    (trio,) = load_registry(REGISTRY, key)
    row = run_isolated(penrose_task, trio, timeout=120)
    expected = reference_row(key)
    assert row["status"] == "ok", row["error"]
    for field in (
        "nConstraints",
        "nObjectives",
        "nVarying",
        "nShapes",
        "optStages",
        "nViolated",
        "optStatus",
    ):
        assert row[field] == expected[field], field
    assert titles(row["svg"]) == titles((REFERENCE / "svg" / svg_name(key)).read_text())
    assert row["nGradEvals"] > 0 and 0 < row["optFirstGradMs"] <= row["optimizeMs"]
    assert row["totalMs"] == pytest.approx(row["compileMs"] + row["optimizeMs"] + row["renderMs"])


@needs_penrose
def test_penrose_given_our_label_sizes_starts_from_our_energy() -> None:
    # catmull-rom's code box holds Menlo text, which both measure as DejaVu Sans, the runner by whole
    # pixels (the reference machine's hinting), we by the glyphs' exact extents. Given our sizes,
    # Penrose's own energy of its initial state (same seed, same draws) is ours; measured its way,
    # it is not.
    from energies.compile import compile_problem
    from energies.diagram_build import build_diagram

    (trio,) = load_registry(REGISTRY, "curve-examples/catmull-rom/catmull-rom")
    diagram = build_diagram(trio.domain, trio.substance, trio.style, trio.variation, trio.exclude_warnings)
    ours = compile_problem(diagram).energy_and_grad(np.array(diagram.unknowns.x0), 0, 1e3)[0]
    measured = run_isolated(penrose_task, trio, timeout=120)
    given = run_isolated(functools.partial(penrose_task, label_sizes="ours"), trio, timeout=120)
    assert measured["status"] == given["status"] == "ok", (measured["error"], given["error"])
    assert measured["givenTextSizes"] == 0 and given["givenTextSizes"] > 0
    assert measured["energyInitial"] != pytest.approx(ours, rel=1e-6)
    assert given["energyInitial"] == pytest.approx(ours, rel=1e-12)


@needs_penrose
def test_bench_run_penrose_writes_its_rows_and_uses_them(tmp_path: Path) -> None:
    out = tmp_path / "out"
    argv = ["--registry", str(REGISTRY), "--out", str(out), "--only", E2E_KEYS[0], "--run-penrose",
            "--no-progress", "--task", "tests.registry.registry_fake_tasks:behave"]  # fmt: skip
    assert main(argv) == 0
    (row,) = [json.loads(line) for line in (out / "penrose-results.jsonl").read_text().splitlines()]
    assert row["key"] == E2E_KEYS[0] and row["status"] == "ok" and "svg" not in row
    svg = (out / "penrose-svg" / svg_name(E2E_KEYS[0])).read_text()
    assert row["svgBytes"] == len(svg.encode()) and titles(svg)
    report = (out / "report.md").read_text()
    assert "penrose-svg/" + svg_name(E2E_KEYS[0]) in report  # the gallery shows the fresh run
