"""A drag keeps the picture: the live session re-optimizes after each drag command with a continuity
term (service.workers.live_session.DRAG_LASSO), so shapes the drag does not act on stay where they
were. Driven as the editor drives it: a session over a pipe, one drag in 8 steps, each step sent
when a frame of the previous one arrives (so the steps preempt each other, as a hand's do)."""

from __future__ import annotations

import json
import threading
import xml.etree.ElementTree as ET
from multiprocessing import Pipe

import pytest

from service.examples import examples
from service.workers.live_session import run_session

NS = "{http://www.w3.org/2000/svg}"


def circles(svg: str) -> dict[str, tuple[float, float, float]]:
    return {
        e.findtext(f"{NS}title"): (float(e.get("cx")), float(e.get("cy")), float(e.get("r")))
        for e in ET.fromstring(svg).iter(f"{NS}circle")
        if e.findtext(f"{NS}title")
    }


def drag_in_steps(key: str, shape: str, dx: float, dy: float, steps: int) -> tuple[str, str, dict]:
    """The picture before the drag, the last frame after it settled, and the settled event."""
    trio = examples()[key]
    job = {
        "domain": trio.domain,
        "substance": trio.substance,
        "style": trio.style,
        "variation": trio.variation,
        "timeLimit": 60,
        "interactive": True,
        "goals": False,
    }
    parent, child = Pipe()
    worker = threading.Thread(target=run_session, args=(child, job, 60), daemon=True)
    worker.start()
    sent, last, before, after, settled = 0, "", "", "", {}

    def send() -> None:
        nonlocal sent
        sent += 1
        k = sent / steps
        command = {"action": "drag", "shape": shape, "dx": dx * k, "dy": dy * k, "begin": sent == 1}
        command["seq"] = sent
        parent.send_bytes(json.dumps(command).encode())

    while True:
        assert parent.poll(120), "the session went silent"
        message = json.loads(parent.recv_bytes())
        event, data = message["event"], message["data"]
        if event == "frame":
            last = data["svg"]
            if 0 < sent < steps:
                send()
        elif event == "done":
            before = data["svg"]
            send()
        elif event == "settled" and data["seq"] == steps:
            after, settled = last, data
            parent.send_bytes(json.dumps({"action": "end"}).encode())
        elif event in ("error", "warning"):
            raise AssertionError(data)
        elif event == "end":
            break
    worker.join(10)
    return before, after, settled


def test_dragging_a_set_leaves_the_unrelated_sets_where_they_were():
    # tree-venn: A holds B (holding D, E) and C (holding F, G); drag C right and down the canvas
    before, after, settled = drag_in_steps("set-theory-domain/tree-venn", "`C`.icon", 60.0, -40.0, 8)
    b, a = circles(before), circles(after)
    # the dragged set's center went where the pointer took it (y up in drag offsets, down in SVG)
    assert a["`C`.icon"][0] - b["`C`.icon"][0] == pytest.approx(60.0, abs=1e-6)
    assert a["`C`.icon"][1] - b["`C`.icon"][1] == pytest.approx(40.0, abs=1e-6)
    assert settled["nViolated"] == 0
    # B's subtree shares no goal with C but B's `disjoint` from C and its place in A: within a few px
    for name in ("`D`.icon", "`E`.icon", "`B`.icon"):
        moved = max(abs(a[name][k] - b[name][k]) for k in range(3))
        assert moved <= 4.0, (name, b[name], a[name])


def test_where_a_drag_settles_depends_on_the_pointer_not_on_how_many_steps_took_it_there():
    # steps preempt each other at points set by timing; every step starts from where the drag began
    _, in_one, _ = drag_in_steps("set-theory-domain/tree-venn", "`C`.icon", 60.0, -40.0, 1)
    _, in_eight, _ = drag_in_steps("set-theory-domain/tree-venn", "`C`.icon", 60.0, -40.0, 8)
    one, eight = circles(in_one), circles(in_eight)
    assert one.keys() == eight.keys()
    for name in one:
        assert eight[name] == pytest.approx(one[name], abs=1e-6), name
