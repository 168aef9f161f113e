"""Penrose's function library: constraints, objectives and computed functions, by Penrose's names.

Every entry is a polymorphic macro (see docs/energies-design.md): it runs on Python numbers and on
traced adcore values alike.
"""

from .constraints import CONSTRAINTS
from .functions import FUNCTIONS
from .objectives import OBJECTIVES

__all__ = ["CONSTRAINTS", "FUNCTIONS", "OBJECTIVES"]
