"""From a laid-out diagram to the renderer's values: `concrete_shapes(shapes, x)` evaluates every
shape property at the optimum `x` and converts it to the type the renderer draws (floats, points,
colors, path commands, nested shapes); properties no shape type declares pass through as given.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from energies.diagram import ShapeInstance
from energies.expr import evaluate
from energies.limits import check_deadline
from energies.shapes import SHAPE_TYPES, Color, PropType, Shape


def concrete_shapes(shapes: Sequence[ShapeInstance], x: np.ndarray) -> list[Shape]:
    memo: dict[int, Any] = {}
    out = []
    for s in shapes:
        check_deadline("computing the shapes' final properties")
        out.append(concrete_shape(s, x, memo))
    return out


def concrete_shape(s: ShapeInstance, x: np.ndarray, memo: dict[int, Any]) -> Shape:
    spec = SHAPE_TYPES.get(s.kind)
    props: dict[str, Any] = {}
    passthrough: dict[str, str | float] = {}
    for name, value in s.props.items():
        v = evaluate(value, x, memo)
        prop = spec.props.get(name) if spec is not None else None
        if prop is None:
            if isinstance(v, (str, int, float)) and not isinstance(v, bool):
                passthrough[name] = v
            continue
        props[name] = convert(prop.type, v, x, memo)
    return Shape(s.kind, s.name, props, passthrough)


def convert(t: PropType, v: Any, x: np.ndarray, memo: dict[int, Any]) -> Any:
    if t is PropType.FLOAT:
        return float(v)
    if t is PropType.VECTOR:
        return tuple(float(c) for c in v)
    if t is PropType.PT_LIST:
        return tuple(tuple(float(c) for c in p) for p in v)
    if t is PropType.COLOR:
        if isinstance(v, Color):
            return v
        r, g, b, *alpha = (float(c) for c in v)  # rgba (docs/energies-design.md); alpha defaults to 1
        return Color(r, g, b, alpha[0] if alpha else 1.0)
    if t is PropType.PATH_DATA:
        from energies.library.paths import concrete_path

        return concrete_path(v)
    if t is PropType.SHAPE_LIST:
        return tuple(concrete_shape(m, x, memo) if isinstance(m, ShapeInstance) else m for m in v)
    if t is PropType.CLIP_DATA:
        return concrete_shape(v, x, memo) if isinstance(v, ShapeInstance) else v
    if t is PropType.BOOL:
        return bool(v)
    return v if isinstance(v, str) else str(v)
