"""Our own example diagrams (service/example_trios), loaded once into memory.

The server reads them at start-up only; a request picks one by name from this fixed table and
never makes the server open a file it names.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from .trios import TrioSpec, load_registry

EXAMPLES_DIR = Path(__file__).resolve().parent / "example_trios"


@cache
def examples() -> dict[str, TrioSpec]:
    """Name -> trio, in the order of example_trios/registry.json."""
    return {spec.key: spec for spec in load_registry(EXAMPLES_DIR)}


def example(name: str) -> TrioSpec | None:
    return examples().get(name)
