"""Equation label boxes against MathJax's, the measure Penrose uses.

Oracles: (1) every Equation in Penrose's reference SVGs of the registry (`../shared`): MathJax's
`<svg viewBox>` per label, in em/1000, matched by shape name to the TeX string and font size our
compiler gives that shape; (2) MathJax itself in Node (the Penrose runner's `mathjax-full`), for TeX
the registry does not hold. Each part skips when its data or Node is absent. Accents are left out
of the second: their height is the font's MATH table's, not TeX's rule 12 (`\\vec{v}` 0.08 em taller).
"""

from __future__ import annotations

import html
import json
import re
import shutil
import statistics
import subprocess
import warnings
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from energies.diagram_build import build_diagram
from energies.text.labels import measure_equation
from registry.penrose_task import RUNNER_DIR
from service.trios import load_registry

SHARED = Path(__file__).resolve().parents[3] / ".." / "shared"
REGISTRY = SHARED / "penrose-registry"
REFERENCE_SVGS = SHARED / "penrose-reference" / "svg"
MATHJAX = RUNNER_DIR / "node_modules" / "mathjax-full" / "js"
NUMBER = r"([-\d.e]+)"
LABEL = re.compile(
    r'<title>([^<]*)</title><svg style="font-size: ([\d.]+)px"[^>]*?viewBox="' + " ".join([NUMBER] * 4) + '"'
)


def flat(shapes: Any) -> Iterator[Any]:
    for shape in shapes:
        if shape.kind == "Group":
            yield from flat(shape.props.get("shapes", ()))
        else:
            yield shape


@cache
def penrose_boxes() -> dict[tuple[str, float], tuple[float, float, float]]:
    """(TeX, font px) -> MathJax's (width, ascent, descent) in em, for every Equation of the registry."""
    boxes = {}
    for trio in load_registry(REGISTRY):
        svg = REFERENCE_SVGS / (trio.key.replace("/", "__") + ".svg")
        if not svg.is_file():
            continue
        labels = {html.unescape(m[0]): m[1:] for m in LABEL.findall(svg.read_text())}
        if not labels:
            continue
        style = trio.style if isinstance(trio.style, str) else "\n".join(trio.style)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            diagram = build_diagram(
                trio.domain, trio.substance, style, trio.variation, tuple(trio.exclude_warnings)
            )
        for shape in flat(diagram.shapes):
            if shape.kind == "Equation" and shape.name in labels:
                px, _, y, w, h = (float(v) for v in labels[shape.name])
                boxes[str(shape.props["string"]), px] = (w / 1000, -y / 1000, (h + y) / 1000)
    return boxes


needs_reference = pytest.mark.skipif(
    not REFERENCE_SVGS.is_dir() or not REGISTRY.is_dir(), reason="needs ../shared Penrose reference SVGs"
)


def relative_errors(boxes: dict[tuple[str, float], tuple[float, float, float]]) -> dict[str, list[float]]:
    errors: dict[str, list[float]] = {"width": [], "height": [], "ascent": []}
    for (tex, px), (width, ascent, descent) in boxes.items():
        ours = measure_equation(tex, f"{px}px")
        errors["width"].append(abs(ours.width / px - width) / width)
        errors["height"].append(abs(ours.height / px - ascent - descent) / (ascent + descent))
        errors["ascent"].append(abs(ours.ascent / px - ascent) / ascent)
    return errors


def quantile(values: list[float], q: float) -> float:
    return sorted(values)[round(q * (len(values) - 1))]


@needs_reference
def test_registry_equations_measure_as_mathjax_boxes() -> None:
    boxes = penrose_boxes()
    assert len(boxes) > 250  # (TeX, size) pairs of 457 labels in 25 trios
    errors = relative_errors(boxes)
    # Measured: medians 0.0%, 90th percentiles 0.8% (width), 0.4%, 0.3%. The STIX ink boxes this
    # replaced were 9.2% / 5.1% / 3.8% (medians) and 22% / 15% / 8.4% (90th percentiles).
    for name, values in errors.items():
        assert statistics.median(values) < 0.002, name
        assert quantile(values, 0.9) < 0.015, name
    # The worst: ||x|| (latex2mathml reads || as two identifiers), \widetilde and \overline
    # (accents placed by the font's MATH table, not TeX's rule 12).
    assert max(errors["width"]) < 0.2 and max(errors["ascent"]) < 0.25


@needs_reference
def test_stochastic_process_labels_are_mathjax_boxes_to_a_thousandth_of_an_em() -> None:
    # Its layout is Penrose's run given MathJax's sizes (tests/service/test_variation_fidelity.py).
    boxes = {tex: box for (tex, px), box in penrose_boxes().items() if tex in ("x_k", "x_{k+1}", "X_t")}
    assert len(boxes) == 3
    for tex, box in boxes.items():
        ours = measure_equation(tex, "1000px")
        assert (ours.width / 1000, ours.ascent / 1000, ours.descent / 1000) == pytest.approx(box, abs=1.5e-3)


PROBE = """
import {{ liteAdaptor }} from "{js}/adaptors/liteAdaptor.js";
import {{ RegisterHTMLHandler }} from "{js}/handlers/html.js";
import {{ TeX }} from "{js}/input/tex.js";
import {{ AllPackages }} from "{js}/input/tex/AllPackages.js";
import {{ mathjax }} from "{js}/mathjax.js";
import {{ SVG }} from "{js}/output/svg.js";
const adaptor = liteAdaptor();
RegisterHTMLHandler(adaptor);
const doc = mathjax.document("", {{
  InputJax: new TeX({{ packages: AllPackages }}), OutputJax: new SVG({{ fontCache: "none" }}),
}});
const boxes = JSON.parse(process.argv[2]).map((tex) =>
  adaptor.getAttribute(adaptor.firstChild(doc.convert(tex, {{}})), "viewBox"));
console.log(JSON.stringify(boxes));
"""

# TeX beyond the registry's labels, each exercising one of energies.text.tex_layout's rules.
PROBED = [
    "x_k^j",  # both scripts: sub2 and the 4-rule gap
    "Y_k",  # a subscript starts at the advance, before the italic correction
    "f^2",  # a superscript after it
    "(x)_k",  # a single-character base: no drop with the box
    "{ab}_k",  # another base: its depth plus sub_drop
    r"x_{y_z}",  # a script's script
    "-1",  # a leading binary operator is ordinary
    "(-x)",  # so is one after an opening fence
    "f(x)-1",  # not one after a closing fence
    r"a \vee b \cap c",  # binary operators ziamath's table lacks
    r"x \cdot y * z",  # \cdot and * as MathJax's symbols
    r"a\,b\!c\;d",  # spaces in mu
    r"\partial f",  # an ordinary symbol written as an operator
    r"\mathrm{CO}_2",
]


@pytest.mark.skipif(
    shutil.which("node") is None or not MATHJAX.is_dir(),
    reason="needs node and the Penrose runner's mathjax-full",
)
def test_boxes_follow_mathjax_beyond_the_registry(tmp_path: Path) -> None:
    script = tmp_path / "probe.mjs"
    script.write_text(PROBE.format(js=MATHJAX.as_posix()))
    out = subprocess.run(
        ["node", str(script), json.dumps(PROBED)], capture_output=True, text=True, timeout=120, check=True
    )
    for tex, view_box in zip(PROBED, json.loads(out.stdout), strict=True):
        _, y, w, h = (float(v) / 1000 for v in view_box.split())
        ours = measure_equation(tex, "1000px")
        measured = (ours.width / 1000, ours.ascent / 1000, ours.descent / 1000)
        # Within 0.025 em: f^2 is 0.023 narrower (the font's italic correction of f is not TeX's).
        assert measured == pytest.approx((w, -y, h + y), abs=0.025), tex
