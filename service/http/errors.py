"""Error answers of the HTTP service: JSON `ErrorResponse` bodies, never stored by caches.

    error_response(request, code, error, message, headers=None, **extra) -> JSONResponse
    install_error_handlers(app, metrics)   # invalid requests 422, HTTP errors as JSON, bugs 500

Every answer that is not a picture or a report goes through `error_response`: it carries the
request id (RequestContext's) and `cache-control: no-store` (a failed layout may succeed on a
retry). `ERROR_RESPONSES` documents the status codes every diagram endpoint may answer in the
OpenAPI document. A request-validation error is told in a newcomer's words (`validation_problem`),
not pydantic's.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from .metrics import Metrics
from .schemas import ErrorResponse

log = logging.getLogger("service.app")

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


def error_response(
    request: Request,
    code: int,
    error: str,
    message: str,
    headers: Mapping[str, str] | None = None,
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


def install_error_handlers(app: FastAPI, metrics: Metrics) -> None:
    """The app's answers to invalid requests (422), HTTP errors (404, 405, ...) and bugs (500)."""

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
