"""ASGI middleware: request ids with an access log, and the request-size limits.

Both are plain ASGI so they act before FastAPI reads (or parses) anything.  Logs carry the
request id, method, path, status and size, never the body.  A body is refused with 413 past the
per-request limit, and with 503 + Retry-After when taking it would push the bytes of all bodies
held at once (read, parsed or waiting for a worker) past the total limit.
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

log = logging.getLogger("service.access")
CLIENT_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


def header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return value.decode("latin-1")
    return None


async def send_json(send: Send, status: int, body: dict[str, Any], extra: list[tuple[bytes, bytes]]) -> None:
    data = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()), *extra]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


class RequestContext:
    """Give each request an id (the client's X-Request-ID when sane), echo it, log and count it."""

    def __init__(self, app: ASGIApp, on_done: Callable[[Scope, int], None]) -> None:
        self.app = app
        self.on_done = on_done

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = header(scope, b"x-request-id")
        request_id = given if given and CLIENT_ID.match(given) else uuid.uuid4().hex[:16]
        scope.setdefault("state", {})["request_id"] = request_id
        status = 500
        t0 = time.perf_counter()

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], (b"x-request-id", request_id.encode())]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            ms = (time.perf_counter() - t0) * 1e3
            log.info(
                "%s %s %s %d %.1fms len=%s",
                request_id,
                scope.get("method"),
                short(scope.get("path") or ""),
                status,
                ms,
                header(scope, b"content-length") or "-",
            )
            self.on_done(scope, status)


def short(path: str, limit: int = 200) -> str:
    """A path as logged: a diagram URL can be a megabyte, which must not become a log line."""
    return path if len(path) <= limit else f"{path[:limit]}...({len(path)} characters)"


@dataclass
class BodyBudget:
    """Bytes of request bodies held at once, all requests together, and their limit."""

    total: int
    held: int = 0


class BodyLimit:
    """Answer 413 to a body larger than `limit` bytes, judged by Content-Length or while streaming,
    before the application sees (or parses) any of it; answer 503 when all bodies held together
    would pass the budget's total.  A body's bytes count from its first chunk until its answer is sent."""

    def __init__(
        self, app: ASGIApp, limit: int, budget: BodyBudget, on_reject: Callable[[str], None]
    ) -> None:
        self.app = app
        self.limit = limit
        self.budget = budget
        self.on_reject = on_reject

    async def reject(self, scope: Scope, send: Send, too_large: bool) -> None:
        request_id = scope.get("state", {}).get("request_id", "-")
        if too_large:
            self.on_reject("too-large")
            message = f"the request body exceeds the limit of {self.limit} bytes"
            body = {"error": "too-large", "message": message, "requestId": request_id}
            await send_json(send, 413, body, [(b"connection", b"close")])
            return
        self.on_reject("body-budget")
        message = "the server holds too many request bodies now; retry"
        body = {"error": "overloaded", "message": message, "requestId": request_id}
        await send_json(send, 503, body, [(b"retry-after", b"1")])

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") not in ("POST", "PUT", "PATCH"):
            await self.app(scope, receive, send)
            return
        declared = header(scope, b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await self.reject(scope, send, too_large=True)
            return
        reserved = 0  # bytes this request counts in the budget

        def reserve(size: int) -> bool:
            nonlocal reserved
            if size <= reserved:
                return True
            if self.budget.held + size - reserved > self.budget.total:
                return False
            self.budget.held += size - reserved
            reserved = size
            return True

        try:
            # Over the budget, the body is still read to its end but not kept (a client sending it
            # would see its connection reset, not the 503), then answered.
            over_budget = declared is not None and declared.isdigit() and not reserve(int(declared))
            chunks: list[bytes] = []
            size = 0
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > self.limit:
                    await self.reject(scope, send, too_large=True)
                    return
                if not over_budget and not reserve(size):
                    over_budget, reserved, self.budget.held = True, 0, self.budget.held - reserved
                    chunks.clear()
                if not over_budget:
                    chunks.append(chunk)
                if not message.get("more_body", False):
                    break
            if over_budget:
                await self.reject(scope, send, too_large=False)
                return
            replayed = False

            async def replay() -> Message:
                nonlocal replayed
                if not replayed:
                    replayed = True
                    return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
                return await receive()

            await self.app(scope, replay, send)
        finally:
            self.budget.held -= reserved
