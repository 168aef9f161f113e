"""A process's caches of layout work, held by one object that is passed in, never set from outside.

    caches = Caches(disk_dir="/srv/penrose-cache")   # a layout worker's; Caches() keeps code in memory only
    caches.limit(CacheBudgets(diagrams_mb=64, energies_mb=192, modules_mb=64, programs_mb=32))
    service.pipeline.render_trio(..., caches=caches); caches.weights()

What it holds, and why each is safe to share between layouts:

- ``diagrams``: built diagrams by (trio texts, variation, excluded warnings), each with the memory
  blocks its build left allocated (its weight): a layout never changes a Diagram;
- ``energies``: compiled energies by structure (energies.compile): the same kinds and table sizes
  compile to the same functions, whatever their numbers;
- ``programs`` and ``modules``: the parsers' cache of parsed programs (energies.lang.parse) and the
  Wasm runtime's cache of compiled modules (adcore). Those modules look their own cache up, so these
  two are per process: every Caches object refers to the same two, and limits them for the process;
- ``disk_dir``: where compiled machine code is kept on disk, shared by processes (None: memory only).

Every cache is an `adcore.LRU` bounded in entries and in estimated bytes (the weights are measured
per kind of entry: docs/operations.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import adcore
from adcore import LRU
from energies.compile.problem import Functions, functions_weight
from energies.diagram import Diagram
from energies.lang.parse import PARSED

# Python heap bytes per memory block a diagram's build leaves allocated (sys.getallocatedblocks).
# Blocks counted without a collection include the build's cyclic garbage, so the weight errs high,
# never low (the measurement behind the constant: docs/operations.md).
BYTES_PER_BLOCK = 56
DIAGRAM_ENTRIES = 32
ENERGY_ENTRIES = 64
MB = 2**20


def diagram_weight(entry: tuple[Diagram, int]) -> float:
    return entry[1] * BYTES_PER_BLOCK


@dataclass(frozen=True)
class CacheBudgets:
    """Each cache's byte budget, in MB (0: that cache keeps nothing)."""

    diagrams_mb: float
    energies_mb: float
    modules_mb: float
    programs_mb: float


@dataclass
class Caches:
    disk_dir: str | None = None
    diagrams: LRU[Any, tuple[Diagram, int]] = field(
        default_factory=lambda: LRU(DIAGRAM_ENTRIES, weight=diagram_weight)
    )
    energies: LRU[Any, Functions] = field(
        default_factory=lambda: LRU(ENERGY_ENTRIES, weight=functions_weight)
    )
    programs: LRU[Any, Any] = field(default_factory=lambda: PARSED)  # the process's (module docstring)
    modules: LRU[Any, Any] = field(default_factory=lambda: adcore.MODULES)  # the process's

    def limit(self, budgets: CacheBudgets) -> None:
        """Give each cache its byte budget, evicting least recently used entries down to it."""
        self.diagrams.limit(budgets.diagrams_mb * MB)
        self.energies.limit(budgets.energies_mb * MB)
        self.modules.limit(budgets.modules_mb * MB)
        self.programs.limit(budgets.programs_mb * MB)

    def weights(self) -> dict[str, int]:
        """The estimated bytes each cache holds (sums its LRU keeps: cheap)."""
        return {
            "diagrams": int(self.diagrams.weight),
            "energies": int(self.energies.weight),
            "modules": int(self.modules.weight),
            "programs": int(self.programs.weight),
        }


# A Caches a program uses when it passes none (the CLI, the Python API): one per process.
PROCESS_CACHES = Caches()
