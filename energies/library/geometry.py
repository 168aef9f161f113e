"""Shape-kind tests and property access for the library's geometry, and two point constructions.

Vector and scalar helpers are `fn_ops`' (the one set, with Penrose's summation order); bounding boxes
live in `bbox.py` (with the shape queries that fall back to a box: `polygon_like_points`,
`shape_center`), polygon/Minkowski machinery in `polygons.py`, ellipses in `ellipses.py` and the
shape-pair dispatch in `distance.py`; each of them imports this module, never the reverse. Every
function is a polymorphic macro (docs/energies-design.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import pmath as am
from .fn_ops import EPS_DENOM, Num, Vector, clamp, div, pt, vadd, vdistsq, vdot, vmul, vsub

# The annotations of goal parameters (constraints and objectives): the Style evaluator reads them by
# name to check a goal's arguments (energies.style.library_bridge), so they keep these two names.
Scalar = Any  # a number: a float or a traced scalar (fn_ops.Num)
Pt = list  # a point: a list of Scalars (fn_ops.Vector)

RECTLIKE = frozenset({"Rectangle", "Text", "Equation", "Image"})
POLYGONLIKE = frozenset({"Polygon", "Polyline"})


# Which properties of each shape kind the library reads (the energy compiler uses this to know which
# props of a shape enter an energy). Line arrowheads are absent on purpose: Penrose's bounding box of a
# Line covers the stroke only.
GEOMETRIC_PROPS: dict[str, tuple[str, ...]] = {
    "Circle": ("center", "r", "strokeWidth"),
    "Ellipse": ("center", "rx", "ry", "strokeWidth"),
    "Rectangle": ("center", "width", "height", "rotation", "strokeWidth"),
    "Text": ("center", "width", "height", "rotation"),
    "Equation": ("center", "width", "height", "rotation"),
    "Image": ("center", "width", "height", "rotation"),
    "Line": ("start", "end", "strokeWidth"),
    "Polygon": ("points", "scale"),
    "Polyline": ("points", "scale"),
    "Path": ("d",),
    "Group": ("shapes", "clipPath"),
}


class ShapeQueryError(ValueError):
    """A library function got a shape it is not defined for (names the function and the shape kind)."""


def lerp2(a: Sequence[Num], b: Sequence[Num], k: float) -> Vector:
    return [a[0] * (1.0 - k) + b[0] * k, a[1] * (1.0 - k) + b[1] * k]


def closest_pt_pt_seg(p: Sequence[Num], start: Sequence[Num], end: Sequence[Num]) -> Vector:
    """Penrose's closestPt_PtSeg: projection onto the segment, with its length floor of 10e-3."""
    lensq = am.max(vdistsq(start, end), 10e-3)
    d = vsub(end, start)
    t = clamp(0.0, 1.0, div(vdot(vsub(p, start), d), lensq + EPS_DENOM))
    return vadd(start, vmul(t, d))


def prop(shape: Any, name: str, where: str = "") -> Any:
    try:
        return shape.props[name]
    except KeyError:
        raise ShapeQueryError(
            f"{where or 'geometry'}: shape {getattr(shape, 'name', '')!s} of kind {shape.kind} has no "
            f"property {name!r}"
        ) from None


def is_rectlike(shape: Any) -> bool:
    return shape.kind in RECTLIKE


def is_polygonlike(shape: Any) -> bool:
    return shape.kind in POLYGONLIKE


def is_linelike(shape: Any) -> bool:
    return shape.kind == "Line"


def points_of(shape: Any) -> list[Vector]:
    return [pt(p) for p in prop(shape, "points")]


def unsupported_kind(fn: str, s: Any) -> ShapeQueryError:
    return ShapeQueryError(f"{fn}: shape kind {getattr(s, 'kind', type(s).__name__)} is not supported")
