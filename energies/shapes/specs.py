"""The eleven Penrose shape types: each property's value type, default or sampler, and whether it varies.

Mirrors Penrose's `packages/core/src/shapes/*.ts`: property names, defaults and sampling ranges are
Penrose's; properties are listed in the order Penrose samples them, so Penrose's generator
(`seedrandom.SeedRandom`, seeded by the `variation` string) drawn in that order gives Penrose's own
starting points.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from energies.shapes.seedrandom import SeedRandom
from energies.shapes.values import Canvas, Color, PropType

Sampler = Callable[[Canvas, SeedRandom], Any]


def rng_for(variation: str) -> SeedRandom:
    """Penrose's generator for `variation`: the same string gives Penrose's numbers on any machine."""
    return SeedRandom(variation)


def uniform_float(rng: SeedRandom, lo: float, hi: float) -> float:
    """Penrose's randFloat: lo inclusive, hi exclusive. A range that collapses (tiny canvas) gives lo."""
    return rng.random() * max(hi - lo, 0.0) + lo  # Penrose's operation order, for its exact bits


Range = tuple[float, float]


def vector_ranges(canvas: Canvas) -> tuple[Range, Range]:
    return (canvas.x_range, canvas.y_range)


def width_range(canvas: Canvas) -> tuple[Range]:
    return ((3.0, canvas.width / 6),)


def height_range(canvas: Canvas) -> tuple[Range]:
    return ((3.0, canvas.height / 6),)


def sample_vector(canvas: Canvas, rng: SeedRandom) -> tuple[float, float]:
    """A point anywhere on the canvas (Penrose's sampleVector)."""
    x, y = (uniform_float(rng, *r) for r in vector_ranges(canvas))
    return (x, y)


def sample_width(canvas: Canvas, rng: SeedRandom) -> float:
    """Penrose's sampleWidth: uniform in [3, canvas.width / 6)."""
    return uniform_float(rng, *width_range(canvas)[0])


def sample_height(canvas: Canvas, rng: SeedRandom) -> float:
    """Penrose's sampleHeight: uniform in [3, canvas.height / 6)."""
    return uniform_float(rng, *height_range(canvas)[0])


# The uniform ranges of the samplers whose values are positions and sizes: a multi-start portfolio
# draws its other initial states from them. Colors are left out: a start keeps the variation's colors.
SAMPLE_RANGES: dict[Any, Callable[[Canvas], tuple[Range, ...]]] = {
    sample_vector: vector_ranges,
    sample_width: width_range,
    sample_height: height_range,
}


def sample_color(canvas: Canvas, rng: SeedRandom) -> Color:
    """Penrose's sampleColor: r, g, b uniform in [0.1, 0.9), alpha fixed at 0.5."""
    r, g, b = (uniform_float(rng, 0.1, 0.9) for _ in range(3))
    return Color(r, g, b, 0.5)


@dataclass(frozen=True)
class PropSpec:
    """One property of a shape type.

    `default` is the fixed value when there is no `sampler`. `varying` says whether Penrose makes the
    default an optimized unknown (sampled values are). `pending` marks label measurements (Text and
    Equation width/height/ascent/descent): fixed inputs filled in after labels are measured.
    """

    type: PropType
    default: Any = None
    sampler: Sampler | None = None
    varying: bool = False
    pending: bool = False

    def sample_ranges(self, canvas: Canvas) -> tuple[Range, ...] | None:
        """The uniform range of each component, for the samplers in `SAMPLE_RANGES`; else None."""
        ranges = SAMPLE_RANGES.get(self.sampler)
        return ranges(canvas) if ranges is not None else None

    def initial_value(self, canvas: Canvas, rng: SeedRandom) -> Any:
        if self.sampler is not None:
            return self.sampler(canvas, rng)
        if self.pending:
            return 0.0  # Penrose's placeholder until label collection completes
        return self.default


@dataclass(frozen=True)
class ShapeSpec:
    """A shape type: its name and its properties in Penrose's sampling order."""

    kind: str
    props: dict[str, PropSpec]


def fixed(type_: PropType, value: Any) -> PropSpec:
    return PropSpec(type_, default=value)


def sampled(type_: PropType, sampler: Sampler) -> PropSpec:
    return PropSpec(type_, sampler=sampler, varying=True)


PENDING = PropSpec(PropType.FLOAT, pending=True)
F, V, S, B, C = PropType.FLOAT, PropType.VECTOR, PropType.STRING, PropType.BOOL, PropType.COLOR
BLACK = Color(0.0, 0.0, 0.0, 1.0)
NO_PAINT = Color.none()
DEFAULT_POINTS = ((0.0, 0.0), (0.0, 10.0), (10.0, 0.0))


def stroke_props(width: float, color: Color) -> dict[str, PropSpec]:
    return {
        "strokeWidth": fixed(F, width),
        "strokeStyle": fixed(S, "solid"),
        "strokeColor": fixed(C, color),
        "strokeDasharray": fixed(S, ""),
    }


def arrow_props() -> dict[str, PropSpec]:
    return {
        "startArrowheadSize": fixed(F, 1.0),
        "startArrowhead": fixed(S, "none"),
        "flipStartArrowhead": fixed(B, False),
        "endArrowheadSize": fixed(F, 1.0),
        "endArrowhead": fixed(S, "none"),
    }


def label_measure_props() -> dict[str, PropSpec]:
    return {"width": PENDING, "height": PENDING, "ascent": PENDING, "descent": PENDING}


def make_specs() -> dict[str, ShapeSpec]:
    # Over 80 lines on purpose: one table of every shape type's properties in Penrose's sampling
    # order, read top to bottom beside Penrose's shape definitions.
    on_canvas = {"ensureOnCanvas": fixed(B, True)}
    specs = {
        "Circle": {
            **stroke_props(0.0, NO_PAINT),
            "fillColor": sampled(C, sample_color),
            "center": sampled(V, sample_vector),
            "r": sampled(F, sample_width),
            **on_canvas,
        },
        "Ellipse": {
            **stroke_props(0.0, NO_PAINT),
            "fillColor": sampled(C, sample_color),
            "center": sampled(V, sample_vector),
            "rx": sampled(F, sample_width),
            "ry": sampled(F, sample_height),
            **on_canvas,
        },
        "Rectangle": {
            **stroke_props(0.0, NO_PAINT),
            "fillColor": sampled(C, sample_color),
            "center": sampled(V, sample_vector),
            "width": sampled(F, sample_width),
            "height": sampled(F, sample_height),
            "cornerRadius": fixed(F, 0.0),
            "rotation": fixed(F, 0.0),
            **on_canvas,
        },
        "Line": {
            **stroke_props(1.0, BLACK),
            **arrow_props(),
            "start": sampled(V, sample_vector),
            "end": sampled(V, sample_vector),
            "strokeLinecap": fixed(S, ""),
            **on_canvas,
            "fillColor": fixed(C, NO_PAINT),
        },
        "Path": {
            **stroke_props(1.0, BLACK),
            "strokeLinecap": fixed(S, "butt"),
            "fillColor": fixed(C, NO_PAINT),
            **arrow_props(),
            "d": fixed(PropType.PATH_DATA, ()),
            **on_canvas,
        },
        "Polygon": {
            **stroke_props(0.0, NO_PAINT),
            "fillColor": sampled(C, sample_color),
            "scale": fixed(F, 1.0),
            "points": fixed(PropType.PT_LIST, DEFAULT_POINTS),
            **on_canvas,
        },
        "Polyline": {
            **stroke_props(1.0, BLACK),
            "strokeLinecap": fixed(S, "butt"),
            "fillColor": fixed(C, NO_PAINT),
            "scale": fixed(F, 1.0),
            "points": fixed(PropType.PT_LIST, DEFAULT_POINTS),
            **on_canvas,
        },
        "Text": {
            **stroke_props(0.0, NO_PAINT),
            "fillColor": fixed(C, BLACK),
            "center": sampled(V, sample_vector),
            **label_measure_props(),
            "rotation": fixed(F, 0.0),
            "string": fixed(S, "defaultText"),
            "visibility": fixed(S, ""),
            "fontFamily": fixed(S, "sans-serif"),
            "fontSize": fixed(S, "12px"),
            "fontSizeAdjust": fixed(S, ""),
            "fontStretch": fixed(S, ""),
            "fontStyle": fixed(S, ""),
            "fontVariant": fixed(S, ""),
            "fontWeight": fixed(S, ""),
            "lineHeight": fixed(S, ""),
            "textAnchor": fixed(S, "middle"),
            # Browsers differ in which of the two they honor (Firefox only reads dominant-baseline).
            "alignmentBaseline": fixed(S, "alphabetic"),
            "dominantBaseline": fixed(S, "alphabetic"),
            **on_canvas,
        },
        "Equation": {
            "fillColor": fixed(C, BLACK),
            "center": sampled(V, sample_vector),
            "width": PENDING,
            "height": PENDING,
            "descent": PENDING,
            "ascent": PENDING,
            "rotation": fixed(F, 0.0),
            "string": fixed(S, "defaultLabelText"),
            "fontSize": fixed(S, "16px"),
            **on_canvas,
        },
        "Image": {
            "center": sampled(V, sample_vector),
            "width": sampled(F, sample_width),
            "height": sampled(F, sample_height),
            "rotation": fixed(F, 0.0),
            "href": fixed(S, "defaultImage"),
            **on_canvas,
            "preserveAspectRatio": fixed(S, ""),
        },
        "Group": {
            **on_canvas,
            "shapes": fixed(PropType.SHAPE_LIST, ()),
            "clipPath": fixed(PropType.CLIP_DATA, None),
        },
    }
    return {
        kind: ShapeSpec(kind, {"name": fixed(S, f"default{kind}"), **props}) for kind, props in specs.items()
    }


SHAPE_TYPES: dict[str, ShapeSpec] = make_specs()


def make_default_props(kind: str, canvas: Canvas, rng: SeedRandom) -> dict[str, Any]:
    """Every property of a `kind` shape at its default, sampling the unknowns from `rng` in order.

    As in Penrose, all samplers run even for properties a Style will override, so the numbers drawn
    for one shape do not depend on which properties the Style sets.
    """
    spec = SHAPE_TYPES.get(kind)
    if spec is None:
        raise ValueError(f"unknown shape type {kind!r}; expected one of {', '.join(SHAPE_TYPES)}")
    return {name: prop.initial_value(canvas, rng) for name, prop in spec.props.items()}
