"""ASGI middleware: request ids with an access log, and the request-size limit.

Both are plain ASGI so they act before FastAPI reads (or parses) anything.  Logs carry the
request id, method, path, status and size, never the body.
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from collections.abc import Awaitable, Callable, MutableMapping
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


class BodyLimit:
    """Answer 413 to a body larger than `limit` bytes, judged by Content-Length or while streaming,
    before the application sees (or parses) any of it."""

    def __init__(self, app: ASGIApp, limit: int, on_reject: Callable[[], None]) -> None:
        self.app = app
        self.limit = limit
        self.on_reject = on_reject

    async def reject(self, scope: Scope, send: Send) -> None:
        self.on_reject()
        request_id = scope.get("state", {}).get("request_id", "-")
        message = f"the request body exceeds the limit of {self.limit} bytes"
        body = {"error": "too-large", "message": message, "requestId": request_id}
        await send_json(send, 413, body, [(b"connection", b"close")])

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") not in ("POST", "PUT", "PATCH"):
            await self.app(scope, receive, send)
            return
        declared = header(scope, b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await self.reject(scope, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limit:
                await self.reject(scope, send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)
