"""Every objective of Penrose's dictionary: values against hand-derived numbers and numpy, gradients
against finite differences, one through Wasm."""

from __future__ import annotations

import math

import numpy as np
import pytest

import adcore
from energies.library.geometry import ShapeQueryError
from energies.library.objectives import OBJECTIVES

from .support import Shape, check_gradient, traced

O = OBJECTIVES

PENROSE_OBJECTIVES = [
    "minimal",
    "maximal",
    "equal",
    "nearVec",
    "greaterThan",
    "lessThan",
    "repelPt",
    "repelScalar",
    "inDirection",
    "below",
    "above",
    "leftwards",
    "rightwards",
    "sameCenter",
    "notTooClose",
    "near",
    "nearPt",
    "nonDegenerateAngle",
    "centerLabelAbove",
    "centerLabel",
    "pointLineDist",
    "isRegular",
    "isEquilateral",
    "isEquiangular",
]

EPS = 1e-5  # Penrose's EPS_DENOM


def circle(c, r=1.0):
    return Shape("Circle", {"center": list(c), "r": r, "strokeWidth": 0.0})


def text(c, w=10.0, h=4.0):
    return Shape("Text", {"center": list(c), "width": w, "height": h, "rotation": 0})


def line(s, e, sw=1.0):
    return Shape("Line", {"start": list(s), "end": list(e), "strokeWidth": sw})


def test_all_24_objectives_by_penrose_names() -> None:
    assert len(PENROSE_OBJECTIVES) == 24
    assert set(O) == set(PENROSE_OBJECTIVES)


def test_scalar_objectives_values() -> None:
    assert O["minimal"](3.5) == 3.5 and O["maximal"](3.5) == -3.5
    assert O["equal"](2.0, 5.0) == 9.0
    assert O["nearVec"]([0.0, 0.0], [3.0, 4.0], 2.0) == pytest.approx(25.0 - 4.0)
    assert O["greaterThan"](1.0, 4.0) == 9.0 and O["greaterThan"](5.0, 4.0) == 0.0
    assert O["lessThan"](7.0, 4.0) == 9.0 and O["lessThan"](1.0, 4.0) == 0.0
    assert O["repelPt"](2.0, [0.0, 0.0], [3.0, 4.0]) == pytest.approx(2.0 / (25.0 + EPS))
    assert O["repelScalar"](1.0, 4.0) == pytest.approx(1.0 / (9.0 + EPS))


def test_direction_objectives_values() -> None:
    # p - pRef = (3, 4); along the normalized (0, 2): 4 * 2 / (2 + 1e-5)
    along = 8.0 / (2.0 + EPS)
    assert O["inDirection"]([3.0, 5.0], [0.0, 1.0], [0.0, 2.0], 1.0) == pytest.approx((along - 1.0) ** 2)
    a, b = circle([1.0, 2.0]), circle([4.0, 30.0])
    up = 1.0 / (1.0 + EPS)  # (0, 1) normalized the Penrose way
    assert O["below"](a, b) == pytest.approx(((2.0 - 30.0) * up - 100.0) ** 2)
    assert O["above"](b, a, 20.0) == pytest.approx(((30.0 - 2.0) * up - 20.0) ** 2)
    assert O["leftwards"](a, b) == pytest.approx(((1.0 - 4.0) * up - 100.0) ** 2)
    assert O["rightwards"](b, a, 3.0) == pytest.approx(((4.0 - 1.0) * up - 3.0) ** 2)


def test_center_objectives_values() -> None:
    a, b = circle([1.0, 2.0]), text([4.0, 6.0])
    assert O["sameCenter"](a, b) == pytest.approx(25.0)
    assert O["near"](a, b) == pytest.approx(25.0 - 100.0)
    assert O["near"](a, b, 1.0) == pytest.approx(24.0)
    assert O["nearPt"](a, 4.0, -2.0) == pytest.approx(9.0 + 16.0)
    # shapes without a center use the center of their bounding box
    ln = line([0.0, 0.0], [10.0, 4.0])
    assert O["nearPt"](ln, 0.0, 0.0) == pytest.approx(5.0**2 + 2.0**2, rel=1e-9)


def test_not_too_close_values() -> None:
    a, b = circle([0.0, 0.0]), circle([3.0, 4.0])
    assert O["notTooClose"](a, b) == pytest.approx(1e7 / (25.0 + EPS))
    # a line is sampled at 16 points (k = i / 16), each repelled with weight w, all scaled by w again
    ln = line([-8.0, 1.0], [8.0, 1.0])
    samples = np.linspace(-8.0, 8.0, 17)[:16]
    want = 1e7 * 3.0 * sum(3.0 / (x**2 + 1.0 + EPS) for x in samples)
    assert O["notTooClose"](ln, circle([0.0, 0.0]), 3.0) == pytest.approx(want, rel=1e-12)


def test_non_degenerate_angle_values() -> None:
    s0, s1 = circle([10.0, 0.0]), circle([0.0, 0.0])
    # a right angle: |cos| = 0 < range in radians, so nothing to push
    assert O["nonDegenerateAngle"](s0, s1, circle([0.0, 5.0])) == 0.0
    # 20 degrees: |cos 20deg| (unit vectors normalized with +1e-5) is above 10 * pi / 180
    c = abs(math.cos(math.radians(20)) * 10 * 5 / ((10 + EPS) * (5 + EPS)))
    s2 = circle([5 * math.cos(math.radians(20)), 5 * math.sin(math.radians(20))])
    assert O["nonDegenerateAngle"](s0, s1, s2) == pytest.approx(20.0 * c)
    assert O["nonDegenerateAngle"](s0, s1, s2, 2.0, 80.0) == 0.0  # cos(20deg) < 80 * pi / 180


def test_label_objectives_values() -> None:
    ln, label = line([0.0, 0.0], [10.0, 4.0]), text([7.0, 9.0], 6.0, 2.0)
    # midpoint (5, 2); label box center (7, 9), height 2
    assert O["centerLabelAbove"](ln, label, 2.0) == pytest.approx(((5 - 7) ** 2 + (2 + 2.2 - 9) ** 2) * 2.0)
    assert O["centerLabel"](ln, label, 1.0) == pytest.approx((4 + 49) - 36 + 100)
    assert O["centerLabel"](ln, label, 1.0, 3.0) == pytest.approx((4 + 49) - 36 + 9)
    box = Shape(
        "Rectangle", {"center": [1.0, 1.0], "width": 3.0, "height": 3.0, "rotation": 0.0, "strokeWidth": 0}
    )
    assert O["centerLabel"](box, label, 1.0) == pytest.approx(36 + 64)
    with pytest.raises(ShapeQueryError, match="centerLabelAbove: the first shape must be a Line"):
        O["centerLabelAbove"](box, label, 1.0)


def test_point_line_dist_values() -> None:
    ln = line([0.0, 0.0], [10.0, 0.0])
    # closest point (4, 0) is 3 away; Penrose divides by |d|^2 + 1e-5
    t = 40.0 / (100.0 + EPS)
    d = math.hypot(4 - 10 * t, 3)
    assert O["pointLineDist"]([4.0, 3.0], ln, 1.0) == pytest.approx((d - 1.0) ** 2)
    assert O["pointLineDist"]([-3.0, 4.0], ln, 5.0) == pytest.approx(0.0, abs=1e-18)  # clamped to the start


def test_polygon_shape_objectives_values() -> None:
    square = [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]
    assert O["isRegular"](square, True) == pytest.approx(0.0, abs=1e-20)
    kite = np.array([[0.0, 0.0], [2.0, 0.0], [3.0, 2.0], [0.0, 1.0]])
    sides = np.linalg.norm(np.roll(kite, -1, 0) - kite, axis=1)
    e1 = ((sides - sides.mean()) ** 2).sum()
    u = np.roll(kite, -1, 0) - kite
    v = np.roll(u, -1, 0)
    ang = np.arctan2(u[:, 0] * v[:, 1] - u[:, 1] * v[:, 0], (u * v).sum(1))
    e2 = ((ang - ang.mean()) ** 2).sum()
    assert O["isEquilateral"](kite.tolist(), True) == pytest.approx(e1)
    assert O["isEquiangular"](kite.tolist(), True) == pytest.approx(e2)
    assert O["isRegular"](kite.tolist(), True) == pytest.approx(e1 + e2)


LINE = line([-20.0, 3.0], [17.0, 9.0])
LABEL = text([5.0, 11.0], 20.0, 10.0)
CHAIN = [[0.0, 0.0], [10.0, 1.0], [5.0, 3.0], [12.0, 8.0], [-1.0, 6.0]]

GRADIENT_CASES = {
    "minimal": (2.0,),
    "maximal": (2.0,),
    "equal": (1.0, 3.0),
    "nearVec": ([1.0, 2.0], [4.0, -3.0], 2.0),
    "greaterThan": (1.0, 3.0),
    "lessThan": (4.0, 3.0),
    "repelPt": (2.0, [1.0, 2.0], [4.0, -3.0]),
    "repelScalar": (1.0, 3.0),
    "inDirection": ([3.0, 5.0], [0.5, 1.0], [0.3, 2.0], 1.5),
    "below": (circle([1.0, 2.0]), LABEL, 30.0),
    "above": (LABEL, circle([1.0, 2.0]), 30.0),
    "leftwards": (circle([1.0, 2.0]), LINE, 30.0),
    "rightwards": (LABEL, circle([1.0, 2.0]), 30.0),
    "sameCenter": (circle([1.0, 2.0]), LINE),
    "notTooClose": (LINE, circle([1.0, 2.0]), 3.0),
    "near": (circle([1.0, 2.0]), LABEL, 4.0),
    "nearPt": (LINE, 3.0, -1.0),
    "nonDegenerateAngle": (circle([10.0, 0.5]), circle([0.0, 0.0]), circle([5.0, 1.5]), 20.0, 10.0),
    "centerLabelAbove": (LINE, LABEL, 2.0),
    "centerLabel": (LINE, LABEL, 1.0, 3.0),
    "pointLineDist": ([4.0, 3.0], LINE, 1.0),
    "isRegular": (CHAIN, True),
    "isEquilateral": (CHAIN, True),
    "isEquiangular": (CHAIN, False),
}


@pytest.mark.parametrize("name", sorted(GRADIENT_CASES))
def test_objective_gradient_matches_finite_differences(name: str) -> None:
    check_gradient(O[name], *GRADIENT_CASES[name])


def test_not_too_close_between_centers_gradient() -> None:
    check_gradient(O["notTooClose"], circle([1.0, 2.0]), LABEL)


def test_every_objective_has_a_gradient_case() -> None:
    assert set(GRADIENT_CASES) == set(O)


def test_wasm_agrees_with_the_interpreter() -> None:
    value, grad, flat = traced(O["notTooClose"], GRADIENT_CASES["notTooClose"])
    assert adcore.compile(value)(flat) == pytest.approx(adcore.interp(value)(flat), rel=1e-12)
    assert adcore.compile(grad)(flat) == pytest.approx(adcore.interp(grad)(flat), rel=1e-9)
