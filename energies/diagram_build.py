"""From a Penrose trio (Domain, Substance, Style texts and a variation) to a `Diagram`.

    build_diagram(domain, substance, style, variation, exclude_warnings=()) -> Diagram

Parses and checks the three programs, matches the Style selectors, and evaluates the Style
(including label measurement). Every user mistake raises `energies.lang.errors.DiagramError`
(possibly a `DiagramErrors` bundle) naming the program, line and column.
"""

from __future__ import annotations

from collections.abc import Iterable

from adcore import cyclic_gc_paused
from energies.diagram import Diagram
from energies.lang.frontend import run_front_end
from energies.style import Library, evaluate_style


def build_diagram(
    domain: str,
    substance: str,
    style: str,
    variation: str,
    exclude_warnings: Iterable[str] = (),
    library: Library | None = None,
) -> Diagram:
    # The parsers' ASTs and lark's tokens are thousands of objects that stay alive, which young-object
    # collections rescan again and again: a third of a cold registry Style's parse (adcore.gc_pause).
    with cyclic_gc_paused():
        front = run_front_end(domain, substance, style)
        return evaluate_style(front, style, variation, exclude_warnings, library)
