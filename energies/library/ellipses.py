"""Ellipses as implicit functions, and the overlap tests built on them (Penrose's ImplicitShapes.ts and
the ellipse parts of Minkowski.ts).

An implicit ellipse is f(x, y) = a (x - cx)^2 + b (y - cy)^2 - c (negative inside). The overlap of
two ellipses is min over the plane of max(f1, f2); its minimizer is a center or a point of the pencil
lambda grad f1 + (1 - lambda) grad f2 = 0 on f1 = f2, whose lambdas are the real roots of a quartic.
Penrose finds those roots with a companion-matrix eigensolver; here `quartic_real_roots` solves the
quartic in closed form (Ferrari, largest root of the resolvent cubic) and polishes every root with
Newton steps, so it is a plain adcore macro with derivatives through every step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from adcore import and_, select

from . import pmath as am
from .fn_ops import (
    EPS_DENOM,
    div,
    msign,
    sqr,
    vdot,
)
from .geometry import Pt, Scalar
from .pmath import sqrt
from .polygons import centroid, outward_unit_normal


@dataclass
class ImplicitEllipse:
    a: Scalar
    b: Scalar
    c: Scalar
    x: Scalar
    y: Scalar


@dataclass
class ImplicitHalfPlane:
    a: Scalar
    b: Scalar
    c: Scalar


def ellipse_value(e: ImplicitEllipse, x: Scalar, y: Scalar) -> Scalar:
    return e.a * sqr(x - e.x) + e.b * sqr(y - e.y) - e.c


def both_ellipses_value(e1: ImplicitEllipse, e2: ImplicitEllipse, x: Scalar, y: Scalar) -> Scalar:
    return am.max(ellipse_value(e1, x, y), ellipse_value(e2, x, y))


def half_plane_value(h: ImplicitHalfPlane, x: Scalar, y: Scalar) -> Scalar:
    return h.a * x + h.b * y - h.c


def half_plane_to_implicit(segment: list[Pt], inside: Pt, padding: Scalar) -> ImplicitHalfPlane:
    n = outward_unit_normal(segment, inside)
    return ImplicitHalfPlane(n[0], n[1], vdot(n, segment[0]) - padding)


def ellipse_to_implicit(
    c: Pt, rx: Scalar, ry: Scalar, padding: Scalar = 0.0, factor: Scalar = 1.0
) -> ImplicitEllipse:
    """The ellipse grown by `padding`, scaled by `factor` (scaling keeps the zero set, shapes the values)."""
    rxp, ryp = rx + padding, ry + padding
    return ImplicitEllipse(factor * div(ryp, rxp), factor * div(rxp, ryp), factor * (rxp * ryp), c[0], c[1])


def circle_to_implicit(c: Pt, r: Scalar, padding: Scalar = 0.0, factor: Scalar = 1.0) -> ImplicitEllipse:
    return ImplicitEllipse(factor, factor, factor * sqr(r + padding), c[0], c[1])


# -- the ellipse-ellipse quartic -------------------------------------------------------------------


def ellipse_polynomial(e: ImplicitEllipse, f: ImplicitEllipse) -> list[Scalar]:
    """Monic quartic coefficients [c0, c1, c2, c3] (lowest degree first); its roots are the pencil's
    lambdas."""
    dx2, dy2, dc = sqr(f.x - e.x), sqr(f.y - e.y), e.c - f.c
    da, db = f.a - e.a, f.b - e.b
    k0 = sqr(e.a) * sqr(e.b) * (dc + f.a * dx2 + f.b * dy2)
    two_ab = 2.0 * e.a * e.b
    k1 = two_ab * (
        dc * (e.a * f.b + e.b * f.a - two_ab)
        + e.a * f.a * dx2 * (f.b - 2.0 * e.b)
        + e.b * f.b * dy2 * (f.a - 2.0 * e.a)
    )
    q1 = sqr(e.a) * sqr(db) + sqr(e.b) * sqr(da) + 4.0 * e.a * e.b * db * da
    q2 = sqr(e.b) * (6.0 * e.a - f.a) - e.a * f.b * (6.0 * e.b - f.b)
    q3 = sqr(e.a) * (6.0 * e.b - f.b) - e.b * f.a * (6.0 * e.a - f.a)
    k2 = q1 * dc + q2 * e.a * f.a * dx2 + q3 * e.b * f.b * dy2
    k3 = (
        2.0
        * (two_ab - (e.b * f.a + e.a * f.b))
        * (da * db * (-dc) + e.a * f.a * dx2 * db + e.b * f.b * dy2 * da)
    )
    k4 = -(sqr(da) * sqr(db) * (-dc) + e.a * f.a * dx2 * da * sqr(db) + e.b * f.b * dy2 * sqr(da) * db)
    lead = select(am.abs(k4) <= 1e-14, msign(k4) * EPS_DENOM, k4)
    return [div(k, lead) for k in (k0, k1, k2, k3)]


def _largest_cubic_root(a: Scalar, b: Scalar, c: Scalar) -> Scalar:
    """Largest real root of t^3 + a t^2 + b t + c (Cardano for one real root, trigonometric for three)."""
    shift = a / 3.0
    p = b - a * a / 3.0
    q = 2.0 * a * a * a / 27.0 - a * b / 3.0 + c
    disc = sqr(q * 0.5) + p * p * p / 27.0
    one_real = disc > 0.0
    sd = sqrt(am.max(disc, 0.0))
    cardano = am.cbrt(-q * 0.5 + sd) + am.cbrt(-q * 0.5 - sd)
    p_neg = am.min(p, -1e-300)
    arg = am.max(-1.0, am.min(1.0, div(3.0 * q, 2.0 * p_neg) * sqrt(div(-3.0, p_neg))))
    trig = 2.0 * sqrt(-p_neg / 3.0) * am.cos(am.acos(arg) / 3.0)
    t = select(one_real, cardano, select(p < 0.0, trig, cardano)) - shift
    for _ in range(2):  # Newton polish
        f = ((t + a) * t + b) * t + c
        df = (3.0 * t + 2.0 * a) * t + b
        t = t - select(am.abs(df) > 1e-300, div(f, df), 0.0)
    return t


def quartic_real_roots(c0: Scalar, c1: Scalar, c2: Scalar, c3: Scalar) -> list[Scalar]:
    """The four roots of x^4 + c3 x^3 + c2 x^2 + c1 x + c0, with non-real ones replaced by 0 (as Penrose
    replaces its NaN roots by 0)."""
    shift = c3 / 4.0
    p = c2 - 3.0 * c3 * c3 / 8.0
    q = c1 - c3 * c2 / 2.0 + c3 * c3 * c3 / 8.0
    r = c0 - c3 * c1 / 4.0 + c3 * c3 * c2 / 16.0 - 3.0 * c3 * c3 * c3 * c3 / 256.0
    # Ferrari: y^4 + p y^2 + q y + r = (y^2 + p/2 + m)^2 - (s y - q / (2 s))^2 with s = sqrt(2 m).
    m = am.max(_largest_cubic_root(p, p * p / 4.0 - r, -q * q / 8.0), 0.0)
    generic = m > 1e-12
    s = sqrt(am.max(2.0 * m, 1e-300))
    h = div(q, 2.0 * s)
    roots, real = [], []
    for sign in (1.0, -1.0):  # y^2 -/+ s y + (p/2 + m +/- h)
        d_gen = s * s - 4.0 * (p * 0.5 + m + sign * h)
        # biquadratic fallback (q = 0): y^2 = (-p + sign sqrt(p^2 - 4 r)) / 2
        d_bi = p * p - 4.0 * r
        y2 = (-p + sign * sqrt(am.max(d_bi, 0.0))) * 0.5
        for pm in (1.0, -1.0):
            y_gen = (sign * s + pm * sqrt(am.max(d_gen, 0.0))) * 0.5
            y_bi = pm * sqrt(am.max(y2, 0.0))
            roots.append(select(generic, y_gen, y_bi) - shift)
            real.append(select(generic, d_gen >= 0.0, and_(d_bi >= 0.0, y2 >= 0.0)))
    out = []
    for x, ok in zip(roots, real):
        for _ in range(2):  # Newton polish on the original quartic
            f = (((x + c3) * x + c2) * x + c1) * x + c0
            df = ((4.0 * x + 3.0 * c3) * x + 2.0 * c2) * x + c1
            x = x - select(am.abs(df) > 1e-300, div(f, df), 0.0)
        out.append(select(ok, x, 0.0))
    return out


def _pencil_point(e: ImplicitEllipse, f: ImplicitEllipse, lam: Scalar) -> Pt:
    x = div(e.x * e.a + lam * (f.x * f.a - e.x * e.a), e.a + lam * (f.a - e.a))
    y = div(e.y * e.b + lam * (f.y * f.b - e.y * e.b), e.b + lam * (f.b - e.b))
    return [x, y]


def overlapping_implicit_ellipses(e: ImplicitEllipse, f: ImplicitEllipse) -> Scalar:
    """min over the plane of max(f1, f2): negative iff the two ellipses overlap."""
    points = [_pencil_point(e, f, lam) for lam in quartic_real_roots(*ellipse_polynomial(e, f))]
    m1 = min_of([both_ellipses_value(e, f, x, y) for x, y in points])
    m2 = am.min(both_ellipses_value(e, f, e.x, e.y), both_ellipses_value(e, f, f.x, f.y))
    return am.min(m1, m2)


def min_of(xs: list[Scalar]) -> Scalar:
    out = xs[0]
    for x in xs[1:]:
        out = am.min(out, x)
    return out


# -- polygon and ellipse ---------------------------------------------------------------------------


def half_plane_ellipse_sdf(
    segment: list[Pt], c: Pt, rx: Scalar, ry: Scalar, inside: Pt, padding: Scalar
) -> Scalar:
    h = half_plane_to_implicit(segment, inside, 0.0)
    e = ellipse_to_implicit(c, rx, ry, padding)
    t = div(e.b * sqr(h.a) + e.a * sqr(h.b), e.a * e.b * 4.0 * (e.x * h.a + e.y * h.b + e.c - h.c))
    root = sqrt(div(t, 1.0 + t))

    def candidate(lam: Scalar) -> Pt:
        k = div(lam, 2.0 * (lam - 1.0))
        return [e.x + k * div(h.a, e.a), e.y + k * div(h.b, e.b)]

    p1, p2 = candidate(1.0 + root), candidate(1.0 - root)
    m1 = am.min(half_plane_value(h, p1[0], p1[1]), half_plane_value(h, p2[0], p2[1]))
    m2 = am.max(ellipse_value(e, e.x, e.y), half_plane_value(h, e.x, e.y))
    return am.min(m1, m2)


def overlapping_polygon_points_ellipse(
    poly: list[Pt], c: Pt, rx: Scalar, ry: Scalar, padding: Scalar
) -> Scalar:
    center = centroid(poly)
    sides = [[poly[i], poly[i - 1]] for i in range(len(poly))]
    out = None
    for s in sides:
        v = half_plane_ellipse_sdf(s, c, rx, ry, center, padding)
        out = v if out is None else am.max(out, v)
    return out


PI_OVER_3 = math.pi / 3.0
