"""Style paths: scopes, what a path names, and path resolution compiled once per block.

A path lives in a *scope*: a namespace (`canvas.width`), a Substance object (`` `A`.icon ``) or
the block-local scope of one match (`3:0.s`, block 3, match 0); paths are at most
scope.field.property. A path's first component names a selector variable, else an existing
namespace, else a field of the current scope (the match's local scope, or the namespace a
namespace block defines).

What a path names depends on its block, not on the match, except for *which* Substance object a
variable is bound to. So each path is resolved once per block into a `PathTemplate` (including its
error, if any), and binding a template to a match is a few lookups (`PathTemplate.bind`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from energies.lang import style_ast as S
from energies.lang.ast import Pos
from energies.lang.substance_env import SubValue, unique_name
from energies.style.errors import Reporter

if TYPE_CHECKING:
    from energies.style.context import BlockContext, BlockPlan


class Scope:
    """Where fields live: kind "ns" | "local" | "sub" and a name. A local scope also knows its block
    plan and match, so the fields and context of a match are found without a table lookup."""

    __slots__ = ("kind", "name", "prefix", "plan", "match_index")

    def __init__(self, kind: str, name: str, plan: BlockPlan | None = None, match_index: int = 0) -> None:
        self.kind = kind
        self.name = name
        self.prefix = f"`{name}`" if kind == "sub" else name
        self.plan = plan
        self.match_index = match_index

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Scope) and (self.kind, self.name) == (other.kind, other.name)

    def __hash__(self) -> int:
        return hash((self.kind, self.name))

    def __repr__(self) -> str:
        return f"Scope({self.kind!r}, {self.name!r})"


class ObjectRef:
    """A path to a field of a scope, or to a property of a shape field; `key` is its text
    (`` `A`.icon.r ``), which names it in memo tables, shapes and messages."""

    __slots__ = ("scope", "field", "prop", "key")

    def __init__(self, scope: Scope, field: str, prop: str | None = None) -> None:
        self.scope = scope
        self.field = field
        self.prop = prop
        self.key = f"{scope.prefix}.{field}" if prop is None else f"{scope.prefix}.{field}.{prop}"

    @property
    def field_ref(self) -> ObjectRef:
        return ObjectRef(self.scope, self.field)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ObjectRef) and self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)

    def __repr__(self) -> str:
        return f"ObjectRef({self.key!r})"


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

# What a template binds to (see `PathTemplate.bind`).
CONSTANT, VARIABLE_VALUE, VARIABLE_FIELD, LOCAL_FIELD, COLLECTION, ERROR = range(6)


class PathTemplate:
    """One path of one block, resolved up to the match: `bind(ctx)` finishes the resolution."""

    __slots__ = ("how", "name", "field", "prop", "constant", "error")

    def __init__(
        self,
        how: int,
        name: str = "",
        field: str = "",
        prop: str | None = None,
        constant: Resolved | None = None,
        error: tuple[Pos, str, str] | None = None,
    ) -> None:
        self.how = how
        self.name = name  # the selector variable or collection name
        self.field = field
        self.prop = prop
        self.constant = constant
        self.error = error  # (position, message, Penrose kind): raised again at every use

    def bind(self, ctx: BlockContext, rep: Reporter) -> Resolved:
        how = self.how
        if how == VARIABLE_FIELD:
            return ObjectRef(ctx.plan.substance_scope(ctx.subst[self.name]), self.field, self.prop)
        if how == LOCAL_FIELD:
            return ObjectRef(ctx.scope, self.field, self.prop)
        if how == CONSTANT:
            assert self.constant is not None
            return self.constant
        if how == VARIABLE_VALUE:
            return SubstanceRef(ctx.subst[self.name], self.name)
        if how == COLLECTION:
            assert ctx.collection is not None
            return CollectionRef(ctx.collection[1], self.name)
        assert self.error is not None
        raise rep.error(*self.error)


def compile_path(
    path: S.Path, bound: bool, collection: str | None, namespaces: frozenset[str]
) -> PathTemplate:
    """The template of a path in a block whose selector binds `path.var` iff `bound`, whose
    collection (collectors) is named `collection`, and where `namespaces` exist."""
    first = path.var.key
    members = [m.value for m in path.members]
    if collection is not None and first == collection:
        if members:
            message = f"cannot access field {members[0]} of collection {first}"
            return PathTemplate(ERROR, error=(path.pos, message, "CollectionMemberAccessError"))
        return PathTemplate(COLLECTION, first)
    if path.var.backticked and not bound:
        message = f"Substance object {first} is not declared by this selector"
        return PathTemplate(ERROR, error=(path.pos, message, "UndeclaredSubVarError"))
    if bound:
        if not members:
            return PathTemplate(VARIABLE_VALUE, first)
        how, scope_name = VARIABLE_FIELD, first
    elif first in namespaces:
        if not members:
            return PathTemplate(CONSTANT, constant=NamespaceRef(first))
        how, scope_name = CONSTANT, first
    else:
        how, scope_name = LOCAL_FIELD, ""
        members = [first, *members]
    if len(members) > 2:
        shown = ".".join([first, *(m.value for m in path.members)])
        message = f"path {shown} is too deep: at most scope.field.property"
        return PathTemplate(ERROR, error=(path.pos, message, "NonWellFormedPathError"))
    field, prop = members[0], members[1] if len(members) > 1 else None
    if how == CONSTANT:
        return PathTemplate(CONSTANT, constant=ObjectRef(Scope("ns", scope_name), field, prop))
    return PathTemplate(how, scope_name, field, prop)


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


def substance_scope(value: SubValue) -> Scope:
    return Scope("sub", unique_name(value))
