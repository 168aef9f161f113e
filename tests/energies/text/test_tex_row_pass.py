"""The typesetting shortcut in energies.text.tex_layout (a row without operators skips ziamath's
measuring pass) against ziamath's own rows: every label is typeset both ways and must agree exactly
(box and paths)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from ziamath.nodes import mnode
from ziamath.nodes.mrow import Mrow

from energies.text import tex_layout
from energies.text.labels import EquationLabel, equation_label

TEX = [
    "A12",  # a letter and a number, as most labels are: the shortcut
    "v_{1023}",
    r"x_{y_z}^2",
    r"\mathrm{CO}_2",
    r"\text{label one}",
    r"\lim_{x} f",  # an identifier ziamath makes an operator
    r"\left( \frac{a}{b} \right)",  # fences that stretch to the row's height
    r"||\epsilon(t)|| \approx ||\epsilon(0)|| e^{\lambda t}",
    r"\begin{pmatrix} a & b \\ c & d \end{pmatrix}",
    r"\sum_{i=1}^n x_i",
    r"\sqrt{x^2 + y^2}",
]


@contextmanager
def ziamath_rows() -> Iterator[None]:
    """ziamath's own Mrow for `mrow` elements while inside."""
    classes = mnode._node_classes
    saved, classes["mrow"] = classes["mrow"], Mrow
    try:
        yield
    finally:
        classes["mrow"] = saved


def typeset(tex: str) -> EquationLabel:
    return equation_label.__wrapped__(tex)  # not the cache: each call typesets afresh


@pytest.mark.parametrize("tex", TEX)
def test_a_label_typesets_as_ziamaths_rows_typeset_it(tex):
    ours = typeset(tex)
    with ziamath_rows():
        theirs = typeset(tex)
    assert ours == theirs


def test_the_shortcut_is_taken_exactly_where_no_operator_is():
    def rows(mathml: str) -> list[ET.Element]:
        return list(ET.fromstring(mathml))

    assert not tex_layout.may_hold_operator(rows("<mrow><mi>A</mi><mn>12</mn></mrow>"))
    assert not tex_layout.may_hold_operator(rows("<mrow><msub><mi>v</mi><mn>1</mn></msub></mrow>"))
    assert tex_layout.may_hold_operator(rows("<mrow><mi>x</mi><mo>+</mo><mi>y</mi></mrow>"))
    assert tex_layout.may_hold_operator(rows("<mrow><msub><mi>lim</mi><mi>x</mi></msub></mrow>"))
    assert tex_layout.may_hold_operator(rows("<mrow><mfrac><mi>a</mi><mi>b</mi></mfrac></mrow>"))
