"""A rendered SVG in another format: PNG (resvg) or vector PDF (Typst's svg2pdf).

    convert(svg, "png" | "pdf" | "svg", scale=1.0) -> bytes   (scale: a PNG's pixels per SVG px)
    format_of(path) -> "svg" | "png" | "pdf"      (by the file's suffix)

The libraries were chosen by pixel difference against Chromium's rendering of registry diagrams
(`benchmarks/format_fidelity.py`, docs/formats.md): resvg draws blur filters, embedded images and
TeX paths as a browser does, and svg2pdf (svg2pdf-py; it parses with resvg's usvg) draws all of them
into a vector PDF, where CairoSVG fails on 4 of 11 and svglib loses blur and nested SVG images.
Text is drawn with the DejaVu fonts our labels are measured with (energies/text/fonts), so a picture
looks the same on every machine: generic families (sans-serif, ...) name them, and every family
list ends with DejaVu Sans, since neither converter falls back to another font by itself. Both
are Rust wheels needing no system library, imported on first use: a command that writes SVG
never loads them.
"""

from __future__ import annotations

import math
import re
from functools import cache
from pathlib import Path

from energies.text.labels import FAMILY_FONTS, FONT_DIR, GENERIC_FAMILIES

MEDIA_TYPES = {"svg": "image/svg+xml", "png": "image/png", "pdf": "application/pdf"}
# A picture's pixels (width x height x scale^2) are refused beyond this before a converter allocates
# them: resvg holds 4 bytes a pixel (160 MB here), and svg2pdf rasterizes filters at the page's size.
MAX_PIXELS = 40_000_000
_ROOT_TAG = re.compile(r"<svg\b[^>]*>")
_SIZE_ATTR = re.compile(r"""\b(width|height)\s*=\s*["']([\d.eE+-]+)""")


class FormatError(ValueError):
    """An unknown format, or an SVG the converter cannot draw."""


def format_of(path: str | Path, default: str = "svg") -> str:
    """The format a file name asks for by its suffix (`x.png` -> png); `default` for any other."""
    suffix = Path(path).suffix.lower().lstrip(".")
    return suffix if suffix in MEDIA_TYPES else default


# a font-family attribute (either quote), a font-family declaration, or the families that end a
# `font:` shorthand after its size (`font: italic 18px/1.2 Palatino, serif`)
_FAMILY_LISTS = re.compile(
    r"""(?P<a>font-family\s*=\s*")(?P<av>[^"]*)|(?P<b>font-family\s*=\s*')(?P<bv>[^']*)"""
    r"""|(?P<c>font-family\s*:\s*)(?P<cv>[^;"}<>]+)"""
    r"""|(?P<d>font\s*:[^;"'}<>]*?[\d.]+(?:px|pt|em|rem|ex|%)(?:\s*/\s*\S+)?\s+)(?P<dv>[^;"}<>]+)"""
)


# CSS generic family -> the bundled font that draws it (the one its labels are measured in)
_GENERIC_FONTS = {name: FAMILY_FONTS[key] for name, key in GENERIC_FAMILIES.items()}


def _families(names: str) -> str:
    listed = [n.strip().strip("'\"") for n in names.split(",") if n.strip()]
    concrete = [_GENERIC_FONTS.get(n.lower(), n) for n in listed]
    return ", ".join(dict.fromkeys([*concrete, FAMILY_FONTS["sans"]]))


def with_font_fallbacks(svg: str) -> str:
    """The SVG with every font family list resolved to the bundled fonts as a browser would."""

    def fix(m: re.Match[str]) -> str:
        key = next(k for k in "abcd" if m.group(k) is not None)
        return m.group(key) + _families(m.group(key + "v"))

    return _FAMILY_LISTS.sub(fix, svg)


@cache
def _font_files() -> tuple[str, ...]:
    return tuple(sorted(str(p) for p in FONT_DIR.glob("*.ttf")))


@cache
def _pdf_fonts() -> object:
    import svg2pdf_py

    db = svg2pdf_py.FontDatabase()
    for path in _font_files():
        db.load_font_file(path)
    return db


def check_pixels(svg: str, scale: float) -> None:
    """Refuse a picture whose root size times `scale` squared is over MAX_PIXELS (or unreadable)."""
    if not (scale > 0 and math.isfinite(scale)):
        raise FormatError(f"the scale must be a positive number, not {scale:g}")
    root = _ROOT_TAG.search(svg[:4096])
    size = dict(_SIZE_ATTR.findall(root.group())) if root else {}
    if "width" in size and "height" in size:
        pixels = float(size["width"]) * float(size["height"]) * scale * scale
        if not pixels <= MAX_PIXELS:
            raise FormatError(
                f"the picture would have {pixels:,.0f} pixels, more than the limit of {MAX_PIXELS:,}:"
                " ask for SVG, or a smaller canvas or scale"
            )


def to_png(svg: str, scale: float = 1.0) -> bytes:
    import resvg_py

    check_pixels(svg, scale)

    try:
        return bytes(
            resvg_py.svg_to_bytes(
                svg_string=with_font_fallbacks(svg),
                zoom=scale,
                skip_system_fonts=True,
                font_files=list(_font_files()),
                font_family="DejaVu Sans",
                sans_serif_family="DejaVu Sans",
                serif_family="DejaVu Serif",
                monospace_family="DejaVu Sans Mono",
                cursive_family="DejaVu Serif",
                fantasy_family="DejaVu Sans",
            )
        )
    except ValueError as e:
        raise FormatError(f"cannot draw the SVG as PNG: {e}") from None


def to_pdf(svg: str) -> bytes:
    """A one-page vector PDF, one point per SVG px (svg2pdf's scale)."""
    import svg2pdf_py

    check_pixels(svg, 1.0)
    try:
        return bytes(svg2pdf_py.svg_to_pdf(with_font_fallbacks(svg), _pdf_fonts()))
    except Exception as e:  # noqa: BLE001 - the binding raises plain exceptions on SVGs it cannot read
        raise FormatError(f"cannot draw the SVG as PDF: {e}") from None


def convert(svg: str, fmt: str, scale: float = 1.0) -> bytes:
    """The SVG text in format `fmt`; `scale` multiplies a PNG's pixel size (a PDF is vector)."""
    if fmt == "svg":
        return svg.encode("utf-8")
    if fmt == "png":
        return to_png(svg, scale)
    if fmt == "pdf":
        return to_pdf(svg)
    raise FormatError(f"unknown format {fmt!r}; formats: {', '.join(MEDIA_TYPES)}")
