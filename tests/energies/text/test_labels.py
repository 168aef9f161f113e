"""Label measurement against independent oracles: hand sums of DejaVu advances, a second TrueType reader
(ziafont), the sizes real Penrose measured in its reference SVGs, and TeX sanity bounds."""

import html
import io
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from energies.text.labels import (
    FONT_DIR,
    LabelError,
    font_flags,
    font_path,
    measure_equation,
    measure_label,
    measure_text,
    parse_font_size,
    text_metrics,
)

REFERENCE_SVGS = Path(__file__).resolve().parents[3] / ".." / "shared" / "penrose-reference" / "svg"


def test_width_is_penroses_sum_of_the_ink_box_edges():
    # Penrose: |actualBoundingBoxLeft| + |actualBoundingBoxRight|, the ink's edges from the origin.
    # DejaVu Sans in font units (2048 per em): E's ink starts at 201, advances E 1294, v 1212, and
    # e's ink ends at 1151: |201| + (1294 + 1212 + 1151) (the sum of advances would be 3766).
    assert measure_text("Eve", "sans-serif", "20px").width == pytest.approx(
        (201 + 1294 + 1212 + 1151) * 20 / 2048
    )
    # DejaVu Sans Oblique's j reaches left of the origin (-231) and ends at 567 (advance 569).
    assert measure_text("j", "sans-serif", "18px", font_style="italic").width == pytest.approx(
        (231 + 567) * 18 / 2048
    )
    # Penrose measured 37.47 and 8 (whole pixels); the advances, 36.78 and 5.00, were further off.


def test_widths_agree_with_an_independent_truetype_reader():
    ziafont = pytest.importorskip("ziafont")
    for file, family, weight in [
        ("DejaVuSans.ttf", "sans-serif", ""),
        ("DejaVuSerif-Bold.ttf", "serif", "bold"),
    ]:
        font = ziafont.Font(str(FONT_DIR / file))
        text = "Penrose diagrams, 42 & ÿ"
        em = font.info.layout.unitsperem
        x, edges = 0, []
        for c in text:
            if c != " ":
                edges += [x + font.glyph(c).bbox.xmin, x + font.glyph(c).bbox.xmax]
            x += font.glyph(c).advance()
        measured = measure_text(text, family, "16px", font_weight=weight)
        assert measured.width == pytest.approx((abs(min(edges)) + abs(max(edges))) * 16 / em)
        ink = [font.glyph(c).bbox for c in text if c != " "]
        assert measured.ascent == pytest.approx(max(b.ymax for b in ink) * 16 / em)
        assert measured.descent == pytest.approx(-min(b.ymin for b in ink) * 16 / em)


def test_ink_wholly_above_the_baseline_has_a_descent_as_in_penrose():
    # A canvas's actualBoundingBoxDescent is then negative; Penrose takes its absolute value.
    ziafont = pytest.importorskip("ziafont")
    bbox = ziafont.Font(str(FONT_DIR / "DejaVuSans.ttf")).glyph("-").bbox
    assert bbox.ymin > 0
    dash = measure_text("-", "sans-serif", "20px")
    assert dash.descent == pytest.approx(bbox.ymin * 20 / 2048) and dash.ascent == pytest.approx(
        bbox.ymax * 20 / 2048
    )


# (string, size, width, ascent, descent) that Penrose measured with DejaVu Sans (reference SVGs).
PENROSE_MEASURED = [
    ("Eve", "20px", 37.47265625, 14, 0),
    ("Bob", "20px", 38.95703125, 15, 0),
    ("Program Counter", "12px", 103.46484375, 9, 3),
    ("Random Access Memory", "12px", 148.091796875, 10, 3),
    ("r1", "12px", 12.93359375, 9, 0),
    ("w1", "12px", 16.814453125, 9, 0),
    ("p2_1", "12px", 29.251953125, 9, 3),
]


@pytest.mark.parametrize(("string", "size", "width", "ascent", "descent"), PENROSE_MEASURED)
def test_text_metrics_are_close_to_penroses(string, size, width, ascent, descent):
    measured = measure_text(string, "sans-serif", size)
    # Penrose's canvas hinted glyphs to whole pixels; unhinted metrics stay within a pixel.
    assert measured.width == pytest.approx(width, abs=0.8)
    assert measured.ascent == pytest.approx(ascent, abs=1.0)
    assert measured.descent == pytest.approx(descent, abs=1.0)
    assert measured.height == pytest.approx(measured.ascent + measured.descent)


def test_reference_svg_values_are_what_this_test_assumes():
    svg = REFERENCE_SVGS / "alloy-models__message-passing.svg"
    if not svg.exists():
        pytest.skip("Penrose reference SVGs not present")
    text = svg.read_text()
    assert re.search(
        r'width="37.47265625" height="14"[^>]*ascent="14" descent="0"[^>]*>.*?</title>Eve<', text
    )


def test_monospace_family_has_equal_advances():
    # "iii" and "WWW" span three equal advances in a monospace: their boxes differ only by the
    # outer glyphs' side bearings (under 1 em); in DejaVu Sans by more than 1 em at 20 px.
    mono = [measure_text(s, "monospace", "20px").width for s in ("iii", "WWW")]
    sans = [measure_text(s, "sans-serif", "20px").width for s in ("iii", "WWW")]
    assert abs(mono[0] - mono[1]) < 20 < sans[1] - sans[0]


def test_font_family_weight_and_style_choose_the_font():
    regular = measure_text("Penrose", "sans-serif", "20px")
    assert measure_text("Penrose", "Palatino, serif", "20px") == measure_text("Penrose", "serif", "20px")
    # A family we do not bundle is drawn, and so measured, with the fallback: DejaVu Sans.
    for family in ("Palatino", "Menlo", "Courier", "UnknownFont", "'Times New Roman'", "cursive"):
        assert measure_text("Penrose", family, "20px") == regular
    assert measure_text("Penrose", "DejaVu Sans Mono, serif", "20px") == measure_text(
        "Penrose", "monospace", "20px"
    )
    bold = measure_text("Penrose", "sans-serif", "20px", font_weight="bold")
    assert bold.width > regular.width
    # CSS's font shorthand takes "bold" in any slot, so Penrose's fontStyle "bold" makes bold text.
    assert measure_text("Penrose", "sans-serif", "20px", font_style="bold") == bold
    assert measure_text("Penrose", "sans-serif", "20px", font_weight="600") == bold
    # DejaVu's italics keep the upright advances, so check the font chosen rather than its widths.
    assert font_flags("italic", "", "bold", "") == (True, True)
    assert font_flags("oblique 10deg") == (False, True)
    assert font_path("Times New Roman, serif", False, True).name == "DejaVuSerif-Italic.ttf"
    assert font_path("'Courier New', monospace", True, False).name == "DejaVuSansMono-Bold.ttf"


# Labels in fonts the reference machine lacked (Penrose's own widths, from its reference SVGs): it
# measured them with DejaVu Sans: of the bundled fonts, ours is the nearest.
NAMED_FAMILY_WIDTHS = [
    ("curve-examples__catmull-rom__catmull-rom.svg", "shape spline = Path {", "9px", "Menlo", 97.5576171875),
    ("graph-domain__other-examples__arpanet.svg", "RAND", "18px", "Palatino", 51.5556640625),
    ("word-cloud__example.svg", "boundary conditions", "9px", "Palatino", 92.3544921875),
    (
        "triangle-mesh-2d__diagrams__halfedge-mesh.svg",
        "twin->next->twin",
        "6.75px",
        "Courier",
        59.4996337890625,
    ),
]


@pytest.mark.parametrize(("svg", "string", "size", "family", "width"), NAMED_FAMILY_WIDTHS)
def test_families_we_do_not_bundle_measure_as_penrose_measured_them(svg, string, size, family, width):
    path = REFERENCE_SVGS / svg
    if not path.exists():
        pytest.skip("Penrose reference SVGs not present")
    texts = re.findall(
        r'style="font:\s*([^"]*);"[^>]*width="([\d.]+)"[^>]*><title>[^<]*</title>([^<]*)<', path.read_text()
    )
    assert (f"{size} {family}", str(width), string) in [(f, w, html.unescape(t)) for f, w, t in texts]
    assert measure_text(string, family, size).width == pytest.approx(width, abs=1.5)
    widths = [measure_text(string, g, size).width for g in ("sans-serif", "serif", "monospace")]
    assert measure_text(string, family, size).width == min(widths, key=lambda w: abs(w - width))


@pytest.mark.parametrize(
    "family", ["Menlo", "Palatino", "Courier", "cursive", "monospace", "Palatino, serif"]
)
def test_a_label_is_measured_in_the_font_our_pictures_draw_it_with(family):
    # The PNG renderer's ink width of a row of i's, against our measurement in each bundled font:
    # the nearest must be the font we measured with (their widths differ by 15% to 2x).
    from PIL import Image

    from service.render.formats import convert

    string = "i" * 12
    svg = (
        '<svg xmlns="http://www.w3.org/2000/svg" width="400" height="60">'
        f'<text x="10" y="45" style="font: 40px {family};">{string}</text></svg>'
    )
    alpha = Image.open(io.BytesIO(convert(svg, "png"))).getchannel("A")
    left, _, right, _ = alpha.point(lambda a: 255 if a > 128 else 0).getbbox()
    widths = {g: measure_text(string, g, "40px").width for g in ("sans-serif", "serif", "monospace")}
    nearest = min(widths, key=lambda g: abs(widths[g] - (right - left)))
    assert measure_text(string, family, "40px").width == widths[nearest]


@pytest.mark.parametrize(
    ("size", "px"),
    [("12px", 12), ("12pt", 16), ("1.5em", 24), ("50%", 8), ("1in", 96), ("medium", 16), (" 7.5px ", 7.5)],
)
def test_font_sizes(size, px):
    assert parse_font_size(size) == pytest.approx(px)


def test_text_scales_linearly_with_font_size():
    small, big = measure_text("Scale me", font_size="10px"), measure_text("Scale me", font_size="30px")
    assert big.width == pytest.approx(3 * small.width)
    assert big.height == pytest.approx(3 * small.height)


@pytest.mark.parametrize("size", ["12", "px", "-3px", "12 apples"])
def test_bad_font_size_names_the_label(size):
    with pytest.raises(LabelError, match="'A.label'"):
        measure_text("x", font_size=size, label="A.label")


def test_empty_and_blank_strings_measure_zero():
    for string in ("", "   "):
        metrics = measure_text(string)
        assert (metrics.width, metrics.height, metrics.ascent, metrics.descent) == (0, 0, 0, 0)


def test_text_measurements_are_cached():
    measure_text("cache me please")
    hits = text_metrics.cache_info().hits
    measure_text("cache me please")
    assert text_metrics.cache_info().hits == hits + 1


def test_measure_label_reads_penrose_properties():
    props = {"string": "Hi", "fontFamily": "monospace", "fontSize": "10px", "fontWeight": "bold"}
    assert measure_label("Text", "t", props) == measure_text("Hi", "monospace", "10px", "bold")
    assert measure_label("Equation", "e", {"string": "x", "fontSize": "10px"}) == measure_equation(
        "x", "10px"
    )
    with pytest.raises(ValueError, match="Circle"):
        measure_label("Circle", "c", {})


def test_equation_box_is_consistent():
    label = measure_equation(r"\frac{a}{b} + x_1^2", "20px")
    assert label.width > 0 and label.ascent > 0 and label.descent > 0
    assert label.height == pytest.approx(label.ascent + label.descent)
    x, y, w, h = label.view_box
    assert (w / label.width, h / label.height) == pytest.approx((100 / 20, 100 / 20))
    assert y == pytest.approx(-label.ascent * 100 / 20)


def test_equation_sizes_are_sane_without_trusting_ziamath():
    x = measure_equation("x", "20px")
    # An x-height glyph: well under one em tall, no real descent.
    assert 0.35 * 20 < x.ascent < 0.6 * 20 and x.descent < 0.05 * 20
    frac = measure_equation(r"\frac{x}{x}", "20px")
    assert frac.height > 2 * x.height and frac.descent > 0.3 * 20
    sub = measure_equation("x_1", "20px")
    assert sub.width > x.width and sub.descent > 0.1 * 20
    assert measure_equation("xx", "20px").width > 1.8 * x.width


# (tex, size, width, height) of labels in Penrose's reference SVGs (MathJax, Computer Modern metrics).
PENROSE_EQUATIONS = [
    ("B", "20px", 15.18, 13.66),
    ("M", "20px", 21.02, 13.66),
    ("x", "35px", 20.02, 15.855),
    ("u", "16px", 9.152, 7.248),
    (r"\theta", "28px", 13.132, 20.02),
    (r"\mathbb{R}^n", "16px", 19.6688, 11.608),
    ("u+v", "10px", 22.794, 6.65),
    ("k", "5px", 2.605, 3.525),
]


@pytest.mark.parametrize(("tex", "size", "width", "height"), PENROSE_EQUATIONS)
def test_equation_sizes_are_near_penroses(tex, size, width, height):
    label = measure_equation(tex, size)
    # Different math fonts (STIX Two here, MathJax TeX in Penrose): sizes agree to about 20%.
    assert label.width == pytest.approx(width, rel=0.2)
    assert label.height == pytest.approx(height, rel=0.2)


def test_equation_scales_linearly_even_when_tiny():
    assert measure_equation("k", "4px").height == pytest.approx(measure_equation("k", "40px").height / 10)


def test_equation_fragment_is_self_contained_paths():
    label = measure_equation(r"\sqrt{x}", "16px")
    fragment = ET.fromstring(f"<g>{label.svg_fragment}</g>")
    tags = {child.tag for child in fragment}
    assert "path" in tags and tags <= {"path", "rect"}
    assert not any(child.get("fill") == "black" for child in fragment)
    assert "font" not in label.svg_fragment and "href" not in label.svg_fragment


@pytest.mark.parametrize(
    ("tex", "message"),
    [
        (r"\frac{a}", "cannot render"),
        ("x^", "cannot render"),
        (r"\foo x", r"undefined control sequence \\foo"),
    ],
)
def test_bad_tex_names_the_label(tex, message):
    with pytest.raises(LabelError, match=rf"label 'A.eq'.*{message}"):
        measure_equation(tex, "16px", label="A.eq")


def test_empty_equation_is_an_error():
    with pytest.raises(LabelError, match="non-empty"):
        measure_equation("", label="A.eq")


def test_tex_with_a_character_xml_forbids_is_refused_by_name():
    for tex, code in (("x\x01^2", "U+0001"), ("y\ud800", "U+D800")):
        with pytest.raises(LabelError, match=re.escape(f"holds {code}, a character no SVG can hold")):
            measure_equation(tex, "12px", label="eq")


def test_after_load_fonts_every_family_and_style_measures_without_reading_a_font() -> None:
    from energies.text.font_metrics import load_font
    from energies.text.labels import load_fonts

    load_font.cache_clear()
    text_metrics.cache_clear()
    load_fonts()
    misses = load_font.cache_info().misses
    for family in ("sans-serif", "serif", "monospace"):
        for weight, style in (("", ""), ("bold", ""), ("", "italic"), ("bold", "italic")):
            assert measure_text("Ag", family, "14px", weight, style, label="t").width > 0
    assert load_font.cache_info().misses == misses
