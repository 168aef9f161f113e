"""The editor's newer parts in a real headless Chromium (as test_playground_browser.py runs it): why
a layout failed (Style gutter marks, red outlines, the Report's goals), the history slider, the
layout stages, autostep, the gallery, Ctrl+Enter, the panes, the status while waiting, and the
offline API docs. What is asserted is what the page shows, against the programs' own text and the
SVG's own geometry."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from service.examples import PENROSE_EXAMPLES_DIR

from .service_support import needs_chromium
from .test_diagnose import CONTAINS, DISJOINT, subset_pairs
from .test_playground_browser import (
    SVG_NS,
    drag,
    editor_text,
    fill_editor,
    open_example,
    shot,
    wait_rendered,
)

pytestmark = needs_chromium
VENN = "set-theory-domain/tree-venn"


def render_with_keys(page) -> None:
    page.evaluate("document.getElementById('status').textContent = ''")
    page.keyboard.press("Control+Enter")
    wait_rendered(page)


def shown_svg(page) -> ET.Element:
    return ET.fromstring(
        page.evaluate("new XMLSerializer().serializeToString(document.querySelector('#diagram svg'))")
    )


def test_ctrl_enter_renders_and_changes_no_text(page):
    open_example(page, "sets")
    before = editor_text(page, "style")
    page.click("#style .cm-line:nth-child(8)")  # the cursor mid-program, where a newline would land
    started = page.evaluate("window.playgroundMetrics.renderStarted")
    render_with_keys(page)
    assert page.evaluate("window.playgroundMetrics.renderStarted") > started  # it rendered
    assert editor_text(page, "style") == before  # and inserted nothing


def test_a_contradiction_is_marked_outlined_and_listed(page):
    open_example(page, VENN)
    style = editor_text(page, "style")
    assert CONTAINS in style
    fill_editor(page, "style", style.replace(CONTAINS, f"{CONTAINS}\n{DISJOINT}"))
    render_with_keys(page)
    lines = editor_text(page, "style").split("\n")
    contains_line, disjoint_line = lines.index(CONTAINS) + 1, lines.index(DISJOINT) + 1
    # the status names the two lines as the Style editor numbers them
    status = page.inner_text("#status")
    assert f"Style:{contains_line} contains and Style:{disjoint_line} disjoint cannot both hold" in status
    # both lines are marked in the Style's gutter; the tooltip gives values and the shapes' objects
    marks = page.evaluate(
        "(() => { const v = document.querySelector('#style .cm-content').cmView.view;"
        " return [...document.querySelectorAll('#style .cm-goal-gutter .cm-gutterElement span')].map(s =>"
        " [v.state.doc.lineAt(v.lineBlockAtHeight(s.getBoundingClientRect().top + 2 - v.documentTop).from)"
        ".number, s.title]); })()"
    )
    marked = dict(marks)
    assert contains_line in marked and disjoint_line in marked, marks
    tip = marked[disjoint_line]
    assert "ensure disjoint" in tip and "value" in tip and "cannot all hold with Style:" in tip
    assert any(f"{a}, {b}" in tip or f"{b}, {a}" in tip for a, b in map(tuple, subset_pairs()))
    # the shapes of the failing goals are outlined in red: each outline encloses its circle
    svg = shown_svg(page)
    circles = {
        e.findtext(f"{SVG_NS}title"): e for e in svg.iter(f"{SVG_NS}circle") if e.findtext(f"{SVG_NS}title")
    }
    outlines = [r for g in svg.iter(f"{SVG_NS}g") if g.get("class") == "outlines" for r in g]
    outlined = {r.get("data-shape"): r for r in outlines}
    for a, b in map(tuple, subset_pairs()):  # every subset pair's circles are among them
        for name in (f"`{a}`.icon", f"`{b}`.icon"):
            r, c = outlined[name], circles[name]
            x, y, w, h = (float(r.get(k)) for k in ("x", "y", "width", "height"))
            cx, cy, rad = (float(c.get(k)) for k in ("cx", "cy", "r"))
            assert x <= cx - rad and y <= cy - rad and x + w >= cx + rad and y + h >= cy + rad
            assert x >= cx - rad - 8 and x + w <= cx + rad + 8  # around it, not around the canvas
    page.click("#details summary")
    shot(page, "diagnosis")
    # the Report lists the goals, sortable; a click on one outlines its shapes only
    rows = page.locator("#goals tbody tr")
    assert rows.count() >= 22
    page.click("#goals button[data-sort='value']")
    values = [float(v) for v in page.locator("#goals tbody tr td:nth-child(4)").all_inner_texts()]
    assert values == sorted(values, reverse=True)
    page.click("#goals button[data-sort='share']")
    shares = [float(v.rstrip("%")) for v in page.locator("#goals tbody tr td:nth-child(5)").all_inner_texts()]
    assert shares == sorted(shares, reverse=True)
    row = page.locator("#goals tbody tr", has_text="disjoint").first
    row.click()
    objects = row.locator("td:nth-child(3)").inner_text().split(", ")
    chosen = page.evaluate(
        "[...document.querySelectorAll('#diagram .outlines rect')].map(r => r.dataset.shape)"
    )
    assert sorted(chosen) == sorted(f"`{o}`.icon" for o in objects)
    # the toggle hides them, and no export carries them
    page.uncheck("#outline")
    assert page.locator("#diagram .outlines rect").count() == 0
    page.check("#outline")
    assert page.locator("#diagram .outlines rect").count() > 0
    with page.expect_download() as download:
        page.click("#export")
        page.click("[data-export='svg']")
    assert "outlines" not in Path(download.value.path()).read_text()


def test_the_history_slider_scrubs_back_and_exports_the_frame_shown(page):
    open_example(page, "graph-domain/textbook/sec1/fig5")
    frames = page.evaluate("window.playgroundMetrics.frames")
    n = int(page.get_attribute("#history-range", "max")) + 1
    assert n >= 2 and n >= min(frames, 400)
    final = shown_svg(page)
    page.fill("#history-range", "0")  # the first frame: the initial state
    assert page.inner_text("#history-label").startswith(f"frame 1 of {n}")
    shot(page, "history")
    first = shown_svg(page)
    positions = [(e.get("cx"), e.get("cy")) for e in first.iter(f"{SVG_NS}circle")]
    assert positions != [(e.get("cx"), e.get("cy")) for e in final.iter(f"{SVG_NS}circle")]
    with page.expect_download() as download:
        page.click("#export")
        page.click("[data-export='svg']")
    assert download.value.suggested_filename.endswith("-frame1.svg")
    exported = ET.fromstring(Path(download.value.path()).read_text())
    assert [(e.get("cx"), e.get("cy")) for e in exported.iter(f"{SVG_NS}circle")] == positions
    # back to the end: the final layout again
    page.fill("#history-range", str(n - 1))
    assert "the final layout" in page.inner_text("#history-label")


def test_the_layout_stage_is_shown(page):
    key = "graph-domain/textbook/sec1/fig5"
    trio = (PENROSE_EXAMPLES_DIR / f"{key}.trio.json").read_text()
    style = re.search(r'"style":\s*\[?\s*"([^"]+)"', trio)[1]
    declared = re.search(r"layout = \[(.*?)\]", (PENROSE_EXAMPLES_DIR / Path(key).parent / style).read_text())
    stages = [s.strip() for s in declared[1].split(",")]
    open_example(page, key)
    assert page.locator("#stages .stage").all_inner_texts() == stages
    assert page.inner_text("#stages .stage.current") == stages[-1]  # the final layout ends the last stage
    page.fill("#history-range", "0")
    assert page.inner_text("#stages .stage.current") == stages[0]


def test_autostep_off_waits_for_step(page):
    open_example(page, "sets")
    page.uncheck("#autostep")
    page.evaluate("document.getElementById('status').textContent = ''")
    page.click("#render")
    page.wait_for_function("document.getElementById('pause').textContent === 'Resume'")
    held = page.evaluate("window.playgroundMetrics.frames")
    page.wait_for_timeout(1500)
    assert page.evaluate("window.playgroundMetrics.frames") == held  # nothing moves by itself
    assert page.evaluate("window.playgroundMetrics.result") is None
    page.click("#step")
    page.wait_for_function(f"window.playgroundMetrics.frames > {held}")
    page.check("#autostep")
    wait_rendered(page)


def test_the_gallery_offers_penroses_registry(page):
    page.wait_for_selector("#example optgroup", state="attached")
    groups = page.evaluate(
        "[...document.querySelectorAll('#example optgroup')].map(g => [g.label, g.children.length])"
    )
    penrose = [n for label, n in groups if "Penrose" in label]
    assert penrose and penrose[0] >= 20
    families = page.evaluate(
        "new Set([...document.querySelectorAll('#example optgroup:last-child option')]"
        ".map(o => o.value.split('/')[0])).size"
    )
    assert families >= 15
    assert (PENROSE_EXAMPLES_DIR / "LICENSE").read_text().startswith("MIT License")
    open_example(page, VENN)
    assert page.locator("#diagram svg circle").count() == 7  # Set A, B, C, D, E, F, G


def test_the_style_has_the_most_room_and_panes_resize(page):
    wait_rendered(page)
    heights = {s: page.locator(f"#{s}").bounding_box()["height"] for s in ("domain", "substance", "style")}
    assert heights["style"] > heights["substance"] > 0 and heights["style"] > heights["domain"]
    line = page.locator("#style .cm-line").first.bounding_box()["height"]
    assert heights["style"] / line >= 20  # lines of Style in view at 1280x800
    # the split between Substance and Style moves
    split = page.locator(".hsplit[data-between='substance style']").bounding_box()
    page.mouse.move(split["x"] + 50, split["y"] + 3)
    page.mouse.down()
    page.mouse.move(split["x"] + 50, split["y"] + 103, steps=5)
    page.mouse.up()
    assert page.locator("#style").bounding_box()["height"] < heights["style"] - 50
    # nothing in the header is cut: the status wraps in its bar, the variation fits its field
    page.fill("#variation", "VeryLongVariationName12345")
    for sel in ("#status", "#variation"):
        assert page.evaluate(f"(e => e.scrollWidth <= e.clientWidth + 1)(document.querySelector('{sel}'))"), (
            sel
        )


def test_no_stale_words_while_waiting(page):
    open_example(page, "sets")
    assert page.inner_text("#live-text").startswith("done")
    # the server answers slowly: what does the page say in the meantime?
    page.route("**/live?*", lambda route: (page.wait_for_timeout(1500), route.continue_()))
    page.click("#render")
    live = page.inner_text("#live-text")
    assert live.startswith("laying out") and "done" not in live
    assert page.inner_text("#status").startswith("laying out")
    assert "laying out again" in page.inner_text("#stale")
    wait_rendered(page)


def test_a_fresh_page_says_it_is_laying_out_until_the_first_frame(context, live_server):
    page = context.new_page()
    page.add_init_script("localStorage.clear()")
    page.route("**/live?*", lambda route: (page.wait_for_timeout(1500), route.continue_()))
    page.goto(f"{live_server}/")
    page.wait_for_function("document.getElementById('status').textContent.startsWith('laying out')")
    assert page.inner_text("#live-text").startswith("laying out")
    assert "Laying out" in page.inner_text("#diagram .placeholder")
    wait_rendered(page)
    page.close()


@pytest.mark.parametrize("path, ready", [("/docs", ".swagger-ui .info .title"), ("/redoc", "h1")])
def test_the_api_docs_work_offline(browser, live_server, path, ready):
    own = browser.new_context(viewport={"width": 1280, "height": 800})  # the pages' own CSP applies
    page = own.new_page()
    outside: list[str] = []

    def only_here(route):
        if route.request.url.startswith(live_server):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    page.route("**/*", only_here)
    page.goto(f"{live_server}{path}")
    page.wait_for_selector(ready, timeout=30_000)
    assert "Penrose-style diagram service" in page.inner_text(ready)
    assert outside == []
    html = page.evaluate("document.documentElement.outerHTML")
    assert "cdn.jsdelivr" not in html and "fonts.googleapis" not in html
    own.close()


def test_a_drag_leaves_unrelated_shapes_where_they_were(page):
    open_example(page, VENN)

    def icons() -> dict[str, tuple[float, float, float]]:
        svg = shown_svg(page)
        return {
            e.findtext(f"{SVG_NS}title"): tuple(float(e.get(k)) for k in ("cx", "cy", "r"))
            for e in svg.iter(f"{SVG_NS}circle")
        }

    before = icons()
    # a point of C's own circle (not F's, G's or a label drawn over it), found as a hand would
    spot = page.evaluate(
        "(() => { const c = [...document.querySelectorAll('#diagram circle')].find(e =>"
        " e.querySelector(':scope > title').textContent === '`C`.icon'); const b = c.getBoundingClientRect();"
        " for (let i = 1; i < 20; i++) for (let j = 1; j < 20; j++) { const x = b.left + b.width * i / 20,"
        " y = b.top + b.height * j / 20; if (document.elementFromPoint(x, y) === c) return [x, y]; }"
        " return null; })()"
    )
    assert spot, "no visible point of C"
    drag(page, spot[0], spot[1], 6, 4, 8)  # 48 px right, 32 px down on screen
    after = icons()
    scale = page.evaluate(
        "(() => { const s = document.querySelector('#diagram svg');"
        " return s.getBoundingClientRect().width / s.viewBox.baseVal.width; })()"
    )
    moved = after["`C`.icon"][0] - before["`C`.icon"][0]
    assert moved == pytest.approx(48 / scale, abs=2 / scale)
    # B's side of the tree (B, D, E) shares no goal with C but their place in A and B's disjointness
    for name in ("`B`.icon", "`D`.icon", "`E`.icon"):
        assert max(abs(a - b) for a, b in zip(after[name], before[name])) <= 4.0, (
            name,
            before[name],
            after[name],
        )
    assert "0 violated" in page.inner_text("#live")
