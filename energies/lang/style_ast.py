"""AST of the Style language (consumed by the Style evaluator).

Frozen dataclasses with `pos: Pos` (excluded from equality), names as `Name`.  Shapes:

    StyleProg(items: tuple[HeaderBlock | LayoutStages, ...])
    LayoutStages(stages: tuple[Name, ...])                         -- `layout = [a, b]`
    HeaderBlock(header: Selector | Collector | Namespace, block: Block)
    Namespace(name)                                                -- `canvas {`, `const {`
    Selector(repeatable, head: tuple[DeclPattern], with_: tuple[DeclPattern], where: tuple[Relation])
    Collector(repeatable, head: DeclPattern, into: BVar, where, with_, foreach: tuple[DeclPattern])
    DeclPattern(type: Name, var: BVar);  BVar(name, backticked)   -- `x` or `` `X` ``
    Relation = RelBind(var: BVar, expr: SelFunc | SelArg)          -- `y := f(x)`
             | RelPred(name, args: tuple[SelArg], alias: Name | None)  -- `P(x, y) as p`
             | RelField(var, field: Name, descriptor: None | "MathLabel" | "TextLabel")
    SelArg = BVar | NumberLit | StringLit

    Block(statements: tuple[Stmt])
    Stmt = PathAssign(type: StyType | None, path, value) | Override(path, value) | Delete(path)
         | AnonAssign(expr: Layering | ObjFn | ConstrFn | GPIDecl)
    StyType(name, is_list);  Path(var: BVar, members: tuple[Name], indices: tuple[Expr])
    Expr = Fix(value) | Vary(init, stages, exclude) | BoolLit | StrLit | ColorLit(hex digits)
         | Path | BinOp(op, left, right) | UOp(op, arg) | ListExpr | Vector | TupleExpr
         | CompApp(name, args) | CollectionAccess(path, field) | UnaryStyVarExpr(op, path)
         | GPIDecl(shape, properties: tuple[PropertyDecl(name, value)])
         | Layering(left: Path, op "above"/"below", right: tuple[Expr])
         | ObjFn(body, stages, exclude) | ConstrFn(body, stages, exclude)
    ObjFn/ConstrFn body = FunctionCall(name, args) | InlineComparison(op "=="/"<"/">", left, right)

BinOp.op uses Penrose's names: BPlus BMinus Multiply Divide Exp EWMultiply EWDivide
(`a then b` parses as Multiply(b, a)); UOp.op is UMinus or UTranspose.  A minus sign in
front of a number literal is folded into `Fix`.  Stage annotations follow Penrose:
no annotation is `stages=(), exclude=True` (i.e. every stage).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from energies.lang.ast import NOPOS, Name, NumberLit, Pos, StringLit


def _pos() -> Pos:
    return field(default=NOPOS, compare=False, repr=False)


# ---- selectors ----------------------------------------------------------------------


@dataclass(frozen=True)
class BVar:
    """A selector variable `x`, or a Substance name in backticks `` `A` ``."""

    name: str
    backticked: bool = False
    pos: Pos = _pos()

    @property
    def key(self) -> str:
        """The key of this variable in a match substitution (Penrose's convention)."""
        return f"`{self.name}`" if self.backticked else self.name


SelArg = BVar | NumberLit | StringLit


@dataclass(frozen=True)
class DeclPattern:
    type: Name
    var: BVar
    pos: Pos = _pos()


@dataclass(frozen=True)
class SelFunc:
    name: Name
    args: tuple[SelArg, ...]
    pos: Pos = _pos()


@dataclass(frozen=True)
class RelBind:
    var: BVar
    expr: SelFunc | SelArg
    pos: Pos = _pos()


@dataclass(frozen=True)
class RelPred:
    name: Name
    args: tuple[SelArg, ...]
    alias: Name | None = None
    pos: Pos = _pos()


@dataclass(frozen=True)
class RelField:
    var: BVar
    field: Name
    descriptor: Literal["MathLabel", "TextLabel"] | None = None
    pos: Pos = _pos()


Relation = RelBind | RelPred | RelField


@dataclass(frozen=True)
class Selector:
    repeatable: bool
    head: tuple[DeclPattern, ...]
    with_: tuple[DeclPattern, ...] = ()
    where: tuple[Relation, ...] = ()
    pos: Pos = _pos()


@dataclass(frozen=True)
class Collector:
    repeatable: bool
    head: DeclPattern
    into: BVar
    where: tuple[Relation, ...] = ()
    with_: tuple[DeclPattern, ...] = ()
    foreach: tuple[DeclPattern, ...] = ()
    pos: Pos = _pos()


@dataclass(frozen=True)
class Namespace:
    name: Name
    pos: Pos = _pos()


Header = Selector | Collector | Namespace


# ---- expressions --------------------------------------------------------------------


@dataclass(frozen=True)
class Fix:
    value: float
    pos: Pos = _pos()


@dataclass(frozen=True)
class Vary:
    init: float | None = None
    stages: tuple[Name, ...] = ()
    exclude: bool = True
    pos: Pos = _pos()


@dataclass(frozen=True)
class BoolLit:
    value: bool
    pos: Pos = _pos()


@dataclass(frozen=True)
class StrLit:
    value: str
    pos: Pos = _pos()


@dataclass(frozen=True)
class ColorLit:
    hex: str  # digits without '#', 3/4/6/8 long
    pos: Pos = _pos()


@dataclass(frozen=True)
class Path:
    var: BVar
    members: tuple[Name, ...] = ()
    indices: tuple[Expr, ...] = ()
    pos: Pos = _pos()


@dataclass(frozen=True)
class BinOp:
    op: str
    left: Expr
    right: Expr
    pos: Pos = _pos()


@dataclass(frozen=True)
class UOp:
    op: str  # "UMinus" | "UTranspose"
    arg: Expr
    pos: Pos = _pos()


@dataclass(frozen=True)
class ListExpr:
    items: tuple[Expr, ...]
    pos: Pos = _pos()


@dataclass(frozen=True)
class Vector:
    items: tuple[Expr, ...]
    pos: Pos = _pos()


@dataclass(frozen=True)
class TupleExpr:
    items: tuple[Expr, Expr]
    pos: Pos = _pos()


@dataclass(frozen=True)
class CompApp:
    name: Name
    args: tuple[Expr, ...]
    pos: Pos = _pos()


@dataclass(frozen=True)
class CollectionAccess:
    """`listof field from coll`."""

    path: Path
    field: Name
    pos: Pos = _pos()


@dataclass(frozen=True)
class UnaryStyVarExpr:
    op: str  # "numberof" | "nameof"
    path: Path
    pos: Pos = _pos()


@dataclass(frozen=True)
class PropertyDecl:
    name: Name
    value: Expr
    pos: Pos = _pos()


@dataclass(frozen=True)
class GPIDecl:
    shape: Name
    properties: tuple[PropertyDecl, ...]
    pos: Pos = _pos()


@dataclass(frozen=True)
class Layering:
    left: Path
    op: str  # "above" | "below"
    right: tuple[Expr, ...]
    pos: Pos = _pos()


@dataclass(frozen=True)
class FunctionCall:
    name: Name
    args: tuple[Expr, ...]
    pos: Pos = _pos()


@dataclass(frozen=True)
class InlineComparison:
    op: str  # "==" | "<" | ">"
    left: Expr
    right: Expr
    pos: Pos = _pos()


@dataclass(frozen=True)
class ObjFn:
    body: FunctionCall | InlineComparison
    stages: tuple[Name, ...] = ()
    exclude: bool = True
    pos: Pos = _pos()


@dataclass(frozen=True)
class ConstrFn:
    body: FunctionCall | InlineComparison
    stages: tuple[Name, ...] = ()
    exclude: bool = True
    pos: Pos = _pos()


Expr = (
    Fix
    | Vary
    | BoolLit
    | StrLit
    | ColorLit
    | Path
    | BinOp
    | UOp
    | ListExpr
    | Vector
    | TupleExpr
    | CompApp
    | CollectionAccess
    | UnaryStyVarExpr
    | GPIDecl
    | Layering
    | ObjFn
    | ConstrFn
)


# ---- statements and program ---------------------------------------------------------


@dataclass(frozen=True)
class StyType:
    name: Name
    is_list: bool = False
    pos: Pos = _pos()


@dataclass(frozen=True)
class PathAssign:
    type: StyType | None
    path: Path
    value: Expr
    pos: Pos = _pos()


@dataclass(frozen=True)
class Override:
    path: Path
    value: Expr
    pos: Pos = _pos()


@dataclass(frozen=True)
class Delete:
    path: Path
    pos: Pos = _pos()


@dataclass(frozen=True)
class AnonAssign:
    expr: Layering | ObjFn | ConstrFn | GPIDecl
    pos: Pos = _pos()


Stmt = PathAssign | Override | Delete | AnonAssign


@dataclass(frozen=True)
class Block:
    statements: tuple[Stmt, ...]
    pos: Pos = _pos()


@dataclass(frozen=True)
class HeaderBlock:
    header: Header
    block: Block
    pos: Pos = _pos()


@dataclass(frozen=True)
class LayoutStages:
    stages: tuple[Name, ...]
    pos: Pos = _pos()


@dataclass(frozen=True)
class StyleProg:
    items: tuple[HeaderBlock | LayoutStages, ...]
    pos: Pos = _pos()

    @property
    def blocks(self) -> tuple[HeaderBlock, ...]:
        return tuple(i for i in self.items if isinstance(i, HeaderBlock))
