"""Penrose's arrowhead styles and the line shortening that makes room for them.

An arrowhead is an SVG marker drawn in its own viewBox, sized in stroke widths (markerUnits
"strokeWidth"), whose reference point (refX, refY) sits on the line's end. The part of the head
beyond refX would overshoot the end point, so Penrose pulls a Line's arrowed ends back by that
length times the head's size times the stroke width.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Arrowhead:
    """An arrowhead marker drawn in its own viewBox; refX/refY is the point placed on the line end."""

    width: float
    height: float
    view_box: str
    ref_x: float
    ref_y: float
    path: str
    stroked: bool  # drawn with the line's stroke, else filled with its color
    round_caps: bool = False


ARROWHEADS = {
    "concave": Arrowhead(8, 8, "0 0 8 8", 2.5, 4, "M0,0 A30,30,0,0,0,8,4 A30,30,0,0,0,0,8 L2.5,4 z", False),
    "straight": Arrowhead(
        9.95, 8.12, "0 0 9.95 8.12", 2.36, 4.06, "M9.95 4.06 0 8.12 2.36 4.06 0 0 9.95 4.06z", False
    ),
    "perp": Arrowhead(1, 10.15, "0 0 1 10.2", 0.5, 5.08, "M0.5 10.2 0.5 0", True),
    "line": Arrowhead(
        7.5, 14, "0 0 7.5 14", 5, 7, "M 7 7 a -6 6.75 0 0 1 -6 -6 M 7 7 a -6 6.75 0 0 0 -6 6", True, True
    ),
    "doubleLine": Arrowhead(
        12.5,
        14,
        "0 0 12.5 14",
        5,
        7,
        "M 7 7 a -6 6.75 0 0 1 -6 -6 M 7 7 a -6 6.75 0 0 0 -6 6 M 12 7 a -6 6.75 0 0 1 -6 -6 "
        "M 7 7 L 12 7 M 12 7 a -6 6.75 0 0 0 -6 6",
        True,
        True,
    ),
    "loopup": Arrowhead(6, 28, "0 0 6 28", 1, 10, "M1 10 a 4 4 0 0 1 0 9", True, True),
    "loopdown": Arrowhead(6, 28, "0 0 6 28", 1, 10, "M1 1 a 4 4 0 0 1 0 9", True, True),
    "loop": Arrowhead(6, 28, "0 0 6 28", 1, 10, "M1 10 a 4 4 0 0 1 0 9 M1 1 a 4 4 0 0 1 0 9", True, True),
}


def arrowhead_for(style: str, property_name: str = "arrowhead") -> Arrowhead | None:
    """The arrowhead named `style`; "none" (Penrose's default) and "" mean no arrowhead."""
    if style in ("", "none"):
        return None
    if style not in ARROWHEADS:
        raise ValueError(
            f"unknown {property_name} {style!r}; expected none or one of {', '.join(ARROWHEADS)}"
        )
    return ARROWHEADS[style]


Point = tuple[float, float]


def line_ends_with_room_for_arrows(
    start: Point,
    end: Point,
    stroke_width: float,
    start_head: tuple[Arrowhead | None, float, bool],
    end_head: tuple[Arrowhead | None, float],
) -> tuple[Point, Point]:
    """The drawn ends of a line whose start/end heads are (arrowhead, size[, flipped])."""
    (x0, y0), (x1, y1) = start, end
    length = math.hypot(x1 - x0, y1 - y0)
    if length == 0:
        return (x0, y0), (x1, y1)  # a zero-length arrow is drawn as just its arrowheads
    (sx, sy), (ex, ey) = (x0, y0), (x1, y1)
    head, size, flipped = start_head
    if head is not None:
        # A flipped start head points into the line, so the part behind refX is what overshoots.
        overhang = head.ref_x if flipped else head.width - head.ref_x
        pull = overhang * size * stroke_width / length
        sx, sy = x0 - pull * (x0 - x1), y0 - pull * (y0 - y1)
    head, size = end_head
    if head is not None:
        pull = (head.width - head.ref_x) * size * stroke_width / length
        ex, ey = x1 - pull * (x1 - x0), y1 - pull * (y1 - y0)
    return (sx, sy), (ex, ey)
