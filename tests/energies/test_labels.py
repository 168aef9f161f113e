"""Label measurement against independent oracles: hand sums of DejaVu advances, a second TrueType reader
(ziafont), the sizes real Penrose measured in its reference SVGs, and TeX sanity bounds."""

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from energies.labels import (
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

REFERENCE_SVGS = Path(__file__).resolve().parents[2] / ".." / "shared" / "penrose-reference" / "svg"


def test_width_is_the_hand_summed_advances():
    # DejaVu Sans advances in font units (2048 per em): E 1294, v 1212, e 1260.
    assert measure_text("Eve", "sans-serif", "20px").width == pytest.approx((1294 + 1212 + 1260) * 20 / 2048)


def test_widths_agree_with_an_independent_truetype_reader():
    ziafont = pytest.importorskip("ziafont")
    for file, family, weight in [
        ("DejaVuSans.ttf", "sans-serif", ""),
        ("DejaVuSerif-Bold.ttf", "serif", "bold"),
    ]:
        font = ziafont.Font(str(FONT_DIR / file))
        text = "Penrose diagrams, 42 & ÿ"
        units = sum(font.glyph(c).advance() for c in text)
        measured = measure_text(text, family, "16px", font_weight=weight)
        assert measured.width == pytest.approx(units * 16 / font.info.layout.unitsperem)
        ink = [font.glyph(c).bbox for c in text if c != " "]
        assert measured.ascent == pytest.approx(max(b.ymax for b in ink) * 16 / font.info.layout.unitsperem)
        assert measured.descent == pytest.approx(-min(b.ymin for b in ink) * 16 / font.info.layout.unitsperem)


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
    assert measure_text("iii", "monospace").width == pytest.approx(measure_text("WWW", "Courier").width)
    assert measure_text("iii", "sans-serif").width < measure_text("WWW", "sans-serif").width


def test_font_family_weight_and_style_choose_the_font():
    regular = measure_text("Penrose", "sans-serif", "20px")
    assert measure_text("Penrose", "Palatino, serif", "20px") != regular
    assert measure_text("Penrose", "Palatino", "20px") == measure_text("Penrose", "serif", "20px")
    assert measure_text("Penrose", "UnknownFont", "20px") == regular
    bold = measure_text("Penrose", "sans-serif", "20px", font_weight="bold")
    assert bold.width > regular.width
    # CSS's font shorthand takes "bold" in any slot, so Penrose's fontStyle "bold" makes bold text.
    assert measure_text("Penrose", "sans-serif", "20px", font_style="bold") == bold
    assert measure_text("Penrose", "sans-serif", "20px", font_weight="600") == bold
    # DejaVu's italics keep the upright advances, so check the font chosen rather than its widths.
    assert font_flags("italic", "", "bold", "") == (True, True)
    assert font_flags("oblique 10deg") == (False, True)
    assert font_path("Times New Roman", False, True).name == "DejaVuSerif-Italic.ttf"
    assert font_path("'Courier New', monospace", True, False).name == "DejaVuSansMono-Bold.ttf"


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
    from energies.font_metrics import load_font
    from energies.labels import load_fonts

    load_font.cache_clear()
    text_metrics.cache_clear()
    load_fonts()
    misses = load_font.cache_info().misses
    for family in ("sans-serif", "serif", "monospace"):
        for weight, style in (("", ""), ("bold", ""), ("", "italic"), ("bold", "italic")):
            assert measure_text("Ag", family, "14px", weight, style, label="t").width > 0
    assert load_font.cache_info().misses == misses
