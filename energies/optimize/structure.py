"""Starts that follow the Substance's structure, for large diagrams.

A large diagram laid out from random positions ends where its first steps fold it: a graph's
vertices pulled together by their edges from all over the canvas leave edges crossing and labels
piled, and a Style's local goals (a repulsion that stops at 150 px, a `disjoint` that is zero once
apart) cannot undo a fold that spans the canvas. Graph drawing starts from an embedding that
already keeps related objects near and unrelated ones apart; so do these starts, whatever the
Style: the Style's own energy is what the optimizer then minimizes.

The objects are the Substance objects whose shapes' positions the optimizer varies: a shape named
`` `A`.icon`` whose `center` is two unknowns belongs to A. Two objects are related when a
Substance statement names both (`Diagram.relations`: `Edge(A, B)`, `IsSubset(B, A)`,
`C := f(A, B)`). Their graph distances (hops; unrelated components one more than the largest) are
embedded in the plane by stress majorization (Gansner, Koren and North's SMACOF) from a pivot-MDS
start (Brandes and Pich), rotated to the canvas's long side and scaled to fill `FILL` of it; each
shape's center takes its object's place plus a small offset of its own, and every other unknown
keeps the variation's value.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import shortest_path
from scipy.spatial.distance import cdist

from energies.diagram import Diagram, ShapeInstance
from energies.expr import Node
from energies.shapes.seedrandom import SeedRandom

MIN_OBJECTS = 64  # fewer positioned, related objects: the variation's random start is kept first
FILL = 0.8  # share of the canvas the embedding's bounding box takes
PIVOTS = 50  # pivot-MDS pivots
SMACOF_ROUNDS = 30
MAX_STRESS_OBJECTS = 2500  # beyond, the pivot-MDS embedding is kept as it is (stress is O(n^2))
OFFSET = 2.0  # px: each shape of an object starts this far from its object's place, at most

_OWNER = re.compile(r"^`([^`]+)`\.")


def position_slots(diagram: Diagram) -> dict[str, list[tuple[int, int]]]:
    """Per Substance object, the (x, y) unknowns of its shapes' centers, in drawing order."""
    out: dict[str, list[tuple[int, int]]] = {}
    todo: list[ShapeInstance] = list(diagram.shapes)
    while todo:
        shape = todo.pop(0)
        todo.extend(m for m in shape.props.get("shapes", []) if isinstance(m, ShapeInstance))
        owner = _OWNER.match(shape.name)
        center = shape.props.get("center")
        if owner is None or not isinstance(center, list) or len(center) != 2:
            continue
        slots = [c.static if isinstance(c, Node) and c.op == "input" else None for c in center]
        if slots[0] is not None and slots[1] is not None:
            out.setdefault(owner.group(1), []).append((slots[0], slots[1]))
    return out


def _related(diagram: Diagram) -> tuple[dict[str, list[tuple[int, int]]], list[tuple[int, int]]] | None:
    """The objects' position slots and the relations between them (indices into the sorted names),
    or None when fewer than MIN_OBJECTS positioned objects are related."""
    slots = position_slots(diagram)
    index = {n: k for k, n in enumerate(sorted(slots))}
    edges = [(index[a], index[b]) for a, b in diagram.relations if a in index and b in index]
    related = {k for e in edges for k in e}
    return (slots, edges) if len(related) >= MIN_OBJECTS else None


def structure_start(diagram: Diagram, x0: np.ndarray, rng: SeedRandom) -> np.ndarray | None:
    """The variation's start with the objects' shapes placed by the Substance's structure, or None
    when the diagram has fewer than MIN_OBJECTS positioned objects that statements relate."""
    found = _related(diagram)
    if found is None:
        return None
    slots, edges = found
    names = sorted(slots)
    index = {n: k for k, n in enumerate(names)}
    places = embed(len(names), edges, rng)
    places = fit_canvas(places, diagram.canvas)
    x = np.array(x0, dtype=np.float64)
    for name, k in index.items():
        for sx, sy in slots[name]:
            x[sx] = places[k, 0] + OFFSET * (2 * rng.random() - 1)
            x[sy] = places[k, 1] + OFFSET * (2 * rng.random() - 1)
    return x


def graph_distances(n: int, edges: list[tuple[int, int]]) -> np.ndarray:
    """Hops between objects; objects in different components are one more than the largest apart."""
    if edges:
        a, b = np.array(edges).T
        graph = coo_matrix((np.ones(len(a)), (a, b)), shape=(n, n)).tocsr()
    else:
        graph = coo_matrix((n, n)).tocsr()
    d = shortest_path(graph, directed=False, unweighted=True)
    finite = d[np.isfinite(d)]
    d[~np.isfinite(d)] = (finite.max() if finite.size else 0.0) + 1.0
    return d


def embed(n: int, edges: list[tuple[int, int]], rng: SeedRandom) -> np.ndarray:
    """Plane coordinates whose distances follow the graph distances (module docstring)."""
    if n == 1:
        return np.zeros((1, 2))
    d = graph_distances(n, edges)
    z = pivot_mds(d, rng)
    if n <= MAX_STRESS_OBJECTS:
        z = smacof(d, z)
    return z


def pivot_mds(d: np.ndarray, rng: SeedRandom) -> np.ndarray:
    """Classical MDS through `PIVOTS` pivots: the double-centered squared distances to the pivots,
    their two leading singular vectors (the principal axes, so the first is the widest)."""
    n = len(d)
    pivots = sorted({int(rng.random() * n) for _ in range(min(PIVOTS, n))})
    c = d[:, pivots] ** 2
    c = -0.5 * (c - c.mean(axis=0) - c.mean(axis=1, keepdims=True) + c.mean())
    u, s, _ = np.linalg.svd(c, full_matrices=False)
    z = u[:, :2] * np.sqrt(s[:2])
    if z.shape[1] < 2:
        z = np.hstack([z, np.zeros((n, 1))])
    return z + 1e-6 * np.array([[rng.random() - 0.5, rng.random() - 0.5] for _ in range(n)])


def smacof(d: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Stress majorization with weights d^-2 (Gansner, Koren and North) from z, SMACOF_ROUNDS
    rounds of the localized update: each object moves to the weighted mean of where its distance
    to each other object would put it, z_i = sum_j w_ij (z_j + d_ij (z_i - z_j) / |z_i - z_j|) /
    sum_j w_ij (no n x n inverse: O(n^2) a round). With p_ij = w_ij d_ij / |z_i - z_j| the sum is
    w z + (sum_j p_ij) z_i - p z: two n x n products, no n x n x 2 differences."""
    with np.errstate(divide="ignore"):
        w = np.where(d > 0, d**-2.0, 0.0)
    wd = w * d
    total = w.sum(axis=1, keepdims=True)
    total[total == 0] = 1.0
    for _ in range(SMACOF_ROUNDS):
        dist = cdist(z, z)
        with np.errstate(divide="ignore", invalid="ignore"):
            pull = np.where(dist > 0, wd / dist, 0.0)
        z = (w @ z + pull.sum(axis=1, keepdims=True) * z - pull @ z) / total
    return z


def fit_canvas(z: np.ndarray, canvas: tuple[float, float]) -> np.ndarray:
    """The embedding centered, its widest axis along the canvas's longer side, scaled to fill FILL
    of the canvas (Penrose's canvas coordinates: the origin at the center)."""
    z = z - z.mean(axis=0)
    _, _, axes = np.linalg.svd(z, full_matrices=False)
    z = z @ axes.T  # the widest direction first
    width, height = canvas
    if height > width:
        z = z[:, ::-1]
    extent = z.max(axis=0) - z.min(axis=0)
    scale = FILL * min(width / max(extent[0], 1e-12), height / max(extent[1], 1e-12))
    z = (z - (z.max(axis=0) + z.min(axis=0)) / 2) * scale
    return z


Carry = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], None]


def stage_carry(diagram: Diagram) -> Carry | None:
    """For a diagram structure starts apply to: what keeps an object's shapes together across layout
    stages (`StageSpec.carry`). A stage that moves some of an object's shapes (the graph Style's
    `dots`) leaves the others exactly where they began (its `text`: no goal of the stage reads them),
    however far the object went; when a later stage varies those, they first move by the mean
    displacement of the object's shapes that moved, so they begin beside their object as the start
    placed them, not where it was. None for other diagrams: their stages run as Penrose's do."""
    found = _related(diagram)
    if found is None:
        return None
    groups = [np.array(pairs) for pairs in found[0].values() if len(pairs) >= 2]

    def carry(began: np.ndarray, x: np.ndarray, moved: np.ndarray, moving: np.ndarray) -> None:
        for pairs in groups:  # (shapes, 2): each shape's (x, y) slots
            stayed = (x[pairs] == began[pairs]).all(axis=1)
            did = moved[pairs].all(axis=1) & ~stayed
            will = moving[pairs].all(axis=1) & stayed
            if did.any() and will.any():
                x[pairs[will]] += (x[pairs[did]] - began[pairs[did]]).mean(axis=0)

    return carry
