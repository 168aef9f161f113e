"""One layout as plain JSON data: the request's fields in, an outcome dict out.

This is what a worker process runs.  Both directions are JSON (never pickle), so nothing a client
sends is ever deserialized as Python objects, and the outcome is already in the API's vocabulary:

    {"ok": True, "svg": ..., "report": {...}}
    {"ok": False, "kind": "diagram", "message": ..., "diagnostics": [{source, line, column, ...}]}
    {"ok": False, "kind": "render", "message": ...}   (a shape the renderer cannot draw; names it)
    {"ok": False, "kind": "layout", "status": "timeout" | "nan" | "optimize-error", "message": ...}
    {"ok": False, "kind": "memory", "message": ...}   (past the worker's memory cap)
    {"ok": False, "kind": "internal", "message": ...}

A conversion job (`{"convert": "png" | "pdf", "svg": ...}`) answers `{"ok": True, "picture": base64}`
or a "render" / "memory" failure.

A request never makes the server read a file or fetch a URL it names: an Image's href is embedded
only from the images the request itself carries (``images``, data URIs by relative path).
"""

from __future__ import annotations

import base64
import logging
import resource
from typing import Any

from service.jsonable import finite_or_none

log = logging.getLogger("service.layout")


def distinct_errors(error: Any) -> list[Any]:
    """The errors of a DiagramError(s), each place and message once (one Style line can fail for
    every match of its block)."""
    from energies.lang.errors import DiagramErrors

    errors = error.errors if isinstance(error, DiagramErrors) else (error,)
    seen: dict[tuple[str, int, int, str], Any] = {}
    for e in errors:
        seen.setdefault((e.source, e.line, e.column, e.message), e)
    return list(seen.values())


def diagnostics_of(error: Any) -> list[dict[str, Any]]:
    return [
        {
            "source": e.source,
            "line": e.line,
            "column": e.column,
            "message": e.message,
            "excerpt": e.excerpt,
            "kind": e.kind,
        }
        for e in distinct_errors(error)
    ]


def report_of(rendering: Any, goals: bool = True) -> dict[str, Any]:
    report = dict(rendering.report(goals))
    report["warnings"] = [str(w) for w in report.get("warnings", [])]
    return finite_or_none(report)


def memory_outcome() -> dict[str, Any]:
    """The outcome of a job that ran out of memory, naming this process's cap."""
    cap = resource.getrlimit(resource.RLIMIT_DATA)[0]
    limit = "its memory cap" if cap == resource.RLIM_INFINITY else f"its memory cap of {cap >> 20} MB"
    return {
        "ok": False,
        "kind": "memory",
        "message": f"the layout needed more memory than a worker may use ({limit}); "
        "its worker has been replaced",
    }


def run_layout(job: dict[str, Any]) -> dict[str, Any]:
    """Render one request (already validated) and classify every way it can end; a job with a
    `convert` format turns its `svg` into that format instead (see `run_conversion`)."""
    return run_conversion(job) if "convert" in job else layout_outcome(job)[0]


def run_conversion(job: dict[str, Any]) -> dict[str, Any]:
    """A laid-out SVG drawn as PNG or PDF, in a worker: a picture can take seconds and hundreds of
    megabytes, which belong under a worker's time limit and memory cap, not in the server."""
    from service.render.formats import FormatError, convert

    try:
        picture = convert(job["svg"], job["convert"])
    except FormatError as e:
        return {"ok": False, "kind": "render", "message": str(e)}
    except MemoryError:
        return memory_outcome()
    return {"ok": True, "picture": base64.b64encode(picture).decode("ascii")}


def layout_outcome(
    job: dict[str, Any], observe: Any = None, on_progress: Any = None
) -> tuple[dict[str, Any], Any]:
    """`run_layout`'s outcome and the `Rendering` (None on failure); `observe` wraps the compiled
    problem and `on_progress` hears the optimizer (see `service.pipeline.render_trio`)."""
    from energies.lang.errors import DiagramError
    from service.pipeline import LayoutError, portfolio_settings, render_trio
    from service.render.svg import RenderError
    from service.trios import request_image_resolver

    try:
        rendering = render_trio(
            job["domain"],
            job["substance"],
            job["style"],
            job.get("variation", ""),
            tuple(job.get("excludeWarnings", ())),
            time_limit=float(job["timeLimit"]),
            resolve_image=request_image_resolver(job.get("images") or {}),
            portfolio=portfolio_settings(
                job.get("starts"), job.get("startSeconds"), job.get("startProcesses")
            ),
            observe=observe,
            on_progress=on_progress,
            safe_svg=not job.get("unsafeSvg", False),
        )
    except DiagramError as e:
        diagnostics = diagnostics_of(e)
        message = "\n".join(f"{d['source']}:{d['line']}:{d['column']}: {d['message']}" for d in diagnostics)
        return {"ok": False, "kind": "diagram", "message": message, "diagnostics": diagnostics}, None
    except RenderError as e:  # a shape property the renderer cannot draw (e.g. an unknown arrowhead)
        return {"ok": False, "kind": "render", "message": str(e)}, None
    except LayoutError as e:
        return {"ok": False, "kind": "layout", "status": e.status, "message": str(e), "goal": e.goal}, None
    except MemoryError:  # past the worker's memory cap: the pool replaces this worker
        return memory_outcome(), None
    except RecursionError:
        # Deeply nested user programs can exhaust the parser's stack: still the user's input.
        return {
            "ok": False,
            "kind": "diagram",
            "message": "the program is nested too deeply to parse",
            "diagnostics": [],
        }, None
    except Exception as e:  # noqa: BLE001 - a bug of ours: report it, keep the worker alive
        log.exception("request %s: internal error", job.get("requestId", "-"))
        return {"ok": False, "kind": "internal", "message": f"{type(e).__name__}: {e}"}, None
    outcome = {"ok": True, "svg": rendering.svg, "report": report_of(rendering, job.get("goals", True))}
    return outcome, rendering
