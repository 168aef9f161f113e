"""Domain checker: a `DomainProg` becomes a `DomainEnv` (types, subtyping, signatures).

    check_domain(prog: DomainProg, text: str = "") -> DomainEnv

Checks, as Penrose does: duplicate types / predicates / functions / constructors, unknown
types in signatures and subtype declarations, literal types (`String`, `Number`) used as
a sub/supertype or as an output, cyclic subtyping, and symmetric predicates that do not
take exactly two arguments of the same type.  All errors found are raised together.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from energies.lang import ast as A
from energies.lang.errors import DiagramError, did_you_mean, raise_all

LITERAL_TYPES = ("String", "Number")


@dataclass(frozen=True)
class Signature:
    """A predicate, function or constructor: argument types and (for non-predicates) output."""

    name: str
    arg_types: tuple[str, ...]
    output: str | None
    kind: str  # "predicate" | "function" | "constructor"
    symmetric: bool = False
    pos: A.Pos = field(default=A.NOPOS, compare=False)


@dataclass
class DomainEnv:
    types: dict[str, A.Pos]  # declared type -> where
    supertypes: dict[str, set[str]]  # direct supertypes
    predicates: dict[str, Signature]
    functions: dict[str, Signature]
    constructors: dict[str, Signature]
    _ancestors: dict[str, frozenset[str]] = field(default_factory=dict, repr=False)

    def ancestors(self, t: str) -> frozenset[str]:
        """All strict supertypes of `t` (transitively); memoized once checking is done."""
        cached = self._ancestors.get(t)
        if cached is not None:
            return cached
        seen: set[str] = set()
        todo = list(self.supertypes.get(t, ()))
        while todo:
            s = todo.pop()
            if s not in seen:
                seen.add(s)
                todo.extend(self.supertypes.get(s, ()))
        self._ancestors[t] = frozenset(seen)
        return self._ancestors[t]

    def is_subtype(self, sub: str, sup: str) -> bool:
        """`sub <: sup`, reflexive and transitive."""
        return sub == sup or sup in self.ancestors(sub)

    def callable_names(self) -> list[str]:
        return [*self.constructors, *self.functions]

    def callable(self, name: str) -> Signature | None:
        """A constructor or function named `name` (constructors win, as in Penrose)."""
        return self.constructors.get(name) or self.functions.get(name)

    def unknown_callable(self, name: A.Name, where: str = "") -> str:
        """The message for a call of `name` that names no constructor or function (`where`: e.g.
        " in selector"), with the closest known name."""
        return (
            f"unknown function or constructor {name}{where}{did_you_mean(name.value, self.callable_names())}"
        )

    def keywords(self) -> set[str]:
        return set(self.types) | set(self.predicates) | set(self.functions) | set(self.constructors)


def check_domain(prog: A.DomainProg, text: str = "") -> DomainEnv:
    # Over 80 lines on purpose: one pass over the statements in order, one branch per statement
    # kind, sharing the environment being built and the errors collected so far.
    env = DomainEnv({t: A.NOPOS for t in LITERAL_TYPES}, {}, {}, {}, {})
    errors: list[DiagramError] = []

    def err(pos: A.Pos, msg: str, kind: str) -> None:
        errors.append(DiagramError.at("domain", text, pos.line, pos.column, msg, kind))

    # Pass 1: types (declarations may mention types declared further down)
    for stmt in prog.statements:
        if isinstance(stmt, A.TypeDecl):
            if stmt.name.value in env.types:
                err(stmt.name.pos, f"type {stmt.name} is already declared", "TypeDeclared")
            env.types[stmt.name.value] = stmt.name.pos

    def known_type(t: A.Name) -> bool:
        if t.value in env.types:
            return True
        err(t.pos, f"unknown type {t}{did_you_mean(t.value, env.types)}", "TypeNotFound")
        return False

    def add_subtype(sub: A.Name, sup: A.Name) -> None:
        for t in (sub, sup):
            if t.value in LITERAL_TYPES:
                err(
                    t.pos, f"built-in type {t} cannot be a subtype or supertype", "SubOrSuperLiteralTypeError"
                )
                return
        if known_type(sub) and known_type(sup):
            env.supertypes.setdefault(sub.value, set()).add(sup.value)

    def signature(
        name: A.Name, args: tuple[A.Arg, ...], output: A.Arg | None, kind: str, symmetric: bool = False
    ) -> Signature:
        for a in args:
            known_type(a.type)
        if output is not None:
            if output.type.value in LITERAL_TYPES:
                err(
                    output.type.pos,
                    f"{kind} {name} cannot output built-in type {output.type}",
                    "OutputLiteralTypeError",
                )
            else:
                known_type(output.type)
        return Signature(
            name.value,
            tuple(a.type.value for a in args),
            output.type.value if output else None,
            kind,
            symmetric,
            name.pos,
        )

    tables = {
        A.PredicateDecl: env.predicates,
        A.FunctionDecl: env.functions,
        A.ConstructorDecl: env.constructors,
    }
    for stmt in prog.statements:
        if isinstance(stmt, A.TypeDecl):
            for sup in stmt.supertypes:
                add_subtype(stmt.name, sup)
        elif isinstance(stmt, A.SubtypeDecl):
            add_subtype(stmt.sub, stmt.sup)
        else:
            table = tables[type(stmt)]
            if stmt.name.value in table:
                err(stmt.name.pos, f"{stmt.name} is already declared", "DuplicateName")
            if isinstance(stmt, A.PredicateDecl):
                table[stmt.name.value] = signature(stmt.name, stmt.args, None, "predicate", stmt.symmetric)
            else:
                kind = "function" if isinstance(stmt, A.FunctionDecl) else "constructor"
                table[stmt.name.value] = signature(stmt.name, stmt.args, stmt.output, kind)

    env._ancestors.clear()  # subtype edges were still being added while checking
    for t in env.types:
        if t in env.ancestors(t):
            err(env.types[t], f"cyclic subtyping involving {t}", "CyclicSubtypes")
            break

    for stmt in prog.statements:
        if isinstance(stmt, A.PredicateDecl) and stmt.symmetric:
            if len(stmt.args) != 2:
                err(
                    stmt.name.pos,
                    f"symmetric predicate {stmt.name} must take exactly 2 arguments",
                    "SymmetricArgLengthMismatch",
                )
            else:
                t1, t2 = (a.type.value for a in stmt.args)
                if not (env.is_subtype(t1, t2) and env.is_subtype(t2, t1)):
                    err(
                        stmt.name.pos,
                        f"symmetric predicate {stmt.name} needs two arguments of one type",
                        "SymmetricTypeMismatch",
                    )

    raise_all(errors)
    return env
