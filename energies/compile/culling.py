"""Exact culling: goals that are constant around the current point are left out of the energy.

Most goals of a large diagram are exactly constant where the layout is: a satisfied `disjoint`
has penalty max(c, 0)^2 = 0 once its shapes are apart, the graph Style's repulsion is 0 beyond its
range, `min(5, rectLineDist(...))` is 5 once a label is off an edge. A *box* around the current
point x̄ (each unknown varying in the stage within ρ_i of its value, the others fixed) is chosen;
every goal whose energy term is exactly constant on the box is left out of the energy's row
lists and its constant added once (`energy.energy_function`'s c_obj and c_pen). While the
optimizer's points stay in the box, the energy and gradient it gets equal the full ones up to
the rounding of the sum: a constant term has zero gradient on the box. A point that leaves the
box (a line search's trial point too) moves the box there and the goals are sorted again.

Which goals are constant is decided from the energy's own IR: `adcore.interval` of each kind's
term, over boxes of its arguments; a point result (lo == hi) proves the term constant on that box
with that value (the interval contract, docs/interval.md). Candidates are not tried pair by pair:
each column's objects (the distinct shapes a column of the kind reads, `kinds.KindColumn`) are
clustered by their current values into a tree (median splits, `LEAF` objects a leaf), and tuples
of tree nodes, one per column, are tried from the roots down, a tuple covering every row whose
objects lie in its nodes (the box of a node encloses its objects' boxes); a tuple that covers no
row of the stage is dropped unbounded (the rows' product space is mostly empty where a kind reads
few of its columns' combinations, as `Edge(u, v); u has label`'s). A tuple proved constant
settles all its rows at once; one that is not is split at its largest node, until leaves; the rows
of leaf tuples still undecided are tried one by one. Far-apart clusters are settled near the
roots, so the work follows the goals that matter, not the number of rows; what remains linear
in the rows is a few numpy passes to list them (`Culler.derive`).

Boxes come in two sizes, as a neighbour list's skin: the box, sized for many steps and sorted by
the tree walk above, and an inner box within it, sized per unknown by its steps of now and
sorted by trying only the box's rows one by one (`InnerBox`): a layout converges in a box sized
by its first steps, and most of that box's rows are constant nearer by. An unknown that leaves
its inner range takes the box's range until its rows are sorted again, so no point inside the
box ever costs more than the box's rows.

Culling is used where it pays, as measured (`Culler`'s policy), with box radii that follow the
optimizer's steps.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

import adcore
from adcore import Int, Real, Vec, fn, interval
from adcore import math as am

from ..grouping import grouping, groups
from .energy import _used
from .kinds import GoalKind, KindColumn
from .pieces import beside, threads

CULL_MIN_ROWS = 512  # kinds with fewer rows are always evaluated whole
LEAF = 8  # objects in a leaf of a column's tree
BATCH = 8192  # node tuples one interval call bounds
SPLIT_TUPLES = 1024  # tuples from which a bounds call is shared with a second thread, where allowed
MAX_LEAF_TUPLES = 1 << 22  # a kind whose columns' leaves combine to more is not culled
REBUILD = 10  # boxes sorted with one index (`KindIndex`) before its trees are built again
STALE = 2.0  # an index is built again once a sort with it tries this many times its first sort's
# tuples: its objects have moved away from the clusters it was built on (an optimizer's first
# steps move everything), and a box whose node tuples span the canvas tries every row
# The policy (`Culler`):
FULL_FIRST = 2  # evaluations run whole first, to time a full evaluation
BACKOFF, BACKOFF_GROWTH, MAX_BACKOFF = 16, 4, 64  # evaluations run whole after culling did not
# pay, growing each time up to MAX_BACKOFF (a stage whose first steps were too long for boxes
# to last goes on with shorter ones, for which they may: it is tried again at least that often)
LIFE = 16.0  # a box's radius, in typical steps between evaluations
FIRST_RADIUS = 0.01  # the typical step before one is seen, as a share of the unknowns' spread
MIN_RADIUS = 1e-6  # the smallest radius, as a share of the unknowns' spread
MAX_RADIUS = 0.05  # the largest (a larger box holds too many goals to pay for itself)
OUTLAST = 4.0  # a box dearer than a whole evaluation is sorted only if its largest radius spans this
# many typical steps (longer steps, an optimizer's first ones, leave it within an evaluation or two)
MOVES = 16  # the typical step is the median of this many last ones (a line search's long trial
# steps, and the first step of each round, are outliers)
MEAN = 0.8  # weight of the past in running means of costs and steps
JUDGE = 3  # culled evaluations before culling is judged on its measured cost
WORTH = 0.8  # culling stays on while a culled evaluation costs less than this share of a full one
RECENT = 4  # boxes whose sorting is spread over the evaluations they served
INNER = 0.5  # an inner box is sorted when the steps ask for at most this share of the box's radius
INNER_LIFE = 8.0  # an unknown's inner range, in its own largest recent steps (`Culler._halves`)
REGROW = 2.0  # an inner box is sorted afresh once its ranges span this many times what the steps ask
OWN_FLOOR = 0.125  # an unknown's inner range is sized by its own steps, down to this share of the largest
RENT = 4.0  # strayed rows are sorted again once listed this many evaluations each, on average
DISTINCT_BY_MASK = 32  # row positions are made distinct through a mask over the rows from 1/32 of them on
FLOOR_REACH = 1e100  # `Culler.floors` hold wherever every unknown is within this of 0
PAIR = {"lo": Real, "hi": Real}


def cullable(kind: GoalKind) -> bool:
    """Whether culling may pay for a kind: many rows, some column of many objects reading unknowns,
    and leaf tables of a reasonable size."""
    used = _used(kind)
    leaves = math.prod(max(1, -(-c.n_objects // max(1, LEAF // 2))) for c in used)
    worth = kind.n_rows >= CULL_MIN_ROWS and any(c.width and c.n_objects > 1 for c in used)
    return worth and leaves <= MAX_LEAF_TUPLES


def term_function(kind: GoalKind, kind_fn: adcore.Fn) -> adcore.Fn:
    """The kind's energy term over its used columns: the value (objectives), max(c, 0)^2 (constraints)."""
    used = _used(kind)
    params = [Vec(n, Real) for c in used for n in (c.width, c.n_consts)]

    def body(*vs: Any) -> Any:
        v = kind_fn(*vs)
        return v if kind.goal == "objective" else am.max(v, 0.0) ** 2

    return fn(params, Real, body, name=f"{kind_fn.name}_term")


def bounds_function(kind: GoalKind, kind_fn: adcore.Fn, near: bool = False) -> adcore.Fn:
    """bounds(per used column: lo_in, hi_in, lo_c, hi_c, node of each tuple; count) -> the term's
    {"lo", "hi"} over each of the first `count` tuples of nodes: one compiled loop. `near`: with
    the library's rules for small boxes (`adcore.interval(near=True)`), for rows tried one by one."""
    used = _used(kind)
    term = interval(term_function(kind, kind_fn), near)
    params: list[Any] = []
    for c in used:
        nodes = node_capacity(c)
        params += [Vec(nodes, Vec(c.width, Real))] * 2 + [Vec(nodes, Vec(c.n_consts, Real))] * 2
        params.append(Vec(BATCH, Int))
    params.append(Int)

    def body(*tables: Any) -> Any:
        count = tables[-1]

        def one(i: Any) -> Any:
            args = []
            for k, c in enumerate(used):
                lo_in, hi_in, lo_c, hi_c, ids = tables[5 * k : 5 * k + 5]
                node = ids[i]
                args += [_ranges(c.width, lo_in, hi_in, node), _ranges(c.n_consts, lo_c, hi_c, node)]
            return term(*args)

        return adcore.vec(BATCH, PAIR, one, count=count)

    return fn(params, Vec(BATCH, PAIR), body, name=f"{kind_fn.name}_bounds")


def _ranges(n: int, lo: Any, hi: Any, node: Any) -> Any:
    """Row `node` of a node table's (lo, hi) pair, as the ranges an interval function takes."""
    return adcore.vec(n, PAIR, lambda j: {"lo": lo[node][j], "hi": hi[node][j]})


def node_capacity(c: KindColumn) -> int:
    """Rows of a column's node table: its objects, then at most 2n tree nodes."""
    return 3 * c.n_objects + 2


@dataclass
class Tree:
    """A column's objects clustered by value: node k covers objects perm[start[k]:end[k]].

    Nodes are numbered in creation order, the root 0; `children[k]` is (-1, -1) for a leaf. Leaves
    are numbered in the order of their ranges (`leaf_of_node`; -1 for inner nodes), so the leaves
    under a node are the contiguous range `first_leaf[k]..last_leaf[k]`."""

    perm: np.ndarray
    start: np.ndarray
    end: np.ndarray
    children: np.ndarray
    leaf_of_object: np.ndarray
    first_leaf: np.ndarray
    last_leaf: np.ndarray
    leaves: np.ndarray  # the leaf nodes, in leaf order
    levels: list[np.ndarray]  # the inner nodes by depth, deepest first (each after its descendants)

    @property
    def n_leaves(self) -> int:
        return int(self.last_leaf[0]) + 1

    def is_leaf(self, nodes: np.ndarray) -> np.ndarray:
        return self.children[nodes, 0] < 0


def build_tree(points: np.ndarray) -> Tree:
    """Median splits along the widest coordinate until LEAF objects a node."""
    n = len(points)
    perm = np.arange(n)
    start, end, children = [0], [n], [[-1, -1]]
    todo = [0]
    while todo:
        k = todo.pop()
        s, e = start[k], end[k]
        if e - s <= LEAF or points.shape[1] == 0:
            continue
        block = points[perm[s:e]]
        spread = block.max(axis=0) - block.min(axis=0)
        if not np.any(spread > 0):
            continue
        dim = int(np.argmax(spread))
        half = (e - s) // 2
        order = np.argpartition(block[:, dim], half)
        perm[s:e] = perm[s:e][order]
        for lo, hi in ((s, s + half), (s + half, e)):
            children.append([-1, -1])
            start.append(lo)
            end.append(hi)
            todo.append(len(start) - 1)
        children[k] = [len(start) - 2, len(start) - 1]
    start_a, end_a, children_a = np.array(start), np.array(end), np.array(children)
    leaves = np.flatnonzero(children_a[:, 0] < 0)
    leaves = leaves[np.argsort(start_a[leaves])]
    leaf_of_node = np.full(len(start_a), -1)
    leaf_of_node[leaves] = np.arange(len(leaves))
    leaf_of_object = np.empty(n, np.int64)
    for leaf, node in enumerate(leaves.tolist()):
        leaf_of_object[perm[start_a[node] : end_a[node]]] = leaf
    leaf_starts = start_a[leaves]
    first_leaf = np.searchsorted(leaf_starts, start_a, side="left")
    last_leaf = np.searchsorted(leaf_starts, end_a, side="left") - 1
    depth = np.zeros(len(start_a), np.int64)
    for k in range(len(start_a)):  # children are made after their parent
        if children_a[k, 0] >= 0:
            depth[children_a[k]] = depth[k] + 1
    inner = np.flatnonzero(children_a[:, 0] >= 0)
    levels = [inner[depth[inner] == level] for level in range(int(depth.max(initial=0)), -1, -1)]
    return Tree(perm, start_a, end_a, children_a, leaf_of_object, first_leaf, last_leaf, leaves, levels)


@dataclass
class ColumnBoxes:
    """A column's node table: rows 0..n-1 its objects' boxes, then its tree nodes' (`Tree`; none
    in `object_boxes`'s)."""

    tree: Tree
    lo_in: np.ndarray
    hi_in: np.ndarray
    lo_c: np.ndarray
    hi_c: np.ndarray

    @property
    def n_objects(self) -> int:
        return len(self.tree.perm)


def column_boxes(c: KindColumn, tree: Tree, lo: np.ndarray, hi: np.ndarray) -> ColumnBoxes:
    """Each object's box (its unknowns within [lo, hi], per unknown; its constants exact) and each
    node's."""
    empty = np.zeros((c.n_objects, 0))
    lo_in, hi_in = _node_boxes(tree, lo[c.slots] if c.width else empty, hi[c.slots] if c.width else empty)
    lo_c, hi_c = _node_boxes(tree, c.consts, c.consts)
    return ColumnBoxes(tree, lo_in, hi_in, lo_c, hi_c)


def object_boxes(c: KindColumn, tree: Tree, lo: np.ndarray, hi: np.ndarray) -> ColumnBoxes:
    """`column_boxes` without the tree nodes' rows: all that rows tried one by one read."""
    empty = np.zeros((c.n_objects, 0))
    lo_in, hi_in = (lo[c.slots], hi[c.slots]) if c.width else (empty, empty)
    return ColumnBoxes(tree, lo_in, hi_in, c.consts, c.consts)


def _node_boxes(tree: Tree, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The node table of one kind of value: the objects' (lo, hi), then each tree node's, which
    encloses its objects': leaves reduce their objects, inner nodes their two children, deepest
    nodes first (children are made after their parent)."""
    n, m, width = len(lo), len(tree.start), lo.shape[1]
    out_lo, out_hi = np.empty((n + m, width)), np.empty((n + m, width))
    out_lo[:n], out_hi[:n] = lo, hi
    if not width:
        return out_lo, out_hi
    leaves = tree.leaves
    ordered_lo, ordered_hi = lo[tree.perm], hi[tree.perm]
    out_lo[n + leaves] = np.minimum.reduceat(ordered_lo, tree.start[leaves], axis=0)
    out_hi[n + leaves] = np.maximum.reduceat(ordered_hi, tree.start[leaves], axis=0)
    for level in tree.levels:
        a, b = n + tree.children[level, 0], n + tree.children[level, 1]
        out_lo[n + level] = np.minimum(out_lo[a], out_lo[b])
        out_hi[n + level] = np.maximum(out_hi[a], out_hi[b])
    return out_lo, out_hi


Bounds = Callable[[list[ColumnBoxes], np.ndarray], tuple[np.ndarray, np.ndarray]]
RowBounds = Callable[[int, np.ndarray, np.ndarray, np.ndarray], np.ndarray]  # (kind, lo, hi, rows) -> values


@dataclass
class KindIndex:
    """A cullable kind's rows grouped by the leaves of its columns' trees, built at some point and
    kept for `REBUILD` boxes, or until a sort tries `STALE` times what its first did (a tree stays
    valid as its objects move; only its boxes loosen).

    Leaf tuples are numbered in mixed radix over the columns' leaf counts (`shape`); the rows of
    leaf tuple t are `order[starts[t]:starts[t + 1]]`; `counts[stage]` is a summed-area table of
    each leaf tuple's rows in that stage (one more entry along every axis), from which the rows a
    node tuple covers are counted in 2^columns reads."""

    trees: list[Tree]
    shape: tuple[int, ...]
    key: np.ndarray  # each row's leaf tuple
    order: np.ndarray
    starts: np.ndarray
    counts: dict[int, np.ndarray]
    boxes: int = 0  # boxes sorted with it
    first_tried: int = 0  # bounds its first sort computed
    stale: bool = False  # a later sort computed more than STALE times as many: build it again

    def stage_counts(self, stage: int, in_stage: np.ndarray) -> np.ndarray:
        found = self.counts.get(stage)
        if found is None:
            per_tuple = np.bincount(self.key[in_stage], minlength=math.prod(self.shape)).reshape(self.shape)
            found = np.zeros(tuple(n + 1 for n in self.shape))
            inner = tuple(slice(1, None) for _ in self.shape)
            found[inner] = per_tuple
            for axis in range(len(self.shape)):
                found = np.cumsum(found, axis=axis)
            self.counts[stage] = found
        return found


def index_kind(kind: GoalKind, x: np.ndarray) -> KindIndex:
    used = _used(kind)
    trees = [build_tree(x[c.slots] if c.width else c.consts) for c in used]
    shape = tuple(t.n_leaves for t in trees)
    key = np.zeros(kind.n_rows, np.int64)
    for t, c in zip(trees, used):
        key = key * t.n_leaves + t.leaf_of_object[c.obj]
    order, starts = grouping(key, math.prod(shape))
    return KindIndex(trees, shape, key, order, starts, {})


@dataclass
class Sorted:
    """One kind sorted at a box: the rows left in (ascending) and what the others add up to."""

    rows: np.ndarray
    constant: float
    tried: int  # node tuples and rows whose bounds were computed


def sort_kind(
    kind: GoalKind,
    index: KindIndex,
    boxes: list[ColumnBoxes],
    bounds: Bounds,
    counts: np.ndarray,
    in_stage: np.ndarray,
    row_bounds: Bounds | None = None,
) -> Sorted:
    """Split the rows of `kind` in the stage (`in_stage`, bool per row; `counts`, its summed-area
    table) into those left in and those constant on the box (see the module docstring). The rows
    tried one by one use `row_bounds` when given (the rules for small boxes: on a row's box, up to
    `MAX_RADIUS` of the spread, the library's Lipschitz bounds alone prove what its full rules
    prove, as measured on the graph Style's rows; either way every bound is sound)."""
    used = _used(kind)
    trees = index.trees
    offsets = np.array([b.n_objects for b in boxes])  # a column's tree nodes follow its objects
    frontier = np.zeros((1, len(used)), np.int64)
    constant, tried = 0.0, 0
    open_leaves: list[np.ndarray] = []
    while len(frontier):
        covered = _covered(trees, counts, frontier)
        some = covered > 0  # tuples of no row of the stage: nothing to prove
        frontier, covered = frontier[some], covered[some]
        lo, hi = bounds(boxes, frontier + offsets)
        tried += len(frontier)
        point = lo == hi
        if point.any():
            constant += float(np.dot(lo[point], covered[point]))
        rest = frontier[~point]
        inner = np.stack([~t.is_leaf(rest[:, k]) for k, t in enumerate(trees)], axis=1)
        splits = inner.any(axis=1)
        open_leaves.append(rest[~splits])  # leaf tuples not settled: their rows are tried one by one
        sizes = np.stack([t.end[rest[:, k]] - t.start[rest[:, k]] for k, t in enumerate(trees)], axis=1)
        sizes[~inner] = -1
        rest, split = rest[splits], np.argmax(sizes[splits], axis=1)
        left, right = rest.copy(), rest.copy()
        for k, t in enumerate(trees):
            pick = split == k
            left[pick, k] = t.children[rest[pick, k], 0]
            right[pick, k] = t.children[rest[pick, k], 1]
        frontier = np.concatenate([left, right])
    rows = _rows_of(index, np.concatenate(open_leaves))
    left = sort_rows(kind, boxes, row_bounds or bounds, np.sort(rows[in_stage[rows]]))
    return Sorted(left.rows, constant + left.constant, tried + left.tried)


def sort_rows(kind: GoalKind, boxes: list[ColumnBoxes], bounds: Bounds, rows: np.ndarray) -> Sorted:
    """Split the given rows (ascending) into those left in and those constant on the box, one by one."""
    values = row_values(kind, boxes, bounds, rows)
    left = np.isnan(values)
    return Sorted(rows[left], float(values[~left].sum()), len(rows))


def row_values(kind: GoalKind, boxes: list[ColumnBoxes], bounds: Bounds, rows: np.ndarray) -> np.ndarray:
    """Per row: its term's value where the box proves it constant, NaN where it is not (a proved
    value is a point interval lo == hi, never NaN)."""
    used = _used(kind)
    out = np.empty(len(rows))
    for s in range(0, len(rows), BATCH):
        part = rows[s : s + BATCH]
        lo, hi = bounds(boxes, np.stack([c.obj[part] for c in used], axis=1).astype(np.int64))
        out[s : s + len(part)] = np.where(lo == hi, lo, np.nan)
    return out


def _covered(trees: list[Tree], counts: np.ndarray, tuples: np.ndarray) -> np.ndarray:
    """How many rows of the stage each node tuple covers: its leaf ranges form a box of the leaf
    table, counted from the summed-area table by inclusion and exclusion of the box's corners."""
    total = np.zeros(len(tuples))
    for corner in range(1 << len(trees)):
        index, sign = [], 1.0
        for k, t in enumerate(trees):
            nodes = tuples[:, k]
            if (corner >> k) & 1:
                index.append(t.last_leaf[nodes] + 1)
            else:
                index.append(t.first_leaf[nodes])
                sign = -sign
        total += sign * counts[tuple(index)]
    return total


def _rows_of(index: KindIndex, leaf_tuples: np.ndarray) -> np.ndarray:
    """The rows of the given leaf tuples (node tuples whose nodes are all leaves)."""
    if not len(leaf_tuples):
        return np.zeros(0, np.int64)
    flat = np.zeros(len(leaf_tuples), np.int64)
    for k, t in enumerate(index.trees):
        flat = flat * t.n_leaves + t.first_leaf[leaf_tuples[:, k]]
    return groups(index.order, index.starts, flat)


class CompiledBounds:
    """A kind's `bounds_function`, compiled, called on batches of node tuples. Where the process
    allows two threads (`pieces.threads`), a call on at least `SPLIT_TUPLES` tuples gives the second
    half to a twin instance on the helper thread (`pieces.beside`): each tuple's bounds are its own,
    so the answer is the same either way."""

    def __init__(self, kind: GoalKind, f: adcore.Fn, time_limit: float | None) -> None:
        self.used = _used(kind)
        self.kind, self.f, self.time_limit = kind, f, time_limit
        self.compiled = adcore.Compiled(f, time_limit=time_limit, bounds_checks=False)
        self._boxes: list[ColumnBoxes] | None = None  # whose node tables the memory holds
        self._twin: CompiledBounds | None = None

    def __call__(self, boxes: list[ColumnBoxes], ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if len(ids) < SPLIT_TUPLES or threads() < 2:
            return self._bounds(boxes, ids)
        if self._twin is None:
            self._twin = CompiledBounds(self.kind, self.f, self.time_limit)
        half, twin = len(ids) // 2, self._twin
        (lo_a, hi_a), (lo_b, hi_b) = beside(
            lambda: self._bounds(boxes, ids[:half]), lambda: twin._bounds(boxes, ids[half:])
        )
        return np.concatenate([lo_a, lo_b]), np.concatenate([hi_a, hi_b])

    def _bounds(self, boxes: list[ColumnBoxes], ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        c = self.compiled
        if self._boxes is not boxes:  # a new box: its node tables, written once for all its calls
            for k, b in enumerate(boxes):
                n = len(b.lo_in)
                for j, array in enumerate((b.lo_in, b.hi_in, b.lo_c, b.hi_c)):
                    c.input(5 * k + j)[:n] = array
            self._boxes = boxes
        lo_out, hi_out = np.empty(len(ids)), np.empty(len(ids))
        for s in range(0, len(ids), BATCH):
            part = ids[s : s + BATCH]
            for k in range(len(boxes)):
                c.input(5 * k + 4)[: len(part)] = part[:, k]
            c.call_raw(len(part))
            lo_out[s : s + len(part)] = c.output(0)[: len(part)]
            hi_out[s : s + len(part)] = c.output(1)[: len(part)]
        return lo_out, hi_out


class Culler:
    """The box around the current point, the rows left in at it, and when culling pays.

    Policy (each number measured, none assumed): the first evaluations run whole and time a full
    evaluation. Then goals are culled, at a box whose radius is `LIFE` times the typical distance
    (in each unknown, the largest; the median of the last `MOVES`) between consecutive evaluation
    points, so that a box lasts about `LIFE` evaluations. A culled evaluation costs its own time
    plus its share of sorting: the sorting of the last `RECENT` boxes over the evaluations they
    served, and at least `LIFE` of them (a box just sorted has served few, yet is expected to
    serve about `LIFE`; charging its whole sorting to its first evaluations would stop culling
    that pays). Culling stops when it does not pay: at once when the first box's sorting spread
    over `LIFE` evaluations already exceeds `WORTH` of a full evaluation, else when that cost of a
    culled evaluation does, judged from the `JUDGE`th culled evaluation on (large steps early in
    a layout: every point leaves its box, and boxes serve one or two evaluations each). The energy
    then runs whole for `BACKOFF` evaluations, `BACKOFF_GROWTH` times longer each time up to
    `MAX_BACKOFF`, and culling is tried again.
    A point outside the box is evaluated whole once before the box moves (`strays`; the caller,
    energies.compile.problem, keeps the box): a line search's long trial step, followed by shorter
    ones, would otherwise sort a box that lasts one evaluation. An inner box (`InnerBox`) is made
    only while `INNER_LIFE` typical steps are at most `INNER` of the box's radius (else the box's
    rows are as few); its sorting counts as the box's.
    Where sorting a box costs more than a whole evaluation, none is sorted while the typical step
    is too long for a box to last (`box_lasts`): the energy runs whole meanwhile, which is no
    judgement on culling.
    Each layout stage has other goals, unknowns and steps, so other costs: a new stage starts the
    policy afresh, its steps too (the last steps of a converged stage are far shorter than the
    first of the next, whose boxes they would size); so does a new start (`new_run`).
    """

    def __init__(
        self,
        kinds: Sequence[GoalKind],
        kind_fns: Sequence[adcore.Fn],
        bounds_fns: dict[tuple[int, bool], adcore.Fn | None],
        time_limit: float | None,
    ) -> None:
        self.kinds = list(kinds)
        self.kind_fns = kind_fns
        self.bounds_fns = bounds_fns  # shared by problems of one structure (energies.compile.problem)
        self.time_limit = time_limit
        self.which = [k for k, kind in enumerate(kinds) if cullable(kind)]
        self._floors: dict[int, float] | None = None  # `floors`, once asked
        self.bounds: dict[bool, dict[int, CompiledBounds]] = {}  # compiled when first needed, per
        # `near` (the rules for small boxes, for rows tried one by one; `bounds_function`)
        self.indexes: dict[int, KindIndex] = {}
        self.center: np.ndarray | None = None
        self.radius: np.ndarray | None = None  # per unknown: ρ where it varies, 0 where it is fixed
        self.box_lo, self.box_hi = np.zeros(0), np.zeros(0)  # center -/+ radius
        self.scale = 0.0  # ρ
        self.floor = 0.0  # the smallest radius (MIN_RADIUS of the spread of the box's center)
        self.inner: InnerBox | None = None
        # policy state (see the class docstring)
        self.full_cost: float | None = None  # seconds of a full evaluation (running mean)
        self.eval_cost: float | None = None  # seconds of a culled one, sorting aside (running mean)
        self.sort_cost: float | None = None  # seconds the last box took to sort
        self.culled_runs = 0  # culled evaluations since culling was last turned on
        self.recent: list[list[float]] = []  # [seconds sorting, evaluations served] of the last
        # RECENT boxes since culling was last turned on, the current box last
        self.step: float | None = None  # typical largest change of an unknown between evaluations
        self.moves: list[float] = []  # the last MOVES such changes
        self.unknown_moves: list[np.ndarray] = []  # the last MOVES changes of each unknown
        self.new_moves = False  # moves came since `step` was taken (it is taken when a box is sized:
        # a median at every evaluation cost more than a small diagram's energy)
        self.last: np.ndarray | None = None
        self.strays = 0  # points outside the box in a row (set by the caller)
        self.off_until = FULL_FIRST  # evaluations before which the energy runs whole
        self.backoff = BACKOFF
        self.evaluations = 0
        self.boxes = 0  # boxes sorted (for benchmarks and tests)
        self.tried = 0  # bounds computed, all boxes

    def _compiled_bounds(self, near: bool = False) -> dict[int, CompiledBounds]:
        """Each cullable kind's bounds, compiled (the first time culling sorts goals): the bounds
        function of a kind of this structure is traced once per process (`bounds_fns`), its module
        compiled once (adcore's module cache). Kinds using a primitive without an interval rule are
        evaluated whole."""
        found = self.bounds.get(near)
        if found is None:
            found = self.bounds[near] = {}
            for k in self.which:
                if near and not adcore.has_near_rules(self.kind_fns[k]):
                    continue  # the same rules as the full bounds', which `_row_bounds` takes
                if (k, near) not in self.bounds_fns:
                    try:
                        self.bounds_fns[k, near] = bounds_function(self.kinds[k], self.kind_fns[k], near)
                    except adcore.AdcoreError:
                        self.bounds_fns[k, near] = None
                f = self.bounds_fns[k, near]
                if f is not None:
                    found[k] = CompiledBounds(self.kinds[k], f, self.time_limit)
            if not near:
                self.which = list(found)
        return found

    def floors(self) -> dict[int, float]:
        """Per cullable kind with an interval rule: a number no row of it is below, wherever the
        unknowns are within `FLOOR_REACH` of 0 (the lower end of its term's bounds on the box of
        every unknown within that and each constant between its column's minimum and maximum: one
        interval evaluation, on one such box per column). Kinds whose bounds are not finite there
        have none."""
        if self._floors is None:
            self._floors = {}
            for k, bounds in self._compiled_bounds().items():
                boxes = []
                for c in _used(self.kinds[k]):
                    consts = c.consts if c.n_objects else np.zeros((1, c.n_consts))
                    reach = np.full((1, c.width), FLOOR_REACH)
                    boxes.append(
                        ColumnBoxes(
                            build_tree(np.zeros((1, 0))),
                            -reach,
                            reach,
                            consts.min(axis=0)[None],
                            consts.max(axis=0)[None],
                        )
                    )
                lo, _ = bounds(boxes, np.zeros((1, len(boxes)), np.int64))
                if np.isfinite(lo[0]):
                    self._floors[k] = float(lo[0])
        return self._floors

    def new_stage(self) -> None:
        """A stage has other goals and unknowns, so other costs: its policy starts afresh."""
        self.full_cost = self.eval_cost = self.sort_cost = None
        self.culled_runs = 0
        self.recent = []
        self.off_until = self.evaluations + FULL_FIRST
        self.backoff = BACKOFF
        self.center = self.inner = None
        self.step, self.moves, self.strays, self.new_moves = None, [], 0, False
        self.unknown_moves = []

    def new_run(self) -> None:
        """A new run of the optimizer (another start) from elsewhere: its policy starts afresh, and
        the jump to its first point is no step."""
        self.new_stage()
        self.last = None

    def box_lasts(self, x: np.ndarray, varying: np.ndarray) -> bool:
        """Whether a box sorted at x may pay: its sorting is known to cost no more than a whole
        evaluation, or it would outlast `OUTLAST` typical steps at its largest radius."""
        step, sort, full = self.typical_step(), self.sort_cost, self.full_cost
        if step is None or sort is None or full is None or sort <= full:
            return True
        return OUTLAST * step <= _radius_range(_spread(x, varying))[1]

    def wants(self) -> bool:
        """Whether the next evaluation should be culled."""
        return bool(self.which) and self.evaluations >= self.off_until and self.full_cost is not None

    def inside(self, x: np.ndarray) -> bool:
        """Whether x is in the box (the very bounds it was sorted on, not |x - center| <= radius,
        which rounding may let a point one ulp outside pass)."""
        return self.center is not None and bool(np.all((x >= self.box_lo) & (x <= self.box_hi)))

    def inside_inner(self, x: np.ndarray) -> bool:
        """Whether x lies in the inner box (for tests: evaluations ask `inner_lists`)."""
        return self.inner is not None and self.inner.inside(x)

    def observe(self, x: np.ndarray, seconds: float, culled: bool) -> None:
        """One evaluation at x took `seconds`, culled or whole: update the costs, step and policy."""
        self.moved(x)
        self.timed(seconds, culled)

    def moved(self, x: np.ndarray) -> None:
        """An evaluation at x (of φ alone, or the first at x): the step to it, and its count."""
        if self.last is not None and len(x) == len(self.last):
            change = np.abs(x - self.last)
            self.moves.append(float(np.max(change, initial=0.0)))
            del self.moves[:-MOVES]
            self.unknown_moves.append(change)
            del self.unknown_moves[:-MOVES]
            self.new_moves = True
        self.last = x.copy()
        self.evaluations += 1

    def timed(self, seconds: float, culled: bool) -> None:
        """An evaluation with its gradient took `seconds`, culled or whole: the costs and policy
        (φ alone costs less and is not timed)."""
        if not culled:
            self.full_cost = _mean(self.full_cost, seconds)
            return
        if self.full_cost is None or not self.recent:  # nothing to judge against (culling was asked for)
            return
        self.recent[-1][1] += 1
        self.culled_runs += 1
        self.eval_cost = _mean(None if self.culled_runs == 1 else self.eval_cost, seconds)
        first_box = self.culled_runs == 1 and self.recent[0][0] / LIFE + seconds > WORTH * self.full_cost
        if first_box or (self.culled_runs >= JUDGE and self.cull_cost() > WORTH * self.full_cost):
            self._stop()

    def typical_step(self) -> float | None:
        """`step`, taken again if moves came since (the caller asks whenever it may size a box, up
        to once an evaluation: `statistics.median`, as numpy's call overhead outweighs MOVES floats)."""
        if self.new_moves:
            self.step, self.new_moves = statistics.median(self.moves), False
        return self.step

    def cull_cost(self) -> float:
        """Seconds of a culled evaluation, its share of sorting included (see the class docstring)."""
        sorting = sum(seconds for seconds, _ in self.recent)
        served = sum(runs for _, runs in self.recent)
        return (self.eval_cost or 0.0) + sorting / max(served, LIFE)

    def box_sorted(self, seconds: float) -> None:
        """A box was sorted in `seconds`: it serves the evaluations from now on."""
        self.sort_cost = seconds
        self.recent.append([seconds, 0])
        del self.recent[:-RECENT]

    def _stop(self) -> None:
        """Culling did not pay: whole evaluations for a while (see the class docstring)."""
        self.off_until = self.evaluations + self.backoff
        self.backoff = min(self.backoff * BACKOFF_GROWTH, MAX_BACKOFF)
        self.culled_runs = 0
        self.recent = []
        self.center = self.inner = None

    def derive(
        self, x: np.ndarray, stage: int, varying: np.ndarray, in_stage: Sequence[np.ndarray]
    ) -> dict[int, Sorted]:
        """Move the box to x and sort each cullable kind's rows of the stage (`in_stage[k]`); a kind
        with none (another stage's) is left out: its whole list in the stage is already empty."""
        # (compiling the bounds, once a process and structure, is no cost of this box: charged to
        # it, a large diagram's first box would stop culling that pays)
        bounds = self._compiled_bounds()
        self._compiled_bounds(near=True)
        start = time.perf_counter()
        spread = _spread(x, varying)
        step = self.typical_step()
        typical = step if step is not None else FIRST_RADIUS * spread
        smallest, largest = _radius_range(spread)
        scale = min(max(LIFE * typical, smallest), largest)
        radius = self.radius = np.where(varying, scale, 0.0)
        self.center, self.scale, self.inner = x.copy(), scale, None
        self.box_lo, self.box_hi = x - radius, x + radius  # as proved on, to the last bit
        self.floor = smallest
        out = {}
        for k in bounds:
            kind = self.kinds[k]
            if not in_stage[k].any():  # a kind of other stages: none of its rows to sort
                continue
            index = self.indexes.get(k)
            if index is None or index.boxes >= REBUILD or index.stale:
                index = self.indexes[k] = index_kind(kind, x)
            index.boxes += 1
            boxes = [column_boxes(c, t, self.box_lo, self.box_hi) for c, t in zip(_used(kind), index.trees)]
            counts = index.stage_counts(stage, in_stage[k])
            sorted_ = sort_kind(kind, index, boxes, bounds[k], counts, in_stage[k], self._row_bounds(k))
            if index.boxes == 1:
                index.first_tried = sorted_.tried
            index.stale = sorted_.tried > STALE * max(index.first_tried, CULL_MIN_ROWS)
            self.tried += sorted_.tried
            out[k] = sorted_
        self.boxes += 1
        self.box_sorted(time.perf_counter() - start)
        return out

    def inner_lists(self, x: np.ndarray, box: dict[int, Sorted]) -> tuple[dict[int, Sorted] | None, bool]:
        """The rows to list at x, a point in the box, from the inner box (`InnerBox`), and whether
        they changed since the last call; None when the steps ask for more than `INNER` of the
        box's radius (the box's rows then). Called once an evaluation: it keeps the inner box's
        accounts."""
        assert self.center is not None and self.radius is not None
        step = self.typical_step()
        if step is None or INNER_LIFE * step > INNER * self.scale:
            changed, self.inner = self.inner is not None, None
            return None, changed
        reach = max(INNER_LIFE * step, self.floor)
        inner = self.inner
        if inner is None or inner.box is not box or inner.reach > REGROW * reach:
            self.inner = self._sort_inner_afresh(x, box, reach)
            return self.inner.lists(), True
        changed = inner.stray(x)
        inner.rent += inner.stray_rows
        if inner.stray_rows and inner.rent > RENT * inner.stray_rows:
            start = time.perf_counter()
            self.tried += inner.sort_strays(x, self._halves(reach), self._bounds_at)
            self._charge(time.perf_counter() - start)
        elif not changed:
            return None, False
        return inner.lists(), True

    def _halves(self, reach: float) -> np.ndarray:
        """Each unknown's inner half-width: `INNER_LIFE` times its own largest change among the last
        `MOVES` evaluations (a typical step of its own would leave its range at the next long trial
        step of a line search), at least `OWN_FLOOR` of `reach` (the typical largest step's), at
        most `reach`; 0 where the stage does not vary it."""
        assert self.radius is not None
        # (never a point, hence the floor: a term constant on a box of no width may still have a
        # gradient there)
        own = INNER_LIFE * np.max(self.unknown_moves, axis=0) if self.unknown_moves else reach
        return np.where(self.radius > 0, np.clip(own, max(OWN_FLOOR * reach, self.floor), reach), 0.0)

    def _bounds_at(self, k: int, lo: np.ndarray, hi: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """`row_values` of kind k's rows on the box [lo, hi]."""
        kind, trees = self.kinds[k], self.indexes[k].trees
        boxes = [object_boxes(c, t, lo, hi) for c, t in zip(_used(kind), trees)]
        return row_values(kind, boxes, self._row_bounds(k), rows)

    def _row_bounds(self, k: int) -> CompiledBounds:
        """Kind k's bounds for rows tried one by one: its rules for small boxes, its full ones
        where it has none."""
        return self._compiled_bounds(near=True).get(k) or self._compiled_bounds()[k]

    def _sort_inner_afresh(self, x: np.ndarray, box: dict[int, Sorted], reach: float) -> InnerBox:
        """A new inner box at x. Where the last one was in the same box, its rows proved constant
        keep their values when each unknown they read ranges within its last range (a term
        constant on a box is constant on any box within it): only the others are tried again."""
        assert self.center is not None and self.radius is not None
        start = time.perf_counter()
        old = self.inner if self.inner is not None and self.inner.box is box else None
        inner = InnerBox(box, self.box_lo, self.box_hi, reach, len(x))
        inner.recentre(np.ones(len(x), bool), x, self._halves(reach))
        within = None if old is None else (inner.lo >= old.lo) & (inner.hi <= old.hi)
        for k, outer in box.items():
            if old is None or within is None:
                values = self._bounds_at(k, inner.lo, inner.hi, outer.rows)
                inner.sorts[k] = InnerSort.of(self.kinds[k], outer.rows, values, self.radius > 0)
                self.tried += len(outer.rows)
                continue
            sort = old.sorts[k]
            again = sort.open | sort.reads_strayed | sort.rows_reading(~within)
            at = np.flatnonzero(again)
            values = sort.values.copy()
            values[at] = self._bounds_at(k, inner.lo, inner.hi, sort.rows[at])
            inner.sorts[k] = InnerSort.settled_on(sort.rows, values, sort.readers)
            self.tried += len(at)
        self._charge(time.perf_counter() - start)
        return inner

    def _charge(self, seconds: float) -> None:
        """Sorting an inner box counts as its box's."""
        if self.recent:
            self.recent[-1][0] += seconds


@dataclass
class InnerSort:
    """A kind's rows left in at the box, and per row its term's value on the inner box where that
    is constant (NaN where not), and whether it reads a strayed unknown (`InnerBox`).

    Its listing is kept as marks change, not taken again over all the box's rows at every
    evaluation: the sum of the proved values (`settled`) is taken when values are settled, and the
    proved values of strayed rows (`strayed_settled`) are summed as rows stray; a row listed is
    open or strayed. The listed rows are taken over all the box's rows only after strayed rows are
    sorted again; a stray merges the rows it newly lists into them."""

    rows: np.ndarray  # the box's rows (`Sorted.rows` of the box)
    values: np.ndarray  # set through `settle_strays`, which keeps `open` and `settled` with it
    readers: tuple[np.ndarray, np.ndarray]  # the positions in `rows` of the rows reading each
    # unknown the stage varies (`grouping` by unknown: (order, starts)), to find the rows of a few
    # unknowns at once
    reads_strayed: np.ndarray  # per row: it reads a strayed unknown
    open: np.ndarray  # per row: isnan(values), not proved constant on the inner box
    strayed_rows: int = 0  # how many rows reads_strayed marks
    settled: float = 0.0  # the sum of `values` where not open
    strayed_settled: float = 0.0  # the sum of `values` where not open and reads_strayed
    _listed: np.ndarray | None = None  # `listed()`'s rows, kept up to date as rows stray

    @classmethod
    def of(cls, kind: GoalKind, rows: np.ndarray, values: np.ndarray, varying: np.ndarray) -> InnerSort:
        """The rows with their values on a new inner box; `varying`: the unknowns that may stray."""
        unknowns, positions = [], []
        for c in _used(kind):
            if c.width:
                read = c.slots[c.obj[rows]]  # (rows, width)
                moves = varying[read]
                unknowns.append(read[moves])
                positions.append(np.nonzero(moves)[0])
        unknown = np.concatenate(unknowns) if unknowns else np.zeros(0, np.int64)
        position = np.concatenate(positions) if positions else np.zeros(0, np.int64)
        order, starts = grouping(unknown.astype(np.int64), len(varying))
        return cls.settled_on(rows, values, (position[order], starts))

    @classmethod
    def settled_on(
        cls, rows: np.ndarray, values: np.ndarray, readers: tuple[np.ndarray, np.ndarray]
    ) -> InnerSort:
        """The rows with their values on a new inner box, none strayed."""
        sort = cls(rows, values, readers, np.zeros(len(rows), bool), np.isnan(values))
        sort.settled = float(values[~sort.open].sum())
        return sort

    def settle_strays(self, bounds: Callable[[np.ndarray], np.ndarray]) -> int:
        """Sort the strayed rows again, `bounds` giving their values (NaN where not constant) on
        the ranges now; the rows tried. Their old proved values leave `settled` as their new enter."""
        at = np.flatnonzero(self.reads_strayed)
        values = bounds(self.rows[at])
        proved = ~np.isnan(values)
        self.values[at], self.open[at] = values, ~proved
        self.settled += float(values[proved].sum()) - self.strayed_settled
        self.reads_strayed[at] = False
        self.strayed_rows, self.strayed_settled, self._listed = 0, 0.0, None
        return len(at)

    def rows_reading(self, unknowns: np.ndarray) -> np.ndarray:
        """Per row: whether it reads one of the `unknowns` (bool over x) the stage varies."""
        out = np.zeros(len(self.rows), bool)
        out[groups(*self.readers, np.flatnonzero(unknowns))] = True
        return out

    def stray(self, newly: np.ndarray) -> int:
        """Mark the rows reading the unknowns `newly` (int indices into x, all varying); how many
        were not marked yet."""
        at = groups(*self.readers, newly)
        at = at[~self.reads_strayed[at]]
        if len(at) * DISTINCT_BY_MASK > len(self.rows):  # (np.unique sorts: O(k log k))
            fresh = np.zeros(len(self.rows), bool)
            fresh[at] = True
            at = np.flatnonzero(fresh)
        else:
            at = np.unique(at)
        if len(at):
            self.reads_strayed[at] = True
            self.strayed_rows += len(at)
            closed = at[~self.open[at]]  # proved constant until now: listed from now on
            self.strayed_settled += float(self.values[closed].sum())
            if self._listed is not None and len(closed):
                # two ascending runs: the stable sort (timsort) merges them in one pass
                self._listed = np.sort(np.concatenate([self._listed, self.rows[closed]]), kind="stable")
        return len(at)

    def listed(self, box_constant: float) -> Sorted:
        """The rows listed (open or strayed), and the constant the others add to the box's."""
        if self._listed is None:
            self._listed = self.rows[self.open | self.reads_strayed]
        return Sorted(self._listed, box_constant + (self.settled - self.strayed_settled), 0)


class InnerBox:
    """An inner box within the box, as a neighbour list's skin: each unknown ranges over `INNER_LIFE`
    of its own recent steps around where it was when its range was set, clipped to the box, and
    the box's rows are sorted again on it (only the box's rows: those the box left out are constant
    on the inner box too, as it lies within the box). A layout converges within a box sized by its
    first steps, and nearer by most of the box's rows are constant; late in a layout most objects
    rest while a few still slide, so the ranges are sized per unknown.

    An unknown that leaves its range *strays*: its range becomes the box's, and every row that
    reads it is listed, as the box lists it (exact: the others' ranges still hold their points).
    Strayed rows are sorted again, on ranges centred where their unknowns are then, once listing
    them has cost `RENT` evaluations each on average (a ski rental: trying a row's bounds costs a
    few evaluations of it, and a line search's long trial step strays many unknowns at once).
    Each sort and each stray changes the lists. When an inner box is sorted afresh within the same
    box, a row the previous inner box proved constant keeps its value unless it reads an unknown
    that strayed or whose new range is not inside its previous one (`Culler._sort_inner_afresh`)."""

    def __init__(
        self, box: dict[int, Sorted], box_lo: np.ndarray, box_hi: np.ndarray, reach: float, n: int
    ) -> None:
        self.box = box  # the box's sorted kinds this inner box sorts again
        self.box_lo, self.box_hi = box_lo, box_hi
        self.reach = reach  # the largest half-width the steps asked for when it was sorted afresh
        self.lo, self.hi = box_lo.copy(), box_hi.copy()
        self.strayed = np.zeros(n, bool)
        self.sorts: dict[int, InnerSort] = {}
        self.stray_rows = 0  # rows listed because they read a strayed unknown
        self.rent = 0.0  # evaluations of strayed rows since the last sort of them

    def recentre(self, which: np.ndarray, x: np.ndarray, half: np.ndarray) -> None:
        """Set the ranges of the unknowns `which` around x with the given half-widths."""
        self.lo[which] = np.maximum(x[which] - half[which], self.box_lo[which])
        self.hi[which] = np.minimum(x[which] + half[which], self.box_hi[which])

    def inside(self, x: np.ndarray) -> bool:
        """Whether x is in the inner box (a strayed unknown ranges over the box's range)."""
        return bool(np.all(((x >= self.lo) & (x <= self.hi)) | self.strayed))

    def stray(self, x: np.ndarray) -> bool:
        """Let the unknowns out of their ranges at x stray; whether any had not yet."""
        newly = ((x < self.lo) | (x > self.hi)) & ~self.strayed
        if not newly.any():
            return False
        self.strayed |= newly
        at = np.flatnonzero(newly)
        self.stray_rows += sum(sort.stray(at) for sort in self.sorts.values())
        return True

    def sort_strays(self, x: np.ndarray, half: np.ndarray, bounds_at: RowBounds) -> int:
        """Centre the strayed unknowns' ranges at x and sort their rows again; the rows tried."""
        self.recentre(self.strayed, x, half)
        self.strayed[:] = False
        tried = sum(
            sort.settle_strays(partial(bounds_at, k, self.lo, self.hi)) for k, sort in self.sorts.items()
        )
        self.stray_rows, self.rent = 0, 0.0
        return tried

    def lists(self) -> dict[int, Sorted]:
        """Per kind, the rows listed (left in or strayed) and the constant the others add."""
        return {k: sort.listed(self.box[k].constant) for k, sort in self.sorts.items()}


def _spread(x: np.ndarray, varying: np.ndarray) -> float:
    """How far apart the unknowns the stage varies lie (1 when it varies none)."""
    return float(np.ptp(x[varying])) if varying.any() else 1.0


def _radius_range(spread: float) -> tuple[float, float]:
    """A box's smallest and largest radius: `MIN_RADIUS` and `MAX_RADIUS` of the spread (of 1 px
    at least)."""
    return MIN_RADIUS * max(spread, 1.0), MAX_RADIUS * max(spread, 1.0)


def _mean(mean: float | None, value: float) -> float:
    """A running mean that weighs the past by MEAN (the first value starts it)."""
    return value if mean is None else MEAN * mean + (1 - MEAN) * value
