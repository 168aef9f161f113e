"""Two perpendicular vectors: linear-algebra-domain's two-vectors-perp (linearalgebra-paper-dashes.style),
rebuilt in Python.

A square vector space with axes; each vector is an arrow from the origin to an optimized end, its
label 15 px from the arrowhead; the two vectors are encouraged to be orthogonal, and a small square
marks their right angle.
"""

from __future__ import annotations

from service.builder import DiagramBuilder, constraints, objectives
from service.builder import functions as fn

TRIO = "linear-algebra-domain/two-vectors-perp.trio.json"
PERP_LEN, SPACE, ARROWHEAD = 20.0, 350.0, 0.7
GRAY, LIGHT_BLUE, BLACK, WHITE = (0.6, 0.6, 0.6, 1.0), (0.1, 0.1, 0.9, 1.0), (0, 0, 0, 1.0), (1, 1, 1, 1.0)


def build(variation: str = "") -> DiagramBuilder:
    db = DiagramBuilder(800, 700, variation)
    half = SPACE / 2
    origin = (0.0, 0.0)
    background = db.rectangle(
        name="V.background", center=origin, width=SPACE, height=SPACE, fill_color="none", stroke_color="none"
    )
    axes = [
        db.line(
            name=f"V.{axis}Axis",
            start=start,
            end=end,
            stroke_width=1.0,
            stroke_color=GRAY,
            start_arrowhead="straight",
            end_arrowhead="straight",
            start_arrowhead_size=ARROWHEAD * 2,
            end_arrowhead_size=ARROWHEAD * 2,
            passthrough={"style": "solid"},
        )
        for axis, start, end in (("x", (-half, 0.0), (half, 0.0)), ("y", (0.0, -half), (0.0, half)))
    ]
    db.equation(name="V.text", string="V", center=(-half, half), fill_color=GRAY)

    arrow = {}
    for v in ("u", "v"):
        arrow[v] = db.line(
            name=f"{v}.arrow",
            start=origin,
            end=(db.input(), db.input()),
            stroke_width=3.0,
            stroke_color=LIGHT_BLUE,
            end_arrowhead="straight",
            end_arrowhead_size=ARROWHEAD,
            stroke_dasharray="4 1 2",
        )
        label = db.equation(name=f"{v}.text", string=v, fill_color=LIGHT_BLUE)
        db.ensure(constraints.contains(background, arrow[v]))
        db.ensure(constraints.contains(background, label))
        db.ensure(constraints.equal(fn.signedDistanceRect(fn.bboxPts(label), arrow[v].end), 15.0))
        db.ensure(constraints.less_than(20, fn.length(arrow[v])))
        for axis in axes:
            db.layer(axis, label)

    # the right-angle mark where the arrows start: v (the first of Orthogonal(v, u)) on the right
    right, left = arrow["v"], arrow["u"]
    dir_r = fn.normalize(right.end - right.start)
    dir_l = fn.normalize(left.end - left.start)
    pt_l = right.start + PERP_LEN * dir_l
    pt_r = right.start + PERP_LEN * dir_r
    corner = pt_l + PERP_LEN * dir_r
    mark = db.path(
        name="perpMark",
        d=fn.pathFromPoints("closed", [right.start, pt_l, corner, pt_r]),
        stroke_color=BLACK,
        fill_color=WHITE,
    )
    db.encourage(objectives.equal(fn.dot(right.end - right.start, left.end - left.start), 0.0))
    db.layer(mark, left)
    db.layer(mark, right)
    return db
