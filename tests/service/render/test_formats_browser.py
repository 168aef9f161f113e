"""Our PNGs against Chromium's rendering of the same SVGs (Debian's /usr/bin/chromium driven by
Playwright): Penrose's own SVGs of registry trios with a blur filter, nested SVG images and TeX
paths, and our render of a trio with a local raster image. Skipped without Chromium or the
reference SVGs. The thresholds sit above what docs/formats.md measured (mean difference at most
2.1 per channel, at most 1.1% of pixels off by more than 64)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
from PIL import Image

from service.render.formats import to_png
from tests.service.service_support import REFERENCE, needs_chromium, write_trio

pytestmark = needs_chromium
SAMPLE = ["dinoshade__dinoshade.svg", "mobius__mobius.svg", "exterior-algebra__vector-wedge.svg"]


def on_white(png: bytes, size: tuple[int, int]) -> np.ndarray:
    image = Image.open(io.BytesIO(png)).convert("RGBA")
    assert image.size == size
    canvas = Image.new("RGBA", size, "white")
    canvas.alpha_composite(image)
    return np.asarray(canvas.convert("RGB"), dtype=np.int16)


def chromium_png(page, svg: str, size: tuple[int, int]) -> bytes:
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.set_content(f"<html><body style='margin:0;background:white'>{svg}</body></html>")
    page.evaluate(
        "(() => { const s = document.querySelector('svg'); s.style.display = 'block';"
        " s.setAttribute('width', innerWidth); s.setAttribute('height', innerHeight); })()"
    )
    return page.screenshot(clip={"x": 0, "y": 0, "width": size[0], "height": size[1]})


def image_trio_svg(folder: Path) -> str:
    from service.pipeline import render_file

    flag = Image.new("RGB", (40, 30), "red")
    flag.paste((0, 0, 255), (0, 0, 20, 30))
    flag.save(folder / "flag.png")
    style = (
        "canvas {\n width = 200\n height = 150\n}\nforall T t {\n"
        '  t.i = Image { href: "flag.png" center: (0, 0) width: 120 height: 90 }\n}'
    )
    files = {"t.domain": "type T", "t.substance": "T a", "t.style": style}
    spec = {"domain": "t.domain", "substance": "t.substance", "style": "t.style", "variation": "v"}
    return render_file(write_trio(folder, "t", spec, files)).svg


def test_png_matches_chromium_on_registry_svgs(tmp_path, browser):
    named = [(n, (REFERENCE / "svg" / n).read_text()) for n in SAMPLE if (REFERENCE / "svg" / n).is_file()]
    named.append(("Image with a local PNG", image_trio_svg(tmp_path)))
    page = browser.new_page()
    for name, svg in named:
        ours = to_png(svg)
        size = Image.open(io.BytesIO(ours)).size
        diff = np.abs(on_white(ours, size) - on_white(chromium_png(page, svg, size), size))
        mean, off = diff.mean(), (diff.max(axis=2) > 64).mean()
        assert mean < 3.0 and off < 0.015, (name, mean, off)
    page.close()
