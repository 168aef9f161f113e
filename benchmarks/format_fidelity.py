"""How close each SVG -> PNG/PDF converter comes to Chromium's rendering of the same SVG.

    .venv/bin/python benchmarks/format_fidelity.py [--out DIR] [SVG ...]

Candidates: resvg (resvg_py, ours) and CairoSVG for PNG; svg2pdf (svg2pdf-py, ours), CairoSVG and
svglib (reportlab) for PDF, whose pages are rasterized with pypdfium2 at the SVG's pixel size
(`pip install pypdfium2 cairosvg svglib` first; CairoSVG also needs Debian's libcairo2). The
oracle is Debian's Chromium (/usr/bin/chromium driven by Playwright) drawing the SVG on white.
Default sample: Penrose's own SVGs of registry trios chosen for blur filters, nested SVG images,
TeX paths, gradients and text, plus our render of a trio with an embedded raster image. For each
picture and converter: the mean absolute difference per channel (0-255) and the share of pixels
differing by more than 64 in some channel. Writes a Markdown table (docs/formats.md keeps one).
"""

from __future__ import annotations

import argparse
import io
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from PIL import Image

REFERENCE = Path(__file__).resolve().parents[1] / ".." / "shared" / "penrose-reference" / "svg"
SAMPLE = [
    "dinoshade__dinoshade.svg",  # feGaussianBlur shadow
    "curve-examples__offset.svg",  # filters
    "mobius__mobius.svg",  # nested <svg> images, radial gradients
    "exterior-algebra__vector-wedge.svg",  # TeX labels as paths
    "tutorials__tutorial3.svg",  # TeX
    "set-theory-domain__tree-venn.svg",  # text labels
    "shape-spec__all-shapes.svg",  # every shape, text in several fonts
    "shape-spec__arrowheads.svg",  # markers
    "alloy-models__river-crossing.svg",  # text
    "walk-on-spheres__laplace-estimator.svg",
]
CHROMIUM = "/usr/bin/chromium"


def pixels(png: bytes, size: tuple[int, int]) -> np.ndarray:
    image = Image.open(io.BytesIO(png)).convert("RGBA")
    white = Image.new("RGBA", image.size, "white")
    white.alpha_composite(image)
    return np.asarray(white.convert("RGB").resize(size), dtype=np.int16)


def svg_size(svg: str) -> tuple[int, int]:
    """The SVG's pixel size (width and height, or its viewBox), as resvg reads it."""
    from service.render.formats import to_png

    return Image.open(io.BytesIO(to_png(svg))).size


def chromium_pngs(svgs: list[str]) -> list[bytes]:
    from playwright.sync_api import sync_playwright

    out = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox"])
        page = browser.new_page()
        for svg in svgs:
            w, h = svg_size(svg)
            page.set_viewport_size({"width": w, "height": h})
            page.set_content(
                f"<html><body style='margin:0;background:white'>{svg}</body></html>", wait_until="load"
            )
            page.evaluate(
                "(() => { const s = document.querySelector('svg'); s.setAttribute('width', innerWidth);"
                " s.setAttribute('height', innerHeight); s.style.display = 'block'; })()"
            )
            out.append(page.screenshot(clip={"x": 0, "y": 0, "width": w, "height": h}))
        browser.close()
    return out


def pdf_to_png(pdf: bytes, size: tuple[int, int]) -> bytes:
    import pypdfium2

    page = pypdfium2.PdfDocument(pdf)[0]
    image = page.render(scale=size[0] / page.get_width()).to_pil()
    buf = io.BytesIO()
    image.save(buf, "PNG")
    return buf.getvalue()


def svglib_pdf(svg: str) -> bytes:
    from reportlab.graphics import renderPDF
    from svglib.svglib import svg2rlg

    drawing = svg2rlg(io.BytesIO(svg.encode()))
    return renderPDF.drawToString(drawing)


def converters() -> dict[str, Callable[[str, tuple[int, int]], bytes]]:
    import cairosvg

    from service.render.formats import to_pdf, to_png

    return {
        "resvg PNG": lambda svg, size: to_png(svg),
        "CairoSVG PNG": lambda svg, size: cairosvg.svg2png(bytestring=svg.encode()),
        "CairoSVG PDF": lambda svg, size: pdf_to_png(cairosvg.svg2pdf(bytestring=svg.encode()), size),
        "svglib PDF": lambda svg, size: pdf_to_png(svglib_pdf(svg), size),
        "svg2pdf PDF": lambda svg, size: pdf_to_png(to_pdf(svg), size),
    }


def compare(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    d = np.abs(a - b)
    return float(d.mean()), float((d.max(axis=2) > 64).mean() * 100)


def image_trio_svg() -> str:
    """Our render of a trio with a local PNG image (inlined as a data URI)."""
    import tempfile

    from service.pipeline import render_trio
    from service.trios import trio_image_resolver

    folder = Path(tempfile.mkdtemp())
    img = Image.new("RGB", (40, 30), "red")
    img.paste((0, 0, 255), (0, 0, 20, 30))
    img.save(folder / "flag.png")
    style = (
        "canvas { width = 200\n height = 150 }\nforall T t {\n"
        '  t.i = Image { href: "flag.png" center: (0, 0) width: 120 height: 90 }\n'
        '  t.x = Text { string: "image" center: (0, -60) fillColor: #000000ff fontSize: "18px" }\n}'
    )
    return render_trio("type T", "T a", style, "v", resolve_image=trio_image_resolver(folder)).svg


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("svgs", nargs="*", help="SVG files (default: the sample of Penrose's SVGs)")
    parser.add_argument("--out", type=Path, help="also write every PNG here")
    args = parser.parse_args()
    named = [(Path(p).name, Path(p).read_text()) for p in args.svgs] or [
        *((n, (REFERENCE / n).read_text()) for n in SAMPLE),
        ("ours: Image with a local PNG", image_trio_svg()),
    ]
    oracle = chromium_pngs([svg for _, svg in named])
    rows = []
    totals: dict[str, list[tuple[float, float]]] = {}
    for (name, svg), chrome in zip(named, oracle):
        size = svg_size(svg)
        want = pixels(chrome, size)
        cells = []
        for label, convert in converters().items():
            t0 = time.perf_counter()
            try:
                got = convert(svg, size)
                seconds = time.perf_counter() - t0
                mad, share = compare(pixels(got, size), want)
                totals.setdefault(label, []).append((mad, share))
                cells.append(f"{mad:.2f} / {share:.2f}% ({seconds:.2f} s)")
                if args.out:
                    args.out.mkdir(parents=True, exist_ok=True)
                    (args.out / f"{name}.{label.replace(' ', '_')}.png").write_bytes(got)
            except Exception as e:  # noqa: BLE001 - a converter that fails on a picture is a result
                cells.append(f"fails: {type(e).__name__}")
        if args.out:
            (args.out / f"{name}.chromium.png").write_bytes(chrome)
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    labels = list(converters())
    print("| SVG | " + " | ".join(labels) + " |")
    print("|---|" + "---|" * len(labels))
    print("\n".join(rows))
    print(
        "| **mean** | "
        + " | ".join(
            f"**{np.mean([m for m, _ in totals.get(k, [(np.nan, 0)])]):.2f} / "
            f"{np.mean([s for _, s in totals.get(k, [(0, np.nan)])]):.2f}%**"
            for k in labels
        )
        + " |"
    )


if __name__ == "__main__":
    main()
