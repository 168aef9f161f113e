"""The diagram endpoints: a trio in, its picture or report out.

    POST /diagrams                           a trio in; the SVG (default), PNG or PDF by Accept, or
                                             with Accept: application/json a report
    GET  /diagrams/{svg|png|pdf}/{encoded}   the trio in the URL (service.http.diagram_url), for
                                             embedding

A layout or a conversion runs on a worker of the pool (service.workers.pool), never in the event
loop; its outcome (service.workers.layout_job) becomes the answer here, a failure the error answer
naming its place in the trio (a Style list: the program and its line). Finished renderings are kept
in the result cache, their PNGs and PDFs with their ETags beside them, so a repeated or revalidated
GET of an embedded diagram converts nothing. A picture carries a strong ETag (a hash of its bytes;
If-None-Match answers 304) and Cache-Control: a GET URL names its picture for good (the layout is
deterministic), so it may be cached for a year; errors are never stored.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any, Literal

from fastapi import APIRouter, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import ValidationError

from adcore import LRU
from service.render.formats import MEDIA_TYPES
from service.settings import Settings
from service.trios import Files, place, relocate, style_list_files
from service.workers.pool import ClientGone, LayoutPool, Overloaded, WorkerCrashed, WorkerStuck

from .diagram_url import MAX_ENCODED_CHARS, UrlError, decode_trio
from .errors import ERROR_RESPONSES, error_response, retry_after
from .metrics import Metrics
from .result_cache import ResultCache, request_key
from .schemas import DiagramReport, DiagramRequest, ErrorResponse

# A diagram opened from its URL is a document of this origin: whatever the Style passed through
# (and `--unsafe` passes everything), it runs no script and loads nothing but its own data: images.
PICTURE_HEADERS = {
    "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; img-src data:",
    "x-content-type-options": "nosniff",
}
SVG = "image/svg+xml"

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


def diagrams_router(settings: Settings, metrics: Metrics, pool: LayoutPool, cache: ResultCache) -> APIRouter:
    """The diagram endpoints, laying out on `pool` and keeping finished renderings in `cache`."""
    router = APIRouter()
    # PNGs and PDFs of recent answers with their ETags, so a repeated or revalidated GET of an
    # embedded diagram converts nothing (a blurred PNG can take a second)
    pictures: LRU[tuple[str, str], tuple[bytes, str]] = LRU(
        settings.result_cache_entries, settings.result_cache_bytes, weight=lambda item: len(item[0])
    )

    @router.post(
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
            done = await on_worker(job, request)
            if isinstance(done, Response):
                return done
            outcome = done
            if outcome["ok"]:
                metrics.layout_seconds.observe(outcome["report"]["timingsMs"]["total"] / 1e3)
                if outcome["report"]["cached"]["energy"]:
                    metrics.cache_hits.labels("energy").inc()
                cache.put(key, outcome)
        assert outcome is not None  # from the cache or from a worker
        if not outcome["ok"]:
            return failure_response(request, outcome, style_list_files(body.style))
        report = outcome["report"]
        if want_json:
            warnings = [relocate(style_list_files(body.style), w) for w in report["warnings"]]
            answer_json = {
                "svg": outcome["svg"],
                **report,
                "warnings": warnings,
                "cached": {**report["cached"], "result": cached},
            }
            # the report's timings and cache flags differ from one answer to the next
            return JSONResponse(answer_json, headers={"cache-control": "no-store"})
        timing = ", ".join(f"{k};dur={v:.1f}" for k, v in report["timingsMs"].items() if v is not None)
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

    @router.get(
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

    return router
