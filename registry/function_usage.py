"""How many registry trios call each of Penrose's computed functions, and which ones we implement.

    python -m registry.function_usage [--registry DIR] [--write-docs [PATH]]

A call is found by a regular expression over each trio's Style text, after removing comments, string
literals and block headers (selectors with their `where` predicates): a Penrose function name
followed by `(`, not right after `ensure`/`encourage` (those are constraints and objectives, some of
which share a name with a function). The names are checked
against Penrose's own list (`PENROSE_FUNCTIONS`, the keys of `compDict` in Penrose's
packages/core/src/lib/Functions.ts), so a user-defined word never counts.

`--write-docs` regenerates docs/function-coverage.md: one row per function with whether
`energies.library.functions.FUNCTIONS` implements it and how many trios use it.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from service.trios import default_registry_dir, load_registry

# The 228 computed functions of Penrose (compDict in packages/core/src/lib/Functions.ts), in its order.
_WORDS = """
    makePath get rgba selectColor hsva none oneBasedElement acosh acos asin asinh mod atan atan2 atanh
    cbrt ceil cos cosh exp expm1 floor log log2 log10 log1p pow round sign sin sinh tan tanh trunc sum
    sumVectors maxList minList count dot identity diagonal trace determinant inverse outerProduct
    crossProductMatrix matrix matrix3d rotate rotate2d rotate3d rotate3dh scale scale2d scale3d
    scale3dh skew skew2d shear shear2d shear3d translate translate3dh lookAt perspective ortho project
    projectDepth projectList matrixMultiplyList fromHomogeneous fromHomogeneousList toHomogeneous
    toHomogeneousList toHomogeneousMatrix length normalize pathFromPoints quadraticCurveFromPoints
    interpolateQuadraticFromPoints cubicCurveFromPoints connectPaths concatenatePaths joinPaths Penrose
    firstPoint lastPoint averagePoint interpolatingSpline diffusionProcess unitMark unitMark2 arc
    circularArc repeatedArcs wedge ptOnLine arcSweepFlag angleBetween angleFrom cross2D cross
    lineLineIntersection midpoint midpointOffset chevron innerPointOffset ticksOnLine orientedSquare
    triangle average2 average unit random unitRandom diskRandom circleRandom sphereRandom normalRandom
    triangleRandom sampleColor randomIndex setOpacity mul barycenter circumcenter circumradius incenter
    inradius sqr sqrt max min abs toRadians toDegrees norm normsq vdist vmul vdistsq angleOf MathE
    MathPI rot90 rotateBy signedDistance signedDistanceRect signedDistanceCircle signedDistancePolygon
    signedDistanceEllipse signedDistanceLine signedDistancePolyline signedDistanceGroup unitVector
    rayIntersect rayIntersectDistance rayIntersectCircle rayIntersectCircleDistance rayIntersectEllipse
    rayIntersectEllipseDistance rayIntersectLine rayIntersectLineDistance rayIntersectRect
    rayIntersectRectDistance rayIntersectPoly rayIntersectPolyDistance rayIntersectGroup
    rayIntersectGroupDistance rayIntersectNormal rayIntersectNormalCircle rayIntersectNormalEllipse
    rayIntersectNormalLine rayIntersectNormalRect rayIntersectNormalPoly rayIntersectNormalGroup
    closestPoint closestPointCircle closestPointRect closestPointLine closestPointEllipse
    closestPointPoly closestPointGroup closestSilhouettePoint closestSilhouettePointCircle
    closestSilhouettePointEllipse closestSilhouettePointLine closestSilhouettePointRect
    closestSilhouettePointPolyline closestSilhouettePointPolygon closestSilhouettePointGroup
    closestSilhouetteDistance rectLineDist shapeDistance shapeDistanceCircles shapeDistanceRects
    shapeDistanceRectLine shapeDistanceRectlikePolyline shapeDistancePolys shapeDistanceRectCircle
    shapeDistancePolyEllipse shapeDistanceCircleLine shapeDistanceLines signedArea turningNumber
    perimeter isoperimetricRatio elasticEnergy totalCurvature lengthK maxCurvature pElasticEnergy
    inflectionEnergy tangentVectors normalVectors binormalVectors evoluteCurve offsetCurve curvatures
    centerOfMass noClip clip bboxPts tsneEnergy rectPts TeXify repeat
"""
PENROSE_FUNCTIONS: tuple[str, ...] = tuple(_WORDS.split())

_COMMENT_OR_STRING = re.compile(r'/\*.*?\*/|--[^\n]*|"(?:\\.|[^"\\])*"', re.S)
# A block header (`forall T x where P(x); Q(x, y) {`, `collect ... into ... {`): its predicates are
# Substance names that may coincide with function names (`where scale2d(S)`), not calls.
_SELECTOR_HEADER = re.compile(r"\b(?:forall|collect|where)\b[^{]*", re.S)
_CALL = re.compile(r"(?<![\w.])(?:(ensure|encourage)\s+)?([A-Za-z_]\w*)\s*\(")


def called_functions(style: str) -> set[str]:
    """The Penrose function names a Style text calls."""
    code = _SELECTOR_HEADER.sub(" ", _COMMENT_OR_STRING.sub(" ", style))
    names = set(PENROSE_FUNCTIONS)
    return {m.group(2) for m in _CALL.finditer(code) if m.group(1) is None and m.group(2) in names}


@dataclass(frozen=True)
class Usage:
    per_trio: dict[str, set[str]]  # trio key -> functions its Style calls
    counts: Counter[str]  # function -> number of trios calling it


def measure(registry_dir: Path) -> Usage:
    per_trio = {t.key: called_functions(t.style) for t in load_registry(registry_dir)}
    counts: Counter[str] = Counter(name for used in per_trio.values() for name in used)
    return Usage(per_trio, counts)


def implemented_names() -> set[str]:
    from energies.library.functions import FUNCTIONS

    return set(FUNCTIONS)


def coverage_markdown(usage: Usage, implemented: set[str]) -> str:
    trios = len(usage.per_trio)
    done = sum(name in implemented for name in PENROSE_FUNCTIONS)
    complete = sum(used <= implemented for used in usage.per_trio.values())
    used_names = [n for n in PENROSE_FUNCTIONS if usage.counts[n]]
    order = sorted(PENROSE_FUNCTIONS, key=lambda n: (-usage.counts[n], PENROSE_FUNCTIONS.index(n)))
    lines = [
        "# Computed function coverage",
        "",
        "Generated by `python -m registry.function_usage --write-docs`; do not edit by hand.",
        "",
        f"- Implemented: {done} / {len(PENROSE_FUNCTIONS)} Penrose functions "
        f"({sum(n in implemented for n in used_names)} / {len(used_names)} of those the registry uses).",
        f"- Registry trios whose every computed function is implemented: {complete} / {trios}.",
        "",
        "| function | implemented | used by N registry trios |",
        "| --- | --- | ---: |",
    ]
    lines += [f"| `{n}` | {'yes' if n in implemented else 'no'} | {usage.counts[n]} |" for n in order]
    missing = sorted(
        (k for k, used in usage.per_trio.items() if not used <= implemented),
    )
    if missing:
        lines += ["", "## Trios still missing a function", ""]
        lines += [f"- `{k}`: {', '.join(sorted(usage.per_trio[k] - implemented))}" for k in missing]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m registry.function_usage", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--registry", type=Path, default=None, help="registry folder (default ../shared/penrose-registry)"
    )
    parser.add_argument(
        "--write-docs",
        nargs="?",
        const=Path(__file__).resolve().parents[1] / "docs" / "function-coverage.md",
        type=Path,
        default=None,
        help="write the coverage table (default docs/function-coverage.md)",
    )
    args = parser.parse_args(argv)
    registry_dir = args.registry or default_registry_dir(Path(__file__).resolve().parents[1])
    if registry_dir is None or not (Path(registry_dir) / "registry.json").is_file():
        print("error: no registry folder found; pass --registry DIR", file=sys.stderr)
        return 2
    usage = measure(Path(registry_dir))
    implemented = implemented_names()
    for name in sorted(PENROSE_FUNCTIONS, key=lambda n: (-usage.counts[n], n)):
        if usage.counts[name]:
            print(f"{usage.counts[name]:4d}  {'+' if name in implemented else ' '} {name}")
    unused = [n for n in PENROSE_FUNCTIONS if not usage.counts[n]]
    print(f"unused by the registry ({len(unused)}): {' '.join(unused)}")
    if args.write_docs is not None:
        args.write_docs.write_text(coverage_markdown(usage, implemented), encoding="utf-8")
        print(f"wrote {args.write_docs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
