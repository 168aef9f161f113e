"""Fixtures of the service tests: an in-process app (TestClient), a live uvicorn server, and a headless
Chromium (Debian's, driven by Playwright, as `python -m registry.editor_check` runs it)."""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import pytest

from registry.editor_check import CHROMIUM, CHROMIUM_ARGS
from service.http.app import create_app
from service.settings import Settings

from .service_support import free_port, running_server, serve_command

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # starlette's notice about its httpx-based test client
    from fastapi.testclient import TestClient


@pytest.fixture(scope="session")
def client() -> Iterator[TestClient]:
    """One app for the session (its start and stop, with two workers, cost seconds). Its result
    cache and metrics outlive a module: a test that needs a layout to run gives its body a
    variation of its own, and a test of a metric compares it with its value before."""
    app = create_app(Settings(workers=2, time_limit=20.0, max_body_bytes=200_000))
    with TestClient(app) as c:
        yield c


@pytest.fixture(scope="session")
def live_server() -> Iterator[str]:
    port = free_port()
    with running_server(serve_command(port, workers=2), {"PENROSE_TIME_LIMIT": "10"}, port) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """Skips the test without the playwright package (a module's `needs_chromium` mark skips it
    without the browser)."""
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def context(browser, live_server):
    """A 1280x800 browser context on the live server (downloads and the clipboard allowed)."""
    # the page's CSP forbids eval, which Playwright's wait_for_function uses: the tests bypass it
    context = browser.new_context(
        viewport={"width": 1280, "height": 800}, accept_downloads=True, bypass_csp=True
    )
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server)
    yield context
    context.close()


@pytest.fixture
def page(context, live_server):
    """The playground, opened; the test fails if the page raised an error meanwhile."""
    page = context.new_page()
    page.set_default_timeout(60_000)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{live_server}/")
    yield page
    page.close()
    assert not errors, errors
