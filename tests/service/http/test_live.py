"""POST /live as a program uses it: server-sent events from a real server (the session's live worker
is a separate process), commands by POST /live/{id}; and the draggingConstraint language."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from service.workers import live_pool
from service.workers.drag_constraint import DragConstraintError, parse_drag_constraint
from tests.service.service_support import example_body, heavy_body


def events(response: httpx.Response) -> Iterator[tuple[str, dict[str, Any]]]:
    buffer = ""
    for text in response.iter_text():
        buffer += text
        while "\n\n" in buffer:
            block, buffer = buffer.split("\n\n", 1)
            head, data = block.split("\n", 1)
            assert head.startswith("event: ") and data.startswith("data: ")
            yield head[len("event: ") :], json.loads(data[len("data: ") :])


def command(url: str, session: str, **body: Any) -> int:
    return httpx.post(f"{url}/live/{session}", json=body, timeout=10).status_code


def test_frames_then_done_then_a_drag_then_end(live_server):
    seen: list[str] = []
    session = ""
    with httpx.stream(
        "POST", f"{live_server}/live?interactive=true", json=example_body("sets"), timeout=60
    ) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        for event, data in events(r):
            seen.append(event)
            if event == "session":
                session = data["id"]
            elif event == "frame":
                assert data["svg"].startswith("<svg")
                assert {"stage", "round", "energy", "maxViolation"} <= set(data)
            elif event == "done":
                assert data["status"] == "EPConverged" and data["nViolated"] == 0
                assert "`Rocks`.circle" in data["draggable"]
                done_svg = data["svg"]
                threading.Thread(
                    target=command,
                    args=(live_server, session),
                    kwargs={"action": "drag", "shape": "`Rocks`.circle", "dx": -40, "dy": 30, "begin": True},
                ).start()
            elif event == "settled":
                assert data["nViolated"] == 0
                assert command(live_server, session, action="end") == 204
            elif event == "end":
                assert data["reason"] == "end"
    assert seen[0] == "session" and seen[1] == "frame" and "done" in seen
    assert seen.index("settled") > seen.index("done") and seen[-1] == "end"
    # the final picture is the one POST /diagrams gives for the same trio
    plain = httpx.post(f"{live_server}/diagrams", json=example_body("sets"), timeout=60)
    assert plain.text == done_svg
    # the session is gone
    assert command(live_server, session, action="pause") == 404


def test_a_mistake_is_an_error_event_with_its_place(live_server):
    body = example_body("graph", substance="Vertex a\nEdge(a, \n")
    with httpx.stream("POST", f"{live_server}/live", json=body, timeout=60) as r:
        found = {event: data for event, data in events(r)}
    assert found["error"]["kind"] == "diagram"
    assert found["error"]["diagnostics"][0]["source"] == "substance"
    assert found["end"]["reason"] == "done"


def test_without_interactive_the_stream_ends_after_the_layout(live_server):
    with httpx.stream("POST", f"{live_server}/live", json=example_body("vectors"), timeout=60) as r:
        seen = [event for event, _ in events(r)]
    assert seen[0] == "session" and seen[-2:] == ["done", "end"] and "frame" in seen


def test_commands_are_validated(live_server):
    assert command(live_server, "nope", action="pause") == 404
    assert command(live_server, "nope", action="explode") == 422
    assert httpx.post(f"{live_server}/live", json={"domain": 1}, timeout=10).status_code == 422


# Penrose's own forms (docs-site ref/Interactivity.md, examples interactive/planets.style) and more
PENROSE_FORMS = [
    ("return [x, y]", (5.0, 7.0), (5.0, 7.0)),
    ("return [Math.max(0, x), Math.max(0, y)]", (-5.0, 7.0), (0.0, 7.0)),
    (
        "const a = Math.atan2(y, x); return [107 * Math.cos(a), 107 * Math.sin(a)];",
        (30.0, 40.0),
        (107 * 0.6, 107 * 0.8),
    ),
    ("return x > 0 ? [x, 0] : [0, y]; // the positive x axis or the y axis", (-2.0, 3.0), (0.0, 3.0)),
    (
        "let r = Math.hypot(x, y);\nif (r > 10) { r = 10; }\n"
        "return [x / Math.hypot(x, y) * r, y / Math.hypot(x, y) * r];",
        (30.0, 40.0),
        (6.0, 8.0),
    ),
    ("return [2 ** -1 * x, (-y) ** 2 % 7]", (4.0, 3.0), (2.0, 2.0)),
    ("return [Math.round(-2.5), Math.sign(-y) * Math.PI]", (0.0, 3.0), (-2.0, -math.pi)),
    ("const b = x < 0 && y < 0, c = !b || x === y; return [b ? 1 : 0, c ? 1 : 0]", (-1.0, -2.0), (1.0, 0.0)),
]


@pytest.mark.parametrize(("text", "point", "expected"), PENROSE_FORMS)
def test_drag_constraints_evaluate(text, point, expected):
    assert parse_drag_constraint(text, "`A`.icon")(*point) == pytest.approx(expected, abs=1e-12)


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node, as JavaScript's own oracle")
def test_drag_constraints_agree_with_javascript():
    # Penrose's editor runs new Function("[x, y]", text)([x, y]); node runs it the same way
    cases = [(text, point) for text, point, _ in PENROSE_FORMS] + [
        ("return [x % -3, Math.floor(-x / 4) + Math.cbrt(-y)]", (7.5, 8.0)),
        (
            "var s = 0; if (x > y) s = 1; else if (x < y) { s = -1 } return [s, Math.exp(y) - Math.log(x)]",
            (2.0, 3.0),
        ),
        ("return [Math.trunc(-x), Math.min() > Math.max() ? 1 : 2]", (3.7, 0.0)),
    ]
    script = (
        "const cases = JSON.parse(process.argv[1]);"
        "console.log(JSON.stringify(cases.map(([t, p]) => new Function('[x, y]', t)(p))));"
    )
    out = subprocess.run(["node", "-e", script, json.dumps(cases)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    for (text, point), js in zip(cases, json.loads(out.stdout), strict=True):
        ours = parse_drag_constraint(text, "s")(*point)
        assert ours == pytest.approx(tuple(js), rel=1e-14, abs=1e-14), text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[x, 0]", "column 1: expected a statement"),  # an expression is not a function body
        ("alert(1); return [x, y]", "column 1: expected a statement"),
        ("return [x.constructor, y]", "column 10: expected ','"),
        ("return [x, z]", "column 12: unknown name 'z'"),
        ("return [Math.random(), y]", "column 14: Math.random is not available"),
        ("while (true) {}", "column 1: expected a statement"),
        ("return [`${x}`, y]", "column 9: unexpected character '`'"),
        ("return [-x ** 2, y]", "column 12: put the unary expression"),
        ("const a = 1; a = 2; return [a, y]", "column 14: 'a' cannot be assigned"),
        ("return [x, ", "column 12: unexpected end"),
        ("return [" + "x + " * 300 + "x, y]", "longer than"),
        ("return [" + "(" * 100 + "x" + ")" * 100 + ", y]", "nested more than"),
    ],
)
def test_hostile_drag_constraints_are_refused_with_their_place(text, message):
    with pytest.raises(DragConstraintError) as caught:
        parse_drag_constraint(text, "`A`.icon")
    assert "`A`.icon" in str(caught.value) and message in str(caught.value)


def test_a_constraint_that_fails_at_a_point_says_where():
    constrain = parse_drag_constraint("return [x / y, 10 ** x]", "`A`.icon")
    assert constrain(1.0, 2.0) == (0.5, 10.0)
    with pytest.raises(DragConstraintError, match="at x=1, y=0 is not a finite position"):
        constrain(1.0, 0.0)
    with pytest.raises(DragConstraintError, match="at x=400, y=1 is not a finite position"):
        constrain(400.0, 1.0)
    for text, message in [("return [x]", "must return a position"), ("const a = x;", "returns nothing")]:
        with pytest.raises(DragConstraintError, match=message):
            parse_drag_constraint(text, "s")(1.0, 2.0)


@pytest.mark.parametrize(
    ("constraint", "on_it"),
    [
        ("return [x, 0];", lambda x, y: y),  # slide along the x axis
        # Penrose's planets: an orbit of radius 107 around the canvas's center
        (
            "const a = Math.atan2(y, x); return [107 * Math.cos(a), 107 * Math.sin(a)];",
            lambda x, y: math.hypot(x, y) - 107,
        ),
    ],
)
def test_a_drag_follows_the_styles_dragging_constraint(live_server, constraint, on_it):
    body = example_body("sets")
    body["style"] = body["style"].replace(
        "s.circle = Circle {", f's.circle = Circle {{\n    draggingConstraint: "{constraint}"'
    )
    import xml.etree.ElementTree as ET

    last_frame = ""
    with httpx.stream("POST", f"{live_server}/live?interactive=true", json=body, timeout=60) as r:
        for event, data in events(r):
            if event == "session":
                session = data["id"]
            elif event == "done":
                drag = {"action": "drag", "shape": "`Rocks`.circle", "dx": -30, "dy": 70, "begin": True}
                threading.Thread(target=command, args=(live_server, session), kwargs=drag).start()
            elif event == "frame":
                last_frame = data["svg"]
            elif event == "settled":
                command(live_server, session, action="end")
    root = ET.fromstring(last_frame)
    _, _, width, height = (float(v) for v in root.get("viewBox").split())
    rocks = next(
        e for e in root.iter() if e.findtext("{http://www.w3.org/2000/svg}title") == "`Rocks`.circle"
    )
    # Penrose's coordinates: origin at the canvas's center, y up
    x, y = float(rocks.get("cx")) - width / 2, height / 2 - float(rocks.get("cy"))
    assert on_it(x, y) == pytest.approx(0, abs=1e-6)


def open_stream(url: str, body: dict[str, Any]) -> tuple[httpx.Client, httpx.Response, Iterator]:
    client = httpx.Client(timeout=60)
    response = client.send(
        client.build_request("POST", f"{url}/live?interactive=true", json=body), stream=True
    )
    return client, response, events(response)


def test_a_session_beyond_the_limit_takes_the_longest_resting_ones_worker(live_server):
    # the live server allows 2 sessions: both rest after their layouts (waiting for drags); a third
    # is served at once on the worker of the one that rested longest, whose stream ends "reclaimed"
    streams = []
    try:
        for _ in range(2):
            client, response, iterator = open_stream(live_server, example_body("sets"))
            while next(iterator)[0] != "done":
                pass
            streams.append((client, response, iterator))
        with httpx.stream("POST", f"{live_server}/live", json=example_body("vectors"), timeout=60) as r:
            assert r.status_code == 200
            assert [e for e, _ in events(r)][-2:] == ["done", "end"]
        oldest = streams[0][2]
        assert [(e, d.get("reason")) for e, d in oldest] == [("end", "reclaimed")]
    finally:
        for client, response, _ in streams:
            response.close()
            client.close()


def test_sessions_beyond_the_limit_are_refused_at_once_while_all_are_laying_out(live_server):
    # two paused layouts are not resting: a third session is refused (429) without waiting for them
    streams = []
    try:
        for k in range(2):
            client, response, iterator = open_stream(live_server, heavy_body(variation=f"busy{k}"))
            event, data = next(iterator)
            assert event == "session"
            assert command(live_server, data["id"], action="pause") == 204
            streams.append((client, response, iterator))
        t0 = time.monotonic()
        refused = httpx.post(f"{live_server}/live", json=example_body("sets"), timeout=30)
        assert refused.status_code == 429
        assert "live sessions are in use" in refused.json()["message"]
        assert time.monotonic() - t0 < live_pool.BUSY_WAIT  # not after waiting for a session to end
    finally:
        for client, response, _ in streams:
            response.close()
            client.close()
