"""Fixtures of the service tests: an in-process app (TestClient) and a live uvicorn server."""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import pytest

from service.app import create_app
from service.settings import Settings

from .service_support import free_port, running_server, serve_command

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # starlette's notice about its httpx-based test client
    from fastapi.testclient import TestClient


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    app = create_app(Settings(workers=2, time_limit=20.0, max_body_bytes=200_000))
    with TestClient(app) as c:
        yield c


@pytest.fixture(scope="session")
def live_server() -> Iterator[str]:
    port = free_port()
    with running_server(serve_command(port, workers=2), {"PENROSE_TIME_LIMIT": "10"}, port) as url:
        yield url
