"""The product: the pipeline (trio -> layout -> SVG, PNG, PDF), the renderer, the HTTP service, the CLI.

    from service import render_file, render_trio, load_trio
    r = render_file("venn.trio.json")          # a Rendering; in Jupyter it displays itself
    r.save("venn.png")                          # or r.svg, r.to("pdf"), r.report(), r.warnings

    from service import DiagramBuilder, constraints, objectives    # diagrams stated in Python

Names are imported on first use, so `import service` (and the command line) starts fast.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "BuilderError",
    "DiagramBuilder",
    "DiagramWidget",
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
    "BuilderError": "builder",
    "DiagramBuilder": "builder",
    "constraints": "builder",
    "functions": "builder",
    "objectives": "builder",
    "DiagramWidget": "widget",
    "render_diagram": "pipeline",
    "Rendering": "pipeline",
    "render_file": "pipeline",
    "render_trio": "pipeline",
    "TrioError": "trios",
    "TrioSpec": "trios",
    "load_trio": "trios",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'service' has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f"service.{_HOMES[name]}"), name)
