"""Our energy at Penrose's own final layouts: every goal's value is the one Penrose computes there.

Oracle: Penrose 4.0.0-alpha.5 in Node (the registry runner's `@penrose/core`): it compiles and
optimizes the registry trio with the registry's variation, then prints its final unknowns (by path)
and the value of each objective and constraint at them (`evalFns`). We build the same diagram, put
Penrose's values into our unknowns by path, and evaluate our goals.

The trios are the two whose final energy stays above Penrose's (c05p13, cubic-bezier): equal goal
values at Penrose's layout show that the gap is where the optimizer ends, not what it minimizes.
Goals that read an Equation label differ by as much as its box does (MathJax's boxes against ours,
up to 0.003 em here), so constraints are compared to that scale; objectives to the last digits.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from energies.compile import compile_problem
from energies.diagram_build import build_diagram
from registry.penrose_task import PENROSE_PACKAGE, RUNNER_DIR
from service.trios import load_registry

REGISTRY = Path(__file__).resolve().parents[3] / ".." / "shared" / "penrose-registry"

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or not (RUNNER_DIR / PENROSE_PACKAGE).is_file() or not REGISTRY.is_dir(),
    reason="needs node, `npm install` in registry/penrose_runner, and ../shared/penrose-registry",
)

PROBE = """
import {{ readFileSync }} from "node:fs";
import {{ createRequire }} from "node:module";
import {{ FontBook, installCanvasStandIn }} from "{runner}/measure_text.mjs";
console.log = console.info = console.debug = console.warn = () => {{}};
const {{ JSDOM }} = createRequire("{runner}/run.mjs")("jsdom");
const {{ window }} = new JSDOM("<!doctype html><html><body></body></html>", {{ pretendToBeVisual: true }});
for (const name of ["window", "document", "DOMParser", "XMLSerializer", "Node", "Element", "HTMLElement",
  "SVGElement", "SVGSVGElement", "HTMLCanvasElement", "DocumentFragment", "getComputedStyle"]) {{
  if (!(name in globalThis) || name === "window" || name === "document") {{
    globalThis[name] = name === "window" ? window : window[name];
  }}
}}
installCanvasStandIn(window, new FontBook([{fonts}]));
const penrose = await import("{runner}/node_modules/@penrose/core/dist/index.js");
const trio = JSON.parse(readFileSync(process.argv[2], "utf8"));
const compiled = await penrose.compile(trio);
const state = penrose.optimize(compiled.value).value;
const paths = {{}};
for (const [path, input] of compiled.value.interactivityInfo.inputIdxsByPath) {{
  const at = input.contents.contents;
  paths[path] = Array.isArray(at) ? at.map((i) => (typeof i === "number" ? i : null)) : at;
}}
const {{ objEngs, constrEngs }} = penrose.evalFns(state);
process.stdout.write(JSON.stringify({{ paths, x: state.varyingValues, objEngs, constrEngs,
  energy: penrose.evalEnergy(state) }}));
"""


def penrose_final_state(tmp_path: Path, trio: object) -> dict:
    script, payload = tmp_path / "final.mjs", tmp_path / "trio.json"
    fonts = json.dumps(str(Path(__file__).resolve().parents[3] / "energies" / "fonts"))
    script.write_text(PROBE.format(runner=RUNNER_DIR.as_posix(), fonts=fonts))
    fields = ("domain", "substance", "style", "variation")
    payload.write_text(json.dumps({f: getattr(trio, f) for f in fields} | {"excludeWarnings": []}))
    out = subprocess.run(
        ["node", str(script), str(payload)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
        cwd=RUNNER_DIR,
    )
    return json.loads(out.stdout)


def unknowns_from_paths(names: list[str], paths: dict, values: list[float]) -> np.ndarray:
    """Penrose's values for our unknowns: a name is a path (a vector's components in order) and,
    for each `?` of a Style vector, where it stands (`(style:line:col)`)."""
    taken: dict[str, int] = {}
    x = []
    for name in names:
        path = name.split(" (style:")[0]
        if path.endswith("]"):
            path, index = path[:-1].split("[")
            at = paths[path][int(index)]
        elif isinstance(paths[path], list):
            taken[path] = taken.get(path, -1) + 1
            at = paths[path][taken[path]]
        else:
            at = paths[path]
        x.append(values[at])
    return np.array(x)


# (key, Penrose's final energy in the reference run, largest |difference| of a constraint's value)
CASES = [
    ("geometry-domain/textbook_problems/c05p13", 2069.3829253677354, 0.02),
    ("curve-examples/cubic-bezier", 844.1610205462749, 1e-3),
]


@pytest.mark.parametrize(("key", "energy", "constraint_tolerance"), CASES)
def test_our_goals_at_penroses_final_layout_are_penroses(
    tmp_path: Path, key: str, energy: float, constraint_tolerance: float
) -> None:
    (trio,) = load_registry(REGISTRY, [key])
    penrose = penrose_final_state(tmp_path, trio)
    assert penrose["energy"] == pytest.approx(energy, rel=1e-12)  # the reference run's layout
    diagram = build_diagram(trio.domain, trio.substance, trio.style, trio.variation, trio.exclude_warnings)
    x = unknowns_from_paths(list(diagram.unknowns.names), penrose["paths"], penrose["x"])
    objectives, constraints = compile_problem(diagram).raw_goal_values(x)
    assert objectives == pytest.approx(penrose["objEngs"], rel=1e-12, abs=1e-9)
    # Penrose reports the last stage's constraints; the others are 0 there.
    theirs = np.array(penrose["constrEngs"])
    active = theirs != 0
    assert np.abs(constraints[active] - theirs[active]).max() < constraint_tolerance
    assert active.sum() > 10
