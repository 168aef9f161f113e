"""The translation (Penrose's "assignment"): which Style expression defines each path.

Blocks run in program order, each once per match of its selector. Statements do not compute
anything yet; they record, for every path, the expression that defines it (with the block context
needed to resolve the expression's own paths later). Penrose's rules apply:

- a scope holds *fields*; a field is a value expression or a shape (`Circle {...}`) whose
  properties are expressions themselves (`x.icon.r`) — scopes and paths: `paths`;
- assigning an existing path overrides it with an `ImplicitOverrideWarning`; `override` deletes
  then assigns (deleting a missing path gives a `NoopDeleteWarning`); `delete` removes;
- `ensure`, `encourage`, `layer` and unnamed shapes are fields named `$ANON_<statement index>`;
- every block match starts with `match_id` and `match_total` assigned in its local scope.

A selector block's statements on its local scope run once, into the block's layout
(`context.BlockPlan`), since they do the same in every match; a match runs its statements itself
only when some of them assign Substance objects or namespaces, or when the local ones warn or fail
(then every match warns or fails in turn, in statement order, as Penrose does).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from energies.lang import style_ast as S
from energies.lang.ast import Pos
from energies.lang.errors import DiagramError, did_you_mean, raise_all
from energies.lang.frontend import FrontEnd
from energies.lang.match import BlockMatches
from energies.limits import MAX_SHAPES, check_deadline
from energies.shapes import SHAPE_TYPES
from energies.style.context import (
    BlockContext,
    BlockPlan,
    ExprSource,
    Fields,
    FieldSource,
    MatchCounter,
    ShapeSource,
    resolve_path,
)
from energies.style.errors import MAX_ERRORS, Reporter
from energies.style.local_scopes import LocalScopes
from energies.style.paths import (
    LOCAL_FIELD,
    CollectionRef,
    NamespaceRef,
    ObjectRef,
    Scope,
    SubstanceRef,
)
from energies.style.penrose_order import PenroseMap

ANON = "$ANON"


@dataclass
class Assignment:
    """Scope name -> fields for namespaces and Substance objects (maps iterate in Penrose's order),
    and the local scopes of all matches."""

    namespaces: PenroseMap[str, Fields] = field(default_factory=PenroseMap)
    substances: PenroseMap[str, Fields] = field(default_factory=PenroseMap)
    locals: LocalScopes = field(default_factory=LocalScopes)

    def fields(self, scope: Scope) -> Fields:
        assert scope.kind != "local", "local scopes are written through their block's layout"
        table = self.namespaces if scope.kind == "ns" else self.substances
        return table.setdefault(scope.name, PenroseMap())

    def lookup(self, ref: ObjectRef) -> FieldSource | None:
        scope = ref.scope
        if scope.kind == "local":
            assert scope.plan is not None
            return scope.plan.layout.get(ref.field)
        fields = (self.substances if scope.kind == "sub" else self.namespaces).get(scope.name)
        return None if fields is None else fields.get(ref.field)

    def scope_fields(self, kind: str) -> Iterator[tuple[ObjectRef, FieldSource]]:
        """The fields of every namespace ("ns") or Substance object ("sub"), in Penrose's order."""
        for name, fields in (self.namespaces if kind == "ns" else self.substances).items():
            scope = Scope(kind, name)
            for fname, source in fields.items():
                yield ObjectRef(scope, fname), source


def _fresh_local_fields(block: S.Block) -> Fields:
    fields: Fields = PenroseMap()
    for name in ("match_id", "match_total"):
        fields[name] = ExprSource(MatchCounter(name, block.pos), None, block.pos)
    return fields


class _Builder:
    def __init__(self, front: FrontEnd, rep: Reporter) -> None:
        self.front = front
        self.rep = rep
        self.assignment = Assignment()
        self.errors: list[DiagramError] = []
        self.lines = rep.text.splitlines()
        self.planned_shapes = 0  # shape statements times matches, so far: an upper bound
        # Penrose puts every Substance object's label in its scope first, in declaration order.
        no_block = BlockPlan(-1, Pos(0, 0), "", frozenset(), ())
        no_context = BlockContext(no_block, 0, Scope("ns", ""))
        for name, label in front.substance.labels.items():
            fields: Fields = PenroseMap()
            fields["label"] = ExprSource(S.StrLit(label.text), no_context, Pos(0, 0))
            self.assignment.substances[name] = fields

    def block_text(self, header: Any) -> str:
        line = header.pos.line
        text = self.lines[line - 1].strip() if 0 < line <= len(self.lines) else ""
        return text if len(text) <= 60 else text[:57] + "..."

    def run(self) -> Assignment:
        for bm in self.front.blocks:
            if isinstance(bm.block.header, S.Namespace):
                self.namespace_block(bm)
            else:
                self.selector_block(bm)
        raise_all(self.errors)
        return self.assignment

    def namespace_block(self, bm: BlockMatches) -> None:
        header = bm.block.header
        assert isinstance(header, S.Namespace)
        for match in bm.matches:  # exactly one
            if len(self.errors) >= MAX_ERRORS:
                break
            name = header.name.value
            if name in self.assignment.namespaces:
                self.errors.append(
                    self.rep.error(
                        header.pos, f"namespace {name} is declared twice", "RedeclareNamespaceError"
                    )
                )
                continue
            self.assignment.namespaces[name] = PenroseMap()
            namespaces = frozenset(self.assignment.namespaces)
            plan = BlockPlan(bm.item_index, header.pos, self.block_text(header), namespaces, bm.matches)
            ctx = BlockContext(plan, 0, Scope("ns", name))
            fields = self.assignment.fields(ctx.scope)
            block = bm.block.block
            for counter, value in (("match_id", match.match_id), ("match_total", match.match_total)):
                if counter in fields:
                    self.rep.warn(
                        block.pos, "ImplicitOverrideWarning", f"{ctx.scope.prefix}.{counter} is overridden"
                    )
                fields[counter] = ExprSource(S.Fix(float(value)), ctx, block.pos)
            for index, stmt in enumerate(block.statements, start=2):
                self.try_statement(ctx, index, stmt, None)

    def selector_block(self, bm: BlockMatches) -> None:
        header = bm.block.header
        namespaces = frozenset(self.assignment.namespaces)
        plan = BlockPlan(bm.item_index, header.pos, self.block_text(header), namespaces, bm.matches)
        if not bm.matches or len(self.errors) >= MAX_ERRORS:
            return
        block = bm.block.block
        self.plan_shapes(header.pos, block, len(bm.matches))
        local, events = self.plan_layout(plan, block)
        if not events and all(local):  # nothing happens per match: the layout is every local scope
            self.assignment.locals.add_run(plan, len(bm.matches))
            return
        count = 0
        for match_index in range(len(bm.matches)):
            check_deadline("running the Style's blocks")
            if len(self.errors) >= MAX_ERRORS:
                break
            count += 1
            ctx = plan.context(match_index)
            if not all(local):
                plan.contexts[match_index] = ctx  # sources outside the local scope keep it
            local_fields = _fresh_local_fields(block) if events else None
            for (index, stmt), is_local in zip(enumerate(block.statements, start=2), local, strict=True):
                if is_local and local_fields is None:
                    continue  # already in the layout, and silent
                self.try_statement(ctx, index, stmt, local_fields)
        self.assignment.locals.add_run(plan, count)

    def plan_shapes(self, pos: Pos, block: S.Block, matches: int) -> None:
        """Refuse a Style whose shape statements, run for every match, would make far more shapes
        than MAX_SHAPES, before any is made. The count is an upper bound (a field may be assigned
        a shape twice), hence the margin; graph.shape_order checks the exact count."""
        per_match = sum(
            isinstance(stmt, S.PathAssign | S.AnonAssign)
            and isinstance(stmt.value if isinstance(stmt, S.PathAssign) else stmt.expr, S.GPIDecl)
            for stmt in block.statements
        )
        self.planned_shapes += per_match * matches
        if self.planned_shapes > 2 * MAX_SHAPES:
            raise self.rep.error(
                pos,
                f"the Style's shape statements, run for every match, would create up to "
                f"{self.planned_shapes:,} shapes; the limit is {MAX_SHAPES:,}",
                "ShapeLimitError",
            )

    def plan_layout(self, plan: BlockPlan, block: S.Block) -> tuple[list[bool], bool]:
        """Run the statements on the local scope once, into `plan.layout`. Returns which statements
        assign the local scope, and whether those warn or fail (then each match runs them again)."""
        ctx = plan.context(0)
        local = [self.assigns_local(ctx, stmt) for stmt in block.statements]
        real_rep, real_errors = self.rep, self.errors
        self.rep, self.errors = Reporter(real_rep.text), []
        try:
            layout = _fresh_local_fields(block)
            for (index, stmt), is_local in zip(enumerate(block.statements, start=2), local, strict=True):
                if is_local:
                    self.try_statement(ctx, index, stmt, layout)
            events = bool(self.rep.warnings or self.errors)
        finally:
            self.rep, self.errors = real_rep, real_errors
        plan.layout = layout
        return local, events

    def assigns_local(self, ctx: BlockContext, stmt: S.Stmt) -> bool:
        # Decided on one match for all: every match of a selector binds the same variables (each
        # candidate list of the matcher binds one set of variables, and joins merge them).
        if isinstance(stmt, S.AnonAssign):
            return True
        path = stmt.path
        return ctx.plan.template(path, path.var.key in ctx.subst).how == LOCAL_FIELD

    def try_statement(self, ctx: BlockContext, index: int, stmt: S.Stmt, local: Fields | None) -> None:
        try:
            self.statement(ctx, index, stmt, local)
        except DiagramError as e:
            self.errors.append(e)

    def statement(self, ctx: BlockContext, index: int, stmt: S.Stmt, local: Fields | None) -> None:
        if isinstance(stmt, S.AnonAssign):
            self.insert(ObjectRef(ctx.scope, f"{ANON}_{index}"), stmt.expr, ctx, stmt.pos, local)
            return
        ref = self.lhs(ctx, stmt.path)
        if isinstance(stmt, S.PathAssign):
            self.insert(ref, stmt.value, ctx, stmt.pos, local)
        elif isinstance(stmt, S.Override):
            self.delete(ref, stmt.pos, local)
            self.insert(ref, stmt.value, ctx, stmt.pos, local)
        else:
            self.delete(ref, stmt.pos, local)

    def lhs(self, ctx: BlockContext, path: S.Path) -> ObjectRef:
        ref = resolve_path(ctx, path, self.rep)
        if path.indices:
            raise self.rep.error(path.pos, "cannot assign to an indexed path", "AssignAccessError")
        if isinstance(ref, NamespaceRef):
            raise self.rep.error(path.pos, f"cannot assign to namespace {ref.name}", "AssignGlobalError")
        if isinstance(ref, SubstanceRef | CollectionRef):
            raise self.rep.error(
                path.pos, f"cannot assign to Substance variable {ref.style_name}", "AssignSubstanceError"
            )
        return ref

    def target(self, scope: Scope, local: Fields | None) -> Fields:
        """The fields a statement writes: the local scope's, or those of an object or namespace."""
        if scope.kind == "local":
            assert local is not None, "a local statement runs into the layout or a fresh local scope"
            return local
        return self.assignment.fields(scope)

    def insert(self, ref: ObjectRef, expr: S.Expr, ctx: BlockContext, pos: Pos, local: Fields | None) -> None:
        fields = self.target(ref.scope, local)
        source_ctx = None if ref.scope.kind == "local" else ctx  # a local source reads its match's
        if ref.prop is None:
            if ref.field in fields:
                self.rep.warn(
                    pos, "ImplicitOverrideWarning", f"{ref.key} is assigned again; the new value wins"
                )
            fields[ref.field] = self.source(expr, source_ctx, pos)
            return
        if isinstance(expr, S.GPIDecl):
            raise self.rep.error(
                expr.pos, "a shape cannot be the property of another shape", "NestedShapeError"
            )
        shape = fields.get(ref.field)
        if shape is None:
            raise self.rep.error(
                pos,
                f"{ref.field_ref.key} is not defined, so it has no property {ref.prop}",
                "MissingShapeError",
            )
        if not isinstance(shape, ShapeSource):
            raise self.rep.error(
                pos, f"{ref.field_ref.key} is not a shape; cannot set {ref.prop}", "NotShapeError"
            )
        if ref.prop in shape.props:
            self.rep.warn(pos, "ImplicitOverrideWarning", f"{ref.key} is assigned again; the new value wins")
        shape.props[ref.prop] = ExprSource(expr, source_ctx, pos)

    def source(self, expr: S.Expr, ctx: BlockContext | None, pos: Pos) -> FieldSource:
        if not isinstance(expr, S.GPIDecl):
            return ExprSource(expr, ctx, pos)
        kind = expr.shape.value
        if kind not in SHAPE_TYPES:
            raise self.rep.error(
                expr.shape.pos,
                f"unknown shape type {kind}"
                + (did_you_mean(kind, SHAPE_TYPES) or f"; expected one of {', '.join(SHAPE_TYPES)}"),
                "InvalidGPITypeError",
            )
        props: PenroseMap[str, ExprSource] = PenroseMap()
        for decl in expr.properties:
            if isinstance(decl.value, S.GPIDecl):
                raise self.rep.error(
                    decl.value.pos, "a shape cannot be the property of another shape", "NestedShapeError"
                )
            props[decl.name.value] = ExprSource(decl.value, ctx, decl.pos)
        return ShapeSource(kind, props, ctx, expr.pos)

    def delete(self, ref: ObjectRef, pos: Pos, local: Fields | None) -> None:
        fields = self.target(ref.scope, local)
        if ref.prop is None:
            if fields.pop(ref.field, None) is None:
                self.rep.warn(
                    pos, "NoopDeleteWarning", f"{ref.key} does not exist, so deleting it does nothing"
                )
            return
        shape = fields.get(ref.field)
        if shape is None:
            raise self.rep.error(pos, f"{ref.field_ref.key} is not defined", "MissingShapeError")
        if not isinstance(shape, ShapeSource):
            raise self.rep.error(
                pos, f"{ref.field_ref.key} is not a shape; cannot delete {ref.prop}", "NotShapeError"
            )
        shape.props.pop(ref.prop, None)


def build_assignment(front: FrontEnd, rep: Reporter) -> Assignment:
    """Run every block over its matches (program order); raises all statement errors together."""
    return _Builder(front, rep).run()
