"""Counting computed-function calls in Style programs, and the coverage table it writes."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from registry.function_usage import PENROSE_FUNCTIONS, Usage, called_functions, coverage_markdown, measure

REGISTRY = Path(__file__).resolve().parents[2] / ".." / "shared" / "penrose-registry"


def test_calls_are_found_outside_comments_strings_and_goals() -> None:
    style = """
    forall Point p {
      -- norm(ignored in a comment)
      /* rgba(also ignored) */
      p.icon = Circle { r: max(2, 3)  fillColor: rgba(0.1, 0.2, 0.3, 1.0) string: "vdist(x)" }
      ensure disjoint(p.icon, q.icon)
      encourage near(p.icon, q.icon)
      ensure lessThan(norm(p.x), 1)
      p.len = myHelper(3) + unit (p.v)
      p.d = p.icon.center
    }
    """
    assert called_functions(style) == {"max", "rgba", "norm", "unit"}


def test_function_list_is_penroses() -> None:
    assert len(PENROSE_FUNCTIONS) == len(set(PENROSE_FUNCTIONS)) == 228
    assert {"rgba", "vdist", "interpolatingSpline", "closestSilhouetteDistance", "repeat"} <= set(
        PENROSE_FUNCTIONS
    )


def test_coverage_table_counts_complete_trios() -> None:
    usage = Usage({"a": {"rgba", "norm"}, "b": {"rgba"}, "c": set()}, Counter(rgba=2, norm=1))
    text = coverage_markdown(usage, {"rgba"})
    assert "Implemented: 1 / 228" in text
    assert "every computed function is implemented: 2 / 3" in text
    assert "| `rgba` | yes | 2 |" in text and "| `norm` | no | 1 |" in text
    assert "- `a`: norm" in text


@pytest.mark.skipif(not (REGISTRY / "registry.json").is_file(), reason="Penrose registry not present")
def test_registry_usage() -> None:
    usage = measure(REGISTRY)
    assert len(usage.per_trio) == 173
    assert usage.counts["rgba"] > 40 and usage.counts["none"] > 40  # colors are everywhere
    assert set(usage.counts) <= set(PENROSE_FUNCTIONS)
