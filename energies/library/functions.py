"""Penrose's computed functions by name: `FUNCTIONS: dict[str, FunctionSpec]`.

The implementations live in the `fn_*` modules by topic; this module only assembles them. A spec
knows whether its function takes a `FunctionContext` first (`needs_context`: sampling functions) and
describes its parameters from the implementation's annotations (`fn_ops` aliases), so the Style
evaluator can check calls and tell static arguments (strings, booleans, counts, shapes) from
numeric ones.

    spec = FUNCTIONS["midpoint"]
    spec.apply(ctx, [0.0, 0.0], [2.0, 4.0])   # -> [1.0, 2.0]; ctx is ignored unless needed
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from . import (
    fn_closest,
    fn_colors,
    fn_curves,
    fn_math,
    fn_matrices,
    fn_paths,
    fn_queries,
    fn_sampling,
    fn_shapes,
    fn_vectors,
)

# annotation alias -> parameter kind
KINDS = {
    "Num": "real",
    "Vector": "vector",
    "Matrix": "matrix",
    "Points": "points",
    "Color": "color",
    "PathData": "path",
    "PathList": "paths",
    "Shape": "shape",
    "ShapeList": "shapes",
    "ClipData": "clip",
    "str": "string",
    "bool": "boolean",
    "int": "integer",
}
STATIC_KINDS = frozenset({"string", "boolean", "integer", "shape", "shapes"})


class FunctionCallError(ValueError):
    """A computed function called with the wrong number of arguments."""


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # one of KINDS' values
    optional: bool  # has a default (Penrose's optional parameters)

    @property
    def static(self) -> bool:
        """True when the value shapes the result (must be known while compiling), not a number."""
        return self.kind in STATIC_KINDS


@dataclass(frozen=True)
class FunctionSpec:
    name: str
    impl: Callable[..., Any]
    needs_context: bool
    params: tuple[Param, ...]
    returns: str

    def apply(self, ctx: Any, *args: Any) -> Any:
        """Call the function Penrose-style: `ctx` first (passed on only when needed), then arguments."""
        required = sum(not p.optional for p in self.params)
        if not required <= len(args) <= len(self.params):
            expected = f"{required}" if required == len(self.params) else f"{required} to {len(self.params)}"
            names = ", ".join(p.name for p in self.params)
            raise FunctionCallError(f"{self.name}({names}) expects {expected} argument(s), got {len(args)}")
        return self.impl(ctx, *args) if self.needs_context else self.impl(*args)


def _kind(annotation: Any, where: str) -> str:
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", str(annotation))
    if text not in KINDS:
        raise TypeError(f"{where}: annotation {text!r} is not a known value kind")
    return KINDS[text]


def make_spec(name: str, impl: Callable[..., Any]) -> FunctionSpec:
    sig = inspect.signature(impl)
    params = list(sig.parameters.values())
    needs_context = bool(params) and params[0].annotation in ("FunctionContext", "ctx")
    if needs_context:
        params = params[1:]
    described = tuple(
        Param(p.name, _kind(p.annotation, f"{name}({p.name})"), p.default is not inspect.Parameter.empty)
        for p in params
    )
    return FunctionSpec(name, impl, needs_context, described, _kind(sig.return_annotation, f"{name} result"))


def _public(module: ModuleType, names: str) -> dict[str, Callable[..., Any]]:
    return {n: getattr(module, n) for n in names.split()}


_MATH = """
acos acosh asin asinh atan atanh cbrt ceil cos cosh exp expm1 floor log log2 log10 log1p pow round sign
sin sinh tan tanh trunc mod atan2 sqr sqrt max min abs toRadians toDegrees MathE MathPI sum maxList
minList count average average2 get oneBasedElement repeat TeXify
"""
_VECTORS = """
dot norm normsq unit normalize rot90 rotateBy unitVector angleOf angleBetween angleFrom cross2D cross
mul sumVectors midpoint ptOnLine lineLineIntersection firstPoint lastPoint averagePoint centerOfMass
barycenter circumcenter circumradius incenter inradius length midpointOffset chevron unitMark unitMark2
arcSweepFlag innerPointOffset
"""
_MATRICES = """
identity diagonal trace determinant inverse outerProduct crossProductMatrix matrix matrix3d rotate
rotate2d rotate3d rotate3dh scale scale2d scale3d scale3dh skew skew2d shear shear2d shear3d translate
translate3dh lookAt perspective ortho project projectDepth projectList matrixMultiplyList
fromHomogeneous fromHomogeneousList toHomogeneous toHomogeneousList toHomogeneousMatrix
"""
_COLORS = "rgba hsva none selectColor setOpacity sampleColor"
_PATHS = """
makePath pathFromPoints quadraticCurveFromPoints interpolateQuadraticFromPoints cubicCurveFromPoints
connectPaths concatenatePaths joinPaths interpolatingSpline arc circularArc repeatedArcs wedge
ticksOnLine orientedSquare triangle Penrose
"""
_SAMPLING = """
random unitRandom diskRandom circleRandom sphereRandom normalRandom triangleRandom randomIndex
diffusionProcess
"""
_CURVES = """
perimeter signedArea totalCurvature turningNumber isoperimetricRatio elasticEnergy pElasticEnergy
lengthK maxCurvature inflectionEnergy tangentVectors normalVectors binormalVectors curvatures
evoluteCurve offsetCurve tsneEnergy
"""
_QUERIES = """
signedDistance signedDistanceRect signedDistanceCircle signedDistancePolygon signedDistanceEllipse
signedDistanceLine signedDistancePolyline signedDistanceGroup rayIntersect rayIntersectDistance
rayIntersectNormal rayIntersectCircle rayIntersectCircleDistance rayIntersectNormalCircle
rayIntersectEllipse rayIntersectEllipseDistance rayIntersectNormalEllipse rayIntersectLine
rayIntersectLineDistance rayIntersectNormalLine rayIntersectRect rayIntersectRectDistance
rayIntersectNormalRect rayIntersectPoly rayIntersectPolyDistance rayIntersectNormalPoly
rayIntersectGroup rayIntersectGroupDistance rayIntersectNormalGroup
"""
_CLOSEST = """
closestPoint closestPointCircle closestPointRect closestPointLine closestPointEllipse closestPointPoly
closestPointGroup closestSilhouettePoint closestSilhouettePointCircle closestSilhouettePointEllipse
closestSilhouettePointLine closestSilhouettePointRect closestSilhouettePointPolyline
closestSilhouettePointPolygon closestSilhouettePointGroup closestSilhouetteDistance
"""
_SHAPES = """
bboxPts rectPts rectLineDist shapeDistance shapeDistanceCircles shapeDistanceRects shapeDistanceRectLine
shapeDistanceRectlikePolyline shapeDistancePolys shapeDistanceRectCircle shapeDistancePolyEllipse
shapeDistanceCircleLine shapeDistanceLines noClip clip
"""

_IMPLS: dict[str, Callable[..., Any]] = {
    **_public(fn_math, _MATH),
    **_public(fn_vectors, _VECTORS),
    # names that would shadow fn_ops helpers inside fn_vectors
    "vdist": fn_vectors.vdist_,
    "vdistsq": fn_vectors.vdistsq_,
    "vmul": fn_vectors.vmul_,
    **_public(fn_matrices, _MATRICES),
    **_public(fn_colors, _COLORS),
    **_public(fn_paths, _PATHS),
    **_public(fn_sampling, _SAMPLING),
    **_public(fn_curves, _CURVES),
    **_public(fn_queries, _QUERIES),
    **_public(fn_closest, _CLOSEST),
    **_public(fn_shapes, _SHAPES),
}

FUNCTIONS: dict[str, FunctionSpec] = {name: make_spec(name, impl) for name, impl in _IMPLS.items()}

__all__ = ["FUNCTIONS", "FunctionCallError", "FunctionSpec", "Param", "make_spec"]
