"""The SVG renderer: elements and attributes per shape kind, with coordinates derived by hand."""

import math
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from energies.shapes import Canvas, Color, PathCmd, Shape, make_default_props, rng_for
from energies.text.labels import measure_equation, measure_text
from registry.svg_check import svg_problems
from service.render.svg import RenderError, render_svg

SVG = "{http://www.w3.org/2000/svg}"
CANVAS = Canvas(400.0, 300.0)  # screen x = 200 + x, screen y = 150 - y
RED = Color(1.0, 0.0, 0.0, 1.0)


def shape(kind: str, name: str, **props) -> Shape:
    full = make_default_props(kind, CANVAS, rng_for(name))
    full.update(props, name=name)
    return Shape(kind, name, full)


def render(*shapes: Shape, **options) -> ET.Element:
    return ET.fromstring(render_svg(CANVAS, list(shapes), **options))


def only(root: ET.Element, tag: str) -> ET.Element:
    found = root.findall(f".//{SVG}{tag}")
    assert len(found) == 1, f"expected one <{tag}>, found {len(found)}"
    return found[0]


def floats(text: str) -> list[float]:
    return [
        float(v)
        for v in text.replace(",", " ").replace("(", " ").replace(")", " ").split()
        if v[0] in "-.0123456789"
    ]


def test_document_viewbox_and_size():
    root = render()
    assert root.tag == f"{SVG}svg"
    assert root.get("viewBox") == "0 0 400 300"
    assert (root.get("width"), root.get("height")) == ("400", "300")


def test_circle_is_flipped_into_screen_coordinates():
    circle = only(
        render(shape("Circle", "A.c", center=(10.0, 20.0), r=5.0, fillColor=Color(1, 0, 0, 0.25))), "circle"
    )
    assert (float(circle.get("cx")), float(circle.get("cy")), float(circle.get("r"))) == (210, 130, 5)
    assert (circle.get("fill"), float(circle.get("fill-opacity"))) == ("#ff0000", 0.25)
    # No stroke color: no stroke width or dashes, as Penrose.
    assert circle.get("stroke") == "none" and circle.get("stroke-width") is None
    assert only(circle, "title").text == "A.c"


def test_negative_radius_is_clamped_like_penrose():
    assert only(render(shape("Circle", "c", r=-3.0)), "circle").get("r") == "0"


def test_ellipse():
    ellipse = only(render(shape("Ellipse", "e", center=(-50.0, -50.0), rx=30.0, ry=10.0)), "ellipse")
    assert [float(ellipse.get(k)) for k in ("cx", "cy", "rx", "ry")] == [150, 200, 30, 10]


def test_rectangle_corner_rotation_and_stroke():
    rect = only(
        render(
            shape(
                "Rectangle",
                "r",
                center=(0.0, 0.0),
                width=40.0,
                height=20.0,
                rotation=30.0,
                cornerRadius=4.0,
                strokeColor=RED,
                strokeWidth=2.0,
                strokeStyle="dashed",
            )
        ),
        "rect",
    )
    assert [float(rect.get(k)) for k in ("x", "y", "width", "height", "rx")] == [180, 140, 40, 20, 4]
    assert floats(rect.get("transform")) == [30, 200, 150]
    assert rect.get("stroke") == "#ff0000" and rect.get("stroke-width") == "2"
    assert rect.get("stroke-dasharray") == "7,5"


def test_explicit_dasharray_wins_over_dashed_style():
    line = only(render(shape("Line", "l", strokeStyle="dashed", strokeDasharray="1 2")), "line")
    assert line.get("stroke-dasharray") == "1 2"


def test_line_with_arrowheads_is_shortened_and_marked():
    line_shape = shape(
        "Line",
        "A.arrow",
        start=(0.0, 0.0),
        end=(100.0, 0.0),
        strokeWidth=2.0,
        strokeLinecap="round",
        endArrowhead="straight",
        startArrowhead="concave",
        startArrowheadSize=2.0,
    )
    root = render(line_shape, namespace="ns", variation="v")
    group = root.find(f"{SVG}g")
    line = only(group, "line")
    # end pulls back by (width - refX) * size * strokeWidth = (9.95 - 2.36) * 1 * 2
    assert float(line.get("x2")) == pytest.approx(300 - 7.59 * 2)
    # start pulls forward by (8 - 2.5) * 2 * 2 = 22
    assert float(line.get("x1")) == pytest.approx(200 + 22)
    assert float(line.get("y1")) == float(line.get("y2")) == 150
    assert line.get("stroke-linecap") == "round"
    markers = {m.get("id"): m for m in group.findall(f"{SVG}marker")}
    assert line.get("marker-end") == "url(#ns-v-A.arrow-endArrowId)"
    assert line.get("marker-start") == "url(#ns-v-A.arrow-startArrowId)"
    end_marker = markers["ns-v-A.arrow-endArrowId"]
    assert (end_marker.get("markerWidth"), end_marker.get("markerHeight")) == ("9.95", "8.12")
    assert end_marker.get("orient") == "auto-start-reverse"
    assert only(end_marker, "path").get("fill") == "#000000"
    start_marker = markers["ns-v-A.arrow-startArrowId"]
    assert (start_marker.get("markerWidth"), start_marker.get("refX")) == ("16", "2.5")
    assert only(group, "title").text == "A.arrow"


def test_stroked_arrowhead_and_flipped_start():
    root = render(shape("Line", "l", startArrowhead="perp", flipStartArrowhead=True, strokeColor=RED))
    marker = only(root, "marker")
    assert marker.get("orient") == "auto" and marker.get("stroke") == "#ff0000"
    assert only(marker, "path").get("fill") == "none"


def test_unknown_arrowhead_is_an_error_naming_the_shape():
    with pytest.raises(RenderError, match="'A.l'.*unknown endArrowhead 'pointy'"):
        render(shape("Line", "A.l", endArrowhead="pointy"))


def test_path_data_flips_points_but_not_arc_parameters():
    commands = (
        PathCmd("M", [[0.0, 0.0]]),
        PathCmd("A", [[5.0, 5.0, 0.0, 0.0, 1.0], [10.0, 10.0]]),
        PathCmd("C", [[1.0, 2.0], [3.0, 4.0], [5.0, -6.0]]),
        PathCmd("Z"),
    )
    path = only(render(shape("Path", "p", d=commands)), "path")
    assert path.get("d") == "M 200 150 A 5 5 0 0 1 210 140 C 201 148 203 146 205 156 Z"
    assert path.get("fill") == "none" and path.get("stroke-linecap") == "butt"


def test_path_with_arrowhead_is_grouped_with_its_marker():
    root = render(shape("Path", "p", d=(PathCmd("M", [[0, 0]]), PathCmd("L", [[9, 9]])), endArrowhead="line"))
    group = root.find(f"{SVG}g")
    path = group.find(f"{SVG}path")
    assert path.get("marker-end") == f"url(#{group.find(f'{SVG}marker').get('id')})"


def test_polygon_and_polyline_points():
    points = ((0.0, 0.0), (10.0, 20.0), (-5.0, 5.0))
    root = render(shape("Polygon", "pg", points=points), shape("Polyline", "pl", points=points))
    expected = [200, 150, 210, 130, 195, 145]
    assert floats(only(root, "polygon").get("points")) == expected
    assert floats(only(root, "polyline").get("points")) == expected
    assert only(root, "polyline").get("transform") == "scale(1)"


def test_text_baseline_from_measured_height_and_descent():
    metrics = measure_text("Hello", "serif", "20px")
    text = only(
        render(
            shape(
                "Text",
                "A.t",
                center=(10.0, 20.0),
                string="Hello",
                fontFamily="serif",
                fontSize="20px",
                fontWeight="bold",
                width=metrics.width,
                height=metrics.height,
                ascent=metrics.ascent,
                descent=metrics.descent,
            )
        ),
        "text",
    )
    assert float(text.get("x")) == 210
    assert float(text.get("y")) == pytest.approx(130 + metrics.height / 2 - metrics.descent)
    assert text.get("style") == "font: bold 20px serif;"
    assert text.get("text-anchor") == "middle" and text.get("dominant-baseline") == "alphabetic"
    assert text.text == "Hello"
    assert floats(text.get("transform")) == [0, 210, 130]


def test_equation_is_placed_by_its_center():
    label = measure_equation(r"\frac{a}{b}", "16px")
    props = dict(width=label.width, height=label.height, ascent=label.ascent, descent=label.descent)
    root = render(
        shape(
            "Equation",
            "A.eq",
            center=(50.0, -20.0),
            string=r"\frac{a}{b}",
            fillColor=RED,
            rotation=15.0,
            **props,
        )
    )
    group = root.find(f"{SVG}g")
    rotate, translate = group.get("transform").split(") ")
    assert floats(rotate) == [15, 250, 170]
    assert floats(translate) == pytest.approx([250 - label.width / 2, 170 - label.height / 2])
    nested = group.find(f"{SVG}svg")
    assert float(nested.get("width")) == pytest.approx(label.width)
    assert float(nested.get("height")) == pytest.approx(label.height)
    assert nested.get("style") == "font-size: 16px" and nested.get("overflow") == "visible"
    paint = nested.find(f"{SVG}g")
    assert paint.get("fill") == "#ff0000" and paint.get("stroke") == "none"
    assert len(paint.findall(f"{SVG}path")) >= 2 and paint.find(f"{SVG}rect") is not None
    assert only(root, "title").text == "A.eq"


def test_image_href_is_kept_or_resolved():
    image = shape("Image", "img", href="pic.svg", center=(0.0, 0.0), width=20.0, height=10.0)
    assert not [k for k in only(render(image), "image").attrib if k.endswith("href")]  # safe: no load
    plain = only(render(image, safe=False), "image")
    hrefs = {k: v for k, v in plain.attrib.items() if k.endswith("href")}
    assert list(hrefs.values()) == ["pic.svg"]
    assert (plain.get("width"), plain.get("height")) == ("20", "10")
    seen = []

    def resolver(href):
        seen.append(href)
        return "data:image/svg+xml;base64,AAAA"

    resolved = only(render(image, resolve_image=resolver), "image")
    assert seen == ["pic.svg"]
    assert "data:image/svg+xml;base64,AAAA" in resolved.attrib.values()
    kept = only(render(image, resolve_image=lambda href: None, safe=False), "image")
    assert "pic.svg" in kept.attrib.values()


def test_group_with_clip_path():
    clip = shape("Rectangle", "G.clip", center=(0.0, 0.0), width=50.0, height=50.0)
    member = shape("Circle", "G.member", center=(0.0, 0.0), r=40.0)
    group = shape("Group", "G", shapes=(member, clip), clipPath=clip)
    root = render(group, namespace="ns")
    clip_path = only(root, "clipPath")
    assert clip_path.get("id") == "nsG.clip-clip"
    assert only(clip_path, "rect") is not None
    wrapper = [g for g in root.iter(f"{SVG}g") if g.get("clip-path")]
    assert [w.get("clip-path") for w in wrapper] == ["url(#nsG.clip-clip)"]
    assert wrapper[0].find(f"{SVG}circle") is not None
    assert len(root.findall(f".//{SVG}rect")) == 1  # the clip shape is drawn only as the clip


def test_group_without_clip_draws_members_in_order():
    members = (shape("Circle", "a"), shape("Ellipse", "b"), shape("Rectangle", "c"))
    group = render(shape("Group", "G", shapes=members)).find(f"{SVG}g")
    assert [child.tag.removeprefix(SVG) for child in group] == ["circle", "ellipse", "rect", "title"]


def test_passthrough_properties_become_attributes():
    circle = shape("Circle", "c", strokeColor=RED)
    circle.passthrough.update(
        {"style": "opacity: 0.5;", "strokeLinejoin": "round", "fooBar": 3.0, "name": "x"}
    )
    elem = only(render(circle), "circle")
    assert elem.get("style") == "opacity: 0.5;"
    assert elem.get("stroke-linejoin") == "round"
    assert elem.get("fooBar") == "3"
    assert elem.get("name") is None


def test_layer_order_is_document_order():
    root = render(shape("Rectangle", "bottom"), shape("Circle", "top"))
    assert [child.tag.removeprefix(SVG) for child in root if child.tag != f"{SVG}defs"] == ["rect", "circle"]


def test_output_is_deterministic():
    shapes = [shape("Line", "l", endArrowhead="straight"), shape("Circle", "c"), shape("Text", "t")]
    assert render_svg(CANVAS, shapes) == render_svg(CANVAS, shapes)


def test_duplicate_marker_ids_are_made_unique():
    root = render(
        shape("Line", "same", endArrowhead="straight"), shape("Line", "same", endArrowhead="straight")
    )
    ids = [m.get("id") for m in root.iter(f"{SVG}marker")]
    assert len(set(ids)) == 2


def test_non_finite_values_are_errors_naming_the_shape():
    with pytest.raises(RenderError, match="'A.c'.*non-finite"):
        render(shape("Circle", "A.c", r=math.nan))


def test_unknown_kind_is_an_error():
    with pytest.raises(RenderError, match="unknown shape type 'Blob'"):
        render(Shape("Blob", "b", {}))


REFERENCE_SVGS = Path(__file__).resolve().parents[3] / ".." / "shared" / "penrose-reference" / "svg"


def reference_element(file: str, title: str, tag: str) -> ET.Element:
    path = REFERENCE_SVGS / file
    if not path.exists():
        pytest.skip("Penrose reference SVGs not present")
    root = ET.parse(path).getroot()
    for elem in root.iter(f"{SVG}{tag}"):
        if any(t.text == title for t in elem.findall(f"{SVG}title")):
            return elem
    raise AssertionError(f"no <{tag}> titled {title} in {file}")


def assert_same_attributes(ours: ET.Element, penroses: ET.Element, ignore: set[str] = frozenset()) -> None:
    theirs = {k: v for k, v in penroses.attrib.items() if v != "" and k not in ignore}
    mine = {k: v for k, v in ours.attrib.items() if k not in ignore}
    assert set(mine) == set(theirs)
    for key, value in theirs.items():
        try:
            assert float(mine[key]) == pytest.approx(float(value)), key
        except ValueError:
            assert " ".join(mine[key].split()) == " ".join(value.split()), key


def test_matches_penroses_own_output_for_a_circle_a_text_and_a_marker():
    canvas = Canvas(1000.0, 1000.0)
    cx, cy = 153.0000002347595, 130.44649113386544  # screen coordinates in Penrose's SVG
    center = (cx - 500, 500 - cy)
    black, white = Color(0, 0, 0, 1), Color(1, 1, 1, 1)
    circle = Shape(
        "Circle",
        "`Eve`.iconTop",
        {"center": center, "r": 50.0, "fillColor": white, "strokeColor": black, "strokeWidth": 2.0},
    )
    text_props = make_default_props("Text", canvas, rng_for("v"))
    text_props.update(
        center=center, string="Eve", fontSize="20px", width=37.47265625, height=14.0, ascent=14.0, descent=0.0
    )
    text = Shape("Text", "`Eve`.textTop", text_props)
    line_props = make_default_props("Line", canvas, rng_for("v"))
    line_props.update(
        start=center,
        end=(center[0], center[1] - 800),
        strokeWidth=2.0,
        strokeStyle="dashed",
        endArrowhead="straight",
    )
    line = Shape("Line", "`Eve`.line", line_props)
    root = ET.fromstring(render_svg(canvas, [line, circle, text]))
    file = "alloy-models__message-passing.svg"
    assert_same_attributes(only(root, "circle"), reference_element(file, "`Eve`.iconTop", "circle"))
    assert_same_attributes(only(root, "text"), reference_element(file, "`Eve`.textTop", "text"))
    penroses_line_group = reference_element(file, "`Eve`.line", "g")
    ours_marker, penroses_marker = only(root, "marker"), penroses_line_group.find(f"{SVG}marker")
    assert_same_attributes(ours_marker, penroses_marker, ignore={"id"})
    assert_same_attributes(only(ours_marker, "path"), penroses_marker.find(f"{SVG}path"))
    penroses_line = penroses_line_group.find(f"{SVG}line")
    assert_same_attributes(
        only(root, "line"), penroses_line, ignore={"marker-end"}
    )  # y2: end pulled back 7.59 * 2


def test_zero_length_arrow_keeps_its_ends():
    line = only(render(shape("Line", "z", start=(5.0, 5.0), end=(5.0, 5.0), endArrowhead="straight")), "line")
    assert [float(line.get(k)) for k in ("x1", "y1", "x2", "y2")] == [205, 145, 205, 145]


def test_flipped_start_arrowhead_pulls_back_by_ref_x():
    # flipped: overhang is refX = 2.36 (not width - refX), times size 1 and stroke width 3
    line = only(
        render(
            shape(
                "Line",
                "f",
                start=(0.0, 0.0),
                end=(0.0, 50.0),
                strokeWidth=3.0,
                startArrowhead="straight",
                flipStartArrowhead=True,
            )
        ),
        "line",
    )
    assert float(line.get("y1")) == pytest.approx(150 - 2.36 * 3)


# -- safe mode and well-formed XML (oracle: an XML parser; the lists of hostile values below) ----------

HOSTILE_PASSTHROUGH = {
    "onmouseover": "alert(document.domain)",
    "onClick": "alert(1)",
    "style": "fill: url(http://evil.example/x)",
    "filter": "url( 'https://evil.example/f.svg#f')",
    "src": "URL(//evil.example/c)",
    "href": "javascript:alert(1)",
    "cursor": "url(data:image/png;base64,AAAA), auto",
    "dataStyle": "\\75rl(http://evil.example)",  # a CSS escape spelling url(
    "mask": "url(#local)",  # a reference into the document itself: harmless, kept
    "opacity": 0.5,
}
HARMLESS = {"mask": "url(#local)", "opacity": "0.5"}


def hostile_circle() -> Shape:
    circle = shape("Circle", "c", strokeColor=RED)
    circle.passthrough.update(HOSTILE_PASSTHROUGH)
    return circle


def test_safe_mode_drops_what_runs_script_or_loads_a_url():
    elem = only(render(hostile_circle()), "circle")
    passed = {k: v for k, v in elem.attrib.items() if k in HOSTILE_PASSTHROUGH or k.startswith("on")}
    assert passed == HARMLESS
    assert not svg_problems(render_svg(CANVAS, [hostile_circle()]))


def test_unsafe_mode_keeps_penroses_full_passthrough():
    elem = only(render(hostile_circle(), safe=False), "circle")
    for key, value in HOSTILE_PASSTHROUGH.items():
        assert elem.get(key) == (value if isinstance(value, str) else "0.5")
    unsafe = render_svg(CANVAS, [hostile_circle()], safe=False)
    assert len(svg_problems(unsafe)) == 8  # all but mask and opacity


def test_declared_string_properties_are_judged_like_passthrough():
    text = shape("Text", "t", string="hi", fontFamily="serif; background: url(http://evil.example/)")
    assert only(render(text, safe=False), "text").get("style").endswith("url(http://evil.example/);")
    assert only(render(text), "text").get("style") is None  # the font rule carried a URL: dropped
    image = shape("Image", "i", href="data:image/png;base64,AAAA", center=(0.0, 0.0), width=2.0, height=2.0)
    assert "data:image/png;base64,AAAA" in only(render(image), "image").attrib.values()


def test_characters_xml_forbids_are_dropped_in_both_modes():
    text = shape("Text", "t\x01", string="a\x00b\x1bc\ud800d\ufffee\tf")
    text.passthrough.update({"dataNote": "x\x02y", "bad name": "z", "1st": "z"})
    for safe in (True, False):
        svg = render_svg(CANVAS, [text], safe=safe)
        svg.encode("utf-8")  # no lone surrogate left
        root = ET.fromstring(svg)
        assert only(root, "text").text == "abcde\tf"
        assert only(root, "title").text == "t"
        assert only(root, "text").get("dataNote") == "xy"
        assert not {"bad name", "1st"} & set(only(root, "text").attrib)
