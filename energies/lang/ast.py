"""AST of the Domain and Substance languages (Style's AST lives in `style_ast`).

All nodes are frozen dataclasses.  Every node carries `pos: Pos` (1-based line/column of
its first token); positions are excluded from equality so two parses of the same program
with different layout compare equal.  Identifiers that errors may point at are `Name`s.

Domain
    DomainProg(statements: tuple[DomainStmt, ...])
    DomainStmt = TypeDecl(name, supertypes) | SubtypeDecl(sub, sup)
               | PredicateDecl(name, args, symmetric) | FunctionDecl(name, args, output)
               | ConstructorDecl(name, args, output)
    Arg(type: Name, var: Name | None)

Substance
    SubstanceProg(statements: tuple[SubStmt | StmtSet, ...])
    SubStmt = Decl(type, names) | DeclBind(type, var, expr, let) | Bind(var, expr)
            | ApplyPredicate(name, args) | LabelDecl(var, text, label_type)
            | AutoLabel(names | None for `All`) | NoLabel(names)
    SubArg = Name | NumberLit | StringLit;  SubExpr = Func(name, args) | SubArg
    StmtSet(stmt, iset: IndexSet(ranges: tuple[RangeAssign], condition: BoolExpr | None))
    BoolExpr = BoolConst | BoolBin(op "&&"/"||") | BoolNot | Compare(op, NumExpr, NumExpr)
    NumExpr = NumberLit | Name | NumBin(op + - * / % ^) | NumNeg
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal


@dataclass(frozen=True)
class Pos:
    line: int = 0
    column: int = 0


NOPOS = Pos()


def _pos() -> Pos:
    return field(default=NOPOS, compare=False, repr=False)


@dataclass(frozen=True)
class Name:
    value: str
    pos: Pos = _pos()

    def __str__(self) -> str:
        return self.value


# ---- Domain -------------------------------------------------------------------------


@dataclass(frozen=True)
class Arg:
    type: Name
    var: Name | None = None
    pos: Pos = _pos()


@dataclass(frozen=True)
class TypeDecl:
    name: Name
    supertypes: tuple[Name, ...] = ()
    pos: Pos = _pos()


@dataclass(frozen=True)
class SubtypeDecl:
    sub: Name
    sup: Name
    pos: Pos = _pos()


@dataclass(frozen=True)
class PredicateDecl:
    name: Name
    args: tuple[Arg, ...]
    symmetric: bool = False
    pos: Pos = _pos()


@dataclass(frozen=True)
class FunctionDecl:
    name: Name
    args: tuple[Arg, ...]
    output: Arg
    pos: Pos = _pos()


@dataclass(frozen=True)
class ConstructorDecl:
    name: Name
    args: tuple[Arg, ...]
    output: Arg
    pos: Pos = _pos()


DomainStmt = TypeDecl | SubtypeDecl | PredicateDecl | FunctionDecl | ConstructorDecl


@dataclass(frozen=True)
class DomainProg:
    statements: tuple[DomainStmt, ...]
    pos: Pos = _pos()


# ---- Substance ----------------------------------------------------------------------


@dataclass(frozen=True)
class NumberLit:
    value: float
    pos: Pos = _pos()


@dataclass(frozen=True)
class StringLit:
    value: str
    pos: Pos = _pos()


SubArg = Name | NumberLit | StringLit


@dataclass(frozen=True)
class Func:
    """`f(a, b)`: a function or constructor application (the checker tells which)."""

    name: Name
    args: tuple[SubArg, ...]
    pos: Pos = _pos()


SubExpr = Func | SubArg


@dataclass(frozen=True)
class Decl:
    type: Name
    names: tuple[Name, ...]
    pos: Pos = _pos()


@dataclass(frozen=True)
class DeclBind:
    """`T x := f(a)`; `Let x := f(a)` has `let=True` and `type` = the callee's name."""

    type: Name
    var: Name
    expr: SubExpr
    let: bool = False
    pos: Pos = _pos()


@dataclass(frozen=True)
class Bind:
    var: Name
    expr: SubExpr
    pos: Pos = _pos()


@dataclass(frozen=True)
class ApplyPredicate:
    name: Name
    args: tuple[SubArg, ...]
    pos: Pos = _pos()


LabelType = Literal["MathLabel", "TextLabel"]


@dataclass(frozen=True)
class LabelDecl:
    var: Name
    text: str
    label_type: LabelType
    pos: Pos = _pos()


@dataclass(frozen=True)
class AutoLabel:
    names: tuple[Name, ...] | None  # None means `AutoLabel All`
    pos: Pos = _pos()


@dataclass(frozen=True)
class NoLabel:
    names: tuple[Name, ...]
    pos: Pos = _pos()


SubStmt = Decl | DeclBind | Bind | ApplyPredicate | LabelDecl | AutoLabel | NoLabel


@dataclass(frozen=True)
class NumBin:
    op: str
    left: NumExpr
    right: NumExpr
    pos: Pos = _pos()


@dataclass(frozen=True)
class NumNeg:
    arg: NumExpr
    pos: Pos = _pos()


NumExpr = NumberLit | Name | NumBin | NumNeg


@dataclass(frozen=True)
class BoolConst:
    value: bool
    pos: Pos = _pos()


@dataclass(frozen=True)
class BoolBin:
    op: str  # "&&" | "||"
    left: BoolExpr
    right: BoolExpr
    pos: Pos = _pos()


@dataclass(frozen=True)
class BoolNot:
    arg: BoolExpr
    pos: Pos = _pos()


@dataclass(frozen=True)
class Compare:
    op: str  # < > <= >= == !=
    left: NumExpr
    right: NumExpr
    pos: Pos = _pos()


BoolExpr = BoolConst | BoolBin | BoolNot | Compare


@dataclass(frozen=True)
class RangeAssign:
    var: Name
    low: NumberLit
    high: NumberLit
    pos: Pos = _pos()


@dataclass(frozen=True)
class IndexSet:
    ranges: tuple[RangeAssign, ...]
    condition: BoolExpr | None = None
    pos: Pos = _pos()


@dataclass(frozen=True)
class StmtSet:
    stmt: SubStmt
    iset: IndexSet
    pos: Pos = _pos()


@dataclass(frozen=True)
class SubstanceProg:
    statements: tuple[SubStmt | StmtSet, ...]
    pos: Pos = _pos()
