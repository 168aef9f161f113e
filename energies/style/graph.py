"""Penrose's dependency graph, walked rather than built: shape order and evaluation order.

Penrose meets the translation's fields in map order — namespaces, then local scopes (`local_scopes`),
then Substance objects, each scope's fields in its own map order — and for each field the paths it
reads (`dependencies`). That walk fixes two things:

- `shape_order`: shapes in the order the walk first meets their path (as a field, or read by
  another field), which is the order Penrose samples them in and their default drawing order. The
  walk raises the first path error it meets, as building Penrose's graph does.
- `evaluate_all`: every field evaluated with what it reads first (a depth-first walk from each
  field in turn, each node once), so goals, unknowns and errors come in Penrose's order.
  When the Style draws random numbers while it is evaluated (`?` without a value, `random(...)`
  and the other sampling functions), the order of the draws decides which unknown gets which
  number, so the walk then builds Penrose's graph (nodes in the order it meets them, an edge from
  each path read to its reader) and evaluates in Penrose's topological order (`penrose_topsort`):
  the same draws, to the same unknowns, as Penrose.

Nothing is stored per local scope: a block's local fields are its layout (`context.BlockPlan`),
bound to each match as the walk reaches it. Three shortcuts keep the walk over hundreds of thousands
of matches cheap, and change nothing it produces:
- the local scopes of a block without local shapes or failing paths can only place Substance
  shapes of the fields they read (`x.icon`); once all of those have their place, the block's
  remaining scopes cannot change the shape order and the shape walk skips them;
- until then, where those reads are plain paths (`roles.LocalRoles.placing`), the shape walk
  places the objects' fields from the match's variables alone, without binding the scope;
- a goal or layering statement (`$ANON_<n>`) cannot be read by any path, so it is evaluated
  directly once its dependencies are, without a node of its own; fields holding only a literal
  (`match_id`, numbers, strings) have no effect but their value, computed when something reads them.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from typing import Any

from energies.lang import style_ast as S
from energies.lang.ast import Pos
from energies.lang.errors import DiagramError
from energies.lang.match import MatchTable
from energies.limits import MAX_SHAPES, check_deadline
from energies.style import bulk
from energies.style.context import (
    BlockContext,
    BlockPlan,
    ExprSource,
    FieldSource,
    ShapeSource,
    source_context,
)
from energies.style.env import Assignment
from energies.style.errors import MAX_ERRORS, Reporter
from energies.style.evaluate import Evaluator
from energies.style.paths import CollectionRef, ObjectRef
from energies.style.roles import INERT, NODE, STATEMENT, LocalRoles, expr_sources, roles_of


def dependencies(source: ExprSource, ctx: BlockContext, rep: Reporter) -> list[ObjectRef]:
    """The fields and properties an expression reads, in reading order (Penrose's findPathsExpr)."""
    out: list[ObjectRef] = []
    plan = ctx.plan
    resolved = ctx.resolved
    subst = ctx.subst
    for path_id, variable, templates, collection_field in plan.reads(source.expr):
        ref = resolved.get(path_id)
        if ref is None:  # as `context.resolve_path`
            ref = resolved[path_id] = templates[variable in subst].bind(ctx, rep)
        if collection_field is None:
            if ref.__class__ is ObjectRef:
                out.append(ref)
        elif isinstance(ref, CollectionRef):
            out.extend(ObjectRef(plan.substance_scope(v), collection_field) for v in ref.values)
    return out


def shape_order(assignment: Assignment, rep: Reporter) -> list[tuple[str, ShapeSource]]:
    """(key, source) of every shape, in the order Penrose's dependency graph meets it."""
    unplaced: dict[str, ShapeSource] = {}
    substance_field: dict[str, str] = {}  # key of a Substance object's shape -> its field
    waiting: dict[str, int] = {}  # field -> how many Substance objects' shapes of that name are unplaced
    for kind in ("ns", "sub"):
        for ref, source in assignment.scope_fields(kind):
            if isinstance(source, ShapeSource):
                unplaced[ref.key] = source
                if kind == "sub":
                    substance_field[ref.key] = ref.field
                    waiting[ref.field] = waiting.get(ref.field, 0) + 1
    placed: dict[str, ShapeSource] = {}

    def place(key: str) -> None:
        found = unplaced.pop(key, None)
        if found is not None:
            placed[key] = found
            field = substance_field.get(key)
            if field is not None:
                waiting[field] -= 1

    def meet(ref: ObjectRef, source: FieldSource) -> None:
        place(ref.key)
        for expr_source in expr_sources(source):  # a property's own path is never a shape's
            for dep in dependencies(expr_source, source_context(expr_source, ref.scope), rep):
                place(dep.key)

    for ref, source in assignment.scope_fields("ns"):
        meet(ref, source)
    roles: dict[int, LocalRoles] = {}
    walk = assignment.locals.walk()
    for run, plan, match_index in walk:
        check_deadline("ordering the shapes")
        local = roles.get(id(plan)) or roles_of(plan, roles)
        if not (local.shapes or local.path_error or any(waiting.get(f) for f in local.substance_fields)):
            walk.drop(run)  # this block's scopes can neither place a shape nor fail, now or later
            continue
        if local.placing is not None:  # the paths `meet` would reach, without binding the scope
            assert isinstance(plan.matches, MatchTable)
            subst = plan.matches.subst(match_index)
            for variable, field in local.placing:
                place(ObjectRef(plan.substance_scope(subst[variable]), field).key)
            continue
        scope = plan.context(match_index).scope
        for name in local.shapes:  # a local shape is met no earlier than its own scope
            unplaced[f"{scope.prefix}.{name}"] = _shape(plan, name)
        for name, source in local.items:
            meet(ObjectRef(scope, name), source)
    for ref, source in assignment.scope_fields("sub"):
        check_deadline("ordering the shapes")
        meet(ref, source)
    if len(placed) > MAX_SHAPES:  # before any shape's properties are sampled or evaluated
        first_beyond = list(placed.values())[MAX_SHAPES]
        raise rep.error(
            first_beyond.pos,
            f"the Style creates {len(placed):,} shapes, above the limit of {MAX_SHAPES:,}",
            "ShapeLimitError",
        )
    return list(placed.items())


def _shape(plan: BlockPlan, name: str) -> ShapeSource:
    source = plan.layout[name]
    assert isinstance(source, ShapeSource)
    return source


def draws_numbers(prog: S.StyleProg, functions: Any) -> bool:
    """Whether evaluating `prog` draws random numbers: a `?` without a value, or a call to a
    function that takes the random source (`FunctionSpec.needs_context`). Walked in source order: a
    Style that draws usually does so in its first blocks (the registry's largest Styles: 20-25 ms of
    walking from the end, 0.1-2 ms from the start)."""
    stack: list[Any] = [prog]
    while stack:
        node = stack.pop()
        cls = node.__class__
        if cls is list or cls is tuple:
            stack.extend(reversed(node))
            continue
        if cls is S.Vary and node.init is None:
            return True
        if cls is S.CompApp and getattr(functions.get(node.name.value), "needs_context", False):
            return True
        stack.extend([getattr(node, name) for name in reversed(_child_fields(cls))])
    return False


# AST class -> the fields that can hold further nodes: every dataclass field, but positions, and
# nothing of leaves (strings, numbers, None). Walking the AST by these names takes a fifth of the
# time of asking `dataclasses` at every node.
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {Pos: ()}


def _child_fields(cls: type) -> tuple[str, ...]:
    found = _CHILD_FIELDS.get(cls)
    if found is None:
        found = _CHILD_FIELDS[cls] = tuple(f.name for f in fields(cls)) if is_dataclass(cls) else ()
    return found


def penrose_topsort(preds: list[list[int]]) -> list[int]:
    """Penrose's `Graph.topsort`: nodes are numbered in insertion order, `preds[i]` lists the sources
    of i's in-edges in the order they were added. Sinks are stacked in insertion order; a node is
    taken from the top once all its successors are taken, and pushes its predecessors that became
    ready; the order taken, reversed."""
    remaining = [0] * len(preds)
    for ps in preds:
        for p in ps:
            remaining[p] += 1
    stack = [i for i, n in enumerate(remaining) if n == 0]
    taken: list[int] = []
    while stack:
        i = stack.pop()
        taken.append(i)
        for p in preds[i]:
            remaining[p] -= 1
            if remaining[p] == 0:
                stack.append(p)
    if len(taken) != len(preds):  # a cycle (reported by the walk): keep a usable order
        left = set(range(len(preds))) - set(taken)
        taken.extend(sorted(left, reverse=True))
    taken.reverse()
    return taken


class _PenroseGraph:
    """Penrose's dependency graph of a translation: node keys in insertion order, in-edges in order,
    and what evaluates each node (None for a path no field assigns, or a literal)."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self.keys: list[str] = []
        self.preds: list[list[int]] = []
        self.items: list[Any] = []

    def node(self, key: str, item: Any = None) -> int:
        i = self.index.get(key)
        if i is None:
            i = self.index[key] = len(self.preds)
            self.keys.append(key)
            self.preds.append([])
            self.items.append(item)
        elif item is not None:
            self.items[i] = item
        return i

    def edge(self, source: str, target: int) -> None:
        self.preds[target].append(self.node(source))


class _Full(Exception):
    """Enough errors were collected."""


class _EvaluationWalk:
    def __init__(self, ev: Evaluator, assignment: Assignment, rep: Reporter) -> None:
        self.ev = ev
        self.assignment = assignment
        self.rep = rep
        self.done: set[str] = set()
        self.errors: list[DiagramError] = []

    def run_in_penrose_order(self) -> list[DiagramError]:
        """Build Penrose's graph as its gatherDependencies does, then evaluate in its topological order.
        A block evaluated in bulk (`bulk.eligible`) draws nothing, so when its evaluation happens
        does not matter, but its nodes shape the order of the nodes that draw: they are gathered
        (cheap beside evaluating them) and not evaluated by the walk, and the block is evaluated
        last, in bulk. Above `bulk.PENROSE_ORDER_MAX` matches a block is not even gathered: the
        order of draws then departs from Penrose's."""
        graph = _PenroseGraph()
        roles: dict[int, LocalRoles] = {}
        walk = self.assignment.locals.walk()
        in_bulk: dict[int, bool] = {}  # run -> whether it is evaluated in bulk
        try:
            for ref, source in self.assignment.scope_fields("ns"):
                self.gather(graph, ref, source, None, ref)
            for run, plan, match_index in walk:
                local = roles_of(plan, roles)
                bulk_run = in_bulk.get(run)
                if bulk_run is None:
                    bulk_run = in_bulk[run] = bulk.eligible(plan, local, draws=True)
                    if bulk_run and len(plan.matches) >= bulk.PENROSE_ORDER_MAX:
                        walk.drop(run)
                if walk.dropped[run]:
                    continue
                ctx = plan.context(match_index)
                for name, source, role in local.roles:
                    ref = ObjectRef(ctx.scope, name)
                    item = None  # a bulk block's nodes are evaluated with the block (in_bulk)
                    if not bulk_run:
                        item = {NODE: ref, STATEMENT: (source, plan, match_index), INERT: None}[role]
                    self.gather(graph, ref, source, ctx, item)
            for ref, source in self.assignment.scope_fields("sub"):
                self.gather(graph, ref, source, None, ref)
        except DiagramError:  # a path error: the plain walk meets and reports it where Penrose does
            return self.run(bulk_draws=True)
        try:
            for i in penrose_topsort(graph.preds):
                item = graph.items[i]
                if item is None:
                    continue
                try:
                    if isinstance(item, ObjectRef):
                        self.ev.eval_field(item)
                    else:
                        source, plan, match_index = item
                        self.ev.eval_statement(graph.keys[i], source, plan.context(match_index))
                except DiagramError as e:
                    self.failed(e)
            for run in (run for run, bulk_run in in_bulk.items() if bulk_run):
                plan = walk.plans[run]
                if not self.in_bulk(plan, roles_of(plan, roles), walk.matches_of(run)):
                    for match_index in walk.matches_of(run).tolist():
                        self.local_scope(plan.context(match_index), roles_of(plan, roles))
        except _Full:
            pass
        return self.errors

    def in_bulk(self, plan: BlockPlan, local: LocalRoles, order: Any) -> bool:
        """Evaluate a block in bulk; False when it must be evaluated match by match instead."""
        try:
            bulk.evaluate_in_bulk(self.ev, plan, local, order)
        except bulk.BulkFailed:
            return False
        return True

    def gather(
        self, graph: _PenroseGraph, ref: ObjectRef, source: FieldSource, ctx: BlockContext | None, item: Any
    ) -> None:
        """Penrose's gatherField: a shape's node, an edge from each of its properties and each
        property's reads; else the field's node (evaluated by `item`) and its reads."""
        if isinstance(source, ShapeSource):
            shape = graph.node(ref.key, ref)
            for prop, prop_source in source.props.items():
                prop_ref = ObjectRef(ref.scope, ref.field, prop)
                graph.edge(prop_ref.key, shape)
                target = graph.node(prop_ref.key, prop_ref)
                self.gather_reads(graph, target, prop_source, ctx, ref)
            return
        assert isinstance(source, ExprSource)
        self.gather_reads(graph, graph.node(ref.key, item), source, ctx, ref)

    def gather_reads(
        self, graph: _PenroseGraph, target: int, source: ExprSource, ctx: BlockContext | None, ref: ObjectRef
    ) -> None:
        context = ctx if ctx is not None else source_context(source, ref.scope)
        for dep in dependencies(source, context, self.rep):
            graph.edge(dep.key, target)

    def run(self, bulk_draws: bool = False) -> list[DiagramError]:
        """Walk Penrose's order; a block that can be is evaluated in bulk where its first match is."""
        try:
            for ref, _ in self.assignment.scope_fields("ns"):
                self.root(ref)
            roles: dict[int, LocalRoles] = {}
            walk = self.assignment.locals.walk()
            tried: set[int] = set()
            for run, plan, match_index in walk:
                check_deadline("evaluating the Style")
                local = roles_of(plan, roles)
                if run not in tried:
                    tried.add(run)
                    if bulk.eligible(plan, local, bulk_draws) and self.in_bulk(
                        plan, local, walk.matches_of(run)
                    ):
                        walk.drop(run)
                        continue
                ctx = plan.context(match_index)
                self.local_scope(ctx, local)
            for ref, _ in self.assignment.scope_fields("sub"):
                self.root(ref)
        except _Full:
            pass
        return self.errors

    def local_scope(self, ctx: BlockContext, local: LocalRoles) -> None:
        scope = ctx.scope
        for name, source, role in local.roles:
            if role == NODE:
                self.root(ObjectRef(scope, name))
            elif role == STATEMENT:
                assert isinstance(source, ExprSource)
                for dep in dependencies(source, ctx, self.rep):
                    if dep.key not in self.done and self.is_node(dep):
                        self.visit(dep)
                try:
                    self.ev.eval_statement(f"{scope.prefix}.{name}", source, ctx)
                except DiagramError as e:
                    self.failed(e)

    def root(self, ref: ObjectRef) -> None:
        if ref.key not in self.done:
            self.visit(ref)

    def visit(self, ref: ObjectRef) -> None:
        """Evaluate `ref` after what it reads (depth first, each node once, without recursion)."""
        self.done.add(ref.key)
        stack: list[tuple[ObjectRef, list[ObjectRef], int]] = [(ref, self.reads(ref), 0)]
        while stack:
            check_deadline("evaluating the Style")
            node, deps, i = stack.pop()
            if i < len(deps):
                stack.append((node, deps, i + 1))
                dep = deps[i]
                if dep.key not in self.done and self.is_node(dep):
                    self.done.add(dep.key)
                    stack.append((dep, self.reads(dep), 0))
                continue
            try:
                self.ev.eval_field(node)
            except DiagramError as e:
                self.failed(e)

    def failed(self, e: DiagramError) -> None:
        self.errors.append(e)
        if len(self.errors) >= MAX_ERRORS:
            raise _Full

    def is_node(self, ref: ObjectRef) -> bool:
        """Fields and the properties a shape sets are nodes; other paths are computed on demand."""
        source = self.assignment.lookup(ref)
        if ref.prop is None:
            return source is not None
        return isinstance(source, ShapeSource) and ref.prop in source.props

    def reads(self, ref: ObjectRef) -> list[ObjectRef]:
        source = self.assignment.lookup(ref)
        assert source is not None
        if isinstance(source, ShapeSource):
            if ref.prop is None:
                return [ObjectRef(ref.scope, ref.field, prop) for prop in source.props]
            prop_source = source.props[ref.prop]
            assert prop_source is not None
            return dependencies(prop_source, source_context(prop_source, ref.scope), self.rep)
        return dependencies(source, source_context(source, ref.scope), self.rep)


def evaluate_all(
    ev: Evaluator, assignment: Assignment, rep: Reporter, penrose_order: bool = False
) -> list[DiagramError]:
    """Evaluate every field in Penrose's order; the errors found (at most `MAX_ERRORS`).
    `penrose_order` evaluates in the topological order of Penrose's graph (see the module's
    contract), which a Style that draws random numbers needs. Blocks `bulk.eligible` for it are
    evaluated in bulk (`energies.style.bulk`)."""
    walk = _EvaluationWalk(ev, assignment, rep)
    return walk.run_in_penrose_order() if penrose_order else walk.run()
