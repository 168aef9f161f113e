"""Concrete property values of Penrose shapes: canvas, colors, path data and the `Shape` record.

These are the plain Python values the optimizer hands to the renderer once every unknown has a
number. Each Penrose value type maps to one Python representation (see `PropType`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class PropType(Enum):
    """Penrose's value tags for shape properties, with the Python value each one holds."""

    FLOAT = "FloatV"  # float
    VECTOR = "VectorV"  # tuple[float, float]
    PT_LIST = "PtListV"  # tuple[tuple[float, float], ...]
    COLOR = "ColorV"  # Color
    STRING = "StrV"  # str
    BOOL = "BoolV"  # bool
    PATH_DATA = "PathDataV"  # tuple[PathCmd, ...]
    SHAPE_LIST = "ShapeListV"  # tuple[Shape, ...]
    CLIP_DATA = "ClipDataV"  # Shape | None  (None is Penrose's NoClip)

    @property
    def describe(self) -> str:
        """The type in Style's words, for messages (the tags are Penrose's internal names)."""
        return _DESCRIBE[self.name]


_DESCRIBE = {
    "FLOAT": "a number",
    "VECTOR": "a vector",
    "PT_LIST": "a list of points",
    "COLOR": "a color",
    "STRING": "a string",
    "BOOL": "a boolean",
    "PATH_DATA": "path data",
    "SHAPE_LIST": "a list of shapes",
    "CLIP_DATA": "a clip (clip(shape) or noClip())",
}


@dataclass(frozen=True)
class Canvas:
    """The drawing area. Shape coordinates are centered: origin in the middle, y pointing up."""

    width: float
    height: float

    @property
    def x_range(self) -> tuple[float, float]:
        return (-self.width / 2, self.width / 2)

    @property
    def y_range(self) -> tuple[float, float]:
        return (-self.height / 2, self.height / 2)

    def to_screen(self, x: float, y: float) -> tuple[float, float]:
        """Centered y-up coordinates -> SVG coordinates (origin top-left, y down), as Penrose's toScreen."""
        return (self.width / 2 + x, self.height / 2 - y)


@dataclass(frozen=True)
class Color:
    """An RGBA color with channels in [0, 1], or Penrose's `none()` paint when `is_none`."""

    r: float = 0.0
    g: float = 0.0
    b: float = 0.0
    a: float = 1.0
    is_none: bool = False

    @staticmethod
    def none() -> Color:
        return Color(0.0, 0.0, 0.0, 1.0, is_none=True)

    @staticmethod
    def parse(text: str) -> Color:
        """Parse `#rgb`, `#rgba`, `#rrggbb` or `#rrggbbaa` (the hex forms Penrose's Style accepts)."""
        digits = text[1:] if text.startswith("#") else text
        if len(digits) not in (3, 4, 6, 8) or any(c not in "0123456789abcdefABCDEF" for c in digits):
            raise ValueError(f"invalid color {text!r}: expected #rgb, #rgba, #rrggbb or #rrggbbaa")
        if len(digits) in (3, 4):
            digits = "".join(c * 2 for c in digits)
        channels = [int(digits[i : i + 2], 16) / 255 for i in range(0, len(digits), 2)]
        if len(channels) == 3:
            channels.append(1.0)  # alpha defaults to opaque, as in Penrose's hexToRgba
        return Color(channels[0], channels[1], channels[2], channels[3])

    @staticmethod
    def from_hsva(h: float, s: float, v: float, a: float) -> Color:
        """Penrose's `hsva(h, s, v, a)`: h in degrees, s and v in [0, 100], a in [0, 1]."""
        hue = 0.0 if math.isnan(h) else h % 360
        sat = 0.0 if math.isnan(h) or math.isnan(s) else s / 100
        val = v / 100
        chroma = val * sat
        x = chroma * (1 - abs((hue / 60) % 2 - 1))
        m = val - chroma
        # Which pair of channels carries the chroma depends on the 60-degree hue sector.
        sectors = [
            (chroma, x, 0),
            (x, chroma, 0),
            (0, chroma, x),
            (0, x, chroma),
            (x, 0, chroma),
            (chroma, 0, x),
        ]
        r, g, b = sectors[min(int(hue // 60), 5)]
        return Color(r + m, g + m, b + m, a)

    def svg_paint(self) -> str:
        """The SVG `fill`/`stroke` value: `none` or `#rrggbb` (alpha goes to the opacity attribute)."""
        if self.is_none:
            return "none"
        return "#" + "".join(f"{round(255 * min(max(c, 0.0), 1.0)):02x}" for c in (self.r, self.g, self.b))

    def svg_opacity(self) -> float:
        """The SVG `fill-opacity`/`stroke-opacity` value (1 for `none`, as Penrose)."""
        return 1.0 if self.is_none else min(max(self.a, 0.0), 1.0)


ARC_VALUE_COUNT = 5  # an arc's plain numbers: rx, ry, rotation, largeArc, sweep


@dataclass(frozen=True)
class PathCmd:
    """One SVG path command with its arguments, as Penrose's PathCmd (its `SubPath` tags dropped: the
    command letter fixes them). The one representation of path data, from the function library
    (scalars may be traced values there) to the renderer (plain floats):

        cmd   contents                                          meaning
        "M"   [[x, y]]                                          move to (x, y)
        "L"   [[x, y]]                                          line to (x, y)
        "Q"   [[cx, cy], [x, y]]                                quadratic Bezier, control point, end
        "C"   [[c1x, c1y], [c2x, c2y], [x, y]]                  cubic Bezier, two control points, end
        "T"   [[x, y]]                                          smooth quadratic (control reflected)
        "S"   [[c2x, c2y], [x, y]]                              smooth cubic (first control reflected)
        "A"   [[rx, ry, rotation, largeArc, sweep], [x, y]]     elliptical arc; rotation in degrees,
                                                                largeArc and sweep are 0 or 1
        "Z"   []                                                close the subpath

    Every entry is a point (Penrose's "CoordV") in diagram coordinates (y up; the renderer flips
    it), except the first entry of "A" (see `holds_values`), which holds plain numbers ("ValueV",
    never flipped)."""

    cmd: str
    contents: list[Any] = field(default_factory=list)

    def holds_values(self, k: int) -> bool:
        """Whether entry k holds plain numbers rather than a point."""
        return k == 0 and self.cmd.upper() == "A"


@dataclass
class Shape:
    """A concrete shape ready to render: every property holds a Python value (see `PropType`).

    `props` uses Penrose's property names (`center`, `r`, `fillColor`, ...). `passthrough` holds the
    extra string/float properties a Style sets that the shape does not declare (e.g. `style`,
    `opacity`); the renderer copies them to SVG attributes as Penrose does.
    """

    kind: str
    name: str
    props: dict[str, Any]
    passthrough: dict[str, str | float] = field(default_factory=dict)
