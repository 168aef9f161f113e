"""The notebooks of docs/notebooks/, made from the examples' own source so they cannot drift:
`python -m service.builder.examples.notebooks docs/notebooks` writes them (needs nbformat);
tests/service/builder/test_notebooks.py checks they are current and runs them headless.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from pathlib import Path
from typing import Any

from . import EXAMPLES

GETTING_STARTED = [
    (
        "markdown",
        "# Diagrams from Python\n\nA diagram stated with `DiagramBuilder`, laid out, then dragged "
        "(docs/builder.md).",
    ),
    (
        "code",
        """from service import DiagramBuilder, constraints, objectives
from service.builder import functions as fn

db = DiagramBuilder(400, 300, variation="notebook")
a = db.circle(name="a", r=db.input(init=50), fill_color="#3050c0")
b = db.circle(name="b", r=30, fill_color="#c03050")
db.ensure(constraints.greater_than(a.r, 20))
db.ensure(constraints.disjoint(a, b, 10))
db.encourage(objectives.near(a, b))
rendering = db.build()
rendering""",
    ),
    (
        "code",
        'gap = fn.norm(a.center - b.center) - a.r - b.r\nprint(f"gap {db.evaluate(gap, rendering):.2f}")',
    ),
    (
        "markdown",
        "Drag a circle in the widget below (JupyterLab, Jupyter Notebook, VS Code): the other follows.",
    ),
    ("code", "w = db.widget(rendering=rendering)\nw"),
    ("markdown", "Python reads the layout back, and can drag too:"),
    (
        "code",
        """moves = []
w.observe(lambda change: moves.append(change["new"]["b"]["center"]), "layout")
before = w.layout["a"]["center"]
w.drag(a, 80, 0)
after = w.layout["a"]["center"]
print(f"moved {after[0] - before[0]:.2f} {after[1] - before[1]:.2f}")
print(f"gap {w.value(gap):.2f}; {len(moves)} change")""",
    ),
]


def example_cells(name: str) -> list[tuple[str, str]]:
    module = importlib.import_module(f"{__package__}.{name}")
    doc = inspect.getdoc(module) or name
    source = inspect.getsource(module)
    body = source.split('"""', 2)[2].lstrip("\n")  # the module without its docstring
    return [
        ("markdown", f"# {doc.splitlines()[0]}\n\n" + "\n".join(doc.splitlines()[1:]).strip()),
        ("code", body.rstrip()),
        ("code", "db = build()\nrendering = db.build()\nprint(rendering)\nrendering"),
        ("code", "w = db.widget(rendering=rendering)\nw"),
    ]


def notebook(cells: list[tuple[str, str]]) -> Any:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell(text) if kind == "markdown" else nbformat.v4.new_code_cell(text)
        for kind, text in cells
    ]
    for i, cell in enumerate(nb.cells):
        cell.id = f"cell-{i}"  # stable ids: the files change only when the cells do
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


def notebooks() -> dict[str, Any]:
    """file name -> notebook."""
    out = {"getting-started.ipynb": notebook(GETTING_STARTED)}
    out.update({f"{name}.ipynb": notebook(example_cells(name)) for name in EXAMPLES})
    return out


def main(folder: str) -> None:
    import nbformat

    Path(folder).mkdir(parents=True, exist_ok=True)
    for name, nb in notebooks().items():
        nbformat.write(nb, str(Path(folder) / name))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "docs/notebooks")
