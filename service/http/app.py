"""The HTTP service: ``create_app(settings)`` builds the FastAPI application.

    POST /diagrams        a trio in; the SVG (default), PNG or PDF by Accept, or with
                          Accept: application/json a report
    GET  /diagrams/{svg|png|pdf}/{encoded}   the trio in the URL (service.http.diagram_url), for embedding
    GET  /healthz         the process is alive
    GET  /readyz          layout workers are up
    GET  /metrics         Prometheus text
    GET  /examples[/{n}]  our example trios (for the playground)
    GET  /                the playground (static page)
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
"""

from __future__ import annotations

import base64
import hashlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from adcore import LRU
from service.examples import examples
from service.render.formats import MEDIA_TYPES
from service.settings import Settings, settings_from_env
from service.trios import Files, place, relocate, style_list_files
from service.workers.pool import ClientGone, LayoutPool, Overloaded, WorkerCrashed, WorkerStuck, worker_config

from .diagram_url import MAX_ENCODED_CHARS, UrlError, decode_trio
from .live import live_router
from .metrics import Metrics
from .middleware import BodyBudget, BodyLimit, RequestContext
from .result_cache import ResultCache, request_key
from .schemas import DiagramReport, DiagramRequest, ErrorResponse, Example, ExampleSummary

log = logging.getLogger("service.app")
# A diagram opened from its URL is a document of this origin: whatever the Style passed through
# (and `--unsafe` passes everything), it runs no script and loads nothing but its own data: images.
PICTURE_HEADERS = {
    "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; img-src data:",
    "x-content-type-options": "nosniff",
}
STATIC_DIR = Path(__file__).resolve().parents[1] / "static"
SVG = "image/svg+xml"

ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorResponse, "description": "The body is not readable (e.g. not UTF-8)"},
    413: {"model": ErrorResponse, "description": "The request body exceeds the size limit"},
    422: {"model": ErrorResponse, "description": "A mistake in the trio (with its place) or a failed layout"},
    503: {
        "model": ErrorResponse,
        "description": "Overloaded, or the layout worker crashed; retry after Retry-After seconds",
    },
    504: {"model": ErrorResponse, "description": "The layout exceeded its time limit"},
    507: {"model": ErrorResponse, "description": "The layout needed more memory than a worker may use"},
}


IMMUTABLE = "public, max-age=31536000, immutable"  # a GET URL's picture never changes
REVALIDATE = "no-cache"  # a POST answer: store, but ask again (its ETag makes that a 304)
ANSWERS = {"application/json": "json", "image/png": "png", "application/pdf": "pdf", SVG: "svg"}


def negotiate(accept: str | None) -> str:
    """The answer a client prefers: json, png, pdf or svg (q-values respected; the SVG answers
    wildcards and ties with wildcards, and is the default)."""
    quality: dict[str, float] = {}
    for part in (accept or "").split(","):
        media, *params = (p.strip() for p in part.split(";"))
        q = 1.0
        for p in params:
            if p.startswith("q="):
                try:
                    q = float(p[2:])
                except ValueError:
                    q = 0.0
        quality[media.lower()] = q
    quality[SVG] = max(quality.get(SVG, 0.0), quality.get("image/*", 0.0), quality.get("*/*", 0.0))
    best = max(ANSWERS, key=lambda m: quality.get(m, 0.0))  # dicts keep order: json wins ties
    return ANSWERS[best] if quality.get(best, 0.0) > 0 else "svg"


def error_response(
    request: Request,
    code: int,
    error: str,
    message: str,
    headers: dict[str, str] | None = None,
    **extra: Any,
) -> JSONResponse:
    request_id = request.scope.get("state", {}).get("request_id", "-")
    body = ErrorResponse(error=error, message=message, requestId=request_id, **extra)
    # a failed layout may succeed on a retry: errors are never stored
    headers = {"cache-control": "no-store", **(headers or {})}
    return JSONResponse(body.model_dump(exclude_none=True), status_code=code, headers=headers)


def retry_after(seconds: int) -> dict[str, str]:
    return {"retry-after": str(seconds)}


def validation_problem(error: dict[str, Any]) -> str:
    """One request-validation error as a newcomer can act on it (pydantic's words otherwise)."""
    loc = error.get("loc", ())
    if error.get("type") == "json_invalid":  # loc is ("body", character offset)
        where = f" at character {loc[-1]}" if len(loc) > 1 else ""
        return f"the body is not JSON: {error.get('ctx', {}).get('error', 'cannot be read')}{where}"
    if error.get("type") == "model_attributes_type" and tuple(loc) == ("body",):
        return (
            "the body must be a JSON object with domain, substance and style"
            " (send it with Content-Type: application/json)"
        )
    return f"{'.'.join(str(p) for p in loc if p != 'body') or 'body'}: {error.get('msg')}"


def route_label(scope: dict[str, Any]) -> str:
    route = scope.get("route")
    return getattr(route, "path", None) or "unmatched"


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or settings_from_env()
    metrics = Metrics()
    cache = ResultCache(settings.result_cache_entries, settings.result_cache_bytes)
    # PNGs and PDFs of recent answers with their ETags, so a repeated or revalidated GET of an
    # embedded diagram converts nothing (a blurred PNG can take a second)
    pictures: LRU[tuple[str, str], tuple[bytes, str]] = LRU(
        settings.result_cache_entries, settings.result_cache_bytes, weight=lambda item: len(item[0])
    )
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
    live_routes, live = live_router(settings, error_response)
    app.include_router(live_routes)

    # -- errors -------------------------------------------------------------------------------------

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        metrics.errors.labels("invalid-request").inc()
        problems = "; ".join(validation_problem(e) for e in exc.errors())
        return error_response(request, 422, "invalid-request", problems or "invalid request")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        kind = "not-found" if exc.status_code == 404 else "http"
        # exc.headers carries e.g. the Allow header of a 405
        return error_response(request, exc.status_code, kind, str(exc.detail), headers=exc.headers)

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
                "content": {
                    SVG: {"schema": {"type": "string"}},
                    "image/png": {"schema": {"type": "string", "format": "binary"}},
                    "application/pdf": {"schema": {"type": "string", "format": "binary"}},
                    "application/json": {},
                },
                "model": DiagramReport,
                "description": "The SVG (PNG or PDF by Accept), or with Accept: application/json the report",
            },
            **ERROR_RESPONSES,
        },
    )
    async def render_diagram(body: DiagramRequest, request: Request) -> Response:
        request_id = request.scope.get("state", {}).get("request_id", "-")
        style = body.style_text()
        trio = (body.domain, body.substance, style, body.variation, body.excludeWarnings)
        key = request_key(*trio, body.starts, body.startSeconds, body.images)
        answer = request.scope.get("state", {}).get("answer") or negotiate(request.headers.get("accept"))
        want_json = answer == "json"
        outcome = cache.get(key)
        if outcome is not None and want_json and outcome["ok"] and "goals" not in outcome["report"]:
            outcome = None  # laid out for an SVG answer, without the goal list: again, from warm caches
        cached = outcome is not None
        if cached:
            metrics.cache_hits.labels("result").inc()
        else:
            # the goal list costs seconds for huge diagrams: only for JSON
            processes = min(body.startProcesses or settings.start_processes, settings.start_processes)
            job = body.job(
                request_id,
                settings.time_limit,
                unsafeSvg=settings.unsafe_svg,
                goals=want_json,
                startProcesses=processes,
            )
            outcome = await on_worker(job, request)
            if isinstance(outcome, Response):
                return outcome
            if outcome["ok"]:
                metrics.layout_seconds.observe(outcome["report"]["timings"]["total"] / 1e3)
                if outcome["report"].get("cacheHit"):
                    metrics.cache_hits.labels("energy").inc()
                cache.put(key, outcome)
        if not outcome["ok"]:
            return failure_response(request, outcome, style_list_files(body.style))
        report = outcome["report"]
        if want_json:
            warnings = [relocate(style_list_files(body.style), w) for w in report["warnings"]]
            answer_json = {"svg": outcome["svg"], **report, "warnings": warnings, "resultCached": cached}
            # the report's timings and cache flags differ from one answer to the next
            return JSONResponse(answer_json, headers={"cache-control": "no-store"})
        timing = ", ".join(f"{k};dur={v:.1f}" for k, v in report["timings"].items() if v is not None)
        cache_control = IMMUTABLE if request.method == "GET" else REVALIDATE
        converted = pictures.get((key, answer))
        if converted is None:
            if answer == "svg":  # the SVG itself is in the result cache
                picture = outcome["svg"].encode("utf-8")
            else:
                job = {
                    "requestId": request_id,
                    "timeLimit": settings.time_limit,
                    "convert": answer,
                    "svg": outcome["svg"],
                }
                drawn = await on_worker(job, request)
                if isinstance(drawn, Response):
                    return drawn
                if not drawn["ok"]:
                    return failure_response(request, drawn)
                picture = base64.b64decode(drawn["picture"])
            converted = (picture, f'"{hashlib.sha256(picture).hexdigest()[:40]}"')
            if answer != "svg":
                pictures.put((key, answer), converted)
        picture, etag = converted
        headers = {
            "etag": etag,
            "cache-control": cache_control,
            "server-timing": timing,
            **PICTURE_HEADERS,
        }
        if headers["etag"] in (t.strip() for t in request.headers.get("if-none-match", "").split(",")):
            return Response(status_code=304, headers=headers)
        return Response(picture, media_type=MEDIA_TYPES[answer], headers=headers)

    @app.get(
        "/diagrams/{fmt}/{encoded}",
        responses={
            200: {"content": {m: {} for m in MEDIA_TYPES.values()}, "description": "The picture"},
            304: {"description": "Not modified (If-None-Match holds the picture's ETag)"},
            400: {"model": ErrorResponse, "description": "The URL's trio cannot be decoded"},
            414: {"model": ErrorResponse, "description": "The encoded trio is too long"},
            **ERROR_RESPONSES,
        },
    )
    async def get_diagram(fmt: Literal["svg", "png", "pdf"], encoded: str, request: Request) -> Response:
        """The trio as JSON, zlib-deflated and base64url-encoded, as Kroki encodes its diagrams
        (`penrose-py url TRIO` prints one)."""
        if len(encoded) > MAX_ENCODED_CHARS:
            message = (
                f"the encoded diagram has {len(encoded)} characters; at most {MAX_ENCODED_CHARS} fit in a URL"
            )
            return error_response(request, 414, "uri-too-long", message + " (POST /diagrams takes any size)")
        try:
            fields = decode_trio(encoded, settings.max_body_bytes)
        except UrlError as e:
            return error_response(request, 400, "bad-url", str(e))
        try:
            body = DiagramRequest.model_validate(fields)
        except ValidationError as e:
            raise RequestValidationError(e.errors()) from None
        request.scope.setdefault("state", {})["answer"] = fmt
        return await render_diagram(body, request)

    async def on_worker(job: dict[str, Any], request: Request) -> dict[str, Any] | Response:
        """A job's outcome from a layout worker, or the response that says why there is none."""
        try:
            return await pool.run(job, gone=request.is_disconnected)
        except Overloaded as e:
            metrics.rejections.labels(e.reason).inc()
            return error_response(
                request, 503, "overloaded", f"{e}; retry", headers=retry_after(e.retry_after)
            )
        except ClientGone:
            metrics.rejections.labels("client-gone").inc()
            return Response(status_code=499)  # nginx's "client closed request": nobody reads it
        except WorkerCrashed as e:
            metrics.errors.labels("worker-crash").inc()
            return error_response(
                request,
                503,
                "worker-crash",
                f"{e}; the server has restarted it, retry",
                headers=retry_after(1),
            )
        except WorkerStuck as e:
            metrics.errors.labels("timeout").inc()
            return error_response(request, 504, "timeout", str(e), status="timeout")

    def failure_response(request: Request, outcome: dict[str, Any], files: Files = ()) -> JSONResponse:
        kind = outcome["kind"]
        metrics.errors.labels("timeout" if outcome.get("status") == "timeout" else kind).inc()
        if kind == "diagram":
            diagnostics = [dict(d) for d in outcome["diagnostics"]]
            for d in diagnostics:  # a Style list: name the program (style[1]) and the line in it
                d["source"], d["line"] = place(files, d["source"], d["line"])
            message = "\n".join(relocate(files, line) for line in outcome["message"].split("\n"))
            return error_response(request, 422, "diagram", message, diagnostics=diagnostics)
        if kind == "render":
            return error_response(request, 422, "render", outcome["message"])
        if kind == "memory":
            return error_response(request, 507, "memory", outcome["message"])
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
        return JSONResponse(
            body, status_code=200 if ready else 503, headers=None if ready else retry_after(1)
        )

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
        live.prewarm()
        return FileResponse(STATIC_DIR / "index.html", media_type="text/html")

    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")

    def count_request(scope: dict[str, Any], status: int) -> None:
        metrics.requests.labels(scope.get("method", "-"), route_label(scope), str(status)).inc()

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
