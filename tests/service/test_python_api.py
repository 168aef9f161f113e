"""The Python API a notebook uses: load_trio, render_file (local images inlined), render_trio with a
Style list, and a Rendering that displays itself (Jupyter's _repr_svg_/_repr_png_) and prints short."""

from __future__ import annotations

import io
import re

from PIL import Image

import service
from service.examples import EXAMPLES_DIR

from .service_support import write_trio


def test_render_file_displays_itself_and_prints_one_line(tmp_path):
    rendering = service.render_file(EXAMPLES_DIR / "sets.trio.json")
    text = repr(rendering)
    assert len(text) < 200 and "\n" not in text
    assert re.fullmatch(
        r"<Rendering 500x400 canvas, \d+ shapes, \w+, energy \S+, \d+ violated, \d+ warnings, \d+ ms>", text
    )
    assert rendering._repr_svg_().startswith("<svg") and rendering._repr_svg_() == rendering.svg
    assert Image.open(io.BytesIO(rendering._repr_png_())).size == (500, 400)
    assert rendering.save(tmp_path / "x.pdf").read_bytes().startswith(b"%PDF-")


def test_load_trio_and_render_trio_with_a_style_list():
    trio = service.load_trio(EXAMPLES_DIR / "sets.trio.json")
    assert trio.key == "sets" and "forall" in trio.style
    halves = trio.style.split("\n", 1)
    joined = service.render_trio(trio.domain, trio.substance, halves, trio.variation)
    assert joined.svg == service.render_trio(trio.domain, trio.substance, trio.style, trio.variation).svg


def test_render_file_inlines_local_images_only_from_the_trio_folder(tmp_path):
    folder = tmp_path / "trio"
    folder.mkdir()
    Image.new("RGB", (4, 3), "red").save(folder / "dot.png")
    Image.new("RGB", (4, 3), "blue").save(tmp_path / "outside.png")  # exists, but outside the folder
    style = (
        "canvas {\n  width = 100\n  height = 100\n}\nforall T t {\n"
        '  t.i = Image { href: "dot.png" }\n  t.j = Image { href: "../outside.png" }\n}'
    )
    files = {"t.domain": "type T", "t.substance": "T a, b", "t.style": style}
    write_trio(folder, "t", {"domain": "t.domain", "substance": "t.substance", "style": "t.style"}, files)
    svg = service.render_file(folder / "t.trio.json", variation="v").svg
    assert svg.count('href="data:image/png;base64,') == 2  # one per T: dot.png only
    assert "outside.png" not in svg  # never read, and safe SVG drops an href it could not embed
    unsafe = service.render_file(folder / "t.trio.json", variation="v", safe_svg=False).svg
    assert unsafe.count('href="data:image/png;base64,') == 2
    assert unsafe.count('href="../outside.png"') == 2  # Penrose's passthrough, still never read


def test_the_package_lists_its_public_api():
    from energies.lang.errors import DiagramError

    public = {
        "render_file",
        "render_trio",
        "load_trio",
        "Rendering",
        "DiagramError",
        "TrioError",
        "LayoutError",
    }
    assert public <= set(dir(service)) and public <= set(service.__all__)
    assert service.DiagramError is DiagramError
    for name in service.__all__:
        assert getattr(service, name) is not None
    try:
        service.render_trio("type Set", "Set A", "forall Set s { s.c = Circle { } }")
    except service.DiagramError as e:  # what a notebook catches, from the package itself
        assert e.source == "style" and "canvas.width" in str(e)
    else:
        raise AssertionError("an unknown name in the Style must raise DiagramError")


def test_render_file_names_warnings_as_the_cli_does(tmp_path):
    files = {
        "t.domain": "type Set",
        "t.substance": "Set A",
        "t.style": "canvas {\n  width = 100\n  height = 100\n}\n"
        "forall Set s {\n  s.c = Circle { strokeWidht: 3 }\n}\n",
    }
    folder = tmp_path / "m7"
    trio = write_trio(
        folder, "t", {"domain": "t.domain", "substance": "t.substance", "style": "t.style"}, files
    )
    warnings = service.render_file(trio, variation="v").warnings
    said = [w for w in warnings if "strokeWidht" in w]
    assert said and said[0].startswith(f"{folder / 't.style'}:6:")
    import subprocess
    import sys

    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "service",
            "render",
            str(trio),
            "-o",
            str(tmp_path / "x.svg"),
            "--variation",
            "v",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert f"warning: {said[0]}" in done.stderr
