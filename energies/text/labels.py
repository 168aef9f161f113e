"""Label measurement for Text and Equation shapes, done once before optimization as Penrose does.

Penrose measures every label before layout and fixes each label's `width`, `height`, `ascent` and
`descent` (the shape properties are "pending" inputs). Here:

- Text: glyph metrics of the bundled DejaVu fonts (what the Penrose reference run used), combined
  as Penrose combines a canvas's `actualBoundingBox` (glyphs at their advances, no kerning): `width`
  is |ink's left edge| + |ink's right edge| from the origin, `ascent`/`descent` the ink's extent
  above/below the baseline (absolute values), `height = ascent + descent`. A string with no width or
  no ink measures all zeros, as in Penrose. Font hinting, which made the reference run's extents
  whole pixels, is not reproduced: over its 410 measured Text labels ours are within 0.44 px (median)
  and 1.1 px (90th percentile).
- Equation: the box MathJax gives the TeX in Penrose (display style): TeX's box, not the ink's.
  ziamath typesets it in Latin Modern Math (Computer Modern's design and metrics, as MathJax's TeX
  fonts), with TeX's layout rules where ziamath's differ (energies.text.tex_layout). `width` runs from
  the origin to the advance; `ascent`/`descent` are the extent above/below the baseline, which for
  Computer Modern's glyphs is their TeX height and depth. Over the registry's 457 Equations the
  median error against MathJax's boxes is 0.0% and the 90th percentile under 1% (width, height,
  ascent). `EquationLabel.svg_fragment` holds the paths (no fonts needed) typeset at REFERENCE_PX,
  baseline at y = 0, y down; `view_box` frames the box in those units, so an `<svg width height
  viewBox>` scales them to the label's size (ink may overhang the box, as in TeX).

Font sizes accept CSS absolute units (px, pt, pc, in, cm, mm, q), em/rem/% against a 16 px base and
the absolute size keywords. Errors (bad TeX, bad font size) raise `LabelError` naming the label.
"""

from __future__ import annotations

import math
import re
import threading
import warnings
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from energies.text.font_metrics import load_font

FONT_DIR = Path(__file__).resolve().parent / "fonts"
# Computer Modern's design and metrics (those of MathJax's TeX fonts, which Penrose measures with).
MATH_FONT = FONT_DIR / "latinmodern-math.otf"
# XML 1.0's Char production: everything else (C0 controls but tab/newline/return, lone surrogates,
# U+FFFE/U+FFFF) can be in no SVG. A Text label drops them when drawn (service.render.svg); TeX is
# refused with them, since its paths are drawn through an XML parser.
XML_FORBIDDEN = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
CSS_BASE_FONT_PX = 16.0  # CSS initial font size, the base of em, rem and %

PX_PER_UNIT = {
    "px": 1.0,
    "pt": 96 / 72,
    "pc": 16.0,
    "in": 96.0,
    "cm": 96 / 2.54,
    "mm": 96 / 25.4,
    "q": 96 / 101.6,
    "em": CSS_BASE_FONT_PX,
    "rem": CSS_BASE_FONT_PX,
    "%": CSS_BASE_FONT_PX / 100,
}
SIZE_KEYWORDS_PX = {
    "xx-small": 9.0,
    "x-small": 10.0,
    "small": 13.0,
    "medium": 16.0,
    "large": 18.0,
    "x-large": 24.0,
    "xx-large": 32.0,
    "xxx-large": 48.0,
}
FONT_SIZE_PATTERN = re.compile(r"^\s*(\d*\.?\d+(?:[eE][+-]?\d+)?)\s*(px|pt|pc|in|cm|mm|q|em|rem|%)\s*$", re.I)

# A label is measured in the font it is drawn in. Only the bundled DejaVu fonts are drawn
# (service.render.formats resolves every family list to them), so the first family in the list that names
# one of them, directly or as a CSS generic family, decides; any other family (Menlo, Palatino,
# Courier, ...) is drawn with the list's fallback, DejaVu Sans, as the Penrose reference run also
# measured it (its canvas had only the DejaVu fonts).
FAMILY_FONTS = {"sans": "DejaVu Sans", "serif": "DejaVu Serif", "mono": "DejaVu Sans Mono"}
GENERIC_FAMILIES = {
    "sans-serif": "sans", "serif": "serif", "monospace": "mono", "cursive": "sans", "fantasy": "sans",
    "system-ui": "sans",
}  # fmt: skip
NAMED_FAMILIES = {**GENERIC_FAMILIES, **{name.lower(): key for key, name in FAMILY_FONTS.items()}}

FONT_FILES = {
    ("sans", False, False): "DejaVuSans.ttf",
    ("sans", True, False): "DejaVuSans-Bold.ttf",
    ("sans", False, True): "DejaVuSans-Oblique.ttf",
    ("sans", True, True): "DejaVuSans-BoldOblique.ttf",
    ("serif", False, False): "DejaVuSerif.ttf",
    ("serif", True, False): "DejaVuSerif-Bold.ttf",
    ("serif", False, True): "DejaVuSerif-Italic.ttf",
    ("serif", True, True): "DejaVuSerif-BoldItalic.ttf",
    # No oblique monospace is bundled: slanting a monospace font keeps its advances.
    ("mono", False, False): "DejaVuSansMono.ttf",
    ("mono", True, False): "DejaVuSansMono-Bold.ttf",
    ("mono", False, True): "DejaVuSansMono.ttf",
    ("mono", True, True): "DejaVuSansMono-Bold.ttf",
}


class LabelError(ValueError):
    """A label that cannot be measured; the message names the label."""


@dataclass(frozen=True)
class LabelMetrics:
    """A measured label in px: the values Penrose fills into width/height/ascent/descent."""

    width: float
    height: float
    ascent: float
    descent: float


@dataclass(frozen=True)
class EquationLabel(LabelMetrics):
    """A rendered equation: metrics plus its SVG paths and the viewBox (x, y, w, h) framing them."""

    svg_fragment: str = ""
    view_box: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)


def describe(label: str) -> str:
    return f"label {label!r}" if label else "label"


def parse_font_size(font_size: str, label: str = "") -> float:
    """A CSS font size -> px, e.g. "12px" -> 12, "1.5em" -> 24, "9pt" -> 12."""
    text = font_size.strip().lower()
    if text in SIZE_KEYWORDS_PX:
        return SIZE_KEYWORDS_PX[text]
    match = FONT_SIZE_PATTERN.match(text)
    if match is None:
        raise LabelError(
            f'{describe(label)}: invalid fontSize {font_size!r}; expected a number with a unit, e.g. "12px"'
        )
    px = float(match.group(1)) * PX_PER_UNIT[match.group(2).lower()]
    if px <= 0:
        raise LabelError(f"{describe(label)}: fontSize {font_size!r} must be positive")
    return px


def family_class(font_family: str) -> str:
    """'serif', 'mono' or 'sans': the bundled font a CSS family list is drawn with (see FAMILY_FONTS)."""
    for raw in font_family.split(","):
        key = NAMED_FAMILIES.get(raw.strip().strip("'\"").lower())
        if key is not None:
            return key
    return "sans"


def font_flags(*shorthand_parts: str) -> tuple[bool, bool]:
    """(bold, italic) from font-style/variant/weight/stretch words.

    They are read together because Penrose joins them into one CSS `font` shorthand, where the order
    of these words is free (a fontStyle of "bold" does make bold text).
    """
    words = " ".join(shorthand_parts).lower().split()
    bold = any(w in ("bold", "bolder") or (w.isdigit() and int(w) >= 600) for w in words)
    italic = any(w == "italic" or w.startswith("oblique") for w in words)
    return bold, italic


def font_path(font_family: str, bold: bool, italic: bool) -> Path:
    return FONT_DIR / FONT_FILES[(family_class(font_family), bold, italic)]


def load_fonts() -> None:
    """Read every bundled Text font (1-2 ms each), as a process's start-up work: a label in bold,
    serif or monospace then measures without reading its font first."""
    for name in sorted(set(FONT_FILES.values())):
        load_font(FONT_DIR / name)


@lru_cache(maxsize=4096)
def text_metrics(string: str, font_file: Path, size_px: float) -> LabelMetrics:
    font = load_font(font_file)
    scale = size_px / font.units_per_em
    # Penrose takes a canvas's actualBoundingBox{Left,Right,Ascent,Descent} (the ink's box from the
    # origin, glyphs set at their advances, a canvas drawing tabs and newlines as spaces) and sums
    # their absolute values: ink starting right of the origin widens the box by that much.
    x, left, right, top, bottom = 0.0, math.inf, -math.inf, -math.inf, math.inf
    for c in string:
        g = font.char_metrics(" " if c in "\t\n\r\f" else c)
        if g.has_ink:
            left, right = min(left, x + g.x_min * scale), max(right, x + g.x_max * scale)
            top, bottom = max(top, g.y_max * scale), min(bottom, g.y_min * scale)
        x += g.advance * scale
    if right == -math.inf:
        return LabelMetrics(0.0, 0.0, 0.0, 0.0)
    width, ascent, descent = abs(left) + abs(right), abs(top), abs(bottom)
    if width == 0 or ascent + descent == 0:
        return LabelMetrics(0.0, 0.0, 0.0, 0.0)
    return LabelMetrics(width, ascent + descent, ascent, descent)


def measure_text(
    string: str,
    font_family: str = "sans-serif",
    font_size: str = "12px",
    font_weight: str = "",
    font_style: str = "",
    font_variant: str = "",
    font_stretch: str = "",
    *,
    label: str = "",
) -> LabelMetrics:
    """Measure a Text label with Penrose's default font settings unless given."""
    size_px = parse_font_size(font_size, label)
    bold, italic = font_flags(font_style, font_variant, font_weight, font_stretch)
    return text_metrics(string, font_path(font_family, bold, italic), size_px)


ziamath_lock = threading.Lock()
UNDEFINED_COMMAND = re.compile(r"<m[ion][^>]*>(\\[A-Za-z]+)</m[ion]>")


# Equations are typeset once at this size and scaled: ziamath will not draw glyphs below 30% of its
# default size (7.2 px), which would make small labels too big, and one rendering serves all sizes.
REFERENCE_PX = 100.0


@lru_cache(maxsize=2048)
def equation_label(tex: str) -> EquationLabel:
    """Render `tex` (math mode, display style) at REFERENCE_PX; raises ValueError on bad TeX."""
    with warnings.catch_warnings():
        # Imported lazily (it loads its math font on import, through a deprecated importlib call).
        warnings.simplefilter("ignore", DeprecationWarning)
        import ziamath
        from ziamath.tex import tex2mml

        from energies.text.tex_layout import load_math_font, tex_mathml  # adjusts ziamath on import

    mathml = tex_mathml(tex2mml(tex, inline=False))
    # latex2mathml keeps unknown commands as literal text; MathJax (Penrose) rejects them.
    undefined = UNDEFINED_COMMAND.search(mathml)
    if undefined:
        raise ValueError(f"undefined control sequence {undefined.group(1)}")
    with ziamath_lock:
        load_math_font(str(MATH_FONT))
        saved = ziamath.config.svg2
        ziamath.config.svg2 = False  # plain <path> elements instead of <symbol>/<use> with ids
        try:
            math = ziamath.Math(mathml, size=REFERENCE_PX, font=str(MATH_FONT))
            group = ET.Element("g")
            math.node.draw(0, 0, group)
        finally:
            ziamath.config.svg2 = saved
    for element in group.iter():
        # The default black goes; the renderer sets the label's fillColor on the enclosing group.
        if element.attrib.get("fill") == ziamath.config.math.color:
            del element.attrib["fill"]
    fragment = "".join(ET.tostring(child, encoding="unicode") for child in group)
    # TeX's box: from the origin to the advance; heights and depths are the ink's, as the heights
    # and depths of Computer Modern's TeX metrics are.
    box = math.node.bbox
    ascent, descent = max(0.0, box.ymax), max(0.0, -box.ymin)
    width = max(0.0, math.node.xadvance())
    return EquationLabel(
        width=width,
        height=ascent + descent,
        ascent=ascent,
        descent=descent,
        svg_fragment=fragment,
        view_box=(0.0, -ascent, width, ascent + descent),
    )


def measure_equation(tex: str, font_size: str = "16px", *, label: str = "") -> EquationLabel:
    """Measure and render an Equation label (Penrose's default fontSize is 16px)."""
    if tex == "":
        raise LabelError(f"{describe(label)}: Equation string must be non-empty")
    size_px = parse_font_size(font_size, label)
    forbidden = XML_FORBIDDEN.search(tex)
    if forbidden is not None:
        char = f"U+{ord(forbidden.group()):04X}"
        raise LabelError(f"{describe(label)}: the TeX label holds {char}, a character no SVG can hold")
    try:
        reference = equation_label(tex)
    except Exception as error:  # ziamath and latex2mathml raise many kinds of errors on bad TeX
        detail = str(error) or type(error).__name__
        raise LabelError(f"{describe(label)}: cannot render TeX ${tex}$: {detail}") from error
    scale = size_px / REFERENCE_PX
    # The paths and viewBox stay in reference units: the renderer's <svg width height> scales them.
    return replace(
        reference,
        width=reference.width * scale,
        height=reference.height * scale,
        ascent=reference.ascent * scale,
        descent=reference.descent * scale,
    )


def measure_label(kind: str, name: str, props: Mapping[str, Any]) -> LabelMetrics:
    """Measure the label of a Text or Equation shape from its (Penrose-named) properties."""
    if kind == "Equation":
        return measure_equation(str(props.get("string", "")), str(props.get("fontSize", "16px")), label=name)
    if kind == "Text":
        return measure_text(
            str(props.get("string", "")),
            str(props.get("fontFamily", "sans-serif")),
            str(props.get("fontSize", "12px")),
            str(props.get("fontWeight", "")),
            str(props.get("fontStyle", "")),
            str(props.get("fontVariant", "")),
            str(props.get("fontStretch", "")),
            label=name,
        )
    raise ValueError(f"shape {name!r}: only Text and Equation shapes have labels, not {kind}")
