"""Hostile inputs against the HTTP service on loopback: each one's answer, time and worker memory.

    .venv/bin/python benchmarks/hostile_inputs.py [--workers 2] [--time-limit 30] [--only NAME]...

Starts `python -m service serve` on a free loopback port (default settings but the time limit),
sends each input of issue 18 (and a few more) alone, one after another, and prints its status, the
error kind, the seconds it took and the layout workers' resident memory afterwards. Then the
scenario "a small request behind two hostile ones": two inputs that each take a worker for the
whole time limit, and 0.5 s later a small layout; its latency is printed. Every request is bounded
by a client timeout; the script exits 1 when an input gets a 5xx other than 504, a 200 SVG that is
not XML or not inert, or an answer later than the time limit + 5 s.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from service_load import local_server  # noqa: E402

from registry.svg_check import svg_problems  # noqa: E402

CANVAS = "canvas {\n  width = 400\n  height = 300\n}\n"
SETS = "type Set\n"
CIRCLES = CANVAS + "forall Set s {\n  s.c = Circle { }\n}\n"
LABELLED = CANVAS + "forall Set s {\n  s.c = Circle { }\n  s.t = Text { string: s.label }\n}\n"
LABELLED_INSIDE = LABELLED.replace("s.label }\n", "s.label }\n  ensure contains(s.c, s.t)\n")
INFEASIBLE = """canvas {
  width = 100
  height = 100
}
forall Set s {
  s.c = Circle { }
  ensure lessThan(10, s.c.r)
}
forall Set s; Set t {
  ensure disjoint(s.c, t.c)
}
"""
HOSTILE_STYLE = (
    CANVAS
    + """forall Set s {
  s.c = Circle {
    onmouseover: "alert(document.domain)"
    style: "fill: url(http://evil.example/x)"
    filter: "url(https://evil.example/f.svg#f)"
    href: "javascript:alert(1)"
  }
  s.t = Text { string: s.label fontFamily: "serif; background: url(http://evil.example/)" }
  s.i = Image { href: "http://evil.example/a.png" }
}
"""
)


def doubling(first: str, step: str, times: int = 40) -> str:
    """A Style that doubles `s.v0` `times` - 1 times (`step` formats the previous field)."""
    lines = [f"  s.v0 = {first}"] + [f"  s.v{i} = {step.format(f's.v{i - 1}')}" for i in range(1, times)]
    return CANVAS + "forall Set s {\n" + "\n".join(lines) + "\n}\n"


def trio(substance: str, style: str = CIRCLES, domain: str = SETS) -> dict[str, object]:
    return {"domain": domain, "substance": substance, "style": style, "variation": "hostile"}


# name -> (body, what it is); bodies are JSON values (a lone surrogate is sent as its \\ud800 escape)
CASES: dict[str, tuple[dict[str, object], str]] = {
    "index-5e6": (trio("Set s_i for i in [1, 5000000]\n"), "5,000,000-object index set"),
    "index-5e8": (trio("Set s_i for i in [1, 500000000]\n"), "500,000,000-object index set"),
    "index-1e11": (trio("Set s_i for i in [1, 100000000000]\n"), "1e11-object index set"),
    "index-2d": (trio("Set s_i for i in [1, 100000], j in [1, 100000]\n"), "1e10 combinations"),
    "repeat": (
        trio("Set a\n", CANVAS + "forall Set s {\n  s.r = count(repeat(300000000, 1))\n}\n"),
        "count(repeat(300000000, 1))",
    ),
    "identity": (trio("Set a\n", CANVAS + "forall Set s {\n  s.m = identity(100000)\n}\n"), "identity(1e5)"),
    "string-doubling": (trio("Set A\n", doubling('"ab"', "{0} + {0}")), "a string doubled 39 times"),
    "path-doubling": (
        trio("Set A\n", doubling('pathFromPoints("open", [(0, 0), (1, 1)])', "concatenatePaths([{0}, {0}])")),
        "a path doubled 39 times",
    ),
    "polygon-20k": (
        trio("Set A\n", CANVAS + "forall Set s {\n  s.p = Polygon { points: repeat(20000, (1, 2)) }\n}\n"),
        "a 20,000-point polygon",
    ),
    "shapes-1e5": (trio("Set s_i for i in [1, 100000]\n"), "100,000 shapes"),
    "shapes-19k": (
        trio("Set s_i for i in [1, 9500]\nAutoLabel All\n", LABELLED_INSIDE),
        "19,000 shapes (9,500 labelled circles), within the limits",
    ),
    "infeasible": (
        trio("Set s_i for i in [1, 600]\n", INFEASIBLE),
        "600 circles of radius > 10, pairwise disjoint on a 100x100 canvas",
    ),
    "all-pairs-1e6": (
        trio("Set s_i for i in [1, 3000]\n", CANVAS + "forall Set s; Set t {\n  s.x = 1\n}\n"),
        "a selector with 9,000,000 matches",
    ),
    "passthrough": (
        trio('Set A, B\nLabel A "a"\nLabel B "b"\n', HOSTILE_STYLE),
        "on*, url(), javascript: passthrough",
    ),
    "control-chars": (
        trio('Set A\nLabel A "a\x00b\x01c\x1bd"\n', LABELLED),
        "control characters in a label",
    ),
    "surrogate": (trio('Set A\nLabel A "x\ud800"\n', LABELLED), "a lone surrogate in a label"),
    "canvas-negative": (
        trio("Set A\n", CIRCLES.replace("width = 400", "width = -100")),
        "a negative canvas width",
    ),
    "canvas-huge": (trio("Set A\n", CIRCLES.replace("width = 400", "width = 1e12")), "a 1e12 canvas width"),
    "deep-nesting": (
        trio("Set A\n", CANVAS + "forall Set s {\n  s.x = " + "(" * 20000 + "1" + ")" * 20000 + "\n}\n"),
        "20,000 nested parentheses",
    ),
    "nan-goal": (
        trio("Set A\n", CANVAS + "forall Set s {\n  s.c = Circle { }\n  encourage equal(s.c.r / 0, 1)\n}\n"),
        "a goal that is NaN",
    ),
}
SLOW = "infeasible"  # optimizes until the time limit ends it


@contextmanager
def server(workers: int, time_limit: float, code: Path = REPO) -> Iterator[tuple[str, int]]:
    """The service of the checkout `code` with the default settings but the time limit (no result
    cache, so every request is laid out): its URL and pid."""
    env = {"PENROSE_TIME_LIMIT": str(time_limit), "PENROSE_CACHE_ENTRIES": "0"}
    with local_server(workers, env, cwd=code) as (url, process):
        yield url, process.pid


def worker_pids(server_pid: int) -> list[int]:
    """The server's layout workers: its children started by multiprocessing's spawn, from /proc."""
    found = []
    for task in Path(f"/proc/{server_pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes():
                found.append(int(child))
    return sorted(found)


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except FileNotFoundError:
        pass
    return 0.0


def post(url: str, body: dict[str, object], timeout: float) -> tuple[float, httpx.Response]:
    payload = json.dumps(body)  # ASCII with \\u escapes: a lone surrogate travels as JSON allows
    t0 = time.perf_counter()
    r = httpx.post(
        f"{url}/diagrams", content=payload, headers={"content-type": "application/json"}, timeout=timeout
    )
    return time.perf_counter() - t0, r


def run_case(url: str, server_pid: int, name: str, limit: float, failures: list[str]) -> None:
    body, what = CASES[name]
    seconds, r = post(url, body, limit + 60)
    kind = r.json().get("error", "-") if r.headers.get("content-type") == "application/json" else "svg"
    memory = [round(rss_mb(p)) for p in worker_pids(server_pid)]
    print(f"{name:16s} {r.status_code} {kind:15s} {seconds:6.2f} s  workers {memory} MB  ({what})")
    if r.status_code >= 500 and r.status_code != 504:
        failures.append(f"{name}: {r.status_code} {r.text[:200]}")
    if r.status_code == 200 and (problems := svg_problems(r.text)):
        failures.append(f"{name}: {'; '.join(problems)}")
    if seconds > limit + 5:
        failures.append(f"{name}: answered after {seconds:.1f} s, limit {limit:g} s")


def behind_two(url: str, limit: float, failures: list[str]) -> None:
    small = trio('Set A, B\nLabel A "a"\nLabel B "b"\n', LABELLED)
    with ThreadPoolExecutor(3) as pool:
        hogs = [
            pool.submit(post, url, {**CASES[SLOW][0], "variation": f"hog-{i}"}, limit + 60) for i in (1, 2)
        ]
        time.sleep(0.5)
        seconds, r = pool.submit(post, url, small, limit + 60).result()
        hog_answers = [(round(f.result()[0], 1), f.result()[1].status_code) for f in hogs]
    print(
        f"behind-two       a small layout behind two {CASES[SLOW][1]} requests: {r.status_code} in "
        f"{seconds:.2f} s (time limit {limit:g} s); the two: {hog_answers} (seconds, status)"
    )
    if r.status_code != 200 or seconds > limit + 5:
        failures.append(f"behind-two: {r.status_code} after {seconds:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--time-limit", type=float, default=30.0)
    parser.add_argument("--only", action="append", choices=[*CASES, "behind-two"], help="run these only")
    parser.add_argument(
        "--code", type=Path, default=REPO, help="serve this checkout instead (e.g. an older one, to compare)"
    )
    args = parser.parse_args()
    chosen = args.only or [*CASES, "behind-two"]
    failures: list[str] = []
    with server(args.workers, args.time_limit, args.code) as (url, pid):
        idle = [round(rss_mb(p)) for p in worker_pids(pid)]
        print(
            f"server {url}: {args.workers} workers, time limit {args.time_limit:g} s; idle workers {idle} MB"
        )
        for name in chosen:
            if name == "behind-two":
                behind_two(url, args.time_limit, failures)
            else:
                run_case(url, pid, name, args.time_limit, failures)
    print("\n".join(f"MISSED {f}" for f in failures) or "every input answered as it should be")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
