"""Fixtures and helpers for the Style evaluator tests."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from energies.diagram import Diagram
from energies.diagram_build import build_diagram
from energies.style import Library

SHARED = Path(__file__).resolve().parents[3] / ".." / "shared"
REGISTRY = SHARED / "penrose-registry"
REFERENCE_SVG = SHARED / "penrose-reference" / "svg"

SET_DOMAIN = """type Set
type Point
predicate Subset(Set, Set)
predicate In(Point, Set)
"""

# A small library with hand-checkable functions, so evaluator tests do not depend on the real one.
FAKE = Library(
    functions={
        "twice": lambda x: 2 * x,
        "pair": lambda a, b: [a, b],
        "first": lambda v: v[0],
        "fail": lambda x: 1 / 0,
    },
    constraints={
        "equal": lambda a, b: a - b,
        "lessThan": lambda a, b: a - b,
        "greaterThan": lambda a, b: b - a,
        "onCanvas": lambda s, w, h: 0.0,
        "disjoint": lambda a, b, pad=0.0: 0.0,
    },
    objectives={"near": lambda a, b: 0.0, "repelPt": lambda w, a, b: 0.0},
)

CANVAS = "canvas {\n  width = 800\n  height = 700\n}\n"


def build(
    style: str,
    substance: str = "Set A, B\n",
    domain: str = SET_DOMAIN,
    variation: str = "test",
    library: Library | None = FAKE,
    exclude: tuple[str, ...] = (),
) -> Diagram:
    """A diagram from a Style whose first lines are the canvas block (so Style line 5 is text line 5)."""
    return build_diagram(domain, substance, CANVAS + style, variation, exclude, library=library)


def shape(d: Diagram, name: str):
    from energies.style import shape_at

    return shape_at(d, name)


@dataclass(frozen=True)
class Trio:
    key: str
    domain: str
    substance: str
    style: str
    variation: str
    exclude_warnings: tuple[str, ...]


def load_registry() -> list[Trio]:
    keys = json.loads((REGISTRY / "registry.json").read_text())
    out = []
    for key in keys:
        path = REGISTRY / f"{key}.trio.json"
        spec = json.loads(path.read_text())
        styles = spec["style"] if isinstance(spec["style"], list) else [spec["style"]]
        out.append(
            Trio(
                key,
                (path.parent / spec["domain"]).read_text(),
                (path.parent / spec["substance"]).read_text(),
                "\n".join((path.parent / s).read_text() for s in styles),
                spec.get("variation", ""),
                tuple(spec.get("excludeWarnings", ())),
            )
        )
    return out


@pytest.fixture(scope="session")
def registry() -> list[Trio]:
    if not (REGISTRY / "registry.json").exists():
        pytest.skip("Penrose registry not found beside the repo (../shared/penrose-registry)")
    return load_registry()
