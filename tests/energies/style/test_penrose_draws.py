"""Penrose's initial state: the same random draws, given to the same unknowns, as Penrose's.

Oracles: Penrose 4.0.0-alpha.5 itself (`compile` in Node, then the state's `varyingValues` at the
indices its `inputIdxsByPath` gives each path), on registry trios with the registry's variation; and
Penrose's `Graph.topsort` worked by hand on a small graph.
"""

from __future__ import annotations

import pytest

from energies.diagram import Diagram
from energies.diagram_build import build_diagram
from energies.style import shape_at
from energies.style.graph import penrose_topsort

from .conftest import Trio

# Values Penrose printed (exact doubles), by path and component.
PENROSE_INITIAL = {
    # shape defaults sampled in Penrose's shape order, and `(?, ?)` evaluated by the Style
    "graph-domain/textbook/sec1/fig1": {
        "`NYC`.text.center": (171.7649431494391, -21.30768181612666),
        "`Chicago`.dot.center": (34.786110719613504, 73.20990635519695),
    },
    # `?` and `sphereRandom()`, `random(18, 38)` drawn from one stream in Penrose's graph order
    "fancy-text/fancy-text": {
        "`p23`.icon.center": (16.899562098909882, 210.96750363193524),
        "`p10`.icon.center": (47.021591047319816, 173.2113623767047),
    },
    # `?` in substance fields of a three-object block: a depth-first walk gives them in another order
    "box-arrow-diagram/computer-architecture": {
        "`s_BUS_RA`.start": (51.96583506996001, -2.2917989838181256),
        "`s_RA_BUS`.end": (-119.12526856816334, 420.890570525553),
        "`s_BUS_MAR`.start": (156.1257672943883, 409.14904496966403),
    },
}


def initial_values(d: Diagram, path: str) -> tuple[float, ...]:
    """The initial values of the unknowns named after `path` (`path[i]`, or `path (style:l:c)`)."""
    names = d.unknowns.names
    return tuple(v for n, v in zip(names, d.unknowns.x0) if n.split(" (style:")[0].split("[")[0] == path)


@pytest.fixture(scope="module")
def diagrams(registry: list[Trio]) -> dict[str, Diagram]:
    chosen = [t for t in registry if t.key in PENROSE_INITIAL]
    return {
        t.key: build_diagram(t.domain, t.substance, t.style, t.variation, t.exclude_warnings) for t in chosen
    }


@pytest.mark.parametrize("key", list(PENROSE_INITIAL))
def test_initial_unknowns_are_penroses(diagrams: dict[str, Diagram], key: str) -> None:
    for path, expected in PENROSE_INITIAL[key].items():
        assert initial_values(diagrams[key], path) == expected, path  # bit for bit


def test_sampling_functions_draw_penroses_constants(diagrams: dict[str, Diagram]) -> None:
    # `r: random(18, 38)`: a constant of the diagram, Penrose's input 309 of fancy-text
    assert shape_at(diagrams["fancy-text/fancy-text"], "`p23`.icon").props["r"] == 28.442351543333785


def test_topsort_is_penroses_not_depth_first() -> None:
    # nodes x, y, z inserted in that order; z reads x. Sinks y, z are stacked; z is taken first and
    # makes x ready, so the reversed taking order is y, x, z (a depth-first walk would give x, y, z).
    assert penrose_topsort([[], [], [0]]) == [1, 0, 2]
    assert penrose_topsort([[], [], []]) == [0, 1, 2]  # no edges: insertion order
    # a diamond 0 -> 1, 0 -> 2, 1 -> 3, 2 -> 3 and a lone node 4
    assert penrose_topsort([[], [0], [0], [1, 2], []]) == [0, 1, 2, 3, 4]


@pytest.mark.parametrize(
    ("body", "draws"),
    [
        ("x.a = 1\n  x.b = [2, 3]", False),
        ("x.a = ?[4]\n  x.b = (1, ?[2])", False),  # `?` with a value draws nothing
        ("x.a = ?\n  x.b = 2", True),
        ("x.a = 1\n  x.b = [1, (2, ?)]", True),  # in the last field, inside a list and a vector
        ("x.a = max(1, random(0, 1))", True),  # a sampling function takes the random source
        ("x.s = Circle { r: 2 * ? }", True),
    ],
)
def test_draws_numbers_finds_any_draw(body: str, draws: bool) -> None:
    from energies.lang.parse import parse_style
    from energies.style.graph import draws_numbers
    from energies.style.library_bridge import Library

    prog = parse_style("canvas {\n  width = 10\n  height = 10\n}\nforall Set x {\n  " + body + "\n}\n")
    assert draws_numbers(prog, Library().functions) is draws
