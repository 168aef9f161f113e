"""Blocks and their matches: what the translation records, and how a match resolves paths.

A `BlockPlan` is one Style block compiled once: its position and text (for messages), the
namespaces visible to it, its path templates (`paths.PathTemplate`, one per path of its
statements), and — for selector and collector blocks — the *layout* of its local scopes.

The layout: a block's statements that assign the block-local scope (`a = ...`, `ensure ...`,
unnamed shapes) have the same effect in every match, because nothing else writes that scope. So
they run once, into the layout (sources whose `ctx` is None, meaning "the match's own context"),
and a match's local scope is the layout bound to that match: nothing is stored per match.
`match_id` and `match_total` are `MatchCounter`s in the layout, read from the match.

A `BlockContext` is one block applied to one match; sources assigned outside the local scope
(`x.icon = Circle {...}`) keep theirs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from energies.diagram import Where
from energies.lang import style_ast as S
from energies.lang.ast import Pos
from energies.lang.match import CollectionMatch, MatchTable
from energies.lang.substance_env import SubValue, unique_name
from energies.style.errors import Reporter
from energies.style.paths import PathTemplate, Resolved, Scope, compile_path, paths_in, substance_scope
from energies.style.penrose_order import PenroseMap


@dataclass(frozen=True)
class MatchCounter:
    """`match_id` or `match_total` of the match whose local scope is being read (a number)."""

    name: str  # "match_id" | "match_total"
    pos: Pos


@dataclass(eq=False)
class ExprSource:
    expr: Any  # S.Expr, a goal / layering statement, or a MatchCounter
    ctx: BlockContext | None  # None: the context of the local scope holding it
    pos: Pos


@dataclass(eq=False)
class ShapeSource:
    kind: str
    props: PenroseMap[str, ExprSource]
    ctx: BlockContext | None
    pos: Pos


FieldSource = ExprSource | ShapeSource
Fields = PenroseMap[str, FieldSource]

INERT_EXPRS = (S.Fix, S.StrLit, S.BoolLit, MatchCounter)  # evaluating these has no effect but a value


class PathRead(NamedTuple):
    """A path an expression reads: `templates[variable in subst]` resolves it in a match."""

    path_id: int  # id() of the path AST: the key of `BlockContext.resolved`
    variable: str
    templates: tuple[PathTemplate, PathTemplate]  # (variable unbound, bound)
    collection_field: str | None  # `listof <field> from <path>`: the field read of each member


class BlockPlan:
    """One Style block, compiled once for all its matches (see the module docstring)."""

    def __init__(
        self,
        block_index: int,
        header_pos: Pos,
        block_text: str,
        namespaces: frozenset[str],
        matches: MatchTable | tuple[CollectionMatch, ...],
    ) -> None:
        self.block_index = block_index
        self.header_pos = header_pos
        self.block_text = block_text  # the selector, shortened, for messages
        self.namespaces = namespaces
        self.matches = matches
        self.collection_name = (
            matches[0].into if matches and isinstance(matches[0], CollectionMatch) else None
        )
        self.templates: dict[int, tuple[PathTemplate, PathTemplate]] = {}  # id(path) -> (unbound, bound)
        self.path_lists: dict[int, tuple[S.Path | S.CollectionAccess, ...]] = {}  # id(expr) -> its paths
        self.read_lists: dict[int, tuple[PathRead, ...]] = {}  # id(expr) -> its paths, compiled
        self.scopes: dict[SubValue, Scope] = {}
        self.layout: Fields = PenroseMap()  # the local scope of every match (selector blocks)
        self.contexts: dict[int, BlockContext] = {}  # contexts kept by the translation, by match
        self._last: BlockContext | None = None

    # ---- paths ------------------------------------------------------------------------------------

    def template(self, path: S.Path, bound: bool) -> PathTemplate:
        """The template of `path` when its variable is (`bound`) or is not bound by the selector."""
        return self.template_pair(path)[bound]

    def template_pair(self, path: S.Path) -> tuple[PathTemplate, PathTemplate]:
        found = self.templates.get(id(path))
        if found is None:
            found = self.templates[id(path)] = (
                compile_path(path, False, self.collection_name, self.namespaces),
                compile_path(path, True, self.collection_name, self.namespaces),
            )
        return found

    def paths(self, expr: Any) -> tuple[S.Path | S.CollectionAccess, ...]:
        found = self.path_lists.get(id(expr))
        if found is None:
            found = self.path_lists[id(expr)] = tuple(paths_in(expr))
        return found

    def reads(self, expr: Any) -> tuple[PathRead, ...]:
        """The paths `expr` reads, ready to resolve in any match (`graph.dependencies`)."""
        found = self.read_lists.get(id(expr))
        if found is None:
            reads = []
            for p in self.paths(expr):
                path, field = (p.path, p.field.value) if isinstance(p, S.CollectionAccess) else (p, None)
                reads.append(PathRead(id(path), path.var.key, self.template_pair(path), field))
            found = self.read_lists[id(expr)] = tuple(reads)
        return found

    def substance_scope(self, value: SubValue) -> Scope:
        found = self.scopes.get(value)
        if found is None:
            found = self.scopes[value] = substance_scope(value)
        return found

    # ---- matches ----------------------------------------------------------------------------------

    def local_scope(self, match_index: int) -> Scope:
        return Scope("local", f"{self.block_index}:{match_index}", self, match_index)

    def context(self, match_index: int, scope: Scope | None = None) -> BlockContext:
        """The context of a match: the one the translation kept, else a new one (the last is reused)."""
        kept = self.contexts.get(match_index)
        if kept is not None:
            return kept
        last = self._last
        if last is not None and last.match_index == match_index:
            return last
        ctx = BlockContext(self, match_index, scope or self.local_scope(match_index))
        self._last = ctx
        return ctx


class BlockContext:
    """One block applied to one match: how its paths resolve, and where it is (for messages)."""

    __slots__ = ("plan", "match_index", "scope", "match", "subst", "collection", "resolved")

    def __init__(self, plan: BlockPlan, match_index: int, scope: Scope) -> None:
        self.plan = plan
        self.match_index = match_index  # 0-based, as in Penrose's local scope names
        self.scope = scope  # where names that are not variables or namespaces live
        match = plan.matches[match_index] if plan.matches else None
        self.match = match
        self.collection: tuple[str, tuple[SubValue, ...]] | None = None
        if isinstance(match, CollectionMatch):
            self.subst: dict[str, SubValue] = match.groupby
            self.collection = (match.into, match.contents)
        else:
            self.subst = match.subst if match is not None else {}
        self.resolved: dict[int, Resolved] = {}  # id(path AST) -> its resolution

    def where(self, pos: Pos) -> Where:
        """`pos` in this block, with the match (`x=A, y=B`) for messages."""
        return Where(pos.line, pos.column, self.plan.block_text, match_text(self.subst, self.collection))

    def counter(self, name: str) -> float:
        assert self.match is not None
        return float(self.match.match_id if name == "match_id" else self.match.match_total)


def match_text(subst: dict[str, SubValue], collection: tuple[str, Any] | None) -> str:
    """A match as messages show it: `x=A, y=B` (a collection's contents as `[...]`)."""
    shown = [f"{k}={unique_name(v)}" for k, v in subst.items()]
    if collection is not None:
        shown.append(f"{collection[0]}=[...]")
    return ", ".join(shown)


def resolve_path(ctx: BlockContext, path: S.Path, rep: Reporter) -> Resolved:
    """The scope/field/property a path (without its indices) names in this block match."""
    found = ctx.resolved.get(id(path))
    if found is not None:
        return found
    ref = ctx.plan.template(path, path.var.key in ctx.subst).bind(ctx, rep)
    ctx.resolved[id(path)] = ref
    return ref


def source_context(source: FieldSource, scope: Scope) -> BlockContext:
    """The context a source's paths resolve in: its own, or that of the local scope holding it."""
    ctx = source.ctx
    if ctx is not None:
        return ctx
    plan = scope.plan
    assert plan is not None, f"{scope!r} has no block"
    return plan.context(scope.match_index, scope)
