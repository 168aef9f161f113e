"""Grouping goals into kinds: one adcore function per kind, one table row per goal.

Two goals are of one kind when they apply the same library function to arguments of the same
structure (shape kinds, list lengths, expression shapes, strings), whatever their numbers. This
keeps the compiled energy proportional to the number of kinds.

A kind's table is stored by *columns*, one per argument: row r of column c reads object
`obj[r]` of that column, and an object is a distinct argument value abstracted once (its unknowns
as entries of x in `slots[obj]`, its numbers in `consts[obj]`). A shape met by a thousand goals is
one object, so a table of 500,000 pairs of 1,000 circles is two index arrays and two small object
tables, not 500,000 rows of six slots each. The kind function receives each column's (inputs,
constants) and rebuilds the arguments from the column's representative value (`expr.replay`).

A *templated* table (the Style's bulk evaluation, `GoalTable.templated`) states its arguments as
one value over *holes*: its last column holds that template (one object per table), the other
columns the values the holes stand for (e.g. all the paths a block's statement reads from one
selector variable's object). Its kind function rebuilds the hole columns, then the template with
its holes filled in.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cache
from itertools import chain
from typing import Any, Literal

import numpy as np

from ..diagram import GoalInstance, GoalTable
from ..expr import Fixed, Sig, SlotReader, is_zero, replay, signature
from ..grouping import first_appearance, row_codes, runs, unique_index_inverse

Memo = dict[int, Sig]  # signatures by object id, shared while the objects are alive


@dataclass
class TracedShape:
    """A shape as a kind function sees it: its geometric properties, rebuilt from traced slots."""

    kind: str
    props: dict[str, Any]
    name: str = ""


@cache  # imported late (the library imports this module), once: it is asked once per shape
def geometric_props() -> dict[str, tuple[str, ...]]:
    from ..library.geometry import GEOMETRIC_PROPS

    return GEOMETRIC_PROPS


def props_of(value: Any) -> tuple[str, tuple[tuple[str, Any], ...]] | None:
    """Shapes enter a goal's signature by their kind and the properties the library reads; a
    rotation of exactly 0 (almost every label's and box's) as structure, `Fixed`, so that the
    library traces their boxes without the sine and cosine of a turn."""
    kind = getattr(value, "kind", None)
    props = getattr(value, "props", None)
    if not isinstance(kind, str) or not isinstance(props, dict):
        return None
    wanted = geometric_props().get(kind)
    names = wanted if wanted is not None else tuple(sorted(props))
    return kind, tuple((p, _unturned(props[p]) if p == "rotation" else props[p]) for p in names if p in props)


def _unturned(rotation: Any) -> Any:
    """A rotation of exactly 0 as structure (`Fixed`), any other as it is."""
    return Fixed(float(rotation)) if is_zero(rotation) else rotation


def rebuild_shape(original: Any, kind: str, props: dict[str, Any]) -> TracedShape:
    return TracedShape(kind, props, getattr(original, "name", ""))


@dataclass
class KindColumn:
    """One argument column of a kind's table (see the module docstring).

    - obj: int32, one per row, each below `len(slots)`;
    - slots: int32 (objects x width): the entries of x each object reads, in signature order;
    - consts: float64 (objects x n_consts): each object's numbers, in signature order.
    """

    obj: np.ndarray
    slots: np.ndarray
    consts: np.ndarray

    @property
    def width(self) -> int:
        return int(self.slots.shape[1])

    @property
    def n_consts(self) -> int:
        return int(self.consts.shape[1])

    @property
    def n_objects(self) -> int:
        return int(self.slots.shape[0])

    def objects_reading(self, mask: np.ndarray) -> np.ndarray:
        """Per object: whether it reads an entry of x where `mask` (bool over x) is set."""
        return mask[self.slots].any(axis=1) if self.width else np.zeros(self.n_objects, bool)

    def reads(self, mask: np.ndarray) -> np.ndarray:
        """Per row: whether the row's object reads an entry of x where `mask` (bool over x) is set."""
        return self.objects_reading(mask)[self.obj]


@dataclass
class GoalKind:
    goal: Literal["constraint", "objective"]
    name: str
    representative: GoalInstance  # a goal of the kind: its argument c is column c's representative
    signature: int
    goals: np.ndarray  # int64: each row's goal, numbered in its class (constraints or objectives)
    columns: list[KindColumn]
    templated: bool = False  # the last column is a template over holes in the others

    @property
    def n_rows(self) -> int:
        return len(self.goals)

    @property
    def n_inputs(self) -> int:
        return sum(c.width for c in self.columns)

    @property
    def n_consts(self) -> int:
        return sum(c.n_consts for c in self.columns)

    @property
    def rows_in(self) -> np.ndarray:
        """Every row's slots, columns side by side (for inspection; the energy reads the columns)."""
        parts = [c.slots[c.obj] for c in self.columns]
        joined = np.concatenate(parts, axis=1) if parts else np.zeros((self.n_rows, 0))
        return np.ascontiguousarray(joined, np.int32)

    @property
    def rows_c(self) -> np.ndarray:
        parts = [c.consts[c.obj] for c in self.columns]
        return np.ascontiguousarray(np.concatenate(parts, axis=1) if parts else np.zeros((self.n_rows, 0)))

    def reads(self, mask: np.ndarray) -> np.ndarray:
        """Per row: whether the goal reads an entry of x where `mask` is set."""
        out = np.zeros(self.n_rows, bool)
        for c in self.columns:
            out |= c.reads(mask)
        return out

    def structure(self) -> tuple[Any, ...]:
        shapes = tuple((c.n_objects, c.width, c.n_consts) for c in self.columns)
        return (self.goal, self.name, self.signature, self.templated, shapes, self.n_rows)

    def arguments(self, columns: Sequence[tuple[SlotReader, SlotReader]]) -> list[Any]:
        """The goal's arguments rebuilt inside a kind function from each column's readers of its
        traced (inputs, constants) vectors."""
        values = [
            replay(rep, ins, cs, rebuild_shape, props_of)
            for rep, (ins, cs) in zip(self.representative.args[: len(columns) - self.templated], columns)
        ]
        if not self.templated:
            return values
        ins, cs = columns[-1]
        return replay(self.representative.args[-1], ins, cs, rebuild_shape, props_of, values)


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
    first_use, object_of = first_appearance(ids)  # numbered by first use, not by address
    owner = np.searchsorted(offset, first_use, side="right") - 1  # the goal of each first use
    position = first_use - offset[owner]  # (a goal without arguments is never an owner)
    arguments = _Arguments([goals[k].args[p] for k, p in zip(owner.tolist(), position.tolist())], memo)

    names = [g.name for g in goals]
    name_code = {name: k for k, name in enumerate(dict.fromkeys(names))}
    shape_code = np.fromiter(map(name_code.__getitem__, names), np.int64, len(goals))
    shape_code = shape_code * (int(arity.max()) + 1) + arity  # one code per (name, arity)
    kinds: list[GoalKind] = []
    for members in runs(shape_code):  # members ascending: the sort is stable
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
    if table.templated:  # a kind replays a templated row from its column values, not its arguments
        return arguments.kinds(
            table.kind,
            table.name,
            members,
            objects,
            lambda k: GoalInstance(table.kind, table.name, table.column_values(k)),
            templated=True,
        )
    return arguments.kinds(table.kind, table.name, members, objects, table.row)


def merge_kinds(kinds: list[GoalKind]) -> list[GoalKind]:
    """Kinds of equal structure joined into one (their tables concatenated), in order of first goal."""
    groups: dict[tuple[Any, ...], list[GoalKind]] = {}
    for kind in kinds:
        widths = tuple((c.width, c.n_consts) for c in kind.columns)
        groups.setdefault((kind.name, kind.signature, kind.templated, widths), []).append(kind)
    merged = [
        same[0]
        if len(same) == 1
        else replace(
            same[0],
            goals=np.concatenate([k.goals for k in same]),
            columns=_stacked([k.columns for k in same]),
        )
        for same in groups.values()
    ]
    return sorted(merged, key=lambda kind: int(kind.goals[0]))


def _stacked(tables: list[list[KindColumn]]) -> list[KindColumn]:
    """Columns of several kinds of one structure as one: object tables stacked, indices shifted."""
    out = []
    for same in zip(*tables):
        shift = np.cumsum([0] + [c.n_objects for c in same[:-1]])
        out.append(
            KindColumn(
                np.concatenate([c.obj + np.int32(s) for c, s in zip(same, shift)]).astype(np.int32),
                np.concatenate([c.slots for c in same]),
                np.concatenate([c.consts for c in same]),
            )
        )
    return out


class _Slots:
    """The slots (inputs or constants) of every distinct argument, as one flat array."""

    def __init__(self, per_object: list[tuple[Any, ...]], dtype: Any):
        self.width = np.fromiter(map(len, per_object), np.int64, len(per_object))
        self.start = np.cumsum(self.width) - self.width
        self.flat = np.fromiter(chain.from_iterable(per_object), dtype, int(self.width.sum()))

    def rows(self, objects: np.ndarray, w: int) -> np.ndarray:
        """The slots of `objects` (all of width w), one row each."""
        return self.flat[self.start[objects][:, None] + np.arange(w)].reshape(len(objects), w)


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
        templated: bool = False,
    ) -> list[GoalKind]:
        """Kinds of the goals `members` applying `name` to the objects in `table` (a row each)."""
        kinds = []
        for rows in runs(row_codes(self.sig_of[table])):
            if len(rows) < len(members):  # (one kind for all, the usual case, needs no copy)
                kinds.append(self._kind(goal, name, goal_at, members[rows], table[rows], templated))
            else:
                kinds.append(self._kind(goal, name, goal_at, members, table, templated))
        return kinds

    def _kind(
        self,
        goal: str,
        name: str,
        goal_at: Callable[[int], GoalInstance],
        members: np.ndarray,
        table: np.ndarray,
        templated: bool,
    ) -> GoalKind:
        columns = []
        for objects in table.T:  # (a column of one object, a shared padding, needs no sort)
            if (objects == objects[0]).all():
                used, obj = objects[:1], np.zeros(len(objects), np.int32)
            else:
                used, _, inverse = unique_index_inverse(objects)
                obj = inverse.astype(np.int32)
            first = int(used[0])
            columns.append(
                KindColumn(
                    obj,
                    np.ascontiguousarray(self.inputs.rows(used, int(self.inputs.width[first])), np.int32),
                    np.ascontiguousarray(self.consts.rows(used, int(self.consts.width[first])), np.float64),
                )
            )
        return GoalKind(
            goal,  # type: ignore[arg-type]
            name,
            goal_at(int(members[0])),
            hash((name, *self.sig_of[table[0]].tolist(), *(("template",) if templated else ()))),
            members.astype(np.int64),
            columns,
            templated,
        )
