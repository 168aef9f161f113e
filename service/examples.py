"""Our own example diagrams (registry/examples), loaded once into memory.

The server reads them at start-up only; a request picks one by name from this fixed table and
never makes the server open a file it names.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import registry.trios as trios
from registry.trios import TrioSpec, load_registry

EXAMPLES_DIR = Path(trios.__file__).resolve().parent / "examples"


@cache
def examples() -> dict[str, TrioSpec]:
    """Name -> trio, in the order of registry/examples/registry.json."""
    return {spec.key: spec for spec in load_registry(EXAMPLES_DIR)}


def example(name: str) -> TrioSpec | None:
    return examples().get(name)
