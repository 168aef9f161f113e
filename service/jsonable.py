"""JSON has no NaN or infinity: `finite_or_none(value)` writes them as null, recursively through
dicts, lists and tuples, and turns numpy scalars into Python numbers (Penrose's results do the same).
"""

from __future__ import annotations

import math
from typing import Any


def finite_or_none(value: Any) -> Any:
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):  # numpy scalars
        value = value.item()
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite_or_none(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_or_none(v) for v in value]
    return value
