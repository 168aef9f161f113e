"""Parity of a builder program with its Penrose trio: the same shapes, the same energy function.

`unknown_keys(diagram, names)` names each unknown by where it first appears bare in a property of
a shape both diagrams have (shape name without backticks, property, component), in a canonical
order, so a trio's unknowns and a program's can be matched whatever order each made them in (local
shapes, named by their block in a Style, are left out).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from energies.diagram import Diagram, ShapeInstance
from energies.expr import Node


def all_shapes(diagram: Diagram) -> list[ShapeInstance]:
    out, todo = [], list(diagram.shapes)
    while todo:
        s = todo.pop()
        out.append(s)
        todo.extend(m for m in s.props.get("shapes", []) if isinstance(m, ShapeInstance))
    return out


def plain_name(name: str) -> str:
    return name.replace("`", "")


def unknown_keys(diagram: Diagram, names: set[str]) -> dict[str, int]:
    """key -> slot, for every unknown that a property of a shape named in `names` holds bare."""
    keys: dict[int, str] = {}
    shapes = [s for s in all_shapes(diagram) if plain_name(s.name) in names]
    for s in sorted(shapes, key=lambda s: plain_name(s.name)):
        for prop in sorted(s.props):
            value = s.props[prop]
            parts = (
                [("", value)]
                if isinstance(value, Node)
                else list(enumerate(value))
                if isinstance(value, list)
                else []
            )
            for i, v in parts:
                if isinstance(v, Node) and v.op == "input" and v.static not in keys:
                    keys[v.static] = f"{plain_name(s.name)}.{prop}[{i}]"
    return {k: slot for slot, k in keys.items()}


def random_points(trio: Diagram, built: Diagram, rng: np.random.Generator, n: int) -> list[tuple[Any, Any]]:
    """`n` pairs (x_trio, x_built) of one random layout: the program's inputs uniform in +-300 px,
    each trio unknown taking the value of the input with its key. A trio unknown no shape holds (a
    Style's unused `?`) gets a random value of its own: if anything read it, the energies would
    differ. Every builder input must have a key the trio has."""
    names = {plain_name(s.name) for s in all_shapes(trio)} & {s.name for s in all_shapes(built)}
    t, b = unknown_keys(trio, names), unknown_keys(built, names)
    n_b = len(built.unknowns.x0)
    assert len(b) == n_b, f"builder inputs no shape holds: {set(range(n_b)) - set(b.values())}"
    assert set(b) <= set(t), f"builder keys the trio lacks: {sorted(set(b) - set(t))}"
    out = []
    for _ in range(n):
        xb = rng.uniform(-300, 300, n_b)
        xt = rng.uniform(-300, 300, len(trio.unknowns.x0))
        for key, slot in t.items():
            xt[slot] = xb[b[key]]
        out.append((xt, xb))
    return out


def shape_summary(diagram: Diagram) -> list[tuple[str, list[str]]]:
    """Each shape's kind and property names, sorted (names of local shapes differ between the two)."""
    return sorted((s.kind, sorted(p for p in s.props if p != "name")) for s in all_shapes(diagram))
