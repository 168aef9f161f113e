"""One layout as typed messages: a `LayoutJob` (or a `ConversionJob`) in, an `Outcome` out.

This is what a worker process runs. Both directions cross the process boundary as JSON (never
pickle), validated into these models on each side, so nothing a client sends is ever deserialized as
Python objects, and the outcome is already in the API's vocabulary (its JSON names are the
models' aliases):

    Laid       {"ok": true, "svg": ..., "report": {...}}
    Converted  {"ok": true, "picture": base64}                   (a conversion job's answer)
    Failed     {"ok": false, "kind": "diagram", "message": ..., "diagnostics": [{source, line, column, ...}]}
               {"ok": false, "kind": "render", "message": ...}   (a shape the renderer cannot draw; names it)
               {"ok": false, "kind": "layout", "status": "timeout" | "nan" | "optimize-error", "message": ...}
               {"ok": false, "kind": "memory", "message": ...}   (past the worker's memory cap)
               {"ok": false, "kind": "internal", "message": ...}

A conversion job answers `Converted`, or a "render" / "memory" failure. Every outcome may carry the
worker's cache weights (`workerCacheBytes`), which the server ignores.

A request never makes the server read a file or fetch a URL it names: an Image's href is embedded
only from the images the request itself carries (``images``, data URIs by relative path).
"""

from __future__ import annotations

import base64
import json
import logging
import resource
from collections.abc import Callable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from energies.caches import Caches
from service.jsonable import finite_or_none

log = logging.getLogger("service.layout")


class _Message(BaseModel):
    model_config = ConfigDict(frozen=True, populate_by_name=True, extra="ignore")


class LayoutJob(_Message):
    """A request's trio and options, already validated by the HTTP schemas (service.http.schemas)."""

    request_id: str = Field("-", alias="requestId")
    domain: str
    substance: str
    style: str | list[str]  # several Style programs are joined with newlines, as Penrose does
    variation: str = ""
    exclude_warnings: tuple[str, ...] = Field((), alias="excludeWarnings")
    time_limit: float = Field(alias="timeLimit", gt=0)
    images: dict[str, str] = Field(default_factory=dict)  # data: URIs by the relative path an href names
    starts: int | None = Field(None, ge=1)
    start_seconds: float | None = Field(None, alias="startSeconds", gt=0)
    start_processes: int | None = Field(None, alias="startProcesses", ge=1)
    unsafe_svg: bool = Field(False, alias="unsafeSvg")
    goals: bool = True  # the report lists every goal's value (costs seconds for huge diagrams)


class ConversionJob(_Message):
    """A laid-out SVG to draw as PNG or PDF."""

    request_id: str = Field("-", alias="requestId")
    time_limit: float = Field(alias="timeLimit", gt=0)
    convert: Literal["png", "pdf"]
    svg: str


class Diagnostic(_Message):
    source: str  # "domain", "substance", "style" (or a Style file's name)
    line: int
    column: int
    message: str
    excerpt: str
    kind: str  # the error's class, e.g. "ParseError"


class Laid(_Message):
    ok: Literal[True] = True
    svg: str
    report: dict[str, Any]  # service.pipeline.Rendering.report(), finite numbers or None
    worker_cache_bytes: dict[str, int] | None = Field(None, alias="workerCacheBytes")


class Converted(_Message):
    ok: Literal[True] = True
    picture: str  # base64
    worker_cache_bytes: dict[str, int] | None = Field(None, alias="workerCacheBytes")


class Failed(_Message):
    ok: Literal[False] = False
    kind: Literal["diagram", "render", "layout", "memory", "internal"]
    message: str
    diagnostics: tuple[Diagnostic, ...] = ()  # kind "diagram": each mistake's place
    status: Literal["timeout", "nan", "optimize-error"] | None = None  # kind "layout"
    goal: str | None = None  # kind "layout", status "nan": the goal whose energy was not finite
    worker_cache_bytes: dict[str, int] | None = Field(None, alias="workerCacheBytes")


Job = LayoutJob | ConversionJob
Outcome = Laid | Converted | Failed
JOB: TypeAdapter[Job] = TypeAdapter(Job)
OUTCOME: TypeAdapter[Outcome] = TypeAdapter(Outcome)


def job_of(data: Mapping[str, Any] | Job) -> Job:
    """A job from its JSON fields: a conversion when it names a format to `convert` to."""
    if isinstance(data, LayoutJob | ConversionJob):
        return data
    return ConversionJob.model_validate(data) if "convert" in data else LayoutJob.model_validate(data)


def wire(message: BaseModel) -> dict[str, Any]:
    """A message as the JSON object that crosses the process boundary (the API's names). Shallow on
    purpose: a report's values are already plain JSON (a huge diagram's goal list is hundreds of
    thousands of dicts, which a pydantic dump would copy again)."""
    return {
        field.alias or name: _plain(getattr(message, name))
        for name, field in type(message).model_fields.items()
    }


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return wire(value)
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def outcome_of(answer: bytes) -> Outcome:
    """A worker's answer, validated (json.loads, then the models over its top level: a report's
    contents are the pipeline's own, passed through as they are)."""
    return OUTCOME.validate_python(json.loads(answer))


def distinct_errors(error: Any) -> list[Any]:
    """The errors of a DiagramError(s), each place and message once (one Style line can fail for
    every match of its block)."""
    from energies.lang.errors import DiagramErrors

    errors = error.errors if isinstance(error, DiagramErrors) else (error,)
    seen: dict[tuple[str, int, int, str], Any] = {}
    for e in errors:
        seen.setdefault((e.source, e.line, e.column, e.message), e)
    return list(seen.values())


def diagnostics_of(error: Any) -> list[Diagnostic]:
    return [
        Diagnostic(
            source=e.source, line=e.line, column=e.column, message=e.message, excerpt=e.excerpt, kind=e.kind
        )
        for e in distinct_errors(error)
    ]


def report_of(rendering: Any, goals: bool = True) -> dict[str, Any]:
    report = dict(rendering.report(goals))
    report["warnings"] = [str(w) for w in report.get("warnings", [])]
    return finite_or_none(report)


def memory_outcome() -> Failed:
    """The outcome of a job that ran out of memory, naming this process's cap."""
    cap = resource.getrlimit(resource.RLIMIT_DATA)[0]
    limit = "its memory cap" if cap == resource.RLIM_INFINITY else f"its memory cap of {cap >> 20} MB"
    message = f"the layout needed more memory than a worker may use ({limit}); its worker has been replaced"
    return Failed(kind="memory", message=message)


def run_layout(job: Mapping[str, Any] | Job, caches: Caches | None = None) -> Outcome:
    """Render one request (already validated) and classify every way it can end; a conversion job
    turns its `svg` into its format instead (see `run_conversion`). `caches`: the worker's."""
    job = job_of(job)
    return run_conversion(job) if isinstance(job, ConversionJob) else layout_outcome(job, caches)[0]


def run_conversion(job: ConversionJob) -> Outcome:
    """A laid-out SVG drawn as PNG or PDF, in a worker: a picture can take seconds and hundreds of
    megabytes, which belong under a worker's time limit and memory cap, not in the server."""
    from service.render.formats import FormatError, convert

    try:
        picture = convert(job.svg, job.convert)
    except FormatError as e:
        return Failed(kind="render", message=str(e))
    except MemoryError:
        return memory_outcome()
    return Converted(picture=base64.b64encode(picture).decode("ascii"))


def layout_outcome(
    job: Mapping[str, Any] | LayoutJob,
    caches: Caches | None = None,
    observe: Callable[[Any], Any] | None = None,
    on_progress: Callable[[Any], None] | None = None,
) -> tuple[Outcome, Any]:
    """`run_layout`'s outcome and the `Rendering` (None on failure); `observe` wraps the compiled
    problem and `on_progress` hears the optimizer (see `service.pipeline.render_trio`)."""
    from energies.lang.errors import DiagramError
    from service.pipeline import LayoutError, portfolio_settings, render_trio
    from service.render.svg import RenderError
    from service.trios import request_image_resolver

    job = job if isinstance(job, LayoutJob) else LayoutJob.model_validate(job)
    try:
        rendering = render_trio(
            job.domain,
            job.substance,
            job.style,
            job.variation,
            job.exclude_warnings,
            time_limit=job.time_limit,
            resolve_image=request_image_resolver(job.images),
            portfolio=portfolio_settings(job.starts, job.start_seconds, job.start_processes),
            observe=observe,
            on_progress=on_progress,
            safe_svg=not job.unsafe_svg,
            caches=caches,
        )
    except DiagramError as e:
        diagnostics = diagnostics_of(e)
        message = "\n".join(f"{d.source}:{d.line}:{d.column}: {d.message}" for d in diagnostics)
        return Failed(kind="diagram", message=message, diagnostics=tuple(diagnostics)), None
    except RenderError as e:  # a shape property the renderer cannot draw (e.g. an unknown arrowhead)
        return Failed(kind="render", message=str(e)), None
    except LayoutError as e:
        return Failed(kind="layout", status=e.status, message=str(e), goal=e.goal), None
    except MemoryError:  # past the worker's memory cap: the pool replaces this worker
        return memory_outcome(), None
    except RecursionError:
        # Deeply nested user programs can exhaust the parser's stack: still the user's input.
        return Failed(kind="diagram", message="the program is nested too deeply to parse"), None
    except Exception as e:  # noqa: BLE001 - a bug of ours: report it, keep the worker alive
        log.exception("request %s: internal error", job.request_id)
        return Failed(kind="internal", message=f"{type(e).__name__}: {e}"), None
    return Laid(svg=rendering.svg, report=report_of(rendering, job.goals)), rendering
