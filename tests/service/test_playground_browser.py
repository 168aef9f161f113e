"""The playground in a real headless Chromium (Debian's /usr/bin/chromium driven by Playwright).

Skipped when /usr/bin/chromium or the playwright package is missing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


@pytest.fixture(scope="module")
def page(live_server):
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.set_default_timeout(30_000)
        page.goto(f"{live_server}/")
        yield page
        browser.close()


def test_render_an_example_then_see_a_syntax_error_located(page):
    # the examples come from the server; choosing one fills the three editors
    page.wait_for_selector("#example option[value='graph']", state="attached")
    page.select_option("#example", "graph")
    page.wait_for_function("document.getElementById('substance').value.includes('Edge(a, b)')")

    page.click("#render")
    image = page.wait_for_selector("#diagram img")
    page.wait_for_function("document.querySelector('#diagram img').naturalWidth > 0")
    assert image.get_attribute("src").startswith("blob:")
    assert page.is_visible("#timings")
    assert "total (ms)" in page.inner_text("#timings")
    assert page.is_hidden("#errors")
    # the picture is the SVG the API renders: it has the graph's five vertex circles
    svg_text = page.evaluate("fetch(document.querySelector('#diagram img').src).then(r => r.text())")
    assert svg_text.count("<circle") == 5

    # break line 3 of the substance; render with Ctrl+Enter
    lines = page.input_value("#substance").split("\n")
    lines[2] = "Edge(a, "
    page.fill("#substance", "\n".join(lines))
    page.focus("#style")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("#errors:not([hidden])")
    message = page.inner_text("#errors")
    assert "substance:3:" in message or "substance:4:" in message
    bad = page.inner_text(".editor[data-source='substance'] .gutter .bad")
    assert bad in ("3", "4")
    # clicking the message puts the cursor on the offending line
    page.click("#errors a.diagnostic")
    caret_line = page.evaluate(
        "(() => { const a = document.getElementById('substance');"
        " return a.value.slice(0, a.selectionStart).split('\\n').length; })()"
    )
    assert str(caret_line) == bad
    assert "error 422" in page.inner_text("#status")
