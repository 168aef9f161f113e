"""Library functions over long lists as loops: a polygon's points (fresh unknowns, constants, or a mix)
reach goals as one adcore array, and the functions written for loops give the same numbers and
gradients bit for bit as their unrolled code, with compiled code that does not grow with the list.

Oracles: the unrolled library code (the same function on a plain list), numpy, finite differences."""

from __future__ import annotations

import math

import numpy as np
import pytest

import adcore
from adcore import Real, Vec, fn, interp
from energies.compile.problem import CompiledProblem
from energies.diagram import Diagram, GoalInstance, ShapeInstance, Unknowns
from energies.expr import LoopList, SlotReader, deferred_call, evaluate, input_node, replay, signature
from energies.library import fn_curves, fn_math
from energies.library.bbox import bbox_of
from energies.library.constraints import is_equiangular, is_equilateral, is_locally_convex
from energies.library.fn_queries import signedDistancePolygon
from energies.limits import SizeLimitError


def ring(n: int, wobble: float = 0.1) -> np.ndarray:
    t = np.linspace(0.0, 2 * np.pi, n, endpoint=False)
    r = 10.0 + wobble * np.sin(7 * t) + 0.05 * np.cos(3 * t)
    return np.stack([r * np.cos(t), r * np.sin(t)], axis=1)


def replayed(value, x: np.ndarray, consts: list[float], body):
    """body(replayed value) traced in a function of the slot vectors, run by the interpreter."""
    n_in, n_c = len(x), len(consts)

    def traced(inputs, cs):
        return body(replay(value, SlotReader(inputs), SlotReader(cs)))

    f = fn([Vec(max(n_in, 1), Real), Vec(max(n_c, 1), Real)], Real, traced)
    return f, interp(f)(list(x) or [0.0], consts or [0.0])


# -- replay ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("pattern", ["unknowns", "constants", "mixed"])
def test_a_long_list_of_plain_slots_is_also_one_array(pattern) -> None:
    pts = ring(300)
    if pattern == "unknowns":
        value = [[input_node(2 * k), input_node(2 * k + 1)] for k in range(300)]
    elif pattern == "constants":
        value = [[float(a), float(b)] for a, b in pts]
    else:
        value = [[input_node(k), float(b)] for k, (_, b) in enumerate(pts)]
    _, slots, consts = signature(value)
    x = (
        pts.reshape(-1)[list(slots)]
        if pattern == "unknowns"
        else pts[:, 0]
        if pattern == "mixed"
        else np.zeros(0)
    )
    seen = []

    def body(v):
        seen.append(v)
        assert isinstance(v, LoopList) and v.array.ty == Vec(300, Vec(2, Real))
        by_array = adcore.sum(300, lambda i: v.array[i][0] * 3.0 + v.array[i][1])
        by_list = sum(p[0] * 3.0 + p[1] for p in v)
        return by_array - by_list

    _, diff = replayed(value, x, list(consts), body)
    assert diff == 0.0


def test_other_lists_stay_plain() -> None:
    a = input_node(0)
    for value in (
        [[a, input_node(1)]] * 300,  # one unknown repeated
        [[input_node(k), input_node(k) + 1.0] for k in range(300)],  # an expression
        [[input_node(k)] if k % 2 else [float(k)] for k in range(300)],  # patterns differ
        [input_node(k) for k in range(255)],  # short
    ):
        _, slots, consts = signature(value)

        def body(v):
            assert type(v) is list
            return 0.0

        replayed(value, np.arange(len(slots), dtype=float), list(consts), body)


# -- functions written as loops against their unrolled code ---------------------------------------


OTHERS = {
    "isEquilateral": is_equilateral,
    "isEquiangular": is_equiangular,
    "isLocallyConvex": is_locally_convex,
    "signedDistancePolygon": lambda pts, closed: signedDistancePolygon(pts, [0.5, 9.0 if closed else -3.0]),
}
CURVES = [
    "perimeter",
    "signedArea",
    "elasticEnergy",
    "totalCurvature",
    "maxCurvature",
    "turningNumber",
    "isoperimetricRatio",
]


@pytest.mark.parametrize("closed", [True, False])
def test_curve_functions_are_the_unrolled_numbers(closed) -> None:
    n = 260
    pts = ring(n)
    value = [[input_node(2 * k), input_node(2 * k + 1)] for k in range(n)]
    x = pts.reshape(-1)
    for name in CURVES + ["isEquilateral", "isEquiangular", "isLocallyConvex", "signedDistancePolygon"]:
        impl = OTHERS[name] if name in OTHERS else getattr(fn_curves, name)
        loop_f, by_loop = replayed(value, x, [], lambda v, impl=impl: impl(v, closed))
        plain_f, by_list = replayed(value, x, [], lambda v, impl=impl: impl(list(v), closed))
        assert by_loop == by_list, name
        assert by_loop == pytest.approx(impl([list(p) for p in pts.tolist()], closed), rel=1e-12)
        if name not in ("perimeter", "elasticEnergy", "isEquilateral", "signedDistancePolygon"):
            continue
        grads = [
            adcore.compile(
                fn(f.params, f.params[0], lambda a, b, f=f: adcore.vjp(f, wrt=[0])(a, b).grad(1.0)[0])
            )(list(x), [0.0])
            for f in (loop_f, plain_f)
        ]
        # the same terms, summed per point in another order where the unrolled code shares a
        # subexpression between neighboring terms (an edge), hence the last bits
        assert grads[0] == pytest.approx(grads[1], rel=1e-13, abs=1e-15), name


def test_list_reductions_and_polygon_boxes_are_the_unrolled_numbers() -> None:
    n = 300
    xs = np.sin(np.arange(n) * 1.7) * 5.0
    value = [input_node(k) for k in range(n)]
    for impl in (fn_math.maxList, fn_math.minList, fn_math.sum, fn_math.average):
        _, by_loop = replayed(value, xs, [], impl)
        _, by_list = replayed(value, xs, [], lambda v, impl=impl: impl(list(v)))
        assert (
            by_loop
            == by_list
            == pytest.approx(
                {"maxList": max, "minList": min, "sum": sum, "average": lambda v: sum(v) / len(v)}[
                    impl.__name__
                ](xs.tolist()),
                rel=1e-14,
            )
        )
    pts = ring(n, wobble=2.0)
    poly = [[input_node(2 * k), input_node(2 * k + 1)] for k in range(n)]

    def box(v, plain):
        shape = type(
            "S", (), {"kind": "Polygon", "props": {"points": list(v) if plain else v, "scale": 1.5}}
        )()
        b = bbox_of(shape)
        return b["width"] * 1000.0 + b["height"] + b["center"][0] * 7.0 + b["center"][1] * 3.0

    _, by_loop = replayed(poly, pts.reshape(-1), [], lambda v: box(v, False))
    _, by_list = replayed(poly, pts.reshape(-1), [], lambda v: box(v, True))
    lo, hi = pts.min(axis=0) * 1.5, pts.max(axis=0) * 1.5
    want = (
        (hi[0] - lo[0]) * 1000.0 + (hi[1] - lo[1]) + (lo[0] + hi[0]) * 0.5 * 7.0 + (lo[1] + hi[1]) * 0.5 * 3.0
    )
    assert by_loop == by_list == pytest.approx(want, rel=1e-14)


def test_deferred_calls_evaluate_as_the_eager_ones() -> None:
    n = 300
    pts = ring(n)
    value = [[input_node(2 * k), input_node(2 * k + 1)] for k in range(n)]
    node = deferred_call(fn_curves.elasticEnergy, "elasticEnergy", [value, True])
    assert evaluate(node, pts.reshape(-1)) == fn_curves.elasticEnergy(pts.tolist(), True)


# -- whole energies --------------------------------------------------------------------------------


def polygon_diagram(n: int, goals: tuple[str, ...]) -> Diagram:
    unknowns = Unknowns()
    pts = ring(n, wobble=0.5)
    points = [
        [input_node(unknowns.add(float(a), f"p{k}.x")), input_node(unknowns.add(float(b), f"p{k}.y"))]
        for k, (a, b) in enumerate(pts)
    ]
    shape = ShapeInstance("`A`.poly", "Polygon", {"points": points, "scale": 1.0, "strokeWidth": 1.0})
    made = []
    if "isEquilateral" in goals:
        made.append(GoalInstance("objective", "isEquilateral", [points, True]))
    if "elastic" in goals:
        made.append(
            GoalInstance(
                "objective",
                "minimal",
                [deferred_call(fn_curves.elasticEnergy, "elasticEnergy", [points, True])],
            )
        )
    if "perimeter" in goals:
        made.append(
            GoalInstance(
                "constraint", "equal", [deferred_call(fn_curves.perimeter, "perimeter", [points, True]), 70.0]
            )
        )
    if "box" in goals:
        made.append(
            GoalInstance(
                "constraint",
                "lessThan",
                [deferred_call(fn_math.maxList, "maxList", [[p[0] for p in points]]), 9.0],
            )
        )
    return Diagram((400.0, 400.0), [shape], made, unknowns)


def oracle_energy(n: int, x: np.ndarray, weight: float) -> float:
    p = x.reshape(n, 2)
    edges = np.linalg.norm(np.roll(p, -1, axis=0) - p, axis=1)
    equilateral = float(np.sum((edges - edges.mean()) ** 2))
    elastic = fn_curves.elasticEnergy(p.tolist(), True)
    perimeter = float(np.sum(edges))
    widest = float(p[:, 0].max())
    return equilateral + elastic + weight * ((perimeter - 70.0) ** 2 + max(widest - 9.0, 0.0) ** 2)


def test_a_polygon_of_20000_points_compiles_to_the_module_of_a_polygon_of_300() -> None:
    goals = ("isEquilateral", "elastic", "perimeter", "box")
    sizes = {}
    for n in (300, 20_000):
        d = polygon_diagram(n, goals)
        p = CompiledProblem(d, cache=None)
        sizes[n] = p.vg.wasm_bytes
        x = np.array(d.unknowns.x0) * 1.01
        e, g = p.energy_and_grad(x, 0, 10.0)
        assert e == pytest.approx(oracle_energy(n, x, 10.0), rel=1e-9)
        if n == 300:
            h = 1e-6
            for k in (0, 1, 57, 199):
                step = np.zeros_like(x)
                step[k] = h
                fd = (oracle_energy(n, x + step, 10.0) - oracle_energy(n, x - step, 10.0)) / (2 * h)
                assert g[k] == pytest.approx(fd, rel=1e-5, abs=1e-6)
    assert abs(sizes[20_000] - sizes[300]) <= 0.02 * sizes[300]  # only the encoded sizes differ
    assert sizes[300] < 40_000


def test_code_not_written_for_loops_refuses_a_list_above_5000() -> None:
    d = polygon_diagram(6_000, ())
    points = d.shapes[0].props["points"]
    d.goals.append(GoalInstance("constraint", "containsPolyPoint", [points, [0.0, 0.0]]))  # unrolls over them
    with pytest.raises(SizeLimitError, match="a list of 6,000 elements reached library code that unrolls"):
        CompiledProblem(d, cache=None)
    assert math.isfinite(fn_curves.perimeter(ring(6_000).tolist(), True))  # on numbers, nothing unrolls
