"""Why a layout failed (energies.diagnose), as the CLI, the JSON report and the Python API say it.

The oracle of each test is independent of the code: the Style's own text (which line says what),
the Substance's statements (which pairs a block matches), and the optimizer's own energy."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

import service
from energies.diagnose import OBJECTIVE_SHARE
from service.examples import EXAMPLES_DIR, PENROSE_EXAMPLES_DIR

from .test_cli import run_cli

VENN = PENROSE_EXAMPLES_DIR / "set-theory-domain"
CONTAINS = "  ensure contains(y.icon, x.icon, 5)"
DISJOINT = "  ensure disjoint(x.icon, y.icon)"


def contradictory_venn(into: Path) -> Path:
    """Penrose's tree-venn with `disjoint(x.icon, y.icon)` added to its IsSubset block, against its
    `contains(y.icon, x.icon, 5)`: no layout can satisfy both for any subset pair."""
    folder = into / "m7"
    folder.mkdir()
    for name in ("setTheory.domain", "tree.substance", "tree-venn.trio.json"):
        shutil.copyfile(VENN / name, folder / name)
    style = (VENN / "venn.style").read_text()
    assert CONTAINS in style
    (folder / "venn.style").write_text(style.replace(CONTAINS, f"{CONTAINS}\n{DISJOINT}"))
    return folder / "tree-venn.trio.json"


def line_of(path: Path, text: str) -> int:
    return path.read_text().split("\n").index(text) + 1


def subset_pairs() -> set[frozenset[str]]:
    substance = (VENN / "tree.substance").read_text()
    return {frozenset(m) for m in re.findall(r"IsSubset\((\w+), (\w+)\)", substance)}


def test_the_cli_names_both_contradicting_lines_and_the_pairs(tmp_path):
    trio = contradictory_venn(tmp_path)
    style = trio.parent / "venn.style"
    report = tmp_path / "r.json"
    done = run_cli("render", str(trio), "-o", str(tmp_path / "x.svg"), "--report", str(report))
    assert done.returncode == 0, done.stderr
    err = done.stderr
    c, d = line_of(style, CONTAINS), line_of(style, DISJOINT)
    # each violated line by file:line:column, with the function
    assert f"{style}:{c}:3: ensure contains" in err and f"{style}:{d}:3: ensure disjoint" in err
    said = next(x for x in err.splitlines() if "contradiction:" in x)
    assert f"{style}:{c}:3 contains and {style}:{d}:3 disjoint cannot both hold" in said
    named = re.search(r"for the same shapes \((.*?)( and (\d+) more)?\)$", said)
    shown = [frozenset(p.split(", ")) for p in named[1].split("; ")]
    assert set(shown) <= subset_pairs() and len(shown) + int(named[3] or 0) == len(subset_pairs())
    assert "another --variation" not in err  # a contradiction is not luck
    # the JSON report: one conflict per subset pair, exactly, each of the two lines
    why = json.loads(report.read_text())["diagnosis"]
    goals = why["goals"]
    pairs = set()
    for conflict in why["conflicts"]:
        a, b = goals[conflict["a"]], goals[conflict["b"]]
        assert {a["line"], b["line"]} == {c, d} and {a["function"], b["function"]} == {"contains", "disjoint"}
        assert conflict["known"] and a["substance"] and set(a["substance"]) == set(b["substance"])
        pairs.add(frozenset(a["substance"]))
    assert pairs == subset_pairs()


def test_each_goal_carries_its_share_of_the_optimizers_energy(tmp_path):
    rendering = service.render_file(contradictory_venn(tmp_path))
    opt = rendering.optimization
    why = rendering.diagnosis
    assert why.n_violated == opt.n_violated > 0
    constraints = [g for g in why.goals if g.kind == "constraint"]
    assert len(constraints) == opt.n_violated
    # venn's objectives are norms (>= 0), so the energy is the sum of the terms' absolute values
    for g in constraints:
        assert g.share == pytest.approx(opt.weight * g.value**2 / opt.energy, rel=1e-6)
        assert g.value == pytest.approx(opt.goals[len(opt.goals.values[0]) + g.index].value)
    assert sorted((g.share for g in why.goals), reverse=True) == [g.share for g in why.goals]
    assert all(g.shapes and g.substance for g in constraints)


def test_goals_that_pull_against_each_other_are_found_by_their_gradients(tmp_path):
    # `r > 150` and `r < 100` on one circle: no table knows the pair, the gradients oppose
    trio = EXAMPLES_DIR / "sets.trio.json"
    spec = json.loads(trio.read_text())
    style = (EXAMPLES_DIR / "sets.style").read_text()
    style = style.replace("ensure s.circle.r > 30", "ensure s.circle.r > 150").replace(
        "ensure s.circle.r < 160", "ensure s.circle.r < 100"
    )
    for suffix in ("domain", "substance"):
        shutil.copyfile(EXAMPLES_DIR / f"sets.{suffix}", tmp_path / f"sets.{suffix}")
    (tmp_path / "sets.style").write_text(style)
    (tmp_path / "sets.trio.json").write_text(json.dumps(spec))
    why = service.render_file(tmp_path / "sets.trio.json", portfolio=None).diagnosis
    found = [(why.goals[c.a], why.goals[c.b]) for c in why.conflicts if not c.known]
    radius = {a.shapes for a, b in found if {a.function, b.function} == {"greaterThan", "lessThan"}}
    # d(r - 150)/dr = -d(100 - r)/dr: every circle whose two radius bounds are both violated
    both = [{g.shapes for g in why.goals if g.function == f} for f in ("greaterThan", "lessThan")]
    assert radius == both[0] & both[1] and radius
    assert all(len(shapes) == 1 and shapes[0].endswith(".circle") for shapes in radius)


def test_a_clean_layout_lists_no_constraint():
    why = service.render_file(EXAMPLES_DIR / "sets.trio.json").diagnosis
    assert why.n_violated == 0 and not why.conflicts
    assert all(g.kind == "objective" and g.share >= OBJECTIVE_SHARE for g in why.goals)
