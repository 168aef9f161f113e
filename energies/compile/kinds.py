"""Grouping goals into kinds: one adcore function per kind, one table row per goal.

Two goals are of one kind when they apply the same library function to arguments of the same
structure (shape kinds, list lengths, expression shapes, strings), whatever their numbers. A kind
reads its numbers from two tables: `rows_in` (which entries of the unknowns vector x) and
`rows_c` (constants). This keeps the compiled energy proportional to the number of kinds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from itertools import chain
from math import prod
from typing import Any, Literal

import numpy as np

from ..diagram import GoalInstance, GoalTable
from ..expr import Sig, signature

Memo = dict[int, Sig]  # signatures by object id, shared while the objects are alive


@dataclass
class TracedShape:
    """A shape as a kind function sees it: its geometric properties, rebuilt from traced slots."""

    kind: str
    props: dict[str, Any]
    name: str = ""


def geometric_props() -> dict[str, tuple[str, ...]]:
    from ..library.geometry import GEOMETRIC_PROPS

    return GEOMETRIC_PROPS


def props_of(value: Any) -> tuple[str, tuple[tuple[str, Any], ...]] | None:
    """Shapes enter a goal's signature by their kind and the properties the library reads."""
    kind = getattr(value, "kind", None)
    props = getattr(value, "props", None)
    if not isinstance(kind, str) or not isinstance(props, dict):
        return None
    wanted = geometric_props().get(kind)
    names = wanted if wanted is not None else tuple(sorted(props))
    return kind, tuple((p, props[p]) for p in names if p in props)


def rebuild_shape(original: Any, kind: str, props: dict[str, Any]) -> TracedShape:
    return TracedShape(kind, props, getattr(original, "name", ""))


@dataclass
class GoalKind:
    goal: Literal["constraint", "objective"]
    name: str
    representative: GoalInstance
    signature: int
    n_inputs: int
    n_consts: int
    goals: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # each row's goal, in its class
    rows_in: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.int32))
    rows_c: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))

    @property
    def n_rows(self) -> int:
        return len(self.goals)

    def structure(self) -> tuple[Any, ...]:
        return (self.goal, self.name, self.signature, self.n_inputs, self.n_consts, self.n_rows)


def group_goals(goals: Sequence[GoalInstance], goal: str, memo: Memo | None = None) -> list[GoalKind]:
    """Kinds of the goals of one class ("constraint" or "objective"), in order of first appearance.

    Hot for large diagrams (all pairs of 1,000 shapes are 500,000 goals), so the per-goal and
    per-argument work is a few C-level passes (comprehensions reading one attribute, `map` over
    `id`, `len` and dictionary lookups) and numpy; Python code runs once per distinct argument
    object (a shape shared by a thousand goals is abstracted once) and once per kind. Goals are
    grouped by (name, number of arguments), then by their arguments' signatures (stable sorts of
    integer codes); tables are gathered from the slots of the distinct arguments.
    """
    if not goals:
        return []
    arg_lists = [g.args for g in goals]
    arity = np.fromiter(map(len, arg_lists), np.int64, len(goals))
    offset = np.cumsum(arity) - arity  # each goal's first argument, numbering all arguments in order
    # objects are alive (their goals hold them), so their ids identify them
    ids = np.fromiter(map(id, chain.from_iterable(arg_lists)), np.uint64, int(arity.sum()))
    # a large young list makes each garbage collection that `signature` triggers slow: drop it first
    del arg_lists
    _, first_use, object_of = np.unique(ids, return_index=True, return_inverse=True)
    owner = np.searchsorted(offset, first_use, side="right") - 1  # the goal of each first use
    position = first_use - offset[owner]  # (a goal without arguments is never an owner)
    arguments = _Arguments([goals[k].args[p] for k, p in zip(owner.tolist(), position.tolist())], memo)

    names = [g.name for g in goals]
    name_code = {name: k for k, name in enumerate(dict.fromkeys(names))}
    shape_code = np.fromiter(map(name_code.__getitem__, names), np.int64, len(goals))
    shape_code = shape_code * (int(arity.max()) + 1) + arity  # one code per (name, arity)
    kinds: list[GoalKind] = []
    for members in _runs(shape_code):  # members ascending: the sort is stable
        table = object_of[offset[members] + np.arange(arity[members[0]])[:, None]].T  # column-major
        kinds += arguments.kinds(goal, names[members[0]], members, table, goals.__getitem__)
    kinds.sort(key=lambda kind: int(kind.goals[0]))  # order of first appearance
    return kinds


def group_table(table: GoalTable, memo: Memo | None = None) -> list[GoalKind]:
    """Kinds of a goal table's rows (numbered from 0), split by their arguments' signatures.

    Only the distinct argument values are abstracted; rows are gathered with numpy, so 500,000
    pairs of a thousand shapes cost a few index operations.
    """
    if not len(table):
        return []
    lists = list({id(c.values): c.values for c in table.columns}.values())  # columns share lists
    first = dict(zip(map(id, lists), np.cumsum([0] + [len(v) for v in lists]).tolist()))
    arguments = _Arguments(list(chain.from_iterable(lists)), memo)
    objects = np.stack([c.index.astype(np.int64) + first[id(c.values)] for c in table.columns]).T
    members = np.arange(len(table), dtype=np.int64)
    return arguments.kinds(table.kind, table.name, members, objects, table.row)


def merge_kinds(kinds: list[GoalKind]) -> list[GoalKind]:
    """Kinds of equal structure joined into one (their tables concatenated), in order of first goal."""
    groups: dict[tuple[Any, ...], list[GoalKind]] = {}
    for kind in kinds:
        groups.setdefault((kind.name, kind.signature, kind.n_inputs, kind.n_consts), []).append(kind)
    merged = [
        same[0]
        if len(same) == 1
        else replace(
            same[0],
            goals=np.concatenate([k.goals for k in same]),
            rows_in=np.concatenate([k.rows_in for k in same]),
            rows_c=np.concatenate([k.rows_c for k in same]),
        )
        for same in groups.values()
    ]
    return sorted(merged, key=lambda kind: int(kind.goals[0]))


def _runs(codes: np.ndarray) -> list[np.ndarray]:
    """Indices of equal codes, one ascending array per distinct code."""
    if len(codes) == 0 or (codes == codes[0]).all():  # one run: no sort (500,000 pairs of one kind)
        return [np.arange(len(codes))]
    order = np.argsort(codes, kind="stable")
    ordered = codes[order]
    cuts = np.flatnonzero(ordered[1:] != ordered[:-1]) + 1
    return np.split(order, cuts)


def _row_codes(rows: np.ndarray) -> np.ndarray:
    """One int64 per row, equal exactly when the rows are equal (rows of non-negative ints)."""
    if rows.shape[1] == 0:
        return np.zeros(len(rows), np.int64)
    radix = [int(r) for r in rows.max(axis=0) + 1]
    if prod(radix) >= 2**63:  # mixed radix would overflow: number the distinct rows instead
        return np.unique(rows, axis=0, return_inverse=True)[1].reshape(-1)
    codes = np.zeros(len(rows), np.int64)
    for column, r in zip(rows.T, radix):  # mixed radix, the last column varying fastest
        codes *= r
        codes += column
    return codes


class _Slots:
    """The slots (inputs or constants) of every distinct argument, as one flat array."""

    def __init__(self, per_object: list[tuple[Any, ...]], dtype: Any):
        self.width = np.fromiter(map(len, per_object), np.int64, len(per_object))
        self.start = np.cumsum(self.width) - self.width
        self.flat = np.fromiter(chain.from_iterable(per_object), dtype, int(self.width.sum()))
        self.dense: dict[int, np.ndarray] = {}

    def table(self, objects: np.ndarray) -> np.ndarray:
        """One row per goal: the slots of its arguments (`objects`, one column each), in order.

        `objects` is best column-major (a column of 500,000 goals is then one `take`)."""
        # goals of one kind have arguments of one signature, hence the first row's widths
        widths = self.width[objects[0]].tolist()
        parts = [self._of_width(w).take(objects[:, c], axis=0) for c, w in enumerate(widths) if w]
        if not parts:
            return np.zeros((len(objects), 0), self.flat.dtype)
        return np.concatenate(parts, axis=1) if len(parts) > 1 else parts[0]

    def _of_width(self, w: int) -> np.ndarray:
        """Each object's slots as a row of width w (zeros for objects of another width), so a
        column of 500,000 goals is one gather of rows from a small matrix."""
        found = self.dense.get(w)
        if found is None:
            found = self.dense[w] = np.zeros((len(self.width), w), self.flat.dtype)
            same = np.flatnonzero(self.width == w)
            found[same] = self.flat[self.start[same][:, None] + np.arange(w)]
        return found


class _Arguments:
    """Distinct argument objects, each abstracted once: signature code, input and constant slots."""

    def __init__(self, objects: list[Any], memo: Memo | None = None):
        memo = {} if memo is None else memo  # an object may be listed twice (in two columns' lists)
        sigs = [signature(v, props_of, memo) for v in objects]
        self.sig_of = np.array([s[0] for s in sigs], np.int64)
        self.inputs = _Slots([s[1] for s in sigs], np.int32)
        self.consts = _Slots([s[2] for s in sigs], np.float64)

    def kinds(
        self,
        goal: str,
        name: str,
        members: np.ndarray,
        table: np.ndarray,
        goal_at: Callable[[int], GoalInstance],
    ) -> list[GoalKind]:
        """Kinds of the goals `members` applying `name` to the objects in `table` (a row each)."""
        kinds = []
        for rows in _runs(_row_codes(self.sig_of[table])):
            if len(rows) < len(members):  # (one kind for all, the usual case, needs no copy)
                kinds.append(self._kind(goal, name, goal_at, members[rows], table[rows]))
            else:
                kinds.append(self._kind(goal, name, goal_at, members, table))
        return kinds

    def _kind(
        self,
        goal: str,
        name: str,
        goal_at: Callable[[int], GoalInstance],
        members: np.ndarray,
        table: np.ndarray,
    ) -> GoalKind:
        rows_in = self.inputs.table(table)
        rows_c = self.consts.table(table)
        return GoalKind(
            goal,  # type: ignore[arg-type]
            name,
            goal_at(int(members[0])),
            hash((name, *self.sig_of[table[0]].tolist())),
            rows_in.shape[1],
            rows_c.shape[1],
            members.astype(np.int64),
            np.ascontiguousarray(rows_in, np.int32),
            np.ascontiguousarray(rows_c, np.float64),
        )
