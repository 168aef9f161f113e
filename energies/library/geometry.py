"""Shared geometry of the library: 2D vector macros, shape-kind tests and the props each kind exposes.

Everything here is a polymorphic macro (docs/energies-design.md): points are Python lists of scalars,
scalars are floats or traced adcore values, and no code branches in Python on a value. Bounding boxes
live in `bbox.py` (with the shape queries that fall back to a box: `polygon_like_points`,
`shape_center`), polygon/Minkowski machinery in `polygons.py`, ellipses in `ellipses.py` and the
shape-pair dispatch in `distance.py`; each of them imports this module, never the reverse.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from adcore import binary, select

from . import pmath as am

Scalar = Any  # float or traced adcore Real
Pt = list  # [x, y] of Scalars

# Penrose's EPS_DENOM: keeps denominators (normalization, repulsion) away from zero.
EPS_DENOM = 1e-5

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


# -- scalars ---------------------------------------------------------------------------------------


def div(a: Scalar, b: Scalar) -> Scalar:
    """a / b with IEEE semantics on plain floats too (inf/NaN instead of ZeroDivisionError)."""
    return binary("div", a, b, real=True)


def sqr(x: Scalar) -> Scalar:
    return x * x


def sqrt(x: Scalar) -> Scalar:
    """Penrose's sqrt: exact value, derivative clamped at sqrt(x) >= 1e-5 so sqrt(0) stays usable."""
    return am.sqrt(x)


def relu(x: Scalar) -> Scalar:
    return am.max(x, 0.0)


def min_n(xs: Sequence[Scalar]) -> Scalar:
    out = xs[0]
    for x in xs[1:]:
        out = am.min(out, x)
    return out


def max_n(xs: Sequence[Scalar]) -> Scalar:
    out = xs[0]
    for x in xs[1:]:
        out = am.max(out, x)
    return out


def add_n(xs: Sequence[Scalar]) -> Scalar:
    out: Scalar = 0.0
    for x in xs:
        out = out + x
    return out


def msign(x: Scalar) -> Scalar:
    """Penrose's msign: -1 below zero, else 1."""
    return select(x < 0.0, -1.0, 1.0)


def clamp(lo: Scalar, hi: Scalar, x: Scalar) -> Scalar:
    return am.max(lo, am.min(hi, x))


# -- vectors ---------------------------------------------------------------------------------------


def pt(v: Sequence[Scalar]) -> Pt:
    """A 2D point as a fresh list (accepts tuples and traced arrays)."""
    return [v[0], v[1]]


def vadd(u: Sequence[Scalar], v: Sequence[Scalar]) -> list[Scalar]:
    return [a + b for a, b in zip(u, v)]


def vsub(u: Sequence[Scalar], v: Sequence[Scalar]) -> list[Scalar]:
    return [a - b for a, b in zip(u, v)]


def vneg(u: Sequence[Scalar]) -> list[Scalar]:
    return [-a for a in u]


def vmul(c: Scalar, v: Sequence[Scalar]) -> list[Scalar]:
    return [c * a for a in v]


def vdiv(v: Sequence[Scalar], c: Scalar) -> list[Scalar]:
    return [div(a, c) for a in v]


def vdot(u: Sequence[Scalar], v: Sequence[Scalar]) -> Scalar:
    return add_n([a * b for a, b in zip(u, v)])


def vnormsq(v: Sequence[Scalar]) -> Scalar:
    return add_n([a * a for a in v])


def vnorm(v: Sequence[Scalar]) -> Scalar:
    return sqrt(vnormsq(v))


def vdist(u: Sequence[Scalar], v: Sequence[Scalar]) -> Scalar:
    return vnorm(vsub(u, v))


def vdistsq(u: Sequence[Scalar], v: Sequence[Scalar]) -> Scalar:
    return vnormsq(vsub(u, v))


def vnormalize(v: Sequence[Scalar]) -> list[Scalar]:
    """v / (|v| + EPS_DENOM), Penrose's safe normalization."""
    return vdiv(v, vnorm(v) + EPS_DENOM)


def cross2(u: Sequence[Scalar], v: Sequence[Scalar]) -> Scalar:
    return u[0] * v[1] - u[1] * v[0]


def rot90(v: Sequence[Scalar]) -> Pt:
    return [-v[1], v[0]]


def vrot_degrees(v: Sequence[Scalar], degrees: Scalar) -> Pt:
    """Rotate counterclockwise by an angle in degrees (Penrose's ops.vrot)."""
    a = degrees * (math.pi / 180.0)
    c, s = am.cos(a), am.sin(a)
    return [c * v[0] - s * v[1], s * v[0] + c * v[1]]


def angle_from(u: Sequence[Scalar], v: Sequence[Scalar]) -> Scalar:
    """Signed angle from u to v in [-pi, pi]."""
    return am.atan2(cross2(u, v), vdot(u, v))


def lerp2(a: Sequence[Scalar], b: Sequence[Scalar], k: float) -> Pt:
    return [a[0] * (1.0 - k) + b[0] * k, a[1] * (1.0 - k) + b[1] * k]


def closest_pt_pt_seg(p: Sequence[Scalar], start: Sequence[Scalar], end: Sequence[Scalar]) -> Pt:
    """Penrose's closestPt_PtSeg: projection onto the segment, with its length floor of 10e-3."""
    lensq = am.max(vdistsq(start, end), 10e-3)
    d = vsub(end, start)
    t = clamp(0.0, 1.0, div(vdot(vsub(p, start), d), lensq + EPS_DENOM))
    return vadd(start, vmul(t, d))


def consecutive_pairs(items: Sequence[Any], closed: bool) -> list[tuple[Any, Any]]:
    n = len(items) if closed else len(items) - 1
    return [(items[i], items[(i + 1) % len(items)]) for i in range(max(n, 0))]


def consecutive_triples(items: Sequence[Any], closed: bool) -> list[tuple[Any, Any, Any]]:
    n = len(items) if closed else len(items) - 2
    return [(items[i], items[(i + 1) % len(items)], items[(i + 2) % len(items)]) for i in range(max(n, 0))]


# -- shapes ----------------------------------------------------------------------------------------


def kind_of(shape: Any) -> str:
    return shape.kind


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


def points_of(shape: Any) -> list[Pt]:
    return [pt(p) for p in prop(shape, "points")]


def is_closed(shape: Any) -> bool:
    if shape.kind == "Polyline":
        return False
    if shape.kind == "Polygon":
        return True
    if shape.kind == "Path":
        d = prop(shape, "d")
        return bool(d) and d[-1].cmd == "Z"
    raise ShapeQueryError(f"isClosed: shape kind {shape.kind} is not supported")


def point2(v: Any) -> list[Any]:
    """The first two coordinates of a point, as a list."""
    return [v[0], v[1]]


def unsupported_kind(fn: str, s: Any) -> ShapeQueryError:
    return ShapeQueryError(f"{fn}: shape kind {getattr(s, 'kind', type(s).__name__)} is not supported")
