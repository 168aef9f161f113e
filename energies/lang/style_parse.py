"""lark parse tree of `style.lark` -> `style_ast` nodes (used by `parse.parse_style`)."""

from __future__ import annotations

import builtins
from typing import Any, Literal

from lark import Token

from energies.lang import style_ast as S
from energies.lang.ast import Name, NumberLit, StringLit
from energies.lang.parse_util import UserError, name_of, pos_of, present


def _stage_suffix(children: list[Any]) -> tuple[tuple[Name, ...], bool]:
    """Penrose's convention: no annotation = every stage = (stages=(), exclude=True)."""
    mode = next((c for c in children if isinstance(c, Token) and c.type in ("IN", "EXCEPT")), None)
    stages = next((c for c in children if isinstance(c, tuple)), ())
    if mode is None:
        return (), True
    return stages, mode.type == "EXCEPT"


def _binop(op: str) -> Any:
    def build(self: Any, meta: Any, children: list[Any]) -> S.BinOp:
        return S.BinOp(op, children[0], children[1], pos_of(meta))

    return build


def _unique_clause(meta: Any, clauses: list[tuple[str, Any]], kind: str) -> Any:
    found = [c for k, c in clauses if k == kind]
    if len(found) > 1:
        raise UserError(pos_of(meta), f"more than one `{kind}` clause in this header")
    return found[0] if found else ()


class StyleBuilder:
    # ---- program and headers ----------------------------------------------------------
    def start(self, meta: Any, children: list[Any]) -> S.StyleProg:
        return S.StyleProg(tuple(children), pos_of(meta))

    def header_block(self, meta: Any, children: list[Any]) -> S.HeaderBlock:
        return S.HeaderBlock(children[0], children[1], pos_of(meta))

    def layout_stages(self, meta: Any, children: list[Any]) -> S.LayoutStages:
        if str(children[0]) != "layout":
            raise UserError(
                pos_of(children[0]), f"unexpected `{children[0]} =` at top level (only `layout = [...]`)"
            )
        return S.LayoutStages(children[1], pos_of(meta))

    def namespace(self, meta: Any, children: list[Token]) -> S.Namespace:
        return S.Namespace(name_of(children[0]), pos_of(meta))

    def selector(self, meta: Any, children: list[Any]) -> S.Selector:
        repeatable = isinstance(children[0], Token) and children[0].type == "REPEATABLE"
        rest = children[1:] if repeatable else children
        head, clauses = rest[0], rest[1:]
        return S.Selector(
            repeatable,
            head,
            _unique_clause(meta, clauses, "with"),
            _unique_clause(meta, clauses, "where"),
            pos_of(meta),
        )

    def collector(self, meta: Any, children: list[Any]) -> S.Collector:
        repeatable = isinstance(children[0], Token) and children[0].type == "REPEATABLE"
        rest = children[1:] if repeatable else children
        head, into, clauses = rest[0], rest[1], rest[2:]
        return S.Collector(
            repeatable,
            head,
            into,
            _unique_clause(meta, clauses, "where"),
            _unique_clause(meta, clauses, "with"),
            _unique_clause(meta, clauses, "foreach"),
            pos_of(meta),
        )

    def where_clause(self, meta: Any, children: list[Any]) -> tuple[str, Any]:
        return ("where", tuple(children))

    def with_clause(self, meta: Any, children: list[Any]) -> tuple[str, Any]:
        return ("with", children[0])

    def foreach_clause(self, meta: Any, children: list[Any]) -> tuple[str, Any]:
        return ("foreach", children[0])

    def decl_patterns(self, meta: Any, children: list[Any]) -> tuple[S.DeclPattern, ...]:
        return tuple(d for group in children for d in group)

    def decl_list(self, meta: Any, children: list[Any]) -> list[S.DeclPattern]:
        type_name = name_of(children[0])
        return [S.DeclPattern(type_name, v, v.pos) for v in children[1:]]

    def decl_pattern(self, meta: Any, children: list[Any]) -> S.DeclPattern:
        return S.DeclPattern(name_of(children[0]), children[1], pos_of(meta))

    def sty_var(self, meta: Any, children: list[Token]) -> S.BVar:
        return S.BVar(str(children[0]), False, pos_of(children[0]))

    def sub_var(self, meta: Any, children: list[Token]) -> S.BVar:
        return S.BVar(str(children[1]), True, pos_of(meta))

    def rel_bind(self, meta: Any, children: list[Any]) -> S.RelBind:
        return S.RelBind(children[0], children[1], pos_of(meta))

    def rel_pred(self, meta: Any, children: list[Any]) -> S.RelPred:
        name, *rest = children
        alias = None
        if rest and isinstance(rest[-1], Token):
            alias = name_of(rest.pop())
        return S.RelPred(name_of(name), tuple(present(rest)), alias, pos_of(meta))

    def rel_field(self, meta: Any, children: list[Any]) -> S.RelField:
        var, *rest = children
        descriptor: Literal["MathLabel", "TextLabel"] | None = None
        if len(rest) == 2:
            descriptor = "MathLabel" if rest[0].type == "MATH" else "TextLabel"
        return S.RelField(var, name_of(rest[-1]), descriptor, pos_of(meta))

    def sel_func(self, meta: Any, children: list[Any]) -> S.SelFunc:
        return S.SelFunc(name_of(children[0]), tuple(present(children[1:])), pos_of(meta))

    def sel_number(self, meta: Any, children: list[Token]) -> NumberLit:
        return NumberLit(float(children[0]), pos_of(meta))

    def sel_string(self, meta: Any, children: list[Token]) -> StringLit:
        return StringLit(str(children[0])[1:-1], pos_of(meta))

    # ---- blocks and statements --------------------------------------------------------
    def block(self, meta: Any, children: list[Any]) -> S.Block:
        return S.Block(tuple(children), pos_of(meta))

    def typed_assign(self, meta: Any, children: list[Any]) -> S.PathAssign:
        return S.PathAssign(children[0], children[1], children[2], pos_of(meta))

    def path_assign(self, meta: Any, children: list[Any]) -> S.PathAssign:
        return S.PathAssign(None, children[0], children[1], pos_of(meta))

    def override(self, meta: Any, children: list[Any]) -> S.Override:
        return S.Override(children[0], children[1], pos_of(meta))

    def delete(self, meta: Any, children: list[Any]) -> S.Delete:
        return S.Delete(children[0], pos_of(meta))

    def anon(self, meta: Any, children: list[Any]) -> S.AnonAssign:
        return S.AnonAssign(children[0], pos_of(meta))

    def sty_type(self, meta: Any, children: list[Token]) -> S.StyType:
        return S.StyType(name_of(children[0]), len(children) > 1, pos_of(meta))

    def path(self, meta: Any, children: list[Any]) -> S.Path:
        var, *rest = children
        members = tuple(name_of(c) for c in rest if isinstance(c, Token))
        indices = tuple(c for c in rest if not isinstance(c, Token))
        return S.Path(var, members, indices, pos_of(meta))

    # ---- expressions ------------------------------------------------------------------
    plus = _binop("BPlus")
    minus = _binop("BMinus")
    multiply = _binop("Multiply")
    divide = _binop("Divide")
    ew_multiply = _binop("EWMultiply")
    ew_divide = _binop("EWDivide")
    exp = _binop("Exp")

    def then(self, meta: Any, children: list[Any]) -> S.BinOp:
        # `A then B` applies A first: the matrix product B * A
        return S.BinOp("Multiply", children[1], children[0], pos_of(meta))

    def neg(self, meta: Any, children: list[Any]) -> S.Fix | S.UOp:
        arg = children[0]
        if isinstance(arg, S.Fix):
            return S.Fix(-arg.value, pos_of(meta))
        return S.UOp("UMinus", arg, pos_of(meta))

    def transpose(self, meta: Any, children: list[Any]) -> S.UOp:
        return S.UOp("UTranspose", children[0], pos_of(meta))

    def bool_lit(self, meta: Any, children: list[Token]) -> S.BoolLit:
        return S.BoolLit(children[0].type == "TRUE", pos_of(meta))

    def color_lit(self, meta: Any, children: list[Token]) -> S.ColorLit:
        digits = str(children[0])[1:]
        if len(digits) not in (3, 4, 6, 8):
            raise UserError(pos_of(meta), f"color literal #{digits} must have 3, 4, 6 or 8 hex digits")
        return S.ColorLit(digits, pos_of(meta))

    def string_lit(self, meta: Any, children: list[Token]) -> S.StrLit:
        return S.StrLit(str(children[0])[1:-1], pos_of(meta))

    def number(self, meta: Any, children: list[Token]) -> S.Fix:
        return S.Fix(float(children[0]), pos_of(meta))

    def signed_number(self, meta: Any, children: list[Token]) -> float:
        return float(children[0])

    def negative_number(self, meta: Any, children: list[Token]) -> float:
        return -float(children[0])

    def vary(self, meta: Any, children: list[Any]) -> S.Vary:
        init = next((c for c in children if isinstance(c, float)), None)
        stages, exclude = _stage_suffix(children)
        return S.Vary(init, stages, exclude, pos_of(meta))

    def stage_list(self, meta: Any, children: list[Token]) -> tuple[Name, ...]:
        return tuple(name_of(c) for c in children)

    def comp_app(self, meta: Any, children: list[Any]) -> S.CompApp:
        return S.CompApp(name_of(children[0]), tuple(present(children[1:])), pos_of(meta))

    def function_call(self, meta: Any, children: list[Any]) -> S.FunctionCall:
        return S.FunctionCall(name_of(children[0]), tuple(present(children[1:])), pos_of(meta))

    def inline_comparison(self, meta: Any, children: list[Any]) -> S.InlineComparison:
        return S.InlineComparison(str(children[1]), children[0], children[2], pos_of(meta))

    def listof(self, meta: Any, children: list[Any]) -> S.CollectionAccess:
        return S.CollectionAccess(children[1], name_of(children[0]), pos_of(meta))

    def unary_sty_var(self, meta: Any, children: list[Any]) -> S.UnaryStyVarExpr:
        return S.UnaryStyVarExpr(str(children[0]), children[1], pos_of(meta))

    def vector(self, meta: Any, children: list[Any]) -> S.Vector:
        return S.Vector(tuple(present(children)), pos_of(meta))

    def gpi_decl(self, meta: Any, children: list[Any]) -> S.GPIDecl:
        return S.GPIDecl(name_of(children[0]), tuple(children[1:]), pos_of(meta))

    def property_decl(self, meta: Any, children: list[Any]) -> S.PropertyDecl:
        return S.PropertyDecl(name_of(children[0]), children[1], pos_of(meta))

    def layering(self, meta: Any, children: list[Any]) -> S.Layering:
        rest = children[1:] if isinstance(children[0], Token) else children
        left, op, *right = rest
        return S.Layering(left, str(op), tuple(right), pos_of(meta))

    def objective(self, meta: Any, children: list[Any]) -> S.ObjFn:
        stages, exclude = _stage_suffix(children[1:])
        return S.ObjFn(children[0], stages, exclude, pos_of(meta))

    def constraint(self, meta: Any, children: list[Any]) -> S.ConstrFn:
        stages, exclude = _stage_suffix(children[1:])
        return S.ConstrFn(children[0], stages, exclude, pos_of(meta))

    # Named after their grammar rules, these two shadow the builtins within the class: they come last,
    # and their own annotations name the builtins through `builtins`.
    def list(self, meta: Any, children: builtins.list[Any]) -> S.ListExpr:
        return S.ListExpr(builtins.tuple(present(children)), pos_of(meta))

    def tuple(self, meta: Any, children: builtins.list[Any]) -> S.TupleExpr:
        return S.TupleExpr((children[0], children[1]), pos_of(meta))
