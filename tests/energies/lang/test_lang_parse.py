"""Crafted programs for every construct, compared with hand-written expected ASTs."""

from __future__ import annotations

import pytest

from energies.lang import ast as A
from energies.lang import style_ast as S
from energies.lang.parse import parse_domain, parse_style, parse_substance

N = A.Name


def V(name: str, backticked: bool = False) -> S.BVar:
    return S.BVar(name, backticked)


def P(var: str, *members: str, indices: tuple = ()) -> S.Path:
    return S.Path(V(var), tuple(N(m) for m in members), indices)


# ---- Domain --------------------------------------------------------------------------


def test_domain_statements():
    prog = parse_domain(
        """-- a comment
type Set
type Point <: Shape, Thing   /* block
comment */
Set <: Shape
predicate IsSubset(Set s1, Set s2)
symmetric predicate Intersect(Set, Set)
function Union(Set a, Set b) -> Set
constructor MkPoint(Number x, Number y) -> Point p
constructor Pair(Set a, Set b)
"""
    )
    assert prog.statements == (
        A.TypeDecl(N("Set")),
        A.TypeDecl(N("Point"), (N("Shape"), N("Thing"))),
        A.SubtypeDecl(N("Set"), N("Shape")),
        A.PredicateDecl(N("IsSubset"), (A.Arg(N("Set"), N("s1")), A.Arg(N("Set"), N("s2")))),
        A.PredicateDecl(N("Intersect"), (A.Arg(N("Set")), A.Arg(N("Set"))), symmetric=True),
        A.FunctionDecl(N("Union"), (A.Arg(N("Set"), N("a")), A.Arg(N("Set"), N("b"))), A.Arg(N("Set"))),
        A.ConstructorDecl(
            N("MkPoint"), (A.Arg(N("Number"), N("x")), A.Arg(N("Number"), N("y"))), A.Arg(N("Point"), N("p"))
        ),
        A.ConstructorDecl(N("Pair"), (A.Arg(N("Set"), N("a")), A.Arg(N("Set"), N("b"))), A.Arg(N("Pair"))),
    )


def test_domain_positions_are_one_based():
    prog = parse_domain("\n  type Set\n")
    decl = prog.statements[0]
    assert (decl.name.pos.line, decl.name.pos.column) == (2, 8)


# ---- Substance -----------------------------------------------------------------------


def test_substance_statements():
    prog = parse_substance(
        """Set A, B, C
IsSubset(A, B) -- comment
Point p := MkPoint(1.5, -2)
Let q := MkPoint(0, 3)
r := Union(A, B)
Label A $\\mathcal{A}$
Label B "plain text"
AutoLabel All
AutoLabel A, B
NoLabel C
Named(A, "hello")
"""
    )
    mk = A.Func(N("MkPoint"), (A.NumberLit(1.5), A.NumberLit(-2.0)))
    assert prog.statements == (
        A.Decl(N("Set"), (N("A"), N("B"), N("C"))),
        A.ApplyPredicate(N("IsSubset"), (N("A"), N("B"))),
        A.DeclBind(N("Point"), N("p"), mk),
        A.DeclBind(
            N("MkPoint"), N("q"), A.Func(N("MkPoint"), (A.NumberLit(0.0), A.NumberLit(3.0))), let=True
        ),
        A.Bind(N("r"), A.Func(N("Union"), (N("A"), N("B")))),
        A.LabelDecl(N("A"), "\\mathcal{A}", "MathLabel"),
        A.LabelDecl(N("B"), "plain text", "TextLabel"),
        A.AutoLabel(None),
        A.AutoLabel((N("A"), N("B"))),
        A.NoLabel((N("C"),)),
        A.ApplyPredicate(N("Named"), (N("A"), A.StringLit("hello"))),
    )


def test_substance_index_sets():
    prog = parse_substance(
        "Point p_i := Next(p_j) for i in [1, 5], j in [0, 5] where i == j + 1 && !(i > 4)\n"
    )
    (stmt,) = prog.statements
    assert stmt == A.StmtSet(
        A.DeclBind(N("Point"), N("p_i"), A.Func(N("Next"), (N("p_j"),))),
        A.IndexSet(
            (
                A.RangeAssign(N("i"), A.NumberLit(1.0), A.NumberLit(5.0)),
                A.RangeAssign(N("j"), A.NumberLit(0.0), A.NumberLit(5.0)),
            ),
            A.BoolBin(
                "&&",
                A.Compare("==", N("i"), A.NumBin("+", N("j"), A.NumberLit(1.0))),
                A.BoolNot(A.Compare(">", N("i"), A.NumberLit(4.0))),
            ),
        ),
    )


# ---- Style ---------------------------------------------------------------------------


def _only_block(text: str) -> S.HeaderBlock:
    (item,) = parse_style(text).items
    assert isinstance(item, S.HeaderBlock)
    return item


def test_style_selector_headers():
    block = _only_block(
        """forall repeatable Set A, B; Point p
where IsSubset(A, B) as r; p := MkPoint(x, "s"); A has math label; B has label; `C` has text label
with Set D {
}"""
    )
    assert block.header == S.Selector(
        repeatable=True,
        head=(
            S.DeclPattern(N("Set"), V("A")),
            S.DeclPattern(N("Set"), V("B")),
            S.DeclPattern(N("Point"), V("p")),
        ),
        with_=(S.DeclPattern(N("Set"), V("D")),),
        where=(
            S.RelPred(N("IsSubset"), (V("A"), V("B")), N("r")),
            S.RelBind(V("p"), S.SelFunc(N("MkPoint"), (V("x"), A.StringLit("s")))),
            S.RelField(V("A"), N("label"), "MathLabel"),
            S.RelField(V("B"), N("label"), None),
            S.RelField(V("C", True), N("label"), "TextLabel"),
        ),
    )
    assert block.block == S.Block(())


def test_style_collector_and_namespaces():
    prog = parse_style(
        """canvas { width = 800 }
const { r = 5 }
collect Point p into ps where In(p, s) foreach Set s {
  n = numberof ps
  xs = listof center from ps
  who = nameof s
}
layout = [first, second]"""
    )
    canvas, const, coll, layout = prog.items
    assert canvas.header == S.Namespace(N("canvas"))
    assert canvas.block.statements == (S.PathAssign(None, P("width"), S.Fix(800.0)),)
    assert const.header == S.Namespace(N("const"))
    assert coll.header == S.Collector(
        False,
        S.DeclPattern(N("Point"), V("p")),
        V("ps"),
        where=(S.RelPred(N("In"), (V("p"), V("s"))),),
        foreach=(S.DeclPattern(N("Set"), V("s")),),
    )
    assert coll.block.statements == (
        S.PathAssign(None, P("n"), S.UnaryStyVarExpr("numberof", P("ps"))),
        S.PathAssign(None, P("xs"), S.CollectionAccess(P("ps"), N("center"))),
        S.PathAssign(None, P("who"), S.UnaryStyVarExpr("nameof", P("s"))),
    )
    assert layout == S.LayoutStages((N("first"), N("second")))


def test_style_statements():
    block = _only_block(
        """forall Set x {
  shape x.icon = Circle {
    center: (?, ?[3])
    r = ? in [grow, shrink]
    fillColor: #ff000080,
    strokeColor: rgba(0.1, 0.2, 0.3, 1.0)
  }
  scalar[] x.list = [1, 2]
  override x.icon.r = 10
  delete x.icon
  ensure disjoint(x.icon, x.text) except [grow]
  encourage x.a < x.b in shrink
  ensure x.a == x.b
  layer x.text above x.icon, x.other
  x.text below x.icon
  x.m = { 1, 2 }
  x.flag = true
}"""
    )
    stmts = block.block.statements
    icon = P("x", "icon")
    assert stmts[0] == S.PathAssign(
        S.StyType(N("shape")),
        icon,
        S.GPIDecl(
            N("Circle"),
            (
                S.PropertyDecl(N("center"), S.Vector((S.Vary(), S.Vary(init=3.0)))),
                S.PropertyDecl(N("r"), S.Vary(None, (N("grow"), N("shrink")), exclude=False)),
                S.PropertyDecl(N("fillColor"), S.ColorLit("ff000080")),
                S.PropertyDecl(
                    N("strokeColor"),
                    S.CompApp(N("rgba"), (S.Fix(0.1), S.Fix(0.2), S.Fix(0.3), S.Fix(1.0))),
                ),
            ),
        ),
    )
    assert stmts[1] == S.PathAssign(
        S.StyType(N("scalar"), is_list=True), P("x", "list"), S.ListExpr((S.Fix(1.0), S.Fix(2.0)))
    )
    assert stmts[2] == S.Override(P("x", "icon", "r"), S.Fix(10.0))
    assert stmts[3] == S.Delete(icon)
    assert stmts[4] == S.AnonAssign(
        S.ConstrFn(S.FunctionCall(N("disjoint"), (icon, P("x", "text"))), (N("grow"),), exclude=True)
    )
    assert stmts[5] == S.AnonAssign(
        S.ObjFn(S.InlineComparison("<", P("x", "a"), P("x", "b")), (N("shrink"),), exclude=False)
    )
    assert stmts[6] == S.AnonAssign(S.ConstrFn(S.InlineComparison("==", P("x", "a"), P("x", "b"))))
    assert stmts[7] == S.AnonAssign(S.Layering(P("x", "text"), "above", (icon, P("x", "other"))))
    assert stmts[8] == S.AnonAssign(S.Layering(P("x", "text"), "below", (icon,)))
    assert stmts[9] == S.PathAssign(None, P("x", "m"), S.TupleExpr((S.Fix(1.0), S.Fix(2.0))))
    assert stmts[10] == S.PathAssign(None, P("x", "flag"), S.BoolLit(True))


def _expr(src: str) -> S.Expr:
    (stmt,) = _only_block("canvas {\n x = " + src + "\n}").block.statements
    return stmt.value


@pytest.mark.parametrize(
    ("src", "expected"),
    [
        ("1 + 2 * 3", S.BinOp("BPlus", S.Fix(1.0), S.BinOp("Multiply", S.Fix(2.0), S.Fix(3.0)))),
        ("(1 + 2) * 3", S.BinOp("Multiply", S.BinOp("BPlus", S.Fix(1.0), S.Fix(2.0)), S.Fix(3.0))),
        ("1 - 2 - 3", S.BinOp("BMinus", S.BinOp("BMinus", S.Fix(1.0), S.Fix(2.0)), S.Fix(3.0))),
        ("2 ^ 3 ^ 2", S.BinOp("Exp", S.Fix(2.0), S.BinOp("Exp", S.Fix(3.0), S.Fix(2.0)))),
        # Penrose: unary minus binds tighter than ^, so -a^2 is (-a)^2
        ("-a ^ 2", S.BinOp("Exp", S.UOp("UMinus", P("a")), S.Fix(2.0))),
        ("-2.5e1", S.Fix(-25.0)),
        ("a .* b ./ c", S.BinOp("EWDivide", S.BinOp("EWMultiply", P("a"), P("b")), P("c"))),
        ("A then B", S.BinOp("Multiply", P("B"), P("A"))),
        ("M'", S.UOp("UTranspose", P("M"))),
        ("v[0]", P("v", indices=(S.Fix(0.0),))),
        ("m.rows[1][2]", S.Path(V("m"), (N("rows"),), (S.Fix(1.0), S.Fix(2.0)))),
        ("`A`.icon", S.Path(V("A", True), (N("icon"),))),
        ('"a" + "b"', S.BinOp("BPlus", S.StrLit("a"), S.StrLit("b"))),
        ("#abc", S.ColorLit("abc")),
        ("false", S.BoolLit(False)),
        (
            "[[1, 0], [0, 1]]",
            S.ListExpr((S.ListExpr((S.Fix(1.0), S.Fix(0.0))), S.ListExpr((S.Fix(0.0), S.Fix(1.0))))),
        ),
        ("(1, 2, 3)", S.Vector((S.Fix(1.0), S.Fix(2.0), S.Fix(3.0)))),
        ("f()", S.CompApp(N("f"), ())),
        ("?[-4] except s", S.Vary(-4.0, (N("s"),), exclude=True)),
    ],
)
def test_style_expressions(src, expected):
    assert _expr(src) == expected


def test_style_newlines_are_not_significant():
    one_line = parse_style("forall Set A { A.x = 1 A.y = f(A.x) ensure g(A.y) }")
    multi = parse_style("forall Set A\n{\n  A.x = 1\n  A.y = f(\n A.x)\n  ensure g(A.y)\n}\n")
    assert one_line == multi


def test_style_greek_identifiers_and_block_comments():
    block = _only_block("/* c */ forall Angle θ { θ.arc = 1 -- trailing\n }")
    assert block.header.head == (S.DeclPattern(N("Angle"), V("θ")),)


def test_keyword_led_nodes_carry_the_keyword_position():
    prog = parse_style("forall Set x {\n  ensure f(x)\n  override x.a = 1\n  delete x.b\n}")
    (block,) = prog.items
    assert (block.header.pos.line, block.header.pos.column) == (1, 1)
    assert [(s.pos.line, s.pos.column) for s in block.block.statements] == [(2, 3), (3, 3), (4, 3)]
    assert block.block.statements[0].expr.pos == A.Pos(2, 3)  # the ConstrFn itself
    sub = parse_substance("Set A\n  Label A $a$\n")
    assert sub.statements[1].pos == A.Pos(2, 3)
    dom = parse_domain("  predicate P()\n")
    assert dom.statements[0].pos == A.Pos(1, 3)
