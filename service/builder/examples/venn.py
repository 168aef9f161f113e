"""Venn diagram of a tree of sets: set-theory-domain's tree-venn (venn.style), rebuilt in Python.

Every set is a circle with its name inside; a subset sits inside its superset, clear of the
superset's label; sets said not to intersect are disjoint.
"""

from __future__ import annotations

from service.builder import DiagramBuilder, constraints, objectives
from service.builder import functions as fn

TRIO = "set-theory-domain/tree-venn.trio.json"
SETS = "ABCDEFG"
SUBSETS = [("B", "A"), ("C", "A"), ("D", "B"), ("E", "B"), ("F", "C"), ("G", "C")]  # (subset, superset)
DISJOINT = [("E", "D"), ("F", "G"), ("B", "C")]


def build(variation: str = "MonsoonCaterpillar95943") -> DiagramBuilder:
    db = DiagramBuilder(800, 700, variation)
    icon, text = {}, {}
    for s in SETS:
        icon[s] = db.circle(name=f"{s}.icon")
        text[s] = db.equation(name=f"{s}.text", string=s, font_size="32px")
        db.ensure(constraints.contains(icon[s], text[s]))
        db.encourage(objectives.equal(fn.norm(text[s].center - icon[s].center), 0))
        db.layer(icon[s], text[s])
    for x, y in SUBSETS:
        db.ensure(constraints.disjoint(text[y], icon[x], 10))
        db.ensure(constraints.contains(icon[y], icon[x], 5))
        db.layer(icon[y], icon[x])
    for x, y in DISJOINT:
        db.ensure(constraints.disjoint(icon[x], icon[y]))
    return db
