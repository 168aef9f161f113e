"""Shared helpers of the service tests: our examples as request bodies, a heavy diagram, live servers,
registry trios laid out through the pipeline, the mark of tests that need Chromium."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from registry.editor_check import CHROMIUM
from service.examples import example
from service.local_server import free_port, stop  # noqa: F401 (the tests import free_port from here)
from service.local_server import wait_ready as wait_healthy

REPO = Path(__file__).resolve().parents[2]
REGISTRY = REPO / ".." / "shared" / "penrose-registry"
REFERENCE = REPO / ".." / "shared" / "penrose-reference"
HAS_REGISTRY = (REGISTRY / "registry.json").is_file() and (REFERENCE / "results.jsonl").is_file()
needs_chromium = pytest.mark.skipif(not CHROMIUM.exists(), reason=f"needs Debian's chromium at {CHROMIUM}")


def write_trio(folder: Path, stem: str, trio: dict, files: dict[str, str]) -> Path:
    """A trio file `stem.trio.json` holding `trio`, and `files` (name -> text) beside it, in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    path = folder / f"{stem}.trio.json"
    path.write_text(json.dumps(trio))
    return path


def registry_diagram(key: str, suffix: str = "") -> Any:
    """A registry trio (by key) built into its Diagram as `render_trio` builds it (recursion limit
    raised), warnings silenced; its variation with `suffix` appended."""
    from energies.diagram_build import build_diagram
    from service.pipeline import RECURSION_LIMIT
    from service.trios import load_trio

    sys.setrecursionlimit(max(sys.getrecursionlimit(), RECURSION_LIMIT))
    trio = load_trio(REGISTRY / f"{key}.trio.json", key=key)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return build_diagram(
            trio.domain, trio.substance, trio.style, trio.variation + suffix, tuple(trio.exclude_warnings)
        )


def render_registry_trio(key: str, suffix: str = "", **options: Any) -> Any:
    """A registry trio (by key) through `render_trio`, its images resolved, warnings silenced; its
    variation with `suffix` appended (`~2`: the harness's second derived variation)."""
    from service.pipeline import render_trio
    from service.trios import load_trio, trio_image_resolver

    trio = load_trio(REGISTRY / f"{key}.trio.json", key=key)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return render_trio(
            trio.domain,
            trio.substance,
            trio.style,
            trio.variation + suffix,
            trio.exclude_warnings,
            resolve_image=trio_image_resolver(trio.base_dir, *trio.style_dirs),
            **options,
        )


def example_body(name: str, **overrides: object) -> dict[str, object]:
    trio = example(name)
    assert trio is not None
    body: dict[str, object] = {
        "domain": trio.domain,
        "substance": trio.substance,
        "style": trio.style,
        "variation": trio.variation,
    }
    body.update(overrides)
    return body


def heavy_body(n_sets: int = 40, variation: str = "heavy") -> dict[str, object]:
    """The `sets` example with n sets pairwise apart: ~n^2/2 constraints, about a second of layout."""
    names = [f"S{i}" for i in range(n_sets)]
    pairs = [f"Apart({a}, {b})" for i, a in enumerate(names) for b in names[i + 1 :]]
    substance = "Set " + ", ".join(names) + "\n" + "\n".join(pairs) + "\nAutoLabel All\n"
    return example_body("sets", substance=substance, variation=variation)


@contextlib.contextmanager
def running_server(command: list[str], env: dict[str, str], port: int) -> Iterator[str]:
    """Start `command` (a server on 127.0.0.1:port), yield its base URL once ready, then stop it.

    The server's log goes to a temporary file, never to a pipe nobody reads: a server blocks on its
    next log line once a pipe's buffer is full, which its access lines fill after some hundreds of
    requests. A server that does not become ready raises with the end of its log."""
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(
            command, cwd=REPO, env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=log
        )
        base_url = f"http://127.0.0.1:{port}"
        try:
            try:
                wait_healthy(base_url, process, 60.0)
            except (RuntimeError, TimeoutError) as e:
                log.seek(0)
                tail = log.read()[-4000:].decode(errors="replace")
                raise RuntimeError(f"{e}; the end of its log:\n{tail}") from e
            yield base_url
        finally:
            stop(process, 15.0)


def serve_command(port: int, workers: int = 2) -> list[str]:
    return [sys.executable, "-m", "service", "serve", "--port", str(port), "--workers", str(workers)]
