"""The translation (Penrose's "assignment"): which Style expression defines each path.

Blocks run in program order, each once per match of its selector. Statements do not compute
anything yet; they record, for every path, the expression that defines it (with the block context
needed to resolve the expression's own paths later). Penrose's rules apply:

- a path lives in a *scope*: a namespace (`canvas.width`), a Substance object (`` `A`.icon ``) or
  the block-local scope of one match (`3:0.s`, block 3, match 0);
- a scope holds *fields*; a field is a value expression or a shape (`Circle {...}`) whose
  properties are expressions themselves (`x.icon.r`); paths are at most scope.field.property;
- assigning an existing path overrides it with an `ImplicitOverrideWarning`; `override` deletes
  then assigns (deleting a missing path gives a `NoopDeleteWarning`); `delete` removes;
- `ensure`, `encourage`, `layer` and unnamed shapes are fields named `$ANON_<statement index>`;
- every block match starts with `match_id` and `match_total` assigned in its local scope;
- a first path component names a selector variable, else an existing namespace, else a field of
  the current scope (the match's local scope, or the namespace a namespace block defines).

`dependency_graph` lists paths in the order Penrose's dependency graph first meets them, which fixes
the order shapes are sampled in and their default drawing order (the scopes and fields iterate in
Penrose's Immutable.js map order, `penrose_order`), and what each path reads, so evaluation can go
dependencies first.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from energies.diagram import Where
from energies.lang import style_ast as S
from energies.lang.ast import Pos
from energies.lang.errors import DiagramError, raise_all
from energies.lang.frontend import FrontEnd
from energies.lang.match import CollectionMatch
from energies.lang.substance_env import SubValue, unique_name
from energies.shapes import SHAPE_TYPES
from energies.style.errors import MAX_ERRORS, Reporter
from energies.style.penrose_order import PenroseMap, int_list_hash

ANON = "$ANON"


@dataclass(frozen=True)
class Scope:
    kind: str  # "ns" | "local" | "sub"
    name: str  # namespace name, "block:match", or a Substance unique name

    @property
    def prefix(self) -> str:
        return f"`{self.name}`" if self.kind == "sub" else self.name


@dataclass(frozen=True)
class ObjectRef:
    """A path to a field of a scope, or to a property of a shape field."""

    scope: Scope
    field: str
    prop: str | None = None

    @cached_property
    def key(self) -> str:
        base = f"{self.scope.prefix}.{self.field}"
        return base if self.prop is None else f"{base}.{self.prop}"

    @property
    def field_ref(self) -> ObjectRef:
        return ObjectRef(self.scope, self.field)


@dataclass(frozen=True)
class SubstanceRef:
    value: SubValue
    style_name: str


@dataclass(frozen=True)
class CollectionRef:
    values: tuple[SubValue, ...]
    style_name: str


@dataclass(frozen=True)
class NamespaceRef:
    name: str


Resolved = ObjectRef | SubstanceRef | CollectionRef | NamespaceRef


@dataclass(eq=False)
class BlockContext:
    """One block applied to one match: how its paths resolve, and where it is (for messages)."""

    block_index: int
    match_index: int  # 0-based, as in Penrose's local scope names
    scope: Scope  # where names that are not variables or namespaces live
    subst: dict[str, SubValue]
    collection: tuple[str, tuple[SubValue, ...]] | None  # (`into` name, collected values)
    namespaces: frozenset[str]  # namespaces existing when this block ran
    header_pos: Pos
    block_text: str  # the selector, shortened, for messages
    resolved: dict[int, Resolved] = field(default_factory=dict)  # id(path AST) -> its resolution

    @property
    def where(self) -> Where:
        shown = [f"{k}={unique_name(v)}" for k, v in self.subst.items()]
        if self.collection is not None:
            shown.append(f"{self.collection[0]}=[...]")
        return Where(self.header_pos.line, self.header_pos.column, self.block_text, ", ".join(shown))


@dataclass(eq=False)
class ExprSource:
    expr: S.Expr
    ctx: BlockContext
    pos: Pos


@dataclass(eq=False)
class ShapeSource:
    kind: str
    props: PenroseMap[str, ExprSource]
    ctx: BlockContext
    pos: Pos


FieldSource = ExprSource | ShapeSource


Fields = PenroseMap[str, FieldSource]


def _local_scope_hash(name: str) -> int:
    # Penrose keys local scopes by the list [blockId, substId].
    return int_list_hash([int(part) for part in name.split(":")])


@dataclass
class Assignment:
    """Scope name -> fields, per kind of scope; maps iterate in Penrose's (Immutable.js) order."""

    namespaces: PenroseMap[str, Fields] = field(default_factory=PenroseMap)
    locals: PenroseMap[str, Fields] = field(default_factory=lambda: PenroseMap(_local_scope_hash))
    substances: PenroseMap[str, Fields] = field(default_factory=PenroseMap)

    def table(self, scope: Scope) -> PenroseMap[str, Fields]:
        return {"ns": self.namespaces, "local": self.locals, "sub": self.substances}[scope.kind]

    def fields(self, scope: Scope) -> Fields:
        return self.table(scope).setdefault(scope.name, PenroseMap())

    def lookup(self, ref: ObjectRef) -> FieldSource | None:
        fields = self.table(ref.scope).get(ref.scope.name)
        return None if fields is None else fields.get(ref.field)

    def all_fields(self) -> Iterator[tuple[ObjectRef, FieldSource]]:
        """Fields in Penrose's graph order: namespaces, then local scopes, then Substance objects."""
        for kind, table in (("ns", self.namespaces), ("local", self.locals), ("sub", self.substances)):
            for name, fields in table.items():
                scope = Scope(kind, name)
                for fname, source in fields.items():
                    yield ObjectRef(scope, fname), source


# ---- path resolution ----------------------------------------------------------------------------


def resolve_path(ctx: BlockContext, path: S.Path, rep: Reporter) -> Resolved:
    """The scope/field/property a path (without its indices) names in this block match."""
    found_before = ctx.resolved.get(id(path))
    if found_before is not None:
        return found_before
    ref = _resolve(ctx, path, rep)
    ctx.resolved[id(path)] = ref
    return ref


def _resolve(ctx: BlockContext, path: S.Path, rep: Reporter) -> Resolved:
    first = path.var.key
    members = [m.value for m in path.members]
    found: SubValue | None = ctx.subst.get(first)
    if ctx.collection is not None and first == ctx.collection[0]:
        if members:
            raise rep.error(
                path.pos,
                f"cannot access field {members[0]} of collection {first}",
                "CollectionMemberAccessError",
            )
        return CollectionRef(ctx.collection[1], first)
    if path.var.backticked and found is None:
        raise rep.error(
            path.pos, f"Substance object {first} is not declared by this selector", "UndeclaredSubVarError"
        )
    if found is not None:
        if not members:
            return SubstanceRef(found, first)
        scope = Scope("sub", unique_name(found))
    elif first in ctx.namespaces:
        if not members:
            return NamespaceRef(first)
        scope = Scope("ns", first)
    else:
        scope = ctx.scope
        members = [first, *members]
    if len(members) > 2:
        shown = ".".join([first, *(m.value for m in path.members)])
        raise rep.error(
            path.pos, f"path {shown} is too deep: at most scope.field.property", "NonWellFormedPathError"
        )
    return ObjectRef(scope, members[0], members[1] if len(members) > 1 else None)


def paths_in(expr: Any) -> Iterator[S.Path | S.CollectionAccess]:
    """The paths an expression reads (Penrose's findPathsExpr), in reading order."""
    if isinstance(expr, S.Path):
        yield expr
        for index in expr.indices:
            yield from paths_in(index)
    elif isinstance(expr, S.CollectionAccess):
        yield expr
    elif isinstance(expr, S.BinOp):
        yield from paths_in(expr.left)
        yield from paths_in(expr.right)
    elif isinstance(expr, S.UOp):
        yield from paths_in(expr.arg)
    elif isinstance(expr, S.ListExpr | S.Vector | S.TupleExpr):
        for item in expr.items:
            yield from paths_in(item)
    elif isinstance(expr, S.CompApp | S.FunctionCall):
        for arg in expr.args:
            yield from paths_in(arg)
    elif isinstance(expr, S.InlineComparison):
        yield from paths_in(expr.left)
        yield from paths_in(expr.right)
    elif isinstance(expr, S.ObjFn | S.ConstrFn):
        yield from paths_in(expr.body)
    elif isinstance(expr, S.Layering):
        yield expr.left
        for item in expr.right:
            yield from paths_in(item)
    elif isinstance(expr, S.GPIDecl):
        for prop in expr.properties:
            yield from paths_in(prop.value)


def dependency_keys(source: ExprSource, rep: Reporter) -> Iterator[str]:
    for p in paths_in(source.expr):
        if isinstance(p, S.CollectionAccess):
            coll = resolve_path(source.ctx, p.path, rep)
            if isinstance(coll, CollectionRef):
                for v in coll.values:
                    yield ObjectRef(Scope("sub", unique_name(v)), p.field.value).key
            continue
        ref = resolve_path(source.ctx, p, rep)
        if isinstance(ref, ObjectRef):
            yield ref.key


@dataclass
class DependencyGraph:
    """Penrose's dependency graph: nodes in creation order, and what each computed node reads."""

    order: list[str]  # every key, in the order Penrose's graph creates its nodes
    reads: dict[str, list[str]]  # key of a field or set property -> keys it depends on
    refs: dict[str, ObjectRef]  # key -> path, for fields and set properties

    def evaluation_order(self) -> list[ObjectRef]:
        """Fields and properties with their dependencies first (iterative depth-first search)."""
        done: set[str] = set()
        out: list[ObjectRef] = []
        for root in self.order:
            if root in done or root not in self.refs:
                continue
            stack: list[tuple[str, int]] = [(root, 0)]
            done.add(root)
            while stack:
                key, i = stack.pop()
                deps = self.reads.get(key, ())
                if i < len(deps):
                    stack.append((key, i + 1))
                    dep = deps[i]
                    if dep not in done and dep in self.refs:
                        done.add(dep)
                        stack.append((dep, 0))
                else:
                    out.append(self.refs[key])
        return out


def dependency_graph(fields: list[tuple[ObjectRef, FieldSource]], rep: Reporter) -> DependencyGraph:
    """The dependency graph of all fields (`fields` as `Assignment.all_fields()` lists them)."""
    seen: dict[str, None] = {}
    reads: dict[str, list[str]] = {}
    refs: dict[str, ObjectRef] = {}
    for ref, source in fields:
        seen.setdefault(ref.key)
        refs[ref.key] = ref
        if isinstance(source, ShapeSource):
            prop_keys = []
            for prop, prop_source in source.props.items():
                prop_ref = ObjectRef(ref.scope, ref.field, prop)
                prop_keys.append(prop_ref.key)
                refs[prop_ref.key] = prop_ref
                seen.setdefault(prop_ref.key)
                deps = list(dependency_keys(prop_source, rep))
                reads[prop_ref.key] = deps
                for dep in deps:
                    seen.setdefault(dep)
            reads[ref.key] = prop_keys
        else:
            deps = list(dependency_keys(source, rep))
            reads[ref.key] = deps
            for dep in deps:
                seen.setdefault(dep)
    return DependencyGraph(list(seen), reads, refs)


# ---- building the assignment ----------------------------------------------------------------------


class _Builder:
    def __init__(self, front: FrontEnd, rep: Reporter) -> None:
        self.front = front
        self.rep = rep
        self.assignment = Assignment()
        self.errors: list[DiagramError] = []
        lines = rep.text.splitlines()
        self.lines = lines
        # Penrose puts every Substance object's label in its scope first, in declaration order.
        no_context = BlockContext(-1, 0, Scope("ns", ""), {}, None, frozenset(), Pos(0, 0), "")
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
            header = bm.block.header
            shown = self.block_text(header)
            namespaces = frozenset(self.assignment.namespaces)
            for match_index, match in enumerate(bm.matches):
                if len(self.errors) >= MAX_ERRORS:
                    break
                ctx = self.context(bm.item_index, match_index, header, match, shown, namespaces)
                if ctx is None:
                    continue
                self.run_block(ctx, bm.block.block, match.match_id, match.match_total)
        raise_all(self.errors)
        return self.assignment

    def context(
        self, index: int, match_index: int, header: Any, match: Any, shown: str, namespaces: frozenset[str]
    ) -> BlockContext | None:
        if isinstance(header, S.Namespace):
            name = header.name.value
            if name in self.assignment.namespaces:
                self.errors.append(
                    self.rep.error(
                        header.pos, f"namespace {name} is declared twice", "RedeclareNamespaceError"
                    )
                )
                return None
            self.assignment.namespaces[name] = PenroseMap()
            scope = Scope("ns", name)
            return BlockContext(
                index, 0, scope, {}, None, frozenset(self.assignment.namespaces), header.pos, shown
            )
        scope = Scope("local", f"{index}:{match_index}")
        if isinstance(match, CollectionMatch):
            subst = dict(match.groupby)
            collection: tuple[str, tuple[SubValue, ...]] | None = (match.into, tuple(match.contents))
        else:
            subst = dict(match.subst)
            collection = None
        return BlockContext(index, match_index, scope, subst, collection, namespaces, header.pos, shown)

    def run_block(self, ctx: BlockContext, block: S.Block, match_id: int, match_total: int) -> None:
        fields = self.assignment.fields(ctx.scope)
        for name, value in (("match_id", match_id), ("match_total", match_total)):
            if name in fields:
                self.rep.warn(
                    block.pos, "ImplicitOverrideWarning", f"{ctx.scope.prefix}.{name} is overridden"
                )
            fields[name] = ExprSource(S.Fix(float(value)), ctx, block.pos)
        for index, stmt in enumerate(block.statements, start=2):
            try:
                self.statement(ctx, index, stmt)
            except DiagramError as e:
                self.errors.append(e)

    def statement(self, ctx: BlockContext, index: int, stmt: S.Stmt) -> None:
        if isinstance(stmt, S.AnonAssign):
            self.insert(ObjectRef(ctx.scope, f"{ANON}_{index}"), stmt.expr, ctx, stmt.pos)
            return
        ref = self.lhs(ctx, stmt.path)
        if isinstance(stmt, S.PathAssign):
            self.insert(ref, stmt.value, ctx, stmt.pos)
        elif isinstance(stmt, S.Override):
            self.delete(ref, stmt.pos)
            self.insert(ref, stmt.value, ctx, stmt.pos)
        else:
            self.delete(ref, stmt.pos)

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

    def insert(self, ref: ObjectRef, expr: S.Expr, ctx: BlockContext, pos: Pos) -> None:
        fields = self.assignment.fields(ref.scope)
        if ref.prop is None:
            if ref.field in fields:
                self.rep.warn(
                    pos, "ImplicitOverrideWarning", f"{ref.key} is assigned again; the new value wins"
                )
            fields[ref.field] = self.source(expr, ctx, pos)
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
        shape.props[ref.prop] = ExprSource(expr, ctx, pos)

    def source(self, expr: S.Expr, ctx: BlockContext, pos: Pos) -> FieldSource:
        if not isinstance(expr, S.GPIDecl):
            return ExprSource(expr, ctx, pos)
        kind = expr.shape.value
        if kind not in SHAPE_TYPES:
            raise self.rep.error(
                expr.shape.pos,
                f"unknown shape type {kind}; expected one of {', '.join(SHAPE_TYPES)}",
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

    def delete(self, ref: ObjectRef, pos: Pos) -> None:
        fields = self.assignment.fields(ref.scope)
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
