"""How soon does the playground show the first frame after Resample (and Ctrl+Enter) on a cached trio?

    python benchmarks/playground_first_frame.py [--runs 20] [--example sets]

Starts a local server (`python -m service serve`), opens the playground in Debian's Chromium
(Playwright), renders the example once (the trio is then cached), then alternates Resample and
Ctrl+Enter. For each it prints the page's time from the click to the first frame drawn, and the part
of it spent in the live worker (the frame's `elapsedMs`, from the session's start); the rest is the
request, the session's start and the stream. Prints the range, median and 90th percentile.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from registry.editor_check import CHROMIUM, CHROMIUM_ARGS, local_server  # noqa: E402


def wait(page, expression: str, timeout_s: float = 60.0) -> None:
    # polled: the page's Content-Security-Policy forbids the eval behind wait_for_function
    deadline = time.monotonic() + timeout_s
    while not page.evaluate(expression):
        if time.monotonic() > deadline:
            raise TimeoutError(expression)
        time.sleep(0.01)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--example", default="sets")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    done = "window.playgroundMetrics.result !== null"
    samples: dict[str, list[tuple[float, float]]] = {"resample": [], "ctrl+enter": []}
    with local_server(30.0) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(f"{url}/")
        wait(page, done)
        page.evaluate("window.playgroundMetrics.result = null")
        page.select_option("#example", args.example)
        wait(page, done)
        for k in range(2 * args.runs):
            kind = "resample" if k % 2 == 0 else "ctrl+enter"
            page.evaluate("window.playgroundMetrics.result = null")
            if kind == "resample":
                page.click("#resample")
            else:
                page.click("#render")
            wait(page, done)
            m = page.evaluate("window.playgroundMetrics")
            samples[kind].append((m["firstFrameMs"], m.get("firstFrameServerMs") or 0.0))
        browser.close()
    for kind, values in samples.items():
        page_ms = sorted(v[0] for v in values)
        worker_ms = sorted(v[1] for v in values)
        p90 = page_ms[int(0.9 * (len(page_ms) - 1))]
        median = statistics.median(page_ms)
        print(
            f"{kind}: first frame {page_ms[0]:.0f}-{page_ms[-1]:.0f} ms, median {median:.0f}, "
            f"p90 {p90:.0f} (n={len(page_ms)}); in the worker {worker_ms[0]:.0f}-{worker_ms[-1]:.0f} ms, "
            f"median {statistics.median(worker_ms):.0f}"
        )
        print("  ", " ".join(f"{a:.0f}/{b:.0f}" for a, b in values))
    return 0


if __name__ == "__main__":
    sys.exit(main())
