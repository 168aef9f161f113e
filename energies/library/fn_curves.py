"""Discrete curve quantities of Penrose's library (Curves.ts): polygonal chains given as point
lists, open or closed (`closed` is static).

Curvature at a vertex p2 between edges p1->p2 and p2->p3 is measured from the turning angle
(signed in 2D, unsigned in 3D) in one of Penrose's approximation modes.
"""

from __future__ import annotations

import math
from typing import Any

from energies.limits import MAX_MATRIX_DIMENSION, check_size

from . import pmath as am
from .fn_ops import (
    Num,
    Points,
    Vector,
    add_n,
    angle_between,
    angle_from,
    consecutive_pairs,
    consecutive_triples,
    cross3,
    div,
    max_n,
    vadd,
    vdist,
    vmul,
    vnormalize,
    vsub,
)
from .fn_ops import rot90 as _rot90
from .loops import chain, maximum, total, written_as_loop

ANGLE, STEINER_SEGMENT, OSCULATING, FINITE_DIFFERENCES = "angle", "steiner", "osculating", "finite"


def curvature(p1: Vector, p2: Vector, p3: Vector, mode: str = ANGLE) -> Num:
    v1, v2 = vsub(p2, p1), vsub(p3, p2)
    angle = angle_from(v1, v2) if len(p1) == 2 else angle_between(v1, v2)
    if mode == ANGLE:
        return angle
    if mode == STEINER_SEGMENT:
        return 2.0 * am.sin(angle / 2.0)
    if mode == OSCULATING:
        return div(2.0 * am.sin(angle / 2.0), vdist(p1, p3))
    if mode == FINITE_DIFFERENCES:
        t12, t23 = vnormalize(v1), vnormalize(v2)
        mid_length = vdist(vmul(0.5, vadd(p1, p2)), vmul(0.5, vadd(p2, p3)))
        return am.sign(angle) * div(vdist(t23, t12), mid_length)
    raise ValueError(f"unknown curvature mode {mode!r}")


def _pts(points: Points) -> list[list]:
    return [list(p) for p in points]


def _pairs_total(points: Points, closed: bool, term: Any) -> Num:
    """add_n of term(p, q) over consecutive pairs (one loop for a list replayed as a loop)."""
    loop = chain(points, closed, 2, term)
    if loop is not None:
        return total(*loop)
    return add_n([term(p, q) for p, q in consecutive_pairs(_pts(points), closed)])


def _triples_total(points: Points, closed: bool, term: Any) -> Num:
    loop = chain(points, closed, 3, term)
    if loop is not None:
        return total(*loop)
    return add_n([term(a, b, c) for a, b, c in consecutive_triples(_pts(points), closed)])


@written_as_loop
def perimeter(points: Points, closed: bool) -> Num:
    return _pairs_total(points, closed, vdist)


@written_as_loop
def signedArea(points: Points, closed: bool) -> Num:
    """The shoelace formula: positive for counterclockwise chains."""
    return 0.5 * _pairs_total(points, closed, lambda p, q: p[0] * q[1] - p[1] * q[0])


@written_as_loop
def totalCurvature(points: Points, closed: bool, signed: bool = True) -> Num:
    if signed:
        return _triples_total(points, closed, curvature)
    return _triples_total(points, closed, lambda a, b, c: am.abs(curvature(a, b, c)))


@written_as_loop
def turningNumber(points: Points, closed: bool) -> Num:
    return totalCurvature(points, closed) / (2.0 * math.pi)


@written_as_loop
def isoperimetricRatio(points: Points, closed: bool) -> Num:
    p = perimeter(points, closed)
    return div(p * p, signedArea(points, closed))


def _dual_length(a: Vector, b: Vector, c: Vector) -> Num:
    return 0.5 * (vdist(a, b) * vdist(b, c))


def _elastic_term(a: Vector, b: Vector, c: Vector) -> Num:
    k = curvature(a, b, c, STEINER_SEGMENT)
    return k * k * _dual_length(a, b, c)


@written_as_loop
def elasticEnergy(points: Points, closed: bool) -> Num:
    """Sum of squared (Steiner) curvatures times the dual edge lengths."""
    return _triples_total(points, closed, _elastic_term)


@written_as_loop
def pElasticEnergy(points: Points, closed: bool, p: Num = 2.0) -> Num:
    return _triples_total(
        points, closed, lambda a, b, c: am.pow(curvature(a, b, c, STEINER_SEGMENT), p) * _dual_length(a, b, c)
    )


@written_as_loop
def lengthK(points: Points, closed: bool, k: Num) -> Num:
    return _pairs_total(points, closed, lambda a, b: am.pow(vdist(a, b), k))


@written_as_loop
def maxCurvature(points: Points, closed: bool) -> Num:
    def term(a: Vector, b: Vector, c: Vector) -> Num:
        return am.abs(curvature(a, b, c, OSCULATING))

    loop = chain(points, closed, 3, term)
    if loop is not None:
        return maximum(*loop)
    return max_n([term(a, b, c) for a, b, c in consecutive_triples(_pts(points), closed)])


def inflectionEnergy(points: Points, closed: bool, p: Num) -> Num:
    ks = [curvature(a, b, c, STEINER_SEGMENT) for a, b, c in consecutive_triples(_pts(points), closed)]
    return add_n([am.pow(am.abs(k2 - k1), p) for k1, k2 in consecutive_pairs(ks, closed)])


def tangentVectors(points: Points, closed: bool) -> Points:
    """Unit tangents by central differences (one-sided at the ends of an open chain)."""
    pts = _pts(points)
    inner = [vnormalize(vsub(pts[i + 1], pts[i - 1])) for i in range(1, len(pts) - 1)]
    if closed:
        return [vnormalize(vsub(pts[1], pts[-1])), *inner, vnormalize(vsub(pts[0], pts[-2]))]
    return [vnormalize(vsub(pts[1], pts[0])), *inner, vnormalize(vsub(pts[-1], pts[-2]))]


def _principal_normals(points: Points, closed: bool) -> Points:
    ts = tangentVectors(points, closed)
    inner = [vnormalize(vsub(ts[i + 1], ts[i - 1])) for i in range(1, len(ts) - 1)]
    if closed:
        return [vnormalize(vsub(ts[1], ts[-1])), *inner, vnormalize(vsub(ts[0], ts[-2]))]
    return [inner[0], *inner, inner[-1]]


def normalVectors(points: Points, closed: bool) -> Points:
    """2D: tangents turned a quarter counterclockwise; 3D: principal normals."""
    if len(points[0]) == 2:
        return [_rot90(t) for t in tangentVectors(points, closed)]
    return _principal_normals(points, closed)


def binormalVectors(points: Points, closed: bool) -> Points:
    ts, ns = tangentVectors(points, closed), _principal_normals(points, closed)
    return [cross3(t, n) for t, n in zip(ts, ns)]


def curvatures(points: Points, closed: bool) -> Vector:
    """Finite-difference curvature at every vertex (ends copy their neighbor on open chains)."""
    pts = _pts(points)
    inner = [curvature(pts[i - 1], pts[i], pts[i + 1], FINITE_DIFFERENCES) for i in range(1, len(pts) - 1)]
    if closed:
        first = curvature(pts[-1], pts[0], pts[1], FINITE_DIFFERENCES)
        last = curvature(pts[-2], pts[-1], pts[0], FINITE_DIFFERENCES)
        return [first, *inner, last]
    return [inner[0], *inner, inner[-1]]


def evoluteCurve(points: Points, closed: bool) -> Points:
    """Centers of curvature: p + n / kappa with principal normals n."""
    ns, ks = _principal_normals(points, closed), curvatures(points, closed)
    return [vadd(p, vmul(div(1.0, k), n)) for p, n, k in zip(_pts(points), ns, ks)]


def offsetCurve(points: Points, closed: bool, magnitude: Num) -> Points:
    ns = normalVectors(points, closed)
    return [vadd(p, vmul(magnitude, n)) for p, n in zip(_pts(points), ns)]


def tsneEnergy(points: Points, projectedPoints: Points) -> Num:
    """KL divergence between Gaussian-like affinities exp(-d/2) of the points and Student-like
    affinities 1 / (1 + d) of their projections (each normalized to sum 1, d the distance)."""
    eps = 2.220446049250313e-16  # Number.EPSILON, keeps log finite at zero affinity
    hi = _affinities([list(p) for p in points], lambda d: am.exp(-(d / 2.0)))
    lo = _affinities([list(p) for p in projectedPoints], lambda d: 1.0 / (1.0 + d))
    terms = [p * am.log((p + eps) / (q + eps)) for row_p, row_q in zip(hi, lo) for p, q in zip(row_p, row_q)]
    return add_n(terms)


def _affinities(xs: list[list], kernel: object) -> list[list]:
    m = len(xs)
    check_size("tsneEnergy's number of points", m, MAX_MATRIX_DIMENSION)
    w: list[list] = [[0.0] * m for _ in range(m)]
    for i in range(m):
        for j in range(i + 1, m):
            w[i][j] = w[j][i] = kernel(vdist(xs[i], xs[j]))  # type: ignore[operator]
    total = add_n([v for row in w for v in row])
    return [[v / total for v in row] for row in w]
