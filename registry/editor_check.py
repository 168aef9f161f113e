"""Does every registry trio open in the playground from its folder and render as the CLI renders it?

    python -m registry.editor_check [--registry DIR] [--out DIR] [--only GLOB ...]

For each top-level folder of the registry, a real headless Chromium (Debian's /usr/bin/chromium
through Playwright) opens the playground of a local server (`python -m service serve`, started
here), opens the folder as a user does (Open folder…: the page's folder input), and picks each of
the folder's trios from the page's *Trio* menu (the first opens by itself). The page's final SVG
(the live stream's `done` picture, which the page shows) is compared with what
`penrose-py render TRIO.trio.json -o OUT.svg` writes for the same trio and variation (the CLI's
own `main`, in a separate process, with the server's time limit):

- `same_bytes`: the two SVG texts are identical;
- `same_shown`: the SVG element the page shows (after its sanitizing and image resolution) has the
  same elements and attributes as the CLI's (its `class` attributes, which mark draggable shapes,
  aside);
- a trio that fails in both (e.g. an error in the trio) passes when both fail.

Writes OUT/results.jsonl (one line per trio: key, ok, same_bytes, same_shown, page_ms, cli_ms,
message) and prints a summary. `page_ms` is from picking the trio to the page's final picture.
"""

from __future__ import annotations

import argparse
import contextlib
import fnmatch
import io
import json
import multiprocessing
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any

from service.local_server import local_server as serve
from service.trios import default_registry_dir, registry_keys

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-sync", "--disable-background-networking",
                 "--disable-component-update"]  # fmt: skip
TIME_LIMIT = 60.0  # seconds per layout, the CLI's default
IGNORED = {"class"}  # the page marks draggable shapes with a class


def cli_svg(trio_path: str, time_limit: float) -> tuple[str | None, str, float]:
    """The CLI's SVG for a trio (None when it fails), its stderr, and its time in ms."""
    from service.cli import main

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.svg"
        err = io.StringIO()
        t0 = time.perf_counter()
        with contextlib.redirect_stderr(err):
            code = main(["render", trio_path, "-o", str(out), "--time-limit", str(time_limit)])
        ms = (time.perf_counter() - t0) * 1e3
        return (out.read_text(encoding="utf-8") if code == 0 else None), err.getvalue(), ms


def shown_elements(svg_text: str) -> list[tuple[str, tuple[tuple[str, str], ...]]]:
    root = ET.fromstring(svg_text)
    return [
        (e.tag.split("}")[-1], tuple(sorted((k, v) for k, v in e.attrib.items() if k not in IGNORED)))
        for e in root.iter()
        if e is not root
    ]


@contextlib.contextmanager
def local_server(time_limit: float) -> Iterator[str]:
    """A one-worker service with this time limit: its URL."""
    with serve(1, {"PENROSE_TIME_LIMIT": str(time_limit)}) as (url, _):
        yield url


def wait_result(page: Any, timeout_s: float) -> dict[str, Any]:
    # polled: the page's Content-Security-Policy forbids the eval behind Playwright's wait_for_function
    deadline = time.monotonic() + timeout_s
    while not page.evaluate("window.playgroundMetrics.result !== null"):
        if time.monotonic() > deadline:
            return {"event": "error", "message": f"no picture after {timeout_s:.0f} s", "shown": None}
        time.sleep(0.02)
    return page.evaluate(
        "(() => { const r = window.playgroundMetrics.result;"
        " const s = document.querySelector('#diagram svg');"
        " return {...r, shown: s ? new XMLSerializer().serializeToString(s) : null}; })()"
    )


def compare(
    key: str, page_result: dict[str, Any], cli: tuple[str | None, str, float], page_ms: float
) -> dict:
    svg, stderr, cli_ms = cli
    row: dict[str, Any] = {"key": key, "page_ms": round(page_ms, 1), "cli_ms": round(cli_ms, 1)}
    page_svg = page_result.get("svg") if page_result.get("event") == "done" else None
    if svg is None or page_svg is None:
        row.update(ok=svg is None and page_svg is None, same_bytes=False, same_shown=False)
        row["message"] = f"page: {page_result.get('message') or 'ok'}; cli: {stderr.strip()[-300:] or 'ok'}"
        return row
    same_bytes = page_svg == svg
    same_shown = page_result["shown"] is not None and shown_elements(page_result["shown"]) == shown_elements(
        svg
    )
    row.update(ok=same_bytes and same_shown, same_bytes=same_bytes, same_shown=same_shown, message="")
    return row


def run(registry: Path, out: Path, only: list[str] | None, time_limit: float) -> list[dict[str, Any]]:
    from playwright.sync_api import sync_playwright

    keys = [
        k for k in registry_keys(registry) if only is None or any(fnmatch.fnmatchcase(k, p) for p in only)
    ]
    folders: dict[str, list[str]] = {}
    for key in keys:
        folders.setdefault(key.split("/")[0], []).append(key)
    rows: list[dict[str, Any]] = []
    out.mkdir(parents=True, exist_ok=True)
    with (
        ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as cli_pool,
        local_server(time_limit) as url,
        sync_playwright() as p,
        (out / "results.jsonl").open("w", encoding="utf-8") as log,
    ):
        cli: dict[str, Future] = {
            k: cli_pool.submit(cli_svg, str(registry / f"{k}.trio.json"), time_limit) for k in keys
        }
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(f"{url}/")
        wait_result(page, 3 * time_limit)  # the page's first picture
        for folder, members in folders.items():
            # the page lists every trio of the folder; it opens the first by itself
            listed = sorted(str(t.relative_to(registry)) for t in (registry / folder).rglob("*.trio.json"))
            page.evaluate("window.playgroundMetrics.result = null")
            t0 = time.perf_counter()
            page.set_input_files("#folder-input", str(registry / folder))
            first = wait_result(page, 3 * time_limit)
            for key in members:
                if f"{key}.trio.json" != listed[0]:
                    page.evaluate("window.playgroundMetrics.result = null")
                    t0 = time.perf_counter()
                    page.select_option("#trio-select", f"{key}.trio.json")
                    result = wait_result(page, 3 * time_limit)
                else:
                    result = first
                page_ms = (time.perf_counter() - t0) * 1e3
                row = compare(key, result, cli[key].result(), page_ms)
                rows.append(row)
                log.write(json.dumps(row) + "\n")
                log.flush()
                print(
                    f"{'ok  ' if row['ok'] else 'FAIL'} {key} page {page_ms:.0f} ms {row['message']}",
                    flush=True,
                )
        browser.close()
    return rows


def summary(rows: list[dict[str, Any]]) -> str:
    def spread(values: list[float]) -> str:
        v = sorted(values)
        return f"median {v[len(v) // 2]:.0f} ms, max {v[-1]:.0f} ms" if v else "-"

    ok = sum(r["ok"] for r in rows)
    failed_both = sum(r["ok"] and not r["same_bytes"] for r in rows)
    return (
        f"{ok} of {len(rows)} trios pass ({failed_both} of them fail in both); byte-identical SVG "
        f"{sum(r['same_bytes'] for r in rows)}, shown SVG as the CLI's {sum(r['same_shown'] for r in rows)}; "
        f"page time {spread([r['page_ms'] for r in rows])}; CLI time {spread([r['cli_ms'] for r in rows])}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m registry.editor_check", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--registry", type=Path, default=default_registry_dir())
    parser.add_argument("--out", type=Path, default=Path("/tmp/editor-check"))
    parser.add_argument("--only", action="append", help="glob over registry keys (repeatable)")
    parser.add_argument("--time-limit", type=float, default=TIME_LIMIT)
    args = parser.parse_args(argv)
    if args.registry is None:
        parser.error("no registry: give --registry DIR")
    if not CHROMIUM.exists():
        parser.error(f"needs Debian's chromium at {CHROMIUM}")
    rows = run(args.registry.resolve(), args.out, args.only, args.time_limit)
    print(summary(rows))
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
