"""Live layouts: the optimizer's progress as a stream of frames, with pause, step, cancel and drag.

    POST /live[?interactive=true][&paused=true][&replaces=ID]
                              a trio (the body of POST /diagrams) in; a text/event-stream out:
                              session {id}, frame {svg, stage, round, start, iterations, energy,
                              maxViolation, elapsedMs}..., then done {svg, report..., draggable} or
                              error {kind, message, diagnostics}, then end {reason}; with
                              interactive=true the stream stays open after done for drags
                              (frame..., settled) until the client ends it or it idles;
                              replaces=ID ends the client's previous session ID first;
                              paused=true (the editor's autostep off) holds the layout after
                              its first frame, the initial state, until step or resume
    POST /live/{id}           a command for the session: {"action": "pause" | "step" | "resume" |
                              "cancel" | "end"} or {"action": "drag", "shape", "dx", "dy", "begin"?, "seq"?}
                              (the offset since the drag began, in canvas units, y up; "begin":
                              true on a drag's first command); 204, or 404 for no such session

Each session runs in a live worker process (`service.workers.live_pool` keeps them); this module
is the endpoints only: it validates the trio and the commands and streams the session's events.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any, Literal

from fastapi import APIRouter, Request
from fastapi.responses import Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from service.settings import Settings
from service.workers.live_pool import LiveSessions

from .errors import error_response
from .schemas import DiagramRequest


class LiveCommand(BaseModel):
    model_config = ConfigDict(extra="forbid")
    action: Literal["pause", "step", "resume", "cancel", "end", "drag"]
    shape: str | None = Field(None, max_length=10_000)
    dx: float = Field(0.0, allow_inf_nan=False)
    dy: float = Field(0.0, allow_inf_nan=False)
    begin: bool = False  # the first command of a drag: its offsets count from the shape's position now
    seq: int = 0  # the client's number for a drag command, echoed by the `settled` it leads to


def sse(event: str, data: Any) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def live_router(settings: Settings, live: LiveSessions) -> APIRouter:
    """The /live endpoints (registered by service.http.app), running their sessions on `live`."""
    router = APIRouter()

    @router.post(
        "/live",
        responses={
            200: {"content": {"text/event-stream": {}}, "description": "The session's events"},
            429: {"description": "All live sessions are in use"},
        },
    )
    async def open_live(
        body: DiagramRequest,
        request: Request,
        interactive: bool = False,
        paused: bool = False,
        replaces: str | None = None,
    ) -> Response:
        request_id = request.scope.get("state", {}).get("request_id", "-")
        job = body.job(
            request_id, settings.time_limit, goals=False, interactive=interactive, startPaused=paused
        )
        if replaces:  # the client's previous session, ended here: its stream's close may come later
            live.command(replaces, {"action": "end"})
        session = await live.open(job)
        if session is None:
            return error_response(
                request,
                429,
                "busy",
                f"all {settings.live_sessions} live sessions are in use; retry, or use POST /diagrams",
            )

        async def events() -> AsyncIterator[bytes]:
            try:
                yield sse("session", {"id": session.id})
                while True:
                    message = await session.events.get()
                    if message is None:
                        return
                    yield sse(message["event"], message["data"])
            finally:
                await live.close_session(session)

        headers = {"cache-control": "no-store", "x-accel-buffering": "no"}
        return StreamingResponse(events(), media_type="text/event-stream", headers=headers)

    @router.post("/live/{session_id}", status_code=204, responses={404: {"description": "No such session"}})
    async def control_live(session_id: str, body: LiveCommand, request: Request) -> Response:
        if not live.command(session_id, body.model_dump(exclude_none=True)):
            return error_response(request, 404, "not-found", f"no live session {session_id!r} (it ended)")
        return Response(status_code=204)

    return router
