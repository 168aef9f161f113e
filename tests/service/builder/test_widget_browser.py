"""The notebook widget's frontend in Debian's Chromium, dragged with the mouse, talking to the real
kernel-side widget.

The page loads service/widget/static/widget.js as JupyterLab's anywidget would: `render({model, el})`
with a model whose `get`/`on`/`off`/`send` are wired to a real `DiagramWidget` in this process
(`model.send` goes to the widget's message handler; its trait changes and messages come back as
the handler's answer). What is asserted is what the page shows (the SVG's circle positions) and
what Python reads back. Skipped without /usr/bin/chromium or playwright.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest

from ..service_support import needs_chromium

pytest.importorskip("anywidget")

from service import DiagramBuilder, constraints, objectives  # noqa: E402
from service.widget import DiagramWidget  # noqa: E402

pytestmark = needs_chromium
STATIC = Path(__file__).resolve().parents[3] / "service" / "widget" / "static"
SCREENSHOTS = os.environ.get("PENROSE_SCREENSHOTS")

HARNESS = """<!doctype html><html><head><meta charset="utf-8"><link rel="stylesheet" href="widget.css"></head>
<body><div id="out"></div><script type="module">
import widget from "./widget.js";
const state = JSON.parse(document.getElementById("state").textContent);
const listeners = {};
window.harness = { sent: 0, answered: 0 };
const model = {
  get: (k) => state[k],
  on: (ev, cb) => (listeners[ev] = listeners[ev] || []).push(cb),
  off: (ev, cb) => (listeners[ev] = (listeners[ev] || []).filter((f) => f !== cb)),
  send: async (msg) => {
    window.harness.sent++;
    const answer = JSON.parse(await window.kernelSend(JSON.stringify(msg)));
    for (const [k, v] of Object.entries(answer.state)) {
      state[k] = v;
      (listeners["change:" + k] || []).forEach((f) => f());
    }
    for (const m of answer.messages) (listeners["msg:custom"] || []).forEach((f) => f(m));
    window.harness.answered++;
  },
};
widget.render({ model, el: document.getElementById("out") });
window.harness.ready = true;
</script><script type="application/json" id="state">STATE</script></body></html>"""


def two_circles() -> tuple[DiagramBuilder, DiagramWidget]:
    db = DiagramBuilder(400, 300, variation="widget")
    a = db.circle(name="a", r=30, fill_color="#3050c0")
    b = db.circle(name="b", r=20, fill_color="#c03050")
    db.ensure(constraints.disjoint(a, b, 10))
    db.encourage(objectives.near(a, b))
    return db, DiagramWidget(db)


@pytest.fixture
def served(browser):
    db, w = two_circles()
    state = {k: getattr(w, k) for k in ("svg", "draggable", "status")}
    files = {
        "index.html": HARNESS.replace("STATE", json.dumps(state)).encode(),
        "widget.js": (STATIC / "widget.js").read_bytes(),
        "widget.css": (STATIC / "widget.css").read_bytes(),
    }
    types = {"html": "text/html", "js": "text/javascript", "css": "text/css"}
    page = browser.new_page(viewport={"width": 800, "height": 600})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))

    def kernel_send(text: str) -> str:
        messages: list[object] = []
        w.send = lambda content, buffers=None: messages.append(content)  # type: ignore[method-assign]
        w._on_message(w, json.loads(text), [])
        answer = {"state": {k: getattr(w, k) for k in ("svg", "draggable", "status")}, "messages": messages}
        return json.dumps(answer)

    page.expose_function("kernelSend", kernel_send)
    page.route(
        "http://widget.test/**",
        lambda route: route.fulfill(
            body=files[route.request.url.rsplit("/", 1)[1]],
            content_type=types[route.request.url.rsplit(".", 1)[1]],
        ),
    )
    page.goto("http://widget.test/index.html")
    page.wait_for_function("window.harness && window.harness.ready")
    yield page, db, w
    page.close()
    assert not errors, errors


def circle_centers(page) -> dict[str, tuple[float, float, float]]:
    """name -> (cx, cy, r) of the circles the page shows, in the SVG's units."""
    return page.evaluate(
        """() => Object.fromEntries([...document.querySelectorAll('circle')].map(c => [
            c.querySelector('title').textContent,
            [+c.getAttribute('cx'), +c.getAttribute('cy'), +c.getAttribute('r')]]))"""
    )


def test_dragging_a_circle_moves_it_and_reoptimizes_the_other(served) -> None:
    page, db, w = served
    before = circle_centers(page)
    assert page.evaluate("document.querySelector('circle').closest('.penrose-draggable') !== null")
    box = page.locator("circle:has(title:text-is('a'))").bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    for k in range(1, 7):  # 6 moves of (10, 5) screen px: the SVG is drawn at 1 px per unit
        page.mouse.move(x + 10 * k, y + 5 * k)
    page.mouse.up()
    page.wait_for_function("window.harness.sent > 0 && window.harness.sent === window.harness.answered")
    page.wait_for_timeout(200)  # the last move is sent once the one before it settled
    page.wait_for_function("window.harness.sent === window.harness.answered")
    if SCREENSHOTS:
        Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SCREENSHOTS) / "widget-drag.png"))
    after = circle_centers(page)
    (ax0, ay0, _), (ax, ay, ar), (bx, by, br) = before["a"], after["a"], after["b"]
    assert (ax - ax0, ay - ay0) == pytest.approx((60, 30), abs=0.5)  # where the pointer put it
    assert math.hypot(ax - bx, ay - by) - ar - br == pytest.approx(10, abs=0.05)  # b followed, 10 px off
    assert after["b"][:2] != before["b"][:2]
    # the kernel's layout is the page's (canvas units: origin mid-canvas, y up)
    assert w.layout["a"]["center"] == pytest.approx([ax - 200, 150 - ay], abs=1e-6)
    assert w.value(db.shapes[1].center) == pytest.approx([bx - 200, 150 - by], abs=1e-6)
