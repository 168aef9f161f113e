"""The API's JSON shapes (pydantic), which also make the OpenAPI document at /docs."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

MAX_STARTS = 64  # a request's multi-start count is bounded like its other sizes
MAX_IMAGES = 256  # images a request carries (their bytes count against the body's limit)
# JSON's \ud800-style escapes can spell half of a surrogate pair, which is no character: no
# program can mean it, and UTF-8 (the SVG, the answer, the cache key) cannot encode it.
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def no_lone_surrogates(text: str) -> str:
    found = LONE_SURROGATE.search(text)
    if found is not None:
        line = text.count("\n", 0, found.start()) + 1
        column = found.start() - (text.rfind("\n", 0, found.start()) + 1) + 1
        raise ValueError(
            f"line {line}, column {column}: U+{ord(found.group()):04X} is half of a surrogate pair, not a"
            " character (write the character itself, or both halves of its escape)"
        )
    return text


class DiagramRequest(BaseModel):
    """A Penrose trio given inline; `style` may be a list of programs joined with a newline."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "domain": "type Set\n",
                    "substance": "Set A, B\nAutoLabel All\n",
                    "style": "canvas {\n  width = 300\n  height = 200\n}\nforall Set s {\n"
                    "  s.c = Circle { }\n  s.t = Text { string : s.label }\n  ensure contains(s.c, s.t)\n}\n",
                    "variation": "demo",
                }
            ]
        },
    )

    domain: str = Field(description="Domain program text")
    substance: str = Field(description="Substance program text")
    style: str | list[str] = Field(description="Style program text, or several joined with a newline")
    variation: str = Field("", description="Seed of the random initial state")
    excludeWarnings: list[str] = Field(default_factory=list, description="Warning kinds to silence")
    starts: int | None = Field(
        None,
        ge=1,
        le=MAX_STARTS,
        description="initial states tried (multi-start) within an evaluation budget; the best layout is kept;"
        " 1 is Penrose's single run; default 7",
    )
    startSeconds: float | None = Field(
        None,
        gt=0,
        description="seconds for the starts after the first (a cut can make the layout machine-dependent)",
    )
    startProcesses: int | None = Field(
        None,
        ge=1,
        description="processes the starts may use at once (the same layout, sooner); at most the server's"
        " PENROSE_START_PROCESSES, which is also the default (1 unless configured)",
    )

    images: dict[str, str] = Field(
        default_factory=dict,
        max_length=MAX_IMAGES,
        description="the trio's local images by the relative path a Style's href names (e.g. "
        '"shading.png"), as data:image/ URIs; the SVG embeds them (the server reads no file or URL)',
    )

    @field_validator("images")
    @classmethod
    def embedded_images(cls, images: dict[str, str]) -> dict[str, str]:
        for path, uri in images.items():
            if len(path) > 1_000 or not uri.startswith("data:image/"):
                message = "needs a path of at most 1000 characters and a data:image/ URI"
                raise ValueError(f"image {path[:100]!r} {message}")
        return images

    @field_validator("domain", "substance", "style", "variation", "excludeWarnings")
    @classmethod
    def characters_only(cls, value: Any) -> Any:
        for text in [value] if isinstance(value, str) else value:
            no_lone_surrogates(text)
        return value

    def style_text(self) -> str:
        return self.style if isinstance(self.style, str) else "\n".join(self.style)

    def job(self, request_id: str, time_limit: float, **extra: Any) -> dict[str, Any]:
        """The worker's job for this request (service.workers.layout_job), with the caller's `extra`
        fields."""
        return {
            "requestId": request_id,
            "domain": self.domain,
            "substance": self.substance,
            "style": self.style_text(),
            "variation": self.variation,
            "excludeWarnings": self.excludeWarnings,
            "starts": self.starts,
            "startSeconds": self.startSeconds,
            "timeLimit": time_limit,
            "images": self.images,
            **extra,
        }


class GoalReport(BaseModel):
    name: str
    kind: str = Field(description="constraint or objective")
    value: float | None = Field(description="final value (constraints are satisfied when <= 0)")
    satisfied: bool | None = Field(description="null for objectives")


class Timings(BaseModel):
    """Milliseconds of wall time per phase (the field is named timingsMs)."""

    compile: float = Field(description="ms: building the diagram and compiling its energy")
    optimize: float = Field(description="ms: the layout")
    render: float = Field(description="ms: drawing the SVG")
    total: float = Field(description="ms")


class Cached(BaseModel):
    energy: bool = Field(
        description="the compiled energy was reused from an earlier diagram of the same structure"
    )
    result: bool = Field(description="this whole answer was reused from an identical request")


class DiagnosedGoal(BaseModel):
    kind: str = Field(description="constraint or objective")
    index: int = Field(description="its position among the diagram's goals of its kind (as in goals)")
    function: str = Field(description="Penrose's function name, e.g. contains")
    line: int = Field(description="1-based line in the Style (0: none, e.g. an implicit ensureOnCanvas)")
    column: int
    block: str = Field(description="the Style block's selector")
    match: str = Field(description="the block's substitution, e.g. x=B, y=A")
    shapes: list[str] = Field(description="the shapes it reads, by Style path, e.g. `B`.icon")
    substance: list[str] = Field(description="the Substance objects those shapes draw")
    value: float | None = Field(description="the goal's value (a constraint holds when <= 0)")
    share: float | None = Field(description="its part of the energy, 0 to 1")
    never: bool = Field(description="a constraint no layout can satisfy (nothing it reads can move)")
    implicit: bool = Field(description="added by the system (ensureOnCanvas), so it has no line")


class Conflict(BaseModel):
    a: int = Field(description="index into diagnosis.goals")
    b: int
    shapes: list[str]
    known: bool = Field(
        description="true: the two functions can never both hold on the same shapes (contains and"
        " disjoint); false: their gradients pull against each other at the layout"
    )


class Diagnosis(BaseModel):
    energy: float | None
    nViolated: int
    omitted: int = Field(description="listed goals beyond the first 200, not detailed")
    goals: list[DiagnosedGoal] = Field(
        description="every violated constraint and every objective holding at least 10% of the energy,"
        " largest share first"
    )
    conflicts: list[Conflict] = Field(
        description="pairs of violated constraints over the same shapes that pull against each other"
    )


class StartReport(BaseModel):
    energy: float | None
    nViolated: int
    evaluations: int


class PortfolioReport(BaseModel):
    chosen: int = Field(description="index of the start whose layout was kept (0: the variation's own)")
    stopped: str = Field(
        description="why no further start ran: starts, optimal, agreement, settled, evaluations, seconds"
        " or time-limit"
    )
    cutShort: str | None = Field(description="set when a clock, not the settings, limited the starts")
    starts: list[StartReport]


class DiagramReport(BaseModel):
    svg: str
    status: str = Field(
        description="optimizer status: EPConverged when every stage converged; Stalled or StageBudget when"
        " a stage was cut short by a guard (no progress, or its evaluation budget spent) and later stages ran"
    )
    energy: float | None
    goals: list[GoalReport]
    warnings: list[str]
    iterations: int
    evaluations: int = Field(description="energy+gradient evaluations")
    epRounds: int = Field(description="exterior-point rounds of the last stage")
    maxConstrViolation: float | None = Field(description="largest constraint value (<= 0 when all hold)")
    nViolated: int = Field(description="constraints not satisfied")
    nInfeasible: int = Field(
        0,
        description="violated constraints that no layout can satisfy: nothing they read varies (each is"
        " named by an InfeasibleConstraintWarning in warnings)",
    )
    timingsMs: Timings
    cached: Cached = Field(description="what was reused rather than computed again")
    diagnosis: Diagnosis | None = Field(
        None, description="why the layout is as it is: the goals that fail or dominate"
    )
    portfolio: PortfolioReport | None = Field(None, description="the starts tried and the one chosen")


class Diagnostic(BaseModel):
    source: str = Field(
        pattern=r"^(domain|substance|style(\[\d+\])?)$",
        description="which program of the trio: domain, substance, style, or style[i] of a Style list",
    )
    line: int = Field(description="1-based")
    column: int = Field(description="1-based")
    message: str
    excerpt: str = Field("", description="the offending line with a caret under the column")
    kind: str = "Error"


class ErrorResponse(BaseModel):
    error: str = Field(
        description="diagram, render, memory, invalid-request, too-large, timeout, layout, worker-crash, "
        "internal, not-found"
    )
    message: str
    requestId: str
    diagnostics: list[Diagnostic] = Field(default_factory=list)
    status: str | None = Field(None, description="layout status: timeout, nan, optimize-error")


class ExampleSummary(BaseModel):
    name: str
    title: str
    group: str = Field(description="ours, or penrose: from Penrose's registry, under Penrose's MIT license")


class Example(ExampleSummary):
    domain: str
    substance: str
    style: str
    variation: str
    excludeWarnings: list[str]
