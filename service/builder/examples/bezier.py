"""De Casteljau's construction of a cubic Bezier curve: curve-examples' cubic-bezier
(cubic-bezier.style), rebuilt in Python.

Four optimized control points shape a curve of perimeter 900 and signed area 1e5; each level of
the construction interpolates the points of the level above at t = 0.4, with a line between the
two points it interpolates, labels kept off those lines.
"""

from __future__ import annotations

from service.builder import DiagramBuilder, Vec, constraints, objectives
from service.builder import functions as fn

TRIO = "curve-examples/cubic-bezier.trio.json"
T = 0.4
SEMI_BLUE = (27.0 / 255.0, 31.0 / 255.0, 138.0 / 255.0, 0.2)
# each interpolated point and the two it interpolates, level by level
LERPS = [
    ("p12", "p1", "p2"),
    ("p23", "p2", "p3"),
    ("p34", "p3", "p4"),
    ("p123", "p12", "p23"),
    ("p234", "p23", "p34"),
    ("p1234", "p123", "p234"),
]


def build(variation: str = "RetroKouprey113") -> DiagramBuilder:
    db = DiagramBuilder(600, 400, variation)
    controls = [Vec([db.input(), db.input()]) for _ in range(4)]
    db.path(
        name="curve",
        d=fn.cubicCurveFromPoints("open", controls),
        stroke_width=3.5,
        stroke_color=SEMI_BLUE,
        ensure_on_canvas=True,
    )
    db.ensure(constraints.equal(fn.perimeter(controls, False), 900))
    db.ensure(constraints.equal(fn.signedArea(controls, False), 1e5))

    position = {f"p{i + 1}": p for i, p in enumerate(controls)}
    for p, p1, p2 in LERPS:
        position[p] = T * position[p1] + (1 - T) * position[p2]
    label = {}
    for p, center in position.items():
        dot = db.circle(name=f"{p}.point", center=center, r=4, fill_color=(0, 0, 0, 1))
        tex = f"P_{{{p[1:]}}}" if len(p) > 2 else f"P_{p[1:]}"
        label[p] = db.equation(name=f"{p}.text", string=tex, center=(db.input(), db.input()))
        db.encourage(objectives.near(label[p], dot))
    for p, p1, p2 in LERPS:
        line = db.line(
            name=f"{p}.line", start=position[p1], end=position[p2], stroke_width=2, stroke_color=(0, 0, 0, 1)
        )
        for q in (p, p1, p2):
            db.ensure(constraints.disjoint(line, label[q], -3))
    return db
