"""PNG and PDF of a diagram (service.render.formats) from Python, the HTTP API (POST by Accept, GET by URL,
with ETag, 304, 400 and 414) and the console command, checked against hand-derived pixels."""

from __future__ import annotations

import base64
import io
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
import zlib
from pathlib import Path

import pytest
from PIL import Image

from service.http.diagram_url import MAX_ENCODED_CHARS, UrlError, decode_trio, encode_trio
from service.render.formats import FormatError, convert, format_of
from tests.service.service_support import example_body

SQUARE = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="20" height="40">'
    '<rect x="0" y="0" width="10" height="10" fill="#ff0000"/></svg>'
)
PENROSE_PY = Path(sys.executable).with_name("penrose-py")


def rgba(png: bytes) -> Image.Image:
    return Image.open(io.BytesIO(png)).convert("RGBA")


def test_png_has_the_svg_pixels_and_scales():
    image = rgba(convert(SQUARE, "png"))
    assert image.size == (20, 40)
    assert image.getpixel((5, 5)) == (255, 0, 0, 255)
    assert image.getpixel((15, 30))[3] == 0  # nothing drawn there: transparent, as in a browser
    assert rgba(convert(SQUARE, "png", scale=2)).size == (40, 80)


def test_pdf_is_one_vector_page_of_the_svg_size():
    pdf = convert(SQUARE, "pdf")
    assert pdf.startswith(b"%PDF-")
    assert re.findall(rb"/MediaBox\s*\[0 0 20 40\]", pdf)
    assert pdf.count(b"/Type /Page\n") + pdf.count(b"/Type /Page ") + pdf.count(b"/Type /Page/") <= 1


@pytest.mark.parametrize("family", ["sans-serif", "Palatino", "'Times New Roman', serif"])
def test_text_in_any_family_is_drawn_with_the_bundled_fonts(family):
    svg = (
        '<svg xmlns="http://www.w3.org/2000/svg" width="100" height="50">'
        f'<text x="10" y="30" style="font: 18px {family};">Hello</text></svg>'
    )
    fonts = re.findall(rb"/BaseFont\s*/\w+\+(DejaVu\w+)", convert(svg, "pdf"))
    assert fonts and set(fonts) <= {b"DejaVuSans", b"DejaVuSerif"}  # the glyphs are embedded
    alpha = rgba(convert(svg, "png")).getchannel("A").histogram()
    assert sum(alpha[129:]) > 100  # "Hello" is drawn (about 300 pixels at 18px)


def test_unknown_format_and_broken_svg_are_format_errors():
    assert format_of("x.PNG") == "png" and format_of("x.pdf") == "pdf" and format_of("x.txt") == "svg"
    with pytest.raises(FormatError, match="unknown format 'gif'"):
        convert(SQUARE, "gif")
    with pytest.raises(FormatError, match="as PNG"):
        convert("<svg", "png")


def stroke_pixel_matches(png: bytes, svg: str) -> None:
    """The leftmost point of the first circle lies on its stroke: the PNG has the stroke's colour."""
    circle = ET.fromstring(svg).find("{http://www.w3.org/2000/svg}circle")
    assert circle is not None
    x, y = float(circle.get("cx")) - float(circle.get("r")), float(circle.get("cy"))
    want = tuple(int(circle.get("stroke")[i : i + 2], 16) for i in (1, 3, 5))
    got = rgba(png).getpixel((round(x), round(y)))
    assert all(abs(g - w) <= 40 for g, w in zip(got, want)), (got, want)


def test_post_answers_png_and_pdf_by_accept_with_etag_and_304(client):
    body = example_body("sets")
    svg = client.post("/diagrams", json=body).text
    png = client.post("/diagrams", json=body, headers={"accept": "image/png"})
    assert png.status_code == 200 and png.headers["content-type"] == "image/png"
    assert rgba(png.content).size == (500, 400)
    stroke_pixel_matches(png.content, svg)
    assert png.headers["cache-control"] == "no-cache"
    etag = png.headers["etag"]
    assert re.fullmatch(r'"[0-9a-f]{40}"', etag)
    again = client.post("/diagrams", json=body, headers={"accept": "image/png", "if-none-match": etag})
    assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == etag
    pdf = client.post("/diagrams", json=body, headers={"accept": "application/pdf"})
    assert pdf.headers["content-type"] == "application/pdf" and pdf.content.startswith(b"%PDF-")
    assert pdf.headers["etag"] != etag


def test_get_url_renders_the_encoded_trio_with_long_lived_cache_headers(client):
    body = example_body("sets")
    # the encoding as Kroki documents it, written independently of service.http.diagram_url
    encoded = base64.urlsafe_b64encode(zlib.compress(json.dumps(body).encode(), 9)).decode()
    svg = client.get(f"/diagrams/svg/{encoded}")
    assert svg.status_code == 200 and svg.headers["content-type"].startswith("image/svg+xml")
    assert svg.text == client.post("/diagrams", json=body).text
    assert svg.headers["cache-control"] == "public, max-age=31536000, immutable"
    etag = svg.headers["etag"]
    not_modified = client.get(f"/diagrams/svg/{encoded}", headers={"if-none-match": f'"x", {etag}'})
    assert not_modified.status_code == 304 and not_modified.headers["cache-control"].startswith("public")
    png = client.get(f"/diagrams/png/{encoded.rstrip('=')}")  # padding may be left off
    assert png.headers["content-type"] == "image/png"
    stroke_pixel_matches(png.content, svg.text)


def test_get_url_mistakes_are_400_414_and_422_with_clear_messages(client):
    def error(url: str) -> tuple[int, str, str | None]:
        r = client.get(url)
        return r.status_code, r.json()["message"], r.headers.get("cache-control")

    code, message, cache = error("/diagrams/svg/" + "A" * (MAX_ENCODED_CHARS + 1))
    assert code == 414 and "at most 8000" in message and cache == "no-store"
    code, message, _ = error("/diagrams/svg/not*base64")
    assert code == 400 and "not base64url" in message
    code, message, _ = error("/diagrams/svg/" + base64.urlsafe_b64encode(b"plain text").decode())
    assert code == 400 and "not zlib-deflated" in message
    truncated = base64.urlsafe_b64encode(zlib.compress(b'{"domain": "type T"}')[:-6]).decode()
    assert error(f"/diagrams/svg/{truncated}")[:2] == (
        400,
        "the diagram in the URL is cut short (its zlib stream does not end)",
    )
    code, message, _ = error("/diagrams/svg/" + encode_trio({"domain": "type T"}))
    assert code == 422 and "substance" in message and "style" in message
    assert client.get("/diagrams/gif/" + encode_trio(example_body("sets"))).status_code == 422


def test_decoding_is_bounded():
    bomb = base64.urlsafe_b64encode(zlib.compress(b" " * 5_000_000, 9)).decode()
    assert len(bomb) < MAX_ENCODED_CHARS
    with pytest.raises(UrlError, match="more than 1000 bytes"):
        decode_trio(bomb, max_bytes=1000)
    assert decode_trio(encode_trio({"domain": "ü"}), 100) == {"domain": "ü"}


def run(*args: str, stdin: bytes | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(PENROSE_PY), *args], input=stdin, capture_output=True, cwd=cwd, timeout=120)


@pytest.mark.skipif(not PENROSE_PY.exists(), reason="the console command is installed by pip install -e .")
def test_console_command_renders_png_pdf_and_stdin_to_stdout(tmp_path):
    version = run("--version")
    assert version.returncode == 0 and re.fullmatch(rb"penrose-py \d+\.\d+\.\d+\S*\n", version.stdout)
    missing = run("render")
    assert missing.returncode == 2 and b"which trio?" in missing.stderr
    assert b"penrose-py render" in missing.stderr  # the render command's own usage
    done = run("render", "--example", "sets", "-o", "sets.png", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert rgba((tmp_path / "sets.png").read_bytes()).size == (500, 400)
    assert run("render", "--example", "sets", "-o", "x.bin", "--format", "pdf", cwd=tmp_path).returncode == 0
    assert (tmp_path / "x.bin").read_bytes().startswith(b"%PDF-")
    body = json.dumps(example_body("sets")).encode()
    piped = run("render", "-", "-o", "-", "--format", "png", stdin=body)
    assert piped.returncode == 0 and piped.stdout == (tmp_path / "sets.png").read_bytes()
    bad = run("render", "-", "-o", "-", stdin=b'{"domain": 1}')
    assert bad.returncode == 1 and b"stdin: not a trio (domain: Input should be a valid string" in bad.stderr


@pytest.mark.skipif(not PENROSE_PY.exists(), reason="the console command is installed by pip install -e .")
def test_url_command_prints_a_url_that_decodes_to_the_trio():
    from service.examples import EXAMPLES_DIR

    done = run(
        "url", str(EXAMPLES_DIR / "sets.trio.json"), "--format", "png", "--server", "https://d.example/"
    )
    assert done.returncode == 0, done.stderr
    url = done.stdout.decode().strip()
    prefix = "https://d.example/diagrams/png/"
    assert url.startswith(prefix)
    payload = zlib.decompress(base64.urlsafe_b64decode(url[len(prefix) :]))
    want = example_body("sets")
    assert {k: v for k, v in json.loads(payload).items() if k in want} == want


def test_a_style_list_diagnostics_name_the_program_and_its_own_line(client):
    body = example_body("sets")
    first = "canvas {\n  width = 300\n  height = 200\n}"
    second = "forall Set s {\n  s.c = Circle { r: s.nope }\n}"
    r = client.post("/diagrams", json={**body, "style": [first, second]})
    assert r.status_code == 422
    [d] = r.json()["diagnostics"]
    assert (d["source"], d["line"], d["column"]) == ("style[1]", 2, 21)
    assert r.json()["message"].startswith("style[1]:2:21: `")
    typo = "forall Set s {\n  s.c = Circle { strokeWidht: 2 }\n}"
    report = client.post(
        "/diagrams", json={**body, "style": [first, typo]}, headers={"accept": "application/json"}
    ).json()
    assert report["warnings"][0].startswith("style[1]:2:18: UnknownPropertyWarning: Circle has no property")
    assert (
        client.post("/diagrams", json=body, headers={"accept": "application/json"}).headers["cache-control"]
        == "no-store"
    )


def test_a_served_url_longer_than_uvicorns_default_head_limit_is_still_a_clear_414(live_server):
    import urllib.error
    import urllib.request

    with pytest.raises(urllib.error.HTTPError) as info:  # httpx refuses URLs this long itself
        urllib.request.urlopen(f"{live_server}/diagrams/svg/" + "A" * 200_000, timeout=30)
    assert info.value.code == 414 and "at most 8000" in json.loads(info.value.read())["message"]


def test_pictures_are_drawn_by_a_worker_once_per_answer(client, monkeypatch):
    """PNG and PDF are drawn in a layout worker (under its time limit and memory cap), never in
    the server, and a repeated answer is not drawn again."""
    import service.render.formats

    pool = client.app.state.pool
    jobs = []
    run = pool.run

    async def recording(job, gone=None):
        jobs.append(job.get("convert", "layout"))
        return await run(job, gone)

    monkeypatch.setattr(pool, "run", recording)
    monkeypatch.setattr(
        service.render.formats, "convert", lambda *a, **k: pytest.fail("converted in the server")
    )
    body = example_body("graph", variation="drawn-once")  # a body no other test lays out
    first = client.post("/diagrams", json=body, headers={"accept": "image/png"})
    again = client.post("/diagrams", json=body, headers={"accept": "image/png"})
    pdf = client.post("/diagrams", json=body, headers={"accept": "application/pdf"})
    assert first.status_code == 200 and first.content.startswith(b"\x89PNG")
    assert first.content == again.content and first.headers["etag"] == again.headers["etag"]
    assert pdf.content.startswith(b"%PDF")
    assert jobs == ["layout", "png", "pdf"]


def test_a_picture_over_the_pixel_limit_is_refused_before_it_is_drawn(client, monkeypatch):
    # 20,000 px square is 400 MP: resvg would hold 1.6 GB.
    body = example_body("sets")
    body["style"] = re.sub(r"width = \d+", "width = 20000", body["style"])
    body["style"] = re.sub(r"height = \d+", "height = 20000", body["style"])
    for accept in ("image/png", "application/pdf"):
        r = client.post("/diagrams", json=body, headers={"accept": accept})
        assert r.status_code == 422, r.text
        assert "400,000,000 pixels" in r.json()["message"]
    svg = client.post("/diagrams", json=body)
    assert svg.status_code == 200  # the SVG is still there
    drawn = []
    monkeypatch.setattr("resvg_py.svg_to_bytes", lambda **kw: drawn.append(kw) or b"")
    with pytest.raises(FormatError, match="400,000,000 pixels"):
        convert(svg.text, "png")
    assert drawn == []
    with pytest.raises(FormatError, match="positive"):
        convert('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>', "png", scale=0)


def test_url_command_refuses_a_trio_too_long_for_a_url(tmp_path):
    import random

    rng = random.Random(7)  # incompressible comments: the deflated trio stays long
    noise = "".join(f"-- {rng.getrandbits(64):016x}\n" for _ in range(600))
    body = {**example_body("sets"), "style": noise + example_body("sets")["style"]}
    assert len(encode_trio(body)) > MAX_ENCODED_CHARS
    done = subprocess.run(
        [sys.executable, "-m", "service", "url", "-"], input=json.dumps(body).encode(), capture_output=True
    )
    assert done.returncode == 1 and b"POST it to /diagrams instead" in done.stderr and done.stdout == b""
