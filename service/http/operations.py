"""The endpoints operators and orchestrators poll.

    GET /healthz   the process is alive (always 200)
    GET /readyz    layout workers are up (200), or not yet (503 with Retry-After)
    GET /metrics   Prometheus text of this app's own registry (service.http.metrics)

None of them queues behind layouts: they answer from the event loop at once.
"""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from service.workers.pool import LayoutPool

from .errors import retry_after
from .metrics import Metrics


def operations_router(pool: LayoutPool, metrics: Metrics) -> APIRouter:
    """Health of this process and of `pool`'s workers, and `metrics` as Prometheus text."""
    router = APIRouter()

    @router.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @router.get("/readyz", responses={503: {"description": "No layout worker is up yet"}})
    async def readyz() -> JSONResponse:
        alive = sum(w.process.is_alive() for w in pool.workers)
        ready = pool.ready
        body = {"status": "ready" if ready else "starting", "workers": alive}
        return JSONResponse(
            body, status_code=200 if ready else 503, headers=None if ready else retry_after(1)
        )

    @router.get("/metrics", response_class=Response, responses={200: {"content": {CONTENT_TYPE_LATEST: {}}}})
    async def prometheus_metrics() -> Response:
        return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)

    return router
