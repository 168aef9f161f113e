"""The playground's page and the example trios it offers.

    GET /                 the playground (service/static/index.html)
    GET /examples         the gallery's example trios: names, titles and groups (ours, Penrose's)
    GET /examples/{name}  one example trio (404 for an unknown name; Penrose's names hold slashes)

The static files themselves are mounted at /static by `create_app` (a mount cannot live in a
router). Examples come from the table `service.examples` read at start-up: a request picks one by
name and never makes the server open a file it names. Loading the page starts a live worker in
the background, so the first live layout does not wait for a process to start.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from service.examples import examples, group_of
from service.workers.live_pool import LiveSessions

from .schemas import ErrorResponse, Example, ExampleSummary

STATIC_DIR = Path(__file__).resolve().parents[1] / "static"


def playground_router(live: LiveSessions) -> APIRouter:
    """The playground's page (which prewarms a worker of `live`) and the example trios."""
    router = APIRouter()

    @router.get("/examples")
    async def list_examples() -> list[ExampleSummary]:
        return [ExampleSummary(name=k, title=t.name or k, group=group_of(k)) for k, t in examples().items()]

    @router.get("/examples/{name:path}", responses={404: {"model": ErrorResponse}})
    async def get_example(name: str) -> Example:
        trio = examples().get(name)
        if trio is None:
            raise StarletteHTTPException(404, f"no example named {name!r}")
        return Example(
            name=name,
            title=trio.name or name,
            group=group_of(name),
            domain=trio.domain,
            substance=trio.substance,
            style=trio.style,
            variation=trio.variation,
            excludeWarnings=list(trio.exclude_warnings),
        )

    @router.get("/", include_in_schema=False)
    async def playground() -> FileResponse:
        live.prewarm()
        return FileResponse(STATIC_DIR / "index.html", media_type="text/html")

    return router
