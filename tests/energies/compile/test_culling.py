"""Exact culling: the energy with constant goals left out against the full energy, and the pieces
of the broad phase against brute force.

Oracles: the same compiled energy with every goal listed (`culling=False`), at the box's center and
at random points inside the box (where the culled energy claims to be exact) and outside it (where
the box moves); brute-force counts of rows per leaf tuple and per node tuple; hand-made costs for
the policy.
"""

from __future__ import annotations

import itertools
import math
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from energies.compile import culling
from energies.compile.culling import Culler, build_tree, index_kind
from energies.compile.problem import CompiledProblem
from energies.diagram import Column, Diagram, GoalTable, ShapeInstance, Unknowns
from energies.diagram_build import build_diagram
from energies.expr import input_node
from energies.optimize.optimizer import optimize
from service.trios import load_trio

REGISTRY = Path(__file__).resolve().parents[3] / ".." / "shared" / "penrose-registry"


def circles(n: int, seed: int, spread: float, r: float = 6.0) -> Diagram:
    """n circles (unknown centers, fixed radii) with all pairs disjoint (a penalty exactly 0 once
    apart) and not too close (1 / d^2: constant nowhere), stated as goal tables."""
    rng = np.random.default_rng(seed)
    unknowns = Unknowns()
    shapes = []
    for k in range(n):
        c = [input_node(unknowns.add(rng.uniform(-spread, spread), f"c{k}.{a}")) for a in "xy"]
        shapes.append(ShapeInstance(f"c{k}", "Circle", {"center": c, "r": r + k % 3, "strokeWidth": 0.0}))
    i, j = (np.array(v) for v in zip(*itertools.combinations(range(n), 2)))
    pad = Column.shared(1.5, len(i))
    goals = [
        GoalTable("constraint", "disjoint", [Column(shapes, i), Column(shapes, j), pad]),
        GoalTable("objective", "notTooClose", [Column(shapes, i), Column(shapes, j)]),
    ]
    return Diagram((2 * spread, 2 * spread), shapes, goals, unknowns)


def forced(problem: CompiledProblem) -> Culler:
    """The problem's culler, made to cull at every evaluation (the policy is tested apart)."""
    c = problem.culler
    assert c is not None
    c.wants = lambda: True  # type: ignore[method-assign]
    c._stop = lambda: None  # type: ignore[method-assign]
    c.box_lasts = lambda x, varying: True  # type: ignore[method-assign]
    return c


@pytest.mark.parametrize("seed", range(3))
def test_culled_energy_and_gradient_equal_the_full_ones_in_and_out_of_the_box(seed: int) -> None:
    d = circles(120, seed, spread=300.0)
    full = CompiledProblem(d, cache=None, culling=False)
    culled = CompiledProblem(d, cache=None, culling=True)
    c = forced(culled)
    assert len(c.which) == 2  # both tables are worth trying
    rng = np.random.default_rng(seed)
    x = np.array(d.unknowns.x0)
    pairs = 120 * 119 // 2
    listed = lambda name: next(n for k, n in zip(culled.kinds, culled.counts) if k.name == name)  # noqa: E731
    for weight in (1.0, 1e3):
        e, g = culled.energy_and_grad(x, 0, weight)
        if weight > 1.0:  # (the box is where the jumps below took it)
            assert e == pytest.approx(full.energy_and_grad(x, 0, weight)[0], rel=1e-12, abs=1e-9)
            continue
        assert c.inside(x) and listed("notTooClose") == pairs  # constant nowhere: all left in
        # disjoint: only pairs that may overlap somewhere in the box (centers moving by the radius
        # in x and y) are left in, and they are few
        k = next(k for k, kind in enumerate(culled.kinds) if kind.name == "disjoint")
        left_in = culled.lists[k]
        (ca, ra), (cb, rb) = (
            (x[col.slots[col.obj[left_in]]], col.consts[col.obj[left_in], 0])
            for col in culled.kinds[k].columns[:2]
        )
        gap = np.linalg.norm(ca - cb, axis=1) - ra - rb - 1.5
        assert np.all(gap < 2 * math.sqrt(2) * c.radius[0] + 1e-9)
        assert 0 < len(left_in) < pairs / 4
        points = [x + rng.uniform(-1, 1, len(x)) * c.radius * 0.999 for _ in range(5)]  # inside
        points += [x + rng.normal(0, 3 * c.radius[0], len(x)) for _ in range(3)]  # outside: the box moves
        for p in [x, *points]:
            e, g = culled.energy_and_grad(p, 0, weight)
            e_full, g_full = full.energy_and_grad(p, 0, weight)
            assert e == pytest.approx(e_full, rel=1e-12, abs=1e-9)
            np.testing.assert_allclose(g, g_full, rtol=1e-12, atol=1e-12 * max(1.0, np.abs(g_full).max()))
    assert c.boxes >= 3


def test_a_stages_constraint_values_read_the_positive_parts_from_the_boxs_rows_alone() -> None:
    d = circles(120, 0, spread=300.0)
    full = CompiledProblem(d, cache=None, culling=False)
    culled = CompiledProblem(d, cache=None, culling=True)
    c = forced(culled)
    x = np.array(d.unknowns.x0)
    culled.energy_and_grad(x, 0, 1.0)  # sorts a box at x
    assert culled.culled[1] == 0.0  # the pairs it left out are apart on all of the box
    which = np.random.default_rng(1).random(120 * 119 // 2) < 0.7
    rng = np.random.default_rng(0)
    for p in [x] + [x + rng.uniform(-1, 1, len(x)) * c.radius * 0.999 for _ in range(3)]:
        truth = full.constraint_values(p, which)
        got = culled.constraint_values(p, which, stage=0)
        assert (truth > 0).any()  # some pairs overlap
        np.testing.assert_array_equal(np.maximum(got, 0.0), np.maximum(truth, 0.0))
        assert np.count_nonzero(got == 0.0) > len(got) / 2  # read 0, not evaluated
        np.testing.assert_array_equal(culled.constraint_values(p, which), truth)  # no stage: values
    outside = x + 10 * c.radius
    assert not c.inside(outside)
    np.testing.assert_array_equal(
        culled.constraint_values(outside, which, stage=0), full.constraint_values(outside, which)
    )


def _labels_apart(name: str) -> tuple[Diagram, CompiledProblem, CompiledProblem]:
    """150 circles and `maximal(min(20, d))` over every pair (-20 wherever two centers stay 20
    apart: the rows left out add a constant that is not 0): a culled and a full problem."""
    style = (
        "canvas { width = 600 height = 600 }\n"
        "forall Set x { x.icon = Circle { r : 4 } }\n"
        "forall Set x; Set y {\n  encourage maximal(min(20, vdist(x.icon.center, y.icon.center)))\n}\n"
    )
    substance = "Set " + ", ".join(f"S{i}" for i in range(150)) + "\n"
    d = build_diagram("type Set\n", substance, style, name, ())
    return d, CompiledProblem(d, cache=None, culling=True), CompiledProblem(d, cache=None, culling=False)


def _same(culled: CompiledProblem, full: CompiledProblem, p: np.ndarray) -> None:
    e, g = culled.energy_and_grad(p, 0, 1.0)
    e_full, g_full = full.energy_and_grad(p, 0, 1.0)
    assert e == pytest.approx(e_full, rel=1e-12, abs=1e-9)
    np.testing.assert_allclose(g, g_full, rtol=1e-12, atol=1e-12 * max(1.0, np.abs(g_full).max()))


def test_an_inner_box_lists_fewer_rows_and_stays_exact() -> None:
    """Steps an eighth of what sized the box: an inner box around the point lists fewer rows;
    points in it, a point in the box but outside it in every unknown (all stray: the box's rows),
    and the points after it, until the strayed rows are sorted again there, all get the full
    energy and gradient."""
    d, culled, full = _labels_apart("inner")
    c = forced(culled)
    x = np.array(d.unknowns.x0)
    culled.energy_and_grad(x, 0, 1.0)
    k = next(k for k, kind in enumerate(culled.kinds) if kind.name == "maximal")
    in_box = culled.counts[k]
    rng = np.random.default_rng(4)
    c.moves, c.new_moves = [c.scale / (8 * culling.LIFE)] * culling.MOVES, True
    p = x + rng.choice([-0.4, 0.4], len(x)) * c.radius
    _same(culled, full, p)  # in the box, no inner box yet: one is sorted around p
    assert c.inner is not None and c.inside(p) and c.inside_inner(p)
    assert 0 < culled.counts[k] < in_box / 2 and culled.culled[0] < 0
    in_inner = culled.counts[k]
    lo, hi = c.inner.lo, c.inner.hi
    for _ in range(4):
        _same(culled, full, lo + rng.uniform(0.001, 0.999, len(x)) * (hi - lo))
        assert culled.counts[k] == in_inner
    q = x - 0.4 * (p - x)  # in the box, out of the inner box in every unknown
    assert c.inside(q) and not np.any((lo <= q) & (q <= hi))
    _same(culled, full, q)
    assert culled.counts[k] == in_box and c.inside_inner(q)  # all strayed: the box's rows
    tried = c.tried
    for n in range(1, 10):  # near q, until the strayed rows are sorted again around there
        _same(culled, full, q + 0.001 * n * c.radius)
        if culled.counts[k] < in_box:
            break
    assert n == culling.RENT and c.tried > tried and not c.inner.strayed.any()
    edge = x + rng.choice([-0.95, 0.95], len(x)) * c.radius
    for n in range(8):  # an inner box at the box's edge: it ends where the box does
        _same(culled, full, edge + 0.001 * n * c.radius)
    beyond = edge + np.sign(edge - x) * 0.1 * c.radius
    assert not c.inside(beyond) and not c.inside_inner(beyond)
    _same(culled, full, beyond)


def test_one_sliding_object_strays_alone_and_its_rows_are_sorted_again_as_afresh() -> None:
    """One circle slides while the others rest: it strays (its rows listed, no sorting), and once
    they have been listed `RENT` evaluations each, exactly the box's rows that read it are tried
    again, on a range centred where it is; the rows listed and the constant added are then those
    of sorting every row at the new inner box (oracle: `sort_rows` over the box's rows), and the
    energy and gradient are the full ones throughout."""
    d, culled, full = _labels_apart("slide")
    c = forced(culled)
    x = np.array(d.unknowns.x0)
    culled.energy_and_grad(x, 0, 1.0)
    k = next(k for k, kind in enumerate(culled.kinds) if kind.name == "maximal")
    kind, box = culled.kinds[k], culled._sorted
    assert box is not None
    c.moves, c.new_moves = [c.scale / (8 * culling.LIFE)] * culling.MOVES, True
    culled.energy_and_grad(x, 0, 1.0)  # the inner box, sorted afresh around x
    assert c.inner is not None and c.inside_inner(x)
    before = culled.lists[k]
    lo0, hi0 = c.inner.lo.copy(), c.inner.hi.copy()
    # A pair of the box's rows that the inner box proves apart (their -20 constant) is pulled closer
    # than 20 by moving one circle of it towards the other, within the box: the row must come in.
    rows = box[k].rows
    out = np.setdiff1d(rows, before)
    a, b = (col.slots[col.obj[out]] for col in kind.columns[:2])  # each row's two circles' (x, y)
    gap = np.linalg.norm(x[a] - x[b], axis=1)
    pick = int(np.argmin(np.where(gap > 20, gap, np.inf)))
    moved = a[pick]  # the (x, y) unknowns of the circle that moves
    p = x.copy()
    p[moved] += 0.9 * c.radius[moved] * (x[b[pick]] - x[a[pick]]) / gap[pick]
    assert c.inside(p) and not c.inside_inner(p) and np.linalg.norm(p[a[pick]] - p[b[pick]]) < 20
    reads = np.zeros(len(rows), bool)
    for col in kind.columns[:2]:  # each column numbers its objects apart: found by their unknowns
        reads |= np.isin(col.slots[col.obj[rows]], moved).any(axis=1)
    tried = c.tried
    _same(culled, full, p)  # it strays: its rows are listed as the box lists them
    assert c.tried == tried and c.inner.strayed.any() and set(c.inner.strayed.nonzero()[0]) <= set(moved)
    np.testing.assert_array_equal(culled.lists[k], np.union1d(before, rows[reads]))
    for _ in range(int(culling.RENT)):
        _same(culled, full, p)
    assert c.tried - tried == int(reads.sum()) > 0 and not c.inner.strayed.any()
    lo, hi = c.inner.lo, c.inner.hi
    assert np.all((lo[moved] <= p[moved]) & (p[moved] <= hi[moved]))  # its range moved with it
    others = np.setdiff1d(np.arange(len(x)), moved)
    assert np.array_equal(lo[others], lo0[others]) and np.array_equal(hi[others], hi0[others])  # kept
    trees = c.indexes[k].trees
    boxes = [culling.column_boxes(col, t, lo, hi) for col, t in zip(culling._used(kind), trees)]
    afresh = culling.sort_rows(kind, boxes, c._row_bounds(k), rows)
    np.testing.assert_array_equal(culled.lists[k], afresh.rows)
    assert not np.array_equal(afresh.rows, before)  # the slide changed what is left in
    assert culled.culled[0] == pytest.approx(box[k].constant + afresh.constant, rel=1e-12)
    rng = np.random.default_rng(5)
    for _ in range(3):  # points in the moved inner box
        _same(culled, full, lo + rng.uniform(0.001, 0.999, len(x)) * (hi - lo))


def test_each_unknown_ranges_over_its_own_largest_recent_step_within_bounds() -> None:
    """`_halves`: INNER_LIFE times an unknown's largest change among the last MOVES evaluations,
    clipped to [OWN_FLOOR * reach, reach], 0 where the stage does not vary it (hand-computed)."""
    d, culled, _ = _labels_apart("halves")
    c = forced(culled)
    x = np.array(d.unknowns.x0)
    culled.energy_and_grad(x, 0, 1.0)
    assert c.radius is not None
    c.radius = c.radius.copy()
    c.radius[0] = 0.0  # as if the stage fixed unknown 0
    n, reach = len(x), 8.0
    moves = np.zeros((culling.MOVES, n))
    moves[:, 1] = 0.01  # rests: the floor
    moves[3, 2] = 0.5  # one larger step among small ones: its own range from the largest
    moves[:, 3] = 5.0  # slides: the common reach caps it
    c.unknown_moves = list(moves)
    half = c._halves(reach)
    floor = culling.OWN_FLOOR * reach
    assert half[0] == 0.0 and half[1] == floor and half[2] == culling.INNER_LIFE * 0.5 and half[3] == reach


def test_an_inner_box_whose_ranges_the_steps_outgrew_is_sorted_afresh() -> None:
    """Steps that shrink by more than REGROW: the next point leaving a range sorts a new inner box,
    on ranges sized by the steps of now. It lies within the last one, so only the rows the last
    one did not prove constant are tried again, and it lists the rows a sort from scratch lists."""
    d, culled, full = _labels_apart("regrow")
    c = forced(culled)
    x = np.array(d.unknowns.x0)
    culled.energy_and_grad(x, 0, 1.0)
    c.moves, c.new_moves = [c.scale / (8 * culling.LIFE)] * culling.MOVES, True
    _same(culled, full, x)  # the inner box, sorted afresh
    assert c.inner is not None
    first, rows = c.inner, sum(len(s.rows) for s in c.inner.sorts.values())
    c.moves, c.new_moves = [first.reach / (3 * culling.REGROW * culling.INNER_LIFE)] * culling.MOVES, True
    tried = c.tried
    _same(culled, full, x)
    again = c.inner
    assert again is not first and again.reach < first.reach / culling.REGROW
    assert np.all((again.lo >= first.lo) & (again.hi <= first.hi))
    open_rows = sum(int(np.count_nonzero(s.open)) for s in first.sorts.values())
    assert c.tried - tried == open_rows and 0 < open_rows < rows
    _same_as_from_scratch(c, x, again)
    # An unknown moved near the edge of its range: its new range leaves the last one, and the rows
    # reading it are tried again too.
    j = int(np.argmax(again.hi - again.lo))
    y = x.copy()
    y[j] += 0.9 * (again.hi[j] - x[j])
    c.moves, c.new_moves = [again.reach / (3 * culling.REGROW * culling.INNER_LIFE)] * culling.MOVES, True
    tried, moves = c.tried, list(c.unknown_moves)  # (as the new box was sorted: before y's move)
    _same(culled, full, y)
    third = c.inner
    assert third is not again and third.hi[j] > again.hi[j]
    open_rows = sum(int(np.count_nonzero(s.open)) for s in again.sorts.values())
    assert c.tried - tried > open_rows
    c.unknown_moves = moves
    _same_as_from_scratch(c, y, third)


def _same_as_from_scratch(c: Culler, x: np.ndarray, inner: culling.InnerBox) -> None:
    """An inner box lists the rows, and adds the constant, that one sorted from scratch does."""
    c.inner = None
    scratch = c._sort_inner_afresh(x, inner.box, inner.reach)
    np.testing.assert_array_equal(scratch.lo, inner.lo)
    for k, listed in scratch.lists().items():
        np.testing.assert_array_equal(listed.rows, inner.lists()[k].rows)
        assert listed.constant == inner.lists()[k].constant
    c.inner = inner


def test_culled_goals_are_left_out_and_their_constants_added(monkeypatch: pytest.MonkeyPatch) -> None:
    """Far-apart circles on a box of radius 1: every disjoint penalty is 0 but that of the two
    circles on top of each other, and what is left out adds 0."""
    d = circles(60, 0, spread=3000.0)
    culled = CompiledProblem(d, cache=None, culling=True)
    forced(culled)
    x = np.array(d.unknowns.x0)
    x[2:4] = x[0:2]  # circles 0 and 1 on top of each other
    # the first box's radius (no step seen yet): LIFE * FIRST_RADIUS * the unknowns' spread = 1
    monkeypatch.setattr(culling, "FIRST_RADIUS", 1 / (culling.LIFE * float(np.ptp(x))))
    e, _ = culled.energy_and_grad(x, 0, 1.0)
    assert [n for k, n in zip(culled.kinds, culled.counts) if k.name == "disjoint"] == [1]  # (0, 1)
    assert culled.culled == (0.0, 0.0)
    full = CompiledProblem(d, cache=None, culling=False)
    assert e == pytest.approx(full.energy_and_grad(x, 0, 1.0)[0], rel=1e-12)


def test_a_tree_partitions_its_objects_into_leaves_of_contiguous_ranges() -> None:
    rng = np.random.default_rng(3)
    points = rng.normal(size=(500, 2))
    t = build_tree(points)
    assert sorted(t.perm.tolist()) == list(range(500))
    leaves = t.leaves
    assert np.all(t.end[leaves] - t.start[leaves] <= culling.LEAF)
    assert np.array_equal(
        t.leaf_of_object[t.perm], np.repeat(np.arange(len(leaves)), t.end[leaves] - t.start[leaves])
    )
    for k in range(len(t.start)):  # a node's leaves: a contiguous range covering exactly its objects
        covered = t.perm[t.start[leaves[t.first_leaf[k]]] : t.end[leaves[t.last_leaf[k]]]]
        assert sorted(covered.tolist()) == sorted(t.perm[t.start[k] : t.end[k]].tolist())


def test_rows_per_leaf_and_node_tuple_match_brute_force() -> None:
    d = circles(90, 5, spread=200.0)
    p = CompiledProblem(d, cache=None, culling=True)
    kind = next(k for k in p.kinds if k.name == "disjoint")
    x = np.array(d.unknowns.x0)
    index = index_kind(kind, x)
    used = [c for c in kind.columns if c.width or c.n_consts]
    leaf = np.stack([t.leaf_of_object[c.obj] for t, c in zip(index.trees, used)], axis=1)
    in_stage = np.random.default_rng(0).random(kind.n_rows) < 0.7
    counts = index.stage_counts(0, in_stage)
    rng = np.random.default_rng(1)
    for _ in range(50):  # random node tuples: the rows they cover, counted two ways
        nodes = [int(rng.integers(len(t.start))) for t in index.trees]
        inside = np.ones(kind.n_rows, bool)
        for k, (t, node) in enumerate(zip(index.trees, nodes)):
            inside &= (leaf[:, k] >= t.first_leaf[node]) & (leaf[:, k] <= t.last_leaf[node])
        got = culling._covered(index.trees, counts, np.array([nodes]))[0]
        assert got == np.count_nonzero(inside & in_stage)
    some = np.array([[t.leaves[rng.integers(t.n_leaves)] for t in index.trees] for _ in range(20)])
    rows = culling._rows_of(index, some)
    expected = [
        r
        for tuple_ in some.tolist()
        for r in np.flatnonzero(
            np.all(leaf == [t.first_leaf[n] for t, n in zip(index.trees, tuple_)], axis=1)
        ).tolist()
    ]
    assert sorted(rows.tolist()) == sorted(expected)


def test_a_sort_bounds_no_tuple_without_rows_of_the_stage_and_skips_kinds_of_other_stages() -> None:
    """Only the rows of the circles 0-29 are in the stage: every node tuple whose bounds are
    computed covers some of them (counted by brute force), the rows left in and the constant are
    those of trying every row of the stage one by one, and a kind with no row in the stage is
    neither indexed nor sorted."""
    d = circles(90, 5, spread=200.0)
    p = CompiledProblem(d, cache=None, culling=True)
    c = forced(p)
    k, kind = next((k, kind) for k, kind in enumerate(p.kinds) if kind.name == "disjoint")
    x = np.array(d.unknowns.x0)
    index = index_kind(kind, x)
    used = [col for col in kind.columns if col.width or col.n_consts]
    in_stage = np.all([col.obj < 30 for col in used], axis=0)
    counts = index.stage_counts(0, in_stage)
    leaf = np.stack([t.leaf_of_object[col.obj] for t, col in zip(index.trees, used)], axis=1)
    lo_x, hi_x = x - 5.0, x + 5.0
    boxes = [culling.column_boxes(col, t, lo_x, hi_x) for col, t in zip(used, index.trees)]
    bounds = c._compiled_bounds()[k]
    asked: list[np.ndarray] = []

    def recording(b: list[culling.ColumnBoxes], ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        asked.append(ids - [bx.n_objects for bx in b])
        return bounds(b, ids)

    got = culling.sort_kind(kind, index, boxes, recording, counts, in_stage)
    tuples = np.concatenate(asked)
    tuples = tuples[np.all(tuples >= 0, axis=1)]  # node tuples (rows tried one by one are objects)
    for nodes in tuples:
        inside = np.ones(kind.n_rows, bool)
        for j, (t, node) in enumerate(zip(index.trees, nodes)):
            inside &= (leaf[:, j] >= t.first_leaf[node]) & (leaf[:, j] <= t.last_leaf[node])
        assert np.count_nonzero(inside & in_stage) > 0
    one_by_one = culling.sort_rows(kind, boxes, bounds, np.flatnonzero(in_stage))
    assert got.rows.tolist() == one_by_one.rows.tolist()
    assert got.constant == pytest.approx(one_by_one.constant, rel=1e-12, abs=1e-12)
    nowhere = [np.zeros(len(rows), bool) for rows in p._in_stage(0)]
    assert c.derive(x, 0, p.stages[0].varying, nowhere) == {} and c.indexes == {}


def test_culling_stops_when_it_does_not_pay_and_tries_again_later() -> None:
    c = Culler([], [], {}, None)
    c.which = [0]  # a kind to cull, as far as the policy is concerned
    x = np.zeros(3)
    for _ in range(culling.FULL_FIRST):
        assert not c.wants()
        c.observe(x, 0.010, culled=False)
    assert c.wants()
    c.box_sorted(1.0)  # the first box took a second to sort: a tenth of a full evaluation is not won back
    c.observe(x, 0.001, culled=True)
    assert not c.wants()
    for _ in range(culling.BACKOFF - 1):
        c.observe(x, 0.010, culled=False)
        assert not c.wants()
    c.observe(x, 0.010, culled=False)
    assert c.wants()  # tried again, with cheap boxes now: culling stays on
    for _ in range(2 * culling.JUDGE):
        c.box_sorted(0.001)
        c.observe(x, 0.002, culled=True)
        assert c.wants()


def test_culling_is_tried_again_at_least_every_max_backoff_evaluations() -> None:
    """A stage whose first boxes did not pay is retried as its steps shorten: after any number of
    failures the energy runs whole for at most MAX_BACKOFF evaluations before culling again."""
    c = Culler([], [], {}, None)
    c.which = [0]
    x = np.zeros(3)
    for _ in range(culling.FULL_FIRST):
        c.observe(x, 0.010, culled=False)
    waits = []
    for _ in range(6):
        assert c.wants()
        c.box_sorted(1.0)  # a box far too dear: culling stops at once
        c.observe(x, 0.001, culled=True)
        waited = 0
        while not c.wants():
            c.observe(x, 0.010, culled=False)
            waited += 1
        waits.append(waited)
    assert waits == [16, 64, 64, 64, 64, 64] and culling.MAX_BACKOFF == 64


def test_a_box_is_charged_over_the_evaluations_it_serves() -> None:
    """A box that takes six full evaluations to sort and then serves many cheap evaluations pays;
    a box sorted for every evaluation does not (hand-counted with LIFE = 16: full 10 ms, culled
    0.4 ms, sorting 60 ms; the first box's share 0.4 + 60/16 = 4.15 ms < 8 ms; four boxes over four
    evaluations, charged over at least LIFE, 0.4 + 240/16 = 15.4 ms > 8 ms)."""
    assert culling.LIFE == 16.0 and culling.WORTH == 0.8

    def policy() -> Culler:
        c = Culler([], [], {}, None)
        c.which = [0]
        for _ in range(culling.FULL_FIRST):
            c.observe(np.zeros(3), 0.010, culled=False)
        return c

    kept = policy()
    kept.box_sorted(0.060)
    for _ in range(40):
        kept.observe(np.zeros(3), 0.0004, culled=True)
        assert kept.wants()
    assert kept.cull_cost() == pytest.approx(0.0004 + 0.060 / 40)
    every = policy()
    for _ in range(culling.JUDGE + 1):
        every.box_sorted(0.060)
        every.observe(np.zeros(3), 0.0004, culled=True)
    assert not every.wants()


def test_a_box_dearer_than_a_whole_evaluation_waits_for_steps_it_can_outlast() -> None:
    """Unknowns spread over 100 px: the largest radius is 5 px (MAX_RADIUS), so with OUTLAST = 4 a
    dear box waits for typical steps of at most 1.25 px; a box cheaper than a whole evaluation
    never waits."""
    assert culling.MAX_RADIUS == 0.05 and culling.OUTLAST == 4.0
    c = Culler([], [], {}, None)
    c.which = [0]
    varying = np.ones(2, bool)
    x = np.array([0.0, 100.0])
    for step in (0.0, 50.0, 100.0, 150.0):  # three moves of 50 px, whole evaluations of 10 ms
        c.observe(x + step, 0.010, culled=False)
    assert c.box_lasts(x, varying)  # no box sorted yet: its cost is unknown
    c.box_sorted(0.050)  # five whole evaluations' worth
    assert not c.box_lasts(x, varying)
    for step in (150.5, 151.0, 151.5, 152.0, 152.6, 153.2, 153.8):  # moves of 0.5 and 0.6 px
        c.observe(x + step, 0.010, culled=False)
    # the ten moves 50 50 50 .5 .5 .5 .5 .6 .6 .6: median 0.6 <= 1.25
    assert statistics.median(c.moves) == pytest.approx(0.6) and c.box_lasts(x, varying)
    for k in range(1, culling.MOVES + 1):  # the last MOVES moves all of 2 px > 1.25
        c.observe(x + 153.8 + 2.0 * k, 0.010, culled=False)
    assert not c.box_lasts(x, varying)
    c.box_sorted(0.005)  # now cheaper than a whole evaluation
    assert c.box_lasts(x, varying)


def test_a_new_run_starts_the_policy_afresh_and_its_jump_is_no_step() -> None:
    c = Culler([], [], {}, None)
    c.which = [0]
    x = np.zeros(3)
    for k in range(culling.FULL_FIRST + 3):
        c.observe(x + 0.01 * k, 0.010, culled=False)
    c.box_sorted(0.001)
    assert c.wants() and c.sort_cost == 0.001
    c.new_run()
    assert c.sort_cost is None and c.full_cost is None and c.moves == []
    far = x + 1000.0
    for k in range(culling.FULL_FIRST):
        assert not c.wants()  # the new run's first evaluations are timed whole, as a stage's
        c.observe(far + 0.01 * k, 0.010, culled=False)
    assert c.wants()
    assert c.moves == [pytest.approx(0.01)]  # the jump to the new run's first point is not a step


def test_each_run_of_the_optimizer_starts_the_problems_policy_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    d = circles(40, 2, spread=100.0)
    problem = CompiledProblem(d, cache=None, culling=True)
    runs = []
    monkeypatch.setattr(problem, "new_run", lambda: runs.append(problem.evaluations))
    x0 = np.array(d.unknowns.x0)
    optimize(problem, x0, max_iters=5)
    optimize(problem, x0[::-1].copy(), max_iters=5)
    assert len(runs) == 2 and runs[0] == 0 and runs[1] > 0  # each run, before its first evaluation


def test_compiling_the_bounds_is_not_charged_to_the_first_box(monkeypatch: pytest.MonkeyPatch) -> None:
    """Compiling the bounds functions happens once a process; a box is charged its sorting only
    (a compile made 0.25 s slower here leaves the box's charge as it was)."""
    d = circles(120, 1, spread=300.0)
    x = np.array(d.unknowns.x0)
    charged = []
    for delay in (0.0, 0.25):
        p = CompiledProblem(d, cache=None, culling=True)
        c = forced(p)
        compiled = c._compiled_bounds

        def slow(near: bool = False, compiled: Any = compiled, delay: float = delay, c: Culler = c) -> Any:
            if near not in c.bounds:
                time.sleep(delay)
            return compiled(near)

        monkeypatch.setattr(c, "_compiled_bounds", slow)
        p.energy_and_grad(x, 0, 1.0)
        charged.append(c.recent[0][0])
    assert charged[1] < charged[0] + 0.1


@pytest.mark.parametrize(
    "key",
    [
        "graph-domain/textbook/sec2/fig6",
        "graph-domain/other-examples/arpanet",
        "structural-formula/molecules/caffeine",
        "box-arrow-diagram/computer-architecture",
    ],
)
def test_registry_trios_cull_exactly(monkeypatch: pytest.MonkeyPatch, key: str) -> None:
    """Graph Styles (repulsion, label boxes, label-edge distance, polygons), molecules, box-arrows."""
    trio = REGISTRY / f"{key}.trio.json"
    if not trio.exists():
        pytest.skip(f"{trio} is not here")
    spec = load_trio(trio)
    d = build_diagram(spec.domain, spec.substance, spec.style, spec.variation, ())
    monkeypatch.setattr(culling, "CULL_MIN_ROWS", 8)
    full = CompiledProblem(d, cache=None, culling=False)
    culled = CompiledProblem(d, cache=None, culling=True)
    c = forced(culled)
    assert c.which
    rng = np.random.default_rng(2)
    x = np.array(d.unknowns.x0)
    for s, stage in enumerate(culled.stages):
        moving = stage.varying  # a goal culled as constant may read fixed unknowns, whose entries differ
        for p in [x, x + rng.uniform(-0.5, 0.5, len(x)) * moving, x + rng.normal(0, 20, len(x)) * moving]:
            e, g = culled.energy_and_grad(p, s, 1e2)
            e_full, g_full = full.energy_and_grad(p, s, 1e2)
            assert e == pytest.approx(e_full, rel=1e-12, abs=1e-9)
            scale = max(1.0, np.abs(g_full).max())
            np.testing.assert_allclose(g[moving], g_full[moving], rtol=1e-12, atol=1e-12 * scale)


def test_one_point_outside_the_box_runs_whole_and_keeps_the_box() -> None:
    """A line search's long trial step: evaluated whole, the box kept for the shorter steps back
    inside it; a second point outside in a row moves the box."""
    d = circles(120, 1, spread=300.0)
    culled, full = CompiledProblem(d, cache=None, culling=True), CompiledProblem(d, cache=None, culling=False)
    c = forced(culled)
    x = np.array(d.unknowns.x0)
    culled.energy_and_grad(x, 0, 1.0)
    boxes, whole = c.boxes, [len(rows) for rows in culled._whole]
    far = x + 10 * c.radius
    for p, box_moves in ((far, False), (x, False), (far, False), (far + 10 * c.radius, True)):
        e, g = culled.energy_and_grad(p, 0, 1.0)
        assert e == pytest.approx(full.energy_and_grad(p, 0, 1.0)[0], rel=1e-12)
        np.testing.assert_allclose(g, full.energy_and_grad(p, 0, 1.0)[1], rtol=1e-12, atol=1e-9)
        outside_first = not box_moves and not c.inside(p)
        assert (culled.counts == whole) == outside_first  # run whole exactly when first outside
        assert c.boxes == boxes + box_moves


def test_an_index_whose_objects_moved_away_is_built_again() -> None:
    """The trees are built where the objects were; once they have all moved elsewhere (shuffled)
    a sort tries nearly every row, and the next box builds the index again, after which a sort
    tries what a fresh problem's does."""
    d = circles(200, 2, spread=300.0)
    culled, fresh = CompiledProblem(d, cache=None, culling=True), CompiledProblem(d, cache=None, culling=True)
    c, f = forced(culled), forced(fresh)
    x = np.array(d.unknowns.x0)
    culled.energy_and_grad(x, 0, 1.0)
    k = next(k for k, kind in enumerate(culled.kinds) if kind.name == "disjoint")
    first = c.indexes[k]
    moved = x.reshape(-1, 2)[np.random.default_rng(0).permutation(200)].ravel()
    for p in (moved, moved + 1e-3):
        c.center, c.strays = None, 1  # (every point sorts a box here)
        culled.energy_and_grad(p, 0, 1.0)
    assert first.stale and c.indexes[k] is not first
    f.step = c.step
    before = f.tried
    fresh.energy_and_grad(moved + 1e-3, 0, 1.0)
    tried = c.tried
    c.center, c.strays = None, 1
    culled.energy_and_grad(moved + 2e-3, 0, 1.0)
    assert c.tried - tried <= 1.5 * (f.tried - before)


def test_an_inner_sorts_listing_kept_as_rows_stray_and_settle_is_the_listing_taken_afresh() -> None:
    """`InnerSort` keeps its rows listed and its constant as unknowns stray and strayed rows are
    settled again, instead of taking them over all rows at every change. Oracle: the rows that
    are open or read a strayed unknown, and the sum of the others' values, taken afresh, after
    each of a random sequence of strays and settles."""
    rng = np.random.default_rng(3)
    problem = CompiledProblem(circles(30, 4, spread=50.0), cache=None)
    kind = next(kd for kd in problem.kinds if kd.name == "disjoint")  # 435 rows over 60 unknowns
    rows = np.arange(kind.n_rows)
    values = np.where(rng.random(len(rows)) < 0.3, np.nan, rng.normal(0, 100, len(rows)))
    varying = np.ones(60, bool)
    varying[rng.choice(60, 6, replace=False)] = False
    sort = culling.InnerSort.of(kind, rows, values.copy(), varying)
    one = np.eye(60, dtype=bool)
    reads = np.stack([np.any([c.reads(one[u]) for c in kind.columns if c.width], axis=0) for u in range(60)])
    strayed = np.zeros(60, bool)
    for _ in range(40):
        if rng.random() < 0.75:
            newly = rng.choice(np.flatnonzero(varying & ~strayed), 2) if (varying & ~strayed).any() else []
            strayed[newly] = True
            sort.stray(np.unique(np.asarray(newly, np.int64)))
        else:
            fresh = np.where(rng.random(len(rows)) < 0.3, np.nan, rng.normal(0, 100, len(rows)))
            sort.settle_strays(fresh.__getitem__)
            hit = reads[strayed].any(axis=0)
            values[hit] = fresh[hit]
            strayed[:] = False
        reading = reads[strayed].any(axis=0)
        listed = np.isnan(values) | reading
        got = sort.listed(7.0)
        np.testing.assert_array_equal(got.rows, rows[listed])
        assert math.isclose(got.constant, 7.0 + float(values[~listed].sum()), rel_tol=1e-12, abs_tol=1e-9)
        assert sort.strayed_rows == int(reading.sum())


def test_row_bounds_on_two_threads_are_the_bounds_on_one() -> None:
    from energies.compile.pieces import set_threads

    d = circles(120, 4, spread=300.0)
    problem = CompiledProblem(d, cache=None, culling=True)
    c = forced(problem)
    x = np.array(d.unknowns.x0)
    problem.energy_and_grad(x, 0, 1.0)  # sorts a box: the kinds' bounds are compiled
    k = next(k for k, kind in enumerate(problem.kinds) if kind.name == "disjoint")
    rows = np.arange(problem.kinds[k].n_rows)  # 7,140 rows: past the split
    lo, hi = x - 40.0, x + 40.0
    try:
        set_threads(1)
        one = c._bounds_at(k, lo, hi, rows)
        set_threads(2)
        two = c._bounds_at(k, lo, hi, rows)
    finally:
        set_threads(None)
    assert c._row_bounds(k)._twin is not None  # the second half ran on the twin
    np.testing.assert_array_equal(one, two)
    assert 0 < np.isnan(one).sum() < len(rows)  # some pairs proved constant on the box, some not


def test_the_rows_listed_as_unknowns_stray_are_the_open_or_strayed_rows() -> None:
    from energies.compile.culling import InnerSort
    from energies.grouping import grouping

    rng = np.random.default_rng(11)
    n_rows, n_unknowns = 3_000, 400
    rows = np.sort(rng.choice(50_000, n_rows, replace=False))  # the box's rows, ascending
    reads = rng.integers(0, n_unknowns, (n_rows, 2))  # each row reads two unknowns
    order, starts = grouping(reads.ravel(), n_unknowns)
    positions = np.repeat(np.arange(n_rows), 2)
    values = np.where(rng.random(n_rows) < 0.2, np.nan, rng.normal(size=n_rows))
    sort = InnerSort.settled_on(rows, values, (positions[order], starts))
    for step in range(12):
        if step == 6:  # strayed rows sorted again: some proved constant, some not
            sort.settle_strays(lambda r: np.where(rng.random(len(r)) < 0.3, np.nan, 1.0))
        sort.stray(np.unique(rng.integers(0, n_unknowns, rng.integers(1, 30))))
        listed = sort.listed(0.0)
        np.testing.assert_array_equal(listed.rows, rows[sort.open | sort.reads_strayed])
        kept = ~(sort.open | sort.reads_strayed)
        assert listed.constant == pytest.approx(float(sort.values[kept].sum()), rel=1e-12, abs=1e-12)
