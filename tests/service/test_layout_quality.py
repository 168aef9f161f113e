"""The families whose layouts were worse than Penrose's, against Penrose's own results and against
what their Styles ask for, with the default settings (Penrose's L-BFGS, a portfolio of starts).
A mutation check: with `PortfolioSettings(starts=1)` and the L-BFGS-B driver, fig1 fails.

Oracles: Penrose's final energy and evaluation count on the same trio (../shared/penrose-reference),
judged by the harness's rule (registry.report.verdict), and the geometry each Style encourages:
graph labels 5 px from their dots.
"""

from __future__ import annotations

import json
import math

import pytest

from energies.optimize.portfolio import DEFAULT_STARTS
from registry.report import verdict
from service.pipeline import Rendering
from service.render.concrete import concrete_shapes

from .service_support import HAS_REGISTRY, REFERENCE, render_registry_trio

pytestmark = pytest.mark.skipif(not HAS_REGISTRY, reason="needs ../shared registry data")


def penrose_row(key: str) -> dict:
    lines = (REFERENCE / "results.jsonl").read_text().splitlines()
    rows = (json.loads(line) for line in lines if line.strip())
    return next(r for r in rows if r["key"] == key)


def render(key: str) -> Rendering:
    return render_registry_trio(key)


def our_row(r: Rendering) -> dict:
    opt = r.optimization
    return {
        "status": "ok",
        "energy": opt.energy,
        "objectiveEnergy": opt.objective_energy,  # the parts, so the verdict compares at Penrose's λ
        "constraintEnergy": opt.energy - opt.objective_energy,
        "nViolated": opt.n_violated,
        "EProunds": opt.ep_rounds,
    }


def shapes_by_name(r: Rendering) -> dict:
    return {s.name: s for s in concrete_shapes(r.diagram.shapes, r.optimization.x)}


def box_to_circle(text, dot) -> float:
    """Distance from a circle's edge to an axis-aligned text box (0 when they touch or overlap)."""
    (cx, cy), (tx, ty) = dot.props["center"], text.props["center"]
    dx = max(abs(cx - tx) - text.props["width"] / 2, 0.0)
    dy = max(abs(cy - ty) - text.props["height"] / 2, 0.0)
    return max(math.hypot(dx, dy) - dot.props["r"], 0.0)


@pytest.mark.parametrize("key", ["graph-domain/textbook/sec1/fig1", "graph-domain/textbook/sec1/fig11"])
def test_graph_labels_sit_by_their_dots(key: str) -> None:
    # Before: labels 60-70 px from their dots, stacked on each other (energy 8,051 against -287).
    r = render(key)
    # The Style's `maximal(min(labelDist, rectLineDist(...)))` terms make a layout with every label by
    # its dot and off the edges negative (Penrose: -287 and -585); one label 60 px away adds 55² > 3,000.
    assert r.optimization.n_violated == 0 and r.optimization.energy < 0
    shapes = shapes_by_name(r)
    dots = {name.rsplit(".", 1)[0]: s for name, s in shapes.items() if name.endswith(".dot")}
    texts = {name.rsplit(".", 1)[0]: s for name, s in shapes.items() if name.endswith(".text")}
    assert dots and dots.keys() == texts.keys()
    far = {
        v: round(box_to_circle(texts[v], dots[v]), 1) for v in dots if box_to_circle(texts[v], dots[v]) > 10
    }
    assert not far  # the Style encourages 5 px (num.labelDist)


def test_hypergraph_satisfies_every_constraint_at_penroses_energy() -> None:
    # Before: 30 constraints violated (largest 22) against none for Penrose. (Its hyperedges' heights
    # e.yt - e.yb may end negative, drawn flat, in Penrose's layouts too: 6-8 of 12 on seeds s1-s4;
    # the Style's constraints hold either way.)
    key = "hypergraph/hypergraph"
    r = render(key)
    assert r.optimization.n_violated == 0
    assert verdict(our_row(r), penrose_row(key)) in ("same", "better")


def test_nitric_acid_takes_a_penrose_sized_run() -> None:
    # Before: 1,991,578 evaluations in 25-35 s, atoms on top of each other (Penrose: 823).
    key = "molecules/nitricacid-lewis"
    r = render(key)
    assert r.portfolio is not None
    per_start = r.portfolio.evaluations / len(r.portfolio.starts)
    assert per_start < 3 * penrose_row(key)["nGradEvals"]
    assert verdict(our_row(r), penrose_row(key)) in ("same", "better")


def test_stochastic_process_keeps_its_least_violated_layout() -> None:
    # The walk (the Style's own draw) overhangs the canvas on variation ~2 whatever the start: every
    # start leaves 3 constraints violated by at most 0.36 px but one, which leaves 5 (energy 3.0e6 at
    # weight 1e5, where the others report 3.9e4). An earlier session's starts ended with one violated
    # by 5.5 px instead, and counting violated constraints kept it. Oracle: Penrose's median layout
    # over the same 10 variations (its Node run of ~8: energy 1,356,680, 1 constraint violated by
    # 3.68 px, after 2 exterior-point rounds) and the harness's rule.
    r = render_registry_trio("stochastic-process/stochastic-process", "~2")
    assert r.portfolio is not None and len(r.portfolio.starts) == DEFAULT_STARTS  # none ends the search
    assert any(s.n_violated > r.optimization.n_violated for s in r.portfolio.starts)
    assert r.optimization.max_constraint_violation < 0.36
    median = {"status": "ok", "energy": 1356680.0068149737, "EProunds": 2}
    assert verdict(our_row(r), median) in ("same", "better")


def test_graph_fig11_7_keeps_the_start_with_labels_by_their_dots() -> None:
    # Variation ~7: start 5 ends with labels on edges (objectives 3.9, weight 1e9), start 6 with every
    # label by its dot (objectives -530, a 2.6e-6 residual reported at its own weight 1e15 as 6,229).
    # Ranked at its own weight, start 5 was kept and the variation judged worse. Oracle: Penrose's median
    # layout over the same 10 variations (the harness's lower middle, its Node run of ~1: -504.02 after
    # 5 exterior-point rounds) and the harness's rule.
    r = render_registry_trio("graph-domain/textbook/sec1/fig11", "~7")
    assert r.optimization.n_violated == 0
    median = {"status": "ok", "energy": -504.0205317542853, "EProunds": 5}
    assert verdict(our_row(r), median) in ("same", "better")
