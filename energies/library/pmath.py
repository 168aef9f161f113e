"""adcore's math library with Penrose's conventions, for the function library.

Penrose's min and max are selects (`min(x, y) = x < y ? x : y`), not IEEE min/max: where one side
is NaN they pick the other side or the NaN depending on the order, and several of Penrose's
formulas rely on it (e.g. the polygon-ellipse distance takes a square root that is NaN for one
candidate point and lets `min` discard it). Everything else is adcore.math unchanged.
"""

from __future__ import annotations

from typing import Any

from adcore import binary, select
from adcore.math import *  # noqa: F403 - this module is adcore.math with two replacements


def min(x: Any, y: Any) -> Any:  # type: ignore[no-redef]  # noqa: A001 - Penrose's select replaces adcore.math's
    return select(binary("lt", x, y), x, y)


def max(x: Any, y: Any) -> Any:  # type: ignore[no-redef]  # noqa: A001 - Penrose's select replaces adcore.math's
    return select(binary("gt", x, y), x, y)
