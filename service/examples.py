"""The example diagrams of the playground's gallery, loaded once into memory: ours
(service/example_trios) and a selection of Penrose's registry (service/example_trios/penrose,
Penrose's work under its MIT license, beside them).

The server reads them at start-up only; a request picks one by name from this fixed table and
never makes the server open a file it names. Names are registry keys: ours are one word
(``sets``), Penrose's keep their registry path (``set-theory-domain/tree-venn``).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from .trios import TrioSpec, load_registry

EXAMPLES_DIR = Path(__file__).resolve().parent / "example_trios"
PENROSE_EXAMPLES_DIR = EXAMPLES_DIR / "penrose"
GROUPS = {"ours": "Our examples", "penrose": "Penrose's registry (MIT)"}


@cache
def examples() -> dict[str, TrioSpec]:
    """Name -> trio: ours in the order of example_trios/registry.json, then Penrose's in theirs."""
    return {spec.key: spec for spec in [*load_registry(EXAMPLES_DIR), *load_registry(PENROSE_EXAMPLES_DIR)]}


def group_of(name: str) -> str:
    """The gallery group of an example: "ours" or "penrose"."""
    return "penrose" if "/" in name else "ours"


def example(name: str) -> TrioSpec | None:
    return examples().get(name)
