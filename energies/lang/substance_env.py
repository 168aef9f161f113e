"""Substance checker: a `SubstanceProg` checked against a `DomainEnv` becomes a `SubstanceEnv`.

    check_substance(prog: SubstanceProg, domain: DomainEnv, text: str = "") -> SubstanceEnv

`SubstanceEnv` (what Style matching and evaluation consume):
    objects:    dict[str, str]           object name -> declared type, in declaration order
    statements: tuple[ObjectDecl | Binding | PredicateFact, ...]
                the "compiled" program in Penrose's order: indexed statements expanded,
                `T x := f(a)` split into a declaration and a binding, labels removed
    labels:     dict[str, Label]         every object; `label_type` "NoLabel" when unlabeled
    literals:   tuple[Literal, ...]      distinct string/number literals used as arguments
A substance value (`SubValue`) is either an object name (`str`) or a `Literal`;
`unique_name(value)` gives Penrose's name for it (`A`, `{n3}`, `{shello}`).

Errors (raised together, each with line/column): unknown type / predicate / function
(`TypeNotFound`), unknown object (`VarNotFound`), duplicate object (`DuplicateName`),
wrong arity (`ArgLengthMismatch`), wrong argument or binding type, subtype aware
(`TypeMismatch`), declaring a `String`/`Number` object (`DeclLiteralError`), and
index-set errors from `index_sets`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from energies.lang import ast as A
from energies.lang.domain_env import LITERAL_TYPES, DomainEnv, Signature
from energies.lang.errors import DiagramError, did_you_mean, raise_all
from energies.lang.index_sets import expand
from energies.lang.parse import substance_keywords
from energies.limits import MAX_SUBSTANCE_STATEMENTS


@dataclass(frozen=True)
class Literal:
    value: str | float

    @property
    def type(self) -> str:
        return "String" if isinstance(self.value, str) else "Number"

    @property
    def unique_name(self) -> str:
        """Penrose's name for a literal object: `{s<text>}` or `{n<number as JS prints it>}`."""
        if isinstance(self.value, str):
            return "{s" + self.value + "}"
        v = self.value
        shown = str(int(v)) if v.is_integer() and abs(v) < 1e21 else repr(v)
        return "{n" + shown + "}"


def unique_name(value: str | Literal) -> str:
    """The name Penrose uses for a Substance value in Style paths (`` `A`.icon ``, `` `{n3}`.sh ``)."""
    return value if isinstance(value, str) else value.unique_name


SubValue = str | Literal  # an object name or a literal


@dataclass(frozen=True)
class ObjectDecl:
    name: str
    type: str
    pos: A.Pos = field(default=A.NOPOS, compare=False)


@dataclass(frozen=True)
class Binding:
    """`var := func(args)`; `kind` is "function" or "constructor"."""

    var: str
    func: str
    kind: str
    args: tuple[SubValue, ...]
    pos: A.Pos = field(default=A.NOPOS, compare=False)


@dataclass(frozen=True)
class PredicateFact:
    name: str
    args: tuple[SubValue, ...]
    pos: A.Pos = field(default=A.NOPOS, compare=False)


@dataclass(frozen=True)
class Label:
    text: str
    label_type: str  # "MathLabel" | "TextLabel" | "NoLabel"


@dataclass
class SubstanceEnv:
    objects: dict[str, str]
    statements: tuple[ObjectDecl | Binding | PredicateFact, ...]
    labels: dict[str, Label]
    literals: tuple[Literal, ...]

    @property
    def predicates(self) -> list[PredicateFact]:
        return [s for s in self.statements if isinstance(s, PredicateFact)]

    @property
    def bindings(self) -> dict[str, Binding]:
        return {s.var: s for s in self.statements if isinstance(s, Binding)}


def _literal(arg: A.NumberLit | A.StringLit) -> Literal:
    return Literal(arg.value)


class _Checker:
    def __init__(self, domain: DomainEnv, text: str) -> None:
        self.domain = domain
        self.text = text
        self.objects: dict[str, str] = {}
        self.statements: list[ObjectDecl | Binding | PredicateFact] = []
        self.literals: dict[Literal, None] = {}
        self.label_stmts: list[A.LabelDecl | A.AutoLabel | A.NoLabel] = []
        self.errors: list[DiagramError] = []

    def err(self, pos: A.Pos, message: str, kind: str) -> None:
        self.errors.append(DiagramError.at("substance", self.text, pos.line, pos.column, message, kind))

    # ---- names and values ----
    def type_of(self, arg: A.SubArg) -> str | None:
        if isinstance(arg, A.Name):
            t = self.objects.get(arg.value)
            if t is None:
                self.err(
                    arg.pos, f"unknown object {arg}{did_you_mean(arg.value, self.objects)}", "VarNotFound"
                )
            return t
        self.literals.setdefault(_literal(arg), None)
        return "String" if isinstance(arg, A.StringLit) else "Number"

    def value_of(self, arg: A.SubArg) -> SubValue:
        return arg.value if isinstance(arg, A.Name) else _literal(arg)

    def check_args(self, sig: Signature, name: A.Name, args: tuple[A.SubArg, ...], pos: A.Pos) -> bool:
        if len(args) != len(sig.arg_types):
            self.err(
                pos,
                f"{sig.kind} {name} takes {len(sig.arg_types)} argument(s) but got {len(args)}",
                "ArgLengthMismatch",
            )
            return False
        ok = True
        for i, (arg, expected) in enumerate(zip(args, sig.arg_types, strict=True)):
            given = self.type_of(arg)
            if given is None:
                ok = False
            elif not self.domain.is_subtype(given, expected):
                shown = arg.value if isinstance(arg, A.Name) else repr(arg.value)
                self.err(
                    getattr(arg, "pos", pos),
                    f"argument {i + 1} of {name} ({shown}) has type {given}, expected {expected}",
                    "TypeMismatch",
                )
                ok = False
        return ok

    # ---- statements ----
    def declare(self, type_name: A.Name, names: tuple[A.Name, ...], pos: A.Pos) -> None:
        if type_name.value in LITERAL_TYPES:
            self.err(
                type_name.pos, f"cannot declare objects of built-in type {type_name}", "DeclLiteralError"
            )
            return
        if type_name.value not in self.domain.types:
            known = [*self.domain.types, *substance_keywords()]  # `Autolabel All` parses as a declaration
            self.err(
                type_name.pos,
                f"unknown type {type_name}{did_you_mean(type_name.value, known)}",
                "TypeNotFound",
            )
            return
        for n in names:
            if n.value in self.objects:
                self.err(n.pos, f"{n} is already declared", "DuplicateName")
                continue
            self.objects[n.value] = type_name.value
            self.statements.append(ObjectDecl(n.value, type_name.value, n.pos))

    def bind(self, var: A.Name, expr: A.SubExpr, pos: A.Pos) -> None:
        var_type = self.type_of(var)
        if isinstance(expr, A.Func):
            sig = self.domain.callable(expr.name.value)
            if sig is None:
                self.err(expr.name.pos, self.domain.unknown_callable(expr.name), "TypeNotFound")
                return
            if not self.check_args(sig, expr.name, expr.args, expr.pos):
                return
            out_type: str | None = sig.output
            binding = Binding(var.value, sig.name, sig.kind, tuple(self.value_of(a) for a in expr.args), pos)
        else:
            out_type = self.type_of(expr)
            binding = Binding(var.value, "", "value", (self.value_of(expr),), pos)
        if var_type is None or out_type is None:
            return
        if not self.domain.is_subtype(out_type, var_type):
            self.err(
                pos, f"cannot bind {var} of type {var_type} to a value of type {out_type}", "TypeMismatch"
            )
            return
        self.statements.append(binding)

    def statement(self, s: A.SubStmt) -> None:
        if isinstance(s, A.Decl):
            self.declare(s.type, s.names, s.pos)
        elif isinstance(s, A.DeclBind):
            before = len(self.errors)
            self.declare(s.type, (s.var,), s.pos)
            if len(self.errors) == before:
                self.bind(s.var, s.expr, s.pos)
        elif isinstance(s, A.Bind):
            self.bind(s.var, s.expr, s.pos)
        elif isinstance(s, A.ApplyPredicate):
            sig = self.domain.predicates.get(s.name.value)
            if sig is None:
                self.err(
                    s.name.pos,
                    f"unknown predicate {s.name}{did_you_mean(s.name.value, self.domain.predicates)}",
                    "TypeNotFound",
                )
            elif self.check_args(sig, s.name, s.args, s.pos):
                self.statements.append(
                    PredicateFact(s.name.value, tuple(self.value_of(a) for a in s.args), s.pos)
                )
        else:
            names = (s.var,) if isinstance(s, A.LabelDecl) else (s.names or ())
            if all([self.type_of(n) is not None for n in names]):
                self.label_stmts.append(s)

    def labels(self) -> dict[str, Label]:
        # Penrose processes labels after checking: `AutoLabel All` relabels every object.
        labels = {n: Label("", "NoLabel") for n in self.objects}
        for s in self.label_stmts:
            if isinstance(s, A.LabelDecl):
                labels[s.var.value] = Label(s.text, s.label_type)
            elif isinstance(s, A.AutoLabel):
                chosen = list(self.objects) if s.names is None else [n.value for n in s.names]
                if s.names is None:
                    labels = {}
                labels.update({n: Label(n, "MathLabel") for n in chosen})
            else:
                labels.update({n.value: Label("", "NoLabel") for n in s.names})
        return labels


def check_substance(prog: A.SubstanceProg, domain: DomainEnv, text: str = "") -> SubstanceEnv:
    checker = _Checker(domain, text)
    for stmt in prog.statements:
        if isinstance(stmt, A.StmtSet):
            if not isinstance(stmt.stmt, A.SubStmt):
                checker.err(stmt.pos, "this statement cannot be indexed", "UnsupportedIndexingError")
                continue
            try:
                expanded = expand(stmt, text, MAX_SUBSTANCE_STATEMENTS - len(checker.statements))
            except DiagramError as e:
                checker.errors.append(e)
                continue
            for s in expanded:
                checker.statement(s)
        else:
            checker.statement(stmt)
    raise_all(checker.errors)
    return SubstanceEnv(checker.objects, tuple(checker.statements), checker.labels(), tuple(checker.literals))
