"""Boxes of rectangles whose rotation is 0 while tracing (`expr.is_zero`): traced without the turn's
sine and cosine, as the same numbers.

Oracles: `bbox_rotated_rect` at a rotation of 0 (the turned box, bit for bit), sampled boxes for the
interval rule, and the call graph of a compiled energy (no sine or cosine for labels that are not
turned, both for those that are)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import adcore
from adcore import Real, Vec, fn, interval, vjp
from energies.compile import compile_problem
from energies.diagram_build import build_diagram
from energies.library.bbox import (
    bbox_axis_rect,
    bbox_from_points,
    bbox_pts,
    bbox_rotated_rect,
    corners_extent,
    make_bbox,
    rect_pts,
)
from energies.library.fn_ops import max_n, min_n


def _bits(box: dict) -> bytes:
    return np.array([box["width"], box["height"], *box["center"]], np.float64).tobytes()


@pytest.mark.parametrize("scale", [1.0, 1e6])
def test_the_unturned_box_is_the_turned_box_at_zero_bit_for_bit(scale: float) -> None:
    axis, turned = adcore.compile(bbox_axis_rect), adcore.compile(bbox_rotated_rect)
    rng = np.random.default_rng(11)
    for _ in range(300):
        c = list(rng.uniform(-1, 1, 2) * scale)
        w, h, sw = rng.uniform(0.5, 80), rng.uniform(0.5, 40), rng.uniform(0, 4) * (rng.random() < 0.5)
        assert _bits(axis(c, w, h, sw)) == _bits(turned(c, w, h, 0.0, sw))


# The unturned box as the four corners' box (`bbox_from_points`, Penrose's chains of selects): the
# plain version of `bbox_axis_rect`'s two selects a side.
PLAIN = fn(
    [Vec(2, Real), Real, Real, Real],
    {"width": Real, "height": Real, "center": Vec(2, Real)},
    lambda c, w, h, sw: bbox_from_points(rect_pts([c[0], c[1]], w + sw, h + sw, 0.0)),
    name="plain_axis_rect",
)


def _gradient(box: adcore.Fn) -> adcore.Compiled:
    """The gradient of a weighted sum of a box's four numbers over (cx, cy, w, h, stroke)."""

    def total(v: Any) -> Any:
        b = box([v[0], v[1]], v[2], v[3], v[4])
        return 1.1 * b["width"] + 1.3 * b["height"] + 1.7 * b["center"][0] + 1.9 * b["center"][1]

    f = fn([Vec(5, Real)], Real, total)
    return adcore.compile(fn([Vec(5, Real)], Vec(5, Real), lambda v: vjp(f)(v).grad(1.0)))


def test_the_unturned_box_is_the_four_corners_box_with_its_gradient_ties_and_nan_included() -> None:
    # Penrose's min and max over the four corners pick one corner where two tie (a rectangle of no
    # width or height) or one is NaN; the two-value selects pick the same one, so the numbers and
    # the gradient are the same, bit for bit.
    values, plain_values = adcore.compile(bbox_axis_rect), adcore.compile(PLAIN)
    axis, plain = _gradient(bbox_axis_rect), _gradient(PLAIN)
    rng = np.random.default_rng(2)
    points = [list(v) for v in rng.uniform(-50, 50, (200, 5))]
    points += [[3.0, -2.0, w, h, sw] for w in (0.0, -4.0, 6.0) for h in (0.0, -1.0, 2.0) for sw in (0.0, 1.0)]
    points += [[np.nan, 1.0, 4.0, 2.0, 0.0], [1.0, np.nan, 4.0, 2.0, 0.0], [1.0, 2.0, np.nan, 2.0, 0.0]]
    points += [[1.0, 2.0, 4.0, np.nan, 0.0], [1.0, 2.0, -1.0, -1.0, 1.0]]  # the last: every pair ties
    for v in points:
        assert np.asarray(axis(v)).tobytes() == np.asarray(plain(v)).tobytes(), v
        box = ([v[0], v[1]], v[2], v[3], v[4])
        assert _bits(values(*box)) == _bits(plain_values(*box)), v


def test_the_unturned_boxs_rule_encloses_its_values() -> None:
    f, g = adcore.compile(bbox_axis_rect), adcore.compile(interval(bbox_axis_rect))
    rng = np.random.default_rng(5)
    for _ in range(50):
        c, spread = rng.uniform(-300, 300, 2), rng.uniform(0, 50, 2)
        w, h, sw, dw = rng.uniform(1, 60), rng.uniform(1, 30), rng.uniform(0, 3), rng.uniform(0, 5)
        r = g(
            [{"lo": c[k] - spread[k], "hi": c[k] + spread[k]} for k in (0, 1)],
            {"lo": w - dw, "hi": w + dw},
            {"lo": h, "hi": h},
            {"lo": sw, "hi": sw},
        )
        assert r["width"]["hi"] <= w + dw + sw + 1e-6  # the rectangle's width, not the range's
        for u in rng.uniform(-1, 1, (20, 3)):
            box = f([c[0] + u[0] * spread[0], c[1] + u[1] * spread[1]], w + u[2] * dw, h, sw)
            assert r["width"]["lo"] <= box["width"] <= r["width"]["hi"]
            for k in (0, 1):
                assert r["center"][k]["lo"] <= box["center"][k] <= r["center"][k]["hi"]


LABELS = """canvas {
  width = 400
  height = 400
}
forall Set x {
  x.text = Text { string: x.label, fontSize: "18px" }
}
forall Set x; Set y {
  ensure disjoint(x.text, y.text, 5)
}
"""


@pytest.mark.parametrize("turn", ["", "rotation: 30"])
def test_labels_not_turned_are_traced_without_a_sine_or_cosine(turn: str) -> None:
    style = LABELS.replace('fontSize: "18px"', f'fontSize: "18px"\n    {turn}')
    substance = "Set A, B, C\nLabel A $A$\nLabel B $B$\nLabel C $C$"
    problem = compile_problem(build_diagram("type Set", substance, style, "v0", ()), cache=None)
    (disjoint,) = [k for k, kind in enumerate(problem.kinds) if kind.name == "disjoint"]
    f = problem.functions.kind_fns[disjoint]
    names = {g.name for g in adcore.ir.call_graph(f.ir)}
    assert ({"sin", "cos"} <= names) == bool(turn)


def test_a_boxs_corners_extent_is_penroses_over_the_four_corners() -> None:
    """`corners_extent` of a box's corners (`bbox_pts`) against min and max over all four, values and
    gradients bit for bit, ties (no width or height) and NaN included."""

    def extent(plain: bool) -> adcore.Compiled:
        def total(v: Any) -> Any:
            rect = bbox_pts(make_bbox(v[2], v[3], [v[0], v[1]]))
            if plain:
                xs, ys = [p[0] for p in rect], [p[1] for p in rect]
                x0, y0, x1, y1 = min_n(xs), min_n(ys), max_n(xs), max_n(ys)
            else:
                x0, y0, x1, y1 = corners_extent(rect)
            return 1.1 * x0 + 1.3 * y0 + 1.7 * x1 + 1.9 * y1 + x0 * y1

        f = fn([Vec(4, Real)], Real, total)
        return adcore.compile(fn([Vec(4, Real)], Vec(5, Real), lambda v: [f(v), *vjp(f)(v).grad(1.0)]))

    ours, penrose = extent(False), extent(True)
    rng = np.random.default_rng(4)
    points = [list(v) for v in rng.uniform(-50, 50, (200, 4))]
    points += [[3.0, -2.0, w, h] for w in (0.0, -4.0, 6.0) for h in (0.0, -1.0, 2.0)]
    points += [[np.nan, 1.0, 4.0, 2.0], [1.0, 2.0, np.nan, 2.0], [1.0, 2.0, 4.0, np.nan]]
    for v in points:
        assert np.asarray(ours(v)).tobytes() == np.asarray(penrose(v)).tobytes(), v
