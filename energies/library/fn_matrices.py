"""Matrices and transformations of Penrose's computed functions (2D/3D, homogeneous, camera).

Matrices are lists of rows. Sizes are static (they come from argument list lengths), so every
function here keeps its result structure independent of values.
"""

from __future__ import annotations

import math

from energies.limits import MAX_MATRIX_DIMENSION, check_size

from . import pmath as am
from .fn_ops import (
    Matrix,
    Num,
    Points,
    Vector,
    cross3,
    div,
    mmadd,
    mmmul,
    mvmul,
    smmul,
    vadd,
    vdiv,
    vmul,
    vnormalize,
    vsub,
)

# -- building blocks ------------------------------------------------------------------------------------


def _square(a: Matrix, what: str) -> int:
    n = len(a)
    if any(len(row) != n for row in a):
        raise ValueError(f"{what} expects a square matrix, got {n} rows of lengths {[len(r) for r in a]}")
    return n


def _minor(a: Matrix, i: int, j: int) -> Matrix:
    return [row[:j] + row[j + 1 :] for k, row in enumerate(a) if k != i]


def _det(a: Matrix) -> Num:
    """Laplace expansion along the first row (matrices here are at most 4x4)."""
    if len(a) == 1:
        return a[0][0]
    if len(a) == 2:
        return a[0][0] * a[1][1] - a[0][1] * a[1][0]
    total: Num = 0.0
    for j in range(len(a)):
        term = a[0][j] * _det(_minor(a, 0, j))
        total = total + term if j % 2 == 0 else total - term
    return total


def identity(n: int) -> Matrix:
    if isinstance(n, bool) or not isinstance(n, (int, float)) or int(n) != n or n < 1:
        raise ValueError(f"identity expects a positive integer dimension, got {n!r}")
    n = int(n)
    check_size("identity's dimension n", n, MAX_MATRIX_DIMENSION)
    return [[1.0 if i == j else 0.0 for j in range(n)] for i in range(n)]


def diagonal(v: Vector) -> Matrix:
    n = len(v)
    check_size("diagonal's dimension", n, MAX_MATRIX_DIMENSION)
    return [[v[i] if i == j else 0.0 for j in range(n)] for i in range(n)]


def trace(A: Matrix) -> Num:
    n = _square(A, "trace")
    total: Num = 0.0
    for i in range(n):
        total = total + A[i][i]
    return total


def determinant(A: Matrix) -> Num:
    n = _square(A, "determinant")
    if n not in (2, 3, 4):
        raise ValueError(f"determinant: matrix must be 2x2, 3x3 or 4x4, got {n}x{n}")
    return _det(A)


def inverse(A: Matrix) -> Matrix:
    """The adjugate divided by the determinant (no pivoting, as Penrose: singular gives inf/NaN)."""
    n = _square(A, "inverse")
    if n not in (2, 3, 4):
        raise ValueError(f"inverse: matrix must be 2x2, 3x3 or 4x4, got {n}x{n}")
    cof = [[_det(_minor(A, i, j)) * (1.0 if (i + j) % 2 == 0 else -1.0) for j in range(n)] for i in range(n)]
    det: Num = 0.0
    for j in range(n):
        det = det + A[0][j] * cof[0][j]
    return [[div(cof[j][i], det) for j in range(n)] for i in range(n)]  # adjugate = cofactors transposed


def outerProduct(v: Vector, w: Vector) -> Matrix:
    if len(v) != len(w):
        raise ValueError(f"outerProduct: vectors must have equal length, got {len(v)} and {len(w)}")
    check_size("outerProduct's dimension", len(v), MAX_MATRIX_DIMENSION)
    return [[a * b for b in w] for a in v]


def crossProductMatrix(v: Vector) -> Matrix:
    if len(v) != 3:
        raise ValueError(f"crossProductMatrix: vector must have length 3, got {len(v)}")
    return [[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]]


def matrix(a: Num, b: Num, c: Num, d: Num, e: Num, f: Num) -> Matrix:
    """The 2D affine matrix of SVG's matrix(a, b, c, d, e, f), homogeneous 3x3."""
    return [[a, c, e], [b, d, f], [0.0, 0.0, 1.0]]


def matrix3d(
    a1: Num, b1: Num, c1: Num, d1: Num, a2: Num, b2: Num, c2: Num, d2: Num,
    a3: Num, b3: Num, c3: Num, d3: Num, a4: Num, b4: Num, c4: Num, d4: Num,
) -> Matrix:  # fmt: skip
    """A 4x4 matrix whose rows are the arguments four by four, in order (what Penrose computes:
    its helper's parameter names are permuted against the documented ones)."""
    return [[a1, b1, c1, d1], [a2, b2, c2, d2], [a3, b3, c3, d3], [a4, b4, c4, d4]]


def toHomogeneousMatrix(A: Matrix) -> Matrix:
    n = len(A)
    return [list(A[i]) + [0.0] for i in range(n)] + [[0.0] * n + [1.0]]


def _translate(v: Vector) -> Matrix:
    n = len(v)
    m = identity(n + 1)
    for i in range(n):
        m[i][n] = v[i]
    return m


# -- transformations ------------------------------------------------------------------------------------


def rotate2d(theta: Num) -> Matrix:
    c, s = am.cos(theta), am.sin(theta)
    return [[c, -s], [s, c]]


def rotate(theta: Num, x: Num = 0.0, y: Num = 0.0) -> Matrix:
    """Homogeneous 2D rotation by theta (radians) about the point (x, y)."""
    return mmmul(_translate([x, y]), mmmul(toHomogeneousMatrix(rotate2d(theta)), _translate([-x, -y])))


def rotate3d(theta: Num, v: Vector) -> Matrix:
    """Rodrigues' formula I + sin(theta) K + (1 - cos(theta)) K^2 with K the cross matrix of v."""
    if len(v) != 3:
        raise ValueError(f"rotate3d: rotation axis must have length 3, got {len(v)}")
    k = crossProductMatrix(v)
    return mmadd(mmadd(identity(3), smmul(am.sin(theta), k)), smmul(1.0 - am.cos(theta), mmmul(k, k)))


def rotate3dh(theta: Num, v: Vector) -> Matrix:
    return toHomogeneousMatrix(rotate3d(theta, v))


def scale2d(sx: Num, sy: Num) -> Matrix:
    return diagonal([sx, sy])


def scale(sx: Num, sy: Num) -> Matrix:
    return toHomogeneousMatrix(scale2d(sx, sy))


def scale3d(sx: Num, sy: Num, sz: Num) -> Matrix:
    return diagonal([sx, sy, sz])


def scale3dh(sx: Num, sy: Num, sz: Num) -> Matrix:
    return toHomogeneousMatrix(scale3d(sx, sy, sz))


def skew2d(ax: Num, ay: Num = 0.0) -> Matrix:
    return [[1.0, am.tan(ax)], [am.tan(ay), 1.0]]


def skew(ax: Num, ay: Num = 0.0) -> Matrix:
    return toHomogeneousMatrix(skew2d(ax, ay))


def _shear(u: Vector, v: Vector) -> Matrix:
    return mmadd(identity(len(v)), outerProduct(u, v))


def shear(u: Vector, v: Vector) -> Matrix:
    return toHomogeneousMatrix(_shear(u, v))


def shear2d(u: Vector, v: Vector) -> Matrix:
    if len(u) != 2 or len(v) != 2:
        raise ValueError("shear2d expects two 2D vectors")
    return _shear(u, v)


def shear3d(u: Vector, v: Vector) -> Matrix:
    if len(u) != 3 or len(v) != 3:
        raise ValueError("shear3d expects two 3D vectors")
    return _shear(u, v)


def translate(x: Num, y: Num = 0.0) -> Matrix:
    return _translate([x, y])


def translate3dh(x: Num, y: Num, z: Num) -> Matrix:
    return _translate([x, y, z])


# -- camera ---------------------------------------------------------------------------------------------


def lookAt(eye: Vector, center: Vector, up: Vector) -> Matrix:
    for name, v in (("eye", eye), ("center", center), ("up", up)):
        if len(v) != 3:
            raise ValueError(f"lookAt: {name} vector must have length 3, got {len(v)}")
    forward = vnormalize(vsub(center, eye))
    side = vnormalize(cross3(forward, up))
    vert = cross3(side, forward)
    view = [side + [0.0], vert + [0.0], [-f for f in forward] + [0.0], [0.0, 0.0, 0.0, 1.0]]
    return mmmul(view, _translate([-e for e in eye]))


def perspective(fovy: Num, aspect: Num, zNear: Num = 0.1, zFar: Num = 100.0) -> Matrix:
    """Penrose's perspective matrix (fovy in degrees; its y row is negated for y-up screens)."""
    cot = div(1.0, am.tan((math.pi / 180.0) * fovy / 2.0))
    dz = zFar - zNear
    return [
        [div(cot, aspect), 0.0, 0.0, 0.0],
        [0.0, -cot, 0.0, 0.0],
        [0.0, 0.0, div(-(zFar + zNear), dz), 2.0 * div(zNear * zFar, dz)],
        [0.0, 0.0, -1.0, 0.0],
    ]


def ortho(Left: Num, Right: Num, Bottom: Num, Top: Num, zNear: Num = 0.1, zFar: Num = 100.0) -> Matrix:
    return [
        [div(2.0, Right - Left), 0.0, 0.0, div(Right + Left, Left - Right)],
        [0.0, div(2.0, Top - Bottom), 0.0, div(Top + Bottom, Bottom - Top)],
        [0.0, 0.0, div(-2.0, zFar - zNear), div(zFar + zNear, zNear - zFar)],
        [0.0, 0.0, 0.0, 1.0],
    ]


def _project(p: Vector, model: Matrix, proj: Matrix, view: Vector) -> Vector:
    q = mvmul(proj, mvmul(model, toHomogeneous(p)))
    r = vadd(vmul(0.5, vdiv(q[:3], q[3])), [0.5, 0.5, 0.5])
    return [r[0] * view[2] + view[0], r[1] * view[3] + view[1], r[2]]


def project(p: Vector, model: Matrix, proj: Matrix, view: Vector) -> Vector:
    """Screen position [x, y] of 3D point p through the model and projection matrices and the
    viewport [x0, y0, width, height]."""
    return _project(p, model, proj, view)[:2]


def projectDepth(p: Vector, model: Matrix, proj: Matrix, view: Vector) -> Vector:
    """Like `project`, with the normalized depth as a third coordinate."""
    return _project(p, model, proj, view)


def projectList(p: Points, model: Matrix, proj: Matrix, view: Vector) -> Points:
    return [_project(q, model, proj, view)[:2] for q in p]


def matrixMultiplyList(A: Matrix, V: Matrix) -> Matrix:
    """A v for every vector v of the list V."""
    return [mvmul(A, v) for v in V]


def fromHomogeneous(q: Vector) -> Vector:
    return [div(q[i], q[-1]) for i in range(len(q) - 1)]


def fromHomogeneousList(Q: Matrix) -> Matrix:
    return [fromHomogeneous(q) for q in Q]


def toHomogeneous(p: Vector) -> Vector:
    return list(p) + [1.0]


def toHomogeneousList(P: Matrix) -> Matrix:
    return [toHomogeneous(p) for p in P]
