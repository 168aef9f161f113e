"""benchmarks/scaling_trios.py and benchmarks/scaling.py: the generated trios parse and match into
diagrams whose shape and goal counts are the ones derived by hand from each Style and Substance;
the generators are deterministic; the driver records runs, stops a series at a timeout, and
summarizes rows as documented."""

from __future__ import annotations

import importlib.util
import json
import math
from collections import Counter
from pathlib import Path

import pytest
import scaling
import scaling_trios
from scaling_trios import graph_edges, scaled_canvas, trio

from energies.diagram import count_goals
from energies.diagram_build import build_diagram

REGISTRY = scaling_trios.DEFAULT_REGISTRY
needs_registry = pytest.mark.skipif(
    not (REGISTRY / "registry.json").is_file(), reason="needs ../shared/penrose-registry"
)


def build(series: str, n: int):
    t = trio(series, n, 0, REGISTRY)
    return build_diagram(t.domain, t.substance, t.style, t.variation)


def counts(diagram) -> tuple[Counter, int, int]:
    kinds = Counter(s.kind for s in diagram.shapes)
    return kinds, count_goals(diagram.goals, "constraint"), count_goals(diagram.goals, "objective")


def pairs(n: int) -> int:
    return n * (n - 1) // 2


@pytest.mark.parametrize("n", [4, 8, 16, 100, 1024])
def test_graph_edges_are_a_spanning_tree_plus_chords(n: int) -> None:
    edges = graph_edges(n)
    assert len(edges) == n - 1 + n // 4
    assert all(u != v and 0 <= u < n and 0 <= v < n for u, v in edges)
    assert len({frozenset(e) for e in edges}) == len(edges)  # a simple graph
    parent = list(range(n))  # the first n - 1 edges join every vertex: union-find over them

    def root(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    for u, v in edges[: n - 1]:
        assert root(u) != root(v)  # a tree never closes a cycle
        parent[root(u)] = root(v)
    assert len({root(i) for i in range(n)}) == 1


@needs_registry
@pytest.mark.parametrize("n", [8, 16])
def test_graph_diagram_counts(n: int) -> None:
    e = n - 1 + n // 4
    kinds, constraints, objectives = counts(build("graph", n))
    assert kinds == {"Circle": n, "Text": n, "Line": e}
    # disjoint labels per pair; onCanvas per dot, label and edge line
    assert constraints == pairs(n) + 2 * n + e
    # shapeDistance per vertex, repulsion per pair, edge length per edge, rectLineDist for each
    # edge's two ends (one match per edge each: a symmetric Edge matched both ways binds one
    # set of objects) and for every edge and third vertex
    assert objectives == n + pairs(n) + e + 2 * e + e * (n - 2)


@needs_registry
@pytest.mark.parametrize("n", [8, 16])
def test_venn_diagram_counts(n: int) -> None:
    g = n // 4
    kinds, constraints, objectives = counts(build("venn", n))
    assert kinds == {"Circle": n, "Equation": n}
    # contains(icon, label) and 2 onCanvas per set; 2 per IsSubset (3 a group); 1 per NotIntersecting (3)
    assert constraints == 3 * n + 2 * 3 * g + 3 * g
    assert objectives == n  # label centred in its circle


@needs_registry
@pytest.mark.parametrize("n", [8, 13])
def test_tree_diagram_counts(n: int) -> None:
    kinds, constraints, objectives = counts(build("tree", n))
    assert kinds == {"Text": n, "Circle": n, "Line": n - 1, "Rectangle": 1}
    assert constraints == 2 * n + (n - 1) + 1  # onCanvas: label, bounds, arrow, the frame
    assert objectives == pairs(n) + 2 * (n - 1)  # notTooClose per pair; above and x-alignment per arrow


@needs_registry
def test_circles_diagram_counts() -> None:
    kinds, constraints, objectives = counts(build("circles", 20))
    assert kinds == {"Circle": 20}
    assert (constraints, objectives) == (pairs(20) + 20, 0)


@needs_registry
@pytest.mark.parametrize("series", scaling_trios.SERIES)
def test_trios_are_deterministic(series: str) -> None:
    a, b, other = trio(series, 32, 0, REGISTRY), trio(series, 32, 0, REGISTRY), trio(series, 32, 3, REGISTRY)
    assert a == b
    assert (a.domain, a.substance, a.style) == (other.domain, other.substance, other.style)
    assert a.variation != other.variation
    assert trio(series, 64, 0, REGISTRY).substance != a.substance


@needs_registry
def test_canvas_grows_with_sqrt_n() -> None:
    style = (REGISTRY / "graph-domain" / "simple-graph.style").read_text()
    assert scaled_canvas(style, 8) == style
    grown = scaled_canvas(style, 32)  # sqrt(32 / 8) = 2
    assert grown.replace("width = 800", "width = 400").replace("height = 800", "height = 400") == style
    assert build("graph", 32).canvas == (800, 800)
    assert build("venn", 72).canvas == (2400, 2100)  # 800 x 700 times 3
    assert build("circles", 72).canvas == (800, 700)  # that Style's canvas stays
    assert build("circles-room", 72).canvas == (800, 700)  # the same up to 1,000 circles,
    assert trio("circles-room", 2000, 0, REGISTRY).style.count("width = 1131") == 1  # 800 sqrt(2)
    assert trio("circles-room", 2000, 0, REGISTRY).style.count("height = 990") == 1  # 700 sqrt(2)
    assert trio("circles-room", 2000, 0, REGISTRY).substance == trio("circles", 2000, 0, REGISTRY).substance


def test_scaled_canvas_refuses_what_it_cannot_scale() -> None:
    with pytest.raises(ValueError, match="0 canvas blocks"):
        scaled_canvas("forall T t { }", 32)
    with pytest.raises(ValueError, match="1 of width and height"):
        scaled_canvas("canvas { width = 400\n height = canvas.width }", 32)
    with pytest.raises(ValueError, match="multiple of 4"):
        scaling_trios.venn_substance(10)


def test_table_gives_medians_ranges_and_timeouts() -> None:
    def row(impl: str, status: str, energy: float = 0.0, total: float = 0.0) -> dict:
        done = {"total_s": total, "compile_s": 0.5, "optimize_s": total - 0.5, "energy": energy}
        done |= {"cpu_s": 0.9 * total} if impl == "ours" else {}
        base = {"series": "graph", "n": 8, "impl": impl, "status": status, "timeout": 60}
        return {**base, **done, "constraints": 5, "objectives": 7, "violated": 0} if status == "ok" else base

    rows = [row("ours", "ok", 3.0, 1.0), row("ours", "ok", 1.0, 4.0), row("ours", "ok", 2.0, 2.0)]
    rows += [row("penrose", "timeout"), row("penrose", "ok", -5.0, 9.0), row("penrose", "ok", math.inf, 7.0)]
    line = scaling.table(rows, 60).splitlines()[2].split(" | ")
    assert line[2:9] == ["12", "0.50", "1.50", "2.00", "1.80", "2 (1 to 3)", "0"]
    assert line[10:] == ["3 ok", "8.00", "inf (-5 to inf)", "0", "2 ok, 1 timeout |"]
    only_timeouts = scaling.table([row("ours", "timeout")], 60).splitlines()[2]
    assert "| > 60 |  | - | - |" in only_timeouts


@needs_registry
def test_driver_records_runs_and_stops_at_a_timeout(tmp_path: Path) -> None:
    out = tmp_path / "out"
    common = ["--registry", str(REGISTRY), "--out", str(out), "--pictures", "8"]
    scaling.main(["--series", "circles", "--sizes", "8", *common])
    # a time limit no layout meets: the first size times out and the next one is not run
    scaling.main(["--series", "graph", "--sizes", "8", "16", "--timeout", "0.001", *common])
    rows = [json.loads(line) for line in (out / "scaling.jsonl").read_text().splitlines()]
    assert [(r["series"], r["n"], r["status"]) for r in rows] == [
        ("circles", 8, "ok"),
        ("graph", 8, "timeout"),
    ]
    circles = rows[0]
    assert (circles["constraints"], circles["objectives"], circles["violated"]) == (pairs(8) + 8, 0, 0)
    assert circles["energy"] == pytest.approx(0.0, abs=1e-6)  # 8 small circles fit apart
    assert "time limit" in rows[1]["error"]
    pictures = out / "pictures"
    assert (pictures / "circles-8-ours.svg").read_text().count("<circle") == 8
    assert (pictures / "circles-8-ours.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    if importlib.util.find_spec("matplotlib") is not None:  # the bench extra; without it, no plot
        assert (out / "scaling.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_later_row_files_replace_earlier_rows_of_a_size(tmp_path: Path) -> None:
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    rows = [{"series": "venn", "n": n, "impl": "ours", "variation": 0, "status": "timeout"} for n in (8, 16)]
    first.write_text("".join(json.dumps(r) + "\n" for r in rows))
    rerun = [{**rows[1], "variation": k, "status": "ok"} for k in range(3)]
    second.write_text("".join(json.dumps(r) + "\n" for r in rerun))
    got = sorted((r["n"], r["variation"], r["status"]) for r in scaling.read_rows([first, second]))
    assert got == [(8, 0, "timeout"), (16, 0, "ok"), (16, 1, "ok"), (16, 2, "ok")]
