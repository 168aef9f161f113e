"""The playground in a real headless Chromium (Debian's /usr/bin/chromium driven by Playwright), used
as a person would: what is asserted is what the page shows (text, pixels, element positions, files).

Skipped when /usr/bin/chromium or the playwright package is missing. The first-frame timings are
reported (record_property and stderr), never asserted.
"""

from __future__ import annotations

import io
import json
import os
import re
import sys
import time
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest

from .service_support import HAS_REGISTRY, REGISTRY, heavy_body, needs_chromium

pytestmark = needs_chromium
SVG_NS = "{http://www.w3.org/2000/svg}"
# Screenshots for docs/playground/ are written only when asked: PENROSE_SCREENSHOTS=docs/playground
SCREENSHOTS = os.environ.get("PENROSE_SCREENSHOTS")


def shot(page, name: str) -> None:
    if SCREENSHOTS:
        Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SCREENSHOTS) / f"{name}.png"))


def wait_rendered(page) -> None:
    page.wait_for_function("document.getElementById('status').textContent.startsWith('rendered in')")


def editor_text(page, source: str) -> str:
    """The editor's whole text (CodeMirror draws only the visible lines; its view holds them all)."""
    return page.evaluate(f"document.querySelector('#{source} .cm-content').cmView.view.state.doc.toString()")


def fill_editor(page, source: str, text: str) -> None:
    """Select everything in the editor and type over it, as a person would (paste-like insertion)."""
    page.click(f"#{source} .cm-content")
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(text)
    assert editor_text(page, source) == text


def drag(page, x: float, y: float, dx: float, dy: float, steps: int) -> None:
    """Press at (x, y), move by (dx, dy) `steps` times as a hand would, release, and wait until the
    layout settled after the last move the page sent."""
    page.mouse.move(x, y)
    page.mouse.down()
    for k in range(1, steps + 1):
        page.mouse.move(x + dx * k, y + dy * k)
        page.wait_for_timeout(30)
    page.mouse.up()
    page.wait_for_function(
        "!window.playgroundMetrics.dragBusy"
        " && window.playgroundMetrics.settledSeq === window.playgroundMetrics.dragSeq"
        " && document.getElementById('live-text').textContent.startsWith('settled')"
    )


def diagram_pixels(page) -> bytes:
    return page.locator("#diagram svg").screenshot()


def open_example(page, name: str) -> None:
    page.wait_for_selector(f"#example option[value='{name}']", state="attached")
    page.select_option("#example", "")  # so that choosing `name` is a change even if it was chosen
    page.evaluate("document.getElementById('status').textContent = ''")
    chosen = page.evaluate("performance.now()")
    page.select_option("#example", name)
    # the render this choice began, not one still ending from before (the example's files load first)
    page.wait_for_function(
        f"window.playgroundMetrics.renderStarted > {chosen} && window.playgroundMetrics.result !== null"
        " && document.getElementById('status').textContent.startsWith('rendered in')"
    )
    assert page.evaluate("window.playgroundMetrics.frames") >= 1, page.inner_text("#status")


def report_timing(record_property, name: str, ms: float) -> None:
    record_property(name, round(ms, 1))
    print(f"\n[playground timing] {name}: {ms:.1f} ms", file=sys.stderr)


def test_editor_highlights_renders_and_fits_the_diagram(page):
    # the first visit opens the first example and lays it out at once
    wait_rendered(page)
    # three editors with line numbers and highlighted keywords
    for source in ("domain", "substance", "style"):
        assert page.locator(f"#{source} .cm-lineNumbers .cm-gutterElement").count() >= 3
    assert page.locator("#style .cm-content span", has_text="forall").count() >= 1
    keyword_color = page.locator("#style .cm-content span", has_text="forall").first.evaluate(
        "e => getComputedStyle(e).color"
    )
    plain_color = page.locator("#style .cm-content").evaluate("e => getComputedStyle(e).color")
    assert keyword_color != plain_color
    # every editor is wide enough to read 60 characters
    width = page.locator("#style .cm-content").bounding_box()["width"]
    char = page.evaluate(
        "(() => { const s = document.createElement('span'); s.textContent = 'x'.repeat(60);"
        " document.querySelector('#style .cm-line').append(s); const w = s.getBoundingClientRect().width;"
        " s.remove(); return w; })()"
    )
    assert width >= char
    # the whole diagram lies inside the visible pane, and something is drawn
    pane = page.locator("#diagram").bounding_box()
    svg = page.locator("#diagram svg").bounding_box()
    assert svg["x"] >= pane["x"] - 0.5 and svg["y"] >= pane["y"] - 0.5
    assert svg["x"] + svg["width"] <= pane["x"] + pane["width"] + 0.5
    assert svg["y"] + svg["height"] <= pane["y"] + pane["height"] + 0.5
    assert svg["width"] > 0.8 * pane["width"] or svg["height"] > 0.8 * pane["height"]
    assert page.locator("#diagram svg circle").count() == 4
    # zoomed in, the pane scrolls to every edge of the diagram instead of cropping it
    for _ in range(4):
        page.click("#zoom [data-zoom='in']")
    scroll = page.evaluate(
        "(() => { const d = document.getElementById('diagram'); d.scrollLeft = 0; d.scrollTop = 0;"
        " const s = d.querySelector('svg').getBoundingClientRect(), p = d.getBoundingClientRect();"
        " return [s.left - p.left, s.top - p.top, d.scrollWidth > d.clientWidth]; })()"
    )
    assert scroll[0] >= -0.5 and scroll[1] >= -0.5 and scroll[2]
    page.click("#zoom [data-zoom='fit']")
    shot(page, "editor")


def test_a_hex_color_is_one_token(page):
    wait_rendered(page)
    plain_color = page.locator("#style .cm-content").evaluate("e => getComputedStyle(e).color")
    # a hex color is one token, in a color of its own, not digits coloured as numbers
    fill_editor(page, "style", "canvas {\n  width = 800\n  color = #00ff00a0\n}\n")
    hex_span = page.locator("#style .cm-content span", has_text="#00ff00a0")
    assert hex_span.count() == 1 and hex_span.first.inner_text() == "#00ff00a0"
    number_color = page.locator("#style .cm-content span", has_text="800").first.evaluate(
        "e => getComputedStyle(e).color"
    )
    assert hex_span.first.evaluate("e => getComputedStyle(e).color") not in (plain_color, number_color)
    open_example(page, "sets")  # the next visit (the edits are kept) opens a whole trio again


def test_an_error_is_located_and_the_diagram_marked_stale(page):
    open_example(page, "graph")
    assert page.is_hidden("#stale")
    lines = editor_text(page, "substance").split("\n")
    lines[2] = "Edge(a, "
    fill_editor(page, "substance", "\n".join(lines))
    assert "edited" in page.inner_text("#stale")  # an edit alone already marks the picture
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("#errors:not([hidden])")
    message = page.inner_text("#errors")
    # named as the editor's heading, the file the user sees, where the CLI names the file
    assert message.startswith(("Substance:3:", "Substance:4:")), message
    bad = page.locator("#substance .cm-bad-line")
    assert bad.count() == 1
    assert "render failed" in page.inner_text("#stale")
    assert "stale" in page.get_attribute("#diagram", "class")
    # the live line says the same as the status, never "laying out" nor the last layout's "done"
    assert page.inner_text("#live-text").startswith("no layout: the trio has an error")
    # clicking the message puts the cursor on the offending line
    page.click("#errors a.diagnostic")
    assert page.locator("#substance .cm-activeLine").inner_text() == bad.inner_text()
    shot(page, "error")


def test_edits_survive_a_reload_and_travel_in_the_link(page, context):
    open_example(page, "sets")
    fill_editor(page, "substance", "Set A, B\nApart(A, B)\nAutoLabel All\n")
    page.wait_for_function("location.hash.length > 10")
    page.wait_for_timeout(400)  # edits are saved 300 ms after the last keystroke
    link = page.evaluate("location.href")
    substance_shown = "document.querySelector('#substance .cm-line').textContent === 'Set A, B'"
    page.goto(page.url.split("#")[0])  # without the link: restored from the browser's storage
    page.wait_for_function(substance_shown)
    wait_rendered(page)
    assert page.locator("#diagram svg circle").count() == 2
    other = context.new_page()
    other.goto(f"{link.split('#')[0]}#")
    other.evaluate("localStorage.clear()")
    # A new document (a link that differs only after the # would not reload the page, which may
    # have restored the edits from storage before the clear): the link alone carries the trio.
    other.goto("about:blank")
    other.goto(link)
    other.wait_for_function(substance_shown)
    assert editor_text(other, "substance").startswith("Set A, B\nApart(A, B)")
    other.close()


def test_frames_stream_and_resample_changes_the_picture(page, record_property):
    open_example(page, "sets")
    before = diagram_pixels(page)
    variation = page.input_value("#variation")
    t0 = time.perf_counter()
    page.click("#resample")
    wait_rendered(page)
    assert page.input_value("#variation") != variation
    assert diagram_pixels(page) != before
    assert "done (EPConverged)" in page.inner_text("#live")
    metrics = page.evaluate("window.playgroundMetrics")
    assert metrics["frames"] >= 1
    report_timing(record_property, "resample first frame (cached trio)", metrics["firstFrameMs"])
    report_timing(record_property, "resample to final picture", (time.perf_counter() - t0) * 1e3)
    # an edit of a cached trio: its first frame
    page.keyboard.press("Control+Enter")
    wait_rendered(page)
    report_timing(
        record_property,
        "re-render first frame (cached trio)",
        page.evaluate("window.playgroundMetrics.firstFrameMs"),
    )


def test_pause_step_resume_and_cancel(page):
    body = heavy_body(60, variation="pause-me")
    page.fill("#variation", body["variation"])
    fill_editor(page, "substance", body["substance"])
    page.keyboard.press("Control+Enter")
    page.wait_for_function("window.playgroundMetrics.frames >= 1")
    page.click("#pause")
    page.wait_for_function("document.getElementById('live-text').textContent.startsWith('paused')")
    page.wait_for_timeout(300)
    shot(page, "live-paused")
    frames = page.evaluate("window.playgroundMetrics.frames")
    page.wait_for_timeout(700)
    assert page.evaluate("window.playgroundMetrics.frames") == frames  # paused: nothing moves
    page.click("#step")
    page.wait_for_function(f"window.playgroundMetrics.frames > {frames}")
    page.wait_for_timeout(500)
    stepped = page.evaluate("window.playgroundMetrics.frames")
    assert stepped <= frames + 2  # one iteration's frame, then still
    page.click("#pause")  # now labelled Resume
    page.wait_for_function(f"window.playgroundMetrics.frames > {stepped}")
    page.click("#cancel")
    page.wait_for_function("document.getElementById('status').textContent === 'cancelled'")
    assert "cancelled" in page.inner_text("#stale")
    assert page.locator("#diagram svg").count() == 1  # the last frame stays, marked out of date


def test_dragging_a_shape_pins_it_and_resettles_the_others(page, record_property):
    open_example(page, "sets")
    names = page.evaluate(
        "[...document.querySelectorAll('#diagram .draggable > title')].map(t => t.textContent)"
    )
    assert "`Rocks`.circle" in names
    circle = page.locator(
        "#diagram g.draggable:has(> title:text-is('`Rocks`.circle')), "
        "#diagram circle.draggable:has(> title:text-is('`Rocks`.circle'))"
    ).first
    box = circle.bounding_box()
    others_before = page.evaluate(
        "[...document.querySelectorAll('#diagram circle')].map(c => c.getBoundingClientRect().x)"
    )
    # grab the circle low, away from its label (the label is a shape of its own, drawn on top)
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] * 0.85
    grabbed = f"document.elementFromPoint({x}, {y}).querySelector(':scope > title').textContent"
    assert page.evaluate(grabbed) == "`Rocks`.circle"
    drag(page, x, y, -12, -6, 8)
    title = page.locator("#diagram .draggable > title", has_text="`Rocks`.circle")
    moved = title.locator("..").bounding_box()
    scale = page.evaluate(
        "(() => { const s = document.querySelector('#diagram svg');"
        " return s.getBoundingClientRect().width / s.viewBox.baseVal.width; })()"
    )

    # the shape's center went where the pointer took it (96 px left, 48 px up on screen); its
    # radius is an unknown, so it may re-settle too
    def center(b):
        return b["x"] + b["width"] / 2, b["y"] + b["height"] / 2

    (x0, y0), (x1, y1) = center(box), center(moved)
    sent = page.evaluate("window.playgroundMetrics.lastDrag")
    assert abs((x1 - x0) - (-96)) < 4 * max(scale, 1), (x1 - x0, y1 - y0, scale, sent)
    assert abs((y1 - y0) - (-48)) < 4 * max(scale, 1), (x1 - x0, y1 - y0, scale, sent)
    others_after = page.evaluate(
        "[...document.querySelectorAll('#diagram circle')].map(c => c.getBoundingClientRect().x)"
    )
    assert others_after != others_before
    assert "0 violated" in page.inner_text("#live")
    shot(page, "dragged")
    steps = sorted(page.evaluate("window.playgroundMetrics.dragFrameMs"))
    assert steps  # frames came while the pointer moved
    report_timing(record_property, "drag step to its first frame (median)", steps[len(steps) // 2])
    report_timing(record_property, "drag step to its first frame (max)", steps[-1])


def test_a_dragging_constraint_holds_the_shape_on_its_line(page):
    # Penrose's form: the body of a function of [x, y] (canvas coordinates, y up)
    open_example(page, "sets")
    style = editor_text(page, "style").replace(
        "s.circle = Circle {", 's.circle = Circle {\n    draggingConstraint: "return [x, 0];"'
    )
    fill_editor(page, "style", style)
    page.evaluate("document.getElementById('status').textContent = ''")
    page.keyboard.press("Control+Enter")
    wait_rendered(page)
    circle = page.locator("#diagram circle:has(> title:text-is('`Rocks`.circle'))").first
    box = circle.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] * 0.85
    drag(page, x, y, 10, -15, 6)  # up and right: only the right part may count
    svg = ET.fromstring(
        page.evaluate("new XMLSerializer().serializeToString(document.querySelector('#diagram svg'))")
    )
    height = float(svg.get("viewBox").split()[3])
    rocks = next(e for e in svg.iter(f"{SVG_NS}circle") if e.findtext(f"{SVG_NS}title") == "`Rocks`.circle")
    assert float(rocks.get("cy")) == pytest.approx(height / 2, abs=1e-6)  # on y = 0
    moved = circle.bounding_box()
    assert moved["x"] - box["x"] > 20  # and it followed the pointer to the right


def test_a_third_editor_goes_live_at_once_and_a_busy_server_still_renders(context, live_server):
    # the server holds 2 live sessions: two editors rest after their layouts, a third takes the
    # longest-resting one's session at once; when both are laying out, it renders without frames
    from .http.test_live import command, open_stream

    pages = [context.new_page() for _ in range(3)]
    busy = []
    for page in pages:
        page.set_default_timeout(60_000)
    try:
        for page in pages[:2]:
            page.goto(f"{live_server}/")
            open_example(page, "sets")
        third = pages[2]
        third.goto(f"{live_server}/")
        open_example(third, "graph")  # live: frames came (asserted by open_example)
        assert "drag a shape" in third.inner_text("#status")
        pages[0].wait_for_function("document.getElementById('status').textContent.includes('another editor')")
        assert "rendered in" in pages[1].inner_text("#status")  # the younger one keeps its session
        # two programs lay out a long trio, paused before its first evaluation: no session rests
        for k in range(2):
            client, response, iterator = open_stream(live_server, heavy_body(variation=f"busy{k}"))
            busy.append((client, response, iterator))  # a dropped iterator would close its stream
            event, data = next(iterator)
            assert event == "session" and command(live_server, data["id"], action="pause") == 204
        third.evaluate("document.getElementById('status').textContent = ''")
        third.click("#render")
        wait_rendered(third)
        assert "live frames and dragging unavailable (server busy" in third.inner_text("#status")
        assert third.locator("#diagram svg circle").count() >= 1 or third.locator("#diagram svg").count() == 1
    finally:
        for page in pages:
            page.close()
        for client, response, _ in busy:
            response.close()
            client.close()


def test_exports_give_files_that_parse(page, context):
    open_example(page, "graph")
    page.click("#export")
    with page.expect_download() as svg_download:
        page.click("[data-export='svg']")
    svg = ET.parse(svg_download.value.path()).getroot()
    assert svg.tag == f"{SVG_NS}svg" and len(svg.findall(f".//{SVG_NS}circle")) == 5

    page.click("#export")
    with page.expect_download() as png_download:
        page.click("[data-export='png']")
    png = Path(png_download.value.path()).read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    box = svg.get("viewBox").split()
    assert (width, height) == (2 * int(float(box[2])), 2 * int(float(box[3])))

    page.click("#export")
    with page.expect_download() as zip_download:
        page.click("[data-export='trio']")
    archive = zipfile.ZipFile(io.BytesIO(Path(zip_download.value.path()).read_bytes()))
    spec = json.loads(archive.read("graph/graph.trio.json"))
    assert archive.read("graph/" + spec["substance"][2:]).decode() == editor_text(page, "substance")
    assert archive.read("graph/" + spec["style"][0][2:]).decode() == editor_text(page, "style")
    assert spec["variation"] == page.input_value("#variation")

    page.click("#export")
    page.click("[data-export='copy']")
    page.wait_for_function("document.getElementById('status').textContent.includes('copied')")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert len(ET.fromstring(copied).findall(f".//{SVG_NS}circle")) == 5

    page.click("#export")
    with page.expect_download() as pdf_download:
        page.click("[data-export='pdf']")
    pdf = Path(pdf_download.value.path()).read_bytes()
    assert pdf.startswith(b"%PDF") and b"/MediaBox" in pdf  # a download: printing downloads nothing
    assert pdf_download.value.suggested_filename.endswith(".pdf")

    # a dragged layout prints: the print view holds the diagram alone
    pdf = page.pdf()
    assert pdf.startswith(b"%PDF")
    page.emulate_media(media="print")
    assert page.is_hidden("#editors") and page.is_visible("#diagram svg")
    page.emulate_media(media="screen")


IGNORED = {"href", "{http://www.w3.org/1999/xlink}href", "class"}


def svg_shapes(root: ET.Element) -> list[tuple[str, tuple[tuple[str, str], ...]]]:
    """Each drawn element's tag and attributes (images' data aside: each side inlines its own file)."""
    return [
        (e.tag.split("}")[-1], tuple(sorted((k, v) for k, v in e.attrib.items() if k not in IGNORED)))
        for e in root.iter()
        if e.tag.split("}")[-1] not in ("svg", "title", "desc", "defs", "style")
    ]


@pytest.mark.skipif(not HAS_REGISTRY, reason="needs ../shared/penrose-registry")
@pytest.mark.parametrize(
    "key",
    [
        "set-theory-domain/tree-venn",
        "set-theory-domain/tree-venn-3d",  # with images
        "graph-domain/textbook/sec2/fig11b",  # its Domain and Style two folders up
    ],
)
def test_registry_trio_opens_from_its_folder_and_renders_as_the_cli(page, key):
    from .service_support import render_registry_trio

    folder = REGISTRY / key.split("/")[0]
    wait_rendered(page)  # the page's first diagram
    page.evaluate("document.getElementById('status').textContent = ''")
    page.set_input_files("#folder-input", str(folder))
    page.wait_for_selector("#trio-choice:not([hidden])")
    path = f"{key}.trio.json"
    wait_rendered(page)  # the folder's first trio
    page.evaluate("document.getElementById('status').textContent = ''")
    page.select_option("#trio-select", path)
    wait_rendered(page)
    spec = json.loads((REGISTRY / f"{key}.trio.json").read_text())
    assert page.input_value("#variation") == spec["variation"]
    shown = ET.fromstring(
        page.evaluate("new XMLSerializer().serializeToString(document.querySelector('#diagram svg'))")
    )
    cli_svg = render_registry_trio(key).svg
    assert page.evaluate("window.playgroundMetrics.result.svg") == cli_svg  # byte for byte
    expected = ET.fromstring(cli_svg)
    assert svg_shapes(shown) == svg_shapes(expected)
    # with the Trio menu shown, the header still takes two rows at most at 1280 px
    rows = page.evaluate(
        "(() => { const tops = [...document.querySelectorAll('header > *')].filter(e => e.offsetParent)"
        ".map(e => e.getBoundingClientRect().top).sort((a, b) => a - b);"
        " return tops.filter((t, i) => i === 0 || t - tops[i - 1] > 12).length; })()"
    )
    assert rows <= 2, rows
    images = [e.get("href") for e in shown.iter(f"{SVG_NS}image")]
    assert all(h.startswith("data:image/") for h in images)  # the folder's images are shown
    if images:
        shot(page, "registry-trio")


def test_a_styles_event_handler_attribute_never_runs(page):
    # A shared link can carry any Style, and Penrose passes extra properties through as SVG
    # attributes: an `onload`/`onmouseover` must not run (the server's safe SVG drops them, the
    # page strips them again, and its CSP, bypassed here, would block them too).
    open_example(page, "sets")
    style = editor_text(page, "style").replace(
        "s.circle = Circle {",
        "s.circle = Circle {\n    onmouseover: \"document.title = 'pwned'\"\n"
        "    onload: \"document.title = 'pwned'\"",
    )
    fill_editor(page, "style", style)
    page.evaluate("document.getElementById('status').textContent = ''")
    page.keyboard.press("Control+Enter")
    wait_rendered(page)
    box = page.locator("#diagram circle").first.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 4)  # on the circle, clear of its label
    page.wait_for_timeout(200)
    assert page.title() == "Diagram playground"
    handlers = page.evaluate(
        "[...document.querySelectorAll('#diagram *')].flatMap(e => e.getAttributeNames())"
        ".filter(n => n.startsWith('on'))"
    )
    assert handlers == []


def test_warnings_and_unmet_constraints_are_said_beside_the_picture(page):
    # A misspelled property draws nothing (Penrose passes it through as an SVG attribute): the
    # status line must say so, not only the collapsed report.
    open_example(page, "sets")
    style = editor_text(page, "style")
    fill_editor(page, "style", style.replace("strokeWidth", "strokeWidht").replace("r : ?", "r : 1"))
    page.evaluate("document.getElementById('status').textContent = ''")
    page.keyboard.press("Control+Enter")
    wait_rendered(page)
    status = page.get_attribute("#status", "title")  # the whole line; the row shows what fits
    assert "2 warnings" in status and "strokeWidht" in status and "strokeWidth?" in status
    assert re.search(r"\d+ constraints? not satisfied", status)
    # `r : 1` fixes every radius, so the Report names `ensure s.circle.r > 30` as never satisfiable,
    # at its line in the Style editor, named as the editor is (the CLI names the Style file there)
    line = style.split("\n").index("  ensure s.circle.r > 30") + 1
    assert f"Style:{line}:3: InfeasibleConstraintWarning: ensure greaterThan" in page.text_content("#timings")
    assert "style:" not in page.text_content("#timings") and "style:" not in status


def test_the_gallery_forgets_its_choice_when_another_trio_is_opened(page):
    from service.examples import EXAMPLES_DIR

    open_example(page, "sets")
    assert page.input_value("#example") == "sets"
    page.evaluate("document.getElementById('status').textContent = ''")
    page.set_input_files("#file-input", [str(p) for p in EXAMPLES_DIR.glob("graph.*")])
    wait_rendered(page)
    assert editor_text(page, "domain") == (EXAMPLES_DIR / "graph.domain").read_text()
    assert page.input_value("#example") == ""  # so choosing sets again is a change, and loads it
    page.evaluate("document.getElementById('status').textContent = ''")
    page.select_option("#example", "sets")
    wait_rendered(page)
    assert editor_text(page, "domain") == (EXAMPLES_DIR / "sets.domain").read_text()
