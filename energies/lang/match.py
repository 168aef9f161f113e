"""Style selector matching: which Substance objects each Style block runs on.

    match_style(style: StyleProg, domain: DomainEnv, substance: SubstanceEnv, text: str = "")
        -> list[BlockMatches]

One `BlockMatches` per `HeaderBlock`, in program order:
    BlockMatches.item_index  index of the block among `StyleProg.items` (Penrose's block id)
    BlockMatches.block       the `HeaderBlock`
    BlockMatches.var_types   selector variable -> type (from `selector_check`)
    BlockMatches.matches     a `MatchTable` (a sequence of `Match`) for selectors and namespaces
                             (a namespace has exactly one, empty, match), tuple[CollectionMatch, ...]
                             for collectors
A `Match` has `subst: dict[str, SubValue]` (keys are selector variables; a backticked
variable `` `A` `` is keyed "`A`"; a predicate alias `as p` maps to the synthetic instance
name "Pred_arg1_arg2" as in Penrose), and `match_id` (1-based) / `match_total`. A `MatchTable`
makes each `Match` when it is read, and gives a variable's values for all matches as one column
(`MatchTable.column`), so that a block's statements can be evaluated over all its matches at once.
A `CollectionMatch` has `groupby` (the `foreach` variables' values), `into` (the
collection's name) and `contents` (collected values in match order).
Values are object names (`str`) or `substance_env.Literal`s; `substance_env.unique_name`
gives Penrose's path name for either (`A`, `{n3}`), e.g. to build `` `A`.icon `` keys.
Selector errors are raised together as `DiagramError`s located in the Style text; a
selector whose partial matches exceed `MAX_CANDIDATES` raises `MatchLimitError` instead
of enumerating them.

Semantics (Penrose's `getSubsts`): every `where` relation is matched against the compiled
Substance statements in order (predicates, both argument orders for symmetric ones;
bindings `y := f(x)`; `has [math|text] label` against declarations); each declared
variable not mentioned by a relation ranges over the declarations of a subtype (or the
literals, for `String`/`Number`); the candidate lists are joined left to right keeping
consistent combinations (nested-loop order; `match_join` does this in bulk with numpy,
the lists themselves are built here); duplicates having the same matched
statements and the same *set* of bound values are dropped (so `forall T a; T b` yields
each unordered pair once); and unless `repeatable`, matches binding two variables to the
same value are dropped.  One deliberate difference: `` `A` has label `` only matches `A`
(Penrose matches any labeled object of the type there).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import overload

import numpy as np

from adcore import cyclic_gc_paused
from energies.lang import style_ast as S
from energies.lang.ast import NumberLit, StringLit
from energies.lang.domain_env import LITERAL_TYPES, DomainEnv
from energies.lang.errors import DiagramError, raise_all
from energies.lang.match_join import Candidate, Joined, Subst, TooManyMatches, join_candidates
from energies.lang.selector_check import check_header, header_decls
from energies.lang.substance_env import (
    Binding,
    Literal,
    ObjectDecl,
    PredicateFact,
    SubstanceEnv,
    SubValue,
)
from energies.limits import check_deadline


@dataclass(frozen=True, slots=True)
class Match:
    subst: Subst
    match_id: int
    match_total: int


class MatchTable(Sequence[Match]):
    """A selector's matches, in columns; `table[i]` is `Match(subst_i, i + 1, len(table))`."""

    def __init__(self, joined: Joined | None = None) -> None:
        self.joined = joined  # None: the one empty match of a namespace

    def __len__(self) -> int:
        return 1 if self.joined is None else len(self.joined)

    @overload
    def __getitem__(self, i: int) -> Match: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[Match]: ...

    def __getitem__(self, i: int | slice) -> Match | Sequence[Match]:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"match {i} of {n}")
        return Match({} if self.joined is None else self.joined.subst(i), i + 1, n)

    def subst(self, i: int) -> Subst:
        """Match i's variables alone (`self[i].subst`, without building the `Match`)."""
        return {} if self.joined is None else self.joined.subst(i)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    @property
    def keys(self) -> tuple[str, ...]:
        """The selector variables every match binds, in the order of `Match.subst`."""
        return () if self.joined is None else self.joined.keys

    def column(self, key: str) -> tuple[list[SubValue], np.ndarray]:
        """Every match's value of `key`: the distinct values and an index per match."""
        assert self.joined is not None, "a namespace binds no variables"
        return self.joined.column(key)


@dataclass(frozen=True)
class CollectionMatch:
    groupby: Subst
    into: str
    contents: tuple[SubValue, ...]
    match_id: int
    match_total: int


@dataclass(frozen=True)
class BlockMatches:
    item_index: int
    block: S.HeaderBlock
    var_types: dict[str, str]
    matches: MatchTable | tuple[CollectionMatch, ...]


class _Matcher:
    def __init__(self, domain: DomainEnv, sub: SubstanceEnv, var_types: dict[str, str]) -> None:
        self.domain = domain
        self.sub = sub
        self.var_types = var_types

    def value_type(self, v: SubValue) -> str:
        return v.type if isinstance(v, Literal) else self.sub.objects[v]

    def fits(self, v: SubValue, var: str) -> bool:
        return self.domain.is_subtype(self.value_type(v), self.var_types[var])

    def match_arg(self, arg: S.SelArg, value: SubValue) -> Subst | None:
        if isinstance(arg, S.BVar):
            if arg.backticked and (isinstance(value, Literal) or value != arg.name):
                return None
            return {arg.key: value} if self.fits(value, arg.name) else None
        literal = arg.value if isinstance(arg, StringLit | NumberLit) else None
        if isinstance(value, Literal) and type(value.value) is type(literal) and value.value == literal:
            return {}
        return None

    def match_args(self, args: tuple[S.SelArg, ...], values: tuple[SubValue, ...]) -> Subst | None:
        """One consistent substitution for the argument list, or None (arguments are flat)."""
        if len(args) != len(values):
            return None
        out: Subst = {}
        for arg, value in zip(args, values, strict=True):
            part = self.match_arg(arg, value)
            if part is None:
                return None
            for k, v in part.items():
                if out.setdefault(k, v) != v:
                    return None
        return out

    def relation_candidates(self, rel: S.Relation) -> list[Candidate]:
        out: list[Candidate] = []
        for idx, stmt in enumerate(self.sub.statements):
            check_deadline("matching the Style's selectors")
            if isinstance(rel, S.RelPred) and isinstance(stmt, PredicateFact) and stmt.name == rel.name.value:
                orders = [rel.args]
                sig = self.domain.predicates.get(stmt.name)
                if sig is not None and sig.symmetric and len(rel.args) == 2:
                    orders.append((rel.args[1], rel.args[0]))
                for args in orders:
                    subst = self.match_args(args, stmt.args)
                    if subst is not None:
                        if rel.alias is not None:
                            subst[rel.alias.value] = alias_instance_name(stmt)
                        out.append((subst, frozenset({idx})))
            elif isinstance(rel, S.RelBind) and isinstance(stmt, Binding):
                if not self.fits(stmt.var, rel.var.name):
                    continue
                subst = self.match_bind_expr(rel.expr, stmt)
                if subst is not None:
                    subst[rel.var.name] = stmt.var
                    out.append((subst, frozenset({idx})))
            elif (
                isinstance(rel, S.RelField)
                and isinstance(stmt, ObjectDecl)
                and self.fits(stmt.name, rel.var.name)
                and self.has_label(stmt.name, rel.descriptor)
                and not (rel.var.backticked and stmt.name != rel.var.name)
            ):
                out.append(({rel.var.key: stmt.name}, frozenset()))
        return out

    def match_bind_expr(self, expr: S.SelFunc | S.SelArg, stmt: Binding) -> Subst | None:
        if isinstance(expr, S.SelFunc):
            if stmt.kind == "value" or stmt.func != expr.name.value:
                return None
            return self.match_args(expr.args, stmt.args)
        if stmt.kind == "value" and isinstance(expr, S.BVar) and isinstance(stmt.args[0], str):
            return self.match_args((expr,), stmt.args)
        return None

    def has_label(self, name: str, descriptor: str | None) -> bool:
        label = self.sub.labels.get(name)
        if label is None:
            return False
        return label.label_type == descriptor if descriptor else len(label.text) > 0

    def decl_candidates(self, d: S.DeclPattern) -> list[Candidate]:
        if d.type.value in LITERAL_TYPES and not d.var.backticked:
            return [({d.var.key: lit}, frozenset()) for lit in self.sub.literals if lit.type == d.type.value]
        out: list[Candidate] = []
        for stmt in self.sub.statements:
            if isinstance(stmt, ObjectDecl) and self.domain.is_subtype(stmt.type, d.type.value):
                if d.var.backticked and stmt.name != d.var.name:
                    continue
                out.append(({d.var.key: stmt.name}, frozenset()))
        return out


def alias_instance_name(fact: PredicateFact) -> str:
    """Penrose's name for a matched predicate instance: the name and object arguments joined by `_`."""
    return "_".join([fact.name, *(a for a in fact.args if isinstance(a, str))])


# Penrose enumerates matches without bound; we refuse selectors whose partial matches
# explode (e.g. four unconstrained variables over hundreds of objects) instead of hanging. A
# partial join costs about 60 bytes a row while it is deduplicated, so 8,000,000 rows stay under
# half a gigabyte of a worker's memory.
MAX_CANDIDATES = 8_000_000


def _relation_vars(rel: S.Relation) -> set[str]:
    if isinstance(rel, S.RelPred):
        return {a.name for a in rel.args if isinstance(a, S.BVar)}
    if isinstance(rel, S.RelField):
        return {rel.var.name}
    args = rel.expr.args if isinstance(rel.expr, S.SelFunc) else (rel.expr,)
    return {rel.var.name} | {a.name for a in args if isinstance(a, S.BVar)}


def header_substs(
    header: S.Selector | S.Collector, domain: DomainEnv, sub: SubstanceEnv, var_types: dict[str, str]
) -> Joined | None:
    """The selector's matches (None: none)."""
    matcher = _Matcher(domain, sub, var_types)
    lists = [matcher.relation_candidates(rel) for rel in header.where]
    used = set().union(*(_relation_vars(r) for r in header.where)) if header.where else set()
    lists += [matcher.decl_candidates(d) for d in header_decls(header) if d.var.name not in used]
    if not lists or any(not cands for cands in lists):
        return None
    joined = join_candidates(lists, header.repeatable, MAX_CANDIDATES)
    return joined if len(joined) else None


def _collect(header: S.Collector, substs: list[Subst]) -> tuple[CollectionMatch, ...]:
    groups = [d.var.key for d in header.foreach]
    buckets: dict[tuple[SubValue, ...], list[SubValue]] = {}
    for subst in substs:
        buckets.setdefault(tuple(subst[g] for g in groups), []).append(subst[header.head.var.key])
    total = len(buckets)
    return tuple(
        CollectionMatch(dict(zip(groups, key, strict=True)), header.into.name, tuple(vals), i + 1, total)
        for i, (key, vals) in enumerate(buckets.items())
    )


def match_block(
    item_index: int, block: S.HeaderBlock, domain: DomainEnv, sub: SubstanceEnv, text: str = ""
) -> BlockMatches:
    header = block.header
    var_types, errors = check_header(header, domain, text)
    raise_all(errors)
    if isinstance(header, S.Namespace):
        return BlockMatches(item_index, block, var_types, MatchTable())
    try:
        substs = header_substs(header, domain, sub, var_types)
    except TooManyMatches:
        raise DiagramError.at(
            "style",
            text,
            header.pos.line,
            header.pos.column,
            f"this selector has more than {MAX_CANDIDATES} candidate matches; constrain it with `where`",
            "MatchLimitError",
        ) from None
    if isinstance(header, S.Collector):
        return BlockMatches(item_index, block, var_types, _collect(header, substs.substs() if substs else []))
    return BlockMatches(item_index, block, var_types, MatchTable(substs) if substs else ())


def match_style(
    style: S.StyleProg, domain: DomainEnv, sub: SubstanceEnv, text: str = ""
) -> list[BlockMatches]:
    """Matches of every block; all selector errors of the program are raised together."""
    results: list[BlockMatches] = []
    errors: list[DiagramError] = []
    with cyclic_gc_paused():
        for index, item in enumerate(style.items):
            if not isinstance(item, S.HeaderBlock):
                continue
            check_deadline("matching the Style's selectors")
            try:
                results.append(match_block(index, item, domain, sub, text))
            except DiagramError as e:
                errors.extend(getattr(e, "errors", (e,)))
    raise_all(errors)
    return results
