"""TeX's math layout rules where ziamath's differ, so that a label's box is the one MathJax (Penrose)
gives it: importing this module adjusts ziamath; `tex_mathml` prepares its input.

MathJax sizes Penrose's Equation labels by TeX's rules (TeXbook appendix G) in Computer Modern's
metrics; ziamath lays out by an OpenType MATH table. With Latin Modern Math (Computer Modern's
design and metrics) the two agree on glyphs and most spacing; here is what differs:

- Spaces given in em, ex or mu (operator spacing, `\\,`, `\\!`): ziamath makes them 4/3 too wide
  (it converts points to pixels where the font size is already in its own units). `size_px`
  returns them in the node's font size.
- Scripts (rule 18). The MATH table keeps one subscript drop (TeX's `sub2`, meant for a subscript
  beside a superscript) and one superscript rise (`sup2`, the text-style value). The msub, msup and
  msubsup nodes registered here place scripts as TeX does, in em of the node's size with s the
  script scale and xh the x-height: a single-character base stays on the baseline (u = v = 0),
  another starts from u = height - sup_drop * s, v = depth + sub_drop * s; a lone subscript drops
  by max(v, sub1, height(sub) - 4/5 xh); a superscript rises by max(u, sup1 in display style or
  sup2, depth(sup) + xh / 4); with both, the subscript drops by max(v, sub2), then at least 4 rule
  thicknesses separate them, the superscript's bottom staying 4/5 xh above the baseline. A
  subscript starts at the base's advance, a superscript after its italic correction too, both
  `EXTRA_IC` further as in MathJax; `scriptspace` follows; scripts are scaled by MathJax's 0.707.
- Operators (`tex_mathml`): a binary operator gets TeX's medium space on both sides unless it
  starts or ends its list or follows or precedes another operator but a fence (TeX then makes it
  ordinary); `\\partial`-like
  symbols are ordinary, `\\ldots` inner; `*` is `\\ast` and `\\cdot` U+22C5, as in MathJax. In
  scripts an operator's box reaches its advance; the minus and equals signs have the plus sign's
  height and depth, as in MathJax's TeX fonts.
- Letters and digits keep one design at every size (MathJax scales its fonts for scripts; the
  font's script-size variants are wider) and sit at their advances: ziamath moves a glyph whose
  ink starts left of its origin (p, j, f) right by that much; TeX lets the ink overhang.
- Accents (`\\vec`, `\\hat`, `\\tilde`...): the box is the base's, the accent may overhang it (the
  accent's height stays the MATH table's, not TeX's rule 12).

One change is for speed alone: ziamath typesets each row's children twice, first to measure the
row's height for its stretchy operators; a row with no operator anywhere below it (an identifier
and a number, as most labels are) skips that first pass, whose result only operators read.

Node rules apply to fonts whose MATH table is Computer Modern's (`tex_params`); others keep
ziamath's layout.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

from ziafont.fonttypes import BBox
from ziamath import operators, styles, zmath
from ziamath.mathfont import MathFont
from ziamath.nodes.mnode import Mnode
from ziamath.nodes.mnumber import Midentifier, Mnumber
from ziamath.nodes.moperator import Moperator
from ziamath.nodes.mrow import Mrow
from ziamath.nodes.msubsup import Msub, Msubsup, Msup
from ziamath.nodes.munderover import Mover
from ziamath.nodes.nodetools import elementtext


@dataclass(frozen=True)
class TexScriptParams:
    """TeX's script font parameters in em (cmsy10's; MathJax's TeX fonts use the same)."""

    sup1: float = 0.413
    sup2: float = 0.363
    sub1: float = 0.15
    sub2: float = 0.247
    sup_drop: float = 0.386
    sub_drop: float = 0.05
    x_height: float = 0.431
    rule_thickness: float = 0.04
    scriptspace: float = 0.05


COMPUTER_MODERN = TexScriptParams()
MATHJAX_SCRIPT_SCALE = 0.5**0.5  # a script's size in MathJax (TeX's fonts: 0.7), a script's script 0.5
EXTRA_IC = 0.033  # em MathJax adds between a base and its scripts (its `extra_ic`)
# ziamath's em/ex/mu spaces are this much too wide (points taken for pixels).
ZIAMATH_SPACE_FACTOR = 1.333
FONT_RELATIVE = re.compile(r"(mathspace|em|ex|mu)\s*$")
# TeX's binary operators (\mathbin).
TEX_BINARY = "+−∧∨⊘⊙⊕⊗⊖⋅∗∘∙∖±∓÷∩∪⊓⊔△▽⋄⋆†‡≀⨿⊎◯⊚⊛⊝⊞⊟⊠⊡⋉⋊⋋⋌⊺⊻⊼⋎⋏"
TEX_CHARACTERS = {"*": "\u2217", "\u00b7": "\u22c5"}  # TeX's \\ast and \\cdot
TEX_ORDINARY = "∂∇∞∅′"  # ordinary symbols latex2mathml writes as operators
OPENERS, CLOSERS = "([{⟨⌈⌊|‖", ")]}⟩⌉⌋|‖"
PRIMES = set("′″‴")
TEX_INNER = "…⋯"  # \\ldots, \\cdots
MATHML_NAMESPACE = re.compile(r'\s+xmlns="[^"]*"')
PLUS = "+"
PLUS_BOX = "\u2212="  # signs whose box is the plus sign's in MathJax's TeX fonts

_ziamath_size_px = Mnode.size_px


def size_px(self: Mnode, size: str, fontsize: float | None = None) -> float:
    value = _ziamath_size_px(self, size, fontsize)
    return value / ZIAMATH_SPACE_FACTOR if FONT_RELATIVE.search(size) else value


Mnode.size_px = size_px  # type: ignore[method-assign]

_STYLE_FIELDS = tuple(f.name for f in fields(styles.MathStyle) if f.name != "mathvariant")
_VARIANT_FIELDS = tuple(f.name for f in fields(styles.MathVariant))
_IMMUTABLE = (str, bool, int, float)


def style_dict(style: Any) -> dict[str, Any]:
    """`dataclasses.asdict` of a ziamath MathStyle, which every node's style parsing calls on its
    parent's style (its generic deep copy was 40% of an Equation's typesetting): the same dict,
    built directly when every field is an immutable scalar, else by `asdict`."""
    variant = getattr(style, "mathvariant", None)
    if type(style) is styles.MathStyle and type(variant) is styles.MathVariant:
        out: dict[str, Any] = {"mathvariant": {f: getattr(variant, f) for f in _VARIANT_FIELDS}}
        out.update((f, getattr(style, f)) for f in _STYLE_FIELDS)
        if all(type(v) in _IMMUTABLE for v in out["mathvariant"].values()) and all(
            type(out[f]) in _IMMUTABLE for f in _STYLE_FIELDS
        ):
            return out
    return _ziamath_asdict(style)


_ziamath_asdict = styles.asdict
styles.asdict = style_dict  # type: ignore[assignment]  # ziamath's parse_style reads this global; ours memoizes it


def load_math_font(path: str) -> None:
    """Load the font for ziamath's `Math(font=path)`, scripts scaled as MathJax scales them."""
    if path not in zmath.loadedfonts:
        font = MathFont(path)
        font.math.consts.scriptPercentScaleDown = 100 * MATHJAX_SCRIPT_SCALE  # type: ignore[assignment]  # ziafont reads a percentage, a float works where its stub says int
        zmath.loadedfonts[path] = font


def atom(element: ET.Element, fences: str) -> bool:
    """Whether a binary operator beside `element` stays binary: beside an operator it is ordinary,
    unless that operator is one of `fences` (a closing one before it, an opening one after it)."""
    return element.tag != "mo" or (element.text or "") in fences


def tex_mathml(mathml: str) -> str:
    """latex2mathml's MathML with TeX's classes of atoms where ziamath's operator table differs:
    `*` is `\\ast` and `\\cdot` is U+22C5 (as in MathJax); a binary operator has TeX's medium space
    on both sides, unless it starts or ends its list or follows another operator (then TeX makes it
    ordinary); `\\partial`-like symbols are ordinary, `\\ldots` is inner (thin spaces around)."""
    root = ET.fromstring(MATHML_NAMESPACE.sub("", mathml, count=1))
    for parent in root.iter():
        kids = list(parent)
        for i, kid in enumerate(kids):
            text = kid.text or ""
            if kid.tag == "mi" and text in TEX_INNER:
                kid.tag = "mo"
                kid.set("lspace", "thinmathspace")
                kid.set("rspace", "thinmathspace")
            if kid.tag != "mo" or kid.attrib.keys() & {"lspace", "rspace"}:
                continue
            kid.text = text = TEX_CHARACTERS.get(text, text)
            if text in TEX_ORDINARY:
                kid.set("lspace", "0")
                kid.set("rspace", "0")
            elif text in TEX_BINARY:
                binary = 0 < i < len(kids) - 1 and atom(kids[i - 1], CLOSERS) and atom(kids[i + 1], OPENERS)
                space = "mediummathspace" if binary else "0"
                kid.set("lspace", space)
                kid.set("rspace", space)
    return ET.tostring(root, encoding="unicode")


def tex_params(node: Any) -> TexScriptParams | None:
    """TeX's parameters for a node's font, or None for a font that is not Computer Modern's (its
    MATH table's subscript drop is cmsy10's sub2 and its x-height cmr10's)."""
    consts = node.font.math.consts
    em = node.font.info.layout.unitsperem
    sub2 = abs(consts.subscriptShiftDown / em - COMPUTER_MODERN.sub2) < 1e-3
    if sub2 and abs(consts.subscriptTopMax / em - 0.8 * COMPUTER_MODERN.x_height) < 2e-3:
        return COMPUTER_MODERN
    return None


def is_char(node: Any) -> bool:
    """A base TeX treats as one character (its box stays on the baseline for scripts)."""
    return node.mtag in ("mi", "mn", "mo") and len(elementtext(node.element)) == 1


def italic_correction(base: Any) -> float:
    glyph = base.lastglyph()
    if glyph is None or glyph.index < 0:
        return 0.0
    return base.units_to_points(base.font.math.italicsCorrection.getvalue(glyph.index) or 0)


def base_advance(base: Any) -> float:
    """Where scripts start: the base's advance, without the italic correction ziamath's box adds."""
    if base.mtag == "mover" and getattr(base, "_isaccent", False):
        return base.base_xadvance
    if is_char(base) and base.mtag == "mi" and base.lastglyph() is not None:
        glyph = base.lastglyph()
        return base.nodexy[-1][0] + base.units_to_points(glyph.advance())
    return base.xadvance()


@dataclass(frozen=True)
class Frame:
    """A script node's frame: TeX's parameters, its em in points, the script scale, and where the
    scripts start and how far the base asks them to rise (u) and drop (v)."""

    p: TexScriptParams
    em: float
    x: float
    u: float
    v: float


def script_frame(node: Any) -> Frame | None:
    params = tex_params(node)
    base = node.base
    if params is None or base.params.get("movablelimits") == "true":
        return None
    em = node.glyphsize  # the size of the node's own style (a script's script is smaller)
    scale = node.font.math.consts.scriptPercentScaleDown / 100
    if is_char(base):
        u = v = 0.0
    else:
        u = base.bbox.ymax - params.sup_drop * scale * em
        v = -base.bbox.ymin + params.sub_drop * scale * em
    return Frame(params, em, base_advance(base) + EXTRA_IC * em, u, v)


def sup_rise(node: Any, f: Frame) -> float:
    raised = f.p.sup1 if node.style.displaystyle and node.style.scriptlevel == 0 else f.p.sup2
    return max(f.u, raised * f.em, -node.superscript.bbox.ymin + f.p.x_height * f.em / 4)


def place(node: Any, f: Frame, scripts: list[tuple[Any, float, float]]) -> None:
    """Place the base at 0 and each (script, dx, rise); the box ends scriptspace after the scripts."""
    base = node.base
    node.nodes.append(base)
    node.nodexy.append((0.0, 0.0))
    xmax = base.bbox.xmax
    ymin, ymax = base.bbox.ymin, base.bbox.ymax
    for script, dx, rise in scripts:
        node.nodes.append(script)
        node.nodexy.append((f.x + dx, -rise))
        xmax = max(xmax, f.x + dx + script.xadvance() + f.p.scriptspace * f.em)
        ymin, ymax = min(ymin, rise + script.bbox.ymin), max(ymax, rise + script.bbox.ymax)
    node.bbox = BBox(min(0.0, base.bbox.xmin), xmax, ymin, ymax)


class TexMsub(Msub, tag="msub"):
    def _setup(self, **kwargs: Any) -> None:
        f = script_frame(self)
        if f is None:
            return super()._setup(**kwargs)
        drop = max(f.v, f.p.sub1 * f.em, self.subscript.bbox.ymax - 0.8 * f.p.x_height * f.em)
        place(self, f, [(self.subscript, 0.0, -drop)])


class TexMsup(Msup, tag="msup"):
    def _setup(self, **kwargs: Any) -> None:
        f = script_frame(self)
        if f is None:
            return super()._setup(**kwargs)
        place(self, f, [(self.superscript, italic_correction(self.base), sup_rise(self, f))])


class TexMsubsup(Msubsup, tag="msubsup"):
    def _setup(self, **kwargs: Any) -> None:
        f = script_frame(self)
        if f is None:
            return super()._setup(**kwargs)
        rise, drop = sup_rise(self, f), max(f.v, f.p.sub2 * f.em)
        sup_bottom, sub_top = rise + self.superscript.bbox.ymin, self.subscript.bbox.ymax - drop
        gap = 4 * f.p.rule_thickness * f.em
        if sup_bottom - sub_top < gap:
            drop = gap - sup_bottom + self.subscript.bbox.ymax
            lift = 0.8 * f.p.x_height * f.em - sup_bottom
            if lift > 0:
                rise, drop = rise + lift, drop - lift
        ic = italic_correction(self.base)
        place(self, f, [(self.subscript, 0.0, -drop), (self.superscript, ic, rise)])


class TexMoperator(Moperator, tag="mo"):
    def _setup(self, **kwargs: Any) -> None:
        super()._setup(**kwargs)
        if tex_params(self) is None:
            return
        if self.nodes:
            # In scripts (no spaces) ziamath's box ends at the ink; TeX's at the advance.
            advance = self.nodexy[-1][0] + self.nodes[-1].xadvance()
            self.bbox = BBox(self.bbox.xmin, max(self.bbox.xmax, advance), self.bbox.ymin, self.bbox.ymax)
        if self.string in PLUS_BOX and len(self.string) == 1:
            plus = self.font.findglyph(PLUS, self.style.mathvariant).path.bbox
            scale = self.glyphsize / self.font.info.layout.unitsperem
            self.bbox = BBox(self.bbox.xmin, self.bbox.xmax, plus.ymin * scale, plus.ymax * scale)


class TexMover(Mover, tag="mover"):
    def _setup(self, **kwargs: Any) -> None:
        super()._setup(**kwargs)
        over = self.element[1]
        if over.tag != "mo" or len(elementtext(over)) != 1 or tex_params(self) is None:
            return
        (basex, _), (overx, overy) = self.nodexy
        self.nodexy = [(0.0, 0.0), (overx - basex, overy)]
        self.bbox = BBox(self.base.bbox.xmin, self.base.bbox.xmax, self.bbox.ymin, self.bbox.ymax)
        self._xadvance = self.base_xadvance = self.base.xadvance()
        self._isaccent = True  # for ziamath: scripts attach at base_xadvance


def unshift_glyphs(node: Any) -> None:
    """Undo ziamath's move of each glyph whose ink starts left of its origin."""
    shift, placed = 0.0, []
    for glyph, (x, y) in zip(node.nodes, node.nodexy, strict=True):
        shift += max(0.0, -glyph.bbox.xmin)
        placed.append((x - shift, y))
    node.nodexy = placed
    node.bbox = BBox(node.bbox.xmin, node.bbox.xmax - shift, node.bbox.ymin, node.bbox.ymax)


def setup_letters(node: Any, setup: Callable[..., None], **kwargs: Any) -> None:
    """Lay out letters or digits in the design of every size, as MathJax scales one font for
    scripts (the font's script-size variants, 'ssty', are wider), at their advances."""
    if tex_params(node) is None or PRIMES & set(node.string):
        return setup(**kwargs)  # a prime's script variant is MathJax's prime, lowered and smaller
    features = node.font.features
    saved, features["ssty"] = features.get("ssty", False), False
    try:
        setup(**kwargs)
    finally:
        features["ssty"] = saved
    unshift_glyphs(node)


class TexMnumber(Mnumber, tag="mn"):
    def _setup(self, **kwargs: Any) -> None:
        setup_letters(self, super()._setup, **kwargs)


class TexMidentifier(Midentifier, tag="mi"):
    def _setup(self, **kwargs: Any) -> None:
        setup_letters(self, super()._setup, **kwargs)


# Elements that never become an operator (ziamath makes an `mi` naming one, such as lim, an `mo`).
NEVER_OPERATORS = frozenset({"mi", "mn", "mrow", "mtext", "mspace", "msub", "msup", "msubsup"})


def may_hold_operator(line: list[ET.Element]) -> bool:
    """Whether an operator may be typeset anywhere in these elements (conservatively: any element
    outside NEVER_OPERATORS counts, as ziamath builds some operators itself, e.g. for fences)."""
    return any(
        e.tag not in NEVER_OPERATORS or (e.tag == "mi" and elementtext(e) in operators.names)
        for child in line
        for e in child.iter()
    )


class TexMrow(Mrow, tag="mrow"):
    def _get_height_nostretch(self, line: list[ET.Element], **kwargs: Any) -> tuple[float, float]:
        # ziamath's measuring pass typesets every child once more; only stretchy operators read its
        # result (`rowymin`, `rowymax`), so a row without one returns what an empty row would.
        if may_hold_operator(line):
            return super()._get_height_nostretch(line, **kwargs)
        return 9999.0, -9999.0
