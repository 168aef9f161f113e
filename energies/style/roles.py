"""How the walks treat a block's local fields: its roles, computed once per block.

A local field is a NODE of Penrose's graph (a value or a shape, evaluated once something reads it or
in turn), a STATEMENT (a goal or layering statement, `$ANON_<n>`: no path can read it, so it is
evaluated directly once what it reads is), or INERT (a literal such as `match_id`: no effect but
its value, computed where it is read).
"""

from __future__ import annotations

from energies.lang.match import MatchTable
from energies.style.context import INERT_EXPRS, BlockPlan, ExprSource, FieldSource, ShapeSource
from energies.style.env import ANON
from energies.style.paths import ERROR, VARIABLE_FIELD, PathTemplate

NODE, STATEMENT, INERT = range(3)


class LocalRoles:
    """Per block, how the walks treat its local fields (computed on first use). `placing` is, for a
    block whose scopes' fields are expressions of its own scope reading plain paths (no local shape,
    failing path or collection), the paths each scope's fields read that can place a shape, in
    reading order: all `graph.shape_order` needs of a scope, without binding its context; None for
    other blocks."""

    def __init__(self, plan: BlockPlan) -> None:
        items = plan.layout.items()
        self.items = items
        self.shapes = [name for name, source in items if isinstance(source, ShapeSource)]
        self.roles = [(name, source, role_of(name, source)) for name, source in items]
        reads = [r for _, source in items for e in expr_sources(source) for r in plan.reads(e.expr)]
        # Every match of a block binds the same variables (each candidate list of the matcher binds
        # one set, and joins merge them), so each path has one template in all the block's scopes:
        # whether a path fails (the walk must meet that error in order), and the fields of
        # Substance objects the scopes read (the shapes they can place).
        bound = bound_variables(plan)
        templates = [r.templates[r.variable in bound] for r in reads]
        self.path_error = any(t.how == ERROR for t in templates)
        placing = _placing(templates)
        collected = [r.collection_field for r in reads if r.collection_field is not None]
        self.substance_fields = frozenset([field for _, field in placing] + collected)
        simple = (
            not self.shapes
            and not self.path_error
            and isinstance(plan.matches, MatchTable)
            and all(source.ctx is None for _, source in items)
            and all(r.collection_field is None for r in reads)
        )
        self.placing = placing if simple else None


def _placing(templates: list[PathTemplate]) -> list[tuple[str, str]]:
    """The fields of the variables' Substance objects that a block's paths read, as (variable,
    field), in reading order: the shapes its scopes can place (`LocalRoles.substance_fields`,
    `LocalRoles.placing`). A property (`x.icon.r`) is no shape, a local field is
    none in a block without local shapes, a namespace's shapes are all placed before any local
    scope, and a variable itself is a value."""
    return [(t.name, t.field) for t in templates if t.how == VARIABLE_FIELD and t.prop is None]


def bound_variables(plan: BlockPlan) -> frozenset[str]:
    """The variables every match of the block binds."""
    matches = plan.matches
    if not matches:
        return frozenset()
    if isinstance(matches, tuple):  # a collector's matches: their `foreach` variables
        return frozenset(matches[0].groupby)
    return frozenset(matches.keys)


def expr_sources(source: FieldSource) -> list[ExprSource]:
    return list(source.props.values()) if isinstance(source, ShapeSource) else [source]


def role_of(name: str, source: FieldSource) -> int:
    if isinstance(source, ShapeSource):
        return NODE
    if isinstance(source.expr, INERT_EXPRS):
        return INERT
    return STATEMENT if name.startswith(ANON) else NODE


def roles_of(plan: BlockPlan, cache: dict[int, LocalRoles]) -> LocalRoles:
    found = cache.get(id(plan))
    if found is None:
        found = cache[id(plan)] = LocalRoles(plan)
    return found
