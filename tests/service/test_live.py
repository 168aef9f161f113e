"""POST /live as a program uses it: server-sent events from a real server (the session's live worker
is a separate process), commands by POST /live/{id}; and the draggingConstraint language."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from service.drag_constraint import DragConstraintError, parse_drag_constraint

from .service_support import example_body


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


@pytest.mark.parametrize(
    ("text", "point", "expected"),
    [
        ("[x, 0]", (5.0, 7.0), (5.0, 0.0)),
        ("return [clamp(x, -10, 10), max(y, 0)];", (50.0, -3.0), (10.0, 0.0)),
        ("[x * 2 - 1, -y ** 2]", (1.5, 3.0), (2.0, -9.0)),
        ("(hypot(x, y), atan2(y, x))", (3.0, 0.0), (3.0, 0.0)),
    ],
)
def test_drag_constraints_evaluate(text, point, expected):
    assert parse_drag_constraint(text, "`A`.icon")(*point) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("__import__('os').system('true')", "column 1: only min"),
        ("[x.real, y]", "column 2: Attribute is not allowed"),
        ("[x, z]", "column 5: unknown name 'z'"),
        ("[x, y, 1]", "must give a position [x, y]"),
        ("[x, ", "column"),
        ("[x, 'a']", "only numbers"),
        ("[" + "x + " * 300 + "x, y]", "longer than"),
    ],
)
def test_hostile_drag_constraints_are_refused_with_their_place(text, message):
    with pytest.raises(DragConstraintError) as caught:
        parse_drag_constraint(text, "`A`.icon")
    assert "`A`.icon" in str(caught.value) and message in str(caught.value)


def test_a_constraint_that_fails_at_a_point_says_where():
    constrain = parse_drag_constraint("[x / y, 10 ** x]", "`A`.icon")
    with pytest.raises(DragConstraintError, match="at x=1, y=0"):
        constrain(1.0, 0.0)
    with pytest.raises(DragConstraintError, match="not a finite position|overflow|range"):
        constrain(400.0, 1.0)


def test_a_drag_follows_the_styles_dragging_constraint(live_server):
    body = example_body("sets")
    body["style"] = body["style"].replace(
        "s.circle = Circle {", 's.circle = Circle {\n    draggingConstraint: "[x, 0]"'
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
    height = float(root.get("viewBox").split()[3])
    rocks = next(
        e for e in root.iter() if e.findtext("{http://www.w3.org/2000/svg}title") == "`Rocks`.circle"
    )
    assert float(rocks.get("cy")) == pytest.approx(height / 2)  # y = 0 in Penrose's coordinates


def test_sessions_beyond_the_limit_are_refused(live_server):
    # the live server allows 2 sessions: two idle after their layout, a third is refused with 429
    streams = []
    try:
        for _ in range(2):
            client = httpx.Client(timeout=60)
            response = client.send(
                client.build_request(
                    "POST", f"{live_server}/live?interactive=true", json=example_body("sets")
                ),
                stream=True,
            )
            iterator = events(response)
            while next(iterator)[0] != "done":
                pass
            streams.append((client, response, iterator))  # an iterator dropped closes its stream
        refused = httpx.post(f"{live_server}/live", json=example_body("sets"), timeout=30)
        assert refused.status_code == 429
        assert "live sessions are in use" in refused.json()["message"]
    finally:
        for client, response, _ in streams:
            response.close()
            client.close()
