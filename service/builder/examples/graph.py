"""A graph of cities: graph-domain's textbook figure (sec1/fig1, simple-graph.style), rebuilt in Python.

Two layout stages, as the Style's `layout = [dots, text]`: first the dots spread out (an IPC-style
barrier keeps every pair near `REPEL` apart, edges shorter than `EDGE`), then the labels settle
next to their dots, clear of each other and of the edges.
"""

from __future__ import annotations

from itertools import combinations

from service.builder import DiagramBuilder, constraints, objectives
from service.builder import functions as fn

TRIO = "graph-domain/textbook/sec1/fig1.trio.json"
CITIES = ["Chicago", "Denver", "Detroit", "LA", "NYC", "SF", "Washington"]
LABELS = {"LA": "Los Angeles", "NYC": "New York", "SF": "San Francisco"}
EDGES = [
    ("Chicago", "Denver"),
    ("Chicago", "Detroit"),
    ("Chicago", "NYC"),
    ("Chicago", "Washington"),
    ("Denver", "LA"),
    ("Denver", "SF"),
    ("Detroit", "NYC"),
    ("LA", "SF"),
    ("NYC", "Washington"),
]
RADIUS, LABEL_DIST, EDGE = 5, 5, 100
REPEL = 1.5 * EDGE


def build(variation: str = "") -> DiagramBuilder:
    db = DiagramBuilder(400, 400, variation, stages=["dots", "text"])
    dot, text, corners = {}, {}, {}
    for v in CITIES:
        dot[v] = db.circle(
            name=f"{v}.dot",
            center=(db.input(stages="dots"), db.input(stages="dots")),
            r=RADIUS,
            fill_color="#000000",
        )
        text[v] = db.text(
            name=f"{v}.text",
            string=LABELS.get(v, v),
            fill_color="#000000",
            font_family="serif",
            font_size="18px",
            stroke_color="#ffffff",
            stroke_width=4,
            passthrough={"paintOrder": "stroke"},
        )
        half = (text[v].width / 2, text[v].height / 2)
        corners[v] = (text[v].center - half, text[v].center + half)  # the label's box
        db.layer(dot[v], text[v])
        db.encourage(objectives.equal(fn.shapeDistance(dot[v], text[v]), LABEL_DIST), stages="text")

    for u, v in combinations(CITIES, 2):
        d = fn.vdist(dot[u].center, dot[v].center)
        # equation 6 of Incremental Potential Contact (ipc-sim.github.io): a barrier near REPEL
        db.encourage(objectives.minimal(fn.max(0, -fn.sqr(d - REPEL) * fn.log(d / REPEL))), stages="dots")
        db.ensure(constraints.disjoint(text[u], text[v], LABEL_DIST), stages="text")

    for u, v in EDGES:
        start, end = dot[u].center, dot[v].center
        arrow = db.line(name=f"Edge_{u}_{v}.arrow", start=start, end=end, stroke_color="#000000")
        db.layer(arrow, dot[u])
        db.layer(arrow, dot[v])
        db.encourage(objectives.less_than(fn.vdist(start, end), EDGE), stages="dots")
        for w in (u, v, *(w for w in CITIES if w not in (u, v))):  # its own ends, then every other label
            clearance = fn.rectLineDist(*corners[w], start, end)
            db.encourage(objectives.maximal(fn.min(LABEL_DIST, clearance)), stages="text")
    return db
