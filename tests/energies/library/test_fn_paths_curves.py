"""Path builders and discrete-curve functions against hand-derived paths and closed-form polygon
quantities (regular polygons, Bezier evaluation)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from energies.library.functions import FUNCTIONS
from energies.library.paths import PathBuilder, PathCmd, concat_paths, concrete_path, path_points

from .fn_support import Shape


def f(name: str, *args: object) -> object:
    return FUNCTIONS[name].apply(None, *args)


def cmds(path: list[PathCmd]) -> str:
    return "".join(c.cmd for c in path)


def regular_polygon(n: int, r: float, phase: float = 0.1) -> list[list[float]]:
    return [
        [r * math.cos(phase + 2 * math.pi * k / n), r * math.sin(phase + 2 * math.pi * k / n)]
        for k in range(n)
    ]


def bezier(points: np.ndarray, t: float) -> np.ndarray:
    """de Casteljau evaluation."""
    while len(points) > 1:
        points = (1 - t) * points[:-1] + t * points[1:]
    return points[0]


# -- path data --------------------------------------------------------------------------------------------


def test_path_convention_and_rendering() -> None:
    path = PathBuilder().move_to([0.0, 1.0]).arc_to([2.0, 3.0], [4.0, 5.0], 10.0, 1.0, 0.0).close().path()
    assert path == [
        PathCmd("M", [[0.0, 1.0]]),
        PathCmd("A", [[2.0, 3.0, 10.0, 1.0, 0.0], [4.0, 5.0]]),
        PathCmd("Z", []),
    ]
    assert path_points(path) == [[0.0, 1.0], [4.0, 5.0]]
    assert [c.holds_values(0) for c in path] == [False, True, False]
    with pytest.raises(ValueError, match="arc parameters must be 5 numbers, got 2"):
        concrete_path([PathCmd("A", [[2.0, 3.0], [4.0, 5.0]])])
    with pytest.raises(ValueError, match="a path point must be 2 numbers, got 3"):
        concrete_path([PathCmd("L", [[2.0, 3.0, 4.0]])])


def test_path_from_points_and_curves() -> None:
    pts = [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [0.5, 2.0]]
    assert cmds(f("pathFromPoints", "open", pts)) == "MLLLL"
    closed = f("pathFromPoints", "closed", pts)
    assert cmds(closed) == "MLLLLZ" and path_points(closed) == pts
    assert cmds(f("quadraticCurveFromPoints", "closed", pts)) == "MQTTZ"
    assert cmds(f("cubicCurveFromPoints", "open", pts[:4] + [[2.0, 2.0], [3.0, 1.0]])) == "MCS"
    with pytest.raises(ValueError, match="pathType"):
        f("pathFromPoints", "loop", pts)
    with pytest.raises(ValueError, match="at least 3 points"):
        f("quadraticCurveFromPoints", "open", pts[:2])


def test_interpolated_quadratic_passes_through_the_middle_point() -> None:
    p0, p1, p2 = [0.0, 0.0], [1.0, 2.0], [3.0, 0.5]
    path = f("interpolateQuadraticFromPoints", "open", p0, p1, p2)
    control = path[1].contents[0]
    assert bezier(np.array([p0, control, p2]), 0.5) == pytest.approx(p1)


def test_catmull_rom_spline_interpolates_with_tangents() -> None:
    pts = regular_polygon(5, 2.0)
    tension = 0.25
    path = f("interpolatingSpline", "closed", pts, tension)
    assert cmds(path) == "MCCCCCZ"
    for i, c in enumerate(path[1:6]):
        start, (c1, _c2, end) = np.array(pts[i]), map(np.array, c.contents)
        assert end == pytest.approx(pts[(i + 1) % 5])
        # the first control point leaves p_i along tension * (p_{i+1} - p_{i-1})
        assert c1 - start == pytest.approx(tension * (np.array(pts[(i + 1) % 5]) - np.array(pts[i - 1])))
    open_path = f("interpolatingSpline", "open", pts, tension)
    assert cmds(open_path) == "MCCCC"
    assert np.array(open_path[1].contents[0]) - pts[0] == pytest.approx(
        tension * (np.subtract(pts[1], pts[0]))
    )


def test_make_path_bulges_sideways() -> None:
    path = f("makePath", [0.0, 0.0], [4.0, 0.0], 1.0, 0.5)
    assert cmds(path) == "MQ"
    (start,), (control, end) = path[0].contents, path[1].contents
    assert start == pytest.approx([0.5, 0.0], rel=1e-5) and end == pytest.approx([3.5, 0.0], rel=1e-5)
    assert control == pytest.approx([2.0, -1.0], rel=1e-5)  # rot90 of the start-ward unit vector


def test_arcs_and_wedges() -> None:
    path = f("circularArc", "open", [1.0, 1.0], 2.0, 0.0, math.pi / 2)
    assert path[0].contents[0] == pytest.approx([3.0, 1.0])
    values, end = path[1].contents
    assert values == pytest.approx([2.0, 2.0, 0.0, 0.0, 0.0]) and end == pytest.approx([1.0, 3.0])
    big = f("circularArc", "closed", [0.0, 0.0], 1.0, 2.0, -2.0)
    assert big[1].contents[0][3:] == [1.0, 1.0] and cmds(big) == "MALZ"  # large arc, swept clockwise
    assert cmds(f("arc", "closed", [0.0, 0.0], [1.0, 1.0], [1.0, 1.0], 0.0, 0.0, 1.0)) == "MAZ"
    wedge = f("wedge", [0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0], 0.0, 0.0, 0.0)
    assert cmds(wedge) == "MALZ" and wedge[2].contents == [[0.0, 0.0]]
    arcs = f("repeatedArcs", [1.0, 0.0], [0.0, 1.0], [2.0, 0.0], [0.0, 2.0], [1.0, 1.0], 3, 0.5, 0.0)
    assert cmds(arcs) == "MAMAMA"
    assert arcs[4].contents[0] == pytest.approx([2.0, 0.0], rel=1e-5)  # third arc starts 2 * 0.5 further out
    assert arcs[5].contents[0][:2] == pytest.approx([2.0, 2.0])


def test_ticks_on_line_are_centered_and_spaced() -> None:
    for n in (1, 2, 3, 4):
        path = f("ticksOnLine", [0.0, 0.0], [4.0, 0.0], 0.5, n, 0.2)
        assert cmds(path) == "ML" * n
        xs = sorted(c.contents[0][0] for c in path[::2])
        assert np.diff(xs) == pytest.approx([0.5] * (n - 1), rel=1e-5)
        assert np.mean(xs) == pytest.approx(2.0, rel=1e-5)
        # each tick runs from the clockwise side (-rot90 of the direction) to the other
        assert path[0].contents[0][1] == pytest.approx(-0.2, rel=1e-4)
        assert path[1].contents[0][1] == pytest.approx(0.2, rel=1e-4)


def test_connect_concatenate_join() -> None:
    a = PathBuilder().move_to([0.0, 0.0]).line_to([1.0, 0.0]).path()
    b = PathBuilder().move_to([2.0, 0.0]).line_to([3.0, 0.0]).path()
    assert cmds(f("concatenatePaths", [a, b])) == "MLML"
    connected = f("connectPaths", "closed", [a, b])
    assert cmds(connected) == "MLLLL" and connected[-1].contents == [[0.0, 0.0]]
    assert cmds(f("connectPaths", "open", [a, b])) == "MLLL"
    assert cmds(f("joinPaths", [a, b])) == "MLL"
    assert concat_paths([[], a]) == a


def test_square_triangle_and_logo() -> None:
    horizontal = Shape("Line", {"start": [0.0, 0.0], "end": [2.0, 0.0]})
    vertical = Shape("Line", {"start": [0.0, 0.0], "end": [0.0, 2.0]})
    square = f("orientedSquare", horizontal, vertical, [0.0, 0.0], 0.5)
    assert cmds(square) == "MLLLZ"
    np.testing.assert_allclose(
        [c.contents[0] for c in square[:4]], [[0, 0.5], [0.5, 0.5], [0.5, 0], [0, 0]], atol=1e-5
    )
    third = Shape("Line", {"start": [2.0, 0.0], "end": [0.0, 0.0]})
    tri = f("triangle", horizontal, Shape("Line", {"start": [0.0, 2.0], "end": [0.0, 0.0]}), third)
    assert path_points(tri) == [[0.0, 0.0], [0.0, 2.0], [2.0, 0.0]]
    logo = f("Penrose", [0.0, 0.0], 10.0, 0.4, 0.0, 3, "cw")
    assert cmds(logo) == "MLLLLLZ" * 3
    assert max(math.hypot(*p) for p in path_points(logo)) == pytest.approx(10.0, rel=1e-3)


# -- curves -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [3, 5, 8])
def test_regular_polygon_quantities(n: int) -> None:
    r = 1.7
    pts = regular_polygon(n, r)
    side = 2 * r * math.sin(math.pi / n)
    assert f("perimeter", pts, True) == pytest.approx(n * side)
    assert f("perimeter", pts, False) == pytest.approx((n - 1) * side)
    area = 0.5 * n * r * r * math.sin(2 * math.pi / n)
    assert f("signedArea", pts, True) == pytest.approx(area)
    assert f("signedArea", pts[::-1], True) == pytest.approx(-area)
    assert f("turningNumber", pts, True) == pytest.approx(1.0)
    assert f("totalCurvature", pts, True) == pytest.approx(2 * math.pi)
    assert f("totalCurvature", pts[::-1], True, False) == pytest.approx(2 * math.pi)
    assert f("isoperimetricRatio", pts, True) == pytest.approx((n * side) ** 2 / area)
    turn = 2 * math.pi / n  # exterior angle at every vertex
    steiner = 2 * math.sin(turn / 2)
    assert f("elasticEnergy", pts, True) == pytest.approx(n * steiner**2 * 0.5 * side * side)
    assert f("pElasticEnergy", pts, True, 3.0) == pytest.approx(n * steiner**3 * 0.5 * side * side)
    assert f("lengthK", pts, True, 2.0) == pytest.approx(n * side**2)
    assert f("maxCurvature", pts, True) == pytest.approx(steiner / (2 * side * math.cos(turn / 2)))
    assert f("inflectionEnergy", pts, True, 2.0) == pytest.approx(0.0, abs=1e-20)


def test_tangents_normals_and_offsets_of_a_circle_polygon() -> None:
    pts = regular_polygon(12, 2.0, phase=0.0)
    tangents = np.array(f("tangentVectors", pts, True))
    radial = np.array(pts) / 2.0
    assert np.abs((tangents * radial).sum(1)).max() < 1e-12  # tangent to the circle
    assert np.linalg.norm(tangents, axis=1) == pytest.approx(np.ones(12), rel=1e-5)
    normals = np.array(f("normalVectors", pts, True))
    assert normals == pytest.approx(-radial, rel=1e-4)  # counterclockwise curve: the normal points inward
    offset = np.array(f("offsetCurve", pts, True, 0.5))
    assert np.linalg.norm(offset, axis=1) == pytest.approx(np.full(12, 1.5), rel=1e-4)
    ks = f("curvatures", pts, True)
    side = 2 * 2.0 * math.sin(math.pi / 12)
    # finite differences: |t23 - t12| / (distance between edge midpoints)
    want = 2 * math.sin(math.pi / 12) / (side * math.cos(math.pi / 12))
    assert ks == pytest.approx([want] * 12, rel=1e-4)
    evolute = np.array(f("evoluteCurve", pts, True))
    # each center of curvature lies 1 / kappa = 2 cos(pi / 12) inward from its vertex
    assert np.linalg.norm(evolute, axis=1) == pytest.approx(
        np.full(12, 2 - 2 * math.cos(math.pi / 12)), rel=1e-3
    )


def test_space_curve_frames_are_orthonormal() -> None:
    t = np.linspace(0, 3, 9)
    helix = np.stack([np.cos(t), np.sin(t), 0.5 * t], axis=1).tolist()
    tangents = np.array(f("tangentVectors", helix, False))
    normals = np.array(f("normalVectors", helix, False))
    binormals = np.array(f("binormalVectors", helix, False))
    assert np.abs((tangents * normals).sum(1))[2:-2].max() < 1e-12  # interior frames (ends are one-sided)
    np.testing.assert_allclose(binormals, np.cross(tangents, normals), atol=1e-15)


def test_tsne_energy_is_a_kl_divergence() -> None:
    x = [[0.0, 1.0, 2.0], [1.0, 0.5, 0.2], [2.0, 2.0, 1.0], [0.3, 0.1, 0.9]]
    y = [[0.0, 0.3], [1.0, 0.1], [0.4, 1.2], [0.9, 0.8]]

    def affinities(pts: list, kernel: object) -> np.ndarray:
        d = np.linalg.norm(np.array(pts)[:, None] - np.array(pts)[None], axis=2)
        w = kernel(d)  # type: ignore[operator]
        np.fill_diagonal(w, 0.0)
        return w / w.sum()

    p, q = affinities(x, lambda d: np.exp(-d / 2)), affinities(y, lambda d: 1 / (1 + d))
    eps = np.finfo(float).eps
    assert f("tsneEnergy", x, y) == pytest.approx(float((p * np.log((p + eps) / (q + eps))).sum()), rel=1e-12)


def test_joining_matches_penroses_own_cases() -> None:
    """The expected paths of Penrose's Functions.test.ts ("join path variants")."""
    path1 = PathBuilder().move_to([0, 0]).line_to([1, 1]).line_to([2, 2]).path()
    path2 = PathBuilder().move_to([2, 2]).line_to([3, 0]).quadratic_to([1, 1], [0, 1]).path()
    path3 = PathBuilder().move_to([0, 1]).line_to([1, 0]).path()
    path4 = PathBuilder().move_to([0, 0]).path()

    def build(*steps: tuple) -> list[PathCmd]:
        b = PathBuilder()
        for method, *args in steps:
            getattr(b, method)(*args)
        return b.path()

    head = [("move_to", [0, 0]), ("line_to", [1, 1]), ("line_to", [2, 2])]
    quad = ("quadratic_to", [1, 1], [0, 1])
    assert f("concatenatePaths", [path1, path2, path3]) == path1 + path2 + path3
    assert f("connectPaths", "open", [path1, path2, path3]) == build(
        *head, ("line_to", [2, 2]), ("line_to", [3, 0]), quad, ("line_to", [0, 1]), ("line_to", [1, 0])
    )
    assert f("joinPaths", [path1, path2, path3]) == build(
        *head, ("line_to", [3, 0]), quad, ("line_to", [1, 0])
    )
    assert f("concatenatePaths", [path1, path2, path4]) == path1 + path2 + path4
    assert f("connectPaths", "closed", [path1, path2, path4]) == build(
        *head, ("line_to", [2, 2]), ("line_to", [3, 0]), quad, ("line_to", [0, 0]), ("line_to", [0, 0])
    )
    assert f("joinPaths", [path1, path2, path4]) == build(*head, ("line_to", [3, 0]), quad)
