"""tex_layout's copy of ziamath's MathStyle gives what `dataclasses.asdict` gives (ziamath's own
call), and Equations typeset with it are the ones typeset with `asdict`."""

import dataclasses

import pytest
from ziamath import styles

from energies.text import labels
from energies.text.tex_layout import style_dict

STYLES = [
    styles.MathStyle(),
    styles.MathStyle(
        mathvariant=styles.MathVariant(style="sans", italic=True, bold=True, normal=False),
        displaystyle=False,
        mathcolor="red",
        mathbackground="#fff",
        mathsize="120%",
        scriptlevel=2,
    ),
]


@pytest.mark.parametrize("style", STYLES)
def test_the_copy_is_asdicts(style: styles.MathStyle) -> None:
    assert style_dict(style) == dataclasses.asdict(style)


def test_a_mutable_field_is_deep_copied_as_asdict_does() -> None:
    style = styles.MathStyle(mathsize=["12px"])  # type: ignore[arg-type]
    copy = style_dict(style)
    assert copy == dataclasses.asdict(style) and copy["mathsize"] is not style.mathsize


def test_equations_are_typeset_as_with_asdict(monkeypatch: pytest.MonkeyPatch) -> None:
    texs = [r"\frac{a_1}{b^2} + \sqrt{x}", r"\mathbf{v}_i \cdot \hat{n}", r"\text{Circle}", "H_2O"]
    ours = [labels.equation_label.__wrapped__(t) for t in texs]
    monkeypatch.setattr(styles, "asdict", dataclasses.asdict)
    assert [labels.equation_label.__wrapped__(t) for t in texs] == ours
