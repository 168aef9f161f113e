"""The HTTP service: ``create_app(settings)`` builds the FastAPI application.

    POST /diagrams        a trio in; the SVG (default) or, with Accept: application/json, a report
    GET  /healthz         the process is alive
    GET  /readyz          layout workers are up
    GET  /metrics         Prometheus text
    GET  /examples[/{n}]  our example trios (for the playground)
    GET  /                the playground (static page)

Error answers are JSON (`ErrorResponse`): 422 for user mistakes with their place in the trio,
413 for oversize bodies, 504 when a layout exceeds its time limit, 503 when a worker crashed.
A 500 means a bug of ours, never a verdict on the input.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.exceptions import HTTPException as StarletteHTTPException

from .examples import examples
from .http_middleware import BodyLimit, RequestContext
from .metrics import Metrics
from .pool import LayoutPool, WorkerCrashed, WorkerStuck
from .result_cache import ResultCache, request_key
from .schemas import DiagramReport, DiagramRequest, ErrorResponse, Example, ExampleSummary
from .settings import Settings, settings_from_env

log = logging.getLogger("service.app")
STATIC_DIR = Path(__file__).resolve().parent / "static"
SVG = "image/svg+xml"

ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorResponse, "description": "The body is not readable (e.g. not UTF-8)"},
    413: {"model": ErrorResponse, "description": "The request body exceeds the size limit"},
    422: {"model": ErrorResponse, "description": "A mistake in the trio (with its place) or a failed layout"},
    503: {"model": ErrorResponse, "description": "The layout worker crashed; retry"},
    504: {"model": ErrorResponse, "description": "The layout exceeded its time limit"},
}


def wants_json(accept: str | None) -> bool:
    """True when the client prefers application/json over image/svg+xml (q-values respected)."""
    if not accept:
        return False
    quality: dict[str, float] = {}
    for part in accept.split(","):
        media, *params = (p.strip() for p in part.split(";"))
        q = 1.0
        for p in params:
            if p.startswith("q="):
                try:
                    q = float(p[2:])
                except ValueError:
                    q = 0.0
        quality[media.lower()] = q
    json_q = quality.get("application/json", 0.0)
    svg_q = max(quality.get(SVG, 0.0), quality.get("image/*", 0.0), quality.get("*/*", 0.0))
    return json_q > 0 and json_q >= svg_q


def error_response(request: Request, code: int, error: str, message: str, **extra: Any) -> JSONResponse:
    request_id = request.scope.get("state", {}).get("request_id", "-")
    body = ErrorResponse(error=error, message=message, requestId=request_id, **extra)
    return JSONResponse(body.model_dump(exclude_none=True), status_code=code)


def route_label(scope: dict[str, Any]) -> str:
    route = scope.get("route")
    return getattr(route, "path", None) or "unmatched"


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or settings_from_env()
    metrics = Metrics()
    cache = ResultCache(settings.result_cache_entries, settings.result_cache_bytes)
    pool = LayoutPool(settings.workers, settings.time_limit, settings.kill_grace)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        examples()  # read our examples before serving: requests never touch the file system
        await pool.start()
        log.info("layout pool ready: %d workers, time limit %.1f s", settings.workers, settings.time_limit)
        try:
            yield
        finally:
            await pool.close()

    app = FastAPI(
        title="Penrose-style diagram service",
        version="0.1.0",
        description="Render a Penrose trio (Domain, Substance, Style) to SVG.",
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.metrics = metrics
    app.state.pool = pool
    app.state.cache = cache

    # -- errors -------------------------------------------------------------------------------------

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        metrics.errors.labels("invalid-request").inc()
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e.get('loc', ()) if p != 'body') or 'body'}: {e.get('msg')}"
            for e in exc.errors()
        )
        return error_response(request, 422, "invalid-request", problems or "invalid request")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        kind = "not-found" if exc.status_code == 404 else "http"
        return error_response(request, exc.status_code, kind, str(exc.detail))

    @app.exception_handler(Exception)
    async def internal_error(request: Request, exc: Exception) -> JSONResponse:
        metrics.errors.labels("internal").inc()
        log.exception("request %s: internal error", request.scope.get("state", {}).get("request_id"))
        return error_response(request, 500, "internal", f"internal error: {type(exc).__name__}")

    # -- diagrams -----------------------------------------------------------------------------------

    @app.post(
        "/diagrams",
        responses={
            200: {
                "content": {SVG: {"schema": {"type": "string"}}, "application/json": {}},
                "model": DiagramReport,
                "description": "The SVG, or with Accept: application/json the report",
            },
            **ERROR_RESPONSES,
        },
    )
    async def render_diagram(body: DiagramRequest, request: Request) -> Response:
        request_id = request.scope.get("state", {}).get("request_id", "-")
        style = body.style_text()
        trio = (body.domain, body.substance, style, body.variation, body.excludeWarnings)
        key = request_key(*trio, body.starts, body.startSeconds)
        want_json = wants_json(request.headers.get("accept"))
        outcome = cache.get(key)
        if outcome is not None and want_json and outcome["ok"] and "goals" not in outcome["report"]:
            outcome = None  # laid out for an SVG answer, without the goal list: again, from warm caches
        cached = outcome is not None
        if cached:
            metrics.cache_hits.labels("result").inc()
        else:
            job = {
                "requestId": request_id,
                "domain": body.domain,
                "substance": body.substance,
                "style": style,
                "variation": body.variation,
                "excludeWarnings": body.excludeWarnings,
                "starts": body.starts,
                "startSeconds": body.startSeconds,
                "timeLimit": settings.time_limit,
                "unsafeSvg": settings.unsafe_svg,
                "goals": want_json,  # the goal list costs seconds for huge diagrams: only for JSON
            }
            try:
                outcome = await pool.run(job)
            except WorkerCrashed as e:
                metrics.errors.labels("worker-crash").inc()
                return error_response(
                    request, 503, "worker-crash", f"{e}; the server has restarted it, retry"
                )
            except WorkerStuck as e:
                metrics.errors.labels("timeout").inc()
                return error_response(request, 504, "timeout", str(e), status="timeout")
            if outcome["ok"]:
                metrics.layout_seconds.observe(outcome["report"]["timings"]["total"] / 1e3)
                if outcome["report"].get("cacheHit"):
                    metrics.cache_hits.labels("energy").inc()
                cache.put(key, outcome)
        if not outcome["ok"]:
            return failure_response(request, outcome)
        report = outcome["report"]
        if want_json:
            return JSONResponse({"svg": outcome["svg"], **report, "resultCached": cached})
        timing = ", ".join(f"{k};dur={v:.1f}" for k, v in report["timings"].items() if v is not None)
        return Response(outcome["svg"], media_type=SVG, headers={"server-timing": timing})

    def failure_response(request: Request, outcome: dict[str, Any]) -> JSONResponse:
        kind = outcome["kind"]
        metrics.errors.labels("timeout" if outcome.get("status") == "timeout" else kind).inc()
        if kind == "diagram":
            return error_response(
                request, 422, "diagram", outcome["message"], diagnostics=outcome["diagnostics"]
            )
        if kind == "render":
            return error_response(request, 422, "render", outcome["message"])
        if kind == "layout":
            status = outcome["status"]
            code = 504 if status == "timeout" else 422
            return error_response(
                request, code, "timeout" if code == 504 else "layout", outcome["message"], status=status
            )
        return error_response(request, 500, "internal", f"internal error: {outcome['message']}")

    # -- operations ---------------------------------------------------------------------------------

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz", responses={503: {"description": "No layout worker is up yet"}})
    async def readyz() -> JSONResponse:
        alive = sum(w.process.is_alive() for w in pool.workers)
        ready = pool.ready
        body = {"status": "ready" if ready else "starting", "workers": alive}
        return JSONResponse(body, status_code=200 if ready else 503)

    @app.get("/metrics", response_class=Response, responses={200: {"content": {CONTENT_TYPE_LATEST: {}}}})
    async def prometheus_metrics() -> Response:
        return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)

    # -- playground ---------------------------------------------------------------------------------

    @app.get("/examples")
    async def list_examples() -> list[ExampleSummary]:
        return [ExampleSummary(name=k, title=t.name or k) for k, t in examples().items()]

    @app.get("/examples/{name}", responses={404: {"model": ErrorResponse}})
    async def get_example(name: str) -> Example:
        trio = examples().get(name)
        if trio is None:
            raise StarletteHTTPException(404, f"no example named {name!r}")
        return Example(
            name=name,
            title=trio.name or name,
            domain=trio.domain,
            substance=trio.substance,
            style=trio.style,
            variation=trio.variation,
            excludeWarnings=list(trio.exclude_warnings),
        )

    @app.get("/", include_in_schema=False)
    async def playground() -> FileResponse:
        return FileResponse(STATIC_DIR / "index.html", media_type="text/html")

    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")

    def count_request(scope: dict[str, Any], status: int) -> None:
        metrics.requests.labels(scope.get("method", "-"), route_label(scope), str(status)).inc()

    def count_too_large() -> None:
        metrics.errors.labels("too-large").inc()

    app.add_middleware(BodyLimit, limit=settings.max_body_bytes, on_reject=count_too_large)
    app.add_middleware(RequestContext, on_done=count_request)
    return app
