"""Penrose's shape types, their property values, defaults and seeded samplers.

Public API (consumed by the Style evaluator, the optimizer and the renderer):

- `Canvas(width, height)`: shape coordinates are centered, origin mid-canvas, y up (as Penrose);
  `canvas.to_screen(x, y)` gives SVG coordinates.
- `Shape(kind, name, props, passthrough={})`: a concrete shape; `name` is its Penrose path name
  (e.g. "`A`.icon", used for `<title>` and ids; `props["name"]`, when present, should equal it).
  `props` maps Penrose property names
  to values of these Python types, by `PropType`:
    FLOAT -> float                       VECTOR -> tuple[float, float]
    PT_LIST -> tuple[tuple[float, float], ...]
    COLOR -> Color                       STRING -> str            BOOL -> bool
    PATH_DATA -> tuple[PathCmd, ...]     (PathCmd(cmd, contents): points, flipped when rendered,
                                          and an arc's plain numbers; see PathCmd)
    SHAPE_LIST -> tuple[Shape, ...]      CLIP_DATA -> Shape | None (None is Penrose's NoClip)
  `passthrough` holds undeclared string/float properties (e.g. `style`, `opacity`) that the renderer
  copies to SVG attributes, camelCase names mapped to SVG's kebab-case.
- `Color(r, g, b, a)` with channels in [0, 1], `Color.none()`, `Color.parse("#rgb"|"#rgba"|"#rrggbb"|
  "#rrggbbaa")`, `Color.from_hsva(h, s, v, a)`, `.svg_paint()` and `.svg_opacity()`.
- `SHAPE_TYPES: dict[str, ShapeSpec]`; `ShapeSpec.props: dict[str, PropSpec]` in Penrose's sampling
  order; `PropSpec(type, default, sampler, varying, pending)`.
- `rng_for(variation) -> SeedRandom` (Penrose's `seedrandom` generator keyed by the variation) and
  `make_default_props(kind, canvas, rng) -> dict` (every property at its default, unknowns sampled).

Penrose facts kept here: sampled centers are uniform over the canvas; sampled sizes (r, rx, width...)
uniform in [3, canvas.width/6) (heights: canvas.height/6); sampled fill colors have r, g, b uniform in
[0.1, 0.9) and alpha 0.5, and are optimizer unknowns like every sampled value. Text and Equation
width/height/ascent/descent are `pending`: fixed inputs set from label measurement
(`energies.text.labels`).
"""

from energies.shapes.specs import (
    SHAPE_TYPES,
    PropSpec,
    ShapeSpec,
    make_default_props,
    rng_for,
    sample_color,
    sample_height,
    sample_vector,
    sample_width,
)
from energies.shapes.values import ARC_VALUE_COUNT, Canvas, Color, PathCmd, PropType, Shape

__all__ = [
    "ARC_VALUE_COUNT",
    "SHAPE_TYPES",
    "Canvas",
    "Color",
    "PathCmd",
    "PropSpec",
    "PropType",
    "Shape",
    "ShapeSpec",
    "make_default_props",
    "rng_for",
    "sample_color",
    "sample_height",
    "sample_vector",
    "sample_width",
]
