"""Across variations, a single run is Penrose's run once the labels measure as Penrose's.

stochastic-process reached a good layout on fewer variations than Penrose (4 of 10 against 5). Its
random walk is Penrose's (drawn while the Style is evaluated) and so is its start; what differed was
the size of its three TeX labels: ziamath's STIX Two Math ink boxes ($x_k$ 11.60 x 8.38 px at 12 px)
against MathJax's TeX boxes (12.28 x 7.20); ours are now MathJax's to 0.001 em (energies.text.tex_layout),
and 5 of 10 are good, as Penrose's. The walk rarely fits the canvas,
so the final energy is the penalty of a violated `disjoint(label, path)` or `onCanvas`, whose residue
is the walk's overhang plus half a label size: 0.43-0.69 px more or less per variation than
Penrose's. Given MathJax's sizes, our single run ends at Penrose's energy on all ten variations.

Oracles: Penrose 4.0.0-alpha.5 itself. Its label sizes are the viewBoxes of the MathJax SVGs in its
output (in thousandths of an em, at the Style's 12 px), its final energies those of its Node run on
the same variations (`registry.bench --variations 10 --run-penrose`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest

import energies.text.labels
from energies.compile import compile_problem
from energies.optimize.optimizer import optimize
from energies.text.labels import EquationLabel

from .service_support import HAS_REGISTRY, registry_diagram

pytestmark = pytest.mark.skipif(not HAS_REGISTRY, reason="needs ../shared registry data")

KEY = "stochastic-process/stochastic-process"
# TeX -> MathJax's box (width, height above the baseline, depth below it), in em/1000.
MATHJAX_BOXES = {
    "x_k": (1023.4, 442.0, 157.8),
    "x_{k+1}": (1927.1, 442.0, 208.0),
    "X_t": (1166.3, 683.0, 157.8),
}
# Variation suffix -> Penrose's final energy and violated constraints. Ours, with our label sizes:
# 1.30e5 (1 violated) and 1.69e6.
PENROSE_RUNS = {"~4": (0.0, 0), "~8": (1356680.0068149737, 1)}


def mathjax_sized(measure: Callable[..., EquationLabel]) -> Callable[..., EquationLabel]:
    """`measure_equation` with MathJax's sizes for this trio's labels (its rendering kept)."""

    def measure_equation(tex: str, font_size: str = "16px", *, label: str = "") -> EquationLabel:
        ours = measure(tex, font_size, label=label)
        em = energies.text.labels.parse_font_size(font_size, label) / 1000
        width, ascent, descent = (v * em for v in MATHJAX_BOXES[tex])
        return dataclasses.replace(ours, width=width, height=ascent + descent, ascent=ascent, descent=descent)

    return measure_equation


@pytest.mark.parametrize("suffix", sorted(PENROSE_RUNS))
def test_stochastic_process_single_run_is_penroses_with_penroses_label_sizes(
    suffix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        energies.text.labels, "measure_equation", mathjax_sized(energies.text.labels.measure_equation)
    )
    diagram = registry_diagram(KEY, suffix)
    assert {s.props["string"] for s in diagram.shapes if s.kind == "Equation"} == set(MATHJAX_BOXES)
    result = optimize(compile_problem(diagram), diagram.unknowns.x0)
    energy, violated = PENROSE_RUNS[suffix]
    assert result.energy == pytest.approx(energy, rel=1e-6, abs=1e-6)
    assert result.n_violated == violated
