"""The HTTP service: ``create_app(settings)`` builds the FastAPI application.

    POST /diagrams        a trio in; the SVG (default), PNG or PDF by Accept, or with
                          Accept: application/json a report
    GET  /diagrams/{svg|png|pdf}/{encoded}   the trio in the URL (service.http.diagram_url), for embedding
    GET  /healthz         the process is alive
    GET  /readyz          layout workers are up
    GET  /metrics         Prometheus text
    GET  /examples[/{n}]  our example trios (for the playground)
    GET  /                the playground (static page)
    GET  /docs, /redoc    the API's documentation, every asset served from here (works offline)
    POST /live, /live/{id}  live layouts: frames as server-sent events, pause/step/drag (service.http.live)

Error answers are JSON (`ErrorResponse`): 422 for user mistakes with their place in the trio,
413 for oversize bodies, 504 when a layout exceeds its time limit, 507 when it needs more memory
than a worker may use, 503 (always with Retry-After) when the server is overloaded (queue full,
wait too long, too many bodies held) or a worker crashed.  A request whose client went away while
it waited is dropped before its layout starts.  A 500 means a bug of ours, never a verdict on the
input.  A URL whose trio cannot be decoded is 400, one over MAX_ENCODED_CHARS 414.
A picture carries a strong ETag (a hash of its bytes; If-None-Match answers 304) and
Cache-Control: a GET URL names its picture for good (the layout is deterministic), so it may be
cached for a year; errors are never stored.

One router per concern (diagrams, live, operations, playground; the error answers in
service.http.errors); `create_app` makes the state they share (settings, metrics, the layout pool,
the live sessions, the result cache) and assembles them with the middleware.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from fastapi_offline import FastAPIOffline

from service.examples import examples
from service.settings import Settings, settings_from_env
from service.workers.live_pool import LiveSessions
from service.workers.pool import LayoutPool, worker_config

from .diagrams import diagrams_router
from .errors import install_error_handlers
from .live import live_router
from .metrics import Metrics
from .middleware import BodyBudget, BodyLimit, RequestContext
from .operations import operations_router
from .playground import STATIC_DIR, playground_router
from .result_cache import ResultCache

log = logging.getLogger("service.app")


def route_label(scope: dict[str, Any]) -> str:
    route = scope.get("route")
    return getattr(route, "path", None) or "unmatched"


def redoc_page(title: str) -> Callable[[], Awaitable[HTMLResponse]]:
    """ReDoc from the package's copy; its page forbids images from elsewhere, so the bundle's link
    to its maker's logo (an <img> on a CDN, hidden when it fails) never leaves the machine."""

    async def redoc() -> HTMLResponse:
        page = get_redoc_html(
            openapi_url="/openapi.json",
            title=f"{title} - ReDoc",
            redoc_js_url="/static-offline-docs/redoc.standalone.js",
            redoc_favicon_url="/static-offline-docs/favicon.png",
            with_google_fonts=False,
        )
        page.headers["content-security-policy"] = "img-src 'self' data:"
        return page

    return redoc


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or settings_from_env()
    metrics = Metrics()
    cache = ResultCache(settings.result_cache_entries, settings.result_cache_bytes)
    pool = LayoutPool(
        settings.workers,
        settings.time_limit,
        settings.kill_grace,
        queue_limit=settings.queue_limit,
        queue_seconds=settings.queue_seconds,
        config=worker_config(settings),
        recycle_mb=settings.worker_recycle_mb,
        on_restart=lambda reason: metrics.worker_restarts.labels(reason).inc(),
    )
    metrics.queue_depth.set_function(lambda: pool.waiting)
    metrics.busy_workers.set_function(lambda: len(pool.busy_pids()))
    bodies = BodyBudget(settings.max_total_body_bytes)
    metrics.body_bytes.set_function(lambda: bodies.held)
    live = LiveSessions(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        examples()  # read our examples before serving: requests never touch the file system
        await pool.start()
        log.info("layout pool ready: %d workers, time limit %.1f s", settings.workers, settings.time_limit)
        try:
            yield
        finally:
            live.stop()
            await pool.close()

    # /docs (Swagger UI) and /redoc load their scripts from the package (fastapi-offline), not a CDN:
    # they work on a machine without the internet (redoc_page: ReDoc's own logo stays home too)
    app = FastAPIOffline(
        redoc_url=None,
        title="Penrose-style diagram service",
        version="0.1.0",
        description="Render a Penrose trio (Domain, Substance, Style) to SVG.",
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.metrics = metrics
    app.state.pool = pool
    app.state.cache = cache
    app.include_router(live_router(settings, live))
    install_error_handlers(app, metrics)
    app.include_router(diagrams_router(settings, metrics, pool, cache))
    app.include_router(operations_router(pool, metrics))
    app.include_router(playground_router(live))
    app.add_api_route("/redoc", redoc_page(app.title), include_in_schema=False)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")

    def count_request(scope: MutableMapping[str, Any], status: int) -> None:
        metrics.requests.labels(scope.get("method", "-"), route_label(dict(scope)), str(status)).inc()

    def count_body_reject(reason: str) -> None:
        if reason == "too-large":
            metrics.errors.labels("too-large").inc()
        else:
            metrics.rejections.labels(reason).inc()

    app.add_middleware(
        BodyLimit,
        limit=settings.max_body_bytes,
        budget=bodies,
        on_reject=count_body_reject,
    )
    app.add_middleware(RequestContext, on_done=count_request)
    return app
