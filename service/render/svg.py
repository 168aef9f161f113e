"""SVG rendering of concrete Penrose shapes, following Penrose's renderer element by element.

`render_svg(canvas, shapes)` draws the layer-sorted `energies.shapes.Shape` list on a canvas whose
coordinates are centered with y up; every point goes through `canvas.to_screen` (Penrose's y-flip).
Per shape kind the SVG is Penrose's: circle/ellipse/rect/polygon/polyline elements; a Line is a
`<g>` of arrowhead `<marker>`s and a `<line>` shortened to make room for them; a Path is a `<path>`
(inside a `<g>` with markers when it has arrowheads); Text is a `<text>` whose baseline is placed
from the measured height and descent; an Equation is a `<g>` translated to its top-left corner
holding a nested `<svg>` with the label's paths; an Image is a `<g>` with an `<image>`; a Group is a
`<g>` whose members are wrapped in `<g clip-path>` when it has a clip shape. Colors become
`fill`/`stroke` plus `fill-opacity`/`stroke-opacity`; names become `<title>`; passthrough
properties become attributes. Output is deterministic: same input, same bytes.

Every document is well-formed XML: characters XML forbids (control characters, lone surrogates)
are dropped from text and attribute values, and a passthrough property whose name is not an XML
name is left out. In safe mode (`safe=True`, the default) nothing in the document can run script
or load a resource when it is opened or inlined: event-handler attributes (`on*`), hrefs other
than embedded `data:image/` URIs, `url(...)` references other than to the document's own ids,
`@import`, `javascript:` and CSS escapes are dropped, whichever property (declared or passed
through) they came from. `safe=False` keeps Penrose's full passthrough, for trusted Styles.
"""

from __future__ import annotations

import functools
import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import svgwrite
from svgwrite.base import BaseElement

from energies.limits import check_deadline
from energies.shapes import SHAPE_TYPES, Canvas, Color, PathCmd, Shape
from energies.text.labels import XML_FORBIDDEN, LabelError, measure_equation
from service.render.arrowheads import Arrowhead, arrowhead_for, line_ends_with_room_for_arrows

ImageResolver = Callable[[str], str | None]
DASH_ARRAY = "7,5"  # what Penrose draws for strokeStyle "dashed"


class RenderError(ValueError):
    """A shape that cannot be drawn; the message names the shape."""


# SVG presentation attributes spelled with hyphens; a passthrough property named in camelCase
# (e.g. `strokeLinejoin`) is written with the SVG spelling (`stroke-linejoin`).
HYPHENATED_SVG_ATTRIBUTES = """
accent-height alignment-baseline arabic-form baseline-shift cap-height clip-path clip-rule
color-interpolation color-interpolation-filters color-profile color-rendering dominant-baseline
enable-background fill-opacity fill-rule flood-color flood-opacity font-family font-size
font-size-adjust font-stretch font-style font-variant font-weight glyph-name
glyph-orientation-horizontal glyph-orientation-vertical horiz-adv-x horiz-origin-x image-rendering
letter-spacing lighting-color marker-end marker-mid marker-start overline-position
overline-thickness panose-1 paint-order pointer-events rendering-intent shape-rendering stop-color
stop-opacity strikethrough-position strikethrough-thickness stroke-dasharray stroke-dashoffset
stroke-linecap stroke-linejoin stroke-miterlimit stroke-opacity stroke-width text-anchor
text-decoration text-rendering transform-origin underline-position underline-thickness unicode-bidi
unicode-range units-per-em v-alphabetic v-hanging v-ideographic v-mathematical vector-effect
vert-adv-y vert-origin-x vert-origin-y word-spacing writing-mode
"""


def camel_case(kebab: str) -> str:
    return re.sub(r"-([a-z0-9])", lambda m: m.group(1).upper(), kebab)


CAMEL_TO_SVG = {camel_case(name): name for name in HYPHENATED_SVG_ATTRIBUTES.split()}
NEVER_PASSED_THROUGH = {"name", "ensureOnCanvas"}

# The ASCII part of XML's Name production, the only attribute names written.
XML_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
# In safe mode: a url(...) must point into the document (`url(#id)`, markers and clips); hrefs
# only embed images; these words start script or a load in CSS or a URL; a backslash is a CSS
# escape, which could spell any of them.
EXTERNAL_URL = re.compile(r"url\((?!['\"]?#)")
SCRIPTING = ("javascript:", "vbscript:", "@import", "expression(", "\\")
EMBEDDED_IMAGE = re.compile(r"data:image/[a-z0-9.+-]+[;,]")
# what url(, javascript:, @import and escapes need, or XML forbids
SUSPECT_VALUE = re.compile(r"[(:@\\\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


@functools.lru_cache(maxsize=1024)  # attribute names are few, but passthrough names are a Style's
def suspect_name(name: str) -> bool:
    return name.lower().startswith(("on", "xml")) or name.lower().endswith("href")


class Node(BaseElement):
    """Any SVG element: a tag, attributes in a fixed order, optional text and children."""

    def __init__(self, tag: str, attrs: dict[str, str] | None = None, text: str | None = None) -> None:
        self.elementname = tag
        super().__init__(debug=False, profile="full")
        self.attribs.update(attrs or {})
        self.text = text
        self.fragment = ""

    def get_xml(self) -> ET.Element:
        xml = super().get_xml()
        if self.text is not None:
            xml.text = self.text
        if self.fragment:
            # Pre-rendered SVG (equation paths) goes in as parsed elements, never as escaped text.
            xml.extend(ET.fromstring(f"<g>{self.fragment}</g>"))
        return xml


def fmt(x: float) -> str:
    """A number as JavaScript prints it: whole numbers without ".0", others in shortest round-trip form."""
    value = float(x)
    if not math.isfinite(value):
        raise ValueError(f"non-finite number {value}")
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def non_negative(x: float) -> float:
    """Sizes below zero draw as zero (as Penrose clamps them); NaN is an error, not a zero."""
    value = float(x)
    if math.isnan(value):
        raise ValueError("non-finite number nan")
    return max(value, 0.0)


def round2(x: float) -> float:
    """Penrose's round2 (JavaScript Math.round to two decimals)."""
    return math.floor(x * 100 + 0.5) / 100


@dataclass
class RenderContext:
    canvas: Canvas
    resolve_image: ImageResolver | None
    id_prefix: str
    used_ids: set[str] = field(default_factory=set)

    def screen(self, point: Sequence[float]) -> tuple[float, float]:
        return self.canvas.to_screen(float(point[0]), float(point[1]))

    def unique_id(self, raw: str) -> str:
        """An XML-safe id (Penrose's names contain backticks and dots), unique within the document."""
        base = re.sub(r"[^A-Za-z0-9_.-]", "_", raw)
        candidate, n = base, 1
        while candidate in self.used_ids:
            n += 1
            candidate = f"{base}-{n}"
        self.used_ids.add(candidate)
        return candidate


def prop(shape: Shape, name: str) -> Any:
    """A property of the shape, or the shape type's fixed default when the shape leaves it out."""
    if name in shape.props:
        return shape.props[name]
    spec = SHAPE_TYPES[shape.kind].props.get(name)
    if spec is None or spec.sampler is not None or spec.pending:
        raise ValueError(f"missing property {name!r}")
    return spec.default


def fill_attrs(color: Color) -> dict[str, str]:
    attrs = {"fill": color.svg_paint()}
    if not color.is_none:
        attrs["fill-opacity"] = fmt(color.svg_opacity())
    return attrs


def stroke_attrs(shape: Shape) -> dict[str, str]:
    color: Color = prop(shape, "strokeColor")
    attrs = {"stroke": color.svg_paint()}
    if color.is_none:
        return attrs  # width, dashes and caps mean nothing without a stroke
    attrs["stroke-opacity"] = fmt(color.svg_opacity())
    attrs["stroke-width"] = fmt(prop(shape, "strokeWidth"))
    dasharray = prop(shape, "strokeDasharray")
    if dasharray != "":
        attrs["stroke-dasharray"] = dasharray
    elif prop(shape, "strokeStyle") == "dashed":
        attrs["stroke-dasharray"] = DASH_ARRAY
    if "strokeLinecap" in SHAPE_TYPES[shape.kind].props and prop(shape, "strokeLinecap") != "":
        attrs["stroke-linecap"] = prop(shape, "strokeLinecap")
    return attrs


def add_title(elem: Node, shape: Shape) -> None:
    elem.add(Node("title", text=shape.name))


def add_passthrough(elem: Node, shape: Shape) -> None:
    """Copy undeclared Style properties to SVG attributes; `style` is appended, others never overwrite."""
    for key, value in shape.passthrough.items():
        if value == "" or key in NEVER_PASSED_THROUGH or not XML_NAME.fullmatch(key):
            continue
        text = value if isinstance(value, str) else fmt(value)
        if key == "style":
            existing = elem.attribs.get("style")
            elem.attribs["style"] = text if existing is None else f"{existing}{text}"
            continue
        attribute = CAMEL_TO_SVG.get(key, key)
        elem.attribs.setdefault(attribute, text)


def rotate_about(shape: Shape, ctx: RenderContext) -> str:
    x, y = ctx.screen(prop(shape, "center"))
    return f"rotate({fmt(prop(shape, 'rotation'))}, {fmt(x)}, {fmt(y)})"


def top_left_translate(shape: Shape, ctx: RenderContext) -> str:
    x, y = ctx.screen(prop(shape, "center"))
    return f"translate({fmt(x - prop(shape, 'width') / 2)}, {fmt(y - prop(shape, 'height') / 2)})"


def render_circle(shape: Shape, ctx: RenderContext) -> Node:
    cx, cy = ctx.screen(prop(shape, "center"))
    attrs = {**fill_attrs(prop(shape, "fillColor")), "cx": fmt(cx), "cy": fmt(cy), **stroke_attrs(shape)}
    attrs["r"] = fmt(non_negative(prop(shape, "r")))
    return Node("circle", attrs)


def render_ellipse(shape: Shape, ctx: RenderContext) -> Node:
    cx, cy = ctx.screen(prop(shape, "center"))
    attrs = {**fill_attrs(prop(shape, "fillColor")), "cx": fmt(cx), "cy": fmt(cy), **stroke_attrs(shape)}
    attrs["rx"] = fmt(non_negative(prop(shape, "rx")))
    attrs["ry"] = fmt(non_negative(prop(shape, "ry")))
    return Node("ellipse", attrs)


def render_rectangle(shape: Shape, ctx: RenderContext) -> Node:
    cx, cy = ctx.screen(prop(shape, "center"))
    width, height = prop(shape, "width"), prop(shape, "height")
    attrs = {
        "x": fmt(cx - width / 2),
        "y": fmt(cy - height / 2),
        "width": fmt(non_negative(width)),
        "height": fmt(non_negative(height)),
        **fill_attrs(prop(shape, "fillColor")),
        **stroke_attrs(shape),
        "rx": fmt(prop(shape, "cornerRadius")),
        "transform": rotate_about(shape, ctx),
    }
    return Node("rect", attrs)


def poly_attrs(shape: Shape, ctx: RenderContext) -> dict[str, str]:
    points = " ".join(",".join(fmt(v) for v in ctx.screen(p)) for p in prop(shape, "points"))
    scale = prop(shape, "scale") or 1.0  # Penrose treats a zero scale as none
    return {
        **fill_attrs(prop(shape, "fillColor")),
        **stroke_attrs(shape),
        "transform": f"scale({fmt(scale)})",
        "points": points,
    }


def render_polygon(shape: Shape, ctx: RenderContext) -> Node:
    return Node("polygon", poly_attrs(shape, ctx))


def render_polyline(shape: Shape, ctx: RenderContext) -> Node:
    return Node("polyline", poly_attrs(shape, ctx))


def arrowhead_of(shape: Shape, end: str) -> Arrowhead | None:
    return arrowhead_for(prop(shape, f"{end}Arrowhead"), f"{end}Arrowhead")


def marker(marker_id: str, color: Color, arrow: Arrowhead, size: float, flip: bool) -> Node:
    """Penrose's arrowhead marker: sized in stroke widths, oriented along the line."""
    elem = Node(
        "marker",
        {
            "id": marker_id,
            "markerUnits": "strokeWidth",
            "markerWidth": fmt(round2(arrow.width * size)),
            "markerHeight": fmt(round2(arrow.height * size)),
            "viewBox": arrow.view_box,
            "refX": fmt(arrow.ref_x),
            "refY": fmt(arrow.ref_y),
            "orient": "auto" if flip else "auto-start-reverse",
        },
    )
    path_attrs = {"d": arrow.path}
    if arrow.stroked:
        path_attrs["fill"] = "none"
        elem.attribs["stroke"] = color.svg_paint()
        elem.attribs["stroke-opacity"] = fmt(color.svg_opacity())
    else:
        path_attrs["fill"] = color.svg_paint()
        path_attrs["fill-opacity"] = fmt(color.svg_opacity())
    if arrow.round_caps:
        path_attrs["stroke-linecap"] = "round"
    elem.add(Node("path", path_attrs))
    return elem


def add_markers(group: Node, target: Node, shape: Shape, ctx: RenderContext) -> None:
    """Add start/end arrowhead markers for `shape` to `group` and reference them from `target`."""
    color: Color = prop(shape, "strokeColor")
    stem = f"{ctx.id_prefix}-{shape.name}"
    start, end = arrowhead_of(shape, "start"), arrowhead_of(shape, "end")
    if start is not None:
        start_id = ctx.unique_id(f"{stem}-startArrowId")
        flip = bool(prop(shape, "flipStartArrowhead"))
        group.add(marker(start_id, color, start, prop(shape, "startArrowheadSize"), flip))
        target.attribs["marker-start"] = f"url(#{start_id})"
    if end is not None:
        end_id = ctx.unique_id(f"{stem}-endArrowId")
        group.add(marker(end_id, color, end, prop(shape, "endArrowheadSize"), False))
        target.attribs["marker-end"] = f"url(#{end_id})"


def render_line(shape: Shape, ctx: RenderContext) -> Node:
    ends = line_ends_with_room_for_arrows(
        prop(shape, "start"),
        prop(shape, "end"),
        prop(shape, "strokeWidth"),
        (
            arrowhead_of(shape, "start"),
            prop(shape, "startArrowheadSize"),
            bool(prop(shape, "flipStartArrowhead")),
        ),
        (arrowhead_of(shape, "end"), prop(shape, "endArrowheadSize")),
    )
    (sx, sy), (ex, ey) = (ctx.screen(p) for p in ends)
    group = Node("g")
    line = Node("line", {"x1": fmt(sx), "y1": fmt(sy), "x2": fmt(ex), "y2": fmt(ey), **stroke_attrs(shape)})
    add_markers(group, line, shape, ctx)
    group.add(line)
    return group


def path_string(commands: Sequence[PathCmd], ctx: RenderContext) -> str:
    """SVG path data: points are flipped to screen coordinates, plain values (arc radii, flags) are not."""
    parts = []
    for command in commands:
        numbers: list[float] = []
        for k, entry in enumerate(command.contents):
            numbers.extend(entry if command.holds_values(k) else ctx.screen((entry[0], entry[1])))
        if not numbers and command.cmd.upper() != "Z":
            raise ValueError(f"path command {command.cmd!r} has no arguments")
        parts.append(" ".join([command.cmd, *(fmt(n) for n in numbers)]))
    return " ".join(parts)


def render_path(shape: Shape, ctx: RenderContext) -> Node:
    path = Node("path", {**fill_attrs(prop(shape, "fillColor")), **stroke_attrs(shape)})
    path.attribs["d"] = path_string(prop(shape, "d"), ctx)
    if arrowhead_of(shape, "start") is None and arrowhead_of(shape, "end") is None:
        return path
    group = Node("g")
    add_markers(group, path, shape, ctx)
    group.add(path)
    return group


def font_rule(shape: Shape) -> str:
    """The CSS `font` shorthand: style/variant/weight/stretch words, size[/line-height], family."""
    words = [prop(shape, k) for k in ("fontStretch", "fontStyle", "fontVariant", "fontWeight")]
    size = prop(shape, "fontSize")
    line_height = prop(shape, "lineHeight")
    size = f"{size}/{line_height}" if line_height else size
    return " ".join(w for w in [*words, size, prop(shape, "fontFamily")] if w)


def render_text(shape: Shape, ctx: RenderContext) -> Node:
    x, y = ctx.screen(prop(shape, "center"))
    height, descent = prop(shape, "height"), prop(shape, "descent")
    attrs = {
        **fill_attrs(prop(shape, "fillColor")),
        **stroke_attrs(shape),
        "transform": rotate_about(shape, ctx),
        "style": f"font: {font_rule(shape)};",
        # The center is the middle of the ink box; the baseline sits `descent` above its bottom.
        "x": fmt(x),
        "y": fmt(y + height / 2 - descent),
        "width": fmt(non_negative(prop(shape, "width"))),
        "height": fmt(non_negative(height)),
        "ascent": fmt(prop(shape, "ascent")),
        "descent": fmt(descent),
    }
    for name in ("fontSizeAdjust", "alignmentBaseline", "dominantBaseline", "textAnchor", "visibility"):
        if prop(shape, name) != "":
            attrs[CAMEL_TO_SVG.get(name, name)] = prop(shape, name)
    elem = Node("text", attrs, text=prop(shape, "string"))
    return elem


def render_equation(shape: Shape, ctx: RenderContext) -> Node:
    try:
        label = measure_equation(prop(shape, "string"), prop(shape, "fontSize"), label=shape.name)
    except LabelError as error:
        raise ValueError(str(error)) from error
    group = Node("g", {"transform": f"{rotate_about(shape, ctx)} {top_left_translate(shape, ctx)}"})
    nested = Node(
        "svg",
        {
            "style": f"font-size: {prop(shape, 'fontSize')}",
            # The box is TeX's, not the ink's: an italic letter or an accent may overhang it.
            "overflow": "visible",
            "width": fmt(non_negative(prop(shape, "width"))),
            "height": fmt(non_negative(prop(shape, "height"))),
            "viewBox": " ".join(fmt(v) for v in label.view_box),
        },
    )
    paint = Node("g", {**fill_attrs(prop(shape, "fillColor")), "stroke": "none", "stroke-width": "0"})
    paint.fragment = label.svg_fragment
    nested.add(paint)
    group.add(nested)
    return group


def render_image(shape: Shape, ctx: RenderContext) -> Node:
    href = prop(shape, "href")
    if ctx.resolve_image is not None:
        resolved = ctx.resolve_image(href)
        href = resolved if resolved is not None else href
    group = Node("g", {"transform": f"{rotate_about(shape, ctx)} {top_left_translate(shape, ctx)}"})
    image = Node(
        "image",
        {
            "href": href,
            "width": fmt(non_negative(prop(shape, "width"))),
            "height": fmt(non_negative(prop(shape, "height"))),
        },
    )
    if prop(shape, "preserveAspectRatio") != "":
        image.attribs["preserveAspectRatio"] = prop(shape, "preserveAspectRatio")
    group.add(image)
    return group


def render_group(shape: Shape, ctx: RenderContext) -> Node:
    group = Node("g")
    clip: Shape | None = prop(shape, "clipPath")
    clip_id = None
    if clip is not None:
        if clip.kind == "Group":
            raise ValueError(f"clip shape {clip.name!r} is a Group; Penrose clips only with a single shape")
        clip_id = ctx.unique_id(f"{ctx.id_prefix}{clip.name}-clip")
        clip_path = Node("clipPath", {"id": clip_id})
        clip_path.add(render_shape(clip, ctx))
        group.add(clip_path)
    for member in prop(shape, "shapes"):
        if clip is None:
            group.add(render_shape(member, ctx))
        elif member.name != clip.name:  # the clip shape is a member drawn only as the clip
            # Wrapping applies the clip after the member's own transforms.
            wrapper = Node("g", {"clip-path": f"url(#{clip_id})"})
            wrapper.add(render_shape(member, ctx))
            group.add(wrapper)
    return group


def xml_chars(text: str) -> str:
    """`text` without the characters XML forbids."""
    return XML_FORBIDDEN.sub("", text)


def safe_attribute(name: str, value: str) -> bool:
    """Whether an attribute can neither run script nor load anything when the SVG is opened."""
    folded = "".join(value.split()).lower()
    if name.lower().startswith(("on", "xml")):
        return False
    if name.lower().endswith("href"):
        return EMBEDDED_IMAGE.match(folded) is not None
    return EXTERNAL_URL.search(folded) is None and not any(word in folded for word in SCRIPTING)


def clean_tree(root: ET.Element, safe: bool) -> None:
    """Make the document well-formed XML and, when `safe`, inert (see the module's contract)."""
    for elem in root.iter():
        check_deadline("rendering the SVG")
        if elem.text and XML_FORBIDDEN.search(elem.text):
            elem.text = xml_chars(elem.text)
        if elem is root:
            continue  # the root's attributes (size, namespaces) are the renderer's own
        for name, value in list(elem.attrib.items()):
            # most values (numbers, colors) hold neither a forbidden character nor one that a
            # script or a URL needs: one search clears them
            if not (SUSPECT_VALUE.search(value) or suspect_name(name)):
                continue
            value = elem.attrib[name] = xml_chars(value)
            if safe and not safe_attribute(name, value):
                del elem.attrib[name]


RENDERERS: dict[str, Callable[[Shape, RenderContext], Node]] = {
    "Circle": render_circle,
    "Ellipse": render_ellipse,
    "Rectangle": render_rectangle,
    "Line": render_line,
    "Path": render_path,
    "Polygon": render_polygon,
    "Polyline": render_polyline,
    "Text": render_text,
    "Equation": render_equation,
    "Image": render_image,
    "Group": render_group,
}


def render_shape(shape: Shape, ctx: RenderContext) -> Node:
    renderer = RENDERERS.get(shape.kind)
    if renderer is None:
        raise RenderError(f"shape {shape.name!r}: unknown shape type {shape.kind!r}")
    try:
        elem = renderer(shape, ctx)
    except RenderError:
        raise
    except (ValueError, TypeError, KeyError, IndexError, AttributeError) as error:
        raise RenderError(f"shape {shape.name!r} ({shape.kind}): {error}") from error
    add_title(elem, shape)
    add_passthrough(elem, shape)
    return elem


def render_svg(
    canvas: Canvas,
    shapes: Sequence[Shape],
    *,
    resolve_image: ImageResolver | None = None,
    namespace: str = "penrose",
    variation: str = "",
    safe: bool = True,
) -> str:
    """The SVG document for `shapes` (drawn in order, first at the bottom) on `canvas`.

    `resolve_image(href)` may turn an Image's href into something embeddable (e.g. a data URI); when
    it returns None, or is not given, the href is written as given. `namespace` and `variation` make
    marker and clip-path ids unique when several diagrams share a page, as in Penrose. `safe` (the
    default) leaves out whatever could run script or load a resource (see the module's contract).
    """
    drawing = svgwrite.Drawing(size=(fmt(canvas.width), fmt(canvas.height)), profile="full", debug=False)
    drawing.attribs["viewBox"] = f"0 0 {fmt(canvas.width)} {fmt(canvas.height)}"
    ctx = RenderContext(canvas, resolve_image, f"{namespace}-{variation}" if variation else namespace)
    for shape in shapes:
        check_deadline("rendering the SVG")
        drawing.add(render_shape(shape, ctx))
    root = drawing.get_xml()
    clean_tree(root, safe)
    return ET.tostring(root, encoding="utf-8").decode("utf-8")
