"""registry.constructs counts constructs per trio (hand-counted on three tiny trios)."""

from __future__ import annotations

from pathlib import Path

from registry.constructs import coverage, render
from service.trios import TrioSpec

DOMAIN = "type Set\nsymmetric predicate Meets(Set a, Set b)\n"


def _trio(key: str, substance: str, style: str) -> TrioSpec:
    return TrioSpec(key, None, DOMAIN, substance, style, "v", (), Path("."))


def test_coverage_counts_trios_not_occurrences():
    trios = [
        _trio(
            "a",
            "Set A, B\nMeets(A, B)\n",
            "canvas { w = 1 }\nforall repeatable Set x, y where Meets(x, y) { }",
        ),
        _trio("b", "Set A\n", "forall Set x { x.c = Circle { r: ? } }\nforall Set y { }"),
        _trio("broken", "Set A\nBlob B\n", "forall Set x { }"),  # fails checking: not counted
    ]
    counts, example, passes = coverage(trios)
    assert passes == {"trios": 3, "parse": 3, "check": 2, "match": 2}
    style = counts["Style"]
    assert style["Selector"] == 2  # two trios, although "b" has two selectors
    assert style["repeatable"] == 1 and example["repeatable"] == "a"
    assert style["namespace `canvas`"] == 1
    assert counts["Domain/Substance"]["symmetric predicate"] == 2
    assert counts["Style shapes"]["Circle"] == 1
    text = render(counts, example, passes, 0.1)
    assert "| repeatable | 1 | a |" in text
    assert "parsed: 3; checked: 2; matched: 2" in text
