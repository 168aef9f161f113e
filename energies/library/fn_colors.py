"""Colors of Penrose's computed functions: `rgba`, `hsva`, `none`, `selectColor`, `setOpacity`,
`sampleColor`.

A color value is an rgba list of 4 scalars in [0, 1] (floats or traced values), or
`energies.shapes.Color.none()` for Penrose's "no paint". `hsva` converts to rgba right away with the
formula Penrose's renderer applies to HSVA colors (d3-hsv), written with `select` so that a hue
depending on unknowns still works. Concrete `energies.shapes.Color`s are accepted as inputs too.
"""

from __future__ import annotations

from typing import Any

from adcore import eq
from energies.shapes import Color as ShapeColor
from energies.shapes.specs import uniform_float

from . import pmath as am
from .context import FunctionContext
from .fn_ops import Color, Num, select


def is_none_color(c: Any) -> bool:
    return isinstance(c, ShapeColor) and c.is_none


def rgba_of(c: Any, what: str) -> list:
    """A color argument as an rgba list (a `ShapeColor` is unpacked); `none` is an error here."""
    if isinstance(c, ShapeColor):
        if c.is_none:
            raise ValueError(f"{what}: expected an RGBA color, got none()")
        return [c.r, c.g, c.b, c.a]
    if isinstance(c, (list, tuple)) and len(c) == 4:
        return list(c)
    raise ValueError(f"{what}: expected a color (rgba list of 4 numbers), got {c!r}")


def to_shape_color(c: Any) -> ShapeColor:
    """A color value of plain numbers as the renderer's `energies.shapes.Color`."""
    if isinstance(c, ShapeColor):
        return c
    r, g, b, a = rgba_of(c, "color")
    return ShapeColor(float(r), float(g), float(b), float(a))


def rgba(r: Num, g: Num, b: Num, a: Num) -> Color:
    return [r, g, b, a]


def hsv_to_rgb(h: Num, s: Num, v: Num) -> list:
    """h in degrees (any real; wrapped to [0, 360)), s and v in [0, 100] -> [r, g, b] in [0, 1]."""
    hue = h - 360.0 * am.floor(h / 360.0)
    sat, val = s / 100.0, v / 100.0
    chroma = val * sat
    sector = hue / 60.0
    x = chroma * (1.0 - am.abs(sector - 2.0 * am.floor(sector / 2.0) - 1.0))
    m = val - chroma
    # (r, g, b) before adding m, for the six 60-degree sectors
    table = [(chroma, x, 0.0), (x, chroma, 0.0), (0.0, chroma, x), (0.0, x, chroma), (x, 0.0, chroma)]
    rgb = [chroma, 0.0, x]  # sector 5, h >= 300
    for k in reversed(range(5)):
        below = hue < 60.0 * (k + 1)
        rgb = [select(below, table[k][i], rgb[i]) for i in range(3)]
    return [c + m for c in rgb]


def hsva(h: Num, s: Num, v: Num, a: Num) -> Color:
    """The rgba color of hue h (degrees), saturation s and value v (in [0, 100]) and opacity a."""
    return [*hsv_to_rgb(h, s, v), a]


def none() -> Color:
    return ShapeColor.none()


def selectColor(color1: Color, color2: Color, level: Num) -> Color:
    """color1 when level is even (level / 2 is an integer), else color2."""
    c1, c2 = rgba_of(color1, "selectColor"), rgba_of(color2, "selectColor")
    half = level / 2.0
    even = eq(half, am.trunc(half))
    return [select(even, a, b) for a, b in zip(c1, c2)]


def setOpacity(color: Color, frac: Num) -> Color:
    """The color with its opacity multiplied by frac (none stays none)."""
    if is_none_color(color):
        return color
    r, g, b, a = rgba_of(color, "setOpacity")
    return [r, g, b, frac * a]


def sampleColor(ctx: FunctionContext, alpha: Num, colorType: str) -> Color:
    """A random color: rgb channels uniform in [0.1, 0.9), or ("hsv") a uniform hue at full
    saturation and 80% value, as Penrose."""
    if colorType == "rgb":
        r, g, b = (uniform_float(ctx.rng, 0.1, 0.9) for _ in range(3))
        return [r, g, b, alpha]
    if colorType == "hsv":
        return hsva(uniform_float(ctx.rng, 0.0, 360.0), 100.0, 80.0, alpha)
    raise ValueError(f'sampleColor: colorType must be "rgb" or "hsv", got {colorType!r}')
