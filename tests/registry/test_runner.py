"""Isolated worker processes: a crash, a hang or an exception costs only its own trio."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from registry.runner import FIELDS, Callbacks, run_dask, run_isolated, run_local
from service.trios import TrioSpec
from tests.registry.registry_fake_tasks import behave


def trio(key: str, mode: str) -> TrioSpec:
    return TrioSpec(key, f"name of {key}", "", "", "", mode, (), Path("."))


def test_each_failure_mode_stays_with_its_trio() -> None:
    trios = [trio("a/ok", "ok"), trio("b/exit", "exit"), trio("c/segv", "segv"), trio("d/hang", "hang"),
             trio("e/raise", "raise"), trio("f/ok", "ok")]  # fmt: skip
    started_keys: list[str] = []
    done_keys: list[str] = []
    begin = time.perf_counter()
    callbacks = Callbacks(
        on_start=lambda t: started_keys.append(t.key), on_done=lambda r: done_keys.append(r["key"])
    )
    rows = run_local(behave, trios, jobs=2, timeout=0.5, grace=1.0, callbacks=callbacks)
    elapsed = time.perf_counter() - begin
    by_key = {row["key"]: row for row in rows}
    assert sorted(by_key) == [t.key for t in trios] and sorted(done_keys) == sorted(by_key)
    assert started_keys == [t.key for t in trios]
    expected = {"a/ok": "ok", "b/exit": "crash", "c/segv": "crash", "d/hang": "timeout", "e/raise": "crash"}
    assert {k: r["status"] for k, r in by_key.items()} == {**expected, "f/ok": "ok"}
    assert (
        "exited with status 3" in by_key["b/exit"]["error"] and "about to exit" in by_key["b/exit"]["error"]
    )
    assert "SIGSEGV" in by_key["c/segv"]["error"]
    assert "RuntimeError: broken trio e/raise" in by_key["e/raise"]["error"]
    assert "registry_fake_tasks.py" in by_key["e/raise"]["error"]
    # The hung worker was killed at timeout + grace, not after its 600 s sleep.
    assert 1.5 <= by_key["d/hang"]["workerMs"] / 1000 < 5 and elapsed < 30
    ok = by_key["a/ok"]
    assert set(FIELDS) <= set(ok) and ok["name"] == "name of a/ok" and ok["timeoutSeen"] == 0.5
    assert ok["svg"].startswith("<svg") and ok["error"] is None and ok["nGradEvals"] is None
    assert ok["pid"] != by_key["f/ok"]["pid"]  # a fresh process per trio


def test_jobs_run_concurrently() -> None:
    rows = run_local(behave, [trio("x", "sleep"), trio("y", "sleep")], jobs=2, timeout=None)
    (first, second) = sorted(rows, key=lambda r: r["started"])
    assert second["started"] < first["ended"]  # the two sleeps overlapped
    serial = run_local(behave, [trio("x", "sleep"), trio("y", "sleep")], jobs=1)
    (first, second) = sorted(serial, key=lambda r: r["started"])
    assert second["started"] >= first["ended"]


def test_unknown_status_becomes_crash() -> None:
    row = run_isolated(_weird_status, trio("k", "ok"), timeout=None)
    assert row["status"] == "crash" and "unknown status 'great'" in row["error"]


def _weird_status(trio: TrioSpec, timeout: float | None) -> dict:
    return {"status": "great"}


def test_dask_local_cluster_runs_the_same_tasks() -> None:
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
    ) as cluster:  # fmt: skip
        rows = run_dask(
            behave, [trio("a", "ok"), trio("b", "exit"), trio("c", "hang")],
            scheduler=cluster.scheduler_address, timeout=0.3, grace=0.5,
        )  # fmt: skip
    assert {r["key"]: r["status"] for r in rows} == {"a": "ok", "b": "crash", "c": "timeout"}
