"""Shape types against Penrose's definitions (packages/core/src/shapes/*.ts), colors and seeded sampling."""

import subprocess
import sys

import pytest

from energies.shapes import (
    SHAPE_TYPES,
    Canvas,
    Color,
    PropType,
    make_default_props,
    rng_for,
)

CANVAS = Canvas(800.0, 700.0)
NONE = Color.none()
BLACK = Color(0.0, 0.0, 0.0, 1.0)

# Transcribed by hand from Penrose's sampleX functions: fixed defaults only (sampled ones below).
PENROSE_FIXED_DEFAULTS = {
    "Circle": {"strokeWidth": 0, "strokeStyle": "solid", "strokeColor": NONE, "strokeDasharray": ""},
    "Ellipse": {"strokeWidth": 0, "strokeColor": NONE},
    "Rectangle": {"strokeWidth": 0, "strokeColor": NONE, "cornerRadius": 0, "rotation": 0},
    "Line": {
        "strokeWidth": 1,
        "strokeColor": BLACK,
        "startArrowheadSize": 1,
        "startArrowhead": "none",
        "flipStartArrowhead": False,
        "endArrowheadSize": 1,
        "endArrowhead": "none",
        "strokeLinecap": "",
        "fillColor": NONE,
    },
    "Path": {"strokeWidth": 1, "strokeColor": BLACK, "strokeLinecap": "butt", "fillColor": NONE, "d": ()},
    "Polygon": {"strokeWidth": 0, "strokeColor": NONE, "scale": 1, "points": ((0, 0), (0, 10), (10, 0))},
    "Polyline": {
        "strokeWidth": 1,
        "strokeColor": BLACK,
        "strokeLinecap": "butt",
        "fillColor": NONE,
        "scale": 1,
        "points": ((0, 0), (0, 10), (10, 0)),
    },
    "Text": {
        "strokeWidth": 0,
        "strokeColor": NONE,
        "fillColor": BLACK,
        "rotation": 0,
        "string": "defaultText",
        "fontFamily": "sans-serif",
        "fontSize": "12px",
        "textAnchor": "middle",
        "alignmentBaseline": "alphabetic",
        "dominantBaseline": "alphabetic",
        "visibility": "",
        "fontWeight": "",
        "lineHeight": "",
    },
    "Equation": {"fillColor": BLACK, "rotation": 0, "string": "defaultLabelText", "fontSize": "16px"},
    "Image": {"rotation": 0, "href": "defaultImage", "preserveAspectRatio": ""},
    "Group": {"shapes": (), "clipPath": None},
}
PENROSE_SAMPLED = {
    "Circle": {"fillColor", "center", "r"},
    "Ellipse": {"fillColor", "center", "rx", "ry"},
    "Rectangle": {"fillColor", "center", "width", "height"},
    "Line": {"start", "end"},
    "Path": set(),
    "Polygon": {"fillColor"},
    "Polyline": set(),
    "Text": {"center"},
    "Equation": {"center"},
    "Image": {"center", "width", "height"},
    "Group": set(),
}
STROKED = {"Circle", "Ellipse", "Rectangle", "Line", "Path", "Polygon", "Polyline", "Text"}


def test_the_eleven_penrose_shape_types_exist():
    assert set(SHAPE_TYPES) == set(PENROSE_FIXED_DEFAULTS)


@pytest.mark.parametrize("kind", sorted(PENROSE_FIXED_DEFAULTS))
def test_fixed_defaults_match_penrose(kind):
    props = make_default_props(kind, CANVAS, rng_for("x"))
    for name, expected in PENROSE_FIXED_DEFAULTS[kind].items():
        assert props[name] == expected, name
    assert props["name"] == f"default{kind}"
    assert props["ensureOnCanvas"] is True


@pytest.mark.parametrize("kind", sorted(PENROSE_FIXED_DEFAULTS))
def test_sampled_and_pending_properties_match_penrose(kind):
    spec = SHAPE_TYPES[kind]
    sampled = {name for name, p in spec.props.items() if p.sampler is not None}
    assert sampled == PENROSE_SAMPLED[kind]
    assert all(spec.props[name].varying for name in sampled)
    pending = {name for name, p in spec.props.items() if p.pending}
    expected_pending = {"width", "height", "ascent", "descent"} if kind in ("Text", "Equation") else set()
    assert pending == expected_pending
    assert not any(spec.props[name].varying for name in pending)


@pytest.mark.parametrize("kind", sorted(STROKED))
def test_stroked_shapes_have_the_common_stroke_properties(kind):
    props = SHAPE_TYPES[kind].props
    assert props["strokeWidth"].type is PropType.FLOAT
    assert props["strokeColor"].type is PropType.COLOR
    assert props["strokeStyle"].type is props["strokeDasharray"].type is PropType.STRING
    assert props["fillColor"].type is PropType.COLOR


def test_value_types_of_structured_properties():
    assert SHAPE_TYPES["Line"].props["start"].type is PropType.VECTOR
    assert SHAPE_TYPES["Polygon"].props["points"].type is PropType.PT_LIST
    assert SHAPE_TYPES["Path"].props["d"].type is PropType.PATH_DATA
    assert SHAPE_TYPES["Group"].props["shapes"].type is PropType.SHAPE_LIST
    assert SHAPE_TYPES["Group"].props["clipPath"].type is PropType.CLIP_DATA
    assert SHAPE_TYPES["Line"].props["flipStartArrowhead"].type is PropType.BOOL
    assert "rotation" in SHAPE_TYPES["Rectangle"].props and "rotation" not in SHAPE_TYPES["Circle"].props


def test_sampled_values_lie_in_penrose_ranges():
    for i in range(200):
        rng = rng_for(f"seed{i}")
        circle = make_default_props("Circle", CANVAS, rng)
        x, y = circle["center"]
        assert -400 <= x < 400 and -350 <= y < 350
        assert 3 <= circle["r"] < 800 / 6
        color = circle["fillColor"]
        assert all(0.1 <= c < 0.9 for c in (color.r, color.g, color.b)) and color.a == 0.5
        ellipse = make_default_props("Ellipse", CANVAS, rng)
        assert 3 <= ellipse["ry"] < 700 / 6


def test_sampling_is_deterministic_per_variation():
    first = make_default_props("Rectangle", CANVAS, rng_for("ShinyOtter42"))
    again = make_default_props("Rectangle", CANVAS, rng_for("ShinyOtter42"))
    other = make_default_props("Rectangle", CANVAS, rng_for("ShinyOtter43"))
    assert first == again
    assert first["center"] != other["center"]


def test_rng_for_does_not_depend_on_the_process_hash_seed():
    code = "from energies.shapes import rng_for; print(repr(rng_for('v').random()))"
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={"PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2")
    }
    assert len(outputs) == 1
    assert float(outputs.pop()) == rng_for("v").random()


def test_tiny_canvas_does_not_break_sampling():
    props = make_default_props("Circle", Canvas(6.0, 6.0), rng_for("v"))
    assert props["r"] == 3.0


def test_unknown_shape_type_is_named():
    with pytest.raises(ValueError, match="'Circel'"):
        make_default_props("Circel", CANVAS, rng_for("v"))


def test_canvas_is_centered_with_y_up():
    canvas = Canvas(400.0, 300.0)
    assert canvas.to_screen(0, 0) == (200, 150)
    assert canvas.to_screen(10, 20) == (210, 130)
    assert canvas.x_range == (-200, 200) and canvas.y_range == (-150, 150)


@pytest.mark.parametrize(
    ("text", "rgba"),
    [
        ("#f00", (1, 0, 0, 1)),
        ("#00ff0080", (0, 1, 0, 128 / 255)),
        ("#0000ff", (0, 0, 1, 1)),
        ("#1238", (0x11 / 255, 0x22 / 255, 0x33 / 255, 0x88 / 255)),
    ],
)
def test_color_parsing(text, rgba):
    color = Color.parse(text)
    assert (color.r, color.g, color.b, color.a) == pytest.approx(rgba)


@pytest.mark.parametrize("bad", ["#ff", "red", "#gggggg", "#12345"])
def test_bad_colors_are_rejected(bad):
    with pytest.raises(ValueError, match="invalid color"):
        Color.parse(bad)


def test_color_to_svg_paint_and_opacity():
    assert Color(1, 0.5, 0, 0.25).svg_paint() == "#ff8000"
    assert Color(1, 0.5, 0, 0.25).svg_opacity() == 0.25
    assert Color.none().svg_paint() == "none"
    assert Color.none().svg_opacity() == 1


def test_hsva_conversion_by_hand():
    green = Color.from_hsva(120, 100, 100, 1)
    assert (green.r, green.g, green.b) == pytest.approx((0, 1, 0))
    # v = .5, chroma = .25, h/60 = 3.33 -> x = .25 * (1 - |1.33 - 1|) = 1/6, m = .25; sector 3 is (0, x, c)
    muted = Color.from_hsva(200, 50, 50, 0.5)
    assert (muted.r, muted.g, muted.b, muted.a) == pytest.approx((0.25, 0.25 + 1 / 6, 0.5, 0.5))
