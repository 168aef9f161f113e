"""A layout worker's in-process caches under byte budgets: it still renders, and keeps at most what fits.

Oracles: the budgets given to the worker (the weights it reports never exceed them; a zero budget
keeps nothing) and the rendering of the same trio by a worker with the default budgets (same SVG).
"""

from __future__ import annotations

from typing import Any

import pytest

from service.workers.layout_job import Job, job_of, wire
from service.workers.pool import WorkerConfig, exchange, start_worker, stop_worker
from tests.service.service_support import example_body

MiB = 2**20


def job(name: str, i: int) -> Job:
    return job_of({**example_body(name), "requestId": f"cache-{i}", "timeLimit": 30.0})


def answers(config: WorkerConfig, names: list[str]) -> list[dict[str, Any]]:
    worker = start_worker(config)
    try:
        return [wire(exchange(worker, job(name, i), 60.0)) for i, name in enumerate(names)]
    finally:
        stop_worker(worker)


NAMES = ["sets", "vectors", "sets", "vectors"]


@pytest.fixture(scope="module")
def reference() -> list[dict[str, Any]]:
    """The first two diagrams from a worker with the default budgets: the same for every budget
    tested, so one worker renders them once (a worker's start and two layouts saved per budget)."""
    return answers(WorkerConfig(), NAMES[:2])


@pytest.mark.parametrize("mb", [0, 1])
def test_a_worker_with_tiny_cache_budgets_renders_and_keeps_at_most_what_fits(
    mb: int, reference: list[dict[str, Any]]
) -> None:
    names = NAMES
    tiny = answers(
        WorkerConfig(diagram_cache_mb=mb, energy_cache_mb=mb, module_cache_mb=mb, parse_cache_mb=mb), names
    )
    for name, outcome, expected in zip(names, tiny, reference + reference, strict=True):
        assert outcome["ok"], (name, outcome)
        assert outcome["svg"] == expected["svg"]
        held = outcome["workerCacheBytes"]
        assert set(held) == {"diagrams", "energies", "modules", "programs"}
        assert all(0 <= b <= mb * MiB for b in held.values()), held
        if mb == 0:
            assert held == {"diagrams": 0, "energies": 0, "modules": 0, "programs": 0}
    # with 1 MiB the small diagrams and modules fit (each well under 1 MiB): something is kept
    if mb == 1:
        assert tiny[-1]["workerCacheBytes"]["diagrams"] > 0
