"""The notebooks of docs/notebooks/: current with the examples' source, and run headless in a real
Jupyter kernel (nbclient, ipykernel) without an error. The getting-started notebook's printed
numbers are checked: the circles 10 px apart, a Python drag moving the dragged circle by its offset
and keeping the gap, one layout change observed."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("anywidget")
pytest.importorskip("ipykernel")

from service.builder.examples.notebooks import notebooks  # noqa: E402

FOLDER = Path(__file__).resolve().parents[3] / "docs" / "notebooks"


def test_the_notebooks_are_current() -> None:
    made = notebooks()
    assert sorted(p.name for p in FOLDER.glob("*.ipynb")) == sorted(made)
    for name, nb in made.items():
        on_disk = nbformat.read(str(FOLDER / name), as_version=4)
        assert [c.source for c in on_disk.cells] == [c.source for c in nb.cells], (
            f"{name} is stale: python -m service.builder.examples.notebooks docs/notebooks"
        )


def run(name: str, tmp_path: Path) -> list[str]:
    nb = nbformat.read(str(FOLDER / name), as_version=4)
    nbclient.NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    texts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            assert out.output_type != "error", "\n".join(out.get("traceback", []))
            texts.append(out.get("text", ""))
            texts.extend(str(v) for k, v in out.get("data", {}).items() if k in ("text/plain",))
    kinds = {k for cell in nb.cells for out in cell.get("outputs", []) for k in out.get("data", {})}
    assert {"image/svg+xml", "application/vnd.jupyter.widget-view+json"} <= kinds, kinds
    return texts


def test_getting_started_runs_and_drags(tmp_path: Path) -> None:
    printed = "".join(run("getting-started.ipynb", tmp_path))
    assert "gap 10.00" in printed
    assert "moved 80.00 0.00" in printed
    assert printed.count("gap 10.00") == 2 and "1 change" in printed


@pytest.mark.parametrize("name", ["venn.ipynb", "molecule.ipynb"])
def test_example_notebooks_run(name: str, tmp_path: Path) -> None:
    printed = "".join(run(name, tmp_path))
    assert "<Rendering" in printed and "0 violated" in printed
