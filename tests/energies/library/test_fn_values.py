"""Values of the scalar, vector, matrix and color functions against independent oracles (the math
module, numpy, scipy's rotations, colorsys, and hand-derived numbers)."""

from __future__ import annotations

import colorsys
import math

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from energies.library.fn_colors import to_shape_color
from energies.library.functions import FUNCTIONS
from energies.shapes import Color

from .fn_fixtures import LINE1, M3, M4, P, Q, R
from .fn_support import Shape


def f(name: str, *args: object) -> object:
    return FUNCTIONS[name].apply(None, *args)


def close(got: object, want: object, rtol: float = 1e-12, atol: float = 1e-12) -> None:
    np.testing.assert_allclose(np.array(got, dtype=float), np.array(want, dtype=float), rtol=rtol, atol=atol)


UNARY = {
    "acos": math.acos, "acosh": math.acosh, "asin": math.asin, "asinh": math.asinh, "atan": math.atan,
    "atanh": math.atanh, "cbrt": np.cbrt, "ceil": math.ceil, "cos": math.cos, "cosh": math.cosh,
    "exp": math.exp, "expm1": math.expm1, "floor": math.floor, "log": math.log, "log2": math.log2,
    "log10": math.log10, "log1p": math.log1p, "sin": math.sin, "sinh": math.sinh, "tan": math.tan,
    "tanh": math.tanh, "trunc": math.trunc, "sqrt": math.sqrt, "abs": abs,
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_math_matches_the_math_module(name: str) -> None:
    for x in (0.3, 0.75, 1.6, 2.5):
        try:
            want = float(UNARY[name](x))
        except ValueError:
            want = math.nan
        got = f(name, x)
        assert (math.isnan(want) and math.isnan(got)) or got == pytest.approx(want, rel=1e-15, abs=1e-15)


def test_scalar_functions_by_hand() -> None:
    assert f("mod", -7.25, 2.0) == pytest.approx(0.75)  # sign of the divisor, unlike JavaScript's %
    assert f("mod", 7.25, -2.0) == pytest.approx(-0.75)
    assert f("atan2", 0.0, 1.0) == pytest.approx(math.pi / 2)  # atan2(x, y): angle of the vector (x, y)
    assert f("atan2", -1.0, 0.0) == pytest.approx(math.pi)
    assert [f("round", x) for x in (2.5, -2.5, 2.49, -0.6)] == [3.0, -2.0, 2.0, -1.0]  # JavaScript's rounding
    assert [f("sign", x) for x in (-3.0, 0.0, 2.0)] == [-1.0, 0.0, 1.0]
    assert f("pow", 2.0, 10.0) == 1024.0 and f("sqr", -3.0) == 9.0
    assert f("max", 1.0, 2.0) == 2.0 and f("min", 1.0, 2.0) == 1.0
    assert f("toRadians", 180.0) == pytest.approx(math.pi) and f("toDegrees", math.pi / 2) == pytest.approx(
        90
    )
    assert f("MathPI") == math.pi and f("MathE") == math.e
    assert f("average2", 1.0, 4.0) == 2.5


def test_list_functions() -> None:
    xs = [3.0, -1.0, 2.5, 7.0]
    assert f("sum", xs) == 11.5 and f("maxList", xs) == 7.0 and f("minList", xs) == -1.0
    assert f("count", xs) == 4.0 and f("average", xs) == 11.5 / 4 and f("average", []) == 0.0
    assert f("get", xs, 2) == 2.5 and f("oneBasedElement", [P, Q, R], 2) == Q
    assert f("repeat", 3, 1.5) == [1.5, 1.5, 1.5]
    assert f("TeXify", "a_b_c") == "{a}_{{b}_{{c}}}" and f("TeXify", "x") == "{x}"
    with pytest.raises(ValueError, match="out of range"):
        f("get", xs, 4)
    with pytest.raises(ValueError, match="integer"):
        f("oneBasedElement", [P, Q], 1.5)


# -- vectors ------------------------------------------------------------------------------------------------


def test_vector_functions_match_numpy() -> None:
    u, v = np.array([1.0, 2.0, -0.5]), np.array([0.3, -1.1, 2.0])
    assert f("dot", list(u), list(v)) == pytest.approx(u @ v)
    assert f("norm", list(u)) == pytest.approx(np.linalg.norm(u))
    assert f("normsq", list(u)) == pytest.approx(u @ u)
    assert f("vdist", list(u), list(v)) == pytest.approx(np.linalg.norm(u - v))
    assert f("vdistsq", list(u), list(v)) == pytest.approx((u - v) @ (u - v))
    assert f("vmul", 2.0, list(u)) == pytest.approx(2 * u)
    assert f("cross", list(u), list(v)) == pytest.approx(np.cross(u, v))
    np.testing.assert_allclose(f("unit", list(u)), u / (np.linalg.norm(u) + 1e-5), rtol=1e-15)
    assert f("normalize", [0.0, 0.0]) == [0.0, 0.0]  # Penrose's epsilon keeps zero vectors finite
    m = np.array(M3)
    np.testing.assert_allclose(f("mul", M3, list(u)), m @ u, rtol=1e-14)
    assert f("sumVectors", [P, Q, R]) == pytest.approx(np.sum([P, Q, R], axis=0))
    assert f("averagePoint", [P, Q, R]) == pytest.approx(np.mean([P, Q, R], axis=0))
    assert f("centerOfMass", [P, Q, R]) == pytest.approx(np.mean([P, Q, R], axis=0))
    assert f("firstPoint", [P, Q, R]) == P and f("lastPoint", [P, Q, R]) == R


def test_angles_and_rotations() -> None:
    assert f("rot90", [1.0, 2.0]) == [-2.0, 1.0]
    assert f("rotateBy", [1.0, 0.0], math.pi / 2) == pytest.approx([0.0, -1.0])  # clockwise, as Penrose
    assert f("unitVector", math.pi / 3) == pytest.approx([0.5, math.sqrt(3) / 2])
    assert f("angleOf", [-1.0, 1.0]) == pytest.approx(3 * math.pi / 4)
    # Penrose normalizes by |v| + 1e-5 and shrinks the cosine by 1e-10 before acos
    shrink = (1 / (1 + 1e-5)) * (math.sqrt(2) / (math.sqrt(2) + 1e-5)) * (1 - 1e-10)
    assert f("angleBetween", [1.0, 0.0], [-1.0, 1.0]) == pytest.approx(
        math.acos(-shrink / math.sqrt(2)), rel=1e-14
    )
    assert f("angleFrom", [1.0, 0.0], [0.0, 2.0]) == pytest.approx(math.pi / 2)
    assert f("angleFrom", [0.0, 2.0], [1.0, 0.0]) == pytest.approx(-math.pi / 2)
    assert f("cross2D", [1.0, 2.0], [3.0, 4.0]) == -2.0


def test_points_on_lines() -> None:
    assert f("midpoint", [0.0, 0.0], [2.0, 4.0]) == [1.0, 2.0]
    d = f("ptOnLine", [0.0, 0.0], [3.0, 4.0], 2.0)
    assert d == pytest.approx([1.2, 1.6], rel=1e-5)  # r along the unit direction (up to Penrose's 1e-5)
    x = f("lineLineIntersection", [0.0, 0.0], [2.0, 1.0], [0.0, 2.0], [2.0, -0.5])
    want = np.linalg.solve(np.array([[2.0, -2.0], [1.0, 2.5]]), [0.0, 2.0])  # s (2,1) = (0,2) + t (2,-2.5)
    assert x == pytest.approx([2 * want[0], want[0]])
    assert f("length", LINE1) == pytest.approx(math.hypot(2.2, 0.9))
    horizontal = Shape("Line", {"start": [0.0, 0.0], "end": [4.0, 0.0]})
    assert f("midpointOffset", horizontal, 1.0) == pytest.approx([2.0, 1.0], rel=1e-5)
    s = math.sqrt(0.5)
    close(f("chevron", horizontal, 1.0), [[2 - s, s], [2.0, 0.0], [2 - s, -s]], rtol=1e-5)
    close(f("unitMark2", [[0.0, 0.0], [4.0, 0.0]], "end", 0.5), [[4, 0.5], [4, -0.5]], rtol=1e-5)
    up = Shape("Line", {"start": [1.0, 1.0], "end": [1.0, 3.0]})
    close(f("unitMark", horizontal, up, 0.5), [[0, -0.5], [4, -0.5]], rtol=1e-5)


def test_arc_sweep_flag_and_inner_point() -> None:
    assert f("arcSweepFlag", [0.0, 0.0], [1.0, 0.0], [0.0, 1.0]) == 0.0  # counterclockwise turn
    assert f("arcSweepFlag", [0.0, 0.0], [0.0, 1.0], [1.0, 0.0]) == 1.0
    # corner at the origin between the x axis and the y axis: the point lies inside the quadrant
    x, y = f("innerPointOffset", [0.0, 0.0], [1.0, 0.0], [0.0, 1.0], 0.2)
    assert (x, y) == pytest.approx((0.2, 0.2), rel=1e-4)
    x, y = f("innerPointOffset", [0.0, 0.0], [1.0, 0.0], [0.0, -1.0], 0.2)
    assert (x, y) == pytest.approx((0.2, -0.2), rel=1e-4)


def test_triangle_centers_satisfy_their_definitions() -> None:
    p, q, r = map(np.array, (P, Q, R))
    cc = np.array(f("circumcenter", P, Q, R))
    dists = [np.linalg.norm(cc - x) for x in (p, q, r)]
    assert max(dists) - min(dists) < 1e-12
    assert f("circumradius", P, Q, R) == pytest.approx(dists[0], rel=1e-12)
    ic = np.array(f("incenter", P, Q, R))

    def line_dist(a: np.ndarray, b: np.ndarray) -> float:
        e = b - a
        return abs(e[0] * (ic - a)[1] - e[1] * (ic - a)[0]) / np.linalg.norm(e)

    sides = [line_dist(p, q), line_dist(q, r), line_dist(r, p)]
    assert max(sides) - min(sides) < 1e-12
    assert f("inradius", P, Q, R) == pytest.approx(sides[0], rel=1e-12)
    assert f("barycenter", P, Q, R) == pytest.approx(list((p + q + r) / 3))


# -- matrices -----------------------------------------------------------------------------------------------


def test_linear_algebra_matches_numpy() -> None:
    for m in (M3, M4, [[1.3, -0.4], [0.7, 2.1]]):
        a = np.array(m)
        assert f("determinant", m) == pytest.approx(np.linalg.det(a), rel=1e-13)
        np.testing.assert_allclose(f("inverse", m), np.linalg.inv(a), rtol=1e-13, atol=1e-15)
        assert f("trace", m) == pytest.approx(np.trace(a))
    assert f("identity", 3) == np.eye(3).tolist() and f("diagonal", [1.0, 2.0]) == [[1.0, 0.0], [0.0, 2.0]]
    assert f("outerProduct", [1.0, 2.0], [3.0, 4.0]) == [[3.0, 4.0], [6.0, 8.0]]
    v, w = np.array([1.0, 2.0, 3.0]), np.array([-0.5, 0.4, 2.0])
    np.testing.assert_allclose(np.array(f("crossProductMatrix", list(v))) @ w, np.cross(v, w))
    inv = f("inverse", [[1.0, 2.0], [2.0, 4.0]])  # singular: inf/NaN as Penrose, no exception
    assert not np.isfinite(np.array(inv)).all()


def test_transformations() -> None:
    theta, axis = 0.7, np.array([0.3, 0.5, 0.8])
    unit_axis = axis / np.linalg.norm(axis)
    np.testing.assert_allclose(
        f("rotate3d", theta, list(unit_axis)), Rotation.from_rotvec(theta * unit_axis).as_matrix(), atol=1e-14
    )
    close(f("rotate2d", math.pi / 2), [[0.0, -1.0], [1.0, 0.0]], atol=1e-15)
    m = np.array(f("rotate", math.pi / 2, 1.0, 2.0))
    assert m @ [1.0, 2.0, 1.0] == pytest.approx([1.0, 2.0, 1.0])  # the center is fixed
    assert m @ [2.0, 2.0, 1.0] == pytest.approx([1.0, 3.0, 1.0])
    assert f("rotate3dh", theta, list(unit_axis))[3] == [0.0, 0.0, 0.0, 1.0]
    assert f("scale", 2.0, 3.0) == [[2.0, 0.0, 0.0], [0.0, 3.0, 0.0], [0.0, 0.0, 1.0]]
    assert f("scale3dh", 2.0, 3.0, 4.0)[2][2] == 4.0 and f("scale3d", 2.0, 3.0, 4.0)[1][1] == 3.0
    close(f("skew2d", math.pi / 4, 0.0), [[1.0, 1.0], [0.0, 1.0]])
    assert f("shear2d", [1.0, 0.0], [0.0, 2.0]) == [[1.0, 2.0], [0.0, 1.0]]
    assert np.array(f("shear3d", [1.0, 0.0, 0.0], [0.0, 0.0, 1.0])) @ [0.0, 0.0, 1.0] == pytest.approx(
        [1, 0, 1]
    )
    assert f("translate", 2.0, -1.0) == [[1.0, 0.0, 2.0], [0.0, 1.0, -1.0], [0.0, 0.0, 1.0]]
    assert np.array(f("translate3dh", 1.0, 2.0, 3.0)) @ [0.0, 0.0, 0.0, 1.0] == pytest.approx([1, 2, 3, 1])
    assert f("matrix", 1.0, 2.0, 3.0, 4.0, 5.0, 6.0) == [[1.0, 3.0, 5.0], [2.0, 4.0, 6.0], [0.0, 0.0, 1.0]]
    assert f("matrix3d", *[float(k) for k in range(16)]) == [
        [float(4 * i + j) for j in range(4)] for i in range(4)
    ]
    assert f("toHomogeneousMatrix", [[1.0, 2.0], [3.0, 4.0]]) == [[1, 2, 0], [3, 4, 0], [0, 0, 1]]


def test_optional_parameters_take_penroses_defaults() -> None:
    assert f("translate", 2.0) == f("translate", 2.0, 0.0)
    assert f("skew", 0.3) == f("skew", 0.3, 0.0) and f("skew2d", 0.3) == f("skew2d", 0.3, 0.0)
    assert f("perspective", 60.0, 1.5) == f("perspective", 60.0, 1.5, 0.1, 100.0)
    assert f("ortho", -1.0, 1.0, -1.0, 1.0) == f("ortho", -1.0, 1.0, -1.0, 1.0, 0.1, 100.0)
    assert f("interpolatingSpline", "open", [P, Q, R]) == f("interpolatingSpline", "open", [P, Q, R], 0.25)
    assert f("Penrose") == f("Penrose", [0.0, 0.0], 50.0, 0.35, 0.0, 5, "ccw")
    assert f("totalCurvature", [P, Q, R], True) == f("totalCurvature", [P, Q, R], True, True)


def test_camera_matrices() -> None:
    eye, center = [3.0, 2.0, 5.0], [0.0, 0.5, 0.0]
    view = np.array(f("lookAt", eye, center, [0.0, 1.0, 0.0]))
    assert view @ [*eye, 1.0] == pytest.approx([0, 0, 0, 1], abs=1e-12)  # the eye goes to the origin
    c = view @ [*center, 1.0]
    dist = np.linalg.norm(np.subtract(center, eye))
    assert c[:3] == pytest.approx([0.0, 0.0, -dist], rel=1e-4)  # and looks down -z
    o = np.array(f("ortho", -2.0, 3.0, -1.0, 4.0, 1.0, 11.0))
    assert o @ [-2.0, -1.0, -1.0, 1.0] == pytest.approx([-1, -1, -1, 1])
    assert o @ [3.0, 4.0, -11.0, 1.0] == pytest.approx([1, 1, 1, 1])
    p = np.array(f("perspective", 90.0, 2.0, 1.0, 3.0))
    close(p, [[0.5, 0, 0, 0], [0, -1, 0, 0], [0, 0, -2, 3], [0, 0, -1, 0]])
    eye4 = np.eye(4).tolist()
    assert f("projectDepth", [0.2, -0.6, 0.5], eye4, eye4, [10.0, 20.0, 100.0, 50.0]) == pytest.approx(
        [10 + 0.6 * 100, 20 + 0.2 * 50, 0.75]
    )
    assert f("project", [0.2, -0.6, 0.5], eye4, eye4, [10.0, 20.0, 100.0, 50.0]) == pytest.approx(
        [70.0, 30.0]
    )
    close(f("projectList", [[0.2, -0.6, 0.5]], eye4, eye4, [10.0, 20.0, 100.0, 50.0]), [[70, 30]])


def test_homogeneous_coordinates() -> None:
    assert f("toHomogeneous", [2.0, 4.0]) == [2.0, 4.0, 1.0]
    assert f("fromHomogeneous", [2.0, 4.0, 0.5]) == [4.0, 8.0]
    assert f("toHomogeneousList", [[1.0, 2.0]]) == [[1.0, 2.0, 1.0]]
    assert f("fromHomogeneousList", [[1.0, 2.0, 2.0]]) == [[0.5, 1.0]]
    assert f("matrixMultiplyList", M3, [[1.0, 0.0, 0.0]]) == [[row[0] for row in M3]]


# -- colors -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("h", [0.0, 30.0, 59.9, 60.0, 100.0, 180.0, 239.0, 290.0, 330.0, 359.0, 400.0, -30.0])
def test_hsva_matches_colorsys(h: float) -> None:
    s, v = 65.0, 80.0
    want = colorsys.hsv_to_rgb((h % 360) / 360, s / 100, v / 100)
    assert f("hsva", h, s, v, 0.5) == pytest.approx([*want, 0.5], abs=1e-12)


def test_color_functions() -> None:
    assert f("rgba", 0.1, 0.2, 0.3, 0.4) == [0.1, 0.2, 0.3, 0.4]
    assert to_shape_color([0.1, 0.2, 0.3, 0.4]) == Color(0.1, 0.2, 0.3, 0.4)
    none = f("none")
    assert isinstance(none, Color) and none.is_none
    assert f("setOpacity", none, 0.5) is none
    assert f("setOpacity", [0.1, 0.2, 0.3, 0.8], 0.5) == [0.1, 0.2, 0.3, 0.4]
    assert f("setOpacity", Color(1.0, 0.0, 0.0, 1.0), 0.25) == [1.0, 0.0, 0.0, 0.25]
    c1, c2 = [1.0, 0.0, 0.0, 1.0], [0.0, 0.0, 1.0, 1.0]
    assert f("selectColor", c1, c2, 4.0) == c1 and f("selectColor", c1, c2, 3.0) == c2
    with pytest.raises(ValueError, match="selectColor"):
        f("selectColor", none, c2, 1.0)
