"""Static check of Style selector headers against the Domain (Penrose's `checkHeader`).

    check_header(header: Selector | Collector | Namespace, domain: DomainEnv, text: str = "")
        -> tuple[dict[str, str], list[DiagramError]]
    (selector variable, plain name -> its type; the errors found, empty when fine)

Errors carry the style line/column: unknown type / predicate / function (`TypeNotFound`),
a selector variable declared twice (`SelectorVarMultipleDecl`), an undeclared variable in
a relation (`VarNotFound`), wrong arity (`ArgLengthMismatch`), an argument whose selector
type is not a subtype of the declared one (`TypeMismatch`), a predicate alias that clashes
with a Domain name or a selector variable (`SelectorAliasNamingError`), and `has` on a
field other than `label` (`SelectorFieldNotSupported`).  As in Penrose, an undeclared
variable passed where the Domain expects `String`/`Number` is inferred to be a literal.
"""

from __future__ import annotations

from energies.lang import style_ast as S
from energies.lang.ast import Name, NumberLit, Pos, StringLit
from energies.lang.domain_env import LITERAL_TYPES, DomainEnv, Signature
from energies.lang.errors import DiagramError, did_you_mean


def header_decls(header: S.Selector | S.Collector) -> tuple[S.DeclPattern, ...]:
    """Declarations in Penrose's matching order (`getDecls`)."""
    if isinstance(header, S.Selector):
        return header.head + header.with_
    return header.with_ + (header.head,) + header.foreach


class _HeaderChecker:
    def __init__(self, domain: DomainEnv, text: str) -> None:
        self.domain = domain
        self.text = text
        self.types: dict[str, str] = {}
        self.errors: list[DiagramError] = []

    def err(self, pos: Pos, message: str, kind: str) -> None:
        self.errors.append(DiagramError.at("style", self.text, pos.line, pos.column, message, kind))

    def declare(self, d: S.DeclPattern) -> None:
        if d.type.value not in self.domain.types:
            self.err(
                d.type.pos,
                f"unknown type {d.type} in selector{did_you_mean(d.type.value, self.domain.types)}",
                "TypeNotFound",
            )
            return
        if d.var.name in self.types:
            self.err(
                d.var.pos, f"selector variable {d.var.name} is declared twice", "SelectorVarMultipleDecl"
            )
            return
        self.types[d.var.name] = d.type.value

    def arg_type(self, arg: S.SelArg, expected: str) -> str | None:
        if isinstance(arg, StringLit):
            return "String"
        if isinstance(arg, NumberLit):
            return "Number"
        t = self.types.get(arg.name)
        if t is None and expected in LITERAL_TYPES and not arg.backticked:
            self.types[arg.name] = expected  # Penrose infers undeclared literal variables
            return expected
        if t is None:
            self.err(arg.pos, f"selector variable {arg.name} is not declared", "VarNotFound")
        return t

    def check_args(self, sig: Signature, name: Name, args: tuple[S.SelArg, ...], pos: Pos) -> None:
        if len(args) != len(sig.arg_types):
            self.err(
                pos,
                f"{sig.kind} {name} takes {len(sig.arg_types)} argument(s) but got {len(args)}",
                "ArgLengthMismatch",
            )
            return
        for i, (arg, expected) in enumerate(zip(args, sig.arg_types, strict=True)):
            given = self.arg_type(arg, expected)
            if given is not None and not self.domain.is_subtype(given, expected):
                self.err(
                    getattr(arg, "pos", pos),
                    f"argument {i + 1} of {name} has type {given}, expected {expected}",
                    "TypeMismatch",
                )

    def relation(self, rel: S.Relation) -> None:
        if isinstance(rel, S.RelPred):
            if rel.alias is not None and (
                rel.alias.value in self.domain.keywords() or rel.alias.value in self.types
            ):
                self.err(
                    rel.alias.pos,
                    f"alias {rel.alias} clashes with a Domain name or selector variable",
                    "SelectorAliasNamingError",
                )
                return
            sig = self.domain.predicates.get(rel.name.value)
            if sig is None:
                self.err(
                    rel.name.pos,
                    f"unknown predicate {rel.name} in selector"
                    + did_you_mean(rel.name.value, self.domain.predicates),
                    "TypeNotFound",
                )
                return
            self.check_args(sig, rel.name, rel.args, rel.pos)
        elif isinstance(rel, S.RelField):
            if rel.field.value != "label":
                self.err(
                    rel.field.pos,
                    f"selectors can only test `has label`, not `has {rel.field}`",
                    "SelectorFieldNotSupported",
                )
            elif rel.var.name not in self.types:
                self.err(rel.var.pos, f"selector variable {rel.var.name} is not declared", "VarNotFound")
        else:
            var_type = self.types.get(rel.var.name)
            if var_type is None:
                self.err(rel.var.pos, f"selector variable {rel.var.name} is not declared", "VarNotFound")
            expr = rel.expr
            if isinstance(expr, S.SelFunc):
                sig = self.domain.callable(expr.name.value)
                if sig is None:
                    self.err(
                        expr.name.pos, self.domain.unknown_callable(expr.name, " in selector"), "TypeNotFound"
                    )
                    return
                self.check_args(sig, expr.name, expr.args, expr.pos)
                out_type = sig.output
            else:
                out_type = self.arg_type(expr, var_type or "")
            if var_type and out_type and not self.domain.is_subtype(out_type, var_type):
                self.err(
                    rel.pos,
                    f"{rel.var.name} has type {var_type} but is bound to a {out_type}",
                    "TypeMismatch",
                )

    def header(self, header: S.Selector | S.Collector) -> None:
        if isinstance(header, S.Selector):
            decls = header.head + header.with_
        else:
            decls = (header.head,) + header.with_ + header.foreach
        for d in decls:
            self.declare(d)
        for rel in header.where:
            self.relation(rel)


def check_header(
    header: S.Header, domain: DomainEnv, text: str = ""
) -> tuple[dict[str, str], list[DiagramError]]:
    """Selector variable types, plus the errors found (empty when the header is fine)."""
    if isinstance(header, S.Namespace):
        return {}, []
    checker = _HeaderChecker(domain, text)
    checker.header(header)
    return checker.types, checker.errors
