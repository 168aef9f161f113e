"""Axis-aligned bounding boxes of every shape kind, as Penrose computes them.

A box is `{"width", "height", "center": [x, y]}` (Penrose's BBox struct). Each shape kind has ONE
adcore function (cached per kind, and per structure for point lists and path data); `bbox_of` calls
it with the shape's props, so inside a trace a shape's box is a single `call`, and a nested Group is
a fold of calls to the same few functions (a small call graph however deep the group is). On plain
floats the same functions run eagerly.

A rotated rectangle's box (every Text, Equation, Rectangle) carries an interval rule: its formula
builds the corners about the center and takes max - min of them, and over a range of centers that
difference spans the range's width (the dependency problem: a text in a 400-px cluster would get a
box up to 800 px wide, and no `disjoint` between clusters is ever proved constant). The box is the
one of the same rectangle about the origin, moved by the center: the rule bounds that box from its
own formula (over width, height and angle only) and adds the center's range, widened by the
rounding the formula's corners pick up at the center's magnitude (`lipschitz.SLACK`).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

from adcore import Fn, Real, Vec, fn, fold, interval, select
from adcore import and_ as ad_and
from energies.shapes import PathCmd

from ..expr import LOOP_MIN, is_zero
from . import pmath as am
from .fn_ops import (
    div,
    max_n,
    min_n,
    pt,
    rot90,
    rotate,
    rotation,
    sqr,
    vadd,
    vmul,
    vnormalize,
    vrot,
    vsub,
)
from .geometry import POLYGONLIKE, RECTLIKE, Pt, Scalar, ShapeQueryError, points_of, prop
from .lipschitz import RANGE, SLACK
from .loops import array_of
from .pmath import sqrt

Vec2 = Vec(2, Real)
BBoxType = {"width": Real, "height": Real, "center": Vec2}
BBox = dict  # {"width": Num, "height": Num, "center": [Num, Num]}


def make_bbox(width: Scalar, height: Scalar, center: Sequence[Scalar]) -> BBox:
    return {"width": width, "height": height, "center": pt(center)}


def _normal(b: Any) -> BBox:
    """A box returned by an adcore call (center may be an array) as a plain dict with a 2-list center."""
    return make_bbox(b["width"], b["height"], b["center"])


# -- box arithmetic (Penrose's engine/BBox) --------------------------------------------------------


def corners(b: BBox) -> dict[str, Pt]:
    hw, hh = b["width"] * 0.5, b["height"] * 0.5
    cx, cy = b["center"][0], b["center"][1]
    return {
        "topRight": [cx + hw, cy + hh],
        "topLeft": [cx - hw, cy + hh],
        "bottomLeft": [cx - hw, cy - hh],
        "bottomRight": [cx + hw, cy - hh],
    }


def bbox_pts(b: BBox) -> list[Pt]:
    """[topRight, topLeft, bottomLeft, bottomRight], the order Penrose's rect functions expect."""
    c = corners(b)
    return [c["topRight"], c["topLeft"], c["bottomLeft"], c["bottomRight"]]


def min_x(b: BBox) -> Scalar:
    return b["center"][0] - b["width"] * 0.5


def max_x(b: BBox) -> Scalar:
    return b["center"][0] + b["width"] * 0.5


def min_y(b: BBox) -> Scalar:
    return b["center"][1] - b["height"] * 0.5


def max_y(b: BBox) -> Scalar:
    return b["center"][1] + b["height"] * 0.5


def x_range(b: BBox) -> list[Scalar]:
    return [min_x(b), max_x(b)]


def y_range(b: BBox) -> list[Scalar]:
    return [min_y(b), max_y(b)]


def inflate(b: BBox, delta: Scalar) -> BBox:
    return make_bbox(b["width"] + 2.0 * delta, b["height"] + 2.0 * delta, b["center"])


def corners_extent(rect: Sequence[Pt]) -> tuple[Scalar, Scalar, Scalar, Scalar]:
    """min x, min y, max x, max y of four corners [tr, tl, bl, br] of an axis-aligned box (`bbox_pts`):
    their x are [a, b, b, a] and y [c, c, d, d], so Penrose's chains over four values pick what one
    select over two picks, ties and NaN included."""
    a, b, c, d = rect[0][0], rect[1][0], rect[0][1], rect[2][1]
    return select(b < a, b, a), select(c < d, c, d), select(b > a, b, a), select(c > d, c, d)


def bbox_from_points(points: Sequence[Sequence[Scalar]]) -> BBox:
    lo_x, hi_x = min_n([p[0] for p in points]), max_n([p[0] for p in points])
    lo_y, hi_y = min_n([p[1] for p in points]), max_n([p[1] for p in points])
    return make_bbox(hi_x - lo_x, hi_y - lo_y, [(lo_x + hi_x) * 0.5, (lo_y + hi_y) * 0.5])


def rect_pts(center: Sequence[Scalar], width: Scalar, height: Scalar, clockwise: Scalar = 0.0) -> list[Pt]:
    """Corners [tr, tl, bl, br] of a rectangle rotated `clockwise` degrees about its center. A turn
    known to be 0 while tracing (`expr.is_zero`) is left out: cos 0 = 1 and sin -0 = -0 turn each
    corner into itself, bit for bit but for the sign of a zero coordinate."""
    hw, hh = width * 0.5, height * 0.5
    local = [[hw, hh], [-hw, hh], [-hw, -hh], [hw, -hh]]
    if is_zero(clockwise):
        return [vadd(p, center) for p in local]
    turn = rotation(-clockwise)
    return [vadd(rotate(p, turn), center) for p in local]


# -- one adcore function per shape kind ------------------------------------------------------------


def _union(a: BBox, b: BBox) -> BBox:
    lo_x, hi_x = am.min(min_x(a), min_x(b)), am.max(max_x(a), max_x(b))
    lo_y, hi_y = am.min(min_y(a), min_y(b)), am.max(max_y(a), max_y(b))
    return make_bbox(hi_x - lo_x, hi_y - lo_y, [(lo_x + hi_x) * 0.5, (lo_y + hi_y) * 0.5])


def _intersection(a: BBox, b: BBox) -> BBox:
    """Penrose's intersectBbox: the overlap of two boxes, or a zero box at the origin if none."""
    left, right = am.max(min_x(a), min_x(b)), am.min(max_x(a), max_x(b))
    bottom, top = am.max(min_y(a), min_y(b)), am.min(max_y(a), max_y(b))
    hit = ad_and(left < right, bottom < top)
    return {
        "width": select(hit, right - left, 0.0),
        "height": select(hit, top - bottom, 0.0),
        "center": [select(hit, (left + right) * 0.5, 0.0), select(hit, (bottom + top) * 0.5, 0.0)],
    }


bbox_union = fn([BBoxType, BBoxType], BBoxType, _union, name="bbox_union")
bbox_intersection = fn([BBoxType, BBoxType], BBoxType, _intersection, name="bbox_intersection")

bbox_circle = fn(
    [Vec2, Real, Real],
    BBoxType,
    lambda c, r, sw: make_bbox(2.0 * r + sw, 2.0 * r + sw, c),
    name="bbox_circle",
)
bbox_ellipse = fn(
    [Vec2, Real, Real, Real],
    BBoxType,
    lambda c, rx, ry, sw: make_bbox(2.0 * rx + sw, 2.0 * ry + sw, c),
    name="bbox_ellipse",
)
# Rectangles grow by their stroke; Text, Equation and Image pass a zero stroke (Penrose's bboxFromRectlike).
bbox_rotated_rect = fn(
    [Vec2, Real, Real, Real, Real],
    BBoxType,
    lambda c, w, h, clockwise, sw: bbox_from_points(rect_pts(pt(c), w + sw, h + sw, clockwise)),
    name="bbox_rotated_rect",
)


def _axis_rect(c: Any, w: Any, h: Any, sw: Any) -> BBox:
    """`bbox_from_points` of the unturned corners, by their extent (`corners_extent`): the same
    numbers with the same gradient at 4 comparisons instead of 12."""
    lo_x, lo_y, hi_x, hi_y = corners_extent(rect_pts(pt(c), w + sw, h + sw, 0.0))
    return make_bbox(hi_x - lo_x, hi_y - lo_y, [(lo_x + hi_x) * 0.5, (lo_y + hi_y) * 0.5])


bbox_axis_rect = fn([Vec2, Real, Real, Real], BBoxType, _axis_rect, name="bbox_axis_rect")
_ABOUT_ORIGIN = interval(
    fn(
        [Real, Real, Real, Real],
        BBoxType,
        lambda w, h, clockwise, sw: bbox_from_points(rect_pts([0.0, 0.0], w + sw, h + sw, clockwise)),
        name="bbox_rotated_rect_about_origin",
    )
)


def _rotated_rect_rule(c: Any, w: Any, h: Any, clockwise: Any, sw: Any) -> dict[str, Any]:
    """bbox_rotated_rect over ranges: the box about the origin, moved by the center (module docstring)."""
    box = _ABOUT_ORIGIN(w, h, clockwise, sw)
    ends = [c[k][end] for k in (0, 1) for end in ("lo", "hi")]
    ends += [box[side][end] for side in ("width", "height") for end in ("lo", "hi")]
    slack = SLACK * (1.0 + max_n([am.abs(e) for e in ends]))

    def widened(lo: Any, hi: Any) -> dict[str, Any]:
        return {"lo": lo - slack, "hi": hi + slack}

    return {
        "width": widened(box["width"]["lo"], box["width"]["hi"]),
        "height": widened(box["height"]["lo"], box["height"]["hi"]),
        "center": [
            widened(c[k]["lo"] + box["center"][k]["lo"], c[k]["hi"] + box["center"][k]["hi"]) for k in (0, 1)
        ],
    }


bbox_rotated_rect.interval = fn(
    [Vec(2, RANGE), RANGE, RANGE, RANGE, RANGE],
    {"width": RANGE, "height": RANGE, "center": Vec(2, RANGE)},
    _rotated_rect_rule,
    name="bbox_rotated_rect_bounds",
)
bbox_axis_rect.interval = fn(
    [Vec(2, RANGE), RANGE, RANGE, RANGE],
    {"width": RANGE, "height": RANGE, "center": Vec(2, RANGE)},
    lambda c, w, h, sw: _rotated_rect_rule(c, w, h, {"lo": 0.0, "hi": 0.0}, sw),
    name="bbox_axis_rect_bounds",
)


def bbox_rect(center: Any, width: Any, height: Any, clockwise: Any, stroke: Any) -> BBox:
    """The box of a rectangle turned `clockwise` degrees, grown by `stroke`: without the turn's sine
    and cosine where it is 0 while tracing (`expr.is_zero`)."""
    if is_zero(clockwise):
        return bbox_axis_rect(center, width, height, stroke)
    return bbox_rotated_rect(center, width, height, clockwise, stroke)


def _line_bbox(start: Any, end: Any, sw: Any) -> BBox:
    s, e = pt(start), pt(end)
    d = vmul(sw * 0.5, rot90(vnormalize(vsub(e, s))))
    return bbox_from_points([vadd(s, d), vsub(s, d), vadd(e, d), vsub(e, d)])


bbox_line = fn([Vec2, Vec2, Real], BBoxType, _line_bbox, name="bbox_line")


@cache
def bbox_polygon_fn(n: int) -> Fn:
    """Box of n points scaled by `scale` (Polygon and Polyline; Penrose ignores their stroke): from
    LOOP_POINTS points on, by one loop (the same left folds of min and max as `bbox_from_points`)."""

    def body(points: Any, scale: Any) -> BBox:
        if n < LOOP_POINTS:
            return bbox_from_points([[scale * points[i][0], scale * points[i][1]] for i in range(n)])

        def x(i: Any) -> Any:
            return scale * points[i][0]

        def y(i: Any) -> Any:
            return scale * points[i][1]

        def step(b: dict[str, Any], i: Any) -> dict[str, Any]:
            xi, yi = x(i + 1), y(i + 1)
            return {
                "lx": am.min(b["lx"], xi),
                "hx": am.max(b["hx"], xi),
                "ly": am.min(b["ly"], yi),
                "hy": am.max(b["hy"], yi),
            }

        b = fold(n - 1, {"lx": x(0), "hx": x(0), "ly": y(0), "hy": y(0)}, step)
        return make_bbox(
            b["hx"] - b["lx"], b["hy"] - b["ly"], [(b["lx"] + b["hx"]) * 0.5, (b["ly"] + b["hy"]) * 0.5]
        )

    return fn([Vec(n, Vec2), Real], BBoxType, body, name=f"bbox_polygon{n}")


LOOP_POINTS = LOOP_MIN  # polygons from this many points have their box computed by a loop


# -- paths -----------------------------------------------------------------------------------------


def _path_structure(d: Sequence[Any]) -> tuple[tuple[str, tuple[int, ...]], ...]:
    return tuple((c.cmd, tuple(len(part) for part in c.contents)) for c in d)


def _arc_box_points(cursor: Pt, end: Pt, values: Sequence[Scalar]) -> list[Pt]:
    """Corners of the box of the circle whose diameter is the arc's major axis (Penrose's crude bound)."""
    rx_raw, ry_raw, rotation, large_arc, sweep = values[:5]
    phi = -rotation
    rx_pos, ry_pos = am.abs(rx_raw), am.abs(ry_raw)
    x1p, y1p = vrot(vmul(0.5, vsub(cursor, end)), -phi)
    lam = sqr(div(x1p, rx_pos)) + sqr(div(y1p, ry_pos))
    grow = lam > 1.0
    rx = select(grow, sqrt(lam) * rx_pos, rx_pos)
    ry = select(grow, sqrt(lam) * ry_pos, ry_pos)
    num = sqr(rx * ry) - sqr(rx * y1p) - sqr(ry * x1p)
    den = sqr(rx * y1p) + sqr(ry * x1p)
    sign = select(am.abs(large_arc - sweep) < 0.5, 1.0, -1.0)
    k = sign * sqrt(am.max(1e-18, div(num, den)))
    c_prime = [k * div(rx * y1p, ry), k * -div(ry * x1p, rx)]
    cx, cy = vadd(vrot(c_prime, phi), vmul(0.5, vadd(cursor, end)))
    r = am.max(rx, ry)
    return [[cx - r, cy - r], [cx + r, cy + r]]


# command -> number of entries in its contents (each a point, except the 5 numbers opening an arc)
_ARITY = {"M": 1, "L": 1, "T": 1, "Q": 2, "S": 2, "C": 3, "A": 2, "Z": 0}


def _check_command(c: Any, k: int, where: str) -> None:
    if c.cmd not in _ARITY:
        raise ShapeQueryError(f"{where}: unsupported path command {c.cmd} (Penrose supports M L Q C T S A Z)")
    parts = list(c.contents)
    sizes = [5 if (c.cmd == "A" and j == 0) else 2 for j in range(_ARITY[c.cmd])]
    if len(parts) != len(sizes) or any(len(p) < n for p, n in zip(parts, sizes)):
        raise ShapeQueryError(f"{where}: command {k} ({c.cmd}) has malformed contents {parts!r}")


def path_box_points(d: Sequence[Any], where: str = "bbox of Path") -> list[Pt]:
    """The points whose box bounds the path: endpoints and control points, arcs by a bounding circle."""
    if not d:
        raise ShapeQueryError(f"{where}: the path data is empty")
    if d[0].cmd != "M":
        raise ShapeQueryError(f"{where}: the path must start with M, got {d[0].cmd}")
    first = pt(d[0].contents[0])
    cursor, control = first, first
    points: list[Pt] = []
    for k, c in enumerate(d):
        _check_command(c, k, where)
        nxt = first if c.cmd == "Z" else pt(c.contents[-1])
        next_control = nxt
        if c.cmd == "M":
            pass
        elif c.cmd in ("Z", "L"):
            points += [cursor, nxt]
        elif c.cmd == "Q":
            cp = pt(c.contents[0])
            points += [cursor, cp, nxt]
            next_control = cp
        elif c.cmd == "C":
            cp1, cp2 = pt(c.contents[0]), pt(c.contents[1])
            points += [cursor, cp1, cp2, nxt]
            next_control = cp2
        elif c.cmd == "T":
            cp = vadd(cursor, vsub(cursor, control))
            points += [cursor, cp, nxt]
            next_control = cp
        elif c.cmd == "S":
            cp1, cp2 = vadd(cursor, vsub(cursor, control)), pt(c.contents[0])
            points += [cursor, cp1, cp2, nxt]
            next_control = cp2
        elif c.cmd == "A":
            points += _arc_box_points(cursor, nxt, c.contents[0])
        else:
            raise ShapeQueryError(
                f"{where}: unsupported path command {c.cmd} (Penrose supports M L Q C T S A Z)"
            )
        cursor, control = nxt, next_control
    return points


def bbox_path_fn(structure: tuple[tuple[str, tuple[int, ...]], ...]) -> Fn:
    """Box of path data with this command structure; its numbers come as one flat vector."""
    size = sum(sum(lens) for _, lens in structure)

    def body(flat: Any) -> BBox:
        k, d = 0, []
        for cmd, lens in structure:
            parts = []
            for n in lens:
                parts.append([flat[k + j] for j in range(n)])
                k += n
            d.append(PathCmd(cmd, parts))
        return bbox_from_points(path_box_points(d))

    return fn([Vec(max(size, 1), Real)], BBoxType, lambda flat: body(flat), name=f"bbox_path{len(structure)}")


def bbox_of_path_data(d: Sequence[Any]) -> BBox:
    path_box_points(d)  # validates the structure with a clear error before tracing
    flat = [x for c in d for part in c.contents for x in part] or [0.0]
    return _normal(bbox_path_fn(_path_structure(d))(flat))


# -- dispatch --------------------------------------------------------------------------------------


def bbox_of(shape: Any) -> BBox:
    """Penrose's bboxFromShape for any shape kind (Groups: union of members, cut by the clip path)."""
    k = shape.kind
    p = lambda name: prop(shape, name, f"bbox of {k}")  # noqa: E731
    if k == "Circle":
        b = bbox_circle(pt(p("center")), p("r"), p("strokeWidth"))
    elif k == "Ellipse":
        b = bbox_ellipse(pt(p("center")), p("rx"), p("ry"), p("strokeWidth"))
    elif k == "Rectangle":
        b = bbox_rect(pt(p("center")), p("width"), p("height"), p("rotation"), p("strokeWidth"))
    elif k in RECTLIKE:
        return bbox_rectlike(shape)
    elif k == "Line":
        b = bbox_line(pt(p("start")), pt(p("end")), p("strokeWidth"))
    elif k in ("Polygon", "Polyline"):
        points = p("points")
        arr = array_of(points)
        if arr is not None and arr.ty.elem == Vec2:  # a long list replayed as a loop: passed as it is
            b = bbox_polygon_fn(len(points))(arr, p("scale"))
        else:
            pts = [pt(q) for q in points]
            if not pts:
                raise ShapeQueryError(f"bbox of {k}: the shape has no points")
            b = bbox_polygon_fn(len(pts))(pts, p("scale"))
    elif k == "Path":
        return bbox_of_path_data(p("d"))
    elif k == "Group":
        return bbox_of_group(shape)
    else:
        raise ShapeQueryError(f"bbox: unknown shape kind {k}")
    return _normal(b)


def bbox_rectlike(shape: Any) -> BBox:
    """Penrose's bboxFromRectlike: center/width/height/rotation, no stroke (used by shape distances)."""
    p = lambda name: prop(shape, name, f"bbox of {shape.kind}")  # noqa: E731
    rotation = shape.props.get("rotation", 0.0)
    return _normal(bbox_rect(pt(p("center")), p("width"), p("height"), rotation, 0.0))


def rectlike_corners(shape: Any) -> list[Pt]:
    """Corners [tr, tl, bl, br] of a rectangle-like shape's box (Penrose's rect points of a rectlike)."""
    return bbox_pts(bbox_rectlike(shape))


def bbox_of_group(shape: Any) -> BBox:
    members = list(prop(shape, "shapes", "bbox of Group"))
    if not members:
        raise ShapeQueryError("bbox of Group: the group has no shapes")
    box = bbox_of(members[0])
    for m in members[1:]:
        box = _normal(bbox_union(box, bbox_of(m)))
    clip = shape.props.get("clipPath")
    if clip is not None and hasattr(clip, "kind"):
        box = _normal(bbox_intersection(box, bbox_of(clip)))
    return box


def polygon_like_points(shape: Any) -> list[Pt]:
    """Vertices of polygon-like shapes, as Penrose's polygonLikePoints (rect-likes: their AABB corners)."""
    if shape.kind in POLYGONLIKE:
        return points_of(shape)
    if shape.kind == "Line":
        return [pt(prop(shape, "start")), pt(prop(shape, "end"))]
    if shape.kind in RECTLIKE:
        return bbox_pts(bbox_of(shape))
    raise ShapeQueryError(f"polygonLikePoints: shape kind {shape.kind} is not supported")


def shape_center(shape: Any) -> Pt:
    """The `center` property, or the center of the bounding box for shapes without one."""
    if "center" in shape.props:
        return pt(shape.props["center"])
    return pt(bbox_of(shape)["center"])


__all__ = [
    "BBoxType",
    "bbox_circle",
    "bbox_ellipse",
    "bbox_from_points",
    "bbox_intersection",
    "bbox_line",
    "bbox_of",
    "bbox_of_group",
    "bbox_of_path_data",
    "bbox_path_fn",
    "bbox_polygon_fn",
    "bbox_pts",
    "bbox_rectlike",
    "bbox_rotated_rect",
    "bbox_union",
    "corners",
    "inflate",
    "make_bbox",
    "max_x",
    "max_y",
    "min_x",
    "min_y",
    "path_box_points",
    "polygon_like_points",
    "rect_pts",
    "shape_center",
    "x_range",
    "y_range",
]
