"""The shared on-disk compile cache: workers write compiled code there, and it is pruned to its
byte bound, oldest files first."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

from service.http.app import create_app
from service.settings import Settings
from service.workers.compile_cache import prune
from tests.service.service_support import example_body

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient


def test_prune_deletes_the_oldest_files_past_the_bound(tmp_path: Path):
    for i, size in enumerate([300, 200, 100, 50]):
        f = tmp_path / f"m{i}.cwasm"
        f.write_bytes(b"x" * size)
        os.utime(f, (1000 + i, 1000 + i))  # m0 oldest
    (tmp_path / "other.txt").write_bytes(b"y" * 1000)  # not ours: never counted or deleted
    assert prune(tmp_path, 360) == 350
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m1.cwasm", "m2.cwasm", "m3.cwasm", "other.txt"]
    assert prune(tmp_path, 10_000) == 350  # under the bound: nothing deleted
    assert prune(tmp_path / "missing", 0) == 0


def test_workers_share_compiled_code_on_disk(tmp_path: Path):
    settings = Settings(workers=1, time_limit=30.0, compile_cache_dir=str(tmp_path))
    with TestClient(create_app(settings)) as client:
        assert client.post("/diagrams", json=example_body("sets", variation="disk-1")).status_code == 200
    written = {p.name: p.stat().st_mtime_ns for p in tmp_path.glob("*.cwasm")}
    assert written
    # another server (a replica) with the same directory finds the same code and writes nothing new
    with TestClient(create_app(settings)) as client:
        assert client.post("/diagrams", json=example_body("sets", variation="disk-2")).status_code == 200
    assert {p.name: p.stat().st_mtime_ns for p in tmp_path.glob("*.cwasm")} == written
