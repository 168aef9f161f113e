"""Starts that follow the Substance's structure: the embedding against graphs whose drawing is known
(a path is a line, a grid a grid), the start against the diagram it is made for.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial import procrustes

from energies.diagram_build import build_diagram
from energies.optimize import structure
from energies.optimize.portfolio import portfolio_starts
from energies.shapes import rng_for

DOMAIN = "type Vertex\npredicate Edge(Vertex, Vertex)\n"
STYLE = """canvas { width = 800 height = 600 }
forall Vertex v {
  v.dot = Circle { r : 4 }
  v.text = Text { string : v.label }
}
forall Vertex u; Vertex v where Edge(u, v) {
  encourage vdist(u.dot.center, v.dot.center) < 30
}
"""


def path_substance(n: int) -> str:
    names = [f"v{i}" for i in range(n)]
    return "Vertex " + ", ".join(names) + "\n" + "".join(f"Edge(v{i}, v{i + 1})\n" for i in range(n - 1))


def test_a_path_is_embedded_as_a_line_in_order() -> None:
    n = 30
    z = structure.embed(n, [(i, i + 1) for i in range(n - 1)], rng_for("path"))
    along = z @ np.linalg.svd(z - z.mean(axis=0))[2][0]  # coordinate along the widest axis
    steps = np.diff(along)
    assert np.all(steps > 0) or np.all(steps < 0)  # in order
    assert np.std(np.abs(steps)) < 0.15 * np.mean(np.abs(steps))  # evenly
    across = z @ np.linalg.svd(z - z.mean(axis=0))[2][1]
    assert np.ptp(across) < 0.05 * np.ptp(along)  # straight


def test_a_grid_keeps_its_distances() -> None:
    side = 8
    index = lambda r, c: r * side + c  # noqa: E731
    edges = [(index(r, c), index(r, c + 1)) for r in range(side) for c in range(side - 1)]
    edges += [(index(r, c), index(r + 1, c)) for r in range(side - 1) for c in range(side)]
    z = structure.embed(side * side, edges, rng_for("grid"))
    grid = np.array([(r, c) for r in range(side) for c in range(side)], float)
    _, _, disparity = procrustes(grid, z)  # the grid, up to a similarity (a bit rounded at its corners)
    assert disparity < 0.02
    e = np.linalg.norm(z[:, None] - z[None, :], axis=-1)
    neighbours = np.array([e[a, b] for a, b in edges])
    assert neighbours.std() < 0.2 * neighbours.mean()


def test_unrelated_components_are_placed_apart_not_on_top() -> None:
    z = structure.embed(6, [(0, 1), (1, 2), (3, 4), (4, 5)], rng_for("two"))
    assert np.linalg.norm(z[:, None] - z[None, :], axis=-1)[np.triu_indices(6, 1)].min() > 0.1


def test_the_embedding_fills_the_canvas_along_its_longer_side() -> None:
    rng = np.random.default_rng(0)
    z = rng.normal(size=(50, 2)) * [1.0, 10.0]  # taller than wide
    out = structure.fit_canvas(z, (800.0, 400.0))
    extent = out.max(axis=0) - out.min(axis=0)
    assert extent[0] > extent[1]  # turned to the wide canvas
    assert np.all(np.abs(out) <= [400.0 * structure.FILL + 1e-9, 200.0 * structure.FILL + 1e-9])
    assert max(extent[0] / 800.0, extent[1] / 400.0) == pytest.approx(structure.FILL)


def test_a_small_diagram_keeps_its_random_start() -> None:
    d = build_diagram(DOMAIN, path_substance(10), STYLE, "seed", ())
    assert structure.structure_start(d, np.array(d.unknowns.x0), rng_for("seed")) is None
    assert len(portfolio_starts(d.unknowns, "seed", 3, d)) == 3
    assert np.array_equal(portfolio_starts(d.unknowns, "seed", 3, d)[0], np.array(d.unknowns.x0))


def test_a_large_path_starts_along_a_line_with_every_shape_at_its_vertex() -> None:
    n = structure.MIN_OBJECTS + 6
    d = build_diagram(DOMAIN, path_substance(n), STYLE, "seed", ())
    slots = structure.position_slots(d)
    assert sorted(slots) == sorted(f"v{i}" for i in range(n))
    assert all(len(s) == 2 for s in slots.values())  # the dot's center and the label's
    x0 = np.array(d.unknowns.x0)
    starts = portfolio_starts(d.unknowns, "seed", 2, d)
    x = starts[0]
    assert np.array_equal(starts[1], x0)  # the variation's own comes second
    assert np.array_equal(x, portfolio_starts(d.unknowns, "seed", 2, d)[0])  # deterministic
    place = {v: x[list(s[0])] for v, s in slots.items()}  # where each vertex's dot starts
    for v, s in slots.items():  # the label starts by its dot
        assert np.linalg.norm(x[list(s[1])] - place[v]) <= 2 * np.sqrt(2) * structure.OFFSET
    step = [np.linalg.norm(place[f"v{i}"] - place[f"v{i + 1}"]) for i in range(n - 1)]
    far = np.linalg.norm(place["v0"] - place[f"v{n - 1}"])
    assert far > 0.9 * sum(step)  # a straight line, end to end
    w, h = d.canvas
    assert all(abs(p[0]) <= w / 2 and abs(p[1]) <= h / 2 for p in place.values())
    assert portfolio_starts(d.unknowns, "seed", 1, d)[0].tolist() == x0.tolist()  # one start: Penrose's


STAGED = """canvas { width = 800 height = 600 }
layout = [dots, text]
forall Vertex v {
  v.dot = Circle { r : 4  center : (? in dots, ? in dots) }
  v.text = Text { string : v.label }
  encourage shapeDistance(v.dot, v.text) == 5 in text
}
forall Vertex u; Vertex v where Edge(u, v) {
  encourage vdist(u.dot.center, v.dot.center) < 30 in dots
}
"""


def test_a_later_stage_begins_with_each_label_carried_by_its_dots_move() -> None:
    """The `dots` stage moves the dots and leaves the labels where they began (no goal of it reads
    them): the `text` stage begins with each label moved as its dot moved (by hand: the same
    displacement), a label the first stage did move is left where it is."""
    from energies.compile.problem import CompiledProblem

    n = structure.MIN_OBJECTS + 6
    d = build_diagram(DOMAIN, path_substance(n), STAGED, "seed", ())
    problem = CompiledProblem(d, cache=None)
    dots, text = problem.stages
    assert dots.carry is not None and text.carry is not None
    slots = structure.position_slots(d)
    began = portfolio_starts(d.unknowns, "seed", 2, d)[0]
    x = began.copy()
    rng = np.random.default_rng(0)
    moved = {v: rng.uniform(-200, 200, 2) for v in slots}
    for v, (dot, _) in slots.items():
        x[list(dot)] += moved[v]
    x[list(slots["v0"][1])] += 7.0  # a label the first stage moved
    ended = x.copy()
    text.carry(began, x, dots.varying, text.varying)
    for v, (dot, label) in slots.items():
        assert np.array_equal(x[list(dot)], ended[list(dot)])
        expected = ended[list(label)] + (0.0 if v == "v0" else moved[v])
        np.testing.assert_allclose(x[list(label)], expected, rtol=0, atol=1e-9)


def test_a_small_diagrams_stages_run_as_penroses() -> None:
    from energies.compile.problem import CompiledProblem

    d = build_diagram(DOMAIN, path_substance(10), STAGED, "seed", ())
    assert all(stage.carry is None for stage in CompiledProblem(d, cache=None).stages)


def test_a_structure_start_that_satisfies_every_constraint_is_the_only_start() -> None:
    """The starts after a structure start lay the diagram out from random places: not worth another
    whole layout once it satisfies every constraint. A small diagram keeps its portfolio."""
    from energies.compile.problem import CompiledProblem
    from energies.optimize.portfolio import PortfolioSettings, optimize_portfolio

    settings = PortfolioSettings(starts=3)
    large = build_diagram(DOMAIN, path_substance(structure.MIN_OBJECTS + 6), STAGED, "seed", ())
    starts = portfolio_starts(large.unknowns, "seed", 3, large)
    result = optimize_portfolio(CompiledProblem(large, cache=None), starts, settings=settings)
    assert starts.structured and result.best.n_violated == 0
    assert result.stopped == "structure" and [s.start for s in result.starts] == [0]
    small = build_diagram(DOMAIN, path_substance(10), STAGED, "seed", ())
    starts = portfolio_starts(small.unknowns, "seed", 3, small)
    result = optimize_portfolio(CompiledProblem(small, cache=None), starts, settings=settings)
    assert not starts.structured and result.stopped != "structure" and len(result.starts) > 1


def test_smacof_takes_the_plain_localized_update() -> None:
    """The update written with two matrix products equals the update as its formula states it:
    z_i = sum_j w_ij (z_j + d_ij (z_i - z_j) / |z_i - z_j|) / sum_j w_ij, one round at a time."""
    rng = np.random.default_rng(3)
    n = 30
    d = structure.graph_distances(n, [(int(rng.integers(i)), i) for i in range(1, n)])
    z = rng.normal(size=(n, 2))
    w = np.where(d > 0, 1.0 / np.where(d > 0, d, 1.0) ** 2, 0.0)
    plain = z.copy()
    for _ in range(structure.SMACOF_ROUNDS):
        new = np.empty_like(plain)
        for i in range(n):
            acc = np.zeros(2)
            for j in range(n):
                if j != i:
                    diff = plain[i] - plain[j]
                    acc += w[i, j] * (plain[j] + d[i, j] * diff / np.linalg.norm(diff))
            new[i] = acc / w[i].sum()
        plain = new
    np.testing.assert_allclose(structure.smacof(d, z), plain, rtol=1e-9, atol=1e-9)
