"""The product: the pipeline (trio -> layout -> SVG, PNG, PDF), the renderer, the HTTP service, the CLI.

    from service import render_file, render_trio, load_trio
    r = render_file("venn.trio.json")          # a Rendering; in Jupyter it displays itself
    r.save("venn.png")                          # or r.svg, r.to("pdf"), r.report(), r.warnings

    from service import DiagramBuilder, constraints, objectives    # diagrams stated in Python

A mistake in a program raises `DiagramError` (its place in `.errors`), an unreadable trio file
`TrioError`, a layout that cannot finish `LayoutError`, a builder program's mistake `BuilderError`.
Names are imported on first use, so `import service` (and the command line) starts fast;
`dir(service)` lists them all the same.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "BuilderError",
    "DiagramBuilder",
    "DiagramError",
    "DiagramWidget",
    "LayoutError",
    "Rendering",
    "TrioError",
    "TrioSpec",
    "constraints",
    "functions",
    "load_trio",
    "objectives",
    "render_diagram",
    "render_file",
    "render_trio",
]
_HOMES = {
    "BuilderError": "service.builder",
    "DiagramBuilder": "service.builder",
    "constraints": "service.builder",
    "functions": "service.builder",
    "objectives": "service.builder",
    "DiagramWidget": "service.widget",
    "DiagramError": "energies.lang.errors",
    "LayoutError": "service.pipeline",
    "Rendering": "service.pipeline",
    "render_diagram": "service.pipeline",
    "render_file": "service.pipeline",
    "render_trio": "service.pipeline",
    "TrioError": "service.trios",
    "TrioSpec": "service.trios",
    "load_trio": "service.trios",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'service' has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(_HOMES[name]), name)


def __dir__() -> list[str]:
    return sorted(__all__)
