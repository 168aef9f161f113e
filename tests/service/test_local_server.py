"""service.local_server: a real `python -m service serve` that answers, then is gone."""

from __future__ import annotations

import httpx

from service.local_server import local_server


def test_the_local_server_answers_then_stops() -> None:
    with local_server(1, {"PENROSE_TIME_LIMIT": "7"}) as (url, process):
        assert httpx.get(f"{url}/healthz", timeout=10).json() == {"status": "ok"}
        assert process.poll() is None
    assert process.poll() is not None  # terminated on leaving, not left behind
