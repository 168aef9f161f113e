"""Bulk evaluation: a block's statements evaluated once for all its matches.

A selector block whose statements only write its local scope has one layout for all its matches
(`context.BlockPlan`): a goal statement such as `ensure disjoint(x.icon, y.icon)` in
`forall Set x; Set y` differs from match to match only in the objects bound to x and y. Such a
block is evaluated in bulk:

1. Each selector variable is a *hole column*: one value per distinct object bound to it, the tuple
   of the paths the block reads from that object (`x.icon`, `x.center`, ...), each path evaluated
   once per object (memoized as everywhere).
2. The block's statements are evaluated once, in a context where those paths read *holes*
   (`expr.hole_node`, `diagram.HoleShape`) shaped like a representative match's values: goal
   arguments come out as templates over the holes (`vdist(x.center, y.center)` is one expression
   whatever the number of matches), and library code runs once instead of once per match.
3. Matches whose objects' values have another structure (another shape kind, a fixed value where
   others are unknown) form another partition, evaluated from its own representative.
4. Each goal statement becomes one templated `GoalTable` per partition (`diagram.GoalTable`):
   hole columns indexed by the matches, plus the template. Layering statements become one
   `Layer` per match.

What bulk evaluation does not change: the goals (the same function applied to the same values in
every match; computed functions of per-match values are evaluated inside the compiled energy
instead of in Python), their order within each table (the order the matches' local scopes are
walked in), errors (a block that fails, or whose statements cannot run on holes, is evaluated
match by match instead, `BulkFailed`), and in a Style that draws random numbers, which number
each unknown gets: such a block still puts its nodes in Penrose's dependency graph, which orders
the draws (energies.style.graph), and a block with layering statements, whose order in that graph
is the drawing order, is evaluated match by match (see `eligible`). What it cannot keep: above
`PENROSE_ORDER_MAX` matches, where walking Penrose's graph would cost more than the layout, a
block is left out of that graph, and the draws' order departs from Penrose's.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from energies.compile.kinds import props_of
from energies.diagram import Column, GoalTable, HoleShape, ShapeInstance, Where
from energies.expr import Node, at_path, hole_node, hole_places, signature
from energies.grouping import row_codes, runs, stable_argsort
from energies.lang import style_ast as S
from energies.lang.errors import DiagramError
from energies.lang.match import MatchTable
from energies.lang.substance_env import unique_name
from energies.library.geometry import GEOMETRIC_PROPS
from energies.style.context import BlockContext, BlockPlan, ExprSource, source_context
from energies.style.errors import BulkFailed
from energies.style.goals import Layer, goal_form
from energies.style.library_bridge import check_goal_args
from energies.style.paths import ERROR, ObjectRef, Scope
from energies.style.roles import INERT, LocalRoles, bound_variables

if TYPE_CHECKING:
    from energies.style.evaluate import Evaluator

BULK_MIN = 64  # below this many matches, a block is evaluated match by match
PENROSE_ORDER_MAX = 20_000  # a drawing Style's blocks above this many matches are evaluated in bulk

_serial = itertools.count()


def eligible(plan: BlockPlan, roles: LocalRoles, draws: bool) -> bool:
    """Whether a block may be evaluated in bulk (the attempt may still fail, `BulkFailed`).
    In a Style that `draws`, a block of fewer than `PENROSE_ORDER_MAX` matches keeps its place in
    Penrose's graph (energies.style.graph), and its layering statements their place in Penrose's
    order of evaluation, which decides the drawing order: a block with layering is then evaluated
    match by match."""
    matches = plan.matches
    if not isinstance(matches, MatchTable) or not matches.keys or plan.contexts:
        return False  # a namespace or collector; or a block whose matches assign objects' fields
    if len(matches) < BULK_MIN or roles.shapes:
        return False
    ordered = draws and len(matches) < PENROSE_ORDER_MAX
    bound = bound_variables(plan)
    for _, source in roles.items:
        assert isinstance(source, ExprSource)
        if ordered and isinstance(source.expr, S.Layering):
            return False
        if _draws(source) or any(
            r.templates[r.variable in bound].how == ERROR for r in plan.reads(source.expr)
        ):
            return False  # a new unknown in every match, or a path that fails in every match
    return True


def _draws(source: ExprSource) -> bool:
    """A `?` in the block's own statements: each match would draw a new unknown."""
    stack: list[Any] = [source.expr]
    while stack:
        node = stack.pop()
        if isinstance(node, S.Vary):
            return True
        if isinstance(node, (list, tuple)):
            stack.extend(node)
        elif hasattr(node, "__dataclass_fields__"):
            stack.extend(getattr(node, f) for f in node.__dataclass_fields__ if f != "pos")
    return False


@dataclass
class _Holes:
    """The hole columns of one evaluation: per selector variable, the paths read from its object."""

    plan: BlockPlan
    keys: tuple[str, ...]  # selector variables; hole column c is keys[c]
    objects: list[list[Any]]  # per column, its distinct objects (Substance values)
    index: list[np.ndarray]  # per column, each match's object
    paths: list[dict[tuple[str, str | None], int]]  # per column: (field, prop) -> place in its tuple
    reads: list[tuple[int, tuple[str, str | None]]]  # (column, path) in the order a match reads them

    def real_ref(self, column: int, obj: Any, field: str, prop: str | None) -> ObjectRef:
        return ObjectRef(self.plan.substance_scope(obj), field, prop)


class _HoleScope:
    """Answers the evaluator's reads of `$hole...` objects: the representative match's value of
    that path, mirrored into holes (`Evaluator.compute` asks it on a memo miss)."""

    def __init__(self, ev: Evaluator, holes: _Holes, row: int) -> None:
        self.ev = ev
        self.holes = holes
        self.row = row
        tag = next(_serial)
        self.names = {f"$hole{tag}:{k}": c for c, k in enumerate(holes.keys)}

    def value(self, ref: ObjectRef) -> Any:
        h = self.holes
        c = self.names[ref.scope.name]
        path = (ref.field, ref.prop)
        if path not in h.paths[c]:
            h.paths[c][path] = len(h.paths[c])
            h.reads.append((c, path))
        place = h.paths[c][path]
        obj = h.objects[c][int(h.index[c][self.row])]
        real = _real_value(self.ev, h.real_ref(c, obj, ref.field, ref.prop))
        return _mirror(real, c, (place,))


class _RealError(Exception):
    """A path of a matched object failed: a genuine error, reported as the per-match walk would."""

    def __init__(self, error: DiagramError) -> None:
        self.error = error


def _real_value(ev: Evaluator, ref: ObjectRef) -> Any:
    try:
        return ev.value_at(ref, None)
    except DiagramError as e:
        raise _RealError(e) from None


class _GeometricProps(dict[str, Any]):
    """A hole shape's properties: the library may read its geometric ones (others differ from
    match to match without changing the structure bulk evaluation groups matches by)."""

    def __init__(self, kind: str, props: dict[str, Any]) -> None:
        super().__init__(props)
        self.allowed = set(GEOMETRIC_PROPS.get(kind, ())) | {"name"}

    def __getitem__(self, key: str) -> Any:
        if key not in self.allowed:
            raise BulkFailed(f"reads property {key}")
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:
        if key not in self.allowed:
            raise BulkFailed(f"reads property {key}")
        return super().get(key, default)


def _mirror(value: Any, column: int, path: tuple[int | str, ...]) -> Any:
    """`value` with every number and unknown replaced by the hole at its path."""
    if isinstance(value, (bool, str)) or value is None:
        return value
    if isinstance(value, (int, float, Node)):
        return hole_node(column, path)
    if isinstance(value, list | tuple):
        return [_mirror(v, column, (*path, i)) for i, v in enumerate(value)]
    if isinstance(value, ShapeInstance):
        geometric = GEOMETRIC_PROPS.get(value.kind, ())
        props = {p: _mirror(v, column, (*path, p)) if p in geometric else v for p, v in value.props.items()}
        return HoleShape(value.name, value.kind, _GeometricProps(value.kind, props), hole=(column, path))
    raise BulkFailed(f"a value of type {type(value).__name__}")


class _BulkContext(BlockContext):
    """The block applied to a representative match, its selector variables bound to hole objects."""

    def __init__(self, plan: BlockPlan, scope: Scope, row: int, names: dict[str, int], keys: tuple[str, ...]):
        super().__init__(plan, row, scope)
        self.subst = {keys[c]: name for name, c in names.items()}
        self.collection = None

    def counter(self, name: str) -> float:
        raise BulkFailed(f"reads {name}")


@dataclass
class _Template:
    """One evaluation of the block's statements over holes."""

    goals: list[tuple[Any, list[Any], Any]]  # per goal statement: form, arguments over holes, position
    layers: list[tuple[Any, Any]]  # per layering pair: (below, above) shapes, holes or real


def _evaluate_template(
    ev: Evaluator, plan: BlockPlan, roles: LocalRoles, holes: _Holes, row: int
) -> _Template:
    hole_scope = _HoleScope(ev, holes, row)
    tag = next(_serial)
    scope = Scope("local", f"{plan.block_index}:bulk{tag}", plan, -1 - tag)
    ctx = _BulkContext(plan, scope, row, hole_scope.names, holes.keys)
    plan.contexts[-1 - tag] = ctx  # `source_context` finds it for the block's local fields
    ev.hole_scopes.update(dict.fromkeys(hole_scope.names, hole_scope))
    template = _Template([], [])
    try:
        for name, source, role in roles.roles:
            assert isinstance(source, ExprSource)
            expr = source.expr
            if role == INERT:  # a literal (match_id, a number): no effect, read where it is used
                continue
            if isinstance(expr, S.ObjFn | S.ConstrFn):
                form = goal_form(ev, expr)
                c = source_context(source, scope)
                args = [ev.eval_value(a, c) for a in form.args]
                check_goal_args(form.name, form.checks, args, form.positions, ev)
                template.goals.append((form, args, expr.pos))
            elif isinstance(expr, S.Layering):
                c = source_context(source, scope)
                left = ev.eval_value(expr.left, c)
                for item in expr.right:
                    right = ev.eval_value(item, c)
                    below, above = (left, right) if expr.op == "below" else (right, left)
                    if not (isinstance(below, ShapeInstance) and isinstance(above, ShapeInstance)):
                        raise BulkFailed("layering of non-shapes")
                    template.layers.append((below, above))
            else:
                ev.value_at(ObjectRef(scope, name), None)  # a local: evaluated for its effects
    finally:
        del plan.contexts[-1 - tag]
        for name in hole_scope.names:
            ev.hole_scopes.pop(name, None)
    return template


def evaluate_in_bulk(ev: Evaluator, plan: BlockPlan, roles: LocalRoles, order: np.ndarray) -> None:
    """Record the goals and layers of all the block's matches, `order` giving the matches in the
    order their local scopes are walked. Raises `BulkFailed` (nothing recorded) when the block must
    be evaluated match by match, also when a path of a matched object fails: the paths that failed
    meanwhile are forgotten, so that the match-by-match evaluation meets and reports them."""
    failed_before = set(ev.failed)
    matches = plan.matches
    assert isinstance(matches, MatchTable)
    keys = matches.keys
    columns = [matches.column(k) for k in keys]
    holes = _Holes(plan, keys, [c[0] for c in columns], [c[1] for c in columns], [{} for _ in keys], [])
    try:
        first = _evaluate_template(ev, plan, roles, holes, int(order[0]))
        _evaluate_in_reading_order(ev, holes, order)
        values = _column_values(ev, holes)
        memo: dict[tuple[int, ...], int] = {}
        codes = np.stack([_signature_codes(vs, memo)[i] for vs, i in zip(values, holes.index)], axis=1)
        parts = []
        rank = np.empty(len(order), np.int64)
        rank[order] = np.arange(len(order))
        for rows in runs(row_codes(codes)):
            # walk order (the usual single partition: the walk's own)
            rows = order if len(rows) == len(order) else rows[stable_argsort(rank[rows])]
            if rank[rows[0]] == 0:  # the partition of the first match walked: its template is made
                template = first
            else:
                known = [dict(p) for p in holes.paths]
                template = _evaluate_template(ev, plan, roles, holes, int(rows[0]))
                if [dict(p) for p in holes.paths] != known:
                    raise BulkFailed("partitions read different paths")
            parts.append((rows, template))
    except _RealError:
        ev.failed.intersection_update(failed_before)
        raise BulkFailed("a path of a matched object failed") from None
    except (BulkFailed, DiagramError):
        ev.failed.intersection_update(failed_before)
        raise BulkFailed from None
    except Exception as e:  # library code that cannot run on holes (a branch on a value, ...)
        ev.failed.intersection_update(failed_before)
        raise BulkFailed(str(e)) from None
    _record(ev, plan, holes, values, parts)


def _signature_codes(values: list[tuple[Any, ...]], memo: dict[tuple[int, ...], int]) -> np.ndarray:
    """Each value's signature code. Columns hold the same objects in different tuples (x.icon and
    y.icon of all pairs): `memo` keeps codes by the identities of a tuple's objects, which the
    columns' values keep alive."""
    codes = np.empty(len(values), np.int64)
    for k, v in enumerate(values):
        key = tuple(map(id, v))
        code = memo.get(key)
        if code is None:
            code = memo[key] = signature(v, props_of)[0]
        codes[k] = code
    return codes


def _evaluate_in_reading_order(ev: Evaluator, holes: _Holes, order: np.ndarray) -> None:
    """Evaluate each matched object's paths in the order the matches, walked one by one, would first
    read them, so that their unknowns are made in the same order: a path is first read in the
    first match binding its object to a variable that reads it, and within a match in the order
    of `holes.reads`."""
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    first_in: list[np.ndarray] = []  # per column: the walk rank of each object's first match
    for objects, index in zip(holes.objects, holes.index):
        first = np.full(len(objects), len(order), np.int64)
        np.minimum.at(first, index, rank)
        first_in.append(first)
    when: dict[tuple[Any, str, str | None], tuple[int, int]] = {}
    for t, (c, (field, prop)) in enumerate(holes.reads):
        for obj, r in zip(holes.objects[c], first_in[c].tolist()):
            key = (obj, field, prop)
            if (r, t) < when.get(key, (len(order), 0)):
                when[key] = (r, t)
    for obj, field, prop in sorted(when, key=when.__getitem__):
        _real_value(ev, ObjectRef(holes.plan.substance_scope(obj), field, prop))


def _column_values(ev: Evaluator, holes: _Holes) -> list[list[tuple[Any, ...]]]:
    """Per hole column, each object's tuple of the paths the block reads, in reading order."""
    out = []
    for c, objects in enumerate(holes.objects):
        paths = sorted(holes.paths[c], key=holes.paths[c].__getitem__)
        out.append(
            [
                tuple(_as_read(_real_value(ev, holes.real_ref(c, o, field, prop))) for field, prop in paths)
                for o in objects
            ]
        )
    return out


def _as_read(value: Any) -> Any:
    """A value as the block read it: a group's members are re-sorted into drawing order after the
    Style is evaluated (`layering.arrange`), so a group keeps its members' order of now, which the
    template's hole paths refer to."""
    if (
        isinstance(value, ShapeInstance)
        and value.kind == "Group"
        and isinstance(value.props.get("shapes"), list)
    ):
        props = {**value.props, "shapes": [_as_read(m) for m in value.props["shapes"]]}
        return ShapeInstance(value.name, value.kind, props)
    return value


def _record(
    ev: Evaluator,
    plan: BlockPlan,
    holes: _Holes,
    values: list[list[tuple[Any, ...]]],
    parts: list[tuple[np.ndarray, _Template]],
) -> None:
    text = _MatchText(holes.keys, holes.objects, holes.index)
    n_goals = len(parts[0][1].goals)
    narrowed: dict[tuple[int, frozenset[int | str] | None], list[tuple[Any, ...]]] = {}
    for g in range(n_goals):
        for rows, template in parts:
            form, args, pos = template.goals[g]
            places = hole_places(args)
            table_columns = [
                Column(_narrowed(values[c], places.get(c, set()), c, narrowed), holes.index[c][rows])
                for c in range(len(holes.keys))
            ]
            table_columns.append(Column.shared(args, len(rows)))
            ev.goals.add_table(
                GoalTable(
                    form.kind,
                    form.name,
                    table_columns,
                    form.stages,
                    form.exclude,
                    Where(pos.line, pos.column, plan.block_text),
                    match_text=text.rows(rows),
                    templated=True,
                )
            )
    for rows, template in parts:
        for below, above in template.layers:
            for lo, hi in zip(_names(below, values, holes, rows), _names(above, values, holes, rows)):
                ev.layers.append(Layer(below=lo, above=hi))


def _narrowed(
    values: list[tuple[Any, ...]],
    places: set[int | str] | None,
    column: int,
    memo: dict[tuple[int, frozenset[int | str] | None], list[tuple[Any, ...]]],
) -> list[tuple[Any, ...]]:
    """A column's values as one statement reads them: the places it does not read are None, so
    that its goals' tables carry only the unknowns and numbers the statement uses (the block's
    other statements read other paths of the same objects; culling clusters objects by what the
    goal reads). Shared by the statements reading the same places."""
    if places is None or not all(isinstance(k, int) for k in places):
        return values  # the whole value, or places that are not a tuple's positions
    key = (column, frozenset(places))
    found = memo.get(key)
    if found is None:
        found = memo[key] = [tuple(v if k in places else None for k, v in enumerate(t)) for t in values]
    return found


def _names(shape: ShapeInstance, values: list[list[Any]], holes: _Holes, rows: np.ndarray) -> list[str]:
    """The name of `shape` (a hole shape, or one shape) in each of the matches `rows`."""
    if not isinstance(shape, HoleShape):
        return [shape.name] * len(rows)
    column, path = shape.hole
    per_object = [at_path(v, path).name for v in values[column]]
    return [per_object[i] for i in holes.index[column][rows].tolist()]


class _MatchText:
    """Each match's text (`x=A, y=B`), from the match columns, made when a message needs it."""

    def __init__(self, keys: tuple[str, ...], objects: list[list[Any]], index: list[np.ndarray]) -> None:
        self.keys = keys
        self.shown = [[f"{k}={unique_name(o)}" for o in objs] for k, objs in zip(keys, objects)]
        self.index = index

    def rows(self, rows: np.ndarray) -> Callable[[int], str]:
        parent = self

        class Rows:
            def __call__(self, r: int) -> str:
                m = int(rows[r])
                return ", ".join(shown[int(i[m])] for shown, i in zip(parent.shown, parent.index))

            def texts(self) -> list[str]:
                per_key = [
                    [shown[j] for j in i[rows].tolist()] for shown, i in zip(parent.shown, parent.index)
                ]
                return list(map(", ".join, zip(*per_key)))

        return Rows()
