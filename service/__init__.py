"""The product: the pipeline (trio -> layout -> SVG, PNG, PDF), the renderer, the HTTP service, the CLI.

    from service import render_file, render_trio, load_trio
    r = render_file("venn.trio.json")          # a Rendering; in Jupyter it displays itself
    r.save("venn.png")                          # or r.svg, r.to("pdf"), r.report(), r.warnings

Names are imported on first use, so `import service` (and the command line) starts fast.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Rendering", "TrioError", "TrioSpec", "load_trio", "render_file", "render_trio"]
_HOMES = {
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
