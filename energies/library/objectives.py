"""Penrose's objective dictionary (lib/Objectives.ts): scalars to minimize, by Penrose's names, argument
orders, defaults and constants. All are polymorphic macros (docs/energies-design.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from adcore import select

from . import pmath as am
from .bbox import bbox_of, shape_center
from .constraints import is_equiangular, is_equilateral
from .fn_ops import (
    EPS_DENOM,
    add_n,
    div,
    pt,
    sqr,
    vdist,
    vdistsq,
    vdot,
    vnormalize,
    vsub,
)
from .geometry import Pt, Scalar, ShapeQueryError, closest_pt_pt_seg, is_linelike, is_rectlike, lerp2, prop

# Penrose multiplies notTooClose by this because its raw magnitude is small.
NOT_TOO_CLOSE_WEIGHT = 10e6
# Penrose samples a line at this many points (k = i / 16, i < 16) when repelling it.
LINE_SAMPLES = 16


def minimal(x: Scalar) -> Scalar:
    return x


def maximal(x: Scalar) -> Scalar:
    return -x


def equal(x: Scalar, y: Scalar) -> Scalar:
    return sqr(x - y)


def near_vec(v1: Sequence[Scalar], v2: Sequence[Scalar], offset: Scalar) -> Scalar:
    return vdistsq(v1, v2) - sqr(offset)


def greater_than(x: Scalar, y: Scalar) -> Scalar:
    return sqr(am.max(0.0, y - x))


def less_than(x: Scalar, y: Scalar) -> Scalar:
    return sqr(am.max(0.0, x - y))


def repel_pt(weight: Scalar, a: Sequence[Scalar], b: Sequence[Scalar]) -> Scalar:
    return div(weight, vdistsq(a, b) + EPS_DENOM)


def repel_scalar(c: Scalar, d: Scalar) -> Scalar:
    return div(1.0, sqr(c - d) + EPS_DENOM)


def in_direction(p: Pt, p_ref: Pt, direction: Pt, offset: Scalar) -> Scalar:
    """The component of p - pRef along `direction` (normalized) should equal `offset`."""
    return sqr(vdot(vsub(p, p_ref), vnormalize(direction)) - offset)


def below(bottom: Any, top: Any, offset: Scalar = 100.0) -> Scalar:
    return in_direction(shape_center(bottom), shape_center(top), [0.0, 1.0], offset)


def above(top: Any, bottom: Any, offset: Scalar = 100.0) -> Scalar:
    return in_direction(shape_center(top), shape_center(bottom), [0.0, 1.0], offset)


def leftwards(left: Any, right: Any, offset: Scalar = 100.0) -> Scalar:
    return in_direction(shape_center(left), shape_center(right), [1.0, 0.0], offset)


def rightwards(right: Any, left: Any, offset: Scalar = 100.0) -> Scalar:
    return in_direction(shape_center(right), shape_center(left), [1.0, 0.0], offset)


def same_center(s1: Any, s2: Any) -> Scalar:
    return vdistsq(shape_center(s1), shape_center(s2))


def not_too_close(s1: Any, s2: Any, weight: Scalar = 10.0) -> Scalar:
    if is_linelike(s1):
        c2 = shape_center(s2)
        start, end = pt(prop(s1, "start")), pt(prop(s1, "end"))
        samples = [lerp2(start, end, i / LINE_SAMPLES) for i in range(LINE_SAMPLES)]
        res = weight * add_n([div(weight, vdistsq(c2, p) + EPS_DENOM) for p in samples])
    else:
        res = div(1.0, vdistsq(shape_center(s1), shape_center(s2)) + EPS_DENOM)
    return res * NOT_TOO_CLOSE_WEIGHT


def near(s1: Any, s2: Any, offset: Scalar = 10.0) -> Scalar:
    return am.abs(vdistsq(shape_center(s1), shape_center(s2))) - sqr(offset)


def near_pt(s1: Any, x: Scalar, y: Scalar) -> Scalar:
    return vdistsq(shape_center(s1), [x, y])


def non_degenerate_angle(s0: Any, s1: Any, s2: Any, strength: Scalar = 20.0, range: Scalar = 10.0) -> Scalar:  # noqa: A002
    """Push the angle at s1 away from 0 and 180 degrees. Penrose compares |cos| with `range` converted to
    radians, which we keep as is."""
    c0, c1, c2 = shape_center(s0), shape_center(s1), shape_center(s2)
    cosine = am.abs(vdot(vnormalize(vsub(c0, c1)), vnormalize(vsub(c2, c1))))
    return select(cosine < range * (math.pi / 180.0), 0.0, strength * cosine)


def _check_line(s: Any, name: str) -> None:
    if s.kind != "Line":
        raise ShapeQueryError(f"{name}: the first shape must be a Line, got a {s.kind}")


def _check_rectlike(s: Any, name: str) -> None:
    if not is_rectlike(s):
        raise ShapeQueryError(f"{name}: expected a Rectangle, Text, Equation or Image, got a {s.kind}")


def center_label_above(s1: Any, s2: Any, w: Scalar) -> Scalar:
    _check_line(s1, "centerLabelAbove")
    _check_rectlike(s2, "centerLabelAbove")
    start, end = prop(s1, "start"), prop(s1, "end")
    mx, my = (start[0] + end[0]) / 2.0, (start[1] + end[1]) / 2.0
    box = bbox_of(s2)
    return (sqr(mx - box["center"][0]) + sqr(my + box["height"] * 1.1 - box["center"][1])) * w


def center_label(s1: Any, s2: Any, w: Scalar, padding: Scalar = 10.0) -> Scalar:
    """A line's label sits a label-width (plus padding) from its midpoint; a box's label at its center.
    Like Penrose, `w` is accepted but not used."""
    _check_rectlike(s2, "centerLabel")
    if is_linelike(s1):
        start, end = prop(s1, "start"), prop(s1, "end")
        mid = [(start[0] + end[0]) / 2.0, (start[1] + end[1]) / 2.0]
        box = bbox_of(s2)
        return vdistsq(mid, box["center"]) - sqr(box["width"]) + sqr(padding)
    _check_rectlike(s1, "centerLabel")
    return vdistsq(shape_center(s1), shape_center(s2))


def point_line_dist(point: Pt, s1: Any, padding: Scalar) -> Scalar:
    _check_line(s1, "pointLineDist")
    closest = closest_pt_pt_seg(pt(point), pt(prop(s1, "start")), pt(prop(s1, "end")))
    return sqr(vdist(closest, pt(point)) - padding)


def is_regular(points: Sequence[Pt], closed: bool) -> Scalar:
    return is_equilateral(points, closed) + is_equiangular(points, closed)


OBJECTIVES: dict[str, Callable[..., Scalar]] = {
    "minimal": minimal,
    "maximal": maximal,
    "equal": equal,
    "nearVec": near_vec,
    "greaterThan": greater_than,
    "lessThan": less_than,
    "repelPt": repel_pt,
    "repelScalar": repel_scalar,
    "inDirection": in_direction,
    "below": below,
    "above": above,
    "leftwards": leftwards,
    "rightwards": rightwards,
    "sameCenter": same_center,
    "notTooClose": not_too_close,
    "near": near,
    "nearPt": near_pt,
    "nonDegenerateAngle": non_degenerate_angle,
    "centerLabelAbove": center_label_above,
    "centerLabel": center_label,
    "pointLineDist": point_line_dist,
    "isRegular": is_regular,
    "isEquilateral": is_equilateral,
    "isEquiangular": is_equiangular,
}

__all__ = ["OBJECTIVES"]
